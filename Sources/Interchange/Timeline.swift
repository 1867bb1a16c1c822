import MoonreelEngine

/// An edit as editors exchange it: tracks of clips, gaps and transitions, the model of
/// OpenTimelineIO (and of FCPXML's spine and a CMX 3600 EDL, which hold less). Made from a
/// composition with `Timeline.init(composition:…)`, written with `TimelineFormat`, and
/// read back into a composition with `TimelineAssembly`.
///
/// Times are exact: a clip's `sourceRange` is in its media's own time (counted from the
/// file's start timecode, as editors count it), `duration` is what it takes on the track
/// (they differ when the clip plays faster or slower).
public struct Timeline: Sendable, Equatable {
    /// A track: video or audio items one after another from time 0.
    public struct Track: Sendable, Equatable {
        /// `.video` or `.audio`.
        public var kind: MediaType
        /// "V1", "A2"… or the name the file gave.
        public var name: String
        /// Clips and gaps in order; a transition stands between the two items it joins.
        public var items: [Item]

        /// A track of `kind` named `name` holding `items`.
        public init(kind: MediaType, name: String, items: [Item]) {
            (self.kind, self.name, self.items) = (kind, name, items)
        }

        /// The track's length: its clips and gaps (a transition takes no time of its own).
        public var duration: MediaTime {
            items.reduce(.zero) { total, item in
                switch item {
                case .clip(let clip): total + clip.duration
                case .gap(let length): total + length
                case .transition: total
                }
            }
        }
    }

    /// One piece of a track.
    public enum Item: Sendable, Equatable {
        /// Media played.
        case clip(Clip)
        /// Nothing (black, silence) for this long.
        case gap(MediaTime)
        /// The items before and after it overlap around their cut.
        case transition(TimelineTransition)
    }

    /// A stretch of one media file.
    public struct Clip: Sendable, Equatable {
        /// The clip's name (the file's name unless the timeline gave another).
        public var name: String
        /// The media file, absolute or as the timeline file wrote it.
        public var path: String
        /// The part of the media played, in the media's own time as editors count it: from
        /// the file's start timecode when it has one (`Asset.startTimecode`).
        public var sourceRange: TimeRange
        /// The time it takes on the track: `sourceRange.duration` unless it plays faster or slower.
        public var duration: MediaTime
        /// The media's whole extent, when known (editors show the handles).
        public var availableRange: TimeRange?
        /// Marks on the clip, in the track's time.
        public var markers: [Marker] = []
        /// What the clip does that the format holds only as a named effect (an opacity ramp).
        public var effects: [Effect] = []

        /// A clip of `sourceRange` of the file at `path`, taking `duration` on its track.
        public init(name: String, path: String, sourceRange: TimeRange, duration: MediaTime, availableRange: TimeRange? = nil) {
            (self.name, self.path, self.sourceRange, self.duration, self.availableRange) = (name, path, sourceRange, duration, availableRange)
        }

        /// How much faster than normal the media plays (2: twice as fast); 1 unchanged.
        public var speed: Double { duration.value > 0 ? sourceRange.duration.seconds / duration.seconds : 1 }
    }

    /// A named mark over a stretch of time (a lyric line, a chapter).
    public struct Marker: Sendable, Equatable {
        /// The mark's text.
        public var name: String
        /// Where it lies, in the time of what holds it (the timeline's for the timeline's own marks).
        public var range: TimeRange
        /// A longer note, or empty.
        public var comment: String

        /// A mark `name` over `range`.
        public init(name: String, range: TimeRange, comment: String = "") {
            (self.name, self.range, self.comment) = (name, range, comment)
        }
    }

    /// A change over time that the format has no standard place for, kept by name.
    public struct Effect: Sendable, Equatable {
        /// "Opacity", "Volume".
        public var name: String
        /// The value `from` at `range.start` moving in a line to `to` at `range.end`, in the
        /// track's time.
        public var from: Double
        /// The value at the end of the ramp.
        public var to: Double
        /// When the ramp plays, in the track's time.
        public var range: TimeRange

        /// A ramp of `name` from `from` to `to` over `range`.
        public init(name: String, from: Double, to: Double, range: TimeRange) {
            (self.name, self.from, self.to, self.range) = (name, from, to, range)
        }
    }

    /// The timeline's name (the project's, in an editor).
    public var name: String
    /// Video tracks first (the bottom one first), then audio.
    public var tracks: [Track]
    /// Marks of the whole timeline (cue lines), in its time.
    public var markers: [Marker]
    /// The time of one frame, for formats that count frames (FCPXML, EDL).
    public var frameDuration: MediaTime
    /// The picture size, for formats that state it (FCPXML).
    public var renderSize: Size
    /// Whether timecodes are labelled drop-frame (an edit at 29.97 or 59.94 fps of sources a
    /// camera stamped so), for formats that label frames (an EDL, FCPXML's display).
    public var dropFrame = false
    /// Each source file's start timecode, by path, for formats that write source timecode in
    /// the timeline's own count (an EDL), which differs from a file's at another rate.
    var sourceTimecodes: [String: Timecode] = [:]

    /// A timeline of `tracks`.
    public init(name: String, tracks: [Track], markers: [Marker] = [], frameDuration: MediaTime, renderSize: Size) {
        (self.name, self.tracks, self.markers, self.frameDuration, self.renderSize) = (name, tracks, markers, frameDuration, renderSize)
    }

    /// The longest track.
    public var duration: MediaTime { tracks.map(\.duration).max() ?? .zero }
}

/// How two items of a track give way to each other.
public struct TimelineTransition: Sendable, Equatable {
    /// What the pictures (or sounds) do.
    public enum Kind: String, Sendable, CaseIterable {
        /// One fades into the other (OpenTimelineIO's SMPTE_Dissolve; a crossfade for sound).
        case dissolve
        /// An edge sweeps across (SMPTE wipe 1).
        case wipe
    }
    /// What the transition does.
    public var kind: Kind
    /// How much of it comes before the cut (the outgoing item's last moments).
    public var inOffset: MediaTime
    /// How much comes after the cut (the incoming item's first moments).
    public var outOffset: MediaTime

    /// A `kind` transition around a cut, `inOffset` before it and `outOffset` after.
    public init(kind: Kind, inOffset: MediaTime, outOffset: MediaTime) {
        (self.kind, self.inOffset, self.outOffset) = (kind, inOffset, outOffset)
    }

    /// How long the two items overlap.
    public var duration: MediaTime { inOffset + outOffset }
}
