import CMoonFFmpeg
import CMoonAVShim
#if canImport(Glibc)
import Glibc
#endif
import MoonreelPlatform

/// Owns one opened input (`AVFormatContext`). Not thread-safe: one owner at a time.
package final class Demuxer {
    package let context: UnsafeMutablePointer<AVFormatContext>
    package let path: String
    /// Set to 1 from any thread to make blocking reads return (AVERROR_EXIT).
    package let interruptFlag: UnsafeMutablePointer<Int32>
    /// Where the file's times begin. MPEG-TS and MPEG-PS (`.ts`, `.mpg`, AVCHD `.MTS`) and
    /// FLV count on a stream clock that starts anywhere (0.54 s from the ffmpeg CLI, minutes
    /// into a broadcast), and FFmpeg starts an MP3 after its encoder's delay: their times are
    /// counted from their earliest audio or video instead, as players show them and ffmpeg's
    /// `-ss` counts. Zero for every other file.
    package private(set) var clockOrigin = MediaTime.zero
    /// `clockOrigin` in each stream's time base: what `read` subtracts and `seek` adds.
    private var originPts: [Int64] = []

    /// Opens and probes `path`, with errors that say what is wrong with the file.
    package init(path: String) throws {
        self.path = path
        try Demuxer.checkReadableFile(path)
        interruptFlag = .allocate(capacity: 1)
        interruptFlag.initialize(to: 0)
        var options: OpaquePointer? = nil
        let (opened, openStatus) = Demuxer.open(path, format: nil, options: &options, interruptFlag: interruptFlag)
        guard let context = opened else {
            interruptFlag.deallocate()
            throw openStatus == 0 ? EngineError("input \"\(path)\": out of memory", kind: .limit, subject: path) : Demuxer.describeOpenFailure(path: path, code: openStatus)
        }
        self.context = context
        let infoStatus = avformat_find_stream_info(context, nil)
        if infoStatus < 0 {
            throw EngineError("input \"\(path)\": cannot read stream information (\(FFmpegError.text(for: infoStatus))); the file may be truncated or corrupt", kind: .decode, subject: path)
        }
        countsFromItsMedia()
    }

    /// Opens a capture device through a libavdevice input format (`label` names it in errors).
    package init(device name: String, format: UnsafePointer<AVInputFormat>, options: [String: String], label: String) throws {
        path = name
        interruptFlag = .allocate(capacity: 1)
        interruptFlag.initialize(to: 0)
        var dictionary: OpaquePointer? = nil
        defer { av_dict_free(&dictionary) }
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        let (maybeOpened, openStatus) = Demuxer.open(name, format: format, options: &dictionary, interruptFlag: interruptFlag)
        guard let opened = maybeOpened else {
            interruptFlag.deallocate()
            let logged = FFmpegError.lastLogLine()
            let reason = openStatus == 0 ? "out of memory" : logged.isEmpty ? FFmpegError.text(for: openStatus) : logged
            throw EngineError("\(label): cannot open the device: \(reason); check that it exists and is not in use", kind: .notFound, subject: label)
        }
        self.context = opened
        let infoStatus = avformat_find_stream_info(opened, nil)
        if infoStatus < 0 {
            throw EngineError("\(label): the device delivers nothing readable (\(FFmpegError.text(for: infoStatus)))", kind: .decode, subject: label)
        }
    }

    /// Opens an input whose blocking reads `interruptFlag` can stop: the context, or nil
    /// and FFmpeg's status (0 when the context could not even be allocated).
    private static func open(_ url: String, format: UnsafePointer<AVInputFormat>?, options: inout OpaquePointer?,
                             interruptFlag: UnsafeMutablePointer<Int32>) -> (UnsafeMutablePointer<AVFormatContext>?, Int32) {
        guard let context = avformat_alloc_context() else { return (nil, 0) }
        moon_set_interrupt(context, interruptFlag)
        moon_av_clear_last_log()
        var maybeContext: UnsafeMutablePointer<AVFormatContext>? = context
        let status = avformat_open_input(&maybeContext, url, format, &options)
        return status >= 0 ? (maybeContext, status) : (nil, status)
    }

    deinit {
        var maybeContext: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&maybeContext)
        interruptFlag.deallocate()
    }

    package var streamCount: Int { Int(context.pointee.nb_streams) }

    /// The file's tag `key` (container metadata), if it has one.
    package func tag(_ key: String) -> String? {
        av_dict_get(context.pointee.metadata, key, nil, 0).map { String(cString: $0.pointee.value) }
    }

    /// Calls `body` with each packet read from here on, until it returns false or the file
    /// ends (or fails to read); nothing is decoded.
    package func forEachPacket(_ body: (UnsafeMutablePointer<AVPacket>) throws -> Bool) throws {
        guard let packet = av_packet_alloc() else { throw EngineError("out of memory", kind: .limit) }
        var owned: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&owned) }
        while read(into: packet) >= 0 {
            defer { av_packet_unref(packet) }
            guard try body(packet) else { return }
        }
    }

    /// The next packet (`av_read_frame`), its times counted from `clockOrigin`; FFmpeg's status.
    package func read(into packet: UnsafeMutablePointer<AVPacket>) -> Int32 {
        let status = av_read_frame(context, packet)
        let index = Int(packet.pointee.stream_index)
        guard status >= 0, index >= 0, index < originPts.count, originPts[index] != 0 else { return status }
        packet.pointee.pts = Self.shifted(packet.pointee.pts, by: -originPts[index])
        packet.pointee.dts = Self.shifted(packet.pointee.dts, by: -originPts[index])
        return status
    }

    /// Seeks stream `index` (`avformat_seek_file`, times counted from `clockOrigin`, in the
    /// stream's time base); FFmpeg's status.
    package func seek(stream index: Int, earliest: Int64 = .min, target: Int64, latest: Int64, flags: Int32 = 0) -> Int32 {
        let origin = index >= 0 && index < originPts.count ? originPts[index] : 0
        return avformat_seek_file(context, Int32(index), Self.shifted(earliest, by: origin), Self.shifted(target, by: origin),
                                  Self.shifted(latest, by: origin), flags)
    }

    /// Seeks stream `index` so that its next packet is a keyframe at or before `target` (its
    /// time base), read into `packet`; false when the stream flags none, and decoding starts
    /// where the seek landed. MP4, MOV and Matroska seek to keyframes by their index. MPEG-TS
    /// and MPEG-PS seek to any packet near a time: the packets are then read from further back
    /// (1 s, 2 s, 4 s … at most a minute, as players do) for the last keyframe at or before
    /// `target`, and read again to it; with none there (a file cut mid-GOP), the first one
    /// after. A decoder given the packets before a keyframe draws nothing, or garbage.
    /// `label` names the input in errors.
    package func seekToKeyframe(stream index: Int, atOrBefore target: Int64, holdingIn packet: UnsafeMutablePointer<AVPacket>,
                                context label: String) throws -> Bool {
        av_packet_unref(packet)
        guard let timeBase = stream(index)?.pointee.time_base else { return false }
        let time = MediaTime(pts: target, timeBase: timeBase), start = startTime(ofStream: index) ?? .zero
        func seekNear(_ from: Int64) throws {
            if seek(stream: index, target: from, latest: from, flags: AVSEEK_FLAG_BACKWARD) < 0 {
                // Some inputs (streamed WebM without cues) cannot seek: restart from the beginning.
                try check(seek(stream: index, target: .min, latest: from), "seeking to \(time.seconds) s", context: label)
            }
        }
        try seekNear(target)
        if let first = nextPacket(of: index, into: packet), first.isKeyframe, first.time <= target { return true }
        av_packet_unref(packet)
        var lead = MediaTime(value: 1, timescale: 1)
        while true {
            // From the stream's start, an MPEG file's first byte: a seek to a time near it lands
            // past a first keyframe decoded before it is shown (B-frames).
            let fromStart = time - lead <= start
            let from = (time - lead).pts(in: timeBase)
            func seekBack() throws {
                if !fromStart || !countsOnAClock || av_seek_frame(context, -1, 0, AVSEEK_FLAG_BYTE) < 0 { try seekNear(fromStart ? .min : from) }
            }
            try seekBack()
            if let keyframe = lastKeyframe(of: index, atOrBefore: target, using: packet) {
                try seekBack()
                while let next = nextPacket(of: index, into: packet) {
                    if next.isKeyframe, next.time == keyframe { return true }
                    av_packet_unref(packet)
                }
                break // the file changed under us: decode from the time itself
            }
            if fromStart || lead >= Self.longestKeyframeSearch { break }
            lead = lead + lead
        }
        try seekNear(target)
        var passed = 0
        while let next = nextPacket(of: index, into: packet), passed < Self.packetsWithoutKeyframe {
            if next.isKeyframe { return true }
            av_packet_unref(packet)
            passed += 1
        }
        av_packet_unref(packet)
        try seekNear(target)
        return false
    }

    /// How far before a time a seek looks for its keyframe: a GOP longer than a minute
    /// (a security camera's) is decoded from the first keyframe after it.
    private static let longestKeyframeSearch = MediaTime(value: 64, timescale: 1)
    /// How many of a stream's packets after a time may pass without a keyframe before the
    /// stream is taken as flagging none (10 s at 60 fps).
    private static let packetsWithoutKeyframe = 600

    /// The next packet of stream `index`, read into `packet`, with its time (its presentation
    /// time, else its decoding time) and whether it is a keyframe; nil at the end.
    private func nextPacket(of index: Int, into packet: UnsafeMutablePointer<AVPacket>) -> (time: Int64, isKeyframe: Bool)? {
        while read(into: packet) >= 0 {
            let time = packet.pointee.pts != MOON_AV_NOPTS_VALUE ? packet.pointee.pts : packet.pointee.dts
            if Int(packet.pointee.stream_index) == index, time != MOON_AV_NOPTS_VALUE {
                return (time, packet.pointee.flags & AV_PKT_FLAG_KEY != 0)
            }
            av_packet_unref(packet)
        }
        return nil
    }

    /// Reads stream `index` on until its packets are decoded after `target`, for the time of
    /// its last keyframe at or before it; `packet` is scratch.
    private func lastKeyframe(of index: Int, atOrBefore target: Int64, using packet: UnsafeMutablePointer<AVPacket>) -> Int64? {
        var last: Int64?
        while let next = nextPacket(of: index, into: packet) {
            // A packet decoded after the target comes after every keyframe shown by then.
            let decoded = packet.pointee.dts != MOON_AV_NOPTS_VALUE ? packet.pointee.dts : next.time
            av_packet_unref(packet)
            if decoded > target { break }
            if next.isKeyframe, next.time <= target { last = next.time }
        }
        return last
    }

    /// Where stream `index` starts, counted from `clockOrigin`; nil when the file does not say.
    package func startTime(ofStream index: Int) -> MediaTime? {
        guard let stream = stream(index), stream.pointee.start_time != MOON_AV_NOPTS_VALUE else { return nil }
        return MediaTime(pts: stream.pointee.start_time, timeBase: stream.pointee.time_base) - clockOrigin
    }

    /// A format FFmpeg marks as counting on a running clock: MPEG-TS, MPEG-PS, FLV.
    private var countsOnAClock: Bool { context.pointee.iformat.map { $0.pointee.flags & AVFMT_TS_DISCONT != 0 } ?? false }

    /// Sets `clockOrigin` at the earliest audio or video start of such a format, and of an
    /// MP3, whose start FFmpeg puts after the encoder's delay (LAME's 1105 samples before the
    /// sound, which players do not play): its sound starts at 0 s, as a player's does.
    private func countsFromItsMedia() {
        let isMP3 = context.pointee.iformat.map { String(cString: $0.pointee.name) == "mp3" } ?? false
        guard countsOnAClock || isMP3 else { return }
        let streams = (0..<streamCount).compactMap { stream($0) }
        let starts = streams.filter { [AVMEDIA_TYPE_VIDEO, AVMEDIA_TYPE_AUDIO].contains($0.pointee.codecpar.pointee.codec_type) && $0.pointee.start_time != MOON_AV_NOPTS_VALUE }
            .map { MediaTime(pts: $0.pointee.start_time, timeBase: $0.pointee.time_base) }
        // Past zero, or before it where FFmpeg unwrapped a clock that wrapped round (2^33 ticks
        // at 90 kHz, 26.5 hours) into negative times.
        guard let earliest = starts.min(), earliest != .zero else { return }
        clockOrigin = earliest
        originPts = streams.map { earliest.pts(in: $0.pointee.time_base) }
    }

    /// `time` moved by `amount`, FFmpeg's "no time" and the open ends of a seek kept as
    /// they are, and clamped where a damaged file's times would overflow.
    package static func shifted(_ time: Int64, by amount: Int64) -> Int64 {
        guard time != MOON_AV_NOPTS_VALUE, time != .max else { return time }
        let (sum, overflow) = time.addingReportingOverflow(amount)
        return overflow ? (amount > 0 ? .max - 1 : .min + 1) : sum
    }

    package func stream(_ index: Int) -> UnsafeMutablePointer<AVStream>? {
        guard index >= 0, index < streamCount else { return nil }
        return context.pointee.streams[index]
    }

    static func checkReadableFile(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            let reason = code == ENOENT ? "no such file" : systemMessage(code)
            throw EngineError("input \"\(path)\": \(reason)", kind: code == ENOENT ? .notFound : .io, subject: path)
        }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw EngineError("input \"\(path)\": is a directory, not a media file", kind: .io, subject: path) }
        if info.st_size == 0 { throw EngineError("input \"\(path)\": the file is empty (0 bytes)", kind: .decode, subject: path) }
        guard access(path, R_OK) == 0 else { throw EngineError("input \"\(path)\": permission denied", kind: .io, subject: path) }
    }

    private static func describeOpenFailure(path: String, code: Int32) -> EngineError {
        let logged = FFmpegError.lastLogLine()
        if let refusal = HEIFImage.refusal(path, as: "input") { return refusal }
        if logged.contains("moov atom not found") && startsWithISOBox(path) {
            return EngineError("input \"\(path)\": moov atom not found (file truncated? an interrupted recording loses its index)", kind: .decode, subject: path)
        }
        if code == MOON_AVERROR_EOF {
            return EngineError("input \"\(path)\": the file ends inside its header (truncated?)", kind: .decode, subject: path)
        }
        if code == MOON_AVERROR_INVALIDDATA || code == MOON_AVERROR_EINVAL {
            let why = logged.isEmpty ? "" : " (\(logged))"
            return EngineError("input \"\(path)\": not a media file FFmpeg can read, or the file is corrupt or truncated\(why)", kind: .decode, subject: path)
        }
        let detail = logged.isEmpty ? FFmpegError.text(for: code) : "\(logged) (\(FFmpegError.text(for: code)))"
        return EngineError("input \"\(path)\": cannot open: \(detail)",
                           kind: FFmpegError.kind(code: code, operation: "opening", context: "input"), subject: path)
    }
}

/// Whether the file begins like an MP4/QuickTime file (a known box type at bytes 4–7), to
/// tell a truncated recording from, say, a text file named ".mp4".
private func startsWithISOBox(_ path: String) -> Bool {
    guard let file = fopen(path, "rb") else { return false }
    defer { fclose(file) }
    var header = [UInt8](repeating: 0, count: 8)
    guard fread(&header, 1, 8, file) == 8 else { return false }
    let type = String(decoding: header[4..<8], as: UTF8.self)
    return ["ftyp", "wide", "free", "mdat", "moov", "skip", "pnot"].contains(type)
}

/// A HEIF or AVIF still image (an ISO file whose `ftyp` names an image brand and whose
/// pictures are described by a top-level `meta` box, with no movie): what iPhones save photos
/// as since iOS 11. FFmpeg 5.1 reads neither (it sees an MP4 with no movie).
package enum HEIFImage {
    /// "HEIC" or "AVIF" when the file at `path` is one, else nil.
    package static func kind(_ path: String) -> String? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var header = [UInt8](repeating: 0, count: 64)
        let count = fread(&header, 1, header.count, file)
        guard count >= 16, header[4..<8].elementsEqual("ftyp".utf8) else { return nil }
        let size = min(count, header[0..<4].reduce(0) { $0 << 8 | Int($1) })
        // The major brand (bytes 8–11), then the compatible ones from byte 16.
        let brands = ([8] + Array(stride(from: 16, to: size - 3, by: 4))).map { String(decoding: header[$0..<$0 + 4], as: UTF8.self) }
        let kind = brands.contains { ["avif", "avis"].contains($0) } ? "AVIF"
            : brands.contains { ["mif1", "msf1", "heic", "heix", "heim", "heis"].contains($0) } ? "HEIC" : nil
        guard let kind else { return nil }
        // The top-level boxes after ftyp (at most 16): an image has `meta` and no `moov`.
        var (offset, types) = (header[0..<4].reduce(0) { $0 << 8 | Int($1) }, Set<String>())
        for _ in 0..<16 {
            var box = [UInt8](repeating: 0, count: 8)
            guard offset >= 8, fseeko(file, off_t(offset), SEEK_SET) == 0, fread(&box, 1, 8, file) == 8 else { break }
            types.insert(String(decoding: box[4..<8], as: UTF8.self))
            let length = box[0..<4].reduce(0) { $0 << 8 | Int($1) }
            guard length >= 8 else { break } // 0 (to the end) or 1 (a 64-bit size): the last box read
            offset += length
        }
        return types.contains("meta") && !types.contains("moov") ? kind : nil
    }

    /// The error for such a file given where a video, sound or picture was expected; nil
    /// for any other file. `role`: "input" or "image", as the message names the file.
    package static func refusal(_ path: String, as role: String) -> EngineError? {
        guard let kind = kind(path) else { return nil }
        let what = kind == "AVIF" ? "an AVIF image" : "a HEIF image (HEIC, as iPhones save photos)"
        return EngineError("\(role) \"\(path)\": \(what), which Moonreel cannot read; convert it to JPEG or PNG first (heif-convert photo.heic photo.jpg, from Debian's libheif-examples)",
                           kind: .unsupported, subject: path)
    }
}

extension AVRational {
    package var isValid: Bool { num != 0 && den > 0 }
    /// One frame at this rate, exactly (1001/30000 s at 30000/1001); nil when it is no rate.
    package var frameDuration: MediaTime? { num > 0 && den > 0 ? MediaTime(value: Int64(den), timescale: num) : nil }
    var doubleValue: Double { den == 0 ? 0 : Double(num) / Double(den) }
}

extension MediaTime {
    /// Time of `pts` counted in an FFmpeg time base (the named hand-off from FFmpeg time).
    package init(pts: Int64, timeBase: AVRational) {
        // A damaged file can carry an unusable time base or absurd timestamps: clamp
        // rather than trap (the value is then visibly wrong, and checked downstream).
        self.init(value: MediaTime.clamped(Int128(pts) * Int128(Swift.max(timeBase.num, 1))), timescale: Swift.max(timeBase.den, 1))
    }

    /// This time counted in an FFmpeg time base, rounded to nearest (hand-off to FFmpeg time);
    /// clamped, never trapping, for absurd times or time bases.
    package func pts(in timeBase: AVRational) -> Int64 {
        let product = Int128(value) * Int128(Swift.max(timeBase.den, 1))
        let divisor = Int128(timescale) * Int128(Swift.max(timeBase.num, 1))
        var (quotient, remainder) = product.quotientAndRemainder(dividingBy: divisor)
        if remainder != 0, remainder.magnitude * 2 >= divisor.magnitude { quotient += remainder > 0 ? 1 : -1 }
        return MediaTime.clamped(quotient)
    }
}
