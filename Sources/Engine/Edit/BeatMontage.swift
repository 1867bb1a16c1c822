import MoonreelComposition
import MoonreelMedia

/// Clips cut to the beat: a joined sequence whose cuts land on given times (beats from
/// `AudioAnalysis`, every one or every few), the clips taken in turn, over music.
public enum BeatMontage {
    /// The most stretches a montage may have (as many items as `av.join` takes).
    public static let maxStretches = 10_000
    /// The shortest stretch a cut may leave: a tenth of a second, 3 frames at 30 fps. The
    /// beat tracker's fastest tempo (208 BPM) puts beats 0.29 s apart, so only a cut a few
    /// milliseconds from the start or the end (a beat at 0.003 s gave clip 1 one frame) or
    /// a hand-made list is merged; shorter, a stretch is a flash of one or two frames.
    public static let minimumStretch = MediaTime(value: 1, timescale: 10)

    /// A montage and what was changed from the cuts it was given.
    public struct Made {
        /// The joined clips.
        public let sequence: JoinedSequence
        /// A `cutLeftOut` note naming the cuts that would have left a stretch shorter than `minimumStretch`.
        public let notes: [Diagnostic]
    }

    /// The times the stretches start and end, from 0 to `duration`: the cuts inside, in
    /// order, less each that would leave a stretch shorter than `minimumStretch` (its time
    /// joins the stretch before it; near the end, the one after).
    static func bounds(cuts: [MediaTime], duration: MediaTime) -> (bounds: [MediaTime], leftOut: [MediaTime]) {
        var bounds = [MediaTime.zero], leftOut: [MediaTime] = []
        for cut in cuts where cut > .zero && cut < duration {
            if cut - bounds[bounds.count - 1] < minimumStretch || duration - cut < minimumStretch {
                leftOut.append(cut)
            } else {
                bounds.append(cut)
            }
        }
        return (bounds + [duration], leftOut)
    }

    /// Stretches between `cuts` (composition times; those outside 0…`duration` are ignored),
    /// each filled by the next of `clips` in turn (asset and optional range). A clip used again
    /// goes on from where its last stretch ended, from the start of its range again when what
    /// is left is too short. With a transition, its middle is on the cut. `music`: an audio
    /// track laid from 0 under the whole montage, in place of the clips' own sound. `drawing`:
    /// a transition effect's motions for each join, as `JoinedSequence.make` takes them.
    public static func make(clips: [(asset: Asset, range: TimeRange?)], cuts: [MediaTime], duration: MediaTime,
                            transition: Transition = .cut, music: AssetTrack? = nil, renderSize: Size? = nil,
                            placement: VideoComposition.Placement = .fit,
                            drawing: TransitionDrawing? = nil) throws -> Made {
        guard !clips.isEmpty else { throw EngineError("no clips to cut to the beat", kind: .invalidArgument) }
        guard duration.value > 0 else { throw EngineError("the montage must last more than 0 s", kind: .invalidArgument) }
        let (bounds, leftOut) = self.bounds(cuts: cuts.sorted(), duration: duration)
        guard bounds.count - 1 <= maxStretches else {
            throw EngineError("\(bounds.count - 2) cuts make more than \(maxStretches) stretches; cut less often (a larger every)", kind: .limit)
        }
        let half = transition.duration.multiplied(by: .units(1, of: 1), dividedBy: .units(2, of: 1))
        var positions = [MediaTime](repeating: .zero, count: clips.count)
        var items: [SequenceItem] = []
        var notes = leftOut.isEmpty ? [] : [Self.leftOutNote(leftOut)]
        if let pastEnd = Self.pastEndNote(cuts.sorted().filter { $0 > duration }, duration: duration) { notes.append(pastEnd) }
        var repeated = Set<Int>()
        for stretch in 0..<(bounds.count - 1) {
            let lead = stretch > 0 ? half : .zero, tail = stretch + 2 < bounds.count ? half : .zero
            let length = bounds[stretch + 1] - bounds[stretch] + lead + tail
            let which = stretch % clips.count
            let (asset, requested) = clips[which]
            if asset.isStillImage {
                items.append(.clip(asset, TimeRange(start: .zero, duration: length)))
                continue
            }
            let range = requested ?? TimeRange(start: .zero, duration: asset.duration)
            guard length <= range.duration else {
                    let remedy = stretch + 2 == bounds.count && stretch > 0
                    ? ", after the last cut; end the montage sooner (duration) or give a longer clip"
                    : "; cut on more beats (a smaller `every`) or give a longer clip"
                throw EngineError("clip \(which + 1) (\"\(asset.path)\") lasts \(ms(range.duration)) s, shorter than the "
                                  + "\(ms(length)) s from \(ms(bounds[stretch])) s to \(ms(bounds[stretch + 1])) s\(remedy)", kind: .invalidArgument)
            }
            if range.start + positions[which] + length > range.end {
                positions[which] = .zero
                if repeated.insert(which).inserted {
                    notes.append(Diagnostic(.cutLeftOut, .note, "clip \(which + 1) (\"\(asset.path)\") is shown again from the start of its range at \(ms(bounds[stretch])) s: what is left of it is shorter than the \(ms(length)) s stretch",
                                            remedy: "give more or longer clips if no shot should repeat", time: bounds[stretch].seconds))
                }
            }
            items.append(.clip(asset, TimeRange(start: range.start + positions[which], duration: length)))
            positions[which] = positions[which] + length
        }
        let joined = try JoinedSequence.make(items, transitions: Array(repeating: transition, count: items.count - 1),
                                             renderSize: renderSize, placement: placement, withSound: music == nil, drawing: drawing)
        if let music {
            let laid = TimeRange(start: music.timeRange.start, duration: MediaTime.min(duration, music.timeRange.duration))
            try joined.composition.addMutableTrack(mediaType: .audio).insertTimeRange(laid, of: music, at: .zero)
        }
        return Made(sequence: joined, notes: notes + joined.notes)
    }

    /// One note for all the cuts left out (a hand-made list may hold thousands), naming the first few.
    private static func leftOutNote(_ cuts: [MediaTime]) -> Diagnostic {
        Diagnostic(.cutLeftOut, .note, "no cut at \(named(cuts)): each would leave a stretch shorter than \(ms(minimumStretch)) s (a flash of a frame or two), so its time joins the stretch beside it",
                   time: cuts[0].seconds)
    }

    /// One note for the cuts after the montage's end (beats of a song longer than the
    /// music laid, or a `duration` shorter than the list), nil when there are none.
    private static func pastEndNote(_ cuts: [MediaTime], duration: MediaTime) -> Diagnostic? {
        guard !cuts.isEmpty else { return nil }
        return Diagnostic(.cutLeftOut, .note, "no cut at \(named(cuts)): each lies past the montage's end (\(ms(duration)) s)",
                          remedy: "give a longer duration (or longer music) to reach them", time: duration.seconds)
    }

    /// The first three times, then how many more.
    private static func named(_ cuts: [MediaTime]) -> String {
        cuts.prefix(3).map { ms($0) + " s" }.joined(separator: ", ") + (cuts.count > 3 ? " and \(cuts.count - 3) more" : "")
    }

    private static func ms(_ time: MediaTime) -> String { shortSeconds(time) }
}
