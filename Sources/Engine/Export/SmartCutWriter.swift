import CMoonFFmpeg
import CMoonAVShim

/// Why a composition cannot be smart-cut; the export then re-encodes everything and says so.
struct SmartCutUnavailable: Error, CustomStringConvertible {
    let description: String
    /// The source is HEVC, so the fallback re-encode keeps HEVC (and HDR).
    var isHEVC = false
    init(_ description: String, isHEVC: Bool = false) { (self.description, self.isHEVC) = (description, isHEVC) }
}

/// One packet of a source's video stream, as the index of a cut sees it.
struct IndexedPacket {
    let pts: Int64
    let dts: Int64
    let isKeyframe: Bool
    /// Holds an IDR picture: the decoder may switch parameter sets here.
    let isIDR: Bool
}

/// What a smart cut writes for one segment of the video track, in source time: the frames
/// before the first whole GOP and after the last one are decoded and re-encoded, the GOPs
/// between are copied packet for packet.
struct SmartCutSegment {
    let source: SegmentSource
    let timeBase: AVRational
    /// The segment's start in source time; the frame shown there may start earlier.
    let sourceStart: Int64
    /// Where the segment starts in the output.
    let targetStart: MediaTime
    /// Where the segment ends in the output (the last frame lasts until then).
    let targetEnd: MediaTime
    let head: [Int64]
    let copied: [IndexedPacket]
    let tail: [Int64]

    /// The output time of a source frame (the frame shown at the start is moved to it).
    func target(of pts: Int64) -> MediaTime { targetStart + MediaTime(pts: Swift.max(pts - sourceStart, 0), timeBase: timeBase) }

    /// The output decode time of a copied packet: as far before its output time as in the
    /// source (the frame shown at the start moves with its decode time).
    func targetDecodeTime(pts: Int64, dts: Int64) -> MediaTime { target(of: pts) - MediaTime(pts: pts - dts, timeBase: timeBase) }
}

/// The `SmartCut` preset: frame-exact cuts of H.264 video that cost seconds. Every GOP
/// wholly inside a clip's range is copied bit for bit; only the frames before the first
/// copied keyframe and after the last copied GOP are re-encoded, with x264 set to the
/// source's profile, level, size, chroma format and colour tags. The re-encoded frames
/// use parameter sets of their own, with ids the source does not use, and both sets go
/// into the `avc1` sample entry, so one decoder plays the whole file and players that
/// want every parameter set up front (QuickTime, Safari) are served. Audio is rendered and
/// encoded as for any export, so it is cut sample-exact.
struct SmartCutWriter {
    let segments: [SmartCutSegment]
    let configuration: AVCConfiguration
    let parameters: UnsafePointer<AVCodecParameters>
    let outputTimeBase: AVRational
    private let sourceDemuxer: Demuxer // owns `parameters` and `sourceStream`
    private let sourceStream: UnsafeMutablePointer<AVStream>
    private let parameterSetID: Int
    /// How far decode times run ahead of presentation at the copied keyframes (B-frame
    /// delay), in the output time base: re-encoded frames are given the same lead, so
    /// decode times keep rising across each join.
    private let reorderDelay: Int64

    /// Plans the cut, or says why this composition cannot be smart-cut.
    init(composition: Composition, range: TimeRange, videoComposition: VideoComposition?, fileType: String) throws {
        guard fileType != "m4a" else { throw SmartCutUnavailable("an .m4a file holds audio only") }
        guard videoComposition == nil else { throw SmartCutUnavailable("a video composition redraws every frame") }
        let videoTracks = composition.tracks(withMediaType: .video).filter { $0.segments.contains { !$0.isEmpty } }
        guard videoTracks.count == 1, let track = videoTracks.first else {
            throw SmartCutUnavailable(videoTracks.isEmpty ? "the composition has no video to copy"
                                      : "its \(videoTracks.count) video tracks are composed into one picture")
        }
        let parts = track.segments.compactMap { $0.clipped(to: range) }
        var sources: [SegmentSource] = []
        for part in parts {
            guard let source = part.source else {
                throw SmartCutUnavailable("the video track is empty at \(part.targetRange.start.seconds) s")
            }
            guard !source.isStillImage else { throw SmartCutUnavailable("\"\(source.path)\" is a still image") }
            guard part.sourceRange.duration == part.targetRange.duration else {
                throw SmartCutUnavailable("\"\(source.path)\" plays at another speed (scaleTimeRange)")
            }
            sources.append(source)
        }
        guard let first = sources.first else { throw SmartCutUnavailable("the composition has no video to copy") }
        let demuxer = try Demuxer(path: first.path)
        guard let stream = demuxer.stream(first.streamIndex), let parameters = stream.pointee.codecpar else {
            throw EngineError("input \"\(first.path)\": stream #\(first.streamIndex) is missing")
        }
        let configuration = try SmartCutWriter.checkMatchable(parameters, path: first.path)
        for source in sources.dropFirst() where source.path != first.path || source.streamIndex != first.streamIndex {
            let other = try Demuxer(path: source.path)
            guard let otherParameters = other.stream(source.streamIndex)?.pointee.codecpar,
                  otherParameters.pointee.codec_id == parameters.pointee.codec_id,
                  otherParameters.pointee.width == parameters.pointee.width, otherParameters.pointee.height == parameters.pointee.height,
                  SmartCutWriter.extradata(otherParameters) == SmartCutWriter.extradata(parameters) else {
                throw SmartCutUnavailable("\"\(source.path)\" was encoded with other settings than \"\(first.path)\" (its parameter sets differ)")
            }
        }
        guard let id = configuration.freeParameterSetID else {
            throw SmartCutUnavailable("\"\(first.path)\" uses every parameter-set id, leaving none for the re-encoded frames")
        }
        self.sourceDemuxer = demuxer
        self.sourceStream = stream
        self.parameters = UnsafePointer(parameters)
        self.configuration = configuration
        self.parameterSetID = id
        outputTimeBase = stream.pointee.time_base
        segments = try zip(parts, sources).map { part, source in
            try SmartCutWriter.planSegment(source, sourceRange: part.sourceRange, targetStart: part.targetRange.start - range.start,
                                           lengthSize: configuration.lengthSize)
        }
        let outputTimeBase = self.outputTimeBase
        reorderDelay = segments.flatMap { segment in
            segment.copied.filter(\.isKeyframe).map { MediaTime(pts: $0.pts - $0.dts, timeBase: segment.timeBase).pts(in: outputTimeBase) }
        }.max() ?? 0
    }

    private static func extradata(_ parameters: UnsafePointer<AVCodecParameters>) -> [UInt8] {
        guard let data = parameters.pointee.extradata, parameters.pointee.extradata_size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(parameters.pointee.extradata_size)))
    }

    /// The source's avcC, once it is clear x264 can make frames its decoder accepts.
    private static func checkMatchable(_ parameters: UnsafePointer<AVCodecParameters>, path: String) throws -> AVCConfiguration {
        let codec = parameters.pointee.codec_id
        guard codec == AV_CODEC_ID_H264 else {
            let name = avcodec_get_name(codec).map { String(cString: $0) } ?? "unknown"
            throw SmartCutUnavailable("\"\(path)\" is \(name) video; SmartCut copies H.264", isHEVC: codec == AV_CODEC_ID_HEVC)
        }
        guard let configuration = AVCConfiguration(extradata(parameters)) else {
            throw SmartCutUnavailable("\"\(path)\" has no avcC parameter sets (not an MP4/QuickTime H.264 track)")
        }
        let format = AVPixelFormat(rawValue: parameters.pointee.format)
        let eightBit: Set<AVPixelFormat> = [AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUVJ422P,
                                            AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUVJ444P]
        guard eightBit.contains(format) else {
            let name = av_get_pix_fmt_name(format).map { String(cString: $0) } ?? "unknown"
            throw SmartCutUnavailable("\"\(path)\" is \(name); this x264 writes 8-bit video only")
        }
        let order = parameters.pointee.field_order
        guard order == AV_FIELD_PROGRESSIVE || order == AV_FIELD_UNKNOWN else {
            throw SmartCutUnavailable("\"\(path)\" is interlaced")
        }
        guard x264Profile(parameters.pointee.profile) != nil else {
            throw SmartCutUnavailable("\"\(path)\" uses H.264 profile \(parameters.pointee.profile), which x264 cannot match")
        }
        return configuration
    }

    /// x264's name for an H.264 profile it can write in 8-bit.
    private static func x264Profile(_ profile: Int32) -> String? {
        switch profile {
        case 66, 66 | 1 << 9: return "baseline" // baseline, constrained baseline
        case 77: return "main"
        case 100: return "high"
        case 122: return "high422"
        case 244: return "high444"
        default: return nil
        }
    }

    // MARK: Planning

    /// Indexes the packets of one clip's range and splits it into re-encoded and copied parts.
    private static func planSegment(_ source: SegmentSource, sourceRange: TimeRange, targetStart: MediaTime, lengthSize: Int) throws -> SmartCutSegment {
        let demuxer = try Demuxer(path: source.path)
        guard let stream = demuxer.stream(source.streamIndex) else { throw EngineError("input \"\(source.path)\": stream #\(source.streamIndex) is missing") }
        for index in 0..<demuxer.streamCount where index != source.streamIndex { demuxer.stream(index)?.pointee.discard = AVDISCARD_ALL }
        let timeBase = stream.pointee.time_base
        let start = sourceRange.start.pts(in: timeBase), end = sourceRange.end.pts(in: timeBase)
        let targetEnd = targetStart + sourceRange.duration
        try check(avformat_seek_file(demuxer.context, Int32(source.streamIndex), Int64.min, start, start, AVSEEK_FLAG_BACKWARD),
                  "seeking", context: "input \"\(source.path)\"")
        // Packets in decode order, from the keyframe before the cut to the first one at its end.
        var packets: [IndexedPacket] = []
        guard let packet = av_packet_alloc() else { throw EngineError("out of memory") }
        var maybePacket: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&maybePacket) }
        var stoppedAt: Int64? = nil // the keyframe at or after the end, if the file goes on
        while av_read_frame(demuxer.context, packet) >= 0 {
            defer { av_packet_unref(packet) }
            guard Int(packet.pointee.stream_index) == source.streamIndex, packet.pointee.pts != MOON_AV_NOPTS_VALUE else { continue }
            let isKeyframe = packet.pointee.flags & AV_PKT_FLAG_KEY != 0
            if isKeyframe, packet.pointee.pts >= end { stoppedAt = packet.pointee.pts; break }
            let dts = packet.pointee.dts == MOON_AV_NOPTS_VALUE ? packet.pointee.pts : packet.pointee.dts
            packets.append(IndexedPacket(pts: packet.pointee.pts, dts: dts, isKeyframe: isKeyframe,
                                         isIDR: isKeyframe && containsIDR(packet, lengthSize: lengthSize)))
        }
        let presented = packets.map(\.pts).sorted()
        // The frame shown at the cut is the last one at or before it.
        let shown = presented.last { $0 <= start } ?? presented.first { $0 < end }
        guard let shown else { throw EngineError("input \"\(source.path)\": no video frames between \(sourceRange.start.seconds) and \(sourceRange.end.seconds) s") }
        let frames = presented.filter { $0 == shown || ($0 > start && $0 < end) }
        func reencodeAll() -> SmartCutSegment {
            SmartCutSegment(source: source, timeBase: timeBase, sourceStart: start, targetStart: targetStart, targetEnd: targetEnd, head: frames, copied: [], tail: [])
        }
        // Open GOPs show frames that refer to the GOP before their keyframe: neither a copy
        // nor a decode can start at such a keyframe.
        if packets.indices.contains(where: { packets[$0].isKeyframe && opensOntoEarlierFrames(packets, at: $0) }) {
            throw SmartCutUnavailable("\"\(source.path)\" has open GOPs (frames shown before their keyframe refer to the GOP before it)")
        }
        // Copy from the first IDR inside the range…
        guard let copyStart = packets.indices.first(where: { packets[$0].isIDR && packets[$0].pts >= shown }) else { return reencodeAll() }
        // …to the last keyframe before the end; or to the end, when the last GOP read ends
        // exactly there or the file ends inside the range.
        let lastGOPIsWhole = stoppedAt == end || (stoppedAt == nil && (presented.last ?? end) < end)
        let copyEnd = lastGOPIsWhole ? packets.count : packets.indices.last { $0 > copyStart && packets[$0].isKeyframe }
        guard let copyEnd, copyEnd > copyStart else { return reencodeAll() }
        let copied = Array(packets[copyStart..<copyEnd])
        let copiedTimes = Set(copied.map(\.pts))
        let firstCopied = packets[copyStart].pts, lastCopied = copiedTimes.max() ?? firstCopied
        let tail = frames.filter { $0 > firstCopied && !copiedTimes.contains($0) }
        // Odd reordering could leave a frame between copied ones: re-encode all.
        guard copied.allSatisfy({ $0.pts >= firstCopied && $0.pts < end }), tail.allSatisfy({ $0 > lastCopied }) else { return reencodeAll() }
        return SmartCutSegment(source: source, timeBase: timeBase, sourceStart: start, targetStart: targetStart, targetEnd: targetEnd,
                               head: frames.filter { $0 < firstCopied }, copied: copied, tail: tail)
    }

    /// Whether a packet after the keyframe at `index`, before the next keyframe, shows
    /// earlier than it (an open GOP's leading pictures, which refer to the GOP before).
    private static func opensOntoEarlierFrames(_ packets: [IndexedPacket], at index: Int) -> Bool {
        let key = packets[index].pts
        for packet in packets[(index + 1)...] {
            if packet.isKeyframe { return false }
            if packet.pts < key { return true }
        }
        return false
    }

    private static func containsIDR(_ packet: UnsafeMutablePointer<AVPacket>, lengthSize: Int) -> Bool {
        guard let data = packet.pointee.data else { return false }
        let bytes = UnsafeBufferPointer(start: data, count: Int(packet.pointee.size))
        return H264.lengthPrefixedUnits(bytes, lengthSize: lengthSize)?.contains {
            !$0.isEmpty && bytes[$0.lowerBound] & 0x1F == H264.NALType.idrSlice.rawValue
        } ?? false
    }
}

// MARK: Writing

extension SmartCutWriter {
    func write(to path: String, fileType: String, preset: ExportPreset, audio audioPlan: AudioPlan?, duration: MediaTime,
               metadata: [String: String], fastStart: Bool, cancellation: CancellationFlag, isCancelled: @escaping () -> Bool,
               report: (ExportProgress) throws -> Void) throws {
        let muxer = try Muxer(path: path, fileType: fileType)
        let videoStream = try muxer.addStream(copying: parameters, timeBase: outputTimeBase)
        guard let stream = muxer.context.pointee.streams[Int(videoStream)] else { throw EngineError("out of memory") }
        let reencodes = segments.contains { !$0.head.isEmpty || !$0.tail.isEmpty }
        let sampleEntry = try (reencodes ? sampleEntry(preset) : configuration).bytes
        try check(moon_set_extradata(stream.pointee.codecpar, sampleEntry, Int32(sampleEntry.count)), "setting the parameter sets", context: "output")
        try check(moon_copy_display_matrix(stream, sourceStream), "copying the display matrix", context: "output")
        let audioEncoder = try audioPlan.map { try Encoder.audio(preset, format: $0.format, muxer: muxer) }
        try muxer.writeHeader(metadata: metadata, fastStart: fastStart)
        let pipeline = try RenderPipeline(video: nil, audio: audioPlan, audioBlock: audioEncoder?.frameSize ?? 1024, cancellation: cancellation)
        defer { pipeline.stop() }
        try withoutActuallyEscaping(report) { report in
            let output = SmartCutOutput(muxer: muxer, videoStream: videoStream, audio: audioPlan.flatMap { plan in audioEncoder.map { (plan, $0, pipeline) } },
                                        duration: duration, isCancelled: isCancelled, report: report)
            for segment in segments {
                let copyStart = segment.copied.first.map { segment.target(of: $0.pts) }
                try encode(segment.head, of: segment, endingAt: copyStart ?? segment.targetEnd, preset: preset, into: output)
                try copy(segment, into: output)
                try encode(segment.tail, of: segment, endingAt: segment.targetEnd, preset: preset, into: output)
            }
            try output.finish()
        }
    }

    /// The source's avcC with x264's parameter sets added under their own ids.
    private func sampleEntry(_ preset: ExportPreset) throws -> AVCConfiguration {
        let encoder = try matchedEncoder(preset)
        var context: UnsafeMutablePointer<AVCodecContext>? = encoder
        defer { avcodec_free_context(&context) }
        guard let data = encoder.pointee.extradata else { throw EngineError("x264 gave no parameter sets") }
        let units = H264.annexBUnits(Array(UnsafeBufferPointer(start: data, count: Int(encoder.pointee.extradata_size))))
        let sequence = units.filter { H264.type(of: $0) == H264.NALType.sequenceParameterSet.rawValue }
        let picture = units.filter { H264.type(of: $0) == H264.NALType.pictureParameterSet.rawValue }
        guard sequence.count == 1, picture.count == 1, H264.sequenceParameterSetID(sequence[0]) == parameterSetID else {
            throw EngineError("x264 gave unexpected parameter sets (\(sequence.count) SPS, \(picture.count) PPS)")
        }
        var entry = configuration
        entry.sequenceParameterSets += sequence
        entry.pictureParameterSets += picture
        return entry
    }

    /// An x264 encoder whose frames the source's decoder setup accepts: same size, chroma,
    /// profile, level and colour tags; no B-frames (their reordering delay would collide
    /// with the copied frames' decode times); one IDR, at the start.
    private func matchedEncoder(_ preset: ExportPreset) throws -> UnsafeMutablePointer<AVCodecContext> {
        guard let codec = avcodec_find_encoder_by_name("libx264") else {
            throw EngineError("this FFmpeg has no libx264 encoder; install one built with it (Debian: libavcodec59)")
        }
        guard let context = avcodec_alloc_context3(codec) else { throw EngineError("out of memory") }
        let source = parameters.pointee
        context.pointee.width = source.width
        context.pointee.height = source.height
        context.pointee.pix_fmt = AVPixelFormat(rawValue: source.format)
        context.pointee.time_base = outputTimeBase
        let rate = sourceStream.pointee.avg_frame_rate.isValid ? sourceStream.pointee.avg_frame_rate : sourceStream.pointee.r_frame_rate
        if rate.isValid { context.pointee.framerate = rate }
        context.pointee.sample_aspect_ratio = source.sample_aspect_ratio.isValid ? source.sample_aspect_ratio : AVRational(num: 1, den: 1)
        context.pointee.color_primaries = source.color_primaries
        context.pointee.color_trc = source.color_trc
        context.pointee.colorspace = source.color_space
        context.pointee.color_range = source.color_range
        context.pointee.chroma_sample_location = source.chroma_location
        context.pointee.level = source.level
        context.pointee.max_b_frames = 0
        context.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        av_dict_set(&options, "crf", "\(preset.crf)", 0)
        av_dict_set(&options, "preset", preset.speed, 0)
        av_dict_set(&options, "profile", SmartCutWriter.x264Profile(source.profile) ?? "high", 0)
        av_dict_set(&options, "x264-params", "sps-id=\(parameterSetID):keyint=infinite:scenecut=0:rc-lookahead=10", 0)
        let status = avcodec_open2(context, codec, &options)
        if status < 0 {
            var maybe: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&maybe)
            try check(status, "opening x264 with the source's settings", context: "output")
        }
        return context
    }

    /// Decodes `frames` (source times) and encodes them as one closed piece.
    private func encode(_ frames: [Int64], of segment: SmartCutSegment, endingAt end: MediaTime, preset: ExportPreset,
                        into output: SmartCutOutput) throws {
        guard let first = frames.first, let last = frames.last else { return }
        let targets = frames.map { segment.target(of: $0).pts(in: outputTimeBase) }
        var durations: [Int64: Int64] = [:]
        for (index, target) in targets.enumerated() {
            let next = index + 1 < targets.count ? targets[index + 1] : end.pts(in: outputTimeBase)
            durations[target] = Swift.max(next - target, 1)
        }
        var targetOf = Dictionary(uniqueKeysWithValues: zip(frames, targets))
        let reader = try StreamReader(path: segment.source.path, streamIndex: segment.source.streamIndex)
        try reader.seek(before: MediaTime(pts: first, timeBase: segment.timeBase))
        let encoder = try matchedEncoder(preset)
        var context: UnsafeMutablePointer<AVCodecContext>? = encoder
        defer { avcodec_free_context(&context) }
        let converted = try PacketConverter(lengthSize: configuration.lengthSize, reorderDelay: reorderDelay, durations: durations)
        while !targetOf.isEmpty, let frame = try reader.nextFrame() {
            try output.checkCancelled()
            let pts = reader.pts(of: frame)
            if pts > last { break }
            guard let target = targetOf.removeValue(forKey: pts) else { continue }
            frame.pointer.pointee.pts = target
            frame.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
            try check(avcodec_send_frame(encoder, frame.pointer), "encoding", context: "output")
            try drain(encoder, through: converted, into: output)
        }
        guard targetOf.isEmpty else {
            throw EngineError("input \"\(segment.source.path)\": \(targetOf.count) frames near \(MediaTime(pts: first, timeBase: segment.timeBase).seconds) s could not be decoded")
        }
        try check(avcodec_send_frame(encoder, nil), "encoding", context: "output")
        try drain(encoder, through: converted, into: output)
    }

    private func drain(_ encoder: UnsafeMutablePointer<AVCodecContext>, through converter: PacketConverter, into output: SmartCutOutput) throws {
        while true {
            let status = avcodec_receive_packet(encoder, converter.encoded)
            if status == MOON_AVERROR_EAGAIN || status == MOON_AVERROR_EOF { return }
            try check(status, "encoding", context: "output")
            try output.writeVideo(try converter.sampleFromEncoded(), timeBase: outputTimeBase)
        }
    }

    /// Copies a segment's whole GOPs, restamped to output time.
    private func copy(_ segment: SmartCutSegment, into output: SmartCutOutput) throws {
        guard let first = segment.copied.first else { return }
        let path = segment.source.path, streamIndex = segment.source.streamIndex
        let demuxer = try Demuxer(path: path)
        for index in 0..<demuxer.streamCount where index != streamIndex { demuxer.stream(index)?.pointee.discard = AVDISCARD_ALL }
        try check(avformat_seek_file(demuxer.context, Int32(streamIndex), Int64.min, first.pts, first.pts, AVSEEK_FLAG_BACKWARD),
                  "seeking", context: "input \"\(path)\"")
        guard let packet = av_packet_alloc() else { throw EngineError("out of memory") }
        var maybePacket: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&maybePacket) }
        var next = 0
        while next < segment.copied.count, av_read_frame(demuxer.context, packet) >= 0 {
            defer { av_packet_unref(packet) }
            guard Int(packet.pointee.stream_index) == streamIndex, packet.pointee.pts != MOON_AV_NOPTS_VALUE else { continue }
            if next == 0, packet.pointee.pts != first.pts { continue } // before the first copied keyframe
            guard packet.pointee.pts == segment.copied[next].pts else {
                throw EngineError("input \"\(path)\": its packets changed while it was being cut")
            }
            let dts = packet.pointee.dts == MOON_AV_NOPTS_VALUE ? packet.pointee.pts : packet.pointee.dts
            packet.pointee.dts = segment.targetDecodeTime(pts: packet.pointee.pts, dts: dts).pts(in: segment.timeBase)
            packet.pointee.pts = segment.target(of: packet.pointee.pts).pts(in: segment.timeBase)
            packet.pointee.pos = -1
            try output.writeVideo(packet, timeBase: segment.timeBase)
            next += 1
        }
        guard next == segment.copied.count else { throw EngineError("input \"\(path)\": ended while being copied") }
    }
}

/// Turns x264's Annex B packets into MP4 samples: length-prefixed NAL units, decode times
/// led by the copied stream's reordering delay, each frame lasting until the next.
private final class PacketConverter {
    let encoded: UnsafeMutablePointer<AVPacket>
    private let sample: UnsafeMutablePointer<AVPacket>
    private let lengthSize: Int
    private let reorderDelay: Int64
    private let durations: [Int64: Int64]

    init(lengthSize: Int, reorderDelay: Int64, durations: [Int64: Int64]) throws {
        guard let encoded = av_packet_alloc(), let sample = av_packet_alloc() else { throw EngineError("out of memory") }
        (self.encoded, self.sample) = (encoded, sample)
        (self.lengthSize, self.reorderDelay, self.durations) = (lengthSize, reorderDelay, durations)
    }

    deinit {
        var maybeEncoded: UnsafeMutablePointer<AVPacket>? = encoded, maybeSample: UnsafeMutablePointer<AVPacket>? = sample
        av_packet_free(&maybeEncoded)
        av_packet_free(&maybeSample)
    }

    func sampleFromEncoded() throws -> UnsafeMutablePointer<AVPacket> {
        defer { av_packet_unref(encoded) }
        guard let data = encoded.pointee.data else { throw EngineError("x264 gave an empty packet") }
        let units = H264.annexBUnits(Array(UnsafeBufferPointer(start: data, count: Int(encoded.pointee.size))))
        let bytes = H264.lengthPrefixed(units, lengthSize: lengthSize)
        av_packet_unref(sample)
        try check(av_new_packet(sample, Int32(bytes.count)), "allocating a packet")
        bytes.withUnsafeBufferPointer { sample.pointee.data.update(from: $0.baseAddress!, count: bytes.count) }
        sample.pointee.pts = encoded.pointee.pts
        sample.pointee.dts = encoded.pointee.pts - reorderDelay
        sample.pointee.duration = durations[encoded.pointee.pts] ?? 1
        if units.contains(where: { H264.type(of: $0) == H264.NALType.idrSlice.rawValue }) { sample.pointee.flags |= AV_PKT_FLAG_KEY }
        return sample
    }
}

/// The output of a smart cut: video packets in decode order, audio rendered and encoded
/// alongside up to the same time, progress by output time.
private final class SmartCutOutput {
    private let muxer: Muxer
    private let videoStream: Int32
    private let audio: (plan: AudioPlan, encoder: Encoder, pipeline: RenderPipeline)?
    private let duration: MediaTime
    private let isCancelled: () -> Bool
    private let report: (ExportProgress) throws -> Void
    private var lastDecodeTime: MediaTime?
    private var samplesWritten: Int64 = 0
    private var lastReported = 0.0

    init(muxer: Muxer, videoStream: Int32, audio: (AudioPlan, Encoder, RenderPipeline)?, duration: MediaTime,
         isCancelled: @escaping () -> Bool, report: @escaping (ExportProgress) throws -> Void) {
        (self.muxer, self.videoStream, self.duration, self.isCancelled, self.report) = (muxer, videoStream, duration, isCancelled, report)
        self.audio = audio.map { (plan: $0.0, encoder: $0.1, pipeline: $0.2) }
    }

    func checkCancelled() throws {
        if isCancelled() { throw EngineError("export cancelled") }
    }

    func writeVideo(_ packet: UnsafeMutablePointer<AVPacket>, timeBase: AVRational) throws {
        try checkCancelled()
        // Decode times must rise strictly across joins; a tick later is invisible.
        var decodeTime = MediaTime(pts: packet.pointee.dts, timeBase: timeBase)
        if let last = lastDecodeTime, decodeTime <= last {
            packet.pointee.dts = last.pts(in: timeBase) + 1
            decodeTime = MediaTime(pts: packet.pointee.dts, timeBase: timeBase)
        }
        lastDecodeTime = decodeTime
        try writeAudio(until: decodeTime)
        packet.pointee.stream_index = videoStream
        try muxer.write(packet, stream: videoStream, from: timeBase)
        let fraction = Swift.min(1, Swift.max(0, decodeTime.seconds / Swift.max(duration.seconds, 1e-9)))
        if fraction - lastReported >= 0.01 {
            lastReported = fraction
            try report(ExportProgress(fraction: fraction, framesWritten: 0, frameCount: 0, mediaSecondsWritten: fraction * duration.seconds))
        }
    }

    private func writeAudio(until time: MediaTime) throws {
        guard let audio else { return }
        let rate = audio.plan.format.sampleRate
        while samplesWritten < audio.plan.sampleCount, MediaTime(value: samplesWritten, timescale: rate) < time {
            try checkCancelled()
            guard let block = try audio.pipeline.nextAudioBlock() else { throw EngineError("audio ended early") }
            try audio.encoder.encode(try ExportSession.audioFrame(block, format: audio.plan.format, pts: samplesWritten))
            samplesWritten += Int64(block.first?.count ?? 0)
        }
    }

    func finish() throws {
        try writeAudio(until: MediaTime(value: Int64.max / 4, timescale: 1))
        try audio?.encoder.encode(nil)
        try muxer.finish()
        try report(ExportProgress(fraction: 1, framesWritten: 0, frameCount: 0, mediaSecondsWritten: duration.seconds))
    }
}
