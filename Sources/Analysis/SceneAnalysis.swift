import CMoonFFmpeg
import MoonreelMedia
import MoonreelPlatform

/// How much each frame of a video track differs from the last, for finding cuts. Frames are
/// compared as small pictures (160 pixels wide) two ways, each 0…100: the mean absolute
/// difference of their luma (libavfilter's `scdet` measure), and how much of the picture
/// changed its brightness or colour class (`colourChanges`, the histograms' share that
/// moved; PySceneDetect's HistogramDetector compares histograms too). A cut is a spike in
/// either: a frame that differs from the last far more than its neighbours differ from
/// theirs, so a pan or a zoom, where every frame differs a little, is not one. The
/// histograms see a cut between two views laid out alike (sky over land, from a car:
/// luma 8.0 and 4.2, the histograms 30 and 13) that the pixels barely do, and they hardly
/// move with the camera (handheld phone clips: luma up to 3.2, the histograms up to 3.7).
/// Gradual changes, dissolves and fades, are `transitions` (see TransitionFinder).
public struct SceneAnalysis: Sendable, Equatable {
    /// Presentation time of each frame, seconds.
    public var frameTimes: [Double]
    /// Each frame's difference from the one before (0 for the first), 0…100.
    public var differences: [Double]
    /// How much of each frame's luma, blue-difference and red-difference histograms (16 bins
    /// each) moved from the one before, averaged over the three (0 for the first), 0…100;
    /// empty when not measured.
    public var colourChanges: [Double]
    /// The dissolves and fades, by time.
    public var transitions: [SceneTransition]

    /// The default threshold of `cuts`: scdet's default score.
    public static let defaultThreshold = 10.0
    static let comparedWidth = 160

    /// An analysis of frames at `frameTimes` (seconds) differing by `differences` and
    /// `colourChanges` (0…100; empty: not measured) from the one before, with the
    /// `transitions` found among them.
    public init(frameTimes: [Double], differences: [Double], colourChanges: [Double] = [], transitions: [SceneTransition] = []) {
        (self.frameTimes, self.differences, self.colourChanges, self.transitions) = (frameTimes, differences, colourChanges, transitions)
    }

    /// Bins of each histogram of `colourChanges`: 16 levels wide, so the noise and the small
    /// shifts of a moving camera leave most pixels in their bin.
    static let histogramBins = 16

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
    /// neighbours' (never above the difference itself), the larger of the luma's and the
    /// histograms'. A neighbour is the nearest new picture within `repeatSpan` past repeats
    /// (by the luma), so a new picture after its repeats is compared with the pictures
    /// around it: at 10 fps shown at 30, every new picture was a spike over two repeats.
    public var scores: [Double] {
        differences.indices.map { index in
            guard index > 0 else { return 0 }
            let before = neighbour(of: index, step: -1), after = neighbour(of: index, step: 1)
            let spike = { (series: [Double]) -> Double in
                max(0, series[index] - max(before.map { series[$0] } ?? 0, after.map { series[$0] } ?? 0))
            }
            return colourChanges.count == differences.count ? max(spike(differences), spike(colourChanges)) : spike(differences)
        }
    }

    /// The nearest frame in direction `step` that is not a repeat, within `repeatSpan`; the
    /// adjacent frame when there is none; nil past either end.
    private func neighbour(of index: Int, step: Int) -> Int? {
        var other = index + step
        while other > 0, other < differences.count, differences[other] < Self.repeatLevel,
              abs(frameTimes[other] - frameTimes[index]) <= Self.repeatSpan {
            other += step
        }
        if other > 0, other < differences.count, differences[other] >= Self.repeatLevel,
           abs(frameTimes[other] - frameTimes[index]) <= Self.repeatSpan {
            return other
        }
        let adjacent = index + step
        return adjacent > 0 && adjacent < differences.count ? adjacent : nil
    }

    /// The cuts: the first frame of each new shot, with its score, where the score is at
    /// least `threshold` (0…100), except inside a transition or on the frame that ends it: a
    /// fade through black drops fast enough at 0.3 s to spike, and the histograms jump when
    /// the last of a fade's pixels reach their own shade; that is one change, not a cut and a fade.
    public func cuts(threshold: Double = SceneAnalysis.defaultThreshold) -> [(time: Double, score: Double)] {
        let scores = scores
        return frameTimes.indices.compactMap { index in
            let (time, previous) = (frameTimes[index], frameTimes[max(index - 1, 0)])
            let withinTransition = transitions.contains { previous <= $0.time + $0.duration && time >= $0.time }
            return scores[index] >= threshold && !withinTransition ? (time: time, score: scores[index]) : nil
        }
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
        var times: [Double] = [], differences: [Double] = [], colourChanges: [Double] = []
        var previous: (luma: [UInt8], histograms: [Int])?
        var finder = TransitionFinder()
        while let frame = try reader.nextFrame() {
            if cancellation?.isCancelled == true { throw EngineError("analysis cancelled", kind: .cancelled) }
            let small = try scaler.convert(frame, width: width, height: height, format: AV_PIX_FMT_YUV420P,
                                           outputColor: ColorDescription(space: AVCOL_SPC_BT709, range: AVCOL_RANGE_JPEG))
            let luma = Self.pixels(of: small, plane: 0, width: width, height: height)
            var histograms = Self.histogram(of: luma)
            for plane in 1...2 { histograms += Self.histogram(of: Self.pixels(of: small, plane: plane, width: width / 2, height: height / 2)) }
            if let previous {
                var sum = 0
                for i in luma.indices { sum += abs(Int(luma[i]) - Int(previous.luma[i])) }
                differences.append(Double(sum) * 100 / Double(255 * luma.count))
                colourChanges.append(Self.histogramChange(previous.histograms, histograms, lumaCount: luma.count))
            } else {
                differences.append(0)
                colourChanges.append(0)
            }
            times.append(reader.time(of: frame).seconds)
            finder.add(TransitionFinder.blocks(of: luma, width: width, height: height), time: times[times.count - 1])
            previous = (luma, histograms)
        }
        return SceneAnalysis(frameTimes: times, differences: differences, colourChanges: colourChanges, transitions: finder.transitions())
    }

    /// One plane of `frame`, `width` × `height` pixels, without the line padding.
    private static func pixels(of frame: Frame, plane: Int, width: Int, height: Int) -> [UInt8] {
        let (pixels, lineSize) = frame.plane(plane)
        var values = [UInt8](repeating: 0, count: width * height)
        for row in 0..<height {
            for column in 0..<width { values[row * width + column] = pixels[row * lineSize + column] }
        }
        return values
    }

    /// How many of `values` fall in each of `histogramBins` equal bins of 0…255.
    private static func histogram(of values: [UInt8]) -> [Int] {
        var counts = [Int](repeating: 0, count: histogramBins)
        for value in values { counts[Int(value) * histogramBins / 256] += 1 }
        return counts
    }

    /// The share of each histogram (luma, then the two chroma planes of a quarter as many
    /// pixels) that moved between bins, half the absolute differences over the count,
    /// averaged over the three, 0…100.
    private static func histogramChange(_ before: [Int], _ after: [Int], lumaCount: Int) -> Double {
        guard before.count == 3 * histogramBins, after.count == before.count, lumaCount >= 4 else { return 0 }
        let counts = [lumaCount, lumaCount / 4, lumaCount / 4]
        return (0..<3).reduce(0) { total, plane in
            let bins = plane * histogramBins..<(plane + 1) * histogramBins
            let moved = bins.reduce(0) { $0 + abs(before[$1] - after[$1]) }
            return total + Double(moved) * 50 / Double(counts[plane])
        } / 3
    }
}
