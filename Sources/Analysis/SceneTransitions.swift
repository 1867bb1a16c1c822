/// A gradual change of shot: a dissolve (one shot crossfades into the next) or a fade (out of
/// a shot into a flat picture, black or one colour, and/or out of one into a shot).
public struct SceneTransition: Sendable, Equatable {
    /// What the change looks like.
    public enum Kind: String, Sendable, CaseIterable {
        /// One shot crossfades into another.
        case dissolve
        /// Out of a shot into a flat picture (black or one colour), or out of one into a shot, or
        /// both with at most 1 s of flat picture between: a fade
        /// through black is one item (its cut into or out of black included when the other side
        /// fades), as a user cutting to it wants one change, not two.
        case fade
    }
    /// The last frame before the change, seconds.
    public var time: Double
    /// Seconds until the first frame after it.
    public var duration: Double
    /// Dissolve or fade.
    public var kind: Kind

    /// A transition starting at `time` (seconds) and lasting `duration` seconds.
    public init(time: Double, duration: Double, kind: Kind) {
        (self.time, self.duration, self.kind) = (time, duration, kind)
    }
}

/// Finds dissolves and fades in a stream of small grey pictures, keeping about two and a half
/// seconds of them. Measurements quoted below are from the "tune" half of `bench/transitions.py`'s
/// set (real phone, browser and city footage joined with ffmpeg's xfade) and its negatives;
/// its "test" half was scored (bench/RESULTS.md), though two fade rules (the slope's end, a cut
/// into black joined to its fade in) were added after seeing files of both halves.
///
/// A fade is found on each frame's spread of luma alone: a run of flat frames entered (or left)
/// by a steady fall (or rise) of the spread over several frames.
///
/// A dissolve is a window whose frames' luma variance follows what a mix of its two end pictures
/// would have: with α going 0…1 over the window, Var((1−α)A + αB) = (1−α)²Var A + α²Var B +
/// 2α(1−α)Cov(A, B). Camera motion inside either shot hardly changes a picture's variance, so
/// this holds on dissolves into moving, handheld shots, where tests comparing pixels with the
/// ends' mix fail; and where the ends are unlike (a new shot, not a pan or an exposure change)
/// the mix dips well below the straight line between the ends' variances. Three tests on the
/// pictures themselves then keep out what else can dip: the change must go one way (the ends
/// differ by a good part of the path between them, which a camera shaking back and forth or a
/// pan turning back does not), not in one step (a cut), and the middle frame must look like the
/// average of the ends more than not.
struct TransitionFinder {
    /// Pictures are compared at a quarter of the scene analysis's width (40 pixels, block
    /// means), so a handheld camera's shake of a few pixels hardly changes them.
    static let blockSize = 4

    /// A frame is flat when its luma's standard deviation (0…255, on these pictures) is below
    /// this: xfade's black after x264 measured 0.0, the dark webcam room of fixture 08 1.4–1.5,
    /// the plainest real shot in the set (fixture 01, a beige wall) 5.9–7.5.
    static let flatLevel = 4.0
    /// A fade's spread falls (or rises) by at least this much, twice the flat level: a dim shot
    /// going dark is not a fade worth a cut (so a fade into the wall, spread 7, is missed).
    static let smallestFadeDrop = 8.0
    /// A fade may not fall in one frame by more than this share of its whole fall: more is a
    /// cut into black. xfade's fades of 1 s and more fell in steps of at most 0.14–0.24 of
    /// their fall, and rose in 0.05–0.22; its 0.3 s fades fall out of the shot in two frames,
    /// the larger 0.62–0.63: a cut into black, joined to the fade in that follows.
    static let largestFadeStep = 0.6
    /// How much a fade's spread may go back at one frame, 0…255: a picture shown twice during a
    /// fade (10 fps shown at 30) keeps its spread; a still shot's repeated pictures vary by up
    /// to 0.11 (0.075 for 95 % of them), so the walk out of a fade mostly stops where it ends.
    static let fadeNoise = 0.05
    /// A fade starts at the last frame whose spread is within 5 % of the shot's, as the steady
    /// stretch often reaches back into the shot: the shots' spreads changed over three frames
    /// by 0.3–4.5 % (medians; 1–17 % for 95 % of frames, the most from the car).
    static let fadeStartLevel = 0.95
    /// The span over which a fade's slope is measured, frames: a 10 fps clip shown at 30 changes
    /// once in three.
    static let slopeSpan = 3
    /// A fade's slope ends where the spread changes by less than this share of its mean change
    /// so far: a city shot's spread grows slowly after a fade in, which without this check was
    /// taken for 2.5 s more of it (a file of the set's test half, seen while this was written).
    static let slopeShare = 0.25
    /// A fade out and a fade in with at most this much flat picture between are one fade
    /// (xfade's fade through black has one flat frame; a title card of seconds is not a transition).
    static let longestJoinedFlat = 1.0

    /// The lengths of window tried, seconds: 0.2–2.5 s by steps of about a fifth, covering
    /// the 0.3–2 s transitions of editors' defaults with room on either side.
    static let windowDurations = [0.2, 0.27, 0.33, 0.4, 0.5, 0.6, 0.73, 0.9, 1.1, 1.33, 1.6, 1.9, 2.2, 2.5]
    /// A window judged has at least this many frames after its first: fewer cannot show a curve.
    static let fewestWindowFrames = 5
    /// The ends of a dissolve differ, beyond their means, by a standard deviation of at least
    /// this (0…255), twice the flat level: less is two nearly flat pictures. The set's
    /// dissolves measured 52–98.
    static let smallestEndDifference = 8.0
    /// The ends of a dissolve are unlike: the variance of their difference is at least this share
    /// of the sum of theirs (1 for unrelated pictures, 0 for one picture; the set's dissolves
    /// measured 0.93–1.44 over their labelled span).
    static let unlikeEnds = 0.6
    /// How far the frames' variance may stray from a mix's, as a share of the mix's dip below
    /// the straight line (the set's dissolves strayed 0.02–0.21 over their labelled span).
    static let varianceMisfit = 0.25
    /// The picture's change goes one way: the ends differ by at least this share of the sum of
    /// the steps between them. Dissolves over their labelled span measured 0.26–0.97 (a part
    /// of the lowest passes); windows of the negatives that passed the tests above, a handheld
    /// pan turning back 0.05–0.08, a simulated exposure change 0.07–0.13, a pan of the room
    /// 0.18–0.21, a fast pan from the car 0.25–0.4 (two of its windows pass: two false dissolves).
    static let oneWay = 0.3
    /// Not a cut: no one step is more than this share of the window's steps (dissolves
    /// 0.06–0.18; a cut is nearly 1).
    static let largestStep = 0.5
    /// The middle frame differs from the ends' average by at most this share of the ends'
    /// difference: dissolves measured 0.05–0.53, the negatives' windows above 0.45–0.85.
    static let middleMisfit = 0.6

    private var times: [Double] = []
    private var spreads: [Double] = []
    private var means: [Double] = []
    private var variances: [Double] = []
    /// Each frame's mean absolute difference from the one before, 0…255.
    private var steps: [Double] = []
    /// The pictures of the frames from `firstKept` on.
    private var kept: [[Float]] = []
    private var firstKept = 0
    private var windows: [(start: Int, end: Int, misfit: Double)] = []

    /// The block-mean picture of a `width`×`height` grey picture.
    static func blocks(of luma: [UInt8], width: Int, height: Int) -> [Float] {
        let columns = width / blockSize, rows = height / blockSize
        var sums = [UInt32](repeating: 0, count: columns * rows)
        luma.withUnsafeBufferPointer { pixels in
            for row in 0..<rows * blockSize {
                let line = row * width, blockRow = (row / blockSize) * columns
                for column in 0..<columns {
                    var sum: UInt32 = 0
                    for pixel in line + column * blockSize..<line + (column + 1) * blockSize { sum += UInt32(pixels[pixel]) }
                    sums[blockRow + column] += sum
                }
            }
        }
        let area = Float(blockSize * blockSize)
        return sums.map { Float($0) / area }
    }

    /// Takes the next frame: its small picture (from `blocks`) shown at `time` seconds.
    mutating func add(_ picture: [Float], time: Double) {
        guard !picture.isEmpty else { return }
        let count = Double(picture.count)
        var sum = 0.0, squares = 0.0, change = 0.0
        picture.withUnsafeBufferPointer { values in
            for value in values { sum += Double(value); squares += Double(value) * Double(value) }
            if let last = kept.last, last.count == values.count {
                last.withUnsafeBufferPointer { last in
                    for i in 0..<values.count { change += Double(abs(values[i] - last[i])) }
                }
            }
        }
        let mean = sum / count, variance = max(0, squares / count - mean * mean), step = change / count
        times.append(time); means.append(mean); variances.append(variance); spreads.append(variance.squareRoot()); steps.append(step)
        kept.append(picture)
        let longest = Self.windowDurations.last ?? 0
        while kept.count > 1, time - times[firstKept] > longest * 1.2 + 0.1 {
            kept.removeFirst()
            firstKept += 1
        }
        judgeWindows(endingAt: times.count - 1)
    }

    private func picture(_ index: Int) -> [Float] { kept[index - firstKept] }

    /// Judges each window ending at frame `end`, keeping those that look like a dissolve.
    private mutating func judgeWindows(endingAt end: Int) {
        var judged = Set<Int>()
        for duration in Self.windowDurations {
            let start = nearestFrame(to: times[end] - duration)
            guard start >= firstKept, end - start >= Self.fewestWindowFrames, judged.insert(start).inserted else { continue }
            if let misfit = dissolveMisfit(from: start, to: end) { windows.append((start, end, misfit)) }
        }
    }

    /// The index of the kept frame nearest to `time`.
    private func nearestFrame(to time: Double) -> Int {
        var low = firstKept, high = times.count - 1
        while low < high {
            let middle = (low + high) / 2
            if times[middle] < time { low = middle + 1 } else { high = middle }
        }
        return low > firstKept && time - times[low - 1] < times[low] - time ? low - 1 : low
    }

    /// How far frames `start…end` stray from a dissolve's variance, as a share of its dip; nil
    /// when they are not a dissolve.
    private func dissolveMisfit(from start: Int, to end: Int) -> Double? {
        let first = picture(start), last = picture(end)
        guard first.count == last.count else { return nil }
        let count = Double(first.count)
        var products = 0.0, endDifference = 0.0
        first.withUnsafeBufferPointer { first in
            last.withUnsafeBufferPointer { last in
                for i in 0..<first.count {
                    products += Double(first[i]) * Double(last[i])
                    endDifference += Double(abs(last[i] - first[i]))
                }
            }
        }
        let covariance = products / count - means[start] * means[end]
        endDifference /= count
        let (before, after) = (variances[start], variances[end])
        let differenceVariance = before + after - 2 * covariance
        guard differenceVariance >= Self.smallestEndDifference * Self.smallestEndDifference,
              differenceVariance >= Self.unlikeEnds * (before + after) else { return nil }
        let span = times[end] - times[start]
        guard span > 0 else { return nil }
        var misfit = 0.0, dip = 0.0
        for frame in start + 1..<end {
            let alpha = (times[frame] - times[start]) / span
            let mixed = (1 - alpha) * (1 - alpha) * before + alpha * alpha * after + 2 * alpha * (1 - alpha) * covariance
            misfit += abs(variances[frame] - mixed)
            dip += alpha * (1 - alpha) * differenceVariance
        }
        guard misfit <= Self.varianceMisfit * dip else { return nil }
        let path = steps[start + 1...end].reduce(0, +)
        guard let largest = steps[start + 1...end].max(), largest <= Self.largestStep * path,
              endDifference >= Self.oneWay * path else { return nil }
        let middle = picture((start + end) / 2)
        var middleDifference = 0.0
        for i in first.indices { middleDifference += Double(abs(middle[i] - (first[i] + last[i]) / 2)) }
        guard middleDifference / count <= Self.middleMisfit * endDifference else { return nil }
        return misfit / dip
    }

    /// The fades and dissolves found, by time. Overlapping dissolve windows are one dissolve,
    /// the longest of them (a part of a dissolve is a dissolve too, between two mixes); a
    /// dissolve window over a fade is the fade's (a fade is a dissolve into a flat picture).
    func transitions() -> [SceneTransition] {
        let fades = fadeFrames()
        var found = fades.map { SceneTransition(time: times[$0.start], duration: times[$0.end] - times[$0.start], kind: .fade) }
        let dissolves = windows.filter { window in !fades.contains { $0.start <= window.end && window.start <= $0.end } }
            .sorted { $0.start < $1.start }
        var group: [(start: Int, end: Int, misfit: Double)] = []
        func closeGroup() {
            if let chosen = group.max(by: { ($0.end - $0.start, -$0.misfit) < ($1.end - $1.start, -$1.misfit) }) {
                found.append(SceneTransition(time: times[chosen.start], duration: times[chosen.end] - times[chosen.start], kind: .dissolve))
            }
            group = []
        }
        for window in dissolves {
            if let reach = group.map(\.end).max(), window.start > reach { closeGroup() }
            group.append(window)
        }
        closeGroup()
        return found.sorted { $0.time < $1.time }
    }

    /// The fades, as first and last frame: around each run of flat frames, the steady fall into
    /// it and the steady rise out of it, each kept when it is a fade and not a cut.
    private func fadeFrames() -> [(start: Int, end: Int)] {
        let flat = spreads.map { $0 < Self.flatLevel }
        var fades: [(start: Int, end: Int)] = []
        var first = 0
        while first < flat.count {
            guard flat[first] else { first += 1; continue }
            var last = first
            while last + 1 < flat.count, flat[last + 1] { last += 1 }
            var top = first
            while top > 0, !flat[top - 1], spreads[top - 1] >= spreads[top] - Self.fadeNoise, onSlope(top - 1, flat: first) { top -= 1 }
            var bottom = last
            while bottom + 1 < flat.count, !flat[bottom + 1], spreads[bottom + 1] >= spreads[bottom] - Self.fadeNoise,
                  onSlope(bottom + 1, flat: last) { bottom += 1 }
            let out = isFade(from: top, to: first) ? fadeStart(top: top, flat: first) : nil
            let into = isFade(from: last, to: bottom) ? fadeEnd(flat: last, top: bottom) : nil
            let joined = times[last] - times[first] <= Self.longestJoinedFlat
            switch (out, into) {
            case let (out?, into?) where joined: fades.append((out, into))
            // a cut into the flat picture and a fade out of it (or the reverse) are one fade through it
            case let (nil, into?) where joined && first > 0: fades.append((first - 1, into))
            case let (out?, nil) where joined && last + 1 < flat.count: fades.append((out, last + 1))
            case let (out, into):
                if let out { fades.append((out, first)) }
                if let into { fades.append((last, into)) }
            }
            first = last + 1
        }
        return fades
    }

    /// Whether frame `candidate`, reached walking away from the flat frame `flat`, is still on the
    /// fade's slope: the spread changed over the last `slopeSpan` frames by at least `slopeShare`
    /// of its mean change per span since the flat frame. A shot's own drift is far slower.
    private func onSlope(_ candidate: Int, flat: Int) -> Bool {
        let towardFlat = candidate < flat ? 1 : -1
        let near = candidate + towardFlat * Self.slopeSpan
        guard (flat - near) * towardFlat > 0 else { return true }
        let recent = abs(spreads[candidate] - spreads[near])
        let meanPerSpan = abs(spreads[near] - spreads[flat]) / Double(abs(flat - near)) * Double(Self.slopeSpan)
        return recent >= Self.slopeShare * meanPerSpan
    }

    /// Whether the spread's steady change over frames `from…to` is a fade: over several frames,
    /// by enough, no step too large.
    private func isFade(from: Int, to: Int) -> Bool {
        guard to - from >= 2 else { return false }
        let fall = abs(spreads[to] - spreads[from])
        let largest = (from..<to).map { abs(spreads[$0 + 1] - spreads[$0]) }.max() ?? 0
        return fall >= Self.smallestFadeDrop && largest <= Self.largestFadeStep * fall
    }

    /// The last frame of a fade out's steady fall from frame `top` still at the shot's spread.
    private func fadeStart(top: Int, flat: Int) -> Int {
        let level = Self.fadeStartLevel * spreads[top]
        return ((top + 1)...flat).first { spreads[$0] < level }.map { $0 - 1 } ?? top
    }

    /// The first frame of a fade in's steady rise to frame `top` at the shot's spread.
    private func fadeEnd(flat: Int, top: Int) -> Int {
        let level = Self.fadeStartLevel * spreads[top]
        return (flat..<top).first { spreads[$0] > level } ?? top
    }
}
