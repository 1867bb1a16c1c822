import Foundation
import Testing
import TestSupport

/// iOS code inserts every track over the asset's whole duration, though real files' tracks
/// rarely last exactly that long: the part of the range where a track has no media is empty
/// time (silence; video holds its last frame, or shows the background before its first).
@Suite struct TrackRangeTests {
    /// Seeds 001/004: each track inserted with the track call over `asset.duration`; the
    /// composition call must build the same segments. Prints the composition's duration.
    static let seedScript = """
        local asset = av.asset(arg[1])
        local function describe(comp)
          local lines = {}
          for _, track in ipairs(comp.tracks) do
            for _, s in ipairs(track.segments) do
              lines[#lines + 1] = ("%s %s %.6f+%.6f <- %.6f"):format(track.mediaType, tostring(s.empty),
                s.targetRange.start, s.targetRange.duration, s.sourceRange.start)
            end
          end
          table.sort(lines)
          return table.concat(lines, "\\n")
        end
        local comp = av.composition()
        local video = asset:tracksWithMediaType("video")[1]
        if video then comp:addMutableTrack("video"):insertTimeRange(av.range(0, asset.duration), video, 0) end
        for _, audio in ipairs(asset:tracksWithMediaType("audio")) do
          comp:addMutableTrack("audio"):insertTimeRange(av.range(0, asset.duration), audio, 0)
        end
        if not video or #asset:tracksWithMediaType("video") == 1 then
          local whole = av.composition()
          whole:insertTimeRange(av.range(0, asset.duration), asset, 0)
          assert(describe(whole) == describe(comp), "the two calls disagree:\\n" .. describe(whole) .. "\\n--\\n" .. describe(comp))
        end
        local session = av.exportSession(comp, "HighestQuality")
        session.outputURL = arg[2]
        local ok, err = session:export()
        if not ok then error(err, 0) end
        print(("%.6f %.6f"):format(asset.duration, comp.duration))
        """

    struct Exported {
        let probe: Probe
        let compositionDuration: Double
        let output: String
    }

    static func exportWholeAsset(_ source: String, _ ext: String = "mp4") throws -> Exported {
        let output = Fixtures.scratchPath("whole.\(ext)")
        let result = try Moonreel.runScript(seedScript, name: "seed.lua", arguments: [source, output])
        try #require(result.status == 0, "\(source): \(result.err)")
        let durations = result.out.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
        try #require(durations.count == 2, "\(result.out)")
        #expect(abs(durations[0] - durations[1]) < 1e-4, "composition \(durations[1]) s, asset \(durations[0]) s")
        return Exported(probe: try Tool.ffprobe(output), compositionDuration: durations[1], output: output)
    }

    /// Both streams last the inserted duration, within one output frame.
    static func expectStreamsLast(_ exported: Exported, _ label: String) throws {
        let frame = 1 / (exported.probe.video?.frameRate ?? 30)
        for stream in exported.probe.streams {
            let seconds = try #require(stream.durationSeconds, "\(label): \(stream.codec_type) has no duration")
            #expect(abs(seconds - exported.compositionDuration) <= frame + 1e-3,
                    "\(label): \(stream.codec_type) lasts \(seconds) s, the composition \(exported.compositionDuration) s")
        }
    }

    static let realVideoFiles = [
        "01_iphone4s_portrait_h264_rot90.mov", "02_iphone14pro_portrait_hevc10_hlg_dovi.MOV",
        "03_iphone_trimmed_hevc10_editlist_vfr.mp4", "04_android12_portrait_4k60_rot90_yuvj.mp4",
        "05_pixel_motionphoto_hevc_rot270_2videotracks.mp4", "06_android_rot180_vfr_10fps.mp4",
        "07_screenrec_extreme_vfr_noaudio.mp4", "08_chrome_mediarecorder_vp9_opus_noduration.webm",
        "11_vp9_odd_161x121.webm", "12_vp9_profile2_10bit.webm", "13_h264_1x1_yuv444p.mp4",
        "14_h264_yuv444p_editlist_negpts_noaudio.mp4", "16_mkv_negative_audio_start_yuv444p.mkv",
    ]

    @Test(arguments: realVideoFiles)
    func wholeAssetIdiomWorksOnRealFiles(_ file: String) throws {
        let source = Fixtures.real(file)
        try Self.expectStreamsLast(try Self.exportWholeAsset(source), file)
    }

    @Test func audioOnlyMP3IsExportedWhole() throws {
        // FFmpeg puts the MP3's first sample at 0.023 s, after the encoder's delay; its times
        // count from there (AudioMixTests.anMP3CountsFromItsFirstSound).
        let source = Fixtures.real("10_mp3_vbr_xing_audioonly.mp3")
        let exported = try Self.exportWholeAsset(source, "m4a")
        try Self.expectStreamsLast(exported, "10")
    }

    @Test func realVideoThatEndsBeforeItsAudioHoldsItsLastFrame() throws {
        // 04: video 0.2997 s in an asset of 0.3127 s; 16: video 5.0 s in 5.015 s.
        for (file, width, height) in [("04_android12_portrait_4k60_rot90_yuvj.mp4", 2160, 3840),
                                      ("16_mkv_negative_audio_start_yuv444p.mkv", 320, 240)] {
            let source = Fixtures.real(file)
            let exported = try Self.exportWholeAsset(source)
            let times = try Tool.framePTS(exported.output)
            let lastSource = try #require(try Tool.framePTS(source).max())
            let last = try #require(times.last)
            #expect(last > lastSource, "\(file): the output's last frame (\(last) s) is not after the source's (\(lastSource) s)")
            let ours = try Tool.rgbFrame(exported.output, at: last)
            let reference = try Tool.referenceFrame(source, at: lastSource, width: width, height: height)
            #expect(ours.meanDifference(reference) < 12, "\(file): the last frame is not the source's last frame held")
            #expect(ours.mean(x: 0, y: 0, width: width, height: height).g > 20, "\(file): the last frame is black")
        }
    }

    @Test func webmAudioThatStartsLateBeginsWithSilence() throws {
        // 08: Chrome's Opus audio starts at 0.015 s.
        let source = Fixtures.real("08_chrome_mediarecorder_vp9_opus_noduration.webm")
        let exported = try Self.exportWholeAsset(source)
        let samples = try Tool.audioSamples(exported.output)
        #expect(samples.level(from: 0, to: 600) < 1e-4, "the first 12.5 ms should be silent: \(samples.level(from: 0, to: 600))")
    }

    // MARK: Generated files whose tracks differ in length

    static func generated(_ name: String, video: [String], audio: [String]) throws -> String {
        try Fixtures.cached(name) { path in
            try Tool.ffmpeg(video + ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=2"]
                            + audio + ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2"]
                            + ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", path])
        }
    }

    @Test func shortAudioEndsInSilenceAndTheVideoRunsOn() throws {
        let source = try Self.generated("track-range-short-audio.mp4", video: [], audio: ["-t", "1.5"])
        let exported = try Self.exportWholeAsset(source)
        try Self.expectStreamsLast(exported, "short audio")
        let samples = try Tool.audioSamples(exported.output)
        #expect(samples.level(from: 24_000, to: 69_000) > 0.05, "the tone plays up to 1.5 s")
        #expect(samples.level(from: 74_000, to: 95_000) < 1e-3, "silence after 1.5 s")
    }

    @Test func lateAudioStartsWithSilence() throws {
        let source = try Self.generated("track-range-late-audio.mp4", video: [], audio: ["-itsoffset", "0.5"])
        let exported = try Self.exportWholeAsset(source)
        try Self.expectStreamsLast(exported, "late audio")
        let samples = try Tool.audioSamples(exported.output)
        #expect(samples.level(from: 0, to: 22_000) < 1e-3, "silence before 0.5 s")
        #expect(samples.level(from: 26_000, to: 48_000) > 0.05, "the tone from 0.5 s")
    }

    @Test func lateVideoShowsTheBackgroundUntilItsFirstFrame() throws {
        // Matroska keeps the late start (MP4's empty edit is dropped by FFmpeg's reader).
        let source = try Self.generated("track-range-late-video.mkv", video: ["-itsoffset", "1"], audio: [])
        let exported = try Self.exportWholeAsset(source)
        try Self.expectStreamsLast(exported, "late video")
        let early = try Tool.rgbFrame(exported.output, at: 0.5).mean(x: 0, y: 0, width: 320, height: 240)
        #expect(early.r < 20 && early.g < 20 && early.b < 20, "black before the first frame: \(early)")
        let shown = try Tool.rgbFrame(exported.output, at: 1.5)
        #expect(shown.meanDifference(try Tool.rgbFrame(source, at: 1.5)) < 8)
    }

    @Test func rangeOutsideTheAssetStillFails() throws {
        let source = try Fixtures.clip(seconds: 2)
        for call in ["comp:addMutableTrack('audio'):insertTimeRange(r, asset:tracksWithMediaType('audio')[1], 0)",
                     "comp:insertTimeRange(r, asset, 0)"] {
            let script = """
                local asset = av.asset(arg[1])
                local comp = av.composition()
                local r = av.range(0, asset.duration + 0.5)
                \(call)
                """
            let result = try Moonreel.runScript(script, name: "outside.lua", arguments: [source])
            #expect(result.status == 1)
            #expect(result.errorLines.count == 1 && result.err.contains("outside.lua:4: insertTimeRange: time range 0…2.5") && result.err.contains("s is outside the asset (0…2"),
                    "\(result.err)")
        }
    }

    /// An MPEG-TS or MPEG-PS file (`.ts`, `.mpg`, a camcorder's AVCHD `.MTS`) counts on a
    /// stream clock that starts anywhere (here 601.38 s; 0.54 s from the ffmpeg CLI's `.mpg`),
    /// or wraps round (2^33 ticks at 90 kHz). Its times count from its media, as players show
    /// them: a cut from 2 s shows the frames 2 s in (it showed the first picture, then started
    /// 2 s into the clock). Seeks in such files land on any packet: decoding starts at the
    /// last keyframe before the time, found by reading from further back — in the file's last
    /// GOP, and for the frame just before a keyframe with B-frames too (where the cut showed
    /// the next keyframe's picture, or black), and Passthrough's copy starts at a keyframe
    /// (it copied a second that does not decode).
    @Test func anMPEGStreamCountsFromItsMediaAndSeeksToKeyframes() throws {
        /// 12 s at 25 fps with B-frames and a keyframe a second, its clock starting at `offset`;
        /// the video's start and the earliest stream's (the format's), as ffprobe reads them.
        func stream(_ name: String, clockAt offset: String) throws -> (path: String, videoStart: Double, origin: Double) {
            let path = Fixtures.scratchPath(name)
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=12", "-f", "lavfi", "-i", "sine=sample_rate=48000:duration=12",
                             "-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-g", "25", "-c:a", "aac", "-output_ts_offset", offset, path])
            let starts = try Tool.run("ffprobe", ["-v", "error", "-show_entries", "format=start_time:stream=start_time", "-of", "csv=p=0", path]).out
                .split(whereSeparator: \.isNewline).compactMap { Double($0.split(separator: ",").first ?? "") }
            // The video stream's, first; the format's, last.
            return (path, starts.first ?? .nan, starts.last ?? .nan)
        }
        let ts = try stream("clock.ts", clockAt: "600")
        try #require(ts.origin > 600, "ffprobe's start: \(ts.origin)")

        let said = try Moonreel.runScript("""
            local asset = av.asset(arg[1])
            print(("%.3f %.3f"):format(asset:tracksWithMediaType("video")[1].timeRange.start, asset.duration))
            """, arguments: [ts.path])
        #expect(said.status == 0 && said.out == String(format: "%.3f %.3f\n", ts.videoStart - ts.origin, 12 + ts.videoStart - ts.origin), "\(said.out) \(said.err)")

        // The frame shown `time` into the media, as ffmpeg decodes the whole file (frame n is
        // `n`/25 s after the video's start): the last one at or before it, or one due less than
        // a quarter of a frame after it (TrackSegment.sourceTimeShown; 11.5 s shows the frame
        // 1.3 ms later, as `ffmpeg -ss 11.5` does).
        func sourceFrame(_ file: (path: String, videoStart: Double, origin: Double), at time: Double) throws -> String {
            let index = Int(((file.origin + time - file.videoStart) * 25 + 0.25 - 1e-6).rounded(.down))
            let path = Fixtures.scratchPath("clock-ref-\(index).png")
            try Tool.ffmpeg(["-i", file.path, "-vf", "select=eq(n\\,\(index))", "-frames:v", "1", path])
            return path
        }
        func frame(of video: String, at time: Double) throws -> String {
            let path = Fixtures.scratchPath("clock-out-\(UUID().uuidString).png")
            try Tool.ffmpeg(["-i", video, "-vf", "select=gte(t\\,\(time))", "-frames:v", "1", path])
            return path
        }
        let cut = Fixtures.scratchPath("clock-cut.mp4")
        let result = try Moonreel.run(["run", Moonreel.checkout + "/scripts/examples/cut.lua", ts.path, cut, "2", "3"])
        try #require(result.status == 0, "\(result.err)")
        for time in [0, 1.52, 2.96] { // output frames 0, 38 and 74; 1.52: a seek's mid-GOP landing
            let psnr = try Tool.psnr(try frame(of: cut, at: time), against: try sourceFrame(ts, at: 2 + time))
            #expect(psnr > 35, "the frame 2 s + \(time) s into the media: PSNR \(psnr) dB")
        }

        // Ranges one after another (each a seek), and the file's exports by `preset`.
        func export(_ file: String, _ preset: String, _ ranges: [(start: Double, duration: Double)]) throws -> String {
            let output = Fixtures.scratchPath("clock-\(preset).mp4")
            let exported = try Moonreel.runScript("""
                local comp, asset, at = av.composition(), av.asset(arg[1]), 0
                for i = 4, #arg, 2 do
                  comp:insertTimeRange(av.range(tonumber(arg[i]), tonumber(arg[i + 1])), asset, at)
                  at = at + tonumber(arg[i + 1])
                end
                local session = av.exportSession(comp, arg[3])
                session.outputURL = arg[2]
                session:export()
                """, arguments: [file, output, preset] + ranges.flatMap { [String($0.start), String($0.duration)] })
            try #require(exported.status == 0, "\(exported.err)")
            return output
        }
        // 1.01: the frame before a keyframe, a P-frame decoded after the B-frames before it;
        // 11.5: in the last GOP, with no keyframe after it.
        let seeks = try export(ts.path, "HighestQuality", [(1.01, 0.12), (11.5, 0.2), (1.01, 0.12)])
        for (time, source) in [(0.0, 1.01), (0.12, 11.5), (0.32, 1.01)] {
            let psnr = try Tool.psnr(try frame(of: seeks, at: time), against: try sourceFrame(ts, at: source))
            #expect(psnr > 35, "the frame \(source) s into the media: PSNR \(psnr) dB")
        }

        let copy = try export(ts.path, "Passthrough", [(2, 3)])
        let packets = try Tool.packets(copy)
        #expect(packets.first?.isKeyframe == true, "Passthrough starts at a keyframe: \(packets.prefix(3))")
        // Copied packets keep their times: the frame shown is the one at 3.52 s, or the next
        // one where the MP4 edit list starts the first frame at 0.
        let copiedFrame = try frame(of: copy, at: 1.52)
        let psnr = try [3.52, 3.56].map { try Tool.psnr(copiedFrame, against: try sourceFrame(ts, at: $0)) }.max() ?? 0
        #expect(psnr > 35, "the copied frame 3.52 s into the media: PSNR \(psnr) dB")

        // A clock that wraps 3.7 s in: FFmpeg unwraps its times before zero.
        let wrapped = try stream("wrapped.ts", clockAt: "95440")
        let across = try export(wrapped.path, "HighestQuality", [(3.5, 0.48)])
        for time in [0.0, 0.4] {
            // ffprobe's starts are the clock's: count from the earliest stream as it wraps too.
            let psnr = try Tool.psnr(try frame(of: across, at: time), against: try sourceFrame((wrapped.path, wrapped.videoStart - wrapped.origin, 0), at: 3.5 + time))
            #expect(psnr > 35, "the frame \(3.5 + time) s into the wrapped media: PSNR \(psnr) dB")
        }
    }

    /// Passthrough from an MPEG program stream into MP4: the MP2 audio's packets, a 90 kHz
    /// tick apart after a cut, fall on one tick of the MP4's sample clock. The copy keeps
    /// decode times rising there (the export failed: "non monotonically increasing dts").
    @Test func anMPEGProgramStreamIsCopiedIntoMP4() throws {
        let program = Fixtures.scratchPath("copy.mpg")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=6", "-f", "lavfi", "-i", "sine=sample_rate=44100:duration=6",
                         "-c:v", "mpeg2video", "-g", "12", "-bf", "2", "-c:a", "mp2", program])
        let copy = Fixtures.scratchPath("copy.mp4")
        let result = try Moonreel.runScript("""
            local comp = av.composition()
            comp:insertTimeRange(av.range(3.5, 1), av.asset(arg[1]), 0)
            local session = av.exportSession(comp, "Passthrough")
            session.outputURL = arg[2]
            session:export()
            """, arguments: [program, copy])
        #expect(result.status == 0, "\(result.err)")
        let probe = try Tool.ffprobe(copy)
        let durations = [probe.video?.durationSeconds, probe.audio?.durationSeconds]
        #expect(durations.allSatisfy { abs(($0 ?? 0) - 1) < 0.1 }, "video and audio: \(durations)")
    }

    /// An iPhone clip trimmed in Photos keeps the frames its edit list hides: FFmpeg's average
    /// rate counts them (86 frames over the edit's 2.55 s: 28.03 fps), so its nominal frame
    /// duration was 1/28 s and an export at it dropped 5 of the 77 frames shown. The rate is
    /// the shown frames' (29.98 fps: 29.97 as standard), and every one of them is in the
    /// export, as ffprobe counts them. A trim by ffmpeg's stream copy (an edit list hiding a
    /// few frames, at a 1/1000 s timescale) keeps FFmpeg's exact 30000/1001, and a trim that
    /// shows 5 frames, whose decoding times say nothing of a rate, keeps its 29.97.
    @Test func framesAnEditListHidesDoNotSetTheRate() throws {
        let trimmed = Fixtures.real("03_iphone_trimmed_hevc10_editlist_vfr.mp4")
        let said = try Moonreel.runScript("print(av.asset(arg[1]):tracksWithMediaType(\"video\")[1].nominalFrameDuration)", arguments: [trimmed])
        #expect(said.out.hasPrefix("Time(1001/30000 "), "\(said.out) \(said.err)")
        let source = Fixtures.scratchPath("b-frames.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30000/1001:duration=6", "-c:v", "libx264", "-preset", "ultrafast", "-bf", "3", "-g", "30", source])
        let copied = Fixtures.scratchPath("copied-trim.mp4"), short = Fixtures.scratchPath("short-trim.mp4")
        try Tool.ffmpeg(["-ss", "2.5", "-i", source, "-c", "copy", "-video_track_timescale", "1000", copied])
        try Tool.ffmpeg(["-ss", "0.95", "-t", "0.17", "-i", source, "-c", "copy", short])
        let trims = try Moonreel.runScript("for i = 1, #arg do print(av.asset(arg[i]):tracksWithMediaType(\"video\")[1].nominalFrameDuration) end", arguments: [copied, short])
        #expect(trims.out.split(separator: "\n").map { $0.split(separator: " ").first.map(String.init) ?? "" } == ["Time(1001/30000", "Time(1001/30000"], "\(trims.out) \(trims.err)")
        let output = Fixtures.scratchPath("trimmed-whole.mp4")
        let result = try Moonreel.run(["run", Moonreel.checkout + "/scripts/examples/cut.lua", trimmed, output, "0", "2.548"])
        try #require(result.status == 0, "\(result.err)")
        let count = { (path: String) in
            try Tool.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path])
                .out.split(whereSeparator: { $0 == "," || $0.isNewline }).first.map(String.init)
        }
        #expect(try count(trimmed) == "77")
        #expect(try count(output) == "77")
    }
}
