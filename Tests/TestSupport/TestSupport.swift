import Foundation

/// Helpers shared by the test targets: generating media with the `ffmpeg` CLI and checking
/// outputs with `ffprobe`/`ffmpeg` — an oracle we did not write.
public enum Tool {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// Runs a program, returns (exit status, stdout, stderr).
    @discardableResult
    public static func run(_ program: String, _ arguments: [String], stdin: String? = nil,
                           environment: [String: String]? = nil, timeout: Double = 300) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program.hasPrefix("/") ? program : "/usr/bin/env")
        process.arguments = program.hasPrefix("/") ? arguments : [program] + arguments
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let outPipe = Pipe(), errPipe = Pipe(), inPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = inPipe
        try process.run()
        if let stdin { inPipe.fileHandleForWriting.write(stdin.data(using: .utf8)!) }
        try inPipe.fileHandleForWriting.close()
        // Read both pipes concurrently so a chatty child cannot block on a full pipe.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data(), errData = Data()
        group.enter()
        DispatchQueue.global().async { outData = outPipe.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter()
        DispatchQueue.global().async { errData = errPipe.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            throw Failure(description: "\(program) timed out after \(timeout) s")
        }
        group.wait()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
    }

    /// Runs ffmpeg quietly; throws with its stderr on failure.
    public static func ffmpeg(_ arguments: [String]) throws {
        let result = try run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-y"] + arguments)
        guard result.status == 0 else { throw Failure(description: "ffmpeg failed: \(result.err)") }
    }

    public static func ffprobe(_ path: String) throws -> Probe {
        let result = try run("ffprobe", ["-v", "error", "-print_format", "json", "-show_format", "-show_streams", "-count_frames", path])
        guard result.status == 0 else { throw Failure(description: "ffprobe failed on \(path): \(result.err)") }
        return try JSONDecoder().decode(Probe.self, from: Data(result.out.utf8))
    }

    /// The stored size of the first video stream, read from the headers (`ffprobe` without
    /// `-count_frames`, which decodes the whole file).
    public static func videoSize(_ path: String) throws -> (width: Int, height: Int) {
        let result = try run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                                         "-of", "csv=p=0:s=x", path])
        let parts = result.out.split(separator: "\n").first?.split(separator: "x").compactMap { Int($0) } ?? []
        guard result.status == 0, parts.count == 2 else { throw Failure(description: "\(path) has no video") }
        return (parts[0], parts[1])
    }

    /// One video frame at `time` as packed RGB24 (selected by timestamp with ffmpeg's `-ss`).
    public static func rgbFrame(_ path: String, at time: Double) throws -> Image {
        let (width, height) = try videoSize(path)
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("frame-\(UUID().uuidString).rgb").path
        defer { try? FileManager.default.removeItem(atPath: raw) }
        try ffmpeg(["-i", path, "-ss", String(format: "%.6f", time), "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        return Image(width: width, height: height, pixels: [UInt8](data))
    }

    /// ffmpeg's HDR → SDR conversion with its Möbius tone map (zscale and tonemap): the oracle
    /// for tone-mapped HDR video. Moonreel's own curve (docs/color-and-hdr.md) keeps more of
    /// the highlights; on the iPhone files the two differ by about 2 of 255 on average.
    public static func toneMapFilter(transfer: String) -> String {
        let exact = transfer == "arib-std-b67" ? "agamma=0:" : ""
        return "zscale=\(exact)tin=\(transfer):pin=bt2020:min=bt2020nc:rin=tv:t=linear:p=bt709:m=gbr:npl=203,format=gbrpf32le,"
            + "tonemap=tonemap=mobius:param=0.8:peak=4.926:desat=0,zscale=tin=linear:pin=bt709:min=gbr:t=bt709:p=bt709:m=bt709:r=tv,format=yuv420p"
    }

    /// A frame as ffmpeg itself shows it (autorotated by the display matrix, HDR tone-mapped
    /// to SDR), scaled to `width`×`height`: an independent picture of what "upright" means.
    /// Decoded from the start and selected by timestamp, because ffmpeg's `-ss` misplaces
    /// some edit-listed files.
    public static func referenceFrame(_ path: String, at time: Double, width: Int, height: Int) throws -> Image {
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("ref-\(UUID().uuidString).rgb").path
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let transfer = try run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=color_transfer",
                                           "-of", "default=noprint_wrappers=1:nokey=1", path]).out.split(separator: "\n").first.map(String.init) ?? ""
        let toneMap = ["arib-std-b67", "smpte2084"].contains(transfer) ? toneMapFilter(transfer: transfer) + "," : ""
        try ffmpeg(["-i", path, "-map", "0:v:0", "-frames:v", "1",
                    "-vf", "select=gte(t\\,\(String(format: "%.6f", time - 0.0005))),\(toneMap)scale=\(width):\(height)",
                    "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        return Image(width: width, height: height, pixels: [UInt8](data))
    }

    /// The luma plane of the frame at `time` as the stream's own code values (10-bit video
    /// read as 10-bit, 8-bit as 8-bit; no range conversion), with the picture's width.
    public static func luma(_ path: String, at time: Double, tenBit: Bool) throws -> (values: [Int], width: Int) {
        let (width, height) = try videoSize(path)
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("luma-\(UUID().uuidString).raw").path
        defer { try? FileManager.default.removeItem(atPath: raw) }
        try ffmpeg(["-i", path, "-ss", String(format: "%.6f", time), "-frames:v", "1", "-f", "rawvideo",
                    "-pix_fmt", tenBit ? "yuv420p10le" : "yuv420p", raw])
        let planeBytes = width * height * (tenBit ? 2 : 1)
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)).prefix(planeBytes))
        let values = tenBit ? stride(from: 0, to: data.count - 1, by: 2).map { Int(data[$0]) | Int(data[$0 + 1]) << 8 } : data.map(Int.init)
        return (values, width)
    }

    /// ffmpeg's PSNR of `path` against `reference` (average over planes, dB), after `filter`
    /// on the first input (e.g. a pixel format both are compared in).
    public static func psnr(_ path: String, against reference: String, filter: String = "null") throws -> Double {
        let result = try run("ffmpeg", ["-hide_banner", "-nostdin", "-i", path, "-i", reference,
                                        "-lavfi", "[0:v]\(filter)[a];[a][1:v]psnr=shortest=1", "-f", "null", "-"])
        guard let line = result.err.split(separator: "\n").last(where: { $0.contains("PSNR") }),
              let range = line.range(of: "average:"),
              let value = Double(line[range.upperBound...].prefix { !$0.isWhitespace }) else {
            throw Failure(description: "no PSNR from ffmpeg: \(result.err.suffix(300))")
        }
        return value
    }

    /// All audio as mono-mixed float samples at `rate` (for level and continuity checks).
    public static func audioSamples(_ path: String, rate: Int = 48000, channels: Int = 1) throws -> [Float] {
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("audio-\(UUID().uuidString).f32").path
        defer { try? FileManager.default.removeItem(atPath: raw) }
        try ffmpeg(["-i", path, "-vn", "-ac", "\(channels)", "-ar", "\(rate)", "-f", "f32le", raw])
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Each packet of a stream in decode order: presentation time, keyframe flag and an MD5
    /// of its bytes (to tell copied packets from re-encoded ones).
    public static func packets(_ path: String, stream: String = "v:0") throws -> [(time: Double, isKeyframe: Bool, hash: String)] {
        let result = try run("ffprobe", ["-v", "error", "-select_streams", stream, "-show_data_hash", "MD5",
                                         "-show_entries", "packet=pts_time,flags,data_hash", "-of", "csv=p=0", path])
        guard result.status == 0 else { throw Failure(description: result.err) }
        return result.out.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ",")
            guard fields.count >= 3, let time = Double(fields[0]) else { return nil }
            return (time, fields[1].hasPrefix("K"), String(fields[2]))
        }
    }

    /// Packet timestamps of a stream (e.g. frame count and spacing).
    public static func framePTS(_ path: String, stream: String = "v:0") throws -> [Double] {
        let result = try run("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", "frame=pts_time,best_effort_timestamp_time",
                                         "-of", "csv=p=0", path])
        guard result.status == 0 else { throw Failure(description: result.err) }
        return result.out.split(separator: "\n").compactMap { line in
            line.split(separator: ",").compactMap { Double($0) }.first
        }
    }
}

public struct Probe: Decodable {
    public struct Stream: Decodable {
        public let index: Int
        public let codec_type: String
        public let codec_name: String?
        public let width: Int?
        public let height: Int?
        public let duration: String?
        public let start_time: String?
        public let codec_tag_string: String?
        public let nb_read_frames: String?
        public let sample_rate: String?
        public let bit_rate: String?
        public let channels: Int?
        public let pix_fmt: String?
        public let r_frame_rate: String?
        /// Frames per second from "num/den".
        public var frameRate: Double? {
            guard let parts = r_frame_rate?.split(separator: "/"), parts.count == 2,
                  let num = Double(parts[0]), let den = Double(parts[1]), den > 0 else { return nil }
            return num / den
        }
        public let side_data_list: [SideData]?
        public var durationSeconds: Double? { duration.flatMap(Double.init) }
        public var frameCount: Int? { nb_read_frames.flatMap(Int.init) }
    }
    public struct SideData: Decodable {
        public let rotation: Int?
    }
    public struct Format: Decodable {
        public let duration: String?
        public let format_name: String
        public let tags: [String: String]?
    }
    public let streams: [Stream]
    public let format: Format
    public var duration: Double { format.duration.flatMap(Double.init) ?? 0 }
    public var video: Stream? { streams.first { $0.codec_type == "video" } }
    public var audio: Stream? { streams.first { $0.codec_type == "audio" } }
}

/// Packed RGB24 pixels.
public struct Image {
    public let width: Int
    public let height: Int
    public let pixels: [UInt8]

    public func pixel(_ x: Int, _ y: Int) -> (r: Int, g: Int, b: Int) {
        let i = (y * width + x) * 3
        return (Int(pixels[i]), Int(pixels[i + 1]), Int(pixels[i + 2]))
    }

    /// The rows `range` (a band across the picture).
    public func rows(_ range: Range<Int>) -> Image {
        Image(width: width, height: range.count, pixels: Array(pixels[range.lowerBound * width * 3..<range.upperBound * width * 3]))
    }

    /// Mean absolute difference per channel from another image of the same size.
    public func meanDifference(_ other: Image) -> Double {
        zip(pixels, other.pixels).reduce(0.0) { $0 + abs(Double($1.0) - Double($1.1)) } / Double(max(pixels.count, 1))
    }

    /// A rectangle of this image as an image of its own.
    public func crop(x: Int, y: Int, width w: Int, height h: Int) -> Image {
        var cropped: [UInt8] = []
        cropped.reserveCapacity(w * h * 3)
        for row in y..<(y + h) { cropped += pixels[((row * width + x) * 3)..<((row * width + x + w) * 3)] }
        return Image(width: w, height: h, pixels: cropped)
    }

    /// Mean colour of a rectangle.
    public func mean(x: Int, y: Int, width w: Int, height h: Int) -> (r: Double, g: Double, b: Double) {
        var sum = (0, 0, 0)
        for yy in y..<(y + h) { for xx in x..<(x + w) {
            let p = pixel(xx, yy)
            sum = (sum.0 + p.r, sum.1 + p.g, sum.2 + p.b)
        } }
        let n = Double(w * h)
        return (Double(sum.0) / n, Double(sum.1) / n, Double(sum.2) / n)
    }
}

/// Test media made on the fly, and the real files the repository carries in Tests/Fixtures/real.
public enum Fixtures {
    /// Everything a test run makes lives under one folder, removed when the run ends.
    static let runDirectory: String = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("moonreel-tests-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: Fixtures.runDirectory) }
        return dir
    }()

    /// Generated media, cached for the run (see `cached`).
    public static let directory: String = {
        let dir = runDirectory + "/fixtures"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }()

    /// `name` in a new, empty folder of its own (removed with the run).
    public static func scratchPath(_ name: String) -> String {
        let dir = runDirectory + "/scratch-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir + "/" + name
    }

    private static let lock = NSLock()

    /// `directory/name`, made by `make(path)` the first time it is asked for: one maker at a
    /// time, so tests running in parallel never read a half-written file.
    public static func cached(_ name: String, make: (String) throws -> Void) throws -> String {
        let path = directory + "/" + name
        lock.lock(); defer { lock.unlock() }
        if FileManager.default.fileExists(atPath: path) { return path }
        try make(path)
        return path
    }

    /// A clip whose frame number is readable from its pixels: testsrc2 with a frame counter,
    /// plus a sine tone. Cached per parameter set for the test run.
    public static func clip(seconds: Double = 6, rate: String = "30", size: String = "320x240",
                            tone: Int = 440, sampleRate: Int = 48000, extra: [String] = [], name: String? = nil) throws -> String {
        let file = name ?? "clip-\(seconds)-\(rate)-\(size)-\(tone)-\(sampleRate)-\(extra.joined(separator: "_").replacingOccurrences(of: "/", with: "_")).mp4"
        return try cached(file) { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=\(size):rate=\(rate):duration=\(seconds)",
                             "-f", "lavfi", "-i", "sine=frequency=\(tone):sample_rate=\(sampleRate):duration=\(seconds)",
                             "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "30",
                             "-c:a", "aac", "-b:a", "128k"] + extra + ["-shortest", path])
        }
    }

    /// A solid-colour clip (exact pixel expectations), optionally with a tone.
    public static func solid(_ color: String, seconds: Double = 2, size: String = "320x240", rate: String = "30", tone: Int? = 440) throws -> String {
        try cached("solid-\(color.replacingOccurrences(of: "#", with: ""))-\(seconds)-\(size)-\(rate)-\(tone ?? 0).mp4") { path in
            var args = ["-f", "lavfi", "-i", "color=c=\(color):size=\(size):rate=\(rate):duration=\(seconds)"]
            if let tone { args += ["-f", "lavfi", "-i", "sine=frequency=\(tone):sample_rate=48000:duration=\(seconds)", "-c:a", "aac"] }
            try Tool.ffmpeg(args + ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-shortest", path])
        }
    }

    /// Names in `path`'s folder other than `path` itself: temporary or unfinished files an
    /// export or recording left beside its output.
    public static func leftovers(beside path: String) throws -> [String] {
        let folder = (path as NSString).deletingLastPathComponent, name = (path as NSString).lastPathComponent
        return try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0 != name }
    }

    /// Where `realTransitions` changes shot: a dissolve, a fade through black (seconds), and
    /// the hard cut, this long before the end.
    public static let realDissolve = (time: 0.9, duration: 0.8), realFade = (time: 1.9, duration: 0.6), realCutBeforeEnd = 1.5

    /// Four real shots at 320x180, 30 fps, joined by ffmpeg's xfade and concat (issue 36 §6):
    /// the iPhone's handheld building (fixture 03) dissolves into the view from a moving car
    /// (12), which fades through black into the Pixel's handheld selfie (05), cut to the
    /// iPhone 4S's wall (01). The times are `realDissolve`, `realFade` and `realCutBeforeEnd`.
    public static func realTransitions() throws -> String {
        try cached("real-transitions.mp4") { path in
            let shots = ["03_iphone_trimmed_hevc10_editlist_vfr.mp4", "12_vp9_profile2_10bit.webm",
                         "05_pixel_motionphoto_hevc_rot270_2videotracks.mp4", "01_iphone4s_portrait_h264_rot90.mov"]
            let lengths = [1.7, 1.6, 1.6, realCutBeforeEnd]
            let scaled = zip(shots.indices, lengths).map { index, length in
                "[\(index):v]trim=0:\(length),setpts=PTS-STARTPTS,fps=30,scale=320:180:force_original_aspect_ratio=increase,crop=320:180,setsar=1,format=yuv420p,settb=AVTB[s\(index)]"
            }
            let joins = "[s0][s1]xfade=transition=fade:duration=\(realDissolve.duration):offset=\(realDissolve.time)[j1];"
                + "[j1][s2]xfade=transition=fadeblack:duration=\(realFade.duration):offset=\(realFade.time)[j2];[j2][s3]concat=n=2:v=1:a=0[v]"
            try Tool.ffmpeg(shots.flatMap { ["-i", real($0)] } + ["-filter_complex", (scaled + [joins]).joined(separator: ";"),
                            "-map", "[v]", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "20", path])
        }
    }

    /// `Tests/Fixtures/real/NAME`: the real phone, browser and broken files the repository
    /// carries (their licences and provenance beside them), so every clone runs every test.
    public static func real(_ name: String) -> String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<2 { url.deleteLastPathComponent() } // Tests/TestSupport/TestSupport.swift → Tests
        return url.appendingPathComponent("Fixtures/real/\(name)").path
    }
}

/// Measurements of decoded audio (mono float samples).
public extension Array where Element == Float {
    /// Frequency of a pure tone in samples [from, to), from its zero crossings.
    func toneFrequency(from: Int, to: Int, rate: Int) -> Double {
        let crossings = (Swift.max(from, 1)..<Swift.min(to, count)).filter { (self[$0 - 1] < 0) != (self[$0] < 0) }.count
        return Double(crossings) / 2 / (Double(to - from) / Double(rate))
    }

    /// The largest jump between neighbouring samples in [from, to): a click where two
    /// pieces of sound meet.
    func largestStep(from: Int, to: Int) -> Float {
        (Swift.max(from, 1)..<Swift.min(to, count)).map { abs(self[$0] - self[$0 - 1]) }.max() ?? 0
    }

    /// Amplitude of the `frequency` component in samples [from, to): one bin of the DFT
    /// (Goertzel's recurrence), so a sine of amplitude A gives A; windows holding whole
    /// cycles of every tone in play leave the others out.
    func toneAmplitude(_ frequency: Double, from: Int, to: Int, rate: Int) -> Double {
        let range = Swift.max(from, 0)..<Swift.min(to, count)
        let coefficient = 2 * cos(2 * Double.pi * frequency / Double(rate))
        var (previous, beforePrevious) = (0.0, 0.0)
        for i in range {
            (previous, beforePrevious) = (Double(self[i]) + coefficient * previous - beforePrevious, previous)
        }
        let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        return 2 * Swift.max(power, 0).squareRoot() / Double(Swift.max(range.count, 1))
    }

    func level(from: Int, to: Int) -> Double {
        let slice = self[Swift.max(from, 0)..<Swift.min(to, count)]
        return (slice.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(Swift.max(slice.count, 1))).squareRoot()
    }
}

/// Tests that measure time (a page playing in real time) and the heaviest render tests (many
/// encoder processes at once) must not overlap on a 2-core machine: the first would measure
/// the second. Heavy tests share the machine with each other; a timed test waits for them to
/// end and keeps new ones waiting (writers first) until it is done.
public enum MachineLoad {
    nonisolated(unsafe) private static let lock: UnsafeMutablePointer<pthread_rwlock_t> = {
        let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        pthread_rwlock_init(lock, &attributes)
        return lock
    }()

    /// Runs a test that loads every core for a while.
    public static func heavy<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    /// Runs a test that measures time, with no heavy test beside it.
    public static func timed<T>(_ body: () throws -> T) rethrows -> T {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
