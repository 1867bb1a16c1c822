/// Clips cut to the beat: a joined sequence whose cuts land on given times (beats from
/// `AudioAnalysis`, every one or every few), the clips taken in turn, over music.
public enum BeatMontage {
    /// The most stretches a montage may have (as many items as `av.join` takes).
    public static let maxStretches = 10_000

    /// Stretches between `cuts` (composition times; those outside 0…`duration` are ignored),
    /// each filled by the next of `clips` in turn (asset and optional range). A clip used again
    /// goes on from where its last stretch ended, from the start of its range again when what
    /// is left is too short. With a transition, its middle is on the cut. `music`: an audio
    /// track laid from 0 under the whole montage, in place of the clips' own sound.
    public static func make(clips: [(asset: Asset, range: TimeRange?)], cuts: [MediaTime], duration: MediaTime,
                            transition: Transition = .cut, music: AssetTrack? = nil, renderSize: Size? = nil,
                            placement: VideoComposition.Placement = .fit) throws -> JoinedSequence {
        guard !clips.isEmpty else { throw EngineError("no clips to cut to the beat", kind: .invalidArgument) }
        guard duration.value > 0 else { throw EngineError("the montage must last more than 0 s", kind: .invalidArgument) }
        let inside = cuts.filter { $0 > .zero && $0 < duration }.sorted()
        guard inside.count < maxStretches else {
            throw EngineError("\(inside.count) cuts make more than \(maxStretches) stretches; cut less often (a larger every)", kind: .limit)
        }
        let bounds = [MediaTime.zero] + inside.reduce(into: [MediaTime]()) { kept, cut in
            if kept.last.map({ $0 < cut }) ?? true { kept.append(cut) }
        } + [duration]
        let half = transition.duration.multiplied(by: .units(1, of: 1), dividedBy: .units(2, of: 1))
        var positions = [MediaTime](repeating: .zero, count: clips.count)
        var items: [SequenceItem] = []
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
                let ms = { (t: MediaTime) in shortNumber((t.seconds * 1000).rounded() / 1000) }
                let remedy = stretch + 2 == bounds.count && stretch > 0
                    ? ", after the last cut; end the montage sooner (duration) or give a longer clip"
                    : "; cut on more beats (a smaller `every`) or give a longer clip"
                throw EngineError("clip \(which + 1) (\"\(asset.path)\") lasts \(ms(range.duration)) s, shorter than the "
                                  + "\(ms(length)) s from \(ms(bounds[stretch])) s to \(ms(bounds[stretch + 1])) s\(remedy)", kind: .invalidArgument)
            }
            if range.start + positions[which] + length > range.end { positions[which] = .zero }
            items.append(.clip(asset, TimeRange(start: range.start + positions[which], duration: length)))
            positions[which] = positions[which] + length
        }
        let joined = try JoinedSequence.make(items, transitions: Array(repeating: transition, count: items.count - 1),
                                             renderSize: renderSize, placement: placement, withSound: music == nil)
        if let music {
            let laid = TimeRange(start: music.timeRange.start, duration: MediaTime.min(duration, music.timeRange.duration))
            try joined.composition.addMutableTrack(mediaType: .audio).insertTimeRange(laid, of: music, at: .zero)
        }
        return joined
    }
}
