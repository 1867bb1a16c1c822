import Foundation
import Testing
import TestSupport
@testable import MoonreelEngine

/// Export tests at the engine level (no Lua): the composition and export session APIs
/// alone, checked with ffprobe/ffmpeg.
@Suite struct CutExportTests {
    @Test func cutOfThreeSecondsHasExactlyNinetyFramesAndMatchingAudio() throws {
        let source = try Fixtures.clip(seconds: 6)
        let asset = try Asset(path: source)
        let composition = Composition()
        try composition.insertTimeRange(TimeRange(start: MediaTime(value: 2, timescale: 1), duration: MediaTime(value: 3, timescale: 1)),
                                        of: asset, at: .zero)
        let output = Fixtures.scratchPath("cut.mp4")
        let session = ExportSession(composition: composition, preset: ExportPreset.named("HighestQuality")!)
        session.outputURL = output
        try session.export()
        #expect(session.status == .completed)

        let probe = try Tool.ffprobe(output)
        #expect(probe.video?.frameCount == 90)
        let videoDuration = try #require(probe.video?.durationSeconds)
        let audioDuration = try #require(probe.audio?.durationSeconds)
        #expect(abs(videoDuration - 3) < 0.001)
        #expect(abs(audioDuration - videoDuration) <= 1.0 / 30)

        // First frame of the cut is the source's frame at 2.0 s (testsrc2 draws a moving
        // pattern, so neighbouring frames differ visibly).
        let cutFirst = try Tool.rgbFrame(output, at: 0)
        let sourceAt2 = try Tool.rgbFrame(source, at: 2.0)
        let sourceAt2Next = try Tool.rgbFrame(source, at: 2.0 + 1.0 / 30)
        let same = cutFirst.meanDifference(sourceAt2), next = cutFirst.meanDifference(sourceAt2Next)
        #expect(same < next / 2, "first frame differs from source@2.0 by \(same), from the next frame by \(next)")
    }
}
