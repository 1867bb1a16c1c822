import MoonreelComposition
import MoonreelMedia

public extension Composition {
    /// Cuts the pauses out of a talk: each of `silences` (composition time, e.g. from
    /// `AudioAnalysis.silences`), less `margin` at each side that touches sound, is removed from
    /// every track, picture and sound together (auto-editor's margin: a breath of quiet stays
    /// around each phrase). Each join gets the mixer's short splice fade, so it does not click.
    /// Returns the ranges removed, in the composition's time before the change, in order;
    /// a silence no longer than twice the margin is kept.
    @discardableResult
    func removeSilences(_ silences: [TimeRange], margin: MediaTime) throws -> [TimeRange] {
        guard !margin.isNegative else { throw EngineError("the margin must not be negative, got \(margin.seconds) s", kind: .invalidArgument) }
        var removed: [TimeRange] = []
        for silence in silences.sorted(by: { $0.start < $1.start }) {
            guard let cut = cut(of: silence, margin: margin) else { continue }
            if let last = removed.last, cut.start <= last.end {
                removed[removed.count - 1] = TimeRange(from: last.start, to: MediaTime.max(last.end, cut.end))
            } else {
                removed.append(cut)
            }
        }
        // From the last to the first, so each range is still where it was.
        for range in removed.reversed() { try removeTimeRange(range) }
        return removed
    }

    /// What `removeSilences` cuts of `silence`: the part inside the composition, less `margin`
    /// at each side that touches sound; nil when nothing is left (outside, or no longer than
    /// twice the margin).
    func cut(of silence: TimeRange, margin: MediaTime) -> TimeRange? {
        let end = duration
        guard let inside = silence.intersection(TimeRange(start: .zero, duration: end)) else { return nil }
        let start = inside.start > .zero ? inside.start + margin : inside.start
        let finish = inside.end < end ? inside.end - margin : inside.end
        return start < finish ? TimeRange(from: start, to: finish) : nil
    }
}
