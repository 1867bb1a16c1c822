import Foundation
import Testing
import TestSupport

/// The real phone, browser and broken files of Tests/Fixtures/real: exports come out
/// upright at the right display size (compared with ffmpeg's own autorotated picture), and
/// every broken file gives one clear line and exit 1.
@Suite struct RealMediaTests {
    static let exportScript = Moonreel.exportWholeAssetScript

    struct Case: CustomTestStringConvertible, Sendable {
        let file: String
        let preset: String
        let width: Int?
        let height: Int?
        let ext: String
        var testDescription: String { file }
    }

    static let cases: [Case] = [
        Case(file: "01_iphone4s_portrait_h264_rot90.mov", preset: "HighestQuality", width: 320, height: 568, ext: "mov"),
        Case(file: "02_iphone14pro_portrait_hevc10_hlg_dovi.MOV", preset: "HighestQuality", width: 720, height: 1280, ext: "mov"),
        Case(file: "03_iphone_trimmed_hevc10_editlist_vfr.mp4", preset: "960x540", width: 540, height: 960, ext: "mp4"),
        Case(file: "04_android12_portrait_4k60_rot90_yuvj.mp4", preset: "1280x720", width: 720, height: 1280, ext: "mp4"),
        Case(file: "05_pixel_motionphoto_hevc_rot270_2videotracks.mp4", preset: "960x540", width: 540, height: 720, ext: "mp4"),
        Case(file: "06_android_rot180_vfr_10fps.mp4", preset: "960x540", width: 960, height: 540, ext: "mp4"),
        Case(file: "07_screenrec_extreme_vfr_noaudio.mp4", preset: "640x480", width: 640, height: 292, ext: "mp4"),
        Case(file: "08_chrome_mediarecorder_vp9_opus_noduration.webm", preset: "640x480", width: 640, height: 360, ext: "mp4"),
        Case(file: "09_garageband_podcast_aac_cover_chapters.m4a", preset: "AppleM4A", width: nil, height: nil, ext: "m4a"),
        Case(file: "10_mp3_vbr_xing_audioonly.mp3", preset: "AppleM4A", width: nil, height: nil, ext: "m4a"),
        Case(file: "11_vp9_odd_161x121.webm", preset: "HighestQuality", width: 160, height: 120, ext: "mp4"),
        Case(file: "12_vp9_profile2_10bit.webm", preset: "HighestQuality", width: 426, height: 240, ext: "mp4"),
        Case(file: "13_h264_1x1_yuv444p.mp4", preset: "HighestQuality", width: 2, height: 2, ext: "mp4"),
        Case(file: "14_h264_yuv444p_editlist_negpts_noaudio.mp4", preset: "HighestQuality", width: 704, height: 576, ext: "mp4"),
        Case(file: "15_aac_editlist_audioonly.mp4", preset: "AppleM4A", width: nil, height: nil, ext: "m4a"),
        Case(file: "16_mkv_negative_audio_start_yuv444p.mkv", preset: "HighestQuality", width: 320, height: 240, ext: "mp4"),
    ]

    @Test(arguments: cases)
    func exportsUprightWithTheDisplaySize(_ c: Case) throws {
        let source = Fixtures.real(c.file)
        let output = Fixtures.scratchPath("out.\(c.ext)")
        let result = try Moonreel.runScript(Self.exportScript, name: "export.lua", arguments: [source, output, c.preset])
        try #require(result.status == 0, "\(c.file): \(result.err)")
        // A size 4:2:0 video cannot hold is rounded, and said to be; so is a screen recording
        // that the preset's box fits at a fraction of a pixel.
        let rounded = c.file.hasPrefix("11_") || c.file.hasPrefix("13_") || c.file.hasPrefix("07_")
        #expect(result.err.contains("the video's size") == rounded && result.err.contains("[sizeRounded]") == rounded, "\(c.file): \(result.err)")
        if c.file.hasPrefix("07_") {
            #expect(result.err.contains("the video's size 3026×1386 fitted into the preset's 640×480 box is 640×293.14; the output is 640×292"), "\(result.err)")
        }
        let probe = try Tool.ffprobe(output)
        let sourceProbe = try Tool.ffprobe(source)
        #expect(abs(probe.duration - sourceProbe.duration) < 0.15 || sourceProbe.duration == 0, "\(probe.duration) vs \(sourceProbe.duration)")
        guard let width = c.width, let height = c.height else {
            #expect(probe.video == nil && probe.audio != nil)
            return
        }
        let video = try #require(probe.video)
        #expect(video.width == width && video.height == height, "got \(video.width ?? 0)×\(video.height ?? 0)")
        #expect(video.side_data_list?.compactMap(\.rotation).allSatisfy { $0 == 0 } ?? true, "no display matrix on re-encoded output")
        // Upright: a frame of ours looks like ffmpeg's autorotated picture of the same
        // source frame. Sources may be VFR: pick a source frame whose display interval
        // contains an output frame time (frames are held, chosen by timestamp).
        guard width >= 16 else { return } // the 1×1 source has no picture to compare
        let rate = try #require(video.frameRate)
        let sourceTimes = try Tool.framePTS(source, stream: "v:0").sorted()
        var pair: (source: Double, output: Double)? = nil
        for i in (sourceTimes.count / 2)..<max(sourceTimes.count - 1, sourceTimes.count / 2) {
            // ffprobe prints times to 6 decimals: allow for that rounding.
            let outputTime = (sourceTimes[i] * rate - 1e-3).rounded(.up) / rate
            if outputTime < sourceTimes[i + 1] - 1e-4 { pair = (sourceTimes[i], outputTime); break }
        }
        let (sourceTime, outputTime) = try #require(pair, "\(c.file): no source frame to compare")
        let ours = try Tool.rgbFrame(output, at: outputTime)
        let reference = try Tool.referenceFrame(source, at: sourceTime, width: width, height: height)
        let upright = ours.meanDifference(reference)
        #expect(upright < 12, "\(c.file): mean difference from ffmpeg's upright frame is \(upright)")
    }

    @Test(arguments: ["17_zero_length.webm", "18_garbage_1024_incrementing_bytes.mp3",
                      "19_truncated_inside_moov.mp4", "20_DERIVED_iphone14pro_cut_before_moov.MOV"])
    func brokenFilesGiveOneClearLineAndExitOne(_ file: String) throws {
        let source = Fixtures.real(file)
        let output = Fixtures.scratchPath("out.mp4")
        let result = try Moonreel.runScript(Self.exportScript, name: "export.lua", arguments: [source, output, "HighestQuality"])
        #expect(result.status == 1)
        #expect(result.errorLines.count == 1, "\(result.err)")
        let line = result.errorLines.first ?? ""
        #expect(line.contains("export.lua:1: bad argument #1 to 'asset' (input \"\(source)\": "), "\(line)")
        #expect(!FileManager.default.fileExists(atPath: output))
        let probe = try Moonreel.run(["probe", source])
        #expect(probe.status == 1 && probe.errorLines.count == 1)
    }
}
