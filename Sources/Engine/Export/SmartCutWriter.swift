import CMoonAVShim
import CMoonFFmpeg
import MoonreelComposition
import MoonreelMedia
import MoonreelPlatform
import MoonreelRender

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
    /// Holds a picture decoding can start at with other parameter sets (IDR; HEVC: IRAP).
    let startsRandomAccess: Bool
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
    /// Decode time of the keyframe decoding starts at for the head.
    let headDecodeStart: Int64
    let copied: [IndexedPacket]
    let tail: [Int64]
    let tailDecodeStart: Int64
    /// Parameter sets found inside the samples read (each once).
    let inBandParameterSets: [[UInt8]]

    /// The output time of a source frame (the frame shown at the start is moved to it).
    func target(of pts: Int64) -> MediaTime { targetStart + MediaTime(pts: Swift.max(pts - sourceStart, 0), timeBase: timeBase) }

    /// The output decode time of a copied packet: as far before its output time as in the
    /// source (the frame shown at the start moves with its decode time).
    func targetDecodeTime(pts: Int64, dts: Int64) -> MediaTime { target(of: pts) - MediaTime(pts: pts - dts, timeBase: timeBase) }
}

/// The `SmartCut` preset: frame-exact cuts of H.264 and HEVC video that cost seconds.
/// Every GOP wholly inside a clip's range is copied bit for bit; only the frames before the
/// first copied keyframe and after the last copied GOP are re-encoded, by x264 or x265 set
/// to the source's profile, size, chroma format, bit depth and colour tags. The re-encoded
/// frames use parameter sets of their own, with ids the source does not use, and both sets
/// go into the sample entry (`avc1`, `hvc1`), so one decoder plays the whole file and
/// players that want every parameter set up front (QuickTime, Safari) are served. Audio is
/// rendered and encoded as for any export, so it is cut sample-exact.
struct SmartCutWriter {
    let segments: [SmartCutSegment]
    /// With parameter-set ids free in the sample entry and in every sample read.
    let codec: SmartCutCodec
    let parameters: UnsafePointer<AVCodecParameters>
    let outputTimeBase: AVRational
    /// HDR10's metadata of PQ sources, which the re-encoded frames and the output stream state
    /// as the copied frames do (a source may state it in its first frame's SEI only).
    private let hdrMetadata: HDRStaticMetadata?
    private let sourceDemuxer: Demuxer // owns `parameters` and `sourceStream`
    private let sourceStream: UnsafeMutablePointer<AVStream>
    /// How far decode times run ahead of presentation at the copied keyframes (B-frame
    /// delay), in the output time base: re-encoded frames are given the same lead, so
    /// decode times keep rising across each join.
    private let reorderDelay: Int64
    /// Smart rendering: the pictures a video composition draws, which the encoded frames are
    /// composed from (nil: a plain cut, whose encoded frames are the source's, decoded).
    private let pictures: VideoPlan?
    /// The composition time output time zero shows.
    private let compositionStart: MediaTime
    /// Turns a composed (upright) picture back to the source's stored orientation: the output
    /// keeps the source's rotation tag, as its copied frames need. nil: the source is upright.
    private let storedOrientation: QuarterTurn?

    /// How many frames are copied as they are (the rest are encoded again).
    var copiedFrameCount: Int { segments.reduce(0) { $0 + $1.copied.count } }

    /// What the cut does, for the user: "copies 60 frames (2 GOPs) and re-encodes 84 around the cuts".
    var summary: String {
        let copied = copiedFrameCount, gops = segments.reduce(0) { $0 + $1.copied.filter(\.isKeyframe).count }
        let encoded = segments.reduce(0) { $0 + $1.head.count + $1.tail.count }
        let which = pictures == nil ? "around the cuts" : "that the video composition draws on or that lie in GOPs it touches"
        return "copies \(copied) frame\(copied == 1 ? "" : "s") (\(gops) GOP\(gops == 1 ? "" : "s")) and re-encodes \(encoded) \(which)"
    }

    /// Plans the cut, or says why this composition cannot be smart-cut. With `pictures` (smart
    /// rendering), GOPs are copied only where those pictures show the source untouched, and
    /// every other frame is composed from them and encoded.
    init(composition: Composition, range: TimeRange, container: OutputContainer, rendering pictures: VideoPlan? = nil) throws {
        try SmartCutWriter.checkCopyable(into: container)
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
            throw EngineError("input \"\(first.path)\": stream #\(first.streamIndex) is missing", kind: .notFound, subject: first.path)
        }
        let pictures = try pictures.map { try SmartCutWriter.matched($0, sources: sources, stream: stream) }
        let format = AVPixelFormat(rawValue: parameters.pointee.format)
        let untouched = pictures.map { pictures in
            { (source: SegmentSource, time: MediaTime) in pictures.showsUntouched(source, at: time, pixelFormat: format) }
        }
        let sampleEntryCodec = try SmartCutCodec(parameters, path: first.path)
        for source in sources.dropFirst() where source.path != first.path || source.streamIndex != first.streamIndex {
            let other = try Demuxer(path: source.path)
            guard let otherParameters = other.stream(source.streamIndex)?.pointee.codecpar,
                  otherParameters.pointee.codec_id == parameters.pointee.codec_id,
                  otherParameters.pointee.width == parameters.pointee.width, otherParameters.pointee.height == parameters.pointee.height,
                  SmartCutWriter.extradata(otherParameters) == SmartCutWriter.extradata(parameters) else {
                throw SmartCutUnavailable("\"\(source.path)\" was encoded with other settings than \"\(first.path)\" (its parameter sets differ)")
            }
        }
        self.sourceDemuxer = demuxer
        self.sourceStream = stream
        let pq = sources.filter { $0.dynamicRange == .pq }
        hdrMetadata = pq.isEmpty ? nil : HDRStaticMetadata.combined(pq.map(\.hdrMetadata)).metadata
        self.parameters = UnsafePointer(parameters)
        outputTimeBase = stream.pointee.time_base
        (self.pictures, compositionStart) = (pictures, range.start)
        storedOrientation = try pictures.flatMap { pictures in try SmartCutWriter.storedOrientation(of: first, pictures: pictures) }
        do {
            segments = try zip(parts, sources).flatMap { part, source in
                let targetStart = part.targetRange.start - range.start
                guard let untouched else {
                    return [try SmartCutWriter.planSegment(source, sourceRange: part.sourceRange, targetStart: targetStart, codec: sampleEntryCodec)]
                }
                return try SmartCutWriter.planSegments(source, sourceRange: part.sourceRange, targetStart: targetStart, codec: sampleEntryCodec) {
                    untouched(source, part.targetRange.start + $0)
                }
            }
            if pictures != nil, !segments.contains(where: { !$0.copied.isEmpty }) {
                throw SmartCutUnavailable("the video composition draws on every GOP (or no GOP lies whole inside a stretch it leaves alone)")
            }
            let inBand = Array(Set(segments.flatMap(\.inBandParameterSets))).map { $0[...] }
            codec = try sampleEntryCodec.avoiding(inBand: inBand, path: first.path)
        } catch var unavailable as SmartCutUnavailable {
            if case .hevc = sampleEntryCodec { unavailable.isHEVC = true }
            throw unavailable
        }
        let outputTimeBase = self.outputTimeBase
        reorderDelay = segments.flatMap { segment in
            segment.copied.filter(\.isKeyframe).map { MediaTime(pts: $0.pts - $0.dts, timeBase: segment.timeBase).pts(in: outputTimeBase) }
        }.max() ?? 0
    }

    /// `pictures` composed in the source's colour matrix (the frames copied are in it), or why
    /// smart rendering cannot copy any frame: the output must have the source's upright size,
    /// frame rate, dynamic range and pixel format, and every clip the same rotation.
    private static func matched(_ pictures: VideoPlan, sources: [SegmentSource], stream: UnsafeMutablePointer<AVStream>) throws -> VideoPlan {
        guard let parameters = stream.pointee.codecpar?.pointee, let first = sources.first else {
            throw SmartCutUnavailable("the source has no codec parameters")
        }
        if let other = sources.first(where: { $0.preferredTransform != first.preferredTransform }) {
            throw SmartCutUnavailable("\"\(other.path)\" is turned otherwise than \"\(first.path)\" (their rotation tags differ)")
        }
        let upright = first.preferredTransform.apply(Rect(x: 0, y: 0, width: Double(parameters.width), height: Double(parameters.height)))
        guard Double(pictures.outputWidth) == upright.width, Double(pictures.outputHeight) == upright.height else {
            throw SmartCutUnavailable("the output is \(pictures.outputWidth)×\(pictures.outputHeight), the source \(Int(upright.width))×\(Int(upright.height))")
        }
        let rate = stream.pointee.avg_frame_rate.isValid ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
        let framesPerDuration = rate.isValid ? pictures.frameDuration.seconds * Double(rate.num) / Double(rate.den) : 0
        guard abs(framesPerDuration - 1) < 0.01 else {
            let fps = rate.isValid ? "\(((Double(rate.num) / Double(rate.den)) * 1000).rounded() / 1000)" : "an unknown"
            throw SmartCutUnavailable("frameDuration (\(pictures.frameDuration.seconds) s) is not the source's frame rate (\(fps) fps)")
        }
        let colors = ColorDescription.of(parameters), format = AVPixelFormat(rawValue: parameters.format)
        guard colors.dynamicRange == pictures.outputColor.dynamicRange else {
            throw SmartCutUnavailable("the export turns the source's \(colors.dynamicRange.rawValue.uppercased()) into \(pictures.outputColor.dynamicRange.rawValue.uppercased())")
        }
        guard format == colors.pixelFormat, colors.range == AVCOL_RANGE_MPEG, (pictures.encoderFormat ?? format) == format else {
            let name = av_get_pix_fmt_name(format).map { String(cString: $0) } ?? "an unknown format"
            throw SmartCutUnavailable("the source's pixels (\(name), \(colors.range == AVCOL_RANGE_JPEG ? "full" : "limited") range) are converted for the output (\(pictures.outputColor.dynamicRange.isHDR ? "10-bit" : "8-bit") 4:2:0, limited range)")
        }
        var matched = pictures
        matched.outputColor = colors
        return matched
    }

    /// The quarter turn from the upright output back to how `source` stores its pictures.
    private static func storedOrientation(of source: SegmentSource, pictures: VideoPlan) throws -> QuarterTurn? {
        guard !source.preferredTransform.isIdentity else { return nil }
        guard let inverse = source.preferredTransform.inverted(),
              let turn = QuarterTurn(inverse, width: pictures.outputWidth, height: pictures.outputHeight) else {
            throw SmartCutUnavailable("\"\(source.path)\" has a rotation tag that is not a quarter turn")
        }
        return turn
    }

    /// Refuses a container that cannot hold copied H.264 or HEVC.
    static func checkCopyable(into container: OutputContainer) throws {
        guard [.mov, .mp4, .m4v, .mkv].contains(container) else {
            throw SmartCutUnavailable("\(container.noun) cannot hold copied H.264 or HEVC (mov, mp4, m4v and mkv can)")
        }
    }

    static func extradata(_ parameters: UnsafePointer<AVCodecParameters>) -> [UInt8] {
        guard let data = parameters.pointee.extradata, parameters.pointee.extradata_size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(parameters.pointee.extradata_size)))
    }

    // MARK: Planning

    /// The packets of a clip's range, with the range moved back to the frame shown at its start.
    private struct IndexedRange {
        let timeBase: AVRational
        /// The range in source time, starting at the frame shown at the cut (or the first after it).
        let start: Int64, end: Int64
        /// Decode order, from the keyframe decoding starts at to the first keyframe at the end.
        let packets: [IndexedPacket]
        /// The leading pictures of the keyframe at the end that show before it (an open GOP).
        let leading: [IndexedPacket]
        /// The keyframe the index stopped at, nil when the file ended first.
        let stoppedAt: Int64?
        let inBand: Set<[UInt8]>
        /// The frame shown at the start.
        let shown: Int64
        /// Presentation times of the frames shown in the range, in order.
        var frames: [Int64] { (packets + leading).map(\.pts).filter { $0 == shown || ($0 > start && $0 < end) }.sorted() }
    }

    /// Splits a clip's range where `untouched` (given an output time from the clip's start)
    /// holds for a stretch of frames that spans whole GOPs: those are copied as a smart cut
    /// copies them, every other frame is encoded. A segment each stretch.
    private static func planSegments(_ source: SegmentSource, sourceRange: TimeRange, targetStart: MediaTime, codec: SmartCutCodec,
                                     untouched: (MediaTime) -> Bool) throws -> [SmartCutSegment] {
        let whole = try indexed(source, sourceRange: sourceRange, codec: codec)
        let timeBase = whole.timeBase, frames = whole.frames
        let randomAccess = whole.packets.filter(\.startsRandomAccess).map(\.pts), keyframes = whole.packets.filter(\.isKeyframe).map(\.pts)
        let isUntouched = frames.map { untouched(MediaTime(pts: Swift.max($0 - whole.start, 0), timeBase: timeBase)) }
        // Copy windows [first random-access keyframe of a stretch, last keyframe at its end).
        var windows: [Range<Int64>] = []
        var index = 0
        while index < frames.count {
            guard isUntouched[index] else { index += 1; continue }
            let stretchStart = frames[index]
            while index < frames.count, isUntouched[index] { index += 1 }
            let stretchEnd = index < frames.count ? frames[index] : whole.end
            if let first = randomAccess.first(where: { $0 >= stretchStart }),
               let last = stretchEnd == whole.end ? whole.end : keyframes.last(where: { $0 <= stretchEnd }), last > first {
                windows.append(first..<last)
            }
        }
        var segments: [SmartCutSegment] = [], cursor = whole.start
        func add(_ stretch: Range<Int64>, copying: Bool) throws {
            guard !stretch.isEmpty else { return }
            let range = TimeRange(start: MediaTime(pts: stretch.lowerBound, timeBase: timeBase),
                                  duration: MediaTime(pts: stretch.upperBound - stretch.lowerBound, timeBase: timeBase))
            segments.append(try planSegment(source, sourceRange: range, targetStart: targetStart + MediaTime(pts: stretch.lowerBound - whole.start, timeBase: timeBase),
                                            codec: codec, copying: copying))
        }
        for window in windows {
            try add(cursor..<window.lowerBound, copying: false)
            try add(window, copying: true)
            cursor = window.upperBound
        }
        try add(cursor..<whole.end, copying: false)
        return segments
    }

    /// Indexes the packets of one clip's range and splits it into re-encoded and copied parts
    /// (only re-encoded ones without `copying`).
    private static func planSegment(_ source: SegmentSource, sourceRange: TimeRange, targetStart: MediaTime, codec: SmartCutCodec,
                                    copying: Bool = true) throws -> SmartCutSegment {
        let indexed = try indexed(source, sourceRange: sourceRange, codec: codec)
        let (start, end, packets, shown) = (indexed.start, indexed.end, indexed.packets, indexed.shown)
        let presented = (packets + indexed.leading).map(\.pts).sorted()
        guard let decodeStart = packets.first?.dts else {
            throw EngineError("input \"\(source.path)\": no video frames between \(sourceRange.start.seconds) and \(sourceRange.end.seconds) s", kind: .decode, subject: source.path)
        }
        let frames = indexed.frames
        func segment(head: [Int64], copied: [IndexedPacket] = [], tail: [Int64] = [], tailDecodeStart: Int64 = 0) -> SmartCutSegment {
            SmartCutSegment(source: source, timeBase: indexed.timeBase, sourceStart: start, targetStart: targetStart,
                            targetEnd: targetStart + sourceRange.duration, head: head, headDecodeStart: decodeStart, copied: copied,
                            tail: tail, tailDecodeStart: tailDecodeStart, inBandParameterSets: Array(indexed.inBand))
        }
        guard copying else { return segment(head: frames) }
        // Copy from the first random-access picture inside the range (leaving out its
        // leading pictures, which refer to the GOP before and are re-encoded instead)…
        guard let copyStart = packets.indices.first(where: { packets[$0].startsRandomAccess && packets[$0].pts >= shown }) else {
            return segment(head: frames)
        }
        // …to the last keyframe before the end; or to the end, when the last GOP read ends
        // exactly there or the file ends inside the range.
        let lastGOPIsWhole = indexed.stoppedAt == end || (indexed.stoppedAt == nil && (presented.last ?? end) < end)
        let copyEnd = lastGOPIsWhole ? packets.count : packets.indices.last { $0 > copyStart && packets[$0].isKeyframe }
        guard let copyEnd, copyEnd > copyStart else { return segment(head: frames) }
        let firstCopied = packets[copyStart].pts
        let copied = packets[copyStart..<copyEnd].filter { $0.pts >= firstCopied }
        let copiedTimes = Set(copied.map(\.pts))
        let lastCopied = copiedTimes.max() ?? firstCopied
        // The frames after the copy, with the leading pictures of the keyframe that ends it
        // (never copied: they refer to that keyframe): decoded from the last copied GOP's
        // keyframe, where their references are.
        let tail = frames.filter { $0 > firstCopied && !copiedTimes.contains($0) }
        // Odd reordering could leave a frame between copied ones: re-encode all.
        guard copied.allSatisfy({ $0.pts < end }), tail.allSatisfy({ $0 > lastCopied }),
              let lastCopiedGOP = packets[copyStart..<copyEnd].last(where: \.isKeyframe) else { return segment(head: frames) }
        return segment(head: frames.filter { $0 < firstCopied }, copied: copied, tail: tail, tailDecodeStart: lastCopiedGOP.dts)
    }

    /// The packets of a clip's range (see `IndexedRange`).
    private static func indexed(_ source: SegmentSource, sourceRange: TimeRange, codec: SmartCutCodec) throws -> IndexedRange {
        let demuxer = try Demuxer(path: source.path)
        guard let stream = demuxer.stream(source.streamIndex) else { throw EngineError("input \"\(source.path)\": stream #\(source.streamIndex) is missing", kind: .notFound, subject: source.path) }
        for index in 0..<demuxer.streamCount where index != source.streamIndex { demuxer.stream(index)?.pointee.discard = AVDISCARD_ALL }
        let timeBase = stream.pointee.time_base
        var start = sourceRange.start.pts(in: timeBase), end = sourceRange.end.pts(in: timeBase)
        var packets: [IndexedPacket] = [], leading: [IndexedPacket] = [], stoppedAt: Int64? = nil, inBand: Set<[UInt8]> = []
        var shown: Int64?
        // A cut between two frames is moved back to the frame shown at it, as every other
        // export shows it: the frames stay on their grid (a first frame 1/60 s long was a
        // frame too many). The range is indexed again from there, once.
        for _ in 0..<2 {
            // Packets in decode order, from a keyframe that shows at or before the cut (a
            // keyframe's leading pictures, shown before it, are decoded only from the GOP
            // before: go back a GOP while the first keyframe shows later than the cut) to
            // the first keyframe at the end, with that keyframe's own leading pictures
            // when they show before the end (an open GOP).
            var seekTarget = start
            for _ in 0..<8 {
                (packets, leading, stoppedAt, inBand) = try index(demuxer, stream: source.streamIndex, from: seekTarget, to: end, codec: codec)
                guard let first = packets.first, first.pts > start, first.dts - 1 < seekTarget else { break }
                seekTarget = first.dts - 1
            }
            let presented = (packets + leading).map(\.pts).sorted()
            // The frame shown at the cut is the last one at or before it.
            shown = presented.last { $0 <= start } ?? presented.first { $0 < end }
            guard let moved = shown, moved < start else { break }
            (start, end) = (moved, moved + (end - start))
        }
        guard let shown else {
            throw EngineError("input \"\(source.path)\": no video frames between \(sourceRange.start.seconds) and \(sourceRange.end.seconds) s", kind: .decode, subject: source.path)
        }
        return IndexedRange(timeBase: timeBase, start: start, end: end, packets: packets, leading: leading, stoppedAt: stoppedAt, inBand: inBand, shown: shown)
    }

    /// The packets of one stream in decode order from the keyframe the demuxer finds for
    /// `target` up to the first keyframe showing at or after `end` (returned apart), the
    /// leading pictures of that keyframe that show before `end` (they follow it in decode
    /// order: an open GOP), and the parameter sets found inside the samples.
    private static func index(_ demuxer: Demuxer, stream: Int, from target: Int64, to end: Int64, codec: SmartCutCodec) throws
        -> (packets: [IndexedPacket], leading: [IndexedPacket], stoppedAt: Int64?, inBand: Set<[UInt8]>) {
        try check(demuxer.seek(stream: stream, target: target, latest: target, flags: AVSEEK_FLAG_BACKWARD),
                  "seeking", context: "input \"\(demuxer.path)\"")
        guard let packet = av_packet_alloc() else { throw EngineError("out of memory", kind: .limit) }
        var maybePacket: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&maybePacket) }
        var packets: [IndexedPacket] = [], leading: [IndexedPacket] = [], inBand: Set<[UInt8]> = []
        var stoppedAt: Int64?
        while demuxer.read(into: packet) >= 0 {
            defer { av_packet_unref(packet) }
            guard Int(packet.pointee.stream_index) == stream, packet.pointee.pts != MOON_AV_NOPTS_VALUE else { continue }
            let isKeyframe = packet.pointee.flags & AV_PKT_FLAG_KEY != 0
            let dts = packet.pointee.dts == MOON_AV_NOPTS_VALUE ? packet.pointee.pts : packet.pointee.dts
            let indexed = IndexedPacket(pts: packet.pointee.pts, dts: dts, isKeyframe: isKeyframe,
                                        startsRandomAccess: isKeyframe && startsRandomAccess(packet, codec: codec))
            if let stop = stoppedAt {
                // After the end keyframe: its leading pictures, until a picture shows after it.
                guard indexed.pts < stop else { break }
                if indexed.pts < end { leading.append(indexed) }
                continue
            }
            inBand.formUnion(parameterSets(in: packet, codec: codec))
            if isKeyframe, packet.pointee.pts >= end {
                stoppedAt = packet.pointee.pts
                continue
            }
            packets.append(indexed)
        }
        return (packets, leading, stoppedAt, inBand)
    }

    /// The parameter-set NAL units inside a sample.
    private static func parameterSets(in packet: UnsafeMutablePointer<AVPacket>, codec: SmartCutCodec) -> [[UInt8]] {
        guard let data = packet.pointee.data else { return [] }
        let bytes = UnsafeBufferPointer(start: data, count: Int(packet.pointee.size))
        return (NALUnits.ranges(bytes, lengthSize: codec.lengthSize) ?? []).compactMap { range in
            !range.isEmpty && codec.isParameterSet(bytes[range.lowerBound]) ? Array(bytes[range]) : nil
        }
    }

    private static func startsRandomAccess(_ packet: UnsafeMutablePointer<AVPacket>, codec: SmartCutCodec) -> Bool {
        guard let data = packet.pointee.data else { return false }
        let bytes = UnsafeBufferPointer(start: data, count: Int(packet.pointee.size))
        return NALUnits.ranges(bytes, lengthSize: codec.lengthSize)?.contains { !$0.isEmpty && codec.startsRandomAccess(bytes[$0.lowerBound]) } ?? false
    }
}

// MARK: Writing

extension SmartCutWriter {
    /// Writes the cut; `preset` sets the quality of the re-encoded frames.
    /// What the sound's mix lost (`AudioRenderer.limitingDiagnostic`) goes to `log`.
    func write(to path: String, container: OutputContainer, preset: ExportPreset, audio: (encoding: AudioEncoding, plan: AudioPlan)?, duration: MediaTime,
               metadata: [String: String], fastStart: Bool, cancellation: CancellationFlag, isCancelled: @escaping () -> Bool,
               log: DiagnosticLog? = nil, report: (ExportProgress) throws -> Void) throws {
        let muxer = try Muxer(path: path, container: container)
        let videoStream = try muxer.addStream(copying: parameters, timeBase: outputTimeBase, frameRate: sourceStream.pointee.avg_frame_rate)
        guard let stream = muxer.context.pointee.streams[Int(videoStream)] else { throw EngineError("out of memory", kind: .limit) }
        let reencodes = segments.contains { !$0.head.isEmpty || !$0.tail.isEmpty }
        let (sampleEntry, converter) = reencodes ? try sampleEntry(preset) : (codec.sourceSampleEntry, nil)
        try check(moon_set_extradata(stream.pointee.codecpar, sampleEntry, Int32(sampleEntry.count)), "setting the parameter sets", context: "output")
        stream.pointee.codecpar.pointee.codec_tag = codec.codecTag
        try check(moon_copy_stream_side_data(stream, sourceStream), "copying the rotation and HDR metadata", context: "output")
        var size = 0
        if let hdrMetadata, moon_stream_side_data(stream, AV_PKT_DATA_MASTERING_DISPLAY_METADATA, &size) == nil { try hdrMetadata.attach(to: stream) }
        let audioEncoder = try audio.map { try StreamEncoder.audio($0.encoding, format: $0.plan.format, muxer: muxer) }
        try muxer.writeHeader(metadata: metadata, fastStart: fastStart)
        let sound = try audio.map { audio in
            try Compositor(video: nil, audio: audio.plan, range: TimeRange(start: audio.plan.start, duration: duration)).audioStream(blockSize: audioEncoder?.frameSize ?? 1024, cancellation: cancellation, log: log)
        }
        defer { sound?.stop() }
        // Smart rendering: every encoded frame composed, in the order they are encoded.
        let composed = try pictures.map { plan in
            let times = segments.flatMap { segment in (segment.head + segment.tail).map { compositionStart + segment.target(of: $0) } }
            return try Compositor(video: plan, audio: nil, range: TimeRange(start: compositionStart, duration: duration))
                .frameStream(at: times, cancellation: cancellation, log: log)
        }
        defer { composed?.stop() }
        try withoutActuallyEscaping(report) { report in
            let output = SmartCutOutput(muxer: muxer, videoStream: videoStream,
                                        audio: audio.flatMap { audio in audioEncoder.flatMap { encoder in sound.map { (audio.plan, audio.encoding.sampleFormat, encoder, $0) } } },
                                        duration: duration, isCancelled: isCancelled, report: report)
            for (index, segment) in segments.enumerated() {
                let copyStart = segment.copied.first.map { segment.target(of: $0.pts) }
                // HEVC copies may start at a CRA picture, which starts a new coded video
                // sequence (and may switch parameter sets) only after an end of sequence.
                let nextCopiesFirst = index + 1 < segments.count && segments[index + 1].head.isEmpty
                try encode(segment.head, of: segment, decodingFrom: segment.headDecodeStart, endingAt: copyStart ?? segment.targetEnd,
                           endsSequence: copyStart != nil, preset: preset, converter: converter, composed: composed, into: output)
                try copy(segment, endsSequence: segment.tail.isEmpty && nextCopiesFirst, into: output)
                try encode(segment.tail, of: segment, decodingFrom: segment.tailDecodeStart, endingAt: segment.targetEnd,
                           endsSequence: nextCopiesFirst, preset: preset, converter: converter, composed: composed, into: output)
            }
            try output.finish()
        }
    }

    /// The source's sample entry with the encoder's parameter sets added under their own
    /// ids, and the converter for its packets.
    private func sampleEntry(_ preset: ExportPreset) throws -> ([UInt8], SampleConverter) {
        let encoder = try matchedEncoder(preset)
        var context: UnsafeMutablePointer<AVCodecContext>? = encoder
        defer { avcodec_free_context(&context) }
        guard let data = encoder.pointee.extradata else { throw EngineError("the encoder gave no parameter sets", kind: .encode) }
        return try codec.sampleEntry(adding: NALUnits.annexB(Array(UnsafeBufferPointer(start: data, count: Int(encoder.pointee.extradata_size)))))
    }

    /// An encoder whose frames the source's decoder setup accepts: same size, chroma, bit
    /// depth, profile, level and colour tags (the codec-specific part in `SmartCutCodec`).
    private func matchedEncoder(_ preset: ExportPreset) throws -> UnsafeMutablePointer<AVCodecContext> {
        let source = parameters.pointee
        let (name, settings) = codec.encoder(profile: source.profile, preset: preset, longRuns: pictures != nil)
        guard let encoderCodec = avcodec_find_encoder_by_name(name) else {
            throw EngineError("this FFmpeg has no \(name) encoder; install one built with it (Debian: libavcodec59)", kind: .unsupported)
        }
        guard let context = avcodec_alloc_context3(encoderCodec) else { throw EngineError("out of memory", kind: .limit) }
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
        // Smart rendering encodes minutes: every core (x264's own choice). A cut's few frames: one.
        context.pointee.thread_count = pictures == nil ? 1 : 0
        context.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        for (key, value) in hdrMetadata?.encoderOptions(settings, for: name) ?? settings { av_dict_set(&options, key, value, 0) }
        let status = avcodec_open2(context, encoderCodec, &options)
        if status < 0 {
            var maybe: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&maybe)
            try check(status, "opening \(name) with the source's settings", context: "output")
        }
        return context
    }

    /// Encodes `frames` (source times) as one closed piece: the next ones `composed` gives
    /// (smart rendering), or else the source's, decoded from the keyframe decoded at `decodeStart`.
    private func encode(_ frames: [Int64], of segment: SmartCutSegment, decodingFrom decodeStart: Int64, endingAt end: MediaTime,
                        endsSequence: Bool, preset: ExportPreset, converter: SampleConverter?, composed: RenderStream<Frame>?,
                        into output: SmartCutOutput) throws {
        guard let first = frames.first, let last = frames.last, let converter else { return }
        let targets = frames.map { segment.target(of: $0).pts(in: outputTimeBase) }
        var durations: [Int64: Int64] = [:]
        for (index, target) in targets.enumerated() {
            let next = index + 1 < targets.count ? targets[index + 1] : end.pts(in: outputTimeBase)
            durations[target] = Swift.max(next - target, 1)
        }
        let encoder = try matchedEncoder(preset)
        var context: UnsafeMutablePointer<AVCodecContext>? = encoder
        defer { avcodec_free_context(&context) }
        let converted = try PacketConverter(converter, reorderDelay: reorderDelay, durations: durations,
                                            endOfSequenceAfter: endsSequence ? frames.count : nil)
        func send(_ frame: Frame, as target: Int64) throws {
            frame.pointer.pointee.pts = target
            frame.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
            try check(avcodec_send_frame(encoder, frame.pointer), "encoding", context: "output")
            try drain(encoder, through: converted, into: output)
        }
        var targetOf = Dictionary(uniqueKeysWithValues: zip(frames, targets))
        if let composed {
            for target in targets {
                try output.checkCancelled()
                guard let frame = try composed.next() else { throw EngineError("the composed pictures ended before the export did", kind: .internal) }
                try send(try storedOrientation?.apply(to: frame) ?? frame, as: target)
            }
            targetOf = [:]
        } else {
            let reader = try StreamReader(path: segment.source.path, streamIndex: segment.source.streamIndex)
            try reader.seek(before: MediaTime(pts: Swift.min(decodeStart, first), timeBase: segment.timeBase))
            while !targetOf.isEmpty, let frame = try reader.nextFrame() {
                try output.checkCancelled()
                let pts = reader.pts(of: frame)
                if pts > last { break }
                guard let target = targetOf.removeValue(forKey: pts) else { continue }
                try send(frame, as: target)
            }
        }
        guard targetOf.isEmpty else {
            throw EngineError("input \"\(segment.source.path)\": \(targetOf.count) frames near \(MediaTime(pts: first, timeBase: segment.timeBase).seconds) s could not be decoded", kind: .decode, subject: segment.source.path)
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

    /// Copies a segment's whole GOPs, restamped to output time, without the leading
    /// pictures of the first keyframe (re-encoded in the head).
    private func copy(_ segment: SmartCutSegment, endsSequence: Bool, into output: SmartCutOutput) throws {
        guard let first = segment.copied.first else { return }
        let path = segment.source.path, streamIndex = segment.source.streamIndex
        let demuxer = try Demuxer(path: path)
        for index in 0..<demuxer.streamCount where index != streamIndex { demuxer.stream(index)?.pointee.discard = AVDISCARD_ALL }
        try check(demuxer.seek(stream: streamIndex, target: first.dts, latest: first.dts, flags: AVSEEK_FLAG_BACKWARD),
                  "seeking", context: "input \"\(path)\"")
        guard let packet = av_packet_alloc() else { throw EngineError("out of memory", kind: .limit) }
        var maybePacket: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&maybePacket) }
        var next = 0
        while next < segment.copied.count, demuxer.read(into: packet) >= 0 {
            defer { av_packet_unref(packet) }
            guard Int(packet.pointee.stream_index) == streamIndex, packet.pointee.pts != MOON_AV_NOPTS_VALUE else { continue }
            if next == 0, packet.pointee.pts != first.pts { continue } // before the first copied keyframe
            if packet.pointee.pts < first.pts { continue } // its leading pictures
            guard packet.pointee.pts == segment.copied[next].pts else {
                throw EngineError("input \"\(path)\": its packets changed while it was being cut", kind: .decode, subject: path)
            }
            if endsSequence, next == segment.copied.count - 1, let marker = codec.endOfSequence {
                try check(av_grow_packet(packet, Int32(marker.count)), "allocating a packet")
                let end = UnsafeMutableBufferPointer(start: packet.pointee.data.advanced(by: Int(packet.pointee.size) - marker.count), count: marker.count)
                _ = end.update(from: marker)
            }
            let dts = packet.pointee.dts == MOON_AV_NOPTS_VALUE ? packet.pointee.pts : packet.pointee.dts
            packet.pointee.dts = segment.targetDecodeTime(pts: packet.pointee.pts, dts: dts).pts(in: segment.timeBase)
            packet.pointee.pts = segment.target(of: packet.pointee.pts).pts(in: segment.timeBase)
            packet.pointee.pos = -1
            try output.writeVideo(packet, timeBase: segment.timeBase)
            next += 1
        }
        guard next == segment.copied.count else { throw EngineError("input \"\(path)\": ended while being copied", kind: .decode, subject: path) }
    }
}

/// Turns the encoder's packets into samples of the copied stream: its NAL units as
/// `SampleConverter` writes them, decode times led by the copied stream's reordering
/// delay, each frame lasting until the next.
private final class PacketConverter {
    let encoded: UnsafeMutablePointer<AVPacket>
    private let sample: UnsafeMutablePointer<AVPacket>
    private let converter: SampleConverter
    private let reorderDelay: Int64
    private let durations: [Int64: Int64]
    /// The sample after which the coded video sequence ends (for an HEVC copy that follows).
    private let endOfSequenceAfter: Int?
    private var converted = 0

    init(_ converter: SampleConverter, reorderDelay: Int64, durations: [Int64: Int64], endOfSequenceAfter: Int?) throws {
        guard let encoded = av_packet_alloc(), let sample = av_packet_alloc() else { throw EngineError("out of memory", kind: .limit) }
        (self.encoded, self.sample) = (encoded, sample)
        (self.converter, self.reorderDelay, self.durations, self.endOfSequenceAfter) = (converter, reorderDelay, durations, endOfSequenceAfter)
    }

    deinit {
        var maybeEncoded: UnsafeMutablePointer<AVPacket>? = encoded, maybeSample: UnsafeMutablePointer<AVPacket>? = sample
        av_packet_free(&maybeEncoded)
        av_packet_free(&maybeSample)
    }

    func sampleFromEncoded() throws -> UnsafeMutablePointer<AVPacket> {
        defer { av_packet_unref(encoded) }
        guard let data = encoded.pointee.data else { throw EngineError("the encoder gave an empty packet", kind: .encode) }
        var (bytes, isKeyframe) = try converter.sample(Array(UnsafeBufferPointer(start: data, count: Int(encoded.pointee.size))))
        converted += 1
        if converted == endOfSequenceAfter, let marker = converter.endOfSequence { bytes += marker }
        av_packet_unref(sample)
        try check(av_new_packet(sample, Int32(bytes.count)), "allocating a packet")
        guard !bytes.isEmpty, let destination = sample.pointee.data else { throw EngineError("the encoder gave a packet without a picture", kind: .encode) }
        _ = UnsafeMutableBufferPointer(start: destination, count: bytes.count).update(from: bytes)
        sample.pointee.pts = encoded.pointee.pts
        sample.pointee.dts = encoded.pointee.pts - reorderDelay
        sample.pointee.duration = durations[encoded.pointee.pts] ?? 1
        if isKeyframe { sample.pointee.flags |= AV_PKT_FLAG_KEY }
        return sample
    }
}

/// The output of a smart cut: video packets in decode order, audio rendered and encoded
/// alongside up to the same time, progress by output time.
private final class SmartCutOutput {
    private let muxer: Muxer
    private let videoStream: Int32
    private let audio: (plan: AudioPlan, sampleFormat: AVSampleFormat, encoder: StreamEncoder, sound: RenderStream<[[Float]]>)?
    private let duration: MediaTime
    private let isCancelled: () -> Bool
    private let report: (ExportProgress) throws -> Void
    private var lastDecodeTime: MediaTime?
    private var samplesWritten: Int64 = 0
    private var lastReported = 0.0

    init(muxer: Muxer, videoStream: Int32, audio: (AudioPlan, AVSampleFormat, StreamEncoder, RenderStream<[[Float]]>)?, duration: MediaTime,
         isCancelled: @escaping () -> Bool, report: @escaping (ExportProgress) throws -> Void) {
        (self.muxer, self.videoStream, self.duration, self.isCancelled, self.report) = (muxer, videoStream, duration, isCancelled, report)
        self.audio = audio.map { (plan: $0.0, sampleFormat: $0.1, encoder: $0.2, sound: $0.3) }
    }

    func checkCancelled() throws {
        if isCancelled() { throw EngineError("export cancelled", kind: .cancelled) }
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
        _ = try muxer.write(packet, stream: videoStream, from: timeBase)  // SmartCut has no size limit
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
            guard let block = try audio.sound.next() else { throw EngineError("audio ended early", kind: .internal) }
            try audio.encoder.encode(try Frame.audio(block, format: audio.plan.format, pts: samplesWritten, sampleFormat: audio.sampleFormat))
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
