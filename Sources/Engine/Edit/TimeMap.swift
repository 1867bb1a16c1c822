import MoonreelMedia

/// Where the times of a composition went in an edit that moved them (`removeSilences`,
/// `scaleTimeRange`), or where a clip's times went in a sequence (`av.join`,
/// `av.cutToBeats` parts): each kept stretch of the time before and where it lies now. Cues and
/// marks read for the time before are carried through it: an episode's SRT drawn over the
/// talk with its pauses cut out drifted by up to 11.7 s.
public struct TimeMap: Sendable, Equatable {
    /// A stretch of the time before, and where it now plays (longer or shorter when scaled).
    public struct Piece: Sendable, Equatable {
        /// The stretch in the time before the edit.
        public let before: TimeRange
        /// Where it plays now.
        public let after: TimeRange
    }

    /// The kept stretches, in order; between them, time that was removed.
    public let pieces: [Piece]
    /// The composition's end before the edit and after it: time past it (a cue after the
    /// media) moves with it. Nil for a clip placed in a sequence: only its pieces are shown.
    public let end: (before: MediaTime, after: MediaTime)?

    /// A map from these pieces (in order, not overlapping) of a composition that ended at
    /// `end.before` and now ends at `end.after`.
    public init(pieces: [Piece], end: (before: MediaTime, after: MediaTime)?) {
        self.pieces = pieces
        self.end = end
    }

    /// The same pieces and the same ends.
    public static func == (a: TimeMap, b: TimeMap) -> Bool {
        a.pieces == b.pieces && a.end?.before == b.end?.before && a.end?.after == b.end?.after
    }

    /// Where time `t` (before the edit) is now; nil inside a stretch that was removed.
    public func map(_ t: MediaTime) -> MediaTime? {
        guard let piece = extended.first(where: { $0.before.start <= t && t < $0.before.end }) else { return nil }
        return Self.place(t, in: piece)
    }

    /// Where the kept part of `range` is now, from its first kept moment to the end of its
    /// last; nil when all of it was removed.
    public func map(_ range: TimeRange) -> TimeRange? {
        let kept = extended.filter { $0.before.start < range.end && range.start < $0.before.end }
        guard let first = kept.first, let last = kept.last else { return nil }
        let start = Self.place(MediaTime.max(range.start, first.before.start), in: first)
        let end = Self.place(MediaTime.min(range.end, last.before.end), in: last)
        return TimeRange(from: start, to: MediaTime.max(start, end))
    }

    /// The pieces, and after them the time past the composition's end.
    private var extended: [Piece] {
        guard let end else { return pieces }
        let rest = MediaTime(value: 1 << 40, timescale: 1)
        return pieces + [Piece(before: TimeRange(start: end.before, duration: rest), after: TimeRange(start: end.after, duration: rest))]
    }

    private static func place(_ t: MediaTime, in piece: Piece) -> MediaTime {
        let into = t - piece.before.start
        return piece.after.start + (piece.after.duration == piece.before.duration
                                    ? into : into.multiplied(by: piece.after.duration, dividedBy: piece.before.duration))
    }

    /// The map of cutting `removed` (in order, not overlapping) out of `duration`.
    public static func removing(_ removed: [TimeRange], from duration: MediaTime) -> TimeMap {
        var pieces: [Piece] = [], kept = MediaTime.zero, position = MediaTime.zero
        for cut in removed + [TimeRange(start: duration, duration: .zero)] {
            if cut.start > position {
                let stretch = TimeRange(from: position, to: cut.start)
                pieces.append(Piece(before: stretch, after: TimeRange(start: kept, duration: stretch.duration)))
                kept = kept + stretch.duration
            }
            position = MediaTime.max(position, cut.end)
        }
        return TimeMap(pieces: pieces, end: (duration, kept))
    }

    /// The map of playing `range` in `newDuration`, in a composition of `duration`.
    public static func scaling(_ range: TimeRange, to newDuration: MediaTime, in duration: MediaTime) -> TimeMap {
        var pieces: [Piece] = []
        if range.start > .zero {
            let before = TimeRange(from: .zero, to: range.start)
            pieces.append(Piece(before: before, after: before))
        }
        pieces.append(Piece(before: range, after: TimeRange(start: range.start, duration: newDuration)))
        if duration > range.end {
            let after = TimeRange(from: range.end, to: duration)
            pieces.append(Piece(before: after, after: TimeRange(start: range.start + newDuration, duration: after.duration)))
        }
        return TimeMap(pieces: pieces, end: (MediaTime.max(duration, range.end), MediaTime.max(duration, range.end) + newDuration - range.duration))
    }
}
