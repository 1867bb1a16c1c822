import Foundation
import Testing
import TestSupport
@testable import MoonreelEngine

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
        #expect(result.status == 0 && !result.err.contains("SmartCut re-encodes everything"), "\(result.err)")
        try SmartCutTests.expectFrameExactCut(output, of: source, start: 2.5, frames: 150)
        // Issue 25: it says what it did.
        #expect(result.err.contains("SmartCut copies 60 frames (1 GOP) and re-encodes 90 around the cuts"), "\(result.err)")

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

    /// Issue 25: a smart cut of an iPhone Dolby Vision clip dropped Dolby Vision without a word.
    @Test func dolbyVisionThatIsNotKeptIsSaid() throws {
        let output = Fixtures.scratchPath("dovi.mov")
        let result = try Moonreel.runScript("""
            local a = av.asset(arg[1]); local comp = av.composition(); comp:insertTimeRange(av.range(0, a.duration), a, 0)
            local s = av.exportSession(comp, "SmartCut"); s.outputURL = arg[2]; assert(s:export())
            """, arguments: [Fixtures.real("02_iphone14pro_portrait_hevc10_hlg_dovi.MOV"), output])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("SmartCut does not keep the source's Dolby Vision (profile 8.4)"), "\(result.err)")
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

    /// A SmartCut re-encodes the sound with its mix: a volume that drives it past full scale
    /// is turned down by the limiter, and that is said (a `soundLimited` warning) as in a
    /// re-encoding export; it was silent here.
    @Test func aLimitedMixIsSaidToo() throws {
        let output = Fixtures.scratchPath("loud-cut.mp4")
        let result = try Moonreel.runScript("""
            local asset = av.asset(arg[1])
            local comp = av.composition()
            comp:insertTimeRange(av.range(2, 4), asset, 0)
            local p = av.audioMixInputParameters(comp:tracksWithMediaType("audio")[1])
            p:setVolume(16, 0)
            local session = av.exportSession(comp, "SmartCut")
            session.outputURL, session.audioMix = arg[2], av.audioMix{ inputParameters = { p } }
            assert(session:export())
            """, name: "loud-cut.lua", arguments: [try SmartCutTests.source(), output])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.errorLines.contains { $0.contains("loud-cut.lua:8: the mix goes over full scale") && $0.hasSuffix("[soundLimited]") }, "\(result.err)")
    }

    /// Two ranges (start, duration in seconds) of `source`, one after the other, smart-cut.
    static func join(_ source: String, _ first: (Double, Double), _ second: (Double, Double), to output: String) throws -> Moonreel.Result {
        try Moonreel.runScript("""
            local asset = av.asset(arg[1])
            local comp = av.composition()
            comp:insertTimeRange(av.range(\(first.0), \(first.1)), asset, 0)
            comp:insertTimeRange(av.range(\(second.0), \(second.1)), asset, \(first.1))
            local session = av.exportSession(comp, "SmartCut")
            session.outputURL = arg[2]
            assert(session:export())
            """, arguments: [source, output])
    }

    @Test func joinsTwoCutsOfOneSource() throws {
        let source = try SmartCutTests.source()
        let output = Fixtures.scratchPath("joined.mp4")
        let result = try Self.join(source, (1.2, 3.5), (5.5, 2.5), to: output)
        #expect(result.status == 0 && !result.err.contains("SmartCut re-encodes everything"), "\(result.err)")
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
        #expect(result.status == 0 && !result.err.contains("SmartCut re-encodes everything"), "\(result.err)")
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

        // A video composition that turns every frame a little (smart rendering copies nothing).
        let withLayers = Fixtures.scratchPath("layers.mp4")
        let layered = try Moonreel.runScript(Moonreel.wholeAssetComposition(argument: 1) + """
            local vc = av.videoComposition(comp)
            vc.instructions[1].layerInstructions[1]:setTransform(av.transform():scaled(0.5, 0.5), 0)
            \(Moonreel.exportThroughVideoComposition(preset: "\"SmartCut\""))
            """, arguments: [try SmartCutTests.source(), withLayers])
        #expect(layered.status == 0 && layered.err.contains("the video composition draws on every GOP"), "\(layered.err)")
    }

    /// A real phone file: iPhone 4S, Baseline, portrait by a rotation matrix, a keyframe a
    /// second. The cut 0.5–2.1 s holds the GOP 1.0–2.0 s whole; the rotation stays as metadata.
    @Test func cutsARealIPhoneFile() throws {
        let iphone = Fixtures.real("01_iphone4s_portrait_h264_rot90.mov")
        let output = Fixtures.scratchPath("iphone.mp4")
        let result = try Moonreel.runScript(Moonreel.cutScript(start: 0.5, duration: 1.6, preset: "SmartCut"), arguments: [iphone, output])
        #expect(result.status == 0 && !result.err.contains("SmartCut re-encodes everything"), "\(result.err)")
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
        let matroska = Fixtures.real("16_mkv_negative_audio_start_yuv444p.mkv")
        let openGOPs = Fixtures.real("14_h264_yuv444p_editlist_negpts_noaudio.mp4")
        for (source, start, duration, frames) in [(matroska, "0.5", "3.5", 105), (openGOPs, "1.5", "8", 8)] {
            let output = Fixtures.scratchPath("444.mp4")
            let result = try Moonreel.run(["run", Moonreel.example("trim.lua"), source, output, start, duration])
            #expect(result.status == 0 && !result.err.contains("SmartCut re-encodes everything"), "\(result.err)")
            let video = try #require(try Tool.ffprobe(output).video)
            #expect(video.pix_fmt == "yuv444p" && video.frameCount == frames, "\(source): \(video.frameCount ?? -1) frames")
            let decode = try Tool.run("ffmpeg", ["-v", "error", "-i", output, "-f", "null", "-"])
            #expect(decode.status == 0 && decode.err.isEmpty, "\(decode.err)")
        }
    }

    /// iPhone HEVC: 10-bit HLG, open GOPs of a second, an edit list, variable frame rate.
    /// The middle GOP is copied; the ends are re-encoded in 10-bit with the HLG tags.
    @Test func cutsARealIPhoneHEVCFile() throws {
        let iphone = Fixtures.real("03_iphone_trimmed_hevc10_editlist_vfr.mp4")
        let output = Fixtures.scratchPath("iphone-hevc.mp4")
        let result = try Moonreel.run(["run", Moonreel.example("trim.lua"), iphone, output, "0.3", "2"])
        #expect(result.status == 0 && !result.err.contains("SmartCut re-encodes everything"), "\(result.err)")
        let info = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                            "stream=codec_tag_string,pix_fmt,color_transfer", "-of", "csv=p=0", output])
        #expect(info.out.hasPrefix("hvc1,yuv420p10le,arib-std-b67"), "\(info.out)")
        let laterFrames = try Tool.framePTS(iphone).filter { $0 > 0.3 + 1e-6 && $0 < 2.3 - 1e-6 }
        try SmartCutTests.expectFrameExactCut(output, of: iphone, start: 0.3, frames: laterFrames.count + 1, margin: 1)
        let sourceHashes = Set(try Tool.packets(iphone).map(\.hash))
        #expect(try Tool.packets(output).filter { sourceHashes.contains($0.hash) }.count >= 25)
    }

    // MARK: The third attack round (issue 24 §10–12)

    /// §10: an open-GOP H.264 source (x264 open-gop, B-frames): a range that ends exactly on
    /// a keyframe keeps that keyframe's leading pictures shown before it (they were lost: 57
    /// of 60 frames for 0–2 s, 27 of 30 for 1–2 s, exit 0).
    @Test func anOpenGOPRangeEndingOnAKeyframeKeepsEveryFrame() throws {
        let source = try Fixtures.clip(seconds: 6, size: "640x360",
                                       extra: ["-preset", "medium", "-bf", "3", "-x264-params", "open-gop=1:keyint=30:min-keyint=30:scenecut=0"])
        for (start, frames) in [(0.0, 60), (1.0, 30), (1.0, 60)] {
            let output = Fixtures.scratchPath("open-gop.mp4")
            let result = try Moonreel.run(["run", Moonreel.example("trim.lua"), source, output, "\(start)", "\(Double(frames) / 30)"])
            #expect(result.status == 0 && !result.err.contains("SmartCut re-encodes everything"), "\(result.err)")
            if start > 0 {
                try SmartCutTests.expectFrameExactCut(output, of: source, start: start, frames: frames)
            } else { // no frame before the first to tell it from
                #expect(try Tool.framePTS(output).count == frames)
                let decode = try Tool.run("ffmpeg", ["-v", "error", "-i", output, "-f", "null", "-"])
                #expect(decode.status == 0 && decode.err.isEmpty, "\(decode.err)")
            }
            // The last frame is the source's frame just before the end keyframe.
            let last = try Tool.rgbFrame(output, at: Double(frames - 1) / 30)
            let expected = try Tool.rgbFrame(source, at: start + Double(frames - 1) / 30)
            let next = try Tool.rgbFrame(source, at: start + Double(frames) / 30)
            #expect(last.meanDifference(expected) * 2 < last.meanDifference(next), "\(start) s")
        }
    }

    /// §11: a cut between two frames (0.35 s at 30 fps) gives the frames of every other
    /// export: 30 for 1 s, on the k/30 grid from 0 (before: 31, the first 1/60 s long, the
    /// rest at 0.0167 + k/30); two such clips joined give 60 for 2 s.
    @Test func aCutBetweenFramesKeepsTheFrameGrid() throws {
        let source = try SmartCutTests.source()
        let output = Fixtures.scratchPath("between.mp4")
        let result = try Moonreel.run(["run", Moonreel.example("trim.lua"), source, output, "0.35", "1"])
        #expect(result.status == 0, "\(result.err)")
        // The first frame is the one shown at 0.35 s: the source's frame at 1/3 s.
        try SmartCutTests.expectFrameExactCut(output, of: source, start: 1.0 / 3, frames: 30)
        let pts = try Tool.framePTS(output)
        #expect(pts.enumerated().allSatisfy { abs($0.element - Double($0.offset) / 30) < 1e-3 }, "\(pts.prefix(4))")
        let joined = Fixtures.scratchPath("between-joined.mp4")
        let join = try Self.join(source, (0.35, 1), (4.35, 1), to: joined)
        #expect(join.status == 0, "\(join.err)")
        let joinedPTS = try Tool.framePTS(joined)
        #expect(joinedPTS.count == 60 && joinedPTS.enumerated().allSatisfy { abs($0.element - Double($0.offset) / 30) < 1e-3 }, "\(joinedPTS.count) frames")
        let decode = try Tool.run("ffmpeg", ["-v", "error", "-i", joined, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.err.isEmpty, "\(decode.err)")
    }

    /// The `seq_parameter_set_id`s of the SPS units in an avcC record (from ffprobe's
    /// extradata dump) or in an Annex B stream.
    static func sequenceParameterSetIDs(_ units: [[UInt8]]) -> [Int] {
        units.filter { ($0.first ?? 0) & 0x1F == 7 }.compactMap { unit -> Int? in
            // After the header byte, profile, constraints and level: ue(v), no emulation bytes this early.
            var bits = unit.dropFirst(4).flatMap { byte in (0..<8).reversed().map { (byte >> $0) & 1 } }[...]
            var zeros = 0
            while bits.first == 0 { zeros += 1; bits = bits.dropFirst() }
            guard bits.count > zeros else { return nil }
            let value = bits.dropFirst().prefix(zeros).reduce(0) { $0 << 1 | Int($1) }
            return (1 << zeros) - 1 + value
        }
    }

    /// §12: a source whose samples carry their own SPS/PPS (ids 0 in the sample entry, 1
    /// inside the samples of its second half): the re-encoded frames' sets get an id that
    /// neither uses (before: 1, the one the copied samples redefine).
    @Test func reencodedParameterSetsAvoidTheIdsInsideTheSamples() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        var parts: [String] = []
        for (index, id) in [0, 1].enumerated() {
            let part = folder + "/part\(index).h264"
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=4", "-vf", index == 1 ? "negate" : "null",
                             "-c:v", "libx264", "-preset", "fast", "-bf", "0", "-x264-params", "sps-id=\(id):keyint=30:min-keyint=30:scenecut=0", part])
            parts.append(part)
        }
        let joinedStream = folder + "/both.h264"
        let bytes = try parts.reduce(Data()) { $0 + (try Data(contentsOf: URL(fileURLWithPath: $1))) }
        try bytes.write(to: URL(fileURLWithPath: joinedStream))
        let source = folder + "/in-band.mp4"
        try Tool.ffmpeg(["-r", "30", "-i", joinedStream, "-c", "copy", source])
        let inBand = Self.sequenceParameterSetIDs(NALUnits.annexB([UInt8](try Data(contentsOf: URL(fileURLWithPath: parts[1])))).map { Array($0) })
        #expect(Set(inBand) == [1])
        let output = folder + "/cut.mp4"
        let result = try Moonreel.run(["run", Moonreel.example("trim.lua"), source, output, "4.5", "2.5"])
        #expect(result.status == 0 && !result.err.contains("SmartCut re-encodes everything"), "\(result.err)")
        let probe = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_streams", "-show_data", output])
        // The dump after "extradata=": hex words, then the ASCII column.
        let hex = probe.out.split(separator: "\n").drop { !$0.hasPrefix("extradata=") }.dropFirst()
            .prefix { $0.hasPrefix("0") }.flatMap { line in line.split(separator: " ").dropFirst().prefix(8).filter { $0.count == 4 } }
            .joined()
        let record = stride(from: 0, to: hex.count - 1, by: 2).compactMap { offset -> UInt8? in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)
        }
        #expect(record.count > 8 && record[5] & 0x1F == 2, "avcC \(record.prefix(8))")
        var units: [[UInt8]] = [], index = 6
        for _ in 0..<Int(record.count > 5 ? record[5] & 0x1F : 0) where index + 2 <= record.count {
            let length = Int(record[index]) << 8 | Int(record[index + 1])
            units.append(Array(record[(index + 2)..<min(index + 2 + length, record.count)]))
            index += 2 + length
        }
        let header = Self.sequenceParameterSetIDs(units)
        #expect(header.count == 2 && header.first == 0 && !header.contains(1), "sample entry SPS ids \(header)")
        let decode = try Tool.run("ffmpeg", ["-v", "error", "-i", output, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.err.isEmpty, "\(decode.err)")
    }
}
