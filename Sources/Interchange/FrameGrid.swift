import MoonreelEngine

/// The frames of a timeline, for the formats whose edit points fall on them (an EDL's
/// timecode, FCPXML's offsets and durations): each time is rounded to the nearest frame, and
/// the times that moved are counted for one `timeRounded` warning.
struct FrameGrid {
    /// One frame: the timeline's (1/30 s when it states none).
    let frame: MediaTime
    /// How many times were rounded so far.
    var rounded = 0

    init(_ frameDuration: MediaTime) {
        frame = frameDuration.value > 0 ? frameDuration.reduced() : MediaTime(value: 1, timescale: 30)
    }

    /// The count of whole frames nearest `t` (a half rounds up), not counted as rounded.
    func nearestFrame(_ t: MediaTime) -> Int64 {
        (t + frame.multiplied(by: MediaTime(value: 1, timescale: 1), dividedBy: MediaTime(value: 2, timescale: 1))).floorDivided(by: frame)
    }

    /// The count of whole frames nearest `t`, counting `t` as rounded when it falls between frames.
    mutating func frames(_ t: MediaTime) -> Int64 {
        let count = nearestFrame(t)
        if frame * count != t { rounded += 1 }
        return count
    }

    /// `t` on the nearest frame.
    mutating func snapped(_ t: MediaTime) -> MediaTime { frame * frames(t) }

    /// The warning that `rounded` times of `format` moved, or nil when none did.
    func note(_ format: String, rate: String, remedy: String) -> Diagnostic? {
        guard rounded > 0 else { return nil }
        let (falls, was) = rounded == 1 ? (" of the \(format) falls", "was") : ("s of the \(format) fall", "were")
        return Diagnostic(.timeRounded, .warning, "\(rounded) time\(falls) between frames at \(rate) fps and \(was) rounded to the nearest frame", remedy: remedy)
    }
}
