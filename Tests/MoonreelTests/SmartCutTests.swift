import Foundation
import Testing
import TestSupport

/// The `SmartCut` preset (issue 10.2): frame-exact cuts that copy every whole GOP and
/// re-encode only the partial GOPs at the cuts, checked against the source with ffprobe
/// (packet hashes, timestamps) and ffmpeg (pixels, a clean decode).
@Suite struct SmartCutTests {
    /// 10 s, 2 s GOPs, B-frames (High profile): the shape of a camera or x264 file.
    static func source() throws -> String {
        try Fixtures.clip(seconds: 10, size: "640x360", extra: ["-preset", "medium", "-g", "60", "-keyint_min", "60", "-sc_threshold", "0"])
    }

    /// What a smart cut must be: `frames` frames at the source's spacing, the first one the
    /// source frame at `start` (closer to it by `margin` than to its neighbours: footage that
    /// hardly moves needs a small one), decoding without a single complaint.
    static func expectFrameExactCut(_ output: String, of source: String, start: Double, frames: Int, margin: Double = 2) throws {
        let probe = try Tool.ffprobe(output)
        let video = try #require(probe.video)
        #expect((video.codec_name == "h264" && video.codec_tag_string == "avc1") || (video.codec_name == "hevc" && video.codec_tag_string == "hvc1"))
        #expect(video.frameCount == frames, "\(video.frameCount ?? -1) frames")
        let pts = try Tool.framePTS(output)
        #expect(pts.count == frames && abs(pts.first ?? 1) < 1e-6)
        let decode = try Tool.run("ffmpeg", ["-v", "error", "-i", output, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.err.isEmpty, "\(decode.err)")
        let first = try Tool.rgbFrame(output, at: 0)
        let atStart = try Tool.rgbFrame(source, at: start)
        let before = try Tool.rgbFrame(source, at: start - 1.0 / 30), after = try Tool.rgbFrame(source, at: start + 1.0 / 30)
        let match = first.meanDifference(atStart)
        #expect(match * margin < first.meanDifference(before) && match * margin < first.meanDifference(after))
    }

    @Test func copiesTheWholeGOPsBitForBitAndReencodesOnlyTheEnds() throws {
        let source = try SmartCutTests.source()
        let output = Fixtures.scratchPath("smart.mp4")
        let result = try Moonreel.run(["run", Moonreel.example("trim.lua"), source, output, "2.5", "5"])
        #expect(result.status == 0 && !result.err.contains("SmartCut"), "\(result.err)")
        try SmartCutTests.expectFrameExactCut(output, of: source, start: 2.5, frames: 150)

        // The GOP at 4–6 s lies wholly inside 2.5–7.5 s: its 60 packets are the source's own.
        let copied = try Tool.packets(source).filter { $0.time >= 4 - 1e-6 && $0.time < 6 - 1e-6 }.map(\.hash)
        let written = try Tool.packets(output).filter { $0.time >= 1.5 - 1e-6 && $0.time < 3.5 - 1e-6 }.map(\.hash)
        #expect(copied.count == 60 && written == copied)
        // The partial GOPs were re-encoded (none of their packets is a source packet) and look
        // like the source: PSNR against the source's own frames.
        let sourceHashes = Set(try Tool.packets(source).map(\.hash))
        let reencoded = try Tool.packets(output).filter { $0.time < 1.5 - 1e-6 || $0.time >= 3.5 - 1e-6 }
        #expect(reencoded.count == 90 && reencoded.allSatisfy { !sourceHashes.contains($0.hash) })
        let psnr = try Tool.psnr(source, against: output, filter: "trim=start=2.5:end=7.5,setpts=PTS-STARTPTS")
        #expect(psnr > 45, "PSNR \(psnr) dB")

        // Audio is cut to the same range, sample-exact: same start and length as the video.
        let probe = try Tool.ffprobe(output)
        let video = try #require(probe.video), audio = try #require(probe.audio)
        let videoSeconds = try #require(video.durationSeconds), audioSeconds = try #require(audio.durationSeconds)
        #expect(abs(videoSeconds - 5) < 0.001 && abs(audioSeconds - videoSeconds) < 0.005, "video \(videoSeconds) s, audio \(audioSeconds) s")
        #expect(video.start_time.flatMap(Double.init) == 0 && audio.start_time.flatMap(Double.init) == 0)
    }

    @Test func aCutOnKeyframesIsACopy() throws {
        let source = try SmartCutTests.source()
        let output = Fixtures.scratchPath("keyframes.mp4")
        let result = try Moonreel.run(["run", Moonreel.example("trim.lua"), source, output, "2", "6"])
        #expect(result.status == 0, "\(result.err)")
        try SmartCutTests.expectFrameExactCut(output, of: source, start: 2, frames: 180)
        let copied = try Tool.packets(source).filter { $0.time >= 2 - 1e-6 && $0.time < 8 - 1e-6 }.map(\.hash)
        #expect(try Tool.packets(output).map(\.hash) == copied)
    }

    @Test func joinsTwoCutsOfOneSource() throws {
        let source = try SmartCutTests.source()
        let output = Fixtures.scratchPath("joined.mp4")
        let result = try Moonreel.runScript("""
            local asset = av.asset(arg[1])
            local comp = av.composition()
            comp:insertTimeRange(av.range(1.2, 3.5), asset, 0)
            comp:insertTimeRange(av.range(5.5, 2.5), asset, 3.5)
            local session = av.exportSession(comp, "SmartCut")
            session.outputURL = arg[2]
            assert(session:export())
            """, arguments: [source, output])
        #expect(result.status == 0 && !result.err.contains("SmartCut"), "\(result.err)")
        try SmartCutTests.expectFrameExactCut(output, of: source, start: 1.2, frames: 105 + 75)
        // The second clip starts with the source's frame at 5.5 s, 3.5 s into the output.
        let join = try Tool.rgbFrame(output, at: 3.5)
        let atCut = try Tool.rgbFrame(source, at: 5.5), before = try Tool.rgbFrame(source, at: 5.5 - 1.0 / 30)
        #expect(join.meanDifference(atCut) < join.meanDifference(before) / 2)
        // Each clip's whole GOP is copied: 2–4 s of the first, 6–8 s of the second.
        let sourcePackets = try Tool.packets(source), outputPackets = try Tool.packets(output)
        for (gop, placed) in [(2.0, 0.8), (6.0, 4.0)] {
            let copied = sourcePackets.filter { $0.time >= gop - 1e-6 && $0.time < gop + 2 - 1e-6 }.map(\.hash)
            let written = outputPackets.filter { $0.time >= placed - 1e-6 && $0.time < placed + 2 - 1e-6 }.map(\.hash)
            #expect(copied.count == 60 && written == copied, "GOP at \(gop) s")
        }
    }

    /// x265's default GOPs are open: a CRA keyframe's leading pictures, shown before it,
    /// refer to the GOP before. The copy leaves them out (they are re-encoded with the head)
    /// and the re-encoded frames end their coded video sequence before the copied CRA.
    @Test func cutsHEVCWithOpenGOPsAndKeepsHVC1() throws {
        let source = try Fixtures.clip(seconds: 10, size: "640x360",
                                       extra: ["-c:v", "libx265", "-tag:v", "hvc1", "-x265-params", "keyint=60:min-keyint=60:scenecut=0:log-level=error"])
        let output = Fixtures.scratchPath("hevc.mp4")
        let result = try Moonreel.run(["run", Moonreel.example("trim.lua"), source, output, "2.5", "5"])
        #expect(result.status == 0 && !result.err.contains("SmartCut"), "\(result.err)")
        let video = try #require(try Tool.ffprobe(output).video)
        #expect(video.codec_name == "hevc" && video.codec_tag_string == "hvc1" && video.frameCount == 150)
        let decode = try Tool.run("ffmpeg", ["-v", "error", "-i", output, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.err.isEmpty, "\(decode.err)")
        // The GOP of the keyframe at 4 s, without the leading pictures shown before it.
        let sourcePackets = try Tool.packets(source), outputPackets = try Tool.packets(output)
        let copied = sourcePackets.filter { $0.time >= 4 - 1e-6 && $0.time < 6 - 1e-6 }.map(\.hash)
        let written = outputPackets.filter { $0.time >= 1.5 - 1e-6 && $0.time < 3.5 - 1e-6 }.map(\.hash)
        let copiedHere = written.filter { Set(copied).contains($0) }
        #expect(copiedHere.count >= 50 && copiedHere == copied.filter { Set(written).contains($0) }, "\(copiedHere.count) packets copied")
        let psnr = try Tool.psnr(source, against: output, filter: "trim=start=2.5:end=7.5,setpts=PTS-STARTPTS")
        #expect(psnr > 45, "PSNR \(psnr) dB")
    }

    @Test func reencodesWithAReasonWhenItCannotCopy() throws {
        let mpeg4 = try Fixtures.clip(seconds: 3, extra: ["-c:v", "mpeg4"])
        let output = Fixtures.scratchPath("mpeg4.mp4")
        let result = try Moonreel.runScript(Moonreel.cutScript(start: 0.5, duration: 2, preset: "SmartCut"), arguments: [mpeg4, output])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("SmartCut re-encodes everything with HighestQuality settings:") && result.err.contains("is mpeg4 video"), "\(result.err)")
        let probe = try Tool.ffprobe(output)
        #expect(probe.video?.codec_name == "h264" && probe.video?.frameCount == 60)

        // Interlaced H.264 and hev1 HEVC (parameter sets possibly in the samples) are not spliced.
        let interlaced = try Fixtures.clip(seconds: 3, extra: ["-flags", "+ildct+ilme", "-x264opts", "interlaced=1"])
        let fields = try Moonreel.runScript(Moonreel.cutScript(start: 0.5, duration: 2, preset: "SmartCut"),
                                            arguments: [interlaced, Fixtures.scratchPath("interlaced.mp4")])
        #expect(fields.status == 0 && fields.err.contains("is interlaced"), "\(fields.err)")
        let hev1 = try Fixtures.clip(seconds: 3, extra: ["-c:v", "libx265", "-tag:v", "hev1", "-x265-params", "log-level=error"])
        let inBand = try Moonreel.runScript(Moonreel.cutScript(start: 0.5, duration: 2, preset: "SmartCut"),
                                            arguments: [hev1, Fixtures.scratchPath("hev1.mp4")])
        #expect(inBand.status == 0 && inBand.err.contains("may carry parameter sets inside its samples (hev1)"), "\(inBand.err)")

        let withLayers = Fixtures.scratchPath("layers.mp4")
        let layered = try Moonreel.runScript(Moonreel.wholeAssetComposition(argument: 1) + """
            local vc = av.videoComposition(comp)
            \(Moonreel.exportThroughVideoComposition(preset: "\"SmartCut\""))
            """, arguments: [try SmartCutTests.source(), withLayers])
        #expect(layered.status == 0 && layered.err.contains("a video composition redraws every frame"), "\(layered.err)")
    }

    /// A real phone file: iPhone 4S, Baseline, portrait by a rotation matrix, a keyframe a
    /// second. The cut 0.5–2.1 s holds the GOP 1.0–2.0 s whole; the rotation stays as metadata.
    @Test func cutsARealIPhoneFile() throws {
        guard let iphone = Fixtures.real("01_iphone4s_portrait_h264_rot90.mov") else {
            print("skipped: ../shared/media/real is not here")
            return
        }
        let output = Fixtures.scratchPath("iphone.mp4")
        let result = try Moonreel.runScript(Moonreel.cutScript(start: 0.5, duration: 1.6, preset: "SmartCut"), arguments: [iphone, output])
        #expect(result.status == 0 && !result.err.contains("SmartCut"), "\(result.err)")
        // The frame shown at 0.5 s, then every frame after it before 1.3 s.
        let laterFrames = try Tool.framePTS(iphone).filter { $0 > 0.5 + 1e-6 && $0 < 2.1 - 1e-6 }
        try SmartCutTests.expectFrameExactCut(output, of: iphone, start: 0.5, frames: laterFrames.count + 1, margin: 1)
        let keyframes = try Tool.packets(iphone).filter(\.isKeyframe).map(\.time)
        let gop = try #require(keyframes.count >= 3 ? (keyframes[1], keyframes[2]) : nil)
        let copied = try Tool.packets(iphone).filter { $0.time >= gop.0 && $0.time < gop.1 }.map(\.hash)
        let written = try Tool.packets(output).filter { $0.time >= gop.0 - 0.5 - 1e-6 && $0.time < gop.1 - 0.5 - 1e-6 }.map(\.hash)
        #expect(copied.count > 20 && written == copied)
        #expect(try Tool.ffprobe(output).video?.side_data_list?.contains { $0.rotation == -90 } == true)
    }

    /// Real files that are not camera-shaped: 4:4:4 H.264 in Matroska (re-encoded as 4:4:4,
    /// matched), and an MP4 whose keyframes show after the frames decoded from them (open
    /// GOPs, an edit list, 1 fps): no IDR picture to copy from, so every frame is re-encoded,
    /// decoded from a GOP early enough to have them all.
    @Test func matchesFourFourFourAndOpenGOPsOnRealFiles() throws {
        guard let matroska = Fixtures.real("16_mkv_negative_audio_start_yuv444p.mkv"),
              let openGOPs = Fixtures.real("14_h264_yuv444p_editlist_negpts_noaudio.mp4") else {
            print("skipped: ../shared/media/real is not here")
            return
        }
        for (source, start, duration, frames) in [(matroska, "0.5", "3.5", 105), (openGOPs, "1.5", "8", 8)] {
            let output = Fixtures.scratchPath("444.mp4")
            let result = try Moonreel.run(["run", Moonreel.example("trim.lua"), source, output, start, duration])
            #expect(result.status == 0 && !result.err.contains("SmartCut"), "\(result.err)")
            let video = try #require(try Tool.ffprobe(output).video)
            #expect(video.pix_fmt == "yuv444p" && video.frameCount == frames, "\(source): \(video.frameCount ?? -1) frames")
            let decode = try Tool.run("ffmpeg", ["-v", "error", "-i", output, "-f", "null", "-"])
            #expect(decode.status == 0 && decode.err.isEmpty, "\(decode.err)")
        }
    }

    /// iPhone HEVC: 10-bit HLG, open GOPs of a second, an edit list, variable frame rate.
    /// The middle GOP is copied; the ends are re-encoded in 10-bit with the HLG tags.
    @Test func cutsARealIPhoneHEVCFile() throws {
        guard let iphone = Fixtures.real("03_iphone_trimmed_hevc10_editlist_vfr.mp4") else {
            print("skipped: ../shared/media/real is not here")
            return
        }
        let output = Fixtures.scratchPath("iphone-hevc.mp4")
        let result = try Moonreel.run(["run", Moonreel.example("trim.lua"), iphone, output, "0.3", "2"])
        #expect(result.status == 0 && !result.err.contains("SmartCut"), "\(result.err)")
        let info = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                            "stream=codec_tag_string,pix_fmt,color_transfer", "-of", "csv=p=0", output])
        #expect(info.out.hasPrefix("hvc1,yuv420p10le,arib-std-b67"), "\(info.out)")
        let laterFrames = try Tool.framePTS(iphone).filter { $0 > 0.3 + 1e-6 && $0 < 2.3 - 1e-6 }
        try SmartCutTests.expectFrameExactCut(output, of: iphone, start: 0.3, frames: laterFrames.count + 1, margin: 1)
        let sourceHashes = Set(try Tool.packets(iphone).map(\.hash))
        #expect(try Tool.packets(output).filter { sourceHashes.contains($0.hash) }.count >= 25)
    }
}
