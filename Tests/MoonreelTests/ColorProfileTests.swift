import Foundation
import Testing
import TestSupport

/// Pictures with an embedded ICC profile (every iPhone photo and screenshot is Display P3)
/// are converted to sRGB, as a colour-managed viewer shows them, in layers (`av.image`) and
/// as photos in a composition; a profile Moonreel does not read is a warning. The colours
/// expected come from the CSS Color 4 matrices (an oracle Moonreel does not share: it reads the
/// profiles' own colorants); the real profiles are in Tests/Fixtures/icc.
@Suite struct ColorProfileTests {
    static func profile(_ name: String) throws -> [UInt8] {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<2 { url.deleteLastPathComponent() }
        return [UInt8](try Data(contentsOf: url.appendingPathComponent("Fixtures/icc/\(name).icc")))
    }

    /// Four 32-pixel stripes the ffmpeg CLI draws: orange, blue, green, grey.
    static let stripes = ["0xC86432", "0x3296C8", "0x40B060", "0x808080"]

    /// The stripes as `format` ("jpg", "png", or "png16": 16 bits a channel) with `profile`
    /// embedded as the format does it (in grey when `grey`).
    static func picture(_ format: String, profile: [UInt8]?, grey: Bool = false, stripes: [String] = stripes) throws -> String {
        let plain = Fixtures.scratchPath("plain." + format.prefix(3))
        let inputs = stripes.flatMap { ["-f", "lavfi", "-i", "color=c=\($0):size=32x32"] }
        let pixels = grey ? ",format=gray" : format == "png16" ? ",format=rgb48be" : ""
        try Tool.ffmpeg(inputs + ["-filter_complex", "hstack=inputs=4" + pixels, "-frames:v", "1"]
                        + (format == "jpg" ? ["-q:v", "1"] : []) + [plain])
        guard let profile else { return plain }
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plain)))
        let tagged = format == "jpg" ? withICCSegment(bytes, profile) : withICCChunk(bytes, profile)
        let path = Fixtures.scratchPath("tagged." + format.prefix(3))
        try Data(tagged).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A JPEG with the profile in an APP2 segment after SOI (ICC.1 Annex B.4: one part of one).
    static func withICCSegment(_ jpeg: [UInt8], _ profile: [UInt8]) -> [UInt8] {
        withICCSegments(jpeg, [(number: 1, count: 1, bytes: profile)])
    }

    /// A JPEG with APP2 segments after SOI, each "ICC_PROFILE", its part's number, the count of parts and the part.
    static func withICCSegments(_ jpeg: [UInt8], _ parts: [(number: UInt8, count: UInt8, bytes: [UInt8])]) -> [UInt8] {
        let segments = parts.flatMap { part -> [UInt8] in
            let payload = Array("ICC_PROFILE".utf8) + [0, part.number, part.count] + part.bytes
            let length = payload.count + 2
            return [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        }
        return Array(jpeg[0..<2]) + segments + Array(jpeg[2...])
    }

    /// An ICC v2 grey display profile whose one tag, kTRC, is a pure `gamma` (a `curv` of one
    /// entry): the smallest grey profile the spec allows, for a curve other than sRGB's.
    static func greyProfile(gamma: Double) -> [UInt8] {
        let be32 = { (v: Int) in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) } }
        let curve = Array("curv".utf8) + [0, 0, 0, 0] + be32(1) + [UInt8(gamma), UInt8((gamma * 256).truncatingRemainder(dividingBy: 256))]
        var header = be32(128 + 4 + 12 + curve.count) + [UInt8](repeating: 0, count: 4) + [2, 0x10, 0, 0]
        header += Array("mntrGRAYXYZ ".utf8) + [UInt8](repeating: 0, count: 12) + Array("acsp".utf8)
        header += [UInt8](repeating: 0, count: 128 - header.count)
        return header + be32(1) + Array("kTRC".utf8) + be32(144) + be32(curve.count) + curve
    }

    /// A PNG with an iCCP chunk after IHDR: the profile in a zlib stream of stored blocks.
    static func withICCChunk(_ png: [UInt8], _ profile: [UInt8]) -> [UInt8] {
        var zlib: [UInt8] = [0x78, 0x01]
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in profile { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        for start in stride(from: 0, to: profile.count, by: 65535) {
            let block = profile[start..<min(start + 65535, profile.count)]
            let n = UInt16(block.count)
            zlib += [block.endIndex == profile.count ? 1 : 0, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8(~n >> 8)] + block
        }
        let adler = b << 16 | a
        zlib += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: adler >> $0) }
        let data = Array("ICC\0".utf8) + [0] + zlib
        let body = Array("iCCP".utf8) + data
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in body {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        crc = ~crc
        let be = { (v: UInt32) in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) } }
        return Array(png[0..<33]) + be(UInt32(data.count)) + body + be(crc) + Array(png[33...])
    }

    /// The middle of each stripe (a 4×4 mean, in 8-bit codes) as the ffmpeg CLI decodes
    /// `path`, which does no colour management; read at 16 bits a channel (a 16-bit PNG's
    /// own precision) when `deep`.
    static func stripeColours(_ path: String, deep: Bool = false) throws -> [[Double]] {
        let (width, height) = try Tool.videoSize(path)
        let raw = Fixtures.scratchPath("stripes.raw")
        try Tool.ffmpeg(["-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", deep ? "rgb48le" : "rgb24", raw])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let value = { (index: Int) in deep ? Double(Int(bytes[2 * index]) | Int(bytes[2 * index + 1]) << 8) / 257 : Double(bytes[index]) }
        return (0..<4).map { stripe in
            let (cx, cy) = (width * (2 * stripe + 1) / 8, height / 2)
            var sum = [0.0, 0.0, 0.0]
            for y in cy - 2..<cy + 2 { for x in cx - 2..<cx + 2 { for c in 0..<3 { sum[c] += value((y * width + x) * 3 + c) / 16 } } }
            return sum
        }
    }

    /// CSS Color 4's conversion of `rgb` (8-bit codes) from `space` to sRGB: its curve, its
    /// matrix to XYZ (D65), XYZ to linear sRGB, clipped, sRGB's curve.
    static func cssSRGB(_ rgb: [Double], from space: String) -> [Double] {
        let srgbLinear = { (c: Double) in c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4) }
        let linear = rgb.map { space == "a98-rgb" ? pow($0 / 255, 563.0 / 256) : srgbLinear($0 / 255) }
        let toXYZ = space == "a98-rgb"
            ? [[0.5766690429101305, 0.1855582379065463, 0.1882286462349947], [0.29734497525053605, 0.6273635662554661, 0.07529145849399788],
               [0.02703136138641234, 0.07068885253582723, 0.9913375368376388]]
            : [[0.4865709486482162, 0.26566769316909306, 0.1982172852343625], [0.2289745640697488, 0.6917385218365064, 0.079286914093745],
               [0, 0.04511338185890264, 1.043944368900976]]
        let fromXYZ = [[3.2409699419045226, -1.537383177570094, -0.4986107602930034], [-0.9692436362808796, 1.8759675015077202, 0.04155505740717559],
                       [0.05563007969699366, -0.20397695888897652, 1.0569715142428786]]
        let xyz = toXYZ.map { row in zip(row, linear).reduce(0) { $0 + $1.0 * $1.1 } }
        return fromXYZ.map { row in
            let light = min(max(zip(row, xyz).reduce(0) { $0 + $1.0 * $1.1 }, 0), 1)
            return 255 * (light <= 0.0031308 ? light * 12.92 : 1.055 * pow(light, 1 / 2.4) - 0.055)
        }
    }

    static let writeImage = """
        local image = av.image(arg[1])
        image:write(arg[2])
        """

    func throughLayer(_ picture: String) throws -> (colours: [[Double]], said: String) {
        let output = Fixtures.scratchPath("out.png")
        let result = try Moonreel.runScript(Self.writeImage, arguments: [picture, output])
        try #require(result.status == 0, "\(result.err)")
        return (try Self.stripeColours(output), result.err)
    }

    func expectClose(_ got: [[Double]], _ expected: [[Double]], within tolerance: Double, _ what: String) {
        for (stripe, (a, b)) in zip(got, expected).enumerated() {
            #expect(zip(a, b).allSatisfy { abs($0 - $1) <= tolerance }, "\(what), stripe \(stripe): got \(a.map { Int($0.rounded()) }), expected \(b.map { Int($0.rounded()) })")
        }
    }

    @Test func displayP3AndAdobeRGBPicturesAreConvertedToSRGB() throws {
        for (profile, space) in [("DisplayP3-v4", "display-p3"), ("DisplayP3-v2-magic", "display-p3"), ("AdobeCompat-v4", "a98-rgb")] {
            for format in ["jpg", "png", "png16"] {
                let picture = try Self.picture(format, profile: try Self.profile(profile))
                let stored = try Self.stripeColours(picture, deep: format == "png16")
                let expected = stored.map { Self.cssSRGB($0, from: space) }
                // The conversion moves the orange and the green by many codes: drawn as sRGB, they would be off.
                #expect(zip(stored[0], expected[0]).contains { abs($0 - $1) > 8 }, "\(profile): \(stored[0]) → \(expected[0])")
                let (colours, said) = try throughLayer(picture)
                // A JPEG's half-size chroma is interpolated a little differently by the CLI's decode.
                expectClose(colours, expected, within: format.hasPrefix("png") ? 1 : 2.5, "\(profile) \(format)")
                // The blue and the green stripes lie outside sRGB in both spaces (red at −0.03 in linear sRGB).
                #expect(said.contains("holds colours sRGB cannot show") && said.contains("% of its pixels: they are drawn clipped to sRGB"), "\(said)")
            }
        }
    }

    @Test func sRGBAndUntaggedPicturesAreLeftAsTheyAre() throws {
        for profile in [try Self.profile("sRGB-v4"), nil] {
            let picture = try Self.picture("png", profile: profile)
            let (colours, said) = try throughLayer(picture)
            expectClose(colours, try Self.stripeColours(picture), within: 0, profile == nil ? "untagged" : "sRGB")
            #expect(said.isEmpty, "\(said)")
        }
    }

    /// A profile split over several APP2 segments is joined by their numbers, in whatever
    /// order they come; one whose numbering FFmpeg's decoder refuses (a part 0) is said, as it
    /// is drawn as sRGB.
    @Test func aProfileInPartsIsJoinedAndABrokenOneSaid() throws {
        let plain = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try Self.picture("jpg", profile: nil))))
        let profile = try Self.profile("DisplayP3-v2-magic")
        let (head, tail) = (Array(profile[..<300]), Array(profile[300...]))
        let reversed = Fixtures.scratchPath("parts.jpg"), broken = Fixtures.scratchPath("broken.jpg")
        try Data(Self.withICCSegments(plain, [(2, 2, tail), (1, 2, head)])).write(to: URL(fileURLWithPath: reversed))
        try Data(Self.withICCSegments(plain, [(0, 2, head), (2, 2, tail)])).write(to: URL(fileURLWithPath: broken))
        let stored = try Self.stripeColours(reversed)
        let (joined, quiet) = try throughLayer(reversed)
        expectClose(joined, stored.map { Self.cssSRGB($0, from: "display-p3") }, within: 2.5, "parts in reverse order")
        #expect(!quiet.contains("not read"), "\(quiet)")
        let (drawn, said) = try throughLayer(broken)
        expectClose(drawn, stored, within: 2.5, "a broken profile: drawn as stored")
        #expect(said.contains("\"broken.jpg\" has a colour profile that is not read (damaged, or not an ICC profile)"), "\(said)")
    }

    /// A grey picture's profile is its tone curve: a linear one (gamma 1) makes every grey
    /// lighter in sRGB, by sRGB's own curve (before, it was drawn as stored, without a word).
    @Test func aGreyPicturesCurveIsConverted() throws {
        let linear = try Self.picture("png", profile: Self.greyProfile(gamma: 1), grey: true)
        let stored = try Self.stripeColours(linear)
        let expected = stored.map { grey in grey.map { code -> Double in
            let light = code / 255
            return 255 * (light <= 0.0031308 ? light * 12.92 : 1.055 * pow(light, 1 / 2.4) - 0.055)
        } }
        let (colours, said) = try throughLayer(linear)
        expectClose(colours, expected, within: 1, "linear grey")
        #expect(said.isEmpty, "\(said)")
    }

    @Test func aPhotoInACompositionIsConverted() throws {
        let picture = try Self.picture("jpg", profile: try Self.profile("DisplayP3-v4"))
        let output = Fixtures.scratchPath("photo.mp4")
        let script = Moonreel.wholeAssetComposition() + """
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL = arg[2]
            assert(session:export())
            """
        let result = try Moonreel.runScript(script, arguments: [picture, output])
        try #require(result.status == 0, "\(result.err)")
        let expected = try Self.stripeColours(picture).map { Self.cssSRGB($0, from: "display-p3") }
        // H.264's 4:2:0 and limited range cost a code or two on flat stripes.
        expectClose(try Self.stripeColours(output), expected, within: 3, "the photo's frame")
    }

    /// A Display P3 picture's pure red and green lie outside sRGB (CSS Color 4: red is
    /// (1.22, −0.04, −0.02) in linear sRGB): drawn clipped, and said with the share of pixels
    /// (two stripes of four: 50 %) at `av.image`, by an export of it as a photo and by a still.
    /// Muted colours inside sRGB are not said.
    @Test func coloursOutsideSRGBAreSaid() throws {
        let muted = try Self.picture("png", profile: try Self.profile("DisplayP3-v4"), stripes: ["0x808080", "0xC86432", "0x906050", "0x607080"])
        let (inside, quiet) = try throughLayer(muted)
        expectClose(inside, try Self.stripeColours(muted).map { Self.cssSRGB($0, from: "display-p3") }, within: 1, "muted colours")
        #expect(quiet.isEmpty, "\(quiet)")
        let picture = try Self.picture("png", profile: try Self.profile("DisplayP3-v4"), stripes: ["0xFF0000", "0x808080", "0x00FF00", "0xC86432"])
        let (colours, said) = try throughLayer(picture)
        expectClose(colours, try Self.stripeColours(picture).map { Self.cssSRGB($0, from: "display-p3") }, within: 1, "clipped as CSS Color 4 clips")
        // The profile's own name: these compact profiles call Display P3 "sP3".
        let note = "\"tagged.png\" holds colours sRGB cannot show (in \"sP3\") in 50 % of its pixels: they are drawn clipped to sRGB"
        #expect(said.contains("moonreel: note: ") && said.contains(note) && said.contains("[optionIgnored]"), "\(said)")
        let script = Moonreel.wholeAssetComposition() + """
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL = arg[2]
            assert(session:export())
            """
        let photo = try Moonreel.runScript(script, arguments: [picture, Fixtures.scratchPath("photo.mp4")])
        #expect(photo.status == 0 && photo.err.contains(note), "\(photo.err)")
        let still = try Moonreel.runScript(Moonreel.wholeAssetComposition() + "av.imageGenerator(comp):copyImage(0, arg[2])",
                                           arguments: [picture, Fixtures.scratchPath("still.png")])
        #expect(still.status == 0 && still.err.contains(note), "\(still.err)")

        // A logo's invisible pixels may hold any colour: only the visible ones count.
        let plain = Fixtures.scratchPath("logo.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=0x00FF00@0:size=96x32,format=rgba", "-f", "lavfi", "-i", "color=c=0x808080:size=32x32,format=rgba",
                         "-filter_complex", "hstack=inputs=2", "-frames:v", "1", plain])
        let logo = Fixtures.scratchPath("logo-p3.png")
        try Data(Self.withICCChunk([UInt8](try Data(contentsOf: URL(fileURLWithPath: plain))), try Self.profile("DisplayP3-v4"))).write(to: URL(fileURLWithPath: logo))
        let (_, unsaid) = try throughLayer(logo)
        #expect(unsaid.isEmpty, "\(unsaid)")
    }

    @Test func aProfileNotReadIsAWarning() throws {
        let picture = try Self.picture("jpg", profile: try Self.profile("CGATS001Compat-v2-micro"))
        let (colours, said) = try throughLayer(picture)
        #expect(said.contains("moonreel: warning: ") && said.contains("/test.lua:1: \"tagged.jpg\" has a colour profile that is not read (\"uCMY\", a CMYK profile, for CMYK pictures): it is drawn as sRGB, so its colours may be off; save it in sRGB, Display P3 or Adobe RGB [optionIgnored]"), "\(said)")
        expectClose(colours, try Self.stripeColours(picture), within: 2.5, "drawn as stored")
        let script = Moonreel.wholeAssetComposition() + """
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL = arg[2]
            assert(session:export())
            """
        let photo = try Moonreel.runScript(script, arguments: [picture, Fixtures.scratchPath("photo.mp4")])
        #expect(photo.status == 0 && photo.err.contains("\"tagged.jpg\" has a colour profile that is not read"), "\(photo.err)")
        let still = try Moonreel.runScript(Moonreel.wholeAssetComposition() + "av.imageGenerator(comp):copyImage(0, arg[2])",
                                           arguments: [picture, Fixtures.scratchPath("still.png")])
        #expect(still.status == 0 && still.err.contains("\"tagged.jpg\" has a colour profile that is not read"), "\(still.err)")
    }
}
