import MoonreelMedia

/// Where a composition segment's media comes from: one stream of one file.
public struct SegmentSource: Sendable, Hashable {
    /// The media file's path, as the asset was opened.
    public let path: String
    /// The stream's index in the file (FFmpeg's numbering, from 0).
    public let streamIndex: Int
    /// The asset track's ID (`AssetTrack.trackID`).
    public let trackID: Int
    /// `.video` or `.audio`.
    public let mediaType: MediaType
    /// The stored picture size in pixels, before `preferredTransform` (zero for audio).
    public let naturalSize: Size
    /// Maps the stored picture onto the upright one, as the file asks (phone rotation).
    public let preferredTransform: AffineTransform
    /// The stored pixels' width over their height (`AssetTrack.pixelAspectRatio`).
    public let pixelAspectRatio: Double
    /// What the file holds besides picture and sound (chapters, subtitles, cover art, tags),
    /// which no export writes.
    public let extras: SourceExtras
    /// The stream's frame rate as the file states it, in frames per second (0 for audio).
    public let nominalFrameRate: Double
    /// One frame at that rate, exactly (`AssetTrack.nominalFrameDuration`).
    public let nominalFrameDuration: MediaTime
    /// Audio samples per second (0 for video).
    public let sampleRate: Int
    /// Audio channels (0 for video).
    public let channelCount: Int
    /// Bits per sample of lossless audio; 0 for lossy audio and video (`AssetTrack.losslessBits`).
    public let losslessBits: Int
    /// Whether the source is a photo shown as video (see `AssetTrack.isStillImage`).
    public let isStillImage: Bool
    /// HLG or PQ for HDR video, SDR otherwise.
    public let dynamicRange: DynamicRange
    /// The Dolby Vision profile ("8.4"), nil without Dolby Vision.
    public let dolbyVision: String?
    /// HDR10's mastering display and light levels, nil when the file gives none.
    public let hdrMetadata: HDRStaticMetadata?
    /// Whether the video carries HDR10+ dynamic metadata (`VideoColor.hdr10Plus`).
    public let hdr10Plus: Bool
    /// Whole frames or interlaced fields (`AssetTrack.fieldOrder`).
    public let fieldOrder: FieldOrder
    /// The times the stream holds media for in its file (`AssetTrack.timeRange`): a segment
    /// that asks for more shows the last picture, or silence, past its end.
    public let mediaRange: TimeRange
    /// The file's start timecode (`Asset.startTimecode`), from which editors count its times.
    public let startTimecode: Timecode?

    init(_ track: AssetTrack) {
        path = track.path
        streamIndex = track.streamIndex
        trackID = track.trackID
        mediaType = track.mediaType
        naturalSize = track.naturalSize
        preferredTransform = track.preferredTransform
        pixelAspectRatio = track.pixelAspectRatio
        extras = track.asset?.extras ?? SourceExtras()
        nominalFrameRate = track.nominalFrameRate
        nominalFrameDuration = track.nominalFrameDuration
        sampleRate = track.sampleRate
        channelCount = track.channelCount
        losslessBits = track.losslessBits
        isStillImage = track.isStillImage
        dynamicRange = track.color?.dynamicRange ?? .sdr
        dolbyVision = track.color?.dolbyVision
        hdrMetadata = track.color?.hdrMetadata
        hdr10Plus = track.color?.hdr10Plus ?? false
        fieldOrder = track.fieldOrder
        mediaRange = track.timeRange
        startTimecode = track.asset?.startTimecode
    }
}

extension SegmentSource: StoredPicture {}

/// One stream of one file, as an instruction made from an asset track names it.
public struct SourceReference: Sendable, Hashable {
    /// The media file's path, as the asset was opened.
    public let path: String
    /// The stream's index in the file (FFmpeg's numbering, from 0).
    public let streamIndex: Int
    /// The stream `track` reads.
    public init(_ track: AssetTrack) { (path, streamIndex) = (track.path, track.streamIndex) }
    init(path: String, streamIndex: Int) { (self.path, self.streamIndex) = (path, streamIndex) }
}

/// Maps `sourceRange` of a source onto `targetRange` of the composition; an empty segment
/// has no source and shows the background (video) or silence (audio). When the two
/// durations differ the segment plays faster or slower (`scaleTimeRange`).
public struct TrackSegment: Sendable, Hashable {
    /// The media shown; nil for an empty segment (background or silence).
    public var source: SegmentSource?
    /// The part of the source played, in the source's time.
    public var sourceRange: TimeRange
    /// Where the segment sits in the composition's time.
    public var targetRange: TimeRange
    /// Whether the segment has no source (AVFoundation's `isEmpty`).
    public var isEmpty: Bool { source == nil }

    package init(source: SegmentSource? = nil, sourceRange: TimeRange, targetRange: TimeRange) {
        self.source = source
        self.sourceRange = sourceRange
        self.targetRange = targetRange
    }

    /// The source time shown at composition time `t` (inside `targetRange`).
    public func sourceTime(at t: MediaTime) -> MediaTime {
        let offset = t - targetRange.start
        if sourceRange.duration == targetRange.duration { return sourceRange.start + offset }
        return sourceRange.start + offset.multiplied(by: sourceRange.duration, dividedBy: targetRange.duration)
    }

    /// The source time whose picture an output frame at composition time `t` shows, frames
    /// being `frameDuration` long: the last picture at or before it, or one due less than a
    /// quarter of a frame after it (of the output's frame or the source's own, the shorter),
    /// never one past the segment. A phone's frame times jitter: an Android 4K60 clip's lie
    /// 16.0–17.2 ms apart, and shown at 60 fps by "at or before" alone, each picture a
    /// fraction of a millisecond late was skipped and the one before shown twice (2 of 18).
    /// A quarter leaves room for that and never reaches the next picture at whole ratios
    /// (60 fps at 30, 240 fps at 30), where half a frame would take every second one.
    public func sourceTimeShown(at t: MediaTime, frameDuration: MediaTime) -> MediaTime {
        let exact = sourceTime(at: t)
        guard let source, !source.isStillImage, frameDuration > .zero else { return exact }
        let outputFrame = sourceRange.duration == targetRange.duration
            ? frameDuration : frameDuration.multiplied(by: sourceRange.duration, dividedBy: targetRange.duration)
        let slack = MediaTime.min(outputFrame, source.nominalFrameDuration).multiplied(by: MediaTime(value: 1, timescale: 1),
                                                                                      dividedBy: MediaTime(value: 4, timescale: 1))
        // Strictly within: a picture due exactly a quarter of a frame later (a stream whose
        // clock starts 30 ms before its picture, cut at 11.5 s) is the next frame's.
        let tick = MediaTime(value: 1, timescale: MediaTime.defaultTimescale)
        return max(exact, MediaTime.min(exact + slack - tick, sourceRange.end - tick))
    }

    /// Splits at composition time `t` (strictly inside), keeping the source mapping exact.
    package func split(at t: MediaTime) -> (TrackSegment, TrackSegment) {
        let sourceCut = sourceTime(at: t)
        var first = self, second = self
        first.targetRange = TimeRange(from: targetRange.start, to: t)
        first.sourceRange = TimeRange(from: sourceRange.start, to: sourceCut)
        second.targetRange = TimeRange(from: t, to: targetRange.end)
        second.sourceRange = TimeRange(from: sourceCut, to: sourceRange.end)
        return (first, second)
    }

    /// The part inside `range` (composition time), keeping the source mapping exact.
    package func clipped(to range: TimeRange) -> TrackSegment {
        var part = self
        if range.start > targetRange.start, range.start < targetRange.end { part = part.split(at: range.start).1 }
        if range.end > part.targetRange.start, range.end < part.targetRange.end { part = part.split(at: range.end).0 }
        return part
    }

    package func shifted(by delta: MediaTime) -> TrackSegment {
        var moved = self
        moved.targetRange.start = targetRange.start + delta
        return moved
    }
}

/// A track of a composition, like `AVMutableCompositionTrack`: an ordered, gapless list of
/// segments starting at time 0.
public final class CompositionTrack {
    /// The track's ID in the composition, from 1 (AVFoundation's `trackID`).
    public let trackID: Int
    /// `.video` or `.audio`: the only media the track takes.
    public let mediaType: MediaType
    /// The track's segments in time order, gapless from 0 (AVFoundation's `segments`).
    public private(set) var segments: [TrackSegment] = []
    /// Applied by default video compositions; identity unless set (as in AVFoundation).
    public var preferredTransform: AffineTransform = .identity

    /// What turns `source` upright in this track: the track's `preferredTransform` when the
    /// script set one, else the file's.
    public func preferredTransform(of source: SegmentSource) -> AffineTransform {
        preferredTransform.isIdentity ? source.preferredTransform : preferredTransform
    }
    /// The track's volume (linear gain, 1 unchanged) when no audio mix parameters name it,
    /// like `AVMutableCompositionTrack.preferredVolume`.
    public var preferredVolume: Double = 1

    init(trackID: Int, mediaType: MediaType) {
        self.trackID = trackID
        self.mediaType = mediaType
    }

    /// The end of the last segment (zero for an empty track).
    public var duration: MediaTime { segments.last?.targetRange.end ?? .zero }
    /// From 0 to `duration`, like `AVAssetTrack.timeRange`.
    public var timeRange: TimeRange { TimeRange(start: .zero, duration: duration) }

    /// Stored size of the first source (AVFoundation's naturalSize of a composition track).
    public var naturalSize: Size { segments.first { !$0.isEmpty }?.source?.naturalSize ?? .zero }

    /// Inserts `range` of `track` at composition time `at`, moving later media later.
    /// A gap before `at` is filled with an empty segment.
    ///
    /// The range may be anything inside the asset's duration, as in AVFoundation code that
    /// inserts every track over `asset.duration`: where this track has no media the
    /// composition has empty time. Audio there is silence; video before its first frame is
    /// empty (the background), unless the gap is shorter than a frame (timestamp jitter,
    /// where the first frame shows), and video after its last frame holds that frame to the
    /// end of the range, as a player shows it.
    public func insertTimeRange(_ range: TimeRange, of track: AssetTrack, at: MediaTime) throws {
        guard track.mediaType == mediaType else {
            throw EngineError("cannot insert a \(track.mediaType.rawValue) track into a \(mediaType.rawValue) composition track")
        }
        try CompositionTrack.validate(range: range, at: at)
        try track.checkInsideAsset(range)
        var media = range
        if mediaType == .video, range.start < track.timeRange.start {
            let lead = MediaTime.min(track.timeRange.start, range.end) - range.start
            if lead >= track.nominalFrameDuration {
                try insertEmptyTimeRange(TimeRange(start: at, duration: lead))
                media = TimeRange(from: range.start + lead, to: range.end)
            }
        }
        let segment = TrackSegment(source: SegmentSource(track), sourceRange: media,
                                   targetRange: TimeRange(start: at + (media.start - range.start), duration: media.duration))
        insert(segment)
    }

    /// Empty time (the background, silence) that counts in the track's duration, as in
    /// AVFoundation: a title card over nothing but layers is an empty video track.
    public func insertEmptyTimeRange(_ range: TimeRange) throws {
        try CompositionTrack.validate(range: range)
        insert(TrackSegment(source: nil, sourceRange: range, targetRange: range))
    }

    /// Removes the media in `range` and moves later media earlier by its duration, like
    /// `AVMutableCompositionTrack.removeTimeRange(_:)`; empty time left at the end is dropped.
    /// - Throws: `EngineError` when the range starts before 0 or has a negative duration.
    public func removeTimeRange(_ range: TimeRange) throws {
        try CompositionTrack.validate(range: range)
        splitSegments(at: range.start)
        splitSegments(at: range.end)
        segments = segments.compactMap { segment in
            if range.contains(segment.targetRange.start) { return nil }
            return segment.targetRange.start >= range.end ? segment.shifted(by: -range.duration) : segment
        }
        trimTrailingEmpty()
    }

    /// Plays `range` in `newDuration` (slow motion when longer), moving later media.
    public func scaleTimeRange(_ range: TimeRange, toDuration newDuration: MediaTime) throws {
        try CompositionTrack.validate(range: range)
        guard newDuration.value > 0 else { throw EngineError("scaleTimeRange: the new duration must be positive") }
        guard !range.isEmpty else { return }
        splitSegments(at: range.start)
        splitSegments(at: range.end)
        let delta = newDuration - range.duration
        segments = segments.map { segment in
            var scaled = segment
            if range.contains(segment.targetRange.start) {
                let offset = segment.targetRange.start - range.start
                scaled.targetRange = TimeRange(
                    start: range.start + offset.multiplied(by: newDuration, dividedBy: range.duration),
                    duration: segment.targetRange.duration.multiplied(by: newDuration, dividedBy: range.duration))
                return scaled
            }
            return segment.targetRange.start >= range.end ? segment.shifted(by: delta) : segment
        }
        closeRoundingGaps()
    }

    // MARK: Internals

    /// Refuses a range with a negative duration, or inserted at a negative time `at`.
    static func validate(range: TimeRange, at: MediaTime) throws {
        guard range.duration.value >= 0 else { throw EngineError("time range has a negative duration (\(range.duration.seconds) s)") }
        guard !at.isNegative else { throw EngineError("insertion time must not be negative (\(at.seconds) s)") }
    }

    /// Refuses a range edited in place (removed, scaled, emptied) that has a negative
    /// duration or starts before 0.
    static func validate(range: TimeRange) throws {
        guard range.duration.value >= 0 else { throw EngineError("time range has a negative duration (\(range.duration.seconds) s)") }
        guard !range.start.isNegative else { throw EngineError("the range must not start before 0 (it starts at \(shortSeconds(range.start)) s)") }
    }

    private func insert(_ segment: TrackSegment) {
        guard !segment.targetRange.isEmpty else { return }
        let at = segment.targetRange.start
        if at > duration {
            segments.append(TrackSegment(source: nil, sourceRange: TimeRange(from: duration, to: at),
                                         targetRange: TimeRange(from: duration, to: at)))
        }
        splitSegments(at: at)
        let index = segments.firstIndex { $0.targetRange.start >= at } ?? segments.count
        for i in index..<segments.count { segments[i] = segments[i].shifted(by: segment.targetRange.duration) }
        segments.insert(segment, at: index)
    }

    private func splitSegments(at t: MediaTime) {
        guard let index = segments.firstIndex(where: { $0.targetRange.start < t && t < $0.targetRange.end }) else { return }
        let (first, second) = segments[index].split(at: t)
        segments.replaceSubrange(index...index, with: [first, second])
    }

    private func trimTrailingEmpty() {
        while segments.last?.isEmpty == true { segments.removeLast() }
    }

    /// Scaling rounds each segment to the timescale; make every segment start where the
    /// previous one ends so the track stays gapless.
    private func closeRoundingGaps() {
        for i in segments.indices.dropFirst() {
            let end = segments[i - 1].targetRange.end
            let oldEnd = segments[i].targetRange.end
            segments[i].targetRange = TimeRange(from: end, to: MediaTime.max(oldEnd, end))
        }
    }
}

/// A composition, like `AVMutableComposition`: tracks of segments; itself usable like an asset.
public final class Composition {
    /// Every track, in the order they were added (AVFoundation's `tracks`).
    public private(set) var tracks: [CompositionTrack] = []
    /// AVMutableComposition's `naturalSize`: the size the script set, or else the natural
    /// (stored, unturned) size of the first video track, as Apple documents it. Code that
    /// swaps width and height for a portrait preferredTransform gets the upright size.
    /// Setting `.zero` returns to the default.
    public var naturalSize: Size {
        get { authoredSize ?? tracks(withMediaType: .video).first { $0.naturalSize != .zero }?.naturalSize ?? .zero }
        set { authoredSize = newValue == .zero ? nil : newValue }
    }
    private var authoredSize: Size?
    /// The edit that last moved its time (`removeSilences`, `scaleTimeRange`), for the
    /// `cuesNotRemapped` check: cues read for the time before are drawn in the wrong place.
    package var timeMovedBy: String?

    /// An empty composition: no tracks, zero duration.
    public init() {}

    /// The end of the longest track (AVFoundation's `duration`).
    public var duration: MediaTime { tracks.map(\.duration).max() ?? .zero }

    /// The tracks of one media type, in order (AVFoundation's `tracks(withMediaType:)`).
    public func tracks(withMediaType type: MediaType) -> [CompositionTrack] { tracks.filter { $0.mediaType == type } }
    /// The track with this ID, or nil (AVFoundation's `track(withTrackID:)`).
    public func track(withID id: Int) -> CompositionTrack? { tracks.first { $0.trackID == id } }

    /// The track that a layer instruction or audio mix parameters made for track `id` mean.
    /// Made from an asset track (`source`), AVFoundation matches by ID, which in ported code
    /// usually names the composition track holding that asset track's media: so the track
    /// with that ID is taken when it holds the media, else the one track of the type that does.
    public func resolvedTrackID(_ id: Int, source: SourceReference?, mediaType: MediaType) -> Int {
        guard let source else { return id }
        let holding = tracks(withMediaType: mediaType).filter { track in
            track.segments.contains { $0.source.map { SourceReference(path: $0.path, streamIndex: $0.streamIndex) } == source }
        }
        if holding.contains(where: { $0.trackID == id }) { return id }
        return holding.count == 1 ? holding[0].trackID : id
    }

    /// Every file the composition reads media from.
    public var sourcePaths: [String] {
        Array(Set(tracks.flatMap { $0.segments.compactMap { $0.source?.path } }))
    }

    /// Adds an empty track, like `AVMutableComposition.addMutableTrack(withMediaType:preferredTrackID:)`.
    /// - Parameters:
    ///   - mediaType: `.video` or `.audio`.
    ///   - preferredTrackID: The ID wanted; when nil, not positive, too large or taken, the
    ///     lowest free ID above the others is given.
    /// - Returns: The new track.
    /// - Throws: `EngineError` for another media type.
    public func addMutableTrack(mediaType: MediaType, preferredTrackID: Int? = nil) throws -> CompositionTrack {
        guard mediaType == .video || mediaType == .audio else {
            throw EngineError("composition tracks are \"video\" or \"audio\", not \"\(mediaType.rawValue)\"")
        }
        var id = preferredTrackID ?? 0
        if id <= 0 || id > Int(Int32.max) || track(withID: id) != nil {
            // The lowest free ID above the others, as AVFoundation hands out (never overflowing).
            let used = Set(tracks.map(\.trackID))
            id = (tracks.map(\.trackID).filter { $0 < Int(Int32.max) }.max() ?? 0) + 1
            if used.contains(id) || id > Int(Int32.max) { id = (1...).first { !used.contains($0) } ?? 1 }
        }
        let track = CompositionTrack(trackID: id, mediaType: mediaType)
        tracks.append(track)
        return track
    }

    /// The first track of the same media type that has no media overlapping `range` at `at`
    /// — here simply the first track of that type, as AVFoundation returns for appends.
    public func mutableTrackCompatible(with track: AssetTrack) -> CompositionTrack? {
        tracks.first { $0.mediaType == track.mediaType }
    }

    /// Inserts `range` of every video and audio track of `asset` at `at`, each into a
    /// compatible track (created when missing), by the same rule as the track call: a track
    /// with no media in part of the range (audio shorter than video) has empty time there.
    public func insertTimeRange(_ range: TimeRange, of asset: Asset, at: MediaTime) throws {
        try CompositionTrack.validate(range: range, at: at)
        let mediaTracks = asset.tracks.filter { $0.mediaType == .video || $0.mediaType == .audio }
        guard let first = mediaTracks.first else { throw EngineError("asset \"\(asset.path)\" has no audio or video track", kind: .notFound) }
        try first.checkInsideAsset(range)
        var used = Set<ObjectIdentifier>()
        for source in mediaTracks {
            let target = try tracks.first { $0.mediaType == source.mediaType && !used.contains(ObjectIdentifier($0)) }
                ?? addMutableTrack(mediaType: source.mediaType)
            used.insert(ObjectIdentifier(target))
            try target.insertTimeRange(range, of: source, at: at)
        }
    }

    /// Removes `range` from every track, moving later media earlier (AVFoundation's
    /// `removeTimeRange(_:)`).
    /// - Throws: `EngineError` when the range starts before 0 or has a negative duration.
    public func removeTimeRange(_ range: TimeRange) throws {
        for track in tracks { try track.removeTimeRange(range) }
    }

    /// Inserts empty time (background, silence) at `range.start` in every track, moving later
    /// media later by `range.duration` (AVFoundation's `insertEmptyTimeRange(_:)`).
    /// - Throws: `EngineError` when the range starts before 0 or has a negative duration.
    public func insertEmptyTimeRange(_ range: TimeRange) throws {
        for track in tracks { try track.insertEmptyTimeRange(range) }
    }

    /// Plays `range` of every track in `newDuration`: slower when longer, faster when shorter;
    /// later media moves accordingly (AVFoundation's `scaleTimeRange(_:toDuration:)`). Audio
    /// keeps its pitch unless the mix's `audioTimePitchAlgorithm` says `varispeed`.
    /// - Throws: `EngineError` when the range is invalid or `newDuration` is not positive.
    public func scaleTimeRange(_ range: TimeRange, toDuration newDuration: MediaTime) throws {
        for track in tracks { try track.scaleTimeRange(range, toDuration: newDuration) }
    }

    /// The render size of default video compositions: the size the script set as
    /// `naturalSize`, else the size the first video track's first source shows
    /// (`SegmentSource.shownSize`: upright, non-square pixels at their shape).
    public var uprightVideoSize: Size {
        if let authoredSize { return authoredSize }
        for track in tracks(withMediaType: .video) {
            if let source = track.segments.first(where: { !$0.isEmpty })?.source {
                return source.shownSize(preferredTransform: track.preferredTransform(of: source))
            }
        }
        return .zero
    }
}
