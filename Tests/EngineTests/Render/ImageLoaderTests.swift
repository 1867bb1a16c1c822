#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Testing
@testable import MoonreelEngine
import CMoonPangoCairo

@Suite struct ImageLoaderTests {
    init() { makeScratchDirectory() }

    /// Runs the ffmpeg CLI (an independent encoder) quietly; true on success.
    func ffmpeg(_ arguments: String) -> Bool {
        system("ffmpeg -nostdin -loglevel error -y \(arguments)") == 0
    }

    @Test func pngWrittenByCairoLoadsWithItsSizeAndPremultipliedColour() throws {
        let image = try RGBAImage(width: 30, height: 20)
        try CairoContext(drawingInto: image.view).draw { cr in
            cairo_set_source_rgba(cr, 1, 0, 0, 0.5) // half-transparent red
            cairo_paint(cr)
        }
        try image.writePNG(to: scratchPath("half-red.png"))

        #expect(try ImageLoader.pixelSize(of: scratchPath("half-red.png")) == Size(width: 30, height: 20))
        let loaded = try ImageLoader.load(scratchPath("half-red.png"))
        #expect((loaded.width, loaded.height) == (30, 20))
        let p = loaded.pixel(x: 7, y: 9)
        #expect(abs(Int(p.red) - 128) <= 1 && p.green == 0 && p.blue == 0 && abs(Int(p.alpha) - 128) <= 1)
    }

    @Test func jpegAndWebPWrittenByFFmpegLoad() throws {
        let jpeg = scratchPath("green.jpg"), webp = scratchPath("blue.webp")
        try #require(ffmpeg("-f lavfi -i color=c=0x20C040:s=64x48 -frames:v 1 -q:v 2 \(jpeg)"))
        try #require(ffmpeg("-f lavfi -i color=c=0x2040D0:s=50x34 -frames:v 1 -lossless 1 \(webp)"))
        #expect(try ImageLoader.pixelSize(of: jpeg) == Size(width: 64, height: 48))
        #expect(try ImageLoader.pixelSize(of: webp) == Size(width: 50, height: 34))
        let green = try ImageLoader.load(jpeg).pixel(x: 32, y: 24)
        #expect(abs(Int(green.red) - 0x20) <= 4 && abs(Int(green.green) - 0xC0) <= 4 && abs(Int(green.blue) - 0x40) <= 4)
        #expect(green.alpha == 255)
        let blue = try ImageLoader.load(webp)
        #expect((blue.width, blue.height) == (50, 34))
        let b = blue.pixel(x: 10, y: 10)
        #expect(abs(Int(b.red) - 0x20) <= 4 && abs(Int(b.green) - 0x40) <= 4 && abs(Int(b.blue) - 0xD0) <= 4)
    }

    /// Binary PGM (the grey pictures of luma wipes: MLT's and Kdenlive's lumas), 8 and 16
    /// bits, with a comment in the header; a damaged header is named.
    @Test func greyPGMPicturesLoadAtEightAndSixteenBits() throws {
        func write(_ name: String, _ header: String, _ samples: [UInt8]) -> String {
            let path = scratchPath(name)
            let file = fopen(path, "wb")
            let bytes = Array(header.utf8) + samples
            _ = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
            fclose(file)
            return path
        }
        // 4×2: a ramp in the top row, white below.
        let eight = write("ramp.pgm", "P5\n# CREATOR: a test\n4 2\n255\n", [0, 85, 170, 255, 255, 255, 255, 255])
        let image = try ImageLoader.load(eight)
        #expect((image.width, image.height) == (4, 2))
        #expect((0..<4).map { Int(image.pixel(x: $0, y: 0).green) } == [0, 85, 170, 255] && image.pixel(x: 0, y: 1).alpha == 255)
        let sixteen = write("ramp16.pgm", "P5 2 1 65535\n", [0x80, 0x00, 0xFF, 0xFF])
        let wide = try ImageLoader.load(sixteen)
        #expect(abs(Int(wide.pixel(x: 0, y: 0).red) - 128) <= 1 && wide.pixel(x: 1, y: 0).red == 255)
        let damaged = write("damaged.pgm", "P5\n4 x 2\n", [])
        #expect(throws: EngineError.self) { try ImageLoader.load(damaged) }
        do { _ = try ImageLoader.load(damaged) } catch { #expect("\(error)" == "image \"\(damaged)\": not an image (damaged PGM header)") }
    }

    @Test func refusesNonImagesAndHugeHeadersNamingTheFile() throws {
        let text = scratchPath("notes.png")
        let garbage = fopen(text, "w")
        fputs("just some words\n", garbage)
        fclose(garbage)
        #expect(throws: EngineError.self) { try ImageLoader.load(text) }
        do { _ = try ImageLoader.load(text) } catch {
            #expect("\(error)" == "image \"\(text)\": not an image (not PNG, JPEG, WebP or PGM)")
        }

        // A valid PNG signature and IHDR claiming 40000×40000: refused from the header.
        let huge = scratchPath("huge.png")
        var header: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]
        header += Array("IHDR".utf8) + [0, 0, 0x9C, 0x40, 0, 0, 0x9C, 0x40, 8, 6, 0, 0, 0, 0, 0, 0, 0]
        let file = fopen(huge, "wb")
        _ = header.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
        do { _ = try ImageLoader.load(huge); Issue.record("a 40000×40000 header was accepted") } catch {
            #expect("\(error)".hasPrefix("image \"\(huge)\": size: 40000×40000 is larger than the limit"))
        }
        do { _ = try ImageLoader.load(scratchPath("missing.png")); Issue.record("a missing file loaded") } catch {
            #expect("\(error)" == "image \"\(scratchPath("missing.png"))\": No such file or directory")
        }
    }
}
