import CMoonFFmpeg
import MoonreelMedia
import MoonreelPlatform

/// How much each frame of a video track differs from the last, for finding cuts. Frames are
/// compared as small grey pictures (160 pixels wide): the mean absolute difference of their
/// luma, 0…100 (libavfilter's `scdet` measure). A cut is a spike: a frame that differs from
/// the last far more than its neighbours differ from theirs, so a pan or a zoom, where every
/// frame differs a little, is not one. Gradual changes, dissolves and fades, are
/// `transitions` (see TransitionFinder).
public struct SceneAnalysis: Sendable, Equatable {
    /// Presentation time of each frame, seconds.
    public var frameTimes: [Double]
    /// Each frame's difference from the one before (0 for the first), 0…100.
    public var differences: [Double]
    /// The dissolves and fades, by time.
    public var transitions: [SceneTransition]

    /// The default threshold of `cuts`: scdet's default score.
    public static let defaultThreshold = 10.0
    static let comparedWidth = 160

    /// An analysis of frames at `frameTimes` (seconds) differing by `differences` (0…100) from
    /// the one before, with the `transitions` found among them.
    public init(frameTimes: [Double], differences: [Double], transitions: [SceneTransition] = []) {
        (self.frameTimes, self.differences, self.transitions) = (frameTimes, differences, transitions)
    }

    /// A frame that differs from the last by less than this repeats its picture. A 10 fps
    /// phone clip converted to 30 fps shows each picture three times: its repeats measured
    /// 0.001–0.02 after x264 (crf 23 and 35) and up to 0.07 after MPEG-4 part 2 (q 8), while
    /// the new pictures differed by 5–14. Real handheld footage changes by 0.02–0.6 a frame
    /// when nearly still; taking such a frame for a repeat only compares the next with it.
    static let repeatLevel = 0.15

    /// How far a new picture's neighbour may lie past repeats: a picture shown for longer is
    /// a still shot, whose own stillness is what a cut into it is measured against. A quarter
    /// second covers clips of 4 fps and more shown at any rate.
    static let repeatSpan = 0.25

    /// A cut is a score: how far a frame's difference rises above the larger of its
    /// neighbours' (never above the difference itself). A neighbour is the nearest new picture
    /// within `repeatSpan` past repeats, so a new picture after its repeats is compared with the
    /// pictures around it: at 10 fps shown at 30, every new picture was a spike over two repeats.
    public var scores: [Double] {
        differences.indices.map { index in
            guard index > 0 else { return 0 }
            let before = neighbour(of: index, step: -1), after = neighbour(of: index, step: 1)
            return max(0, differences[index] - max(before, after))
        }
    }

    /// The difference of the nearest frame in direction `step` that is not a repeat, within
    /// `repeatSpan`; the adjacent frame's when there is none (0 past either end).
    private func neighbour(of index: Int, step: Int) -> Double {
        var other = index + step
        while other > 0, other < differences.count, differences[other] < Self.repeatLevel,
              abs(frameTimes[other] - frameTimes[index]) <= Self.repeatSpan {
            other += step
        }
        if other > 0, other < differences.count, differences[other] >= Self.repeatLevel,
           abs(frameTimes[other] - frameTimes[index]) <= Self.repeatSpan {
            return differences[other]
        }
        let adjacent = index + step
        return adjacent > 0 && adjacent < differences.count ? differences[adjacent] : 0
    }

    /// The cuts: the first frame of each new shot, with its score, where the score is at
    /// least `threshold` (0…100), except inside a transition: a fade through black drops fast
    /// enough at 0.3 s to spike, and is one change, not a cut and a fade.
    public func cuts(threshold: Double = SceneAnalysis.defaultThreshold) -> [(time: Double, score: Double)] {
        zip(frameTimes, scores).filter { time, score in
            score >= threshold && !transitions.contains { time >= $0.time && time <= $0.time + $0.duration }
        }.map { (time: $0.0, score: $0.1) }
    }

    /// Decodes every frame of `track` (a video track) once.
    public static func analyze(_ track: AssetTrack, cancellation: CancellationFlag? = nil) throws -> SceneAnalysis {
        guard track.mediaType == .video, !track.isStillImage else {
            throw EngineError("track \(track.trackID) of \(track.path) is not video, so it has no scenes", kind: .invalidArgument)
        }
        let reader = try StreamReader(path: track.path, streamIndex: track.streamIndex)
        let scaler = Scaler(flags: SWS_AREA)
        let aspect = Double(track.naturalSize.height) / Double(max(track.naturalSize.width, 1))
        // At most square-ish: a very tall video compares a 160×320 picture, not 160×thousands.
        let width = comparedWidth, height = min(max(2, Int((Double(width) * min(aspect, 2) / 2).rounded()) * 2), 2 * comparedWidth)
        var times: [Double] = [], differences: [Double] = []
        var previous: [UInt8]?
        var finder = TransitionFinder()
        while let frame = try reader.nextFrame() {
            if cancellation?.isCancelled == true { throw EngineError("analysis cancelled", kind: .cancelled) }
            let grey = try scaler.convert(frame, width: width, height: height, format: AV_PIX_FMT_GRAY8,
                                          outputColor: ColorDescription(space: AVCOL_SPC_BT709, range: AVCOL_RANGE_JPEG))
            let (pixels, lineSize) = grey.plane(0)
            var luma = [UInt8](repeating: 0, count: width * height)
            for row in 0..<height {
                for column in 0..<width { luma[row * width + column] = pixels[row * lineSize + column] }
            }
            if let previous {
                var sum = 0
                for i in luma.indices { sum += abs(Int(luma[i]) - Int(previous[i])) }
                differences.append(Double(sum) * 100 / Double(255 * luma.count))
            } else {
                differences.append(0)
            }
            times.append(reader.time(of: frame).seconds)
            finder.add(TransitionFinder.blocks(of: luma, width: width, height: height), time: times[times.count - 1])
            previous = luma
        }
        return SceneAnalysis(frameTimes: times, differences: differences, transitions: finder.transitions())
    }
}
