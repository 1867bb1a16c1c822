#if canImport(Glibc)
import Glibc
#endif
import CMoonFFmpeg
import CMoonAVShim
import MoonreelPlatform
import MoonreelMedia

/// V4L2 cameras (/dev/video*), with their formats read through the driver's ioctls.
enum V4L2Devices {
    /// A pixel format, size and interval range as the driver lists it.
    struct Entry: Equatable {
        let fourCC: String
        let width: Int
        let height: Int
        /// Seconds per frame, shortest (fastest rate) and longest, as fractions.
        let shortestInterval: (numerator: Int, denominator: Int)
        let longestInterval: (numerator: Int, denominator: Int)

        static func == (a: Entry, b: Entry) -> Bool {
            a.fourCC == b.fourCC && a.width == b.width && a.height == b.height
                && a.shortestInterval == b.shortestInterval && a.longestInterval == b.longestInterval
        }
    }

    static func list() -> [CaptureDevice] {
        guard let folder = opendir("/dev") else { return [] }
        defer { closedir(folder) }
        var paths: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("video") { paths.append("/dev/" + name) }
        }
        return paths.sorted().compactMap { path in
            var card = [CChar](repeating: 0, count: 64)
            var raw = [moon_v4l2_format](repeating: moon_v4l2_format(), count: 256)
            let count = moon_v4l2_formats(path, &card, card.count, &raw, Int32(raw.count))
            guard count >= 0 else { return nil }
            let entries = raw.prefix(Int(count)).map { item in
                Entry(fourCC: fourCCText(item.fourcc), width: Int(item.width), height: Int(item.height),
                      shortestInterval: (Int(item.shortest_numerator), Int(item.shortest_denominator)),
                      longestInterval: (Int(item.longest_numerator), Int(item.longest_denominator)))
            }
            let name = String(decoding: card.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return CaptureDevice(backend: .v4l2, mediaType: .video, name: path, localizedName: name.isEmpty ? path : name,
                                 formats: formats(from: entries))
        }
    }

    /// The capture formats of a driver's list: FFmpeg's pixel format names, each interval
    /// range as a frame-rate range, largest pictures first.
    static func formats(from entries: [Entry]) -> [CaptureFormat] {
        entries.map { entry in
            func rate(_ interval: (numerator: Int, denominator: Int)) -> Double? {
                interval.numerator > 0 && interval.denominator > 0 ? Double(interval.denominator) / Double(interval.numerator) : nil
            }
            let ranges = [rate(entry.longestInterval), rate(entry.shortestInterval)].compactMap { $0 }
            return CaptureFormat.video(width: entry.width, height: entry.height, pixelFormat: pixelFormatName(entry.fourCC),
                                       frameRates: ranges.isEmpty ? [] : [FrameRateRange(ranges.min() ?? 0, ranges.max() ?? 0)])
        }
        .enumerated()
        .sorted { ($0.element.width * $0.element.height, -$0.offset) > ($1.element.width * $1.element.height, -$1.offset) }
        .map(\.element)
    }

    /// FFmpeg's name for a V4L2 pixel format (what its `input_format` option takes).
    static func pixelFormatName(_ fourCC: String) -> String {
        let known = ["YUYV": "yuyv422", "UYVY": "uyvy422", "MJPG": "mjpeg", "JPEG": "mjpeg", "NV12": "nv12", "YU12": "yuv420p",
                     "YV12": "yuv420p", "H264": "h264", "RGB3": "rgb24", "BGR3": "bgr24", "GREY": "gray"]
        return known[fourCC] ?? fourCC.lowercased()
    }

    static func fourCCText(_ code: UInt32) -> String {
        String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: code >> (8 * $0)) }, as: UTF8.self)
    }
}

/// ALSA capture devices, as the kernel lists them in /proc/asound/pcm.
enum ALSADevices {
    static func list() -> [CaptureDevice] {
        guard let file = fopen("/proc/asound/pcm", "r") else { return [] }
        defer { fclose(file) }
        var text = ""
        var buffer = [CChar](repeating: 0, count: 512)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            text += String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return captureDevices(inPCMList: text).map {
            CaptureDevice(backend: .alsa, mediaType: .audio, name: $0.device, localizedName: $0.name, formats: CaptureDevices.standardAudioFormats)
        }
    }

    /// The capture devices of a /proc/asound/pcm listing, e.g.
    /// "00-00: ALC887-VD Analog : ALC887-VD Analog : playback 1 : capture 1" → ("plughw:0,0",
    /// "ALC887-VD Analog"). plughw converts to any rate and channel count.
    static func captureDevices(inPCMList text: String) -> [(device: String, name: String)] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ":", omittingEmptySubsequences: false).map { String($0.trimmed) }
            guard fields.count >= 3, fields.contains(where: { $0.hasPrefix("capture") }) else { return nil }
            let numbers = fields[0].split(separator: "-").compactMap { Int($0) }
            guard numbers.count == 2 else { return nil }
            return ("plughw:\(numbers[0]),\(numbers[1])", fields[1])
        }
    }
}

/// The X screen named by DISPLAY (x11grab), at its own size.
enum X11Screen {
    /// How long a display may take to answer before it counts as not answering.
    static let answerTime = 2.0

    /// The screen, nothing when DISPLAY is unset, or a problem: a display that does not
    /// answer within `answerTime` (a stopped server, a dead forwarded display).
    static func list() -> (devices: [CaptureDevice], problem: String?) {
        guard let display = getenv("DISPLAY").map({ String(cString: $0) }), !display.isEmpty,
              av_find_input_format("x11grab") != nil else { return ([], nil) }
        let probe = withDeadline(seconds: answerTime) { () -> [Int]? in
            guard let format = av_find_input_format("x11grab"),
                  let demuxer = try? Demuxer(device: display, format: format, options: [:], label: "screen \"\(display)\""),
                  let parameters = demuxer.stream(0)?.pointee.codecpar else { return nil }
            return [Int(parameters.pointee.width), Int(parameters.pointee.height)]
        }
        guard let probe else {
            return ([], "X display \(display.quotedForMessage(limit: 80)) does not answer (waited \(Int(answerTime)) s); the screen is not listed")
        }
        guard let size = probe, size.count == 2 else { return ([], nil) }
        return ([CaptureDevice(backend: .x11grab, mediaType: .video, name: display, localizedName: "Screen \(display)",
                               formats: [.video(width: size[0], height: size[1], pixelFormat: "bgr0", frameRates: [FrameRateRange(1, 60)])])], nil)
    }
}
