import Foundation
import Testing
import TestSupport

/// Issue 2's "done when": the seed cut example and concatenation, checked with ffprobe and
/// by sampling pixels and audio with the ffmpeg CLI.
@Suite struct CutAndConcatTests {
    @Test func cutExampleGivesNinetyFramesStartingAtTwoSeconds() throws {
        let source = try Fixtures.clip(seconds: 6)
        let output = Fixtures.scratchPath("cut.mov")
        let result = try Moonreel.run(["run", Moonreel.example("cut.lua"), source, output])
        #expect(result.status == 0, "\(result.err)")

        let probe = try Tool.ffprobe(output)
        let video = try #require(probe.video)
        let audio = try #require(probe.audio)
        #expect(video.frameCount == 90)
        #expect(video.width == 320 && video.height == 240)
        let videoSeconds = try #require(video.durationSeconds), audioSeconds = try #require(audio.durationSeconds)
        #expect(abs(videoSeconds - 3) < 0.001)
        #expect(abs(audioSeconds - videoSeconds) <= 1.0 / 30, "audio \(audioSeconds) s vs video \(videoSeconds) s")
        let pts = try Tool.framePTS(output)
        #expect(pts.count == 90 && abs(pts[0]) < 1e-6 && abs(pts[89] - 89.0 / 30) < 1e-3)

        // testsrc2 moves every frame: the first output frame must match the source at 2.0 s
        // far better than its neighbours at 2.0 ± 1/30 s.
        let first = try Tool.rgbFrame(output, at: 0)
        let atTwo = try Tool.rgbFrame(source, at: 2.0)
        let before = try Tool.rgbFrame(source, at: 2.0 - 1.0 / 30)
        let after = try Tool.rgbFrame(source, at: 2.0 + 1.0 / 30)
        let match = first.meanDifference(atTwo)
        #expect(match < first.meanDifference(before) / 2 && match < first.meanDifference(after) / 2)
    }

    @Test func dissolveBetweenPhoneClipsWhoseAudioEndsEarly() throws {
        // 06's audio stops 0.12 s before its video; 01 is portrait and rotated.
        let android = Fixtures.real("06_android_rot180_vfr_10fps.mp4")
        let iphone = Fixtures.real("01_iphone4s_portrait_h264_rot90.mov")
        let output = Fixtures.scratchPath("phones.mp4")
        let result = try Moonreel.run(["run", Moonreel.example("concat_fade.lua"), output, android, iphone])
        #expect(result.status == 0, "\(result.err)")
        let probe = try Tool.ffprobe(output)
        #expect(probe.video?.width == 1280 && probe.video?.height == 720)
        #expect(abs(probe.duration - (2.380 + 2.202 - 1)) < 0.05, "\(probe.duration)")
        // The portrait clip is pillarboxed: black at the sides, picture in the middle.
        let end = try Tool.rgbFrame(output, at: 3.3)
        let side = end.mean(x: 0, y: 300, width: 200, height: 100), middle = end.mean(x: 560, y: 300, width: 160, height: 100)
        #expect(side.r < 20 && side.g < 20 && middle.r > 80, "side \(side), middle \(middle)")
    }

    @Test func twelveOneSecondClipsJoinWithoutGapOrDrift() throws {
        // Alternate two tones so each join's position can be read from the audio itself.
        let clips = try (0..<12).map { i in try Fixtures.clip(seconds: 1, tone: i % 2 == 0 ? 440 : 660) }
        let output = Fixtures.scratchPath("joined.mp4")
        let result = try Moonreel.run(["run", Moonreel.example("concat.lua"), output] + clips)
        #expect(result.status == 0, "\(result.err)")

        let probe = try Tool.ffprobe(output)
        #expect(abs(probe.duration - 12) < 1.0 / 30)
        #expect(probe.video?.frameCount == 360)
        let rate = 48000
        let samples = try Tool.audioSamples(output, rate: rate)
        #expect(abs(Double(samples.count) / Double(rate) - 12) < 1.0 / 30)
        for join in 1..<12 {
            let expectedBefore = join % 2 == 1 ? 440.0 : 660.0
            let expectedAfter = join % 2 == 1 ? 660.0 : 440.0
            let at = join * rate
            #expect(abs(samples.toneFrequency(from: at - rate / 10, to: at - rate / 100, rate: rate) - expectedBefore) < 15)
            #expect(abs(samples.toneFrequency(from: at + rate / 100, to: at + rate / 10, rate: rate) - expectedAfter) < 15)
            // No gap: the level around the join stays up (the 2 ms splice fades dip only briefly).
            let window = samples.level(from: at - rate / 100, to: at + rate / 100)
            let steady = samples.level(from: at + rate / 20, to: at + rate / 10)
            #expect(window > steady * 0.7, "join \(join): level \(window) vs \(steady)")
        }
    }
}
