#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import CMoonFFmpeg
import CMoonAVShim
import MoonreelPlatform

/// Still images for layer contents (PNG, JPEG, WebP; binary PGM, the grey pictures luma wipes
/// are made from). The size comes from the file's
/// header, so it is cheap and is checked against the engine's limits (16384 pixels a side,
/// 100 megapixels) before anything is decoded; decoding goes through FFmpeg (the format's
/// pipe demuxer, its decoder, swscale to BGRA) and ends premultiplied, turned upright by
/// the JPEG's EXIF orientation as cameras intend. Errors read
/// `image "logo.png": not an image (…)`.
public enum ImageLoader {
    /// The image formats recognised.
    package enum Kind: String, Sendable { case png, jpeg, webp, pgm }

    /// Where a picture's ICC colour profile is.
    package enum EmbeddedProfile: Sendable, Equatable {
        case none
        /// Read from the header: JPEG's APP2 segments, WebP's ICCP chunk.
        case stored([UInt8])
        /// PNG's iCCP chunk, compressed: its decoder reads it.
        case compressed
    }

    /// What the header says: format, stored pixel size and EXIF orientation.
    package struct Header: Sendable {
        package let kind: Kind
        /// Stored width in pixels (before the orientation turns it).
        package let width: Int
        /// Stored height in pixels (before the orientation turns it).
        package let height: Int
        package let orientation: ExifOrientation
        /// An animated PNG or WebP, of which the first frame is what is drawn.
        package var isAnimated = false
        /// Its embedded colour profile.
        package var colorProfile = EmbeddedProfile.none
        /// The size shown, once turned by the orientation.
        package var uprightSize: Size {
            orientation.swapsAxes ? Size(width: Double(height), height: Double(width)) : Size(width: Double(width), height: Double(height))
        }
    }

    /// Format, pixel size and orientation read from the header alone (no decoding).
    package static func probe(_ path: String) throws -> Header {
        let file = try HeaderReader(path)
        let head = file.read(at: 0, count: 30)
        func fail(_ reason: String, _ kind: EngineError.Kind = .decode) -> EngineError {
            EngineError("image \"\(path)\": \(reason)", kind: kind, subject: path)
        }
        let kind: Kind
        let size: (Int, Int)?
        var orientation = ExifOrientation.up
        var profile = EmbeddedProfile.none
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            kind = .png
            size = head.count >= 24 && head[12..<16].elementsEqual("IHDR".utf8) ? (bigEndian(head, 16, 4), bigEndian(head, 20, 4)) : nil
        } else if head.starts(with: [0xFF, 0xD8, 0xFF]) {
            kind = .jpeg
            (size, orientation, profile) = jpegHeader(file)
        } else if head.count >= 16, head[0..<4].elementsEqual("RIFF".utf8), head[8..<12].elementsEqual("WEBP".utf8) {
            kind = .webp
            size = webpSize(head)
        } else if head.count >= 3, head[0] == UInt8(ascii: "P"), head[1] == UInt8(ascii: "5"), isPNMSpace(head[2]) {
            kind = .pgm
            size = pgmSize(file.read(at: 0, count: 1024))
        } else {
            if let refusal = HEIFImage.refusal(path, as: "image") { throw refusal }
            throw fail(head.isEmpty ? "not an image (empty file)" : "not an image (not PNG, JPEG, WebP or PGM)")
        }
        guard let (width, height) = size else { throw fail("not an image (damaged \(kind.rawValue.uppercased()) header)") }
        do {
            try PixelLimits.check(width: width, height: height, what: "size")
        } catch let error as EngineError {
            throw fail(error.message, error.kind == .limit ? .limit : .decode)
        }
        var header = Header(kind: kind, width: width, height: height, orientation: orientation)
        header.colorProfile = profile
        switch kind {
        case .png: (header.isAnimated, header.colorProfile) = pngChunks(file)
        case .webp:
            // VP8X's flags: bit 1 says the file holds an animation, bit 5 a profile (the ICCP chunk after VP8X's).
            let extended = head.count >= 21 && head[12..<16].elementsEqual("VP8X".utf8)
            header.isAnimated = extended && head[20] & 0x02 != 0
            if extended, head[20] & 0x20 != 0 {
                let chunk = file.read(at: 30, count: 8)
                if chunk.count == 8, chunk[0..<4].elementsEqual("ICCP".utf8) {
                    let length = min(littleEndian(chunk, 4, 4), 4 << 20)
                    header.colorProfile = .stored(file.read(at: 38, count: length))
                }
            }
        case .jpeg, .pgm: break
        }
        return header
    }

    /// Whether a PNG's chunks before its picture data hold an animation control chunk
    /// (`acTL`: an APNG) and a colour profile (`iCCP`). At most 64 chunks are read.
    private static func pngChunks(_ file: HeaderReader) -> (isAnimated: Bool, profile: EmbeddedProfile) {
        var offset = 8
        var found = (isAnimated: false, profile: EmbeddedProfile.none)
        for _ in 0..<64 {
            let chunk = file.read(at: offset, count: 8)
            guard chunk.count == 8 else { break }
            let type = chunk[4..<8]
            if type.elementsEqual("acTL".utf8) { found.isAnimated = true }
            if type.elementsEqual("iCCP".utf8) { found.profile = .compressed }
            if type.elementsEqual("IDAT".utf8) { break }
            offset += 12 + bigEndian(chunk, 0, 4)
        }
        return found
    }

    /// The upright pixel size, for `ImageSource` (header only).
    /// - Throws: `EngineError` when the file cannot be read, is not a PNG, JPEG, WebP or PGM
    ///   image, has a damaged header, or is larger than 16384 pixels a side or 100 megapixels.
    public static func pixelSize(of path: String) throws -> Size {
        try probe(path).uprightSize
    }

    /// Decodes the whole image into premultiplied BGRA, upright.
    /// - Throws: `EngineError` as `pixelSize(of:)`, or when decoding fails.
    public static func load(_ path: String) throws -> RGBAImage {
        let info = try probe(path)
        let stored = try decoding(path, kind: info.kind) { try $0.decode() }
        return try info.orientation == .up ? stored : stored.turned(by: info.orientation)
    }

    /// `body` with a decoder of the picture; FFmpeg's errors say the file is not an image.
    private static func decoding<Result>(_ path: String, kind: Kind, _ body: (ImageDecoding) throws -> Result) throws -> Result {
        do {
            return try body(try ImageDecoding(path: path, kind: kind))
        } catch let error as FFmpegError {
            throw EngineError("image \"\(path)\": not an image (\(FFmpegError.text(for: error.code)), \(error.operation))", kind: .decode, subject: path)
        }
    }

    /// What the picture's colour profile asks of it (`ColorProfile.Embedded`): read from the
    /// header, or for a PNG from its decoder (its profile is compressed).
    /// - Throws: `EngineError` as `load(_:)`.
    package static func colorProfile(of path: String) throws -> ColorProfile.Embedded {
        let info = try probe(path)
        switch info.colorProfile {
        case .none: return .none
        case .stored(let bytes): return ColorProfile.embedded(bytes)
        case .compressed:
            return try decodedFacts(of: path, kind: info.kind).profile
        }
    }

    /// What only a decode of the whole picture tells: a PNG's profile (it is compressed), and
    /// the share of the visible pixels whose colour sRGB cannot show.
    private struct DecodedFacts: Sendable {
        let profile: ColorProfile.Embedded
        let clippedShare: Double
    }

    /// Decoded once per unchanged file.
    private static let decoded = FileFacts<DecodedFacts>()

    private static func decodedFacts(of path: String, kind: Kind) throws -> DecodedFacts {
        try decoded.value(for: path) {
            try decoding(path, kind: kind) { decoder in
                _ = try decoder.decode()
                return DecodedFacts(profile: decoder.profile, clippedShare: decoder.gamut.clippedShare)
            }
        }
    }

    /// What a picture's colour profile costs it: an `optionIgnored` warning when the profile
    /// is one Moonreel does not read (CMYK, Lab, built on tables), so it is drawn as sRGB; an
    /// `optionIgnored` note when its colours fall outside sRGB in at least
    /// `clippedShareSaid` of its visible pixels (a vivid Display P3 photo), drawn clipped;
    /// nil otherwise. The second decodes the picture once per unchanged file, when its
    /// profile's primaries are not sRGB's (a PNG's decode also reads its profile).
    package static func profileDiagnostic(_ path: String) throws -> Diagnostic? {
        let file = String(path.split(separator: "/").last ?? Substring(path)).quotedForMessage(limit: 60)
        switch try colorProfile(of: path) {
        case .none:
            return nil
        case .unreadable(let reason, let name):
            let named = name.isEmpty ? "" : "\(name.quotedForMessage(limit: 60)), "
            return Diagnostic(.optionIgnored, .warning, "\(file) has a colour profile that is not read (\(named)\(reason)): it is drawn as sRGB, so its colours may be off",
                              remedy: "save it in sRGB, Display P3 or Adobe RGB")
        case .convert(let profile):
            guard !profile.hasSRGBPrimaries else { return nil }
            let share = try decodedFacts(of: path, kind: try probe(path).kind).clippedShare
            guard share >= clippedShareSaid else { return nil }
            let named = profile.name.isEmpty ? "its colour profile" : profile.name.quotedForMessage(limit: 60)
            return Diagnostic(.optionIgnored, .note, "\(file) holds colours sRGB cannot show (in \(named)) in \(Int((share * 100).rounded())) % of its pixels: they are drawn clipped to sRGB, less vivid than a wide-gamut screen shows them")
        }
    }

    /// A share under which clipped colours go unsaid: a logo's anti-aliased edge, a few
    /// saturated specks (1 %: a 100×100 patch of a 1000×1000 picture).
    static let clippedShareSaid = 0.01

    private static func isPNMSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    /// Width and height of a binary PGM ("P5", then width, height and the largest value as
    /// decimal numbers between blanks and `#` comments), or nil when the header is damaged.
    private static func pgmSize(_ head: [UInt8]) -> (Int, Int)? {
        var numbers: [Int] = [], index = 2
        while numbers.count < 3, index < head.count {
            let byte = head[index]
            if byte == UInt8(ascii: "#") {
                while index < head.count, head[index] != 0x0A { index += 1 }
            } else if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                var value = 0
                while index < head.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(head[index]), value < 1 << 24 {
                    value = value * 10 + Int(head[index] - UInt8(ascii: "0"))
                    index += 1
                }
                numbers.append(value)
                continue
            } else if !isPNMSpace(byte) {
                return nil
            }
            index += 1
        }
        guard numbers.count == 3, numbers[0] > 0, numbers[1] > 0, (1...65535).contains(numbers[2]) else { return nil }
        return (numbers[0], numbers[1])
    }

    private static func bigEndian(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> Int {
        bytes[offset..<offset + count].reduce(0) { $0 << 8 | Int($1) }
    }

    private static func littleEndian(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> Int {
        bytes[offset..<offset + count].reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    /// Walks the marker segments up to the first start-of-frame (SOF0…SOF15 except the
    /// DHT, JPG and DAC markers that share the range), reading the EXIF orientation from an
    /// APP1 segment and the colour profile from APP2 ones (ICC's way: "ICC_PROFILE", then
    /// its part's number from 1 and the count of parts) on the way. Parts are taken as
    /// FFmpeg's decoder takes them — the first one's count holds, a part of another count,
    /// numbered 0 or past the count, or numbered twice is skipped — so what is read here is
    /// what it converts with; a profile with parts missing is none to it, and damaged here.
    private static func jpegHeader(_ file: HeaderReader) -> ((Int, Int)?, ExifOrientation, EmbeddedProfile) {
        var offset = 2
        var orientation = ExifOrientation.up
        var parts: [Int: [UInt8]] = [:], partCount = 0
        let profile = {
            guard partCount > 0 else { return EmbeddedProfile.none }
            return .stored(parts.count == partCount ? (1...partCount).flatMap { parts[$0] ?? [] } : [])
        }
        for _ in 0..<10_000 {
            let marker = file.read(at: offset, count: 9)
            guard marker.count >= 4, marker[0] == 0xFF else { return (nil, orientation, profile()) }
            let code = marker[1]
            if code == 0xFF { offset += 1; continue } // fill byte
            let length = bigEndian(marker, 2, 2)
            if (0xC0...0xCF).contains(code), ![0xC4, 0xC8, 0xCC].contains(code) {
                guard marker.count >= 9 else { return (nil, orientation, profile()) }
                return ((bigEndian(marker, 7, 2), bigEndian(marker, 5, 2)), orientation, profile())
            }
            if code == 0xE1, length > 8 {
                orientation = ExifOrientation(exifSegment: file.read(at: offset + 4, count: min(length - 2, 65_533))) ?? orientation
            }
            if code == 0xE2, length > 16 {
                let segment = file.read(at: offset + 4, count: length - 2)
                if segment.count > 14, segment[0..<12].elementsEqual(Array("ICC_PROFILE".utf8) + [0]) {
                    let (number, count) = (Int(segment[12]), Int(segment[13]))
                    if partCount == 0 { partCount = count }
                    if count == partCount, (1...max(partCount, 1)).contains(number), parts[number] == nil { parts[number] = Array(segment[14...]) }
                }
            }
            guard length >= 2 else { return (nil, orientation, profile()) }
            offset += 2 + length
        }
        return (nil, orientation, profile())
    }

    /// The first chunk says the encoding: lossy (VP8), lossless (VP8L) or extended (VP8X).
    private static func webpSize(_ head: [UInt8]) -> (Int, Int)? {
        guard head.count >= 30 else { return nil }
        switch String(decoding: head[12..<16], as: UTF8.self) {
        case "VP8 ": return (littleEndian(head, 26, 2) & 0x3FFF, littleEndian(head, 28, 2) & 0x3FFF)
        case "VP8L":
            let bits = littleEndian(head, 21, 4)
            return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        case "VP8X": return (littleEndian(head, 24, 3) + 1, littleEndian(head, 27, 3) + 1)
        default: return nil
        }
    }
}

/// How a camera says its JPEG is to be shown (EXIF tag 0x0112): the stored picture turned
/// or mirrored. FFmpeg's MJPEG decoder only reports it per frame, so it is read here.
package enum ExifOrientation: Int, Sendable {
    case up = 1, mirrored, upsideDown, flipped, transposed, turnedRight, transverse, turnedLeft

    /// Reads the tag from an APP1 payload ("Exif\0\0" then a TIFF header and IFD0); nil
    /// when the segment is not EXIF or has no valid orientation.
    init?(exifSegment bytes: [UInt8]) {
        guard bytes.count >= 14, bytes[0..<6].elementsEqual([0x45, 0x78, 0x69, 0x66, 0, 0]) else { return nil }
        let tiff = Array(bytes[6...])
        let little = tiff[0] == 0x49 && tiff[1] == 0x49
        guard little || (tiff[0] == 0x4D && tiff[1] == 0x4D) else { return nil }
        func number(_ offset: Int, _ count: Int) -> Int? {
            guard offset >= 0, offset + count <= tiff.count else { return nil }
            let slice = tiff[offset..<offset + count]
            return (little ? slice.reversed() : Array(slice)).reduce(0) { $0 << 8 | Int($1) }
        }
        guard let ifd = number(4, 4), let entries = number(ifd, 2) else { return nil }
        for entry in 0..<min(entries, 512) {
            let at = ifd + 2 + entry * 12
            guard let tag = number(at, 2) else { return nil }
            if tag == 0x0112, let value = number(at + 8, 2), let orientation = ExifOrientation(rawValue: value) {
                self = orientation
                return
            }
        }
        return nil
    }

    /// Orientations 5–8 show the picture with width and height exchanged.
    package var swapsAxes: Bool { rawValue >= 5 }

    /// Maps stored pixel coordinates onto the upright picture (before the translation that
    /// puts its top-left corner at (0, 0)).
    package var transform: AffineTransform {
        switch self {
        case .up: return .identity
        case .mirrored: return AffineTransform(a: -1, b: 0, c: 0, d: 1, tx: 0, ty: 0)
        case .upsideDown: return AffineTransform(a: -1, b: 0, c: 0, d: -1, tx: 0, ty: 0)
        case .flipped: return AffineTransform(a: 1, b: 0, c: 0, d: -1, tx: 0, ty: 0)
        case .transposed: return AffineTransform(a: 0, b: 1, c: 1, d: 0, tx: 0, ty: 0)
        case .turnedRight: return AffineTransform(a: 0, b: 1, c: -1, d: 0, tx: 0, ty: 0)
        case .transverse: return AffineTransform(a: 0, b: -1, c: -1, d: 0, tx: 0, ty: 0)
        case .turnedLeft: return AffineTransform(a: 0, b: -1, c: 1, d: 0, tx: 0, ty: 0)
        }
    }
}

/// Owns the open file whose header is being read.
private final class HeaderReader {
    private let file: UnsafeMutablePointer<FILE>

    init(_ path: String) throws {
        guard let file = fopen(path, "rb") else {
            let code = errno
            throw EngineError("image \"\(path)\": \(systemMessage(code))", kind: code == ENOENT ? .notFound : .io, subject: path)
        }
        self.file = file
    }

    deinit { fclose(file) }

    func read(at offset: Int, count: Int) -> [UInt8] {
        guard fseeko(file, off_t(offset), SEEK_SET) == 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { fread($0.baseAddress, 1, count, file) }
        return Array(bytes.prefix(got))
    }
}

/// Owns the FFmpeg objects of one decode: demuxer, decoder, packet, frame, scaler.
private final class ImageDecoding {
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var scaler: OpaquePointer?
    private let path: String
    /// What `decode()` found of the picture's colours beyond sRGB (`ColorProfile.toSRGB`).
    private(set) var gamut = ColorProfile.GamutCount()
    /// The profile `decode()` found with the picture.
    private(set) var profile = ColorProfile.Embedded.none

    init(path: String, kind: ImageLoader.Kind) throws {
        self.path = path
        // The demuxer is chosen from the header already read, so a file is decoded as what it claims to be.
        let demuxer = av_find_input_format("\(kind.rawValue)_pipe")
        try check(avformat_open_input(&format, path, demuxer, nil), "opening")
        guard let format, format.pointee.nb_streams > 0, let stream = format.pointee.streams[0],
              let parameters = stream.pointee.codecpar else {
            throw EngineError("image \"\(path)\": not an image (no picture inside)", kind: .decode, subject: path)
        }
        guard let decoder = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw EngineError("image \"\(path)\": no decoder for \(kind.rawValue)", kind: .unsupported, subject: path)
        }
        codec = avcodec_alloc_context3(decoder)
        packet = av_packet_alloc()
        frame = av_frame_alloc()
        guard let codec, packet != nil, frame != nil else { throw EngineError("image \"\(path)\": out of memory", kind: .limit, subject: path) }
        try check(avcodec_parameters_to_context(codec, parameters), "reading the stream parameters")
        // A second guard after the header check: the decoder refuses larger pictures before allocating.
        codec.pointee.max_pixels = Int64(PixelLimits.maxPixels)
        try check(avcodec_open2(codec, decoder, nil), "opening the decoder")
    }

    deinit {
        sws_freeContext(scaler)
        av_frame_free(&frame)
        av_packet_free(&packet)
        avcodec_free_context(&codec)
        avformat_close_input(&format)
    }

    func decode() throws -> RGBAImage {
        try convert(decodedFrame())
    }

    private func decodedFrame() throws -> UnsafeMutablePointer<AVFrame> {
        guard let format, let codec, let packet, let frame else { throw EngineError("image \"\(path)\": decoder not ready", kind: .internal, subject: path) }
        var flushed = false
        while true {
            let received = avcodec_receive_frame(codec, frame)
            if received >= 0 { break }
            guard received == MOON_AVERROR_EAGAIN, !flushed else {
                throw EngineError("image \"\(path)\": not an image (no picture could be decoded)", kind: .decode, subject: path)
            }
            let read = av_read_frame(format, packet)
            if read == MOON_AVERROR_EOF {
                try check(avcodec_send_packet(codec, nil), "decoding")
                flushed = true
                continue
            }
            try check(read, "reading")
            defer { av_packet_unref(packet) }
            if packet.pointee.stream_index == 0 { try check(avcodec_send_packet(codec, packet), "decoding") }
        }
        return frame
    }

    /// The picture in sRGB BGRA, converted from its embedded colour profile if it has one.
    private func convert(_ frame: UnsafeMutablePointer<AVFrame>) throws -> RGBAImage {
        let picture = frame.pointee
        let (width, height) = (Int(picture.width), Int(picture.height))
        let image = try RGBAImage(width: width, height: height)
        let order = (red: 2, green: 1, blue: 0)
        let deep = (av_pix_fmt_desc_get(AVPixelFormat(picture.format))?.pointee.comp.0.depth ?? 8) > 8
        profile = ColorProfile.embedded(in: frame)
        if case .convert(let profile) = profile, deep {
            // A 16-bit picture (a photographer's PNG) is converted from its 16 bits, then made 8-bit.
            let stride = 4 * width
            guard let memory = malloc(2 * stride * height) else {
                throw EngineError("image \"\(path)\": out of memory converting its \(width)×\(height) 16-bit pixels", kind: .limit, subject: path)
            }
            defer { free(memory) }
            let wide = memory.assumingMemoryBound(to: UInt16.self)
            try scale(picture, to: AV_PIX_FMT_BGRA64LE, into: UnsafeMutableRawPointer(wide).assumingMemoryBound(to: UInt8.self), stride: 2 * stride)
            gamut = profile.toSRGB(from: wide, sourceStride: stride, into: image.pixels, stride: image.stride, width: width, height: height, channels: 4, order: order)
            for y in 0..<height {
                for x in 0..<width { image.pixels[y * image.stride + 4 * x + 3] = UInt8((UInt32(wide[y * stride + 4 * x + 3]) + 128) / 257) }
            }
        } else {
            try scale(picture, to: AV_PIX_FMT_BGRA, into: image.pixels, stride: image.stride)
            if case .convert(let profile) = profile {
                gamut = profile.toSRGB(from: image.pixels, sourceStride: image.stride, into: image.pixels, stride: image.stride,
                               width: width, height: height, channels: 4, order: order)
            }
        }
        image.view.premultiply()
        return image
    }

    /// `picture` in `format` (straight alpha, one plane) into `pixels`, rows `stride` bytes apart.
    private func scale(_ picture: AVFrame, to format: AVPixelFormat, into pixels: UnsafeMutablePointer<UInt8>, stride: Int) throws {
        sws_freeContext(scaler)
        scaler = sws_getContext(picture.width, picture.height, AVPixelFormat(picture.format), picture.width, picture.height,
                                format, SWS_BILINEAR | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, nil, nil, nil)
        guard let scaler else { throw EngineError("image \"\(path)\": cannot convert its pixel format", kind: .unsupported, subject: path) }
        var source = picture.data
        var sourceStrides = picture.linesize
        var destination: [UnsafeMutablePointer<UInt8>?] = [pixels, nil, nil, nil]
        var destinationStrides: [Int32] = [Int32(stride), 0, 0, 0]
        let rows = withUnsafePointer(to: &source) { data in
            withUnsafePointer(to: &sourceStrides) { strides in
                data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { planes in
                    strides.withMemoryRebound(to: Int32.self, capacity: 8) { lineSizes in
                        sws_scale(scaler, planes, lineSizes, 0, picture.height, &destination, &destinationStrides)
                    }
                }
            }
        }
        try check(rows, "converting to BGRA")
    }
}
