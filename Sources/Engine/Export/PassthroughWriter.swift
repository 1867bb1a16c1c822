import CMoonAVShim
import CMoonFFmpeg
import MoonreelComposition
import MoonreelMedia
import MoonreelPlatform

/// The `Passthrough` preset: packets are copied, never decoded, so quality is untouched
/// and it runs at disk speed. Cuts can only start on a keyframe: the first segment starts
/// reading at the keyframe at or before its start, and the frames before the cut are hidden
/// by an edit list (as `ffmpeg -ss … -c copy` does), so players start at the cut. Later
/// segments begin at their keyframe, so each join may show up to one GOP of extra frames
/// before the requested start. Rotation stays as a display matrix. Every segment of a
/// track must share codec parameters; gaps cannot be copied.
struct PassthroughWriter {
    let composition: Composition
    let range: TimeRange

    /// Copies the range into `path`. `carriedTimecode`: the source timecode `metadata`'s
    /// `timecode` labels the range's start with, labelled again where the output starts
    /// earlier; that early start is said to `log`.
    func write(to path: String, container: OutputContainer, metadata: [String: String], carriedTimecode: Timecode? = nil, fastStart: Bool,
               log: DiagnosticLog? = nil, isCancelled: () -> Bool, report: (ExportProgress) throws -> Void) throws {
        let muxer = try Muxer(path: path, container: container)
        var cursors: [PacketCursor] = []
        for track in composition.tracks where track.segments.contains(where: { !$0.isEmpty }) {
            if !container.holdsVideo && track.mediaType != .audio { continue }
            let segments = track.segments.compactMap { $0.clipped(to: range) }
            if segments.contains(where: \.isEmpty) {
                throw EngineError("Passthrough cannot copy an empty stretch of track \(track.trackID); use a re-encoding preset", kind: .unsupported)
            }
            cursors.append(try PacketCursor(segments: segments, muxer: muxer, rangeStart: range.start))
        }
        guard !cursors.isEmpty else { throw EngineError("the composition has no media to copy") }
        var metadata = metadata
        if !container.holdsEditLists, let video = cursors.first(where: { $0.isVideo && $0.lead > .zero }), let cut = video.firstSourceStart, let source = video.firstSource {
            // Without an edit list the frames from the keyframe to the cut are shown.
            log?.report(Diagnostic(.encodingChanged, .warning, "Passthrough into .\(container.rawValue) starts \(shortSeconds(video.lead)) s early, at the keyframe before the cut (\(shortSeconds(cut - video.lead)) s into \(Paths.name(of: source).quotedForMessage(limit: 60)), not \(shortSeconds(cut)) s): \(container == .webm ? "WebM" : "Matroska") holds no edit list to hide the frames before a cut",
                                   remedy: "write .mp4 or .mov, or export with SmartCut to cut on the frame"))
            if let carriedTimecode, metadata["timecode"] != nil { metadata["timecode"] = carriedTimecode.label(at: cut - video.lead) }
        }
        try muxer.writeHeader(metadata: metadata, fastStart: fastStart)
        var lastReported = 0.0
        // Merge the tracks by output time so the muxer's interleaving buffer stays small.
        while let cursor = cursors.filter({ !$0.isFinished }).min(by: { $0.nextTime < $1.nextTime }) {
            if isCancelled() { throw EngineError("export cancelled", kind: .cancelled) }
            try cursor.copyNextPacket()
            let fraction = min(1, max(0, cursor.nextTime.seconds / max(range.duration.seconds, 1e-9)))
            if fraction - lastReported >= 0.01 {
                lastReported = fraction
                try report(ExportProgress(fraction: fraction, framesWritten: 0, frameCount: 0,
                                          mediaSecondsWritten: fraction * range.duration.seconds))
            }
        }
        try muxer.finish()
        try report(ExportProgress(fraction: 1, framesWritten: 0, frameCount: 0, mediaSecondsWritten: range.duration.seconds))
    }
}

extension TrackSegment {
    /// The part of this segment inside `range`, in the same composition time.
    func clipped(to range: TimeRange) -> TrackSegment? {
        guard let overlap = targetRange.intersection(range) else { return nil }
        var part = self
        part.targetRange = overlap
        if source != nil {
            part.sourceRange = TimeRange(from: sourceTime(at: overlap.start), to: sourceTime(at: overlap.end))
        }
        return part
    }
}

/// Reads the packets of one composition track's segments in order, restamped to output time.
final class PacketCursor {
    private let segments: [TrackSegment]
    private let muxer: Muxer
    private let outputStream: Int32
    private let timeBase: AVRational
    private let rangeStart: MediaTime
    private var segmentIndex = -1
    private var demuxer: Demuxer?
    private var streamIndex = 0
    private var offset: Int64 = 0          // added to source timestamps (stream time base)
    private var endPts: Int64 = 0
    private var lastDts = Int64.min        // in the output stream's time base
    private let packet: UnsafeMutablePointer<AVPacket>
    private var hasPacket = false
    /// `packet` holds the keyframe the segment's seek found, to be copied first.
    private var holdsKeyframe = false
    private(set) var isFinished = false
    private(set) var nextTime = MediaTime.zero
    /// Whether the track is video.
    let isVideo: Bool
    /// Where the first segment starts in its source.
    var firstSourceStart: MediaTime? { segments.first?.sourceRange.start }
    /// The first segment's file.
    var firstSource: String? { segments.first?.source?.path }
    /// How far before the first segment's start the first packet lies (video: the keyframe a
    /// cut starts from, which only an edit list hides).
    private(set) var lead = MediaTime.zero

    init(segments: [TrackSegment], muxer: Muxer, rangeStart: MediaTime) throws {
        self.segments = segments
        self.muxer = muxer
        self.rangeStart = rangeStart
        guard let packet = av_packet_alloc() else { throw EngineError("out of memory", kind: .limit) }
        self.packet = packet
        guard let first = segments.first?.source else { throw EngineError("nothing to copy") }
        let probe = try Demuxer(path: first.path)
        guard let stream = probe.stream(first.streamIndex), let parameters = stream.pointee.codecpar else {
            throw EngineError("input \"\(first.path)\": stream #\(first.streamIndex) is missing", kind: .notFound, subject: first.path)
        }
        timeBase = stream.pointee.time_base
        isVideo = parameters.pointee.codec_type == AVMEDIA_TYPE_VIDEO
        outputStream = try muxer.addStream(copying: parameters, timeBase: timeBase, frameRate: stream.pointee.avg_frame_rate)
        if let output = muxer.context.pointee.streams[Int(outputStream)] {
            try check(moon_copy_stream_side_data(output, stream), "copying the rotation and HDR metadata", context: "output")
        }
        for segment in segments.dropFirst() {
            guard let source = segment.source else { continue }
            let other = try Demuxer(path: source.path)
            guard let otherParameters = other.stream(source.streamIndex)?.pointee.codecpar,
                  otherParameters.pointee.codec_id == parameters.pointee.codec_id,
                  otherParameters.pointee.width == parameters.pointee.width,
                  otherParameters.pointee.height == parameters.pointee.height,
                  otherParameters.pointee.sample_rate == parameters.pointee.sample_rate else {
                throw EngineError("Passthrough needs every clip of a track to share codec and size; \"\(source.path)\" differs from \"\(first.path)\"; use a re-encoding preset", kind: .unsupported, subject: source.path)
            }
        }
        try advance()
        if hasPacket, packet.pointee.pts != MOON_AV_NOPTS_VALUE, let start = firstSourceStart {
            lead = MediaTime.max(.zero, start - MediaTime(pts: packet.pointee.pts, timeBase: timeBase))
        }
    }

    deinit {
        var maybe: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&maybe)
    }

    func copyNextPacket() throws {
        guard hasPacket else { return }
        packet.pointee.stream_index = outputStream
        packet.pointee.pts = Demuxer.shifted(packet.pointee.pts, by: offset)
        packet.pointee.dts = Demuxer.shifted(packet.pointee.dts, by: offset)
        // In the output's time base, which may count coarser (an MP4's audio counts samples:
        // two MPEG packets a tick apart at 90 kHz can fall on one).
        let outputTimeBase = muxer.context.pointee.streams[Int(outputStream)]?.pointee.time_base ?? timeBase
        av_packet_rescale_ts(packet, timeBase, outputTimeBase)
        if packet.pointee.dts != MOON_AV_NOPTS_VALUE {
            // Joins may step back in decode time (B-frame delay); keep it strictly rising.
            if packet.pointee.dts <= lastDts {
                packet.pointee.dts = Demuxer.shifted(lastDts, by: 1)
                if packet.pointee.pts != MOON_AV_NOPTS_VALUE, packet.pointee.pts < packet.pointee.dts { packet.pointee.pts = packet.pointee.dts }
            }
            lastDts = packet.pointee.dts
        }
        packet.pointee.pos = -1
        _ = try muxer.write(packet, stream: outputStream, from: outputTimeBase) // no size limit: always written
        hasPacket = false
        try readPacket()
    }

    private func advance() throws {
        segmentIndex += 1
        guard segmentIndex < segments.count, let source = segments[segmentIndex].source else {
            isFinished = true
            return
        }
        let segment = segments[segmentIndex]
        let demuxer = try Demuxer(path: source.path)
        for index in 0..<demuxer.streamCount where index != source.streamIndex {
            demuxer.stream(index)?.pointee.discard = AVDISCARD_ALL
        }
        streamIndex = source.streamIndex
        let start = segment.sourceRange.start.pts(in: timeBase)
        endPts = segment.sourceRange.end.pts(in: timeBase)
        // Audio decoders need the packets before the first sample they output (AAC's
        // priming packet, its overlapped transform). The first segment copies them too,
        // before the cut, where the edit list the muxer writes hides them, as the source's
        // own edit list did; from the stream's start it reads from the very first packet.
        let stream = demuxer.stream(streamIndex)
        let isAudio = stream?.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO
        let firstPts = demuxer.startTime(ofStream: streamIndex)?.pts(in: timeBase) ?? 0
        if !(isAudio && segmentIndex == 0 && start <= firstPts) {
            let preroll = isAudio && segmentIndex == 0 ? MediaTime(value: 1, timescale: 10).pts(in: timeBase) : 0
            holdsKeyframe = false
            holdsKeyframe = try demuxer.seekToKeyframe(stream: streamIndex, atOrBefore: start - preroll, holdingIn: packet, context: "input \"\(source.path)\"")
        }
        self.demuxer = demuxer
        let target = (segment.targetRange.start - rangeStart).pts(in: timeBase)
        offset = target - start
        try readPacket()
        if segmentIndex > 0, hasPacket, packet.pointee.pts != MOON_AV_NOPTS_VALUE, packet.pointee.pts < start {
            // Later segments start at their keyframe, placed at the segment's target start.
            offset = target - packet.pointee.pts
        }
    }

    private func readPacket() throws {
        while let demuxer {
            let status = holdsKeyframe ? 0 : demuxer.read(into: packet)
            holdsKeyframe = false
            if status < 0 {
                self.demuxer = nil
                break
            }
            guard Int(packet.pointee.stream_index) == streamIndex else {
                av_packet_unref(packet)
                continue
            }
            if packet.pointee.pts != MOON_AV_NOPTS_VALUE, packet.pointee.pts >= endPts {
                av_packet_unref(packet)
                self.demuxer = nil
                break
            }
            hasPacket = true
            let pts = packet.pointee.pts != MOON_AV_NOPTS_VALUE ? packet.pointee.pts : packet.pointee.dts
            nextTime = MediaTime(pts: pts + offset, timeBase: timeBase)
            return
        }
        try advance()
    }
}
