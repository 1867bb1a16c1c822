import CMoonFFmpeg
import CMoonAVShim


/// How many threads a decoder uses.
package enum DecoderThreading: Sendable, Equatable {
    /// FFmpeg's own choice: frame threads, one more than the cores, each holding a picture
    /// in flight (with the pictures they refer to: ~19 MiB more than one thread at 1080p).
    case automatic
    /// One thread: no pictures in flight, at the price of decoding speed.
    case single
}

/// Owns a decoder (`AVCodecContext`) for one stream of a demuxer.
package final class StreamDecoder {
    package let context: UnsafeMutablePointer<AVCodecContext>
    package let timeBase: AVRational

    package init(stream: UnsafeMutablePointer<AVStream>, label: String, threading: DecoderThreading = .automatic) throws {
        guard let parameters = stream.pointee.codecpar else { throw EngineError("\(label): stream has no codec parameters", kind: .decode, subject: label) }
        if parameters.pointee.codec_type == AVMEDIA_TYPE_VIDEO {
            do {
                try PixelLimits.check(width: Int(parameters.pointee.width), height: Int(parameters.pointee.height), what: "picture size")
            } catch let error as EngineError {
                throw EngineError("\(label): \(error.message); Moonreel decodes up to \(PixelLimits.description)", kind: .limit, subject: label)
            }
        }
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            let name = avcodec_get_name(parameters.pointee.codec_id).map { String(cString: $0) } ?? "unknown"
            throw EngineError("\(label): no decoder for codec \(name)", kind: .unsupported, subject: label)
        }
        guard let context = avcodec_alloc_context3(codec) else { throw EngineError("out of memory", kind: .limit) }
        self.context = context
        timeBase = stream.pointee.time_base
        try check(avcodec_parameters_to_context(context, parameters), "reading codec parameters", context: label)
        context.pointee.pkt_timebase = stream.pointee.time_base
        context.pointee.thread_count = threading == .single ? 1 : 0 // 0: as many as useful
        av_opt_set_int(UnsafeMutableRawPointer(context), "max_pixels", Int64(PixelLimits.maxPixels), 0)
        try check(avcodec_open2(context, codec, nil), "opening the decoder", context: label)
    }

    deinit {
        var maybe: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&maybe)
    }
}

/// Reads one stream of one file and hands out decoded frames in presentation order.
/// Packets of other streams are skipped.
package final class StreamReader {
    package let demuxer: Demuxer
    let streamIndex: Int
    let decoder: StreamDecoder
    package let label: String
    private let packet: UnsafeMutablePointer<AVPacket>
    private var draining = false
    private(set) var finished = false
    /// The frame wanted next (stream time base), while reading forward to it: non-reference
    /// frames that cannot be shown at it are not decoded (`skipsUnshownFrames`).
    var target: Int64?
    /// The largest presentation time sent to the decoder since the last seek.
    private var latestSentPTS = Int64.min
    /// `packet` holds the keyframe a seek found, to be decoded first.
    private var holdsKeyframe = false

    package init(path: String, streamIndex: Int, threading: DecoderThreading = .automatic) throws {
        demuxer = try Demuxer(path: path)
        label = "input \"\(path)\""
        guard let stream = demuxer.stream(streamIndex) else { throw EngineError("\(label): has no stream #\(streamIndex)", kind: .notFound, subject: label) }
        self.streamIndex = streamIndex
        // Skip every other stream at the demuxer: no wasted reads of their packets' data.
        for index in 0..<demuxer.streamCount where index != streamIndex {
            demuxer.stream(index)?.pointee.discard = AVDISCARD_ALL
        }
        decoder = try StreamDecoder(stream: stream, label: label, threading: threading)
        guard let packet = av_packet_alloc() else { throw EngineError("out of memory", kind: .limit) }
        self.packet = packet
    }

    deinit {
        var maybe: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&maybe)
    }

    package var timeBase: AVRational { decoder.timeBase }

    /// One frame at the stream's stated rate (1/30 s when it states none).
    var nominalFrameDuration: MediaTime {
        demuxer.stream(streamIndex)?.pointee.avg_frame_rate.frameDuration ?? MediaTime(value: 1, timescale: 30)
    }

    /// Seeks so that the next frame decoded is at or before `time`: decoding starts at a
    /// keyframe before it (`Demuxer.seekToKeyframe`).
    package func seek(before time: MediaTime) throws {
        avcodec_flush_buffers(decoder.context)
        (draining, finished, latestSentPTS) = (false, false, .min)
        holdsKeyframe = false
        holdsKeyframe = try demuxer.seekToKeyframe(stream: streamIndex, atOrBefore: time.pts(in: timeBase), holdingIn: packet, context: label)
    }

    /// The next decoded frame, or nil at the end of the stream.
    package func nextFrame() throws -> Frame? {
        let frame = try Frame()
        while true {
            let received = avcodec_receive_frame(decoder.context, frame.pointer)
            if received >= 0 { return frame }
            if received == MOON_AVERROR_EOF { finished = true; return nil }
            guard received == MOON_AVERROR_EAGAIN else {
                try check(received, "decoding", context: label)
                return nil
            }
            if draining {
                finished = true
                return nil
            }
            let read = holdsKeyframe ? 0 : demuxer.read(into: packet)
            holdsKeyframe = false
            if read == MOON_AVERROR_EOF || read == MOON_AVERROR_EXIT {
                draining = true
                avcodec_send_packet(decoder.context, nil)
                continue
            }
            if read < 0 {
                // A truncated file ends where its data ends; decode what was read.
                draining = true
                avcodec_send_packet(decoder.context, nil)
                continue
            }
            defer { av_packet_unref(packet) }
            guard Int(packet.pointee.stream_index) == streamIndex else { continue }
            skipsUnshownFrames(packet.pointee.pts)
            let sent = avcodec_send_packet(decoder.context, packet)
            if sent < 0, sent != MOON_AVERROR_EAGAIN, sent != MOON_AVERROR_INVALIDDATA {
                try check(sent, "decoding", context: label)
            }
        }
    }

    /// Time of the last keyframe at or before `time` that the container's index knows, if
    /// it has one (MP4 and MOV list them; a decision aid only: seeking stays exact).
    func indexedKeyframe(atOrBefore time: MediaTime) -> MediaTime? {
        guard let stream = demuxer.stream(streamIndex),
              let entry = avformat_index_get_entry_from_timestamp(stream, time.pts(in: timeBase), AVSEEK_FLAG_BACKWARD) else { return nil }
        return MediaTime(pts: entry.pointee.timestamp, timeBase: timeBase)
    }

    /// A packet earlier than one already sent that is itself at or before the target cannot
    /// be the frame shown at the target (that one is later and still not past it), nor at any
    /// later target: if nothing refers to it, it need not be decoded. Reaching a frame after a
    /// seek then decodes the GOP's reference frames only (two thirds fewer with B-frames).
    private func skipsUnshownFrames(_ pts: Int64) {
        var skip = false
        if pts != MOON_AV_NOPTS_VALUE {
            if let target, pts < latestSentPTS, latestSentPTS <= target { skip = true }
            latestSentPTS = max(latestSentPTS, pts)
        }
        decoder.context.pointee.skip_frame = skip ? AVDISCARD_NONREF : AVDISCARD_DEFAULT
    }

    /// Presentation time of a decoded frame.
    package func time(of frame: Frame) -> MediaTime { MediaTime(pts: pts(of: frame), timeBase: timeBase) }

    /// Presentation timestamp of a decoded frame, in the stream's time base.
    package func pts(of frame: Frame) -> Int64 {
        let bestEffort = frame.pointer.pointee.best_effort_timestamp
        if bestEffort != MOON_AV_NOPTS_VALUE { return bestEffort }
        return frame.pointer.pointee.pts == MOON_AV_NOPTS_VALUE ? 0 : frame.pointer.pointee.pts
    }
}

/// Gives the video frame shown at any source time: the last frame whose presentation time
/// is at or before it (frames are chosen by timestamp, never by index). Reading forward is
/// cheap; going back or far ahead seeks.
package final class VideoFrameSource {
    private let reader: StreamReader
    private var current: (frame: Frame, time: MediaTime)?
    private var upcoming: (frame: Frame, time: MediaTime)?
    /// Jumps further ahead than this seek instead of decoding every frame in between.
    private let seekThreshold = MediaTime(value: 3, timescale: 1)
    /// Shorter jumps forward seek only past a keyframe, and only when they skip this much:
    /// reading on in order (an export, playback) never seeks.
    private let jumpWorthSeeking = MediaTime(value: 1, timescale: 2)
    /// A photo: its one picture is decoded once and shown at every time (image demuxers
    /// cannot seek).
    private let isStillImage: Bool
    /// Interlaced pictures (a camcorder's 1080i, DV) are made whole as players show them.
    private let deinterlacer = Deinterlacer()
    /// The stream is interlaced as its track says: after a seek, decoding starts a frame
    /// early, so the first frame shown is deinterlaced with the one before it, as when read
    /// on in order.
    private var tracksInterlaced = false
    private var isInterlaced: Bool { tracksInterlaced || deinterlacer.sawInterlacedFrames }
    /// A stream its track calls progressive turned out interlaced (a broadcast recording going
    /// from a progressive advert to an interlaced programme): its pictures from there were made
    /// whole, which no plan said.
    package var turnsInterlaced: Bool { !tracksInterlaced && deinterlacer.sawInterlacedFrames }

    package init(path: String, streamIndex: Int, isStillImage: Bool = false, threading: DecoderThreading = .automatic) throws {
        reader = try StreamReader(path: path, streamIndex: streamIndex, threading: threading)
        self.isStillImage = isStillImage
        if !isStillImage, let parameters = reader.demuxer.stream(streamIndex)?.pointee.codecpar?.pointee {
            tracksInterlaced = FieldOrder.of(parameters, path: path, streamIndex: streamIndex).isInterlaced
        }
    }

    package func frame(at time: MediaTime) throws -> Frame? {
        if isStillImage {
            if current == nil, let picture = try reader.nextFrame() { current = (try Self.inSRGB(picture), .zero) }
            return current?.frame
        }
        // Past the last frame (video shorter than its range) the last frame holds: no
        // seeking back to decode it again.
        if let current, upcoming == nil, reader.finished, time >= current.time { return current.frame }
        if let current, time < current.time || time - current.time > seekThreshold {
            try restart(at: time)
        } else if let reached = upcoming?.time ?? current?.time, time - reached > jumpWorthSeeking,
                  let keyframe = reader.indexedKeyframe(atOrBefore: time), keyframe > reached {
            // A jump past a keyframe: decoding from it costs less than reading on.
            try restart(at: time)
        } else if current == nil, upcoming == nil {
            try restart(at: time)
        }
        // Frames that cannot be shown need not be decoded, but a deinterlacer needs each.
        reader.target = isInterlaced ? nil : time.pts(in: reader.timeBase)
        defer { reader.target = nil }
        while upcoming == nil || upcoming!.time <= time {
            if let upcoming { current = upcoming }
            guard let frame = try deinterlacer.nextFrame(from: reader) else {
                upcoming = nil
                break
            }
            upcoming = (frame, reader.time(of: frame))
            if current == nil, upcoming!.time > time { break }
        }
        // Before the first frame (a stream starting late): show its first frame.
        return current?.frame ?? upcoming?.frame
    }

    /// A photo in sRGB: converted from its embedded colour profile (every iPhone photo's
    /// is Display P3), else as decoded.
    private static func inSRGB(_ picture: Frame) throws -> Frame {
        guard case .convert(let profile) = ColorProfile.embedded(in: picture.pointer) else { return picture }
        let rgba = try Scaler().convert(picture, width: picture.width, height: picture.height, format: AV_PIX_FMT_RGBA,
                                        outputColor: ColorDescription(space: ColorDescription.of(picture).space, range: AVCOL_RANGE_JPEG))
        let (pixels, stride) = rgba.plane(0)
        profile.toSRGB(from: pixels, sourceStride: stride, into: pixels, stride: stride, width: rgba.width, height: rgba.height,
                       channels: 4, order: (red: 0, green: 1, blue: 2))
        rgba.pointer.pointee.pts = picture.pointer.pointee.pts
        return rgba
    }

    private func restart(at time: MediaTime) throws {
        try reader.seek(before: isInterlaced ? time - reader.nominalFrameDuration : time)
        current = nil
        upcoming = nil
        deinterlacer.reset()
    }
}

/// Makes the pictures of one stream whole as they are read in order: from the first frame
/// the decoder flags interlaced on (a camcorder's 1080i, DV), frames go through FFmpeg's
/// bwdif, a frame for each frame, as players show them, keeping their own timestamps; until
/// then they pass as they are. What draws frames and what makes previews of them share it.
package final class Deinterlacer {
    private var chain: FilterChain?
    private var flushed = false
    /// The times of the frames the chain holds, in order: its frames come out one for each
    /// and are given them back (bwdif counts in half frames).
    private var times: [Int64] = []
    /// Frames flagged interlaced were seen.
    package private(set) var sawInterlacedFrames = false

    package init() {}

    /// The next whole picture of `reader`; nil at its end.
    package func nextFrame(from reader: StreamReader) throws -> Frame? {
        while true {
            if let chain, let frame = try chain.next() {
                let time = times.isEmpty ? reader.pts(of: frame) : times.removeFirst()
                (frame.pointer.pointee.pts, frame.pointer.pointee.best_effort_timestamp) = (time, time)
                return frame
            }
            guard let frame = try reader.nextFrame() else {
                guard let chain, !flushed else { return nil }
                flushed = true
                try chain.push(nil) // the last frame waits for the one after it
                continue
            }
            if chain == nil {
                guard frame.pointer.pointee.interlaced_frame != 0 else { return frame }
                sawInterlacedFrames = true
                chain = try FilterChain(videoFilters: "bwdif=mode=send_frame:parity=auto:deint=interlaced", width: frame.width, height: frame.height,
                                        pixelFormat: AVPixelFormat(frame.pointer.pointee.format), threads: 1)
            }
            times.append(reader.pts(of: frame))
            try chain?.push(frame)
        }
    }

    /// Forgets the frames held: the reader seeked.
    package func reset() {
        (chain, flushed, times) = (nil, false, [])
    }
}
