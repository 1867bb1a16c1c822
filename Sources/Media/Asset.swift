import CMoonFFmpeg
import CMoonAVShim

/// The kind of a track, like `AVMediaType`; the raw values are the lower-case names.
public enum MediaType: String, Sendable, CaseIterable {
    /// Moving pictures (a still image file is a video track too, see `isStillImage`).
    case video
    /// Sound.
    case audio
    /// Subtitles other than MP4 timed text (SubRip, WebVTT, ASS, DVD and Blu-ray pictures).
    case subtitle
    /// MP4/QuickTime timed text (`mov_text`, `AVMediaType.text`).
    case text
    /// Cover art and other still pictures stored as a one-frame "video" stream.
    case image
    /// Timed metadata and data streams (chapters, iPhone `mebx`, GoPro telemetry).
    case metadata
}

/// How a video track's pictures were scanned: whole frames, or two fields a frame apart in
/// time (a camcorder's 1080i, DV, broadcast), the one in the top or the bottom lines first.
public enum FieldOrder: String, Sendable {
    /// Whole frames.
    case progressive
    /// Interlaced, the top lines' field shown first.
    case topFieldFirst = "top field first"
    /// Interlaced, the bottom lines' field shown first.
    case bottomFieldFirst = "bottom field first"
    /// The file does not say (most progressive video).
    case unknown

    init(_ order: AVFieldOrder) {
        switch order {
        case AV_FIELD_PROGRESSIVE: self = .progressive
        case AV_FIELD_TT, AV_FIELD_TB: self = .topFieldFirst
        case AV_FIELD_BB, AV_FIELD_BT: self = .bottomFieldFirst
        default: self = .unknown
        }
    }

    /// Whether the pictures are fields to deinterlace.
    public var isInterlaced: Bool { self == .topFieldFirst || self == .bottomFieldFirst }

    /// As the container says, else, for the codecs cameras interlace with (DV, MPEG-2, H.264),
    /// as the first frame's flags say (DV's container says nothing); read once per unchanged
    /// file. (HEVC's decoder gives an interlaced stream's fields as pictures of their own.)
    static func of(_ parameters: AVCodecParameters, path: String, streamIndex: Int) -> FieldOrder {
        let stated = FieldOrder(parameters.field_order)
        let mayInterlace: Set<AVCodecID> = [AV_CODEC_ID_DVVIDEO, AV_CODEC_ID_MPEG2VIDEO, AV_CODEC_ID_H264]
        guard stated == .unknown, mayInterlace.contains(parameters.codec_id) else { return stated }
        return firstFrames.value(for: path, part: streamIndex) {
            guard let reader = try? StreamReader(path: path, streamIndex: streamIndex, threading: .single),
                  let frame = try? reader.nextFrame() else { return .unknown }
            let picture = frame.pointer.pointee
            return picture.interlaced_frame == 0 ? .progressive : picture.top_field_first != 0 ? .topFieldFirst : .bottomFieldFirst
        }
    }

    private static let firstFrames = FileFacts<FieldOrder>()
}

/// What a file holds that a person made besides its picture and sound: chapters, subtitle
/// tracks, cover art and tags such as a title. What a device writes on every file (the date,
/// the place, the camera, its data tracks) is not counted: an edit is not expected to keep it.
public struct SourceExtras: Sendable, Hashable {
    /// Chapters marked.
    public var chapters = 0
    /// Subtitle and timed-text tracks.
    public var subtitleTracks = 0
    /// Cover art and other still pictures.
    public var coverPictures = 0
    /// The tags' meanings ("title", "artist", …; `meaning(of:)`).
    public var tags: Set<String> = []

    /// Nothing besides picture and sound.
    public init() {}

    /// These counts and tags.
    public init(chapters: Int, subtitleTracks: Int, coverPictures: Int, tags: Set<String>) {
        (self.chapters, self.subtitleTracks, self.coverPictures, self.tags) = (chapters, subtitleTracks, coverPictures, tags)
    }

    /// What a container tag means, or nil for one a device or muxer writes: "title" for
    /// `title` and `com.apple.quicktime.title` alike (FFmpeg reads iTunes' `©nam` as `title`).
    public static func meaning(of key: String) -> String? {
        var name = key.lowercased()
        let apple = "com.apple.quicktime."
        if name.hasPrefix(apple) { name.removeFirst(apple.count) }
        let known = ["title", "artist", "album", "album_artist", "comment", "description", "copyright", "genre", "composer", "lyrics"]
        return known.contains(name) ? String(name.map { $0 == "_" ? " " : $0 }) : nil
    }
}

/// A media file opened for reading, like `AVURLAsset`: its duration and tracks.
/// Probing happens once at creation; readers open their own handles later.
public final class Asset: @unchecked Sendable {
    // Immutable after init; safe to share across threads.
    /// The file path, as given to `init(path:)`.
    public let path: String
    /// Where the last audio or video track ends (from the container's duration, or by
    /// reading the packets when the header has none); `stillImageDuration` for a photo.
    public let duration: MediaTime
    /// FFmpeg's name for the container ("mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm",
    /// "image2", "png_pipe", …).
    public let formatName: String
    /// The container's metadata tags as FFmpeg reads them ("title", "creation_time", …).
    public let metadata: [String: String]
    /// How many chapters the file marks (a podcast's, a film's).
    public let chapterCount: Int
    /// The timecode a camera or an editor stamped on the file (a QuickTime/MP4 `tmcd` track,
    /// labelling its own start; an MXF or Matroska tag, labelling the first video frame); nil
    /// otherwise, and for a file without video.
    public let startTimecode: Timecode?

    /// What the file holds that a person made besides its picture and sound, which no export
    /// writes (`SourceExtras`).
    public var extras: SourceExtras {
        SourceExtras(chapters: chapterCount, subtitleTracks: tracks.count { $0.mediaType == .subtitle || $0.mediaType == .text },
                     coverPictures: tracks(withMediaType: .image).count,
                     tags: Set(metadata.keys.compactMap { SourceExtras.meaning(of: $0) }))
    }
    /// Every stream of the file in stream order, including subtitle, cover-art and data
    /// tracks.
    public private(set) var tracks: [AssetTrack] = []
    /// How long a still image lasts when inserted whole (`asset.duration`); any other
    /// duration can be inserted too.
    public static let stillImageDuration = MediaTime(value: 5, timescale: 1)
    /// A photo rather than a movie: its one video track shows the same picture throughout.
    public var isStillImage: Bool { tracks.contains { $0.isStillImage } }

    /// Opens and probes the file (`AVURLAsset(url:)` with its properties loaded): movies,
    /// audio files and still images (PNG, JPEG, WebP).
    /// - Throws: `FFmpegError` when the file cannot be opened or probed, `EngineError` when
    ///   it has no audio or video stream.
    public init(path: String) throws {
        self.path = path
        let demuxer = try Demuxer(path: path)
        let format = demuxer.context.pointee
        formatName = format.iformat.map { String(cString: $0.pointee.name) } ?? "unknown"
        metadata = Asset.dictionary(format.metadata)
        chapterCount = Int(format.nb_chapters)
        let stillFormat = formatName == "image2" || formatName.hasSuffix("_pipe")
        var built: [AssetTrack] = []
        for index in 0..<demuxer.streamCount {
            guard let stream = demuxer.stream(index) else { continue }
            let isStill = stillFormat && demuxer.streamCount == 1 && stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO
                && stream.pointee.nb_frames <= 1
            let orientation = isStill ? ((try? ImageLoader.probe(path))?.orientation ?? .up) : nil
            built.append(AssetTrack(stream: stream, index: index, path: path, start: demuxer.startTime(ofStream: index), stillOrientation: orientation))
        }
        if formatName == "mp3" {
            for track in built where track.mediaType == .audio {
                guard let end = Asset.decodedEnd(of: track, path: path), end < track.timeRange.end else { continue }
                track.timeRange = TimeRange(from: track.timeRange.start, to: end)
            }
        }
        var end = MediaTime.zero
        for track in built where track.mediaType == .video || track.mediaType == .audio {
            end = MediaTime.max(end, track.timeRange.end)
        }
        if end == .zero, format.duration > 0 {
            end = MediaTime(value: format.duration, timescale: AV_TIME_BASE)
        }
        if built.allSatisfy({ $0.timeRange.duration == .zero }) {
            end = try Asset.scanDuration(demuxer, tracks: &built)
        }
        duration = end
        startTimecode = Asset.startTimecode(demuxer, video: built.first { $0.mediaType == .video && !$0.isStillImage })
        tracks = built
        for track in tracks {
            track.asset = self
            track.assetDuration = end
        }
        if !tracks.contains(where: { $0.mediaType == .video || $0.mediaType == .audio }) {
            throw EngineError("input \"\(path)\": contains no audio or video stream", kind: .decode, subject: path)
        }
    }

    /// The tracks of one media type, in stream order (`AVAsset.tracks(withMediaType:)`).
    public func tracks(withMediaType type: MediaType) -> [AssetTrack] { tracks.filter { $0.mediaType == type } }
    /// The track with `trackID` `id`; nil when there is none (`AVAsset.track(withTrackID:)`).
    public func track(withID id: Int) -> AssetTrack? { tracks.first { $0.trackID == id } }

    /// A QuickTime timecode track's own tag (FFmpeg copies it onto the streams it labels),
    /// naming the track's start; else the video stream's or the container's (MXF, Matroska),
    /// naming the first video frame. Counted at the timecode track's rate, else the video's.
    private static func startTimecode(_ demuxer: Demuxer, video: AssetTrack?) -> Timecode? {
        guard let video, let videoStream = demuxer.stream(video.streamIndex) else { return nil }
        let tag = { (stream: UnsafeMutablePointer<AVStream>) in av_dict_get(stream.pointee.metadata, "timecode", nil, 0).map { String(cString: $0.pointee.value) } }
        let streams = (0..<demuxer.streamCount).compactMap { demuxer.stream($0) }
        let (text, origin, rate): (String, MediaTime, AVRational)
        if let track = streams.first(where: { $0.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_DATA && tag($0) != nil }), let stamp = tag(track) {
            (text, origin, rate) = (stamp, demuxer.startTime(ofStream: Int(track.pointee.index)) ?? .zero, track.pointee.avg_frame_rate.isValid ? track.pointee.avg_frame_rate : videoStream.pointee.avg_frame_rate)
        } else if let stamp = tag(videoStream) ?? demuxer.tag("timecode") {
            (text, origin, rate) = (stamp, video.timeRange.start, videoStream.pointee.avg_frame_rate.isValid ? videoStream.pointee.avg_frame_rate : videoStream.pointee.r_frame_rate)
        } else {
            return nil
        }
        guard let frameDuration = rate.frameDuration else { return nil }
        return Timecode(text, frameDuration: frameDuration, origin: origin)
    }

    static func dictionary(_ dict: OpaquePointer?) -> [String: String] {
        var result: [String: String] = [:]
        var entry: UnsafeMutablePointer<AVDictionaryEntry>? = nil
        while let next = av_dict_get(dict, "", entry, AV_DICT_IGNORE_SUFFIX) {
            result[String(cString: next.pointee.key)] = String(cString: next.pointee.value)
            entry = next
        }
        return result
    }

    /// Whether the file at `path` opens as media and its packets reach the duration its
    /// header states (within a quarter of a second): a file cut short (a killed copy, a full
    /// disk, a truncated download) often keeps its header and loses its last packets.
    package static func isWhole(_ path: String) -> Bool {
        guard let asset = try? Asset(path: path), asset.duration > .zero, let demuxer = try? Demuxer(path: path) else { return false }
        var end = MediaTime.zero
        let timed = Set(asset.tracks.filter { $0.mediaType == .video || $0.mediaType == .audio }.map(\.streamIndex))
        try? demuxer.forEachPacket { packet in
            let index = Int(packet.pointee.stream_index)
            guard timed.contains(index), let stream = demuxer.stream(index), packet.pointee.pts != MOON_AV_NOPTS_VALUE else { return true }
            end = MediaTime.max(end, MediaTime(pts: packet.pointee.pts + max(packet.pointee.duration, 0), timeBase: stream.pointee.time_base))
            return true
        }
        // The container's own figure (Matroska's Duration), which a cut file keeps; the
        // asset's own is measured from the packets when the streams state none.
        let stated = demuxer.context.pointee.duration > 0
            ? MediaTime(value: demuxer.context.pointee.duration, timescale: AV_TIME_BASE) : asset.duration
        return end + MediaTime(value: 1, timescale: 4) >= stated
    }

    /// Where an MP3's sound ends, as its last frames decode: FFmpeg's duration counts the
    /// frames whole, with the encoder's delay and padding (LAME's 1105 + 47 samples: 2.808 s
    /// for fixture 10's 2.784 s of sound), so a whole MP3 ended in silence and two joined had
    /// a gap. Only the last two seconds are decoded.
    private static func decodedEnd(of track: AssetTrack, path: String) -> MediaTime? {
        guard let reader = try? StreamReader(path: path, streamIndex: track.streamIndex, threading: .single) else { return nil }
        try? reader.seek(before: MediaTime.max(.zero, track.timeRange.end - MediaTime(value: 2, timescale: 1)))
        var end: MediaTime?
        while let frame = try? reader.nextFrame() {
            let picture = frame.pointer.pointee
            guard picture.sample_rate > 0 else { continue }
            end = reader.time(of: frame) + MediaTime(value: Int64(picture.nb_samples), timescale: picture.sample_rate)
        }
        return end
    }

    /// Files without a duration in their header (Chrome's MediaRecorder WebM) are measured
    /// by reading packet timestamps to the end; only packets are read, nothing is decoded.
    private static func scanDuration(_ demuxer: Demuxer, tracks: inout [AssetTrack]) throws -> MediaTime {
        var ends = [Int: MediaTime]()
        try demuxer.forEachPacket { packet in
            let index = Int(packet.pointee.stream_index)
            guard let stream = demuxer.stream(index), packet.pointee.pts != MOON_AV_NOPTS_VALUE else { return true }
            let end = MediaTime(pts: packet.pointee.pts + max(packet.pointee.duration, 0), timeBase: stream.pointee.time_base)
            ends[index] = MediaTime.max(ends[index] ?? .zero, end)
            return true
        }
        var overall = MediaTime.zero
        for track in tracks {
            guard let end = ends[track.streamIndex] else { continue }
            track.timeRange = TimeRange(from: track.timeRange.start, to: end)
            if track.mediaType == .video || track.mediaType == .audio { overall = MediaTime.max(overall, end) }
        }
        return overall
    }
}

/// One stream of an asset, like `AVAssetTrack`.
public final class AssetTrack: @unchecked Sendable, StoredPicture {
    // Written only while the owning Asset is being created; immutable once published.
    /// The asset the track belongs to; weak, so nil once the asset is released.
    public weak var asset: Asset?
    /// The asset's file path.
    public let path: String
    /// FFmpeg's 0-based index of the stream in the file.
    public let streamIndex: Int
    /// 1-based, as in the container for MP4/MOV (FFmpeg's stream id when it has one).
    public let trackID: Int
    /// What the track holds.
    public let mediaType: MediaType
    /// Where the track's media lies in the asset's time (`AVAssetTrack.timeRange`); the
    /// start may be after zero. Zero duration when the file does not say.
    public internal(set) var timeRange: TimeRange
    /// The duration of the asset this track belongs to: insertions may reach that far.
    public internal(set) var assetDuration: MediaTime = .zero
    /// Stored (coded) picture size, before the preferred transform.
    public let naturalSize: Size
    /// Maps the stored frame onto the upright picture with its top-left corner at (0, 0).
    public let preferredTransform: AffineTransform
    /// The stored pixels' width over their height (the sample aspect ratio): 1 for square
    /// pixels, as phones record; 64/45 for 16:9 PAL DV stored 720×576. Drawing does not
    /// stretch by it (an export says so).
    public let pixelAspectRatio: Double
    /// Frames per second as the file states it (average rate, else the base rate); 30 for a
    /// still image, 0 for tracks other than video.
    public let nominalFrameRate: Double
    /// Units per second of the stream's time base (`AVAssetTrack.naturalTimeScale`), e.g.
    /// 90000 or the sample rate.
    public let naturalTimeScale: Int32
    /// FFmpeg's codec name: "h264", "hevc", "aac", "mjpeg", "mov_text", …
    public let codec: String
    /// Samples per second of an audio track; 0 for other tracks.
    public let sampleRate: Int
    /// Number of audio channels; 0 for other tracks.
    public let channelCount: Int
    /// Bits per sample of a lossless audio track (PCM, FLAC, ALAC: 16, 24, 32); 0 for lossy
    /// audio (AAC, MP3, Opus), whose samples have no depth of their own, and other tracks.
    public let losslessBits: Int
    /// FFmpeg's pixel format name of a video track ("yuv420p", "yuv420p10le"); empty for
    /// other tracks.
    public let pixelFormat: String
    /// Bits per colour sample of a video track (8, 10, …); 0 for other tracks.
    public let bitsPerComponent: Int
    /// How the video's numbers are to be read as colours (nil for other media types).
    public let color: VideoColor?
    /// Whether the pictures are whole frames or interlaced fields, as the file says
    /// (`.unknown` for other tracks).
    public let fieldOrder: FieldOrder
    /// Number of frames (or packets) the container declares; 0 when it does not say.
    public let frameCount: Int
    /// A photo (JPEG, PNG, WebP…) as a video track: one picture that can be inserted for
    /// any duration; `timeRange` is a nominal `Asset.stillImageDuration`.
    public let isStillImage: Bool
    let timeBase: AVRational
    /// The rate `nominalFrameRate` reads, as the file states it.
    private let frameRate: AVRational

    /// `start`: where the stream starts in the file's times (`Demuxer.startTime(ofStream:)`).
    init(stream: UnsafeMutablePointer<AVStream>, index: Int, path: String, start: MediaTime?, stillOrientation: ExifOrientation? = nil) {
        let parameters = stream.pointee.codecpar.pointee
        self.path = path
        streamIndex = index
        trackID = stream.pointee.id > 0 ? Int(stream.pointee.id) : index + 1
        timeBase = stream.pointee.time_base
        naturalTimeScale = timeBase.num == 1 ? timeBase.den : Int32(clamping: Int64(timeBase.den) / Int64(max(timeBase.num, 1)))
        codec = avcodec_get_name(parameters.codec_id).map { String(cString: $0) } ?? "unknown"
        let isCoverArt = stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0
        switch parameters.codec_type {
        case AVMEDIA_TYPE_VIDEO: mediaType = isCoverArt ? .image : .video
        case AVMEDIA_TYPE_AUDIO: mediaType = .audio
        case AVMEDIA_TYPE_SUBTITLE: mediaType = parameters.codec_id == AV_CODEC_ID_MOV_TEXT ? .text : .subtitle
        default: mediaType = .metadata
        }
        naturalSize = Size(width: Double(parameters.width), height: Double(parameters.height))
        // The stored pixels' shape (anamorphic DV and HDV: 64:45, 4:3); unknown is square.
        let aspect = parameters.sample_aspect_ratio.num > 0 ? parameters.sample_aspect_ratio : stream.pointee.sample_aspect_ratio
        pixelAspectRatio = aspect.num > 0 && aspect.den > 0 ? Double(aspect.num) / Double(aspect.den) : 1
        sampleRate = Int(parameters.sample_rate)
        channelCount = Int(parameters.ch_layout.nb_channels)
        // Lossless only: DTS says both (its lossy core has no depth of its own).
        let lossless = avcodec_descriptor_get(parameters.codec_id).map { $0.pointee.props & AV_CODEC_PROP_LOSSLESS != 0 && $0.pointee.props & AV_CODEC_PROP_LOSSY == 0 } ?? false
        if mediaType == .audio, lossless {
            let stored = Int(av_get_bytes_per_sample(AVSampleFormat(parameters.format))) * 8
            losslessBits = Int(parameters.bits_per_raw_sample > 0 ? parameters.bits_per_raw_sample
                               : parameters.bits_per_coded_sample > 0 ? parameters.bits_per_coded_sample : Int32(stored))
        } else {
            losslessBits = 0
        }
        fieldOrder = mediaType == .video ? FieldOrder.of(parameters, path: path, streamIndex: index) : .unknown
        let format = AVPixelFormat(parameters.format)
        if mediaType == .video, let descriptor = av_pix_fmt_desc_get(format) {
            pixelFormat = String(cString: descriptor.pointee.name)
            bitsPerComponent = Int(descriptor.pointee.comp.0.depth)
            var color = VideoColor(parameters: parameters, stream: stream)
            if color.hdr == .pq, let first = try? HDRStaticMetadata.firstFrame(path: path, streamIndex: index) {
                // An HEVC camera file states HDR10's metadata in its SEI only, and HDR10+'s is in
                // every frame's. A first frame that cannot be decoded leaves them unknown: the
                // export decoding it will say why.
                color.hdrMetadata = color.hdrMetadata ?? first.metadata
                color.hdr10Plus = first.hdr10Plus
            }
            self.color = color
        } else {
            pixelFormat = ""
            bitsPerComponent = 0
            color = nil
        }
        let shown = mediaType == .video ? AssetTrack.framesShown(stream) : nil
        let rate = shown?.rate ?? (stream.pointee.avg_frame_rate.isValid ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate)
        frameCount = shown?.count ?? Int(stream.pointee.nb_frames)
        isStillImage = stillOrientation != nil
        if let stillOrientation {
            (nominalFrameRate, frameRate) = (30, AVRational(num: 30, den: 1))
            timeRange = TimeRange(start: .zero, duration: Asset.stillImageDuration)
            preferredTransform = AssetTrack.upright(stillOrientation.transform, size: naturalSize)
            return
        }
        (nominalFrameRate, frameRate) = mediaType == .video ? (rate.doubleValue, rate) : (0, AVRational(num: 0, den: 1))
        let start = start ?? .zero
        var duration = MediaTime.zero
        if stream.pointee.duration > 0 {
            duration = MediaTime(pts: stream.pointee.duration, timeBase: timeBase)
        }
        timeRange = TimeRange(start: start, duration: duration)
        preferredTransform = AssetTrack.uprightTransform(
            displayMatrix: moon_stream_display_matrix(stream), size: naturalSize)
    }

    /// The frames an edit list shows, counted and timed from the container's index (MP4 and
    /// MOV list every frame, and mark those the edit hides), when FFmpeg's average, which
    /// counts the hidden ones too, is more than 1 % off theirs: an iPhone clip trimmed in
    /// Photos keeps 9 hidden frames, 86 over the edit's 2.55 s (28.03 fps) where the 77 shown
    /// are 29.98 fps, and an export at 28 dropped five of them. Their average rate, from
    /// their decoding times (the index's) less the first and last few where B-frames displace
    /// them from where they are shown (two frames at each end of that clip: 29.2 fps); nil
    /// when the index hides none, or shows under 16 frames.
    private static func framesShown(_ stream: UnsafeMutablePointer<AVStream>) -> (count: Int, rate: AVRational)? {
        guard let (shown, listed) = indexedFrames(stream), shown.count >= 16, shown.count < listed else { return nil }
        // Frames B-frames displace at each end: the reorder depth and one, at most 4.
        let delay = Int(stream.pointee.codecpar.pointee.video_delay), edge = delay > 0 ? min(4, delay + 1) : 0
        let (first, last) = (shown[edge], shown[shown.count - 1 - edge])
        guard last > first else { return nil }
        let rate = Double(shown.count - 1 - 2 * edge) / MediaTime(pts: last - first, timeBase: stream.pointee.time_base).seconds
        let stated = stream.pointee.avg_frame_rate
        if stated.isValid, abs(rate / stated.doubleValue - 1) <= 0.01 { return nil }
        return (shown.count, av_d2q(rate, 1_000_000))
    }

    /// When each frame of video stream `streamIndex` of `path` is shown, in order, where the
    /// container's index says so exactly: an MP4 or MOV lists every frame, and without
    /// B-frames its decoding times are the showing times. Frames an edit list hides are left
    /// out. Nil otherwise (Matroska lists keyframes only; B-frames reorder). Read once per file.
    package static func frameTimes(path: String, streamIndex: Int) -> [MediaTime]? {
        listedFrameTimes.value(for: path, part: streamIndex) {
            guard let demuxer = try? Demuxer(path: path), demuxer.context.pointee.iformat.map({ String(cString: $0.pointee.name).hasPrefix("mov") }) == true,
                  let stream = demuxer.stream(streamIndex), stream.pointee.codecpar.pointee.video_delay == 0,
                  let (shown, _) = indexedFrames(stream), shown.count > 1 else { return nil }
            return shown.map { MediaTime(pts: $0, timeBase: stream.pointee.time_base) }
        }
    }

    private static let listedFrameTimes = FileFacts<[MediaTime]?>()

    /// The decoding times of the frames the container's index lists and no edit list hides,
    /// in order, and how many it lists; nil unless it lists every frame the stream counts (a
    /// fragmented MP4, a recording's, lists only what was read so far; Matroska, keyframes).
    private static func indexedFrames(_ stream: UnsafeMutablePointer<AVStream>) -> (shown: [Int64], listed: Int)? {
        let entries = (0..<avformat_index_get_entries_count(stream)).compactMap { avformat_index_get_entry(stream, $0)?.pointee }
        guard stream.pointee.nb_frames > 0, entries.count >= stream.pointee.nb_frames else { return nil }
        return (entries.filter { $0.flags & AVINDEX_DISCARD_FRAME == 0 }.map(\.timestamp).sorted(), entries.count)
    }

    /// One frame at the nominal rate, exactly as the file states it (1001/30000 s at 29.97
    /// fps; 1/30 s when the rate is unknown or past 1000 fps): gaps shorter than this are
    /// timestamp jitter, not missing pictures. (Scripts get the standard rate it stands for:
    /// `VideoComposition.frameDuration(forRate:)`.)
    package var nominalFrameDuration: MediaTime {
        guard nominalFrameRate >= 1, nominalFrameRate <= 1000, let duration = frameRate.frameDuration else { return MediaTime(value: 1, timescale: 30) }
        return duration
    }

    /// Refuses ranges that leave the asset (not merely this track's media), with timestamps
    /// rounded from seconds given a millisecond of slack.
    package func checkInsideAsset(_ range: TimeRange) throws {
        if isStillImage {
            guard !range.start.isNegative else { throw EngineError("a still image starts at 0 s; got a range from \(range.start.seconds) s") }
            return
        }
        let slack = MediaTime(value: 1, timescale: 1000)
        let earliest = MediaTime.min(.zero, timeRange.start)
        guard range.start >= earliest - slack, range.end <= assetDuration + slack else {
            throw EngineError("time range \(shortSeconds(range.start))…\(shortSeconds(range.end)) s is outside the asset (\(shortSeconds(earliest))…\(shortSeconds(assetDuration)) s)")
        }
    }

    /// The stored picture turned upright, pixels counted as square (for what it shows,
    /// non-square pixels at their shape: `shownSize`).
    public var uprightSize: Size { preferredTransform.apply(Rect(x: 0, y: 0, width: naturalSize.width, height: naturalSize.height)).size }

    /// What the picture shows: upright, and non-square pixels at their shape (`StoredPicture`).
    public var shownSize: Size { shownSize(preferredTransform: preferredTransform) }

    /// True when the upright picture is taller than wide (a phone video shot upright).
    public var isPortrait: Bool { uprightSize.height > uprightSize.width }

    /// The display matrix's rotation/flip, with the translation recomputed so the picture's
    /// top-left lands at (0, 0) (iPhone files carry that translation, FFmpeg and Android don't).
    static func uprightTransform(displayMatrix: UnsafePointer<Int32>?, size: Size) -> AffineTransform {
        guard let m = displayMatrix else { return .identity }
        // 16.16 fixed point; snap to exact quarter turns, the only rotations cameras write.
        func component(_ i: Int) -> Double {
            let value = Double(m[i]) / 65536
            for snap in [-1.0, 0, 1] where abs(value - snap) < 1e-3 { return snap }
            return value
        }
        return upright(AffineTransform(a: component(0), b: component(1), c: component(3), d: component(4), tx: 0, ty: 0), size: size)
    }

    /// `turn` with the translation that puts the turned picture's top-left corner at (0, 0).
    static func upright(_ turn: AffineTransform, size: Size) -> AffineTransform {
        var transform = turn
        guard transform.determinant != 0 else { return .identity }
        let box = transform.apply(Rect(x: 0, y: 0, width: size.width, height: size.height))
        transform.tx = -box.x
        transform.ty = -box.y
        return transform
    }
}

package func buildTimesProbe20803() {}
