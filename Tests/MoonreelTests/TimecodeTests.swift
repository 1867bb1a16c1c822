import Foundation
import Testing
import TestSupport

/// A camera's start timecode (a GoPro's `tmcd` track, ffmpeg's `-timecode`): read as ffprobe
/// reads it, kept by an export that plays one stretch of the file straight (the label of its
/// first frame, read back by ffprobe), said where it cannot be kept, and counted in the
/// source times of the timelines handed to editors, as Final Cut Pro, OpenTimelineIO and a
/// CMX 3600 EDL count them.
@Suite struct TimecodeTests {
    static let gopro = Fixtures.real("21_gopro_max_timecode_tmcd_gpmd.mp4")

    /// A 3 s clip stamped with `timecode` by ffmpeg's own muxer, with a tone.
    static func stamped(_ name: String, timecode: String, rate: String) throws -> String {
        let path = Fixtures.directory + "/" + name
        guard !FileManager.default.fileExists(atPath: path) else { return path }
        let made = Fixtures.scratchPath(name)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=\(rate):duration=3", "-f", "lavfi", "-i", "sine=duration=3",
                         "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-timecode", timecode, made])
        _ = rename(made, path)
        return path
    }

    /// The `timecode` tag ffprobe reads on the first stream that has one, else the container's.
    static func timecode(of path: String) throws -> String? {
        let out = try Tool.run("ffprobe", ["-v", "error", "-show_entries", "stream_tags=timecode:format_tags=timecode", "-of", "csv=p=0", path]).out
        return out.split(whereSeparator: { $0.isNewline || $0 == "," }).map { $0.trimmingCharacters(in: .whitespaces) }.first { !$0.isEmpty }
    }

    /// Frames of a non-drop label at `fps` (01:00:00:00 at 30 is 108000).
    static func frames(_ label: String, fps: Int) -> Int {
        let n = label.split(whereSeparator: { ":;".contains($0) }).compactMap { Int($0) }
        return ((n[0] * 60 + n[1]) * 60 + n[2]) * fps + n[3]
    }

    /// How many of the video's frames start before `time` (the one shown at `time` is the last).
    static func framesBefore(_ time: Double, in path: String) throws -> Int {
        let out = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time", "-of", "csv=p=0", path]).out
        return out.split(whereSeparator: \.isNewline).compactMap { Double($0.split(separator: ",").first ?? "") }.count { $0 <= time + 1e-6 }
    }

    @Test func theStartTimecodeIsReadAsFFprobeReadsIt() throws {
        let files = [Self.gopro,
                     try Self.stamped("tc-df.mov", timecode: "00:58:59;28", rate: "30000/1001"),
                     try Self.stamped("tc-25.mp4", timecode: "10:00:00:00", rate: "25"),
                     try Self.stamped("tc-25.mkv", timecode: "10:00:00:12", rate: "25"),
                     Fixtures.real("01_iphone4s_portrait_h264_rot90.mov")]
        let result = try Moonreel.runScript("for i = 1, #arg do print(av.asset(arg[i]).startTimecode) end", arguments: files)
        try #require(result.status == 0, "\(result.err)")
        let expected = try files.map { try Self.timecode(of: $0) ?? "nil" }
        #expect(expected == ["15:44:35:10", "00:58:59;28", "10:00:00:00", "10:00:00:12", "nil"], "ffprobe reads the stamps as made")
        #expect(result.out.split(separator: "\n").map(String.init) == expected)
        let probe = try Moonreel.run(["probe", Self.gopro])
        #expect(probe.out.contains("timecode 15:44:35:10 (non-drop, 29.97 fps)"), "\(probe.out)")
        let json = try Moonreel.run(["probe", "--json", try Self.stamped("tc-df.mov", timecode: "00:58:59;28", rate: "30000/1001")])
        #expect(json.out.contains(#""startTimecode":"00:58:59;28""#), "\(json.out)")
    }

    static let trimScript = """
        local asset = av.asset(arg[1])
        local comp = av.composition()
        local range = av.range(tonumber(arg[4]), 4)
        comp:addMutableTrack("video"):insertTimeRange(range, asset:tracksWithMediaType("video")[1], 0)
        comp:addMutableTrack("audio"):insertTimeRange(range, asset:tracksWithMediaType("audio")[1], 0)
        local session = av.exportSession(comp, arg[3])
        session.outputURL = arg[2]
        assert(session:export())
        for _, d in ipairs(session.diagnostics) do print(d.kind, d.message) end
        """

    /// A trimmed GoPro clip keeps the label of its first frame, whichever way it is written:
    /// the GoPro's 15:44:35:10 plus the frames before 2.5 s.
    @Test(arguments: [("HighestQuality", [String]()), ("Passthrough", []), ("SmartCut", []), ("HighestQuality", ["--chunks", "2"])])
    func aTrimKeepsTheTimecodeOfItsFirstFrame(preset: String, options: [String]) throws {
        let output = Fixtures.scratchPath("tc-trim-\(preset)\(options.isEmpty ? "" : "-chunks").mp4")
        let result = try Moonreel.runScript(Self.trimScript, arguments: [Self.gopro, output, preset, "2.5"], options: options)
        try #require(result.status == 0, "\(result.err)")
        let shownAt = try Self.framesBefore(2.5, in: Self.gopro) - 1
        #expect(shownAt == 74, "the frame shown at 2.5 s of a 29.97 fps clip starts at 2.469 s")
        let label = try #require(try Self.timecode(of: output), "no timecode in \(output)")
        #expect(Self.frames(label, fps: 30) == Self.frames("15:44:35:10", fps: 30) + shownAt, "\(label)")
        let tracks = try Tool.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_tag_string", "-of", "csv=p=0", output]).out
        #expect(tracks.contains("tmcd"), "MP4 carries it as a timecode track: \(tracks)")
        #expect(!result.out.contains("optionIgnored"), "\(result.out)")
    }

    /// Drop-frame labels skip ;00 and ;01 at each minute but every tenth: 14 frames after
    /// 00:58:59;28 is 00:59:00;14 (frames ;28 ;29 ;02 … ;14), as SMPTE 12M counts.
    @Test func aDropFrameLabelSkipsAsTheClockDoes() throws {
        let source = try Self.stamped("tc-df.mov", timecode: "00:58:59;28", rate: "30000/1001")
        let output = Fixtures.scratchPath("tc-df-trim.mov")
        let result = try Moonreel.runScript(Self.trimScript.replacingOccurrences(of: "av.range(tonumber(arg[4]), 4)", with: "av.range(tonumber(arg[4]), 2)"),
                                            arguments: [source, output, "HighestQuality", "0.5"])
        try #require(result.status == 0, "\(result.err)")
        #expect(try Self.framesBefore(0.5, in: source) - 1 == 14)
        #expect(try Self.timecode(of: output) == "00:59:00;14")
    }

    static let joinScript = """
        local asset = av.asset(arg[1])
        local comp = av.composition()
        local video = comp:addMutableTrack("video")
        video:insertTimeRange(av.range(1, 2), asset:tracksWithMediaType("video")[1], 0)
        video:insertTimeRange(av.range(6, 2), asset:tracksWithMediaType("video")[1], 2)
        local session = av.exportSession(comp, "HighestQuality")
        session.outputURL = arg[2]
        if arg[3] then session.metadata = { timecode = arg[3], title = "Take 2" } end
        local ok, err = session:export()
        if not ok then error(err, 0) end
        for _, d in ipairs(session.diagnostics) do print(d.kind, d.level, d.message) end
        """

    @Test func anEditOfSeveralStretchesSaysTheTimecodeIsLeftOutOrStampsTheOneAsked() throws {
        let joined = Fixtures.scratchPath("tc-join.mp4")
        let said = try Moonreel.runScript(Self.joinScript, arguments: [Self.gopro, joined])
        try #require(said.status == 0, "\(said.err)")
        #expect(try Self.timecode(of: joined) == nil)
        #expect(said.out.contains("optionIgnored\tnote\t\"21_gopro_max_timecode_tmcd_gpmd.mp4\"'s timecode (15:44:35:10) is not written: the output shows several stretches of it"), "\(said.out)")

        let stamped = Fixtures.scratchPath("tc-join-stamped.mov")
        let asked = try Moonreel.runScript(Self.joinScript, arguments: [Self.gopro, stamped, "01:00:00;00"])
        try #require(asked.status == 0, "\(asked.err)")
        #expect(try Self.timecode(of: stamped) == "01:00:00;00")
        #expect(!asked.out.contains("optionIgnored"), "\(asked.out)")
        let title = try Tool.run("ffprobe", ["-v", "error", "-show_entries", "format_tags=title", "-of", "csv=p=0", stamped]).out
        #expect(title.contains("Take 2"), "the other tags are written as before: \(title)")

        // Drop-frame has no 00:01:00;00 (minute 1 starts at ;02), and timecode stops at 23:59:59.
        for wrong in ["1:00:00;00x", "01:61:00:00", "01:00:00:30", "banana", "00:01:00;00", "24:00:00:00", "02:00:00.00"] {
            let output = Fixtures.scratchPath("tc-join-wrong.mp4")
            let refused = try Moonreel.runScript(Self.joinScript, arguments: [Self.gopro, output, wrong])
            #expect(refused.status != 0)
            #expect(refused.err.contains("metadata timecode \"\(wrong)\" labels no frame at 29.97 fps"), "\(refused.err)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }

    /// Passthrough into Matroska, which holds no edit list, starts at the keyframe before the
    /// cut: said, and labelled with that keyframe's timecode. The example script `cut.lua`
    /// keeps the GoPro's 29.97 fps, so its trim keeps the timecode too.
    @Test func anOutputStartingAtAKeyframeIsLabelledThereAndSaid() throws {
        let output = Fixtures.scratchPath("tc-pass.mkv")
        let result = try Moonreel.runScript(Self.trimScript, arguments: [Self.gopro, output, "Passthrough", "2.5"])
        try #require(result.status == 0, "\(result.err)")
        let keyframes = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time,flags", "-of", "csv=p=0", Self.gopro]).out
            .split(whereSeparator: \.isNewline).compactMap { line -> Double? in
                let fields = line.split(separator: ",")
                return fields.count == 2 && fields[1].hasPrefix("K") ? Double(fields[0]) : nil
            }
        let keyframe = try #require(keyframes.filter { $0 <= 2.5 }.max())
        #expect(keyframe < 2.45, "the cut is not on a keyframe")
        #expect(result.out.contains("encodingChanged\tPassthrough into .mkv starts \(String(format: "%.3f", 2.5 - keyframe)) s early, at the keyframe before the cut"), "\(result.out)")
        let label = try #require(try Self.timecode(of: output))
        #expect(Self.frames(label, fps: 30) == Self.frames("15:44:35:10", fps: 30) + (try Self.framesBefore(keyframe, in: Self.gopro) - 1), "\(label)")

        let cut = Fixtures.scratchPath("tc-cut.mov")
        let example = try Moonreel.run(["run", Moonreel.checkout + "/scripts/examples/cut.lua", Self.gopro, cut, "2.5", "4"])
        try #require(example.status == 0, "\(example.err)")
        #expect(try Self.timecode(of: cut) == "15:44:37:24")
        let rate = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=avg_frame_rate", "-of", "csv=p=0", cut]).out
        #expect(rate.hasPrefix("30000/1001"), "\(rate)")
        // A phone's variable rate stands for the standard rate near it, as default video
        // compositions render it (an iPhone 4S averaging 29.977); a 10.5 fps average is kept.
        let durations = try Moonreel.runScript("for i = 1, #arg do print(av.asset(arg[i]):tracksWithMediaType(\"video\")[1].nominalFrameDuration) end",
                                               arguments: [Fixtures.real("01_iphone4s_portrait_h264_rot90.mov"), Fixtures.real("06_android_rot180_vfr_10fps.mp4"), Self.gopro])
        #expect(durations.out.split(separator: "\n").map { $0.split(separator: " ").first.map(String.init) ?? "" } == ["Time(1001/30000", "Time(2/21", "Time(1001/30000"], "\(durations.out)")
    }

    /// A QuickTime timecode track names its own start: in a file whose picture starts 1 s after
    /// its sound and its timecode track, the first picture is 10:00:01:00. Its sound, earlier
    /// than the picture, round-trips through a timeline; an audio-only output says a timecode
    /// asked of it is not written.
    @Test func aTimecodeTrackNamesItsOwnStart() throws {
        let (plain, late) = (Fixtures.scratchPath("tc-plain.mov"), Fixtures.scratchPath("tc-late.mov"))
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=6", "-f", "lavfi", "-i", "sine=duration=6",
                         "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", plain])
        try Tool.ffmpeg(["-i", plain, "-itsoffset", "1", "-i", plain, "-map", "1:v", "-map", "0:a", "-c", "copy", "-timecode", "10:00:00:00", late])
        let starts = try Tool.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,start_time", "-of", "csv=p=0", late]).out
        #expect(starts.contains("video,1.000000") && starts.contains("data,0.000000"), "\(starts)")
        let output = Fixtures.scratchPath("tc-late-trim.mp4")
        let trimmed = try Moonreel.runScript(Self.trimScript, arguments: [late, output, "HighestQuality", "1"])
        try #require(trimmed.status == 0, "\(trimmed.err)")
        #expect(try Self.timecode(of: output) == "10:00:01:00")

        let script = """
            local asset = av.asset(arg[1])
            local comp = av.composition()
            comp:addMutableTrack("audio"):insertTimeRange(av.range(0.2, 1), asset:tracksWithMediaType("audio")[1], 0)
            av.writeTimeline(comp, nil, arg[2])
            print(av.readTimeline(arg[2]).tracks[1].segments[1].sourceRange.start)
            local session = av.exportSession(comp, "AppleM4A")
            session.outputURL, session.metadata = arg[3], { timecode = "01:00:00:00" }
            assert(session:export())
            for _, d in ipairs(session.diagnostics) do print(d.kind, d.message) end
            """
        let sound = try Moonreel.runScript(script, arguments: [late, Fixtures.scratchPath("tc-late.otio"), Fixtures.scratchPath("tc-late.m4a")])
        try #require(sound.status == 0, "\(sound.err)")
        #expect(sound.out.hasPrefix("0.2\n"), "the sound read back from 0.2 s into the file: \(sound.out)")
        #expect(sound.out.contains("optionIgnored\tmetadata timecode \"01:00:00:00\" is not written: it labels video frames, and the output has none"), "\(sound.out)")
    }

    /// A 29.97 fps edit of drop-frame sources is a drop-frame EDL: 15 frames after
    /// 00:58:59;28 (0.5 s, rounded to whole frames) is 00:59:00;15, as OpenTimelineIO's
    /// CMX 3600 reader counts it too; FCPXML's sequence says DF.
    @Test func dropFrameSourcesMakeADropFrameEDL() throws {
        let source = try Self.stamped("tc-df.mov", timecode: "00:58:59;28", rate: "30000/1001")
        let (edl, fcpxml) = (Fixtures.scratchPath("tc-df.edl"), Fixtures.scratchPath("tc-df.fcpxml"))
        let script = """
            local asset = av.asset(arg[1])
            local comp = av.composition()
            comp:addMutableTrack("video"):insertTimeRange(av.range(0.5, 1), asset:tracksWithMediaType("video")[1], 0)
            av.writeTimeline(comp, nil, arg[2])
            av.writeTimeline(comp, nil, arg[3])
            """
        let result = try Moonreel.runScript(script, arguments: [source, edl, fcpxml])
        try #require(result.status == 0, "\(result.err)")
        let text = try String(contentsOfFile: edl, encoding: .utf8)
        #expect(text.contains("FCM: DROP FRAME") && text.contains("00:59:00;15 00:59:01;15 00:00:00;00 00:00:01;00"), "\(text)")
        let read = try OpenTimelineIOJudge.run("""
            t = otio.adapters.read_from_file(sys.argv[1], rate=30000/1001)
            c = t.video_tracks()[0][0]
            start = otio.opentime.from_timecode("00:58:59;28", 30000/1001)
            print(int(round(c.source_range.start_time.value - start.value)))
            """, [edl])
        #expect(read.trimmingCharacters(in: .whitespacesAndNewlines) == "15", "\(read)")
        #expect(try String(contentsOfFile: fcpxml, encoding: .utf8).contains(#"tcFormat="DF""#))
    }

    static let timelineScript = """
        local asset = av.asset(arg[1])
        local comp = av.composition()
        comp:addMutableTrack("video"):insertTimeRange(av.range(2.5, 4), asset:tracksWithMediaType("video")[1], 0)
        for i = 2, #arg do
          av.writeTimeline(comp, nil, arg[i])
          local read = av.readTimeline(arg[i]:match("%.edl$") and arg[2] or arg[i])
          print(read.tracks[1].segments[1].sourceRange.start)
        end
        """

    /// The GoPro's first frame is 15:44:35:10 at 29.97, 1700260 frames of 1001/30000 s: a clip
    /// from 2.5 s into it is written from 1700260 × 1001/30000 + 2.5 s, as OpenTimelineIO reads
    /// it from each file, and read back 2.5 s into the file; FCPXML and the EDL count whole
    /// frames, so there 2.5 s (74.925 frames) is frame 75, 2.5025 s.
    @Test func timelinesCountSourceTimesFromTheTimecode() throws {
        let paths = ["otio", "fcpxml", "edl"].map { Fixtures.scratchPath("tc-timeline.\($0)") }
        let result = try Moonreel.runScript(Self.timelineScript, arguments: [Self.gopro] + paths)
        try #require(result.status == 0, "\(result.err)")
        #expect(result.out.split(separator: "\n") == ["2.5", "2.5025", "2.5"], "read back at 2.5 s into the file (FCPXML on frame 75): \(result.out)")
        let firstFrame = 1_700_260.0 * 1001 / 30000
        let code = """
            t = otio.adapters.read_from_file(sys.argv[1], **({"rate": 30000/1001} if sys.argv[1].endswith(".edl") else {}))
            while isinstance(t, otio.schema.SerializableCollection): t = t[0]
            c = t.video_tracks()[0][0]
            a = c.media_reference.available_range if c.media_reference and c.media_reference.available_range else None
            print("%.4f %.4f" % (c.source_range.start_time.to_seconds(), a.start_time.to_seconds() if a else -1))
            """
        // OpenTimelineIO's FCPXML adapter counts 29.97 as 29 frames a second: the file's own
        // rational times are read instead, as Final Cut Pro reads them.
        let fcpxml = try String(contentsOfFile: paths[1], encoding: .utf8)
        func seconds(_ pattern: String) throws -> Double {
            let match = try #require(fcpxml.firstMatch(of: try Regex(pattern)), "\(pattern) in \(fcpxml)")
            let parts = try #require(match.output[1].substring).split(separator: "/").compactMap { Double($0) }
            return parts.count == 2 ? parts[0] / parts[1] : parts[0]
        }
        let assetStart = try seconds(#"<asset [^>]* start="([0-9/]+)s""#), clipStart = try seconds(#"<asset-clip [^>]* start="([0-9/]+)s""#)
        #expect(abs(assetStart - firstFrame) < 1e-6 && abs(clipStart - assetStart - 75 * 1001 / 30000) < 1e-6, "asset from \(assetStart) s, clip from \(clipStart) s")
        for path in [paths[0], paths[2]] {
            let read = try OpenTimelineIOJudge.run(code, [path]).split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            try #require(read.count == 2, "\(path)")
            // The EDL counts whole frames: 2.5 s is 74.925 frames, written as 75.
            let expectedStart = path.hasSuffix(".edl") ? (1_700_260.0 + 75) * 1001 / 30000 : firstFrame + 2.5
            #expect(abs(read[0] - expectedStart) < 0.0005, "\(path): source starts at \(read[0]) s, not \(expectedStart)")
            if !path.hasSuffix(".edl") { #expect(abs(read[1] - firstFrame) < 0.0005, "\(path): the media starts at \(read[1]) s") }
        }
        let edl = try String(contentsOfFile: paths[2], encoding: .utf8)
        #expect(edl.contains("15:44:37:25 15:44:41:25 00:00:00:00 00:00:04:00"), "\(edl)")
    }

    /// Final Cut Pro's form (DAWFileKit's FCP exports: the asset starts at the file's timecode,
    /// a clip's start counts from the same), and a hand-written file counting from 0, which is
    /// read as times into the file with a note.
    @Test func anEditorsFCPXMLIsReadFromTheFilesTimecode() throws {
        func fcpxml(assetStart: String, clipStart: String) -> String {
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE fcpxml>
            <fcpxml version="1.9">
              <resources>
                <format id="r1" frameDuration="1001/30000s" width="848" height="480"/>
                <asset id="r2" name="GoPro" start="\(assetStart)" duration="10510500/1000000s" hasVideo="1" hasAudio="1" format="r1">
                  <media-rep kind="original-media" src="file://\(Self.gopro)"/>
                </asset>
              </resources>
              <library><event name="Day"><project name="Ride">
                <sequence format="r1" tcStart="0s" tcFormat="NDF">
                  <spine><asset-clip ref="r2" offset="0s" name="GoPro" start="\(clipStart)" duration="60060/30000s" tcFormat="NDF"/></spine>
                </sequence>
              </project></event></library>
            </fcpxml>
            """
        }
        let script = """
            local comp = av.readTimeline(arg[1])
            print(comp.tracks[1].segments[1].sourceRange.start)
            """
        let editor = Fixtures.scratchPath("tc-editor.fcpxml")
        // 1700260 frames of 1001/30000 s, and the clip 30 frames (1.001 s) later.
        try fcpxml(assetStart: "1701960260/30000s", clipStart: "1701990290/30000s").write(toFile: editor, atomically: true, encoding: .utf8)
        let read = try Moonreel.runScript(script, arguments: [editor])
        try #require(read.status == 0, "\(read.err)")
        #expect(read.out.trimmingCharacters(in: .whitespacesAndNewlines) == "1.001")
        #expect(!read.err.contains("notInTimeline"), "\(read.err)")

        let handWritten = Fixtures.scratchPath("tc-hand.fcpxml")
        try fcpxml(assetStart: "0s", clipStart: "5/2s").write(toFile: handWritten, atomically: true, encoding: .utf8)
        let guessed = try Moonreel.runScript(script, arguments: [handWritten])
        try #require(guessed.status == 0, "\(guessed.err)")
        #expect(guessed.out.trimmingCharacters(in: .whitespacesAndNewlines) == "2.5")
        #expect(guessed.err.contains("clip \"GoPro\" of track V1 starts at 2.5 s, before its file's start timecode 15:44:35:10 (56732.009 s), so its times are read as times into the file"), "\(guessed.err)")
    }
}
