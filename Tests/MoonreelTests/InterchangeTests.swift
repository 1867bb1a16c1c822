import Foundation
import Testing
import TestSupport

/// Issue 38: the cut handed to an editor as OpenTimelineIO, FCPXML and a CMX 3600 EDL, and
/// OpenTimelineIO read back into a composition. OpenTimelineIO itself (from PyPI, with its
/// FCPXML and CMX 3600 adapters) judges what is written; exports of what is read are judged
/// by ffprobe and their pixels.
@Suite struct InterchangeTests {
    /// Red, green and blue clips of 4 s with a tone, joined with 1 s dissolves: 0.5–3.5 s of
    /// red, 0.5–4 s of green, 0.5–2.5 s of blue, 6.5 s in all.
    static let joinScript = """
        local comp, vc, mix = av.join({ { av.asset(arg[1]), start = 0.5, duration = 3 }, { av.asset(arg[2]), start = 0.5, duration = 3.5 },
                                        { av.asset(arg[3]), start = 0.5, duration = 2 } }, { transition = "dissolve", duration = 1 })
        for i = 4, #arg do av.writeTimeline(comp, vc, mix, arg[i]) end
        print(comp.duration)
        """

    /// The start of an OpenTimelineIO script: `clip(path, start, duration)` (frames at 30 fps)
    /// and a timeline `t` named `name` with an empty video track `v`.
    static func otioTimeline(_ name: String) -> String {
        """
        RT, TR = otio.opentime.RationalTime, otio.opentime.TimeRange
        def clip(path, start, duration):
            return otio.schema.Clip(name=path.split("/")[-1], source_range=TR(RT(start, 30), RT(duration, 30)),
                                    media_reference=otio.schema.ExternalReference(target_url="file://" + path))
        t = otio.schema.Timeline(name="\(name)")
        v = otio.schema.Track(name="V1", kind=otio.schema.TrackKind.Video)
        t.tracks.append(v)

        """
    }

    static func colours() throws -> [String] {
        try ["red", "lime", "blue"].map { try Fixtures.solid($0, seconds: 4) }
    }

    /// What OpenTimelineIO reads from a file: per track, each item's kind, name and times (as
    /// `value/rate` of its own RationalTime, rescaled to `rate`).
    static func itemsRead(_ path: String, adapter: String? = nil, rate: Int = 30) throws -> [[String]] {
        let code = """
            kw = {"rate": \(rate)} if sys.argv[2] == "cmx_3600" else {}
            t = otio.adapters.read_from_file(sys.argv[1], adapter_name=(sys.argv[2] or None), **kw)
            while isinstance(t, otio.schema.SerializableCollection): t = t[0]   # FCPXML: library, event, project
            def f(rt): return str(round(rt.rescaled_to(\(rate)).value, 6))
            out = []
            for track in t.tracks:
                items = []
                for it in track:
                    if isinstance(it, otio.schema.Transition):
                        items.append("transition %s %s %s" % (it.transition_type, f(it.in_offset), f(it.out_offset)))
                    elif isinstance(it, otio.schema.Gap):
                        items.append("gap %s" % f(it.source_range.duration))
                    else:
                        items.append("clip %s %s %s" % (it.name.strip(), f(it.source_range.start_time), f(it.source_range.duration)))
                out.append([track.kind] + items)
            print(json.dumps(out))
            """
        let text = try OpenTimelineIOJudge.run(code, [path, adapter ?? ""])
        return try JSONDecoder().decode([[String]].self, from: Data(text.utf8))
    }

    @Test func threeClipsWithTwoDissolvesAreThreeClipsAndTwoTransitionsForOpenTimelineIO() throws {
        let clips = try Self.colours()
        let otio = Fixtures.scratchPath("cut.otio")
        let result = try Moonreel.runScript(Self.joinScript, arguments: clips + [otio])
        #expect(result.status == 0 && result.out == "6.5\n", "\(result.err)")
        #expect(!result.err.contains("warning"), "a join of clips with dissolves fits a timeline: \(result.err)")
        let tracks = try Self.itemsRead(otio)
        let names = clips.map { ($0 as NSString).lastPathComponent }
        // Cut in the middle of each dissolve: red 0–2.5 s, green 2.5–5 s, blue 5–6.5 s; source ranges in frames at 30 fps.
        let expected = ["clip \(names[0]) 15.0 75.0", "transition SMPTE_Dissolve 15.0 15.0", "clip \(names[1]) 30.0 75.0",
                        "transition SMPTE_Dissolve 15.0 15.0", "clip \(names[2]) 30.0 45.0"]
        #expect(tracks == [["Video"] + expected, ["Audio"] + expected], "\(tracks)")
        let duration = try OpenTimelineIOJudge.run("print(otio.adapters.read_from_file(sys.argv[1]).duration().to_seconds())", [otio])
        #expect(duration == "6.5\n")
        let url = try OpenTimelineIOJudge.run("print(otio.adapters.read_from_file(sys.argv[1]).tracks[0][0].media_reference.target_url)", [otio])
        #expect(url == "file://" + clips[0] + "\n")
    }

    /// The FCPXML and the EDL of the same cut, read by OpenTimelineIO's own adapters, hold the
    /// same clips as the OTIO file: FCPXML cut to cut (the adapter leaves transitions out), the
    /// EDL event for event as OpenTimelineIO writes CMX 3600 from the OTIO file itself.
    @Test func fcpxmlAndEDLReadByOpenTimelineIOHoldTheSameClips() throws {
        let clips = try Self.colours()
        let otio = Fixtures.scratchPath("cut.otio")
        let folder = (otio as NSString).deletingLastPathComponent
        let result = try Moonreel.runScript(Self.joinScript, arguments: clips + [otio, folder + "/cut.fcpxml", folder + "/cut.edl"])
        #expect(result.status == 0, "\(result.err)")
        let fromOTIO = try Self.itemsRead(otio)
        let fromFCPXML = try Self.itemsRead(folder + "/cut.fcpxml")
        #expect(fromFCPXML.first?.dropFirst().map { $0 } == fromOTIO[0].dropFirst().filter { $0.hasPrefix("clip") }, "\(fromFCPXML)")
        // OpenTimelineIO's CMX 3600 of our OTIO file, read back beside ours.
        let theirs = folder + "/theirs.edl"
        _ = try OpenTimelineIOJudge.run("""
            t = otio.adapters.read_from_file(sys.argv[1])
            del t.tracks[1]
            otio.adapters.write_to_file(t, sys.argv[2], adapter_name="cmx_3600")
            """, [otio, theirs])
        let ours = try Self.itemsRead(folder + "/cut.edl", adapter: "cmx_3600"), reference = try Self.itemsRead(theirs, adapter: "cmx_3600")
        #expect(ours.first == reference.first, "ours \(ours), OpenTimelineIO's \(reference)")
        #expect(ours.first?.count == 6, "three clips, two dissolves: \(ours)")
        // Moonreel reads its FCPXML back: the spine's clips with their sound, the dissolves, 6.5 s.
        let back = try Moonreel.runScript("""
            local comp, vc = av.readTimeline(arg[1])
            print(comp.duration, #comp:tracksWithMediaType("video"), #comp:tracksWithMediaType("audio"), #vc.instructions)
            """, arguments: [folder + "/cut.fcpxml"])
        #expect(back.status == 0 && back.out == "6.5\t2\t2\t5\n", "\(back.out) \(back.err)")
        let edl = try String(contentsOfFile: folder + "/cut.edl", encoding: .utf8)
        #expect(edl.contains("AA/V  D 030    00:00:00:15 00:00:03:00 00:00:02:00 00:00:04:15"), "\(edl)")
    }

    /// The sound of the first video track's clips keeps its volume ramps through a timeline
    /// file: an OTIO written with a fade-out and read back played at full level to the end
    /// (the ramps were on the sound's mirror track, which reading set aside). Measured on the
    /// export: the last quarter second is near silent, the middle at full level.
    @Test func aFadeOutOfTheClipsOwnSoundSurvivesTheRoundTrip() throws {
        let clip = try Fixtures.clip(seconds: 4)
        let otio = Fixtures.scratchPath("faded.otio"), output = Fixtures.scratchPath("faded.m4a")
        let written = try Moonreel.runScript("""
            local comp, vc, mix = av.join({ av.asset(arg[1]) })
            mix.inputParameters[1]:setVolumeRamp(1, 0, av.range(2, 2))
            av.writeTimeline(comp, vc, mix, arg[2])
            """, arguments: [clip, otio])
        #expect(written.status == 0, "\(written.err)")
        let read = try Moonreel.runScript("""
            local comp, vc, mix = av.readTimeline(arg[1])
            local session = av.exportSession(comp, "AppleM4A")
            session.outputURL, session.audioMix = arg[2], mix
            assert(session:export())
            """, arguments: [otio, output])
        #expect(read.status == 0, "\(read.err)")
        let sound = try Tool.audioSamples(output)
        let (middle, end) = (sound.level(from: 48000, to: 72000), sound.level(from: 180000, to: 190000))
        #expect(middle > 0.05 && end < 0.15 * middle, "faded out: \(middle) in the middle, \(end) at the end")
    }

    /// A clip drawn through a mask outside a transition (an inset's rounded corners) was
    /// written as a plain clip with no word; it is a `notInTimeline` warning, once per track.
    @Test func aMaskedClipIsSaidWhenWritten() throws {
        let clips = try Self.colours()
        let otio = Fixtures.scratchPath("masked.otio")
        let result = try Moonreel.runScript("""
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 2), av.asset(arg[1]), 0)
            local vc = av.videoComposition(comp)
            vc.instructions[1].layerInstructions[1].mask = av.layer{ frame = { 40, 40, 240, 160 }, backgroundColor = "white", cornerRadius = 20 }
            av.writeTimeline(comp, vc, nil, arg[2])
            """, name: "mask.lua", arguments: [clips[0], otio])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.errorLines.filter { $0.contains("is drawn through a mask; the timeline leaves that out") }.count == 1
                && result.err.contains("mask.lua:5: clip \"") && result.err.contains("[notInTimeline]"), "\(result.err)")
    }

    /// An EDL keeps marks on its clips' events only: cues over a title card were left out of
    /// it in silence. They are counted in a `notInTimeline` warning; a cue over a clip is a
    /// `* LOC:` line.
    /// CMX 3600 reels are 8 letters: interview_a.mp4 and interview_b.mp4 were both reel
    /// INTERVIE, which an editor matching media by reel takes for one tape, without a word.
    /// Each file has its own reel now (INTERVI2), with a note naming it.
    @Test func filesWhoseNamesStartAlikeGetReelsOfTheirOwn() throws {
        let clips = try Self.colours()
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let named = ["interview_a.mp4", "interview_b.mp4"].enumerated().map { index, name in folder + "/" + name }
        for (index, path) in named.enumerated() { try FileManager.default.copyItem(atPath: clips[index], toPath: path) }
        let edl = folder + "/reels.edl"
        let result = try Moonreel.runScript("""
            local comp, vc, mix = av.join({ av.asset(arg[1]), av.asset(arg[2]) })
            av.writeTimeline(comp, vc, mix, arg[3])
            """, name: "reels.lua", arguments: named + [edl])
        #expect(result.status == 0 && result.err.contains("reels.lua:2: \"interview_b.mp4\" is reel INTERVI2: its name's first 8 letters, INTERVIE, are another file's reel"), "\(result.err)")
        let events = try String(contentsOfFile: edl, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("00") }
        #expect(events.count == 2 && events[0].contains(" INTERVIE ") && events[1].contains(" INTERVI2 "), "\(events)")
    }

    /// An EDL writes the clips' own sound as AA/V events, but their volume ramps (a fade-out
    /// with `setVolumeRamp`) were dropped without a word, where FCPXML warned for the same
    /// edit: only the pictures' ramps were looked at. The fade is a `notInTimeline` warning
    /// naming the clip and the sound's track; the EDL still holds both AA/V events.
    @Test func anEDLSaysTheClipsOwnSoundLosesItsFade() throws {
        let a = try Fixtures.clip(seconds: 6), b = try Fixtures.clip(seconds: 6, tone: 880)
        let edl = Fixtures.scratchPath("fade.edl")
        let result = try Moonreel.runScript("""
            local comp = av.composition()
            local v, a = comp:addMutableTrack("video"), comp:addMutableTrack("audio")
            for i, file in ipairs({ av.asset(arg[1]), av.asset(arg[2]) }) do
                v:insertTimeRange(av.range(1, 2), file:tracksWithMediaType("video")[1], 2 * (i - 1))
                a:insertTimeRange(av.range(1, 2), file:tracksWithMediaType("audio")[1], 2 * (i - 1))
            end
            local p = av.audioMixInputParameters(a)
            p:setVolumeRamp(1, 0, av.range(3, 1))
            local mix = av.audioMix(); mix.inputParameters = { p }
            av.writeTimeline(comp, nil, mix, arg[3])
            """, name: "fade.lua", arguments: [a, b, edl])
        #expect(result.status == 0, "\(result.err)")
        let name = (b as NSString).lastPathComponent
        #expect(result.errorLines.contains { $0.contains("fade.lua:10: the volume ramps of clip \"\(name)\" on track A1 are left out of the EDL") && $0.hasSuffix("[notInTimeline]") },
                "\(result.err)")
        let events = try String(contentsOfFile: edl, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("00") }
        #expect(events.count == 2 && events.allSatisfy { $0.contains(" AA/V ") }, "the sound is written with the pictures: \(events)")
    }

    /// The segments of each track of the timeline `path` read back, one line each: media
    /// type, source start and duration, timeline start and duration (seconds to 9 places).
    static func segmentsRead(_ path: String) throws -> [String] {
        let result = try Moonreel.runScript("""
            local comp = av.readTimeline(arg[1])
            for _, track in ipairs(comp.tracks) do
                for _, s in ipairs(track.segments) do
                    if not s.empty then
                        print(string.format("%s %.9f %.9f %.9f %.9f", track.mediaType, s.sourceRange.start, s.sourceRange.duration, s.targetRange.start, s.targetRange.duration))
                    end
                end
            end
            """, arguments: [path])
        try #require(result.status == 0, "\(result.err)")
        return result.out.split(separator: "\n").map(String.init)
    }

    /// FCPXML wrote each time as its exact fraction: a 1.03 s clip in a 29.97 fps edit was
    /// `duration="103/100s"`, between frames, which Final Cut snaps ("not on an edit frame
    /// boundary") without Moonreel saying so. Every offset, start and duration is now a whole
    /// number of 1001/30000 s frames in that denominator (the clip 31 frames, `31031/30000s`;
    /// a clip's start on its media's frames, counted from the asset's start timecode), with
    /// one `timeRounded` warning, and the file reads back as written.
    @Test func fcpxmlTimesLieOnTheSequencesFrames() throws {
        let source = try TimecodeTests.stamped("ix-df.mov", timecode: "01:00:00;00", rate: "30000/1001")
        let fcpxml = Fixtures.scratchPath("grid.fcpxml")
        let result = try Moonreel.runScript("""
            local A = av.asset(arg[1])
            local comp, vc, mix = av.join({ { A, start = 0.2, duration = 1.03 }, { A, start = 1.5, duration = 1 } })
            av.writeTimeline(comp, vc, mix, arg[2])
            """, name: "grid.lua", arguments: [source, fcpxml])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.errorLines.contains { $0.contains("grid.lua:3: ") && $0.contains("times of the FCPXML fall between frames at 29.97 fps and were rounded to the nearest frame") && $0.hasSuffix("[timeRounded]") },
                "\(result.err)")
        let xml = try String(contentsOfFile: fcpxml, encoding: .utf8)
        /// Each time of `attribute` in the tags named `tag`, in units of 1/30000 s.
        func units(_ tag: String, _ attribute: String) throws -> [Int64] {
            try xml.matches(of: try Regex("<\(tag) [^>]*\(attribute)=\"([0-9/]+)s\"")).map { match in
                let parts = try #require(match.output[1].substring).split(separator: "/").compactMap { Int64($0) }
                try #require(parts.count == 1 || parts[1] == 30000, "\(match.output[0].substring ?? "") is not in the frame duration's denominator")
                return parts.count == 1 ? parts[0] * 30000 : parts[0]
            }
        }
        let edits = try units("asset-clip", "offset") + units("asset-clip", "duration") + units("sequence", "duration")
        #expect(edits.count == 5 && edits.allSatisfy { $0 % 1001 == 0 }, "offsets and durations on frames: \(edits)")
        let assetStart = try #require(try units("asset", "start").first)
        let starts = try units("asset-clip", "start").map { $0 - assetStart }
        #expect(starts == [6 * 1001, 45 * 1001], "0.2 s and 1.5 s into the media are frames 6 and 45 (0.2002 s, 1.5015 s): \(starts)")
        #expect(xml.contains(#"offset="0s" name="ix-df.mov" start="\#(assetStart + 6006)/30000s" duration="31031/30000s""#), "\(xml)")
        // Read back as written: 31 frames from frame 6, then 30 frames from frame 45.
        let frame = 1001.0 / 30000
        let expected = [(6, 31, 0), (45, 30, 31)].map { start, length, at in
            String(format: "%.9f %.9f %.9f %.9f", Double(start) * frame, Double(length) * frame, Double(at) * frame, Double(length) * frame)
        }
        let read = try Self.segmentsRead(fcpxml)
        #expect(read.sorted() == (expected.map { "video " + $0 } + expected.map { "audio " + $0 }).sorted(), "\(read)")
    }

    /// CMX 3600 writes source timecode at the record rate, in the list's one count: a 25 fps
    /// camera stamped 10:00:00:00, 2.5 s in, is 10:00:02:15 in a 30 fps EDL where its own
    /// label is 10:00:02:12 or :13, and a drop-frame camera's 01:00:02;00 is 00:59:58:12 in a
    /// non-drop EDL. Both were written without a word; each is a `notInTimeline` warning
    /// naming the file, the label written and its own.
    @Test func anEDLSaysWhichSourcesTimecodeIsNotTheirOwn() throws {
        let phone = try Fixtures.clip(seconds: 6)
        let camera = try TimecodeTests.stamped("ix-cam25.mov", timecode: "10:00:00:00", rate: "25")
        let dropFrame = try TimecodeTests.stamped("ix-df.mov", timecode: "01:00:00;00", rate: "30000/1001")
        let nonDrop = try TimecodeTests.stamped("ix-ndf.mov", timecode: "12:00:00:00", rate: "30000/1001")
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let result = try Moonreel.runScript("""
            local comp, vc, mix = av.join({ { av.asset(arg[1]), start = 0, duration = 2 }, { av.asset(arg[2]), start = 2.5, duration = 0.5 } })
            av.writeTimeline(comp, vc, mix, arg[5])
            comp, vc, mix = av.join({ { av.asset(arg[3]), start = 2, duration = 1 }, { av.asset(arg[4]), start = 1, duration = 1 } })
            av.writeTimeline(comp, vc, mix, arg[6])
            """, name: "tc.lua", arguments: [phone, camera, dropFrame, nonDrop, folder + "/rate.edl", folder + "/count.edl"])
        #expect(result.status == 0, "\(result.err)")
        let events = try ["rate", "count"].map { try String(contentsOfFile: folder + "/\($0).edl", encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("00") } }
        #expect(events[0].count == 2 && events[0][1].contains(" IXCAM25 ") && events[0][1].contains(" 10:00:02:15 10:00:03:00 00:00:02:00 "), "\(events[0])")
        #expect(events[1].count == 2 && events[1][0].contains(" IXDF ") && events[1][0].contains(" 00:59:58:12 00:59:59:12 00:00:00:00 "), "\(events[1])")
        let warnings = result.errorLines.filter { $0.hasSuffix("[notInTimeline]") }
        #expect(warnings.count == 2, "\(result.err)")
        #expect(warnings.contains { $0.contains("tc.lua:2: the source timecode of \"ix-cam25.mov\" (reel IXCAM25) is not its own: 10:00:02:15 is written for its 10:00:02:13, since its file counts 25 fps and CMX 3600 counts source timecode at the record rate, 30 fps") },
                "\(result.err)")
        #expect(warnings.contains { $0.contains("tc.lua:4: the source timecode of \"ix-df.mov\" (reel IXDF) is not its own: 00:59:58:12 is written for its 01:00:02;00, since its file counts drop-frame and the EDL non-drop") },
                "\(result.err)")
    }

    /// CMX 3600 numbers events and transition lengths with 3 digits: a montage of 1000
    /// cuts was written with event 1000, and a 34 s dissolve (1020 frames) as `D 1020`,
    /// without a word. Both are still written so (nothing dropped), each with a
    /// `notInTimeline` warning saying what editors may misread.
    @Test func anEDLSaysWhatOutgrowsItsThreeDigits() throws {
        let (a, b) = (try Fixtures.solid("red", seconds: 40), try Fixtures.solid("blue", seconds: 40))
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let result = try Moonreel.runScript("""
            local comp = av.composition()
            local v = comp:addMutableTrack("video")
            local tracks = { av.asset(arg[1]):tracksWithMediaType("video")[1], av.asset(arg[2]):tracksWithMediaType("video")[1] }
            for i = 0, 999 do v:insertTimeRange(av.range((i % 50) * 0.1, 0.1), tracks[i % 2 + 1], i * 0.1) end
            av.writeTimeline(comp, nil, arg[3])
            local joined, vc, mix = av.join({ av.asset(arg[1]), av.asset(arg[2]) }, { transition = "dissolve", duration = 34 })
            av.writeTimeline(joined, vc, mix, arg[4])
            """, name: "long.lua", arguments: [a, b, folder + "/montage.edl", folder + "/dissolve.edl"])
        #expect(result.status == 0, "\(result.err)")
        let montage = try String(contentsOfFile: folder + "/montage.edl", encoding: .utf8).split(separator: "\n").filter { $0.first?.isNumber == true }
        #expect(montage.count == 1000 && montage.last?.hasPrefix("1000 ") == true, "\(montage.suffix(2))")
        #expect(result.errorLines.contains { $0.contains("long.lua:5: the EDL has 1000 events: CMX 3600 numbers 999 at most, so events 1000 to 1000 are numbered with 4 digits") && $0.hasSuffix("[notInTimeline]") },
                "\(result.err)")
        let dissolve = try String(contentsOfFile: folder + "/dissolve.edl", encoding: .utf8)
        #expect(dissolve.contains(" D 1020 "), "\(dissolve)")
        #expect(result.errorLines.contains { $0.contains("long.lua:7: the dissolve at 6 s lasts 1020 frames: CMX 3600 gives a transition's length 3 digits") && $0.hasSuffix("[notInTimeline]") },
                "\(result.err)")
    }

    @Test func anEDLSaysWhichCuesItCannotPlace() throws {
        let clips = try Self.colours()
        let cues = Fixtures.scratchPath("marks.csv"), edl = Fixtures.scratchPath("marks.edl")
        try "id,lyric,start_at,end_at\n1,over the card,0.5,1\n2,over the clip,2.5,3\n".write(toFile: cues, atomically: true, encoding: .utf8)
        let result = try Moonreel.runScript("""
            local comp, vc, mix = av.join({ av.titleCard{ title = "Intro", duration = 2 }, av.asset(arg[1]) })
            av.writeTimeline(comp, vc, mix, arg[2], { cues = av.readCues(arg[3]) })
            """, name: "edl.lua", arguments: [clips[0], edl, cues])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("edl.lua:2: 1 marker lies where no clip plays") && result.err.contains("[notInTimeline]"), "\(result.err)")
        let text = try String(contentsOfFile: edl, encoding: .utf8)
        #expect(text.contains("* LOC: 00:00:02:15 RED     over the clip") && !text.contains("over the card"), "\(text)")
    }

    /// A cue after the picture's end was hung on the storyline's last clip, past the media it
    /// plays, without a word, where the EDL leaves it out with a warning. FCPXML leaves it out
    /// too, with the EDL's warning (one check for both); a cue over the clip is a marker on it,
    /// on its frames.
    @Test func fcpxmlLeavesOutACueAfterThePicturesEnd() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let result = try Moonreel.runScript("""
            local comp, vc, mix = av.join({ { av.asset(arg[1]), start = 1, duration = 3 } })
            local cues = { { text = "first line", start = 0.5, finish = 1.5 }, { text = "last line", start = 3.2, finish = 4 } }
            av.writeTimeline(comp, vc, mix, arg[2], { cues = cues })
            av.writeTimeline(comp, vc, mix, arg[3], { cues = cues })
            """, name: "cues.lua", arguments: [clip, folder + "/cues.fcpxml", folder + "/cues.edl"])
        #expect(result.status == 0, "\(result.err)")
        for (line, format) in [(3, "FCPXML keeps marks on the clips and gaps of its storyline"), (4, "an EDL keeps marks on its clips' events only")] {
            #expect(result.errorLines.contains { $0.contains("cues.lua:\(line): 1 marker lies ") && $0.contains("\(format), so it is left out: \"last line\" at 3.2 s") && $0.hasSuffix("[notInTimeline]") },
                    "\(result.err)")
        }
        let xml = try String(contentsOfFile: folder + "/cues.fcpxml", encoding: .utf8)
        let markers = xml.split(separator: "\n").filter { $0.contains("<marker ") }
        // 0.5 s into the timeline is 1.5 s into the clip's media (its start), 45 frames.
        #expect(markers == [#"<marker start="45/30s" duration="1s" value="first line"/>"#], "\(markers)")
        let edl = try String(contentsOfFile: folder + "/cues.edl", encoding: .utf8)
        #expect(edl.contains("* LOC: 00:00:00:15 RED     first line") && !edl.contains("last line"), "\(edl)")
    }

    /// An FCPXML file as Final Cut writes one, of a 4 s project of `spine`, whose assets
    /// r2, r3… named a, b… are the 6 s files `media`.
    static func finalCutFile(_ name: String, media: [String], frameDuration: String, spine: String) throws -> String {
        let path = Fixtures.scratchPath(name)
        let assets = media.enumerated().map { index, file in
            #"<asset id="r\#(index + 2)" name="\#(["a", "b", "c"][index % 3])" start="0s" duration="6s" hasVideo="1" format="r1" hasAudio="1"><media-rep kind="original-media" src="file://\#(file)"/></asset>"#
        }
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE fcpxml>
            <fcpxml version="1.10"><resources>
            <format id="r1" frameDuration="\(frameDuration)" width="320" height="240"/>
            \(assets.joined(separator: "\n"))
            </resources><library><event name="E"><project name="\(name)">
            <sequence format="r1" duration="4s" tcStart="0s" tcFormat="NDF"><spine>
            \(spine)
            </spine></sequence></project></event></library></fcpxml>
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Final Cut's time map covers the whole media, and a retimed clip's `start` and
    /// `duration` are in its retimed time: a clip at half speed from 4 s of that time plays
    /// 2–4 s of its media. Reading took the map's first and last points (0–6 s over 4 s)
    /// and never the start. The clip's range is now mapped through the map; its easing
    /// (`interp="smooth2"`), read at one speed, is a `notInTimeline` warning. Moonreel's own
    /// slow motion (a map from the clip's first frame) still reads back exactly, in silence.
    @Test func aRetimedFinalCutClipReadsTheMediaItsStartMapsTo() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let fcpxml = try Self.finalCutFile("slowmo.fcpxml", media: [clip], frameDuration: "100/3000s", spine: """
            <asset-clip ref="r2" offset="0s" name="a" start="4s" duration="4s" format="r1">
             <timeMap><timept time="0s" value="0s" interp="smooth2"/><timept time="12s" value="6s" interp="smooth2"/></timeMap>
            </asset-clip>
            """)
        let expected = ["video", "audio"].map { "\($0) 2.000000000 2.000000000 0.000000000 4.000000000" }
        #expect(try Self.segmentsRead(fcpxml) == expected)
        let read = try Moonreel.runScript("av.readTimeline(arg[1])", name: "fcp.lua", arguments: [fcpxml])
        #expect(read.errorLines.count == 1 && read.errorLines[0].hasSuffix("fcp.lua:1: clip \"a\" eases its speed (interp=\"smooth2\") in its timeMap: read at one speed, 2–4 s of its media over 4 s; render the speed change in the editor, or make it constant [notInTimeline]"),
                "\(read.err)")

        let ours = Fixtures.scratchPath("ours.fcpxml")
        let written = try Moonreel.runScript("""
            local comp = av.composition()
            comp:insertTimeRange(av.range(1, 2), av.asset(arg[1]), 0)
            comp:scaleTimeRange(av.range(0, 2), 4)
            av.writeTimeline(comp, nil, arg[2])
            """, arguments: [clip, ours])
        #expect(written.status == 0 && written.err.isEmpty, "\(written.err)")
        #expect(try String(contentsOfFile: ours, encoding: .utf8).contains(#"<timept time="0s" value="1s" interp="linear"/><timept time="4s" value="3s" interp="linear"/>"#))
        #expect(try Self.segmentsRead(ours) == ["video", "audio"].map { "\($0) 1.000000000 2.000000000 0.000000000 4.000000000" })
        let back = try Moonreel.runScript("av.readTimeline(arg[1])", arguments: [ours])
        #expect(back.status == 0 && back.err.isEmpty, "\(back.err)")
    }

    /// Final Cut's split edits: a clip's `audioStart` and `audioDuration` say where its sound
    /// starts and how long it lasts, apart from its picture (a J cut brings the next clip's
    /// sound in early, an L cut holds the sound under the next picture). Reading ignored them
    /// and played each sound with its picture. The sound is now laid as the file says (the
    /// reviewer's J cut: a's 1–2.5 s at 0–1.5 s, b's 0.5–3 s from 1.5 s), and a sound held
    /// under the next clip's, which overlaps it, goes on a second audio track.
    @Test func fcpxmlSplitEditsPlayTheSoundWhereTheFileSays() throws {
        let (a, b) = (try Fixtures.clip(seconds: 6), try Fixtures.clip(seconds: 6, tone: 880))
        func timeline(_ spine: String) throws -> String { try Self.finalCutFile("split.fcpxml", media: [a, b], frameDuration: "1/30s", spine: spine) }
        let pictures = ["video 1.000000000 2.000000000 0.000000000 2.000000000", "video 1.000000000 2.000000000 2.000000000 2.000000000"]
        let jCut = try timeline(#"<asset-clip ref="r2" offset="0s" name="a" start="1s" duration="2s" audioDuration="3/2s" format="r1"/><asset-clip ref="r3" offset="2s" name="b" start="1s" duration="2s" audioStart="1/2s" audioDuration="5/2s" format="r1"/>"#)
        #expect(try Self.segmentsRead(jCut) == pictures + ["audio 1.000000000 1.500000000 0.000000000 1.500000000", "audio 0.500000000 2.500000000 1.500000000 2.500000000"])
        let lCut = try timeline(#"<asset-clip ref="r2" offset="0s" name="a" start="1s" duration="2s" audioDuration="5/2s" format="r1"/><asset-clip ref="r3" offset="2s" name="b" start="1s" duration="2s" format="r1"/>"#)
        let read = try Moonreel.runScript("""
            local comp = av.readTimeline(arg[1])
            for _, track in ipairs(comp:tracksWithMediaType("audio")) do
                for _, s in ipairs(track.segments) do
                    if not s.empty then print(track.trackID, s.sourceRange.start, s.sourceRange.duration, s.targetRange.start) end
                end
            end
            """, arguments: [lCut])
        let held = read.out.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(read.status == 0 && held.count == 2 && held[0][0] != held[1][0] && held.map { Array($0.dropFirst()) } == [["1.0", "2.5", "0.0"], ["1.0", "2.0", "2.0"]],
                "a's sound 1–3.5 s held under b's picture, on a track of its own beside b's: \(read.out) \(read.err)")
    }

    /// Done means right, reading: a clip's marker (in its media's time, as OpenTimelineIO has
    /// it) came back at that media time, not where the clip plays; a track muted in the editor
    /// (`enabled` false) was mixed in; an FCPXML slide was read as a dissolve in silence. The
    /// marker lands on the timeline, the muted track is left out with a warning, and the
    /// transition says what it was read as.
    @Test func readingSaysWhatItLeavesOutAndPlacesClipMarkers() throws {
        let clips = try Self.colours()
        let otio = Fixtures.scratchPath("muted.otio")
        _ = try OpenTimelineIOJudge.run(Self.otioTimeline("muted") + """
            v.append(otio.schema.Gap(duration=RT(15, 30)))           # 0.5 s of black
            red = clip(sys.argv[1], 30, 60)                          # 2 s of red from its 1 s
            red.markers.append(otio.schema.Marker(name="beat", marked_range=TR(RT(45, 30), RT(0, 30))))  # its 1.5 s: the timeline's 1 s
            v.append(red)
            a = otio.schema.Track(name="Music", kind=otio.schema.TrackKind.Audio)
            a.enabled = False
            a.append(clip(sys.argv[2], 0, 75))
            t.tracks.append(a)
            otio.adapters.write_to_file(t, sys.argv[3])
            """, [clips[0], clips[1], otio])
        let read = try Moonreel.runScript("""
            local comp, vc, mix, markers = av.readTimeline(arg[1])
            print(comp.duration, #comp:tracksWithMediaType("audio"), #markers, markers[1] and markers[1].start)
            """, name: "read.lua", arguments: [otio])
        #expect(read.status == 0 && read.out == "2.5\t0\t1\t1.0\n", "\(read.out) \(read.err)")
        #expect(read.err.contains("read.lua:1: track \"Music\" is disabled (muted or hidden in the editor): left out") && read.err.contains("[notInTimeline]"), "\(read.err)")

        let fcpxml = Fixtures.scratchPath("slide.fcpxml")
        let written = try Moonreel.runScript("""
            local comp, vc, mix = av.join({ av.asset(arg[1]), av.asset(arg[2]) }, { transition = "dissolve", duration = 0.5 })
            av.writeTimeline(comp, vc, mix, arg[3])
            """, arguments: [clips[0], clips[1], fcpxml])
        #expect(written.status == 0, "\(written.err)")
        let slid = try String(contentsOfFile: fcpxml, encoding: .utf8).replacingOccurrences(of: "name=\"Cross Dissolve\"", with: "name=\"Slide\"")
        try slid.write(toFile: fcpxml, atomically: true, encoding: .utf8)
        let back = try Moonreel.runScript("local comp = av.readTimeline(arg[1])", name: "slide.lua", arguments: [fcpxml])
        #expect(back.status == 0 && back.err.contains("slide.lua:1: the FCPXML transition at ") && back.err.contains("is \"Slide\": read as a dissolve"), "\(back.err)")
    }

    /// A recording with two microphones (two audio tracks): a timeline names the file only,
    /// so the second track's clip comes back as the first's. Writing says so (notInTimeline),
    /// and reading says which tracks are not heard (soundLeftOut); before, both were silent
    /// and the read edit played the first microphone twice, the second not at all.
    @Test func aSecondMicrophoneIsSaidWhenWrittenAndRead() throws {
        let twoMicrophones = try Fixtures.cached("two-microphones.mp4") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=gray:size=320x240:rate=30:duration=3",
                             "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=3", "-f", "lavfi", "-i", "sine=frequency=880:sample_rate=48000:duration=3",
                             "-map", "0", "-map", "1", "-map", "2", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", path])
        }
        let otio = Fixtures.scratchPath("mics.otio"), output = Fixtures.scratchPath("mics.mp4")
        let written = try Moonreel.runScript("""
            local a = av.asset(arg[1])
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, a.duration), a, 0)
            av.writeTimeline(comp, nil, arg[2])
            """, name: "mics.lua", arguments: [twoMicrophones, otio])
        #expect(written.status == 0 && written.err.contains("mics.lua:4: clip \"two-microphones.mp4\" of audio track ") && written.err.contains("plays the file's audio track 3; the timeline names the file only, so an editor plays its first audio track (2)")
                && written.err.contains("[notInTimeline]"), "\(written.err)")
        let read = try Moonreel.runScript("""
            local comp, vc, mix = av.readTimeline(arg[1])
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL, session.videoComposition, session.audioMix = arg[2], vc, mix
            assert(session:export())
            """, name: "back.lua", arguments: [otio, output])
        #expect(read.status == 0 && read.err.contains("back.lua:1: clip \"two-microphones.mp4\" of track ") && read.err.contains("has 2 audio tracks and only its first is played: track 3 is not heard")
                && read.err.contains("[soundLeftOut]"), "\(read.err)")
        // As said: the first microphone is heard, the second is not.
        let sound = try Tool.audioSamples(output)
        #expect(sound.toneAmplitude(440, from: 24000, to: 120000, rate: 48000) > 0.1 && sound.toneAmplitude(880, from: 24000, to: 120000, rate: 48000) < 0.01)
    }

    /// FCPXML as editors write it: a sequence that starts at 01:00:00:00 (tcStart, spine
    /// offsets from 3600 s), a clip whose sound is off (srcEnable="video") and one disabled
    /// (enabled="0"). Moonreel read an hour of black before the cut, the muted clip's sound
    /// and the disabled clip's picture, without a word. The timeline starts at its first
    /// clip, the muted clip is silent, the disabled one a gap with a warning.
    @Test func fcpxmlReadsTheStartTimecodeAndClipsTurnedOff() throws {
        let clips = try Self.colours()
        let spine = zip(clips, ["srcEnable=\"video\"", "enabled=\"0\"", ""]).enumerated().map { index, pair in
            #"<asset-clip ref="r\#(index + 2)" offset="\#(3600 + 4 * index)s" name="\#((pair.0 as NSString).lastPathComponent)" start="0s" duration="4s" \#(pair.1)/>"#
        }.joined(separator: "\n")
        let assets = clips.enumerated().map { index, path in
            #"<asset id="r\#(index + 2)" name="\#((path as NSString).lastPathComponent)" start="0s" duration="4s" hasVideo="1" hasAudio="1" format="r1"><media-rep kind="original-media" src="file://\#(path)"/></asset>"#
        }.joined(separator: "\n")
        let fcpxml = Fixtures.scratchPath("tc.fcpxml")
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE fcpxml>
            <fcpxml version="1.10"><resources><format id="r1" frameDuration="1/30s" width="320" height="240"/>
            \(assets)
            </resources><library><event name="Cut"><project name="tc"><sequence format="r1" duration="12s" tcStart="3600s" tcFormat="NDF">
            <spine>
            \(spine)
            </spine></sequence></project></event></library></fcpxml>
            """.write(toFile: fcpxml, atomically: true, encoding: .utf8)
        let output = Fixtures.scratchPath("tc.mp4")
        let result = try Moonreel.runScript("""
            local comp, vc, mix = av.readTimeline(arg[1])
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL, session.videoComposition, session.audioMix = arg[2], vc, mix
            assert(session:export())
            """, name: "tc.lua", arguments: [fcpxml, output])
        #expect(result.status == 0, "\(result.err)")
        let warnings = result.errorLines.filter { $0.hasSuffix("[notInTimeline]") }
        #expect(warnings.count == 1 && warnings[0].contains("tc.lua:1: the FCPXML clip \"\((clips[1] as NSString).lastPathComponent)\" at 4 s is disabled: left out, a gap in its place"), "\(result.err)")
        #expect(abs(try Tool.ffprobe(output).duration - 12) < 0.1)
        #expect(try Tool.rgbFrame(output, at: 2).pixel(160, 120).r > 200)
        #expect(try Tool.rgbFrame(output, at: 6).pixel(160, 120).g < 30, "the disabled green clip is a gap")
        #expect(try Tool.rgbFrame(output, at: 10).pixel(160, 120).b > 200)
        let sound = try Tool.audioSamples(output)
        #expect(sound.toneAmplitude(440, from: 24000, to: 168000, rate: 48000) < 0.01, "the red clip's sound is off")
        #expect(sound.toneAmplitude(440, from: 408000, to: 552000, rate: 48000) > 0.1, "the blue clip's sound plays")
    }

    /// A timeline made with OpenTimelineIO's own API — clips, a gap, a dissolve, a clip at
    /// twice its speed — reads into a composition whose export lasts the timeline's duration
    /// and shows each clip at its time.
    @Test func anOpenTimelineIOFileReadsIntoAnEditThatExports() throws {
        let clips = try Self.colours()
        let otio = Fixtures.scratchPath("made.otio")
        _ = try OpenTimelineIOJudge.run(Self.otioTimeline("made") + """
            v.append(clip(sys.argv[1], 30, 45))                      # red, 1.5 s
            v.append(otio.schema.Transition(transition_type="SMPTE_Dissolve", in_offset=RT(6, 30), out_offset=RT(9, 30)))
            v.append(clip(sys.argv[2], 15, 30))                      # green, 1 s
            v.append(otio.schema.Gap(duration=RT(15, 30)))           # black, 0.5 s
            fast = clip(sys.argv[3], 0, 30)                          # blue, 2 s of media in 1 s
            fast.effects.append(otio.schema.LinearTimeWarp(time_scalar=2.0))
            v.append(fast)
            otio.adapters.write_to_file(t, sys.argv[4])
            print(t.duration().to_seconds())
            """, clips + [otio])
        let output = Fixtures.scratchPath("made.mp4")
        let result = try Moonreel.runScript("""
            local comp, vc, mix, markers = av.readTimeline(arg[1])
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL, session.videoComposition, session.audioMix = arg[2], vc, mix
            assert(session:export())
            print(comp.duration)
            """, arguments: [otio, output])
        #expect(result.status == 0 && result.out == "4.0\n", "\(result.err)")
        let probe = try Tool.ffprobe(output)
        #expect(abs((Double(probe.format.duration ?? "") ?? 0) - 4.0) < 0.05, "\(probe.format.duration ?? "?")")
        func colour(_ t: Double) throws -> (r: Int, g: Int, b: Int) { try Tool.rgbFrame(output, at: t).pixel(160, 120) }
        let red = try colour(0.5), middle = try colour(1.5), green = try colour(2.2), gap = try colour(2.75), blue = try colour(3.5)
        #expect(red.r > 230 && red.g < 30, "\(red)")
        // 0.2 s before the cut, the dissolve that starts 0.2 s earlier is half way through... at 1.5 s (the cut) it is 6 of 15 frames in.
        #expect(middle.r > 60 && middle.g > 60, "mixed at the cut: \(middle)")
        #expect(green.g > 230 && green.r < 30, "\(green)")
        #expect(gap.r < 20 && gap.g < 20 && gap.b < 20, "the gap is black: \(gap)")
        #expect(blue.b > 230 && blue.r < 30, "\(blue)")
    }

    /// A removeSilences cut goes out as OTIO and comes back with every cut exact: the
    /// segments of the composition read back are those written. On the real podcast (its
    /// silent lead-in and end cut off: one piece, trimmed at both ends) and on a talk over a
    /// room tone with three pauses (four pieces, picture and sound).
    @Test(arguments: ["podcast", "talk"]) func aRemoveSilencesCutRoundTripsExactly(recording: String) throws {
        let (media, pieces) = recording == "podcast"
            ? (Fixtures.real("09_garageband_podcast_aac_cover_chapters.m4a"), 1) : (try DoneMeansRightTests.roomToneTalk(), 8)
        let otio = Fixtures.scratchPath("cut.otio")
        let segments = """
            local function segments(comp)
                local out = {}
                for _, track in ipairs(comp.tracks) do
                    for _, s in ipairs(track.segments) do
                        if not s.empty then
                            out[#out + 1] = string.format("%s %.9f %.9f %.9f", track.mediaType, s.sourceRange.start, s.sourceRange.duration, s.targetRange.start)
                        end
                    end
                end
                return table.concat(out, "\\n")
            end

            """
        let cut = try Moonreel.runScript(segments + """
            local talk = av.asset(arg[1])
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, talk.durationTime), talk, 0)
            local removed = comp:removeSilences(av.analyze(talk, { video = false }):silences{ minDuration = 0.1 }, { margin = 0.05 })
            assert(#removed >= 1)
            av.writeTimeline(comp, nil, arg[2])
            print(segments(comp))
            """, arguments: [media, otio])
        #expect(cut.status == 0, "\(cut.err)")
        let back = try Moonreel.runScript(segments + """
            local comp = av.readTimeline(arg[1])
            print(segments(comp))
            """, arguments: [otio])
        #expect(back.status == 0, "\(back.err)")
        #expect(cut.out.split(separator: "\n").count == pieces, "\(cut.out)")
        // Read back through av.join's A/B rolls: the same segments, alternating between two tracks.
        #expect(back.out.split(separator: "\n").sorted() == cut.out.split(separator: "\n").sorted(), "written:\n\(cut.out)\nread back:\n\(back.out)")
        let tracks = try Self.itemsRead(otio, rate: 48000)
        #expect(tracks.map(\.first) == (pieces == 1 ? ["Audio"] : ["Video", "Audio"]), "\(tracks)")
        #expect(tracks.allSatisfy { $0.dropFirst().allSatisfy { $0.hasPrefix("clip ") } && $0.count == max(2, pieces / 2 + 1) }, "\(tracks)")
    }

    /// What a timeline cannot hold is said, one warning each: a title layer, a filter of the
    /// whole picture, a slide written as a dissolve; an EDL rounds a cut between frames.
    @Test func whatATimelineCannotHoldIsSaid() throws {
        let clips = try Self.colours()
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let result = try Moonreel.runScript("""
            local comp, vc, mix = av.join({ av.asset(arg[1]), { av.asset(arg[2]), duration = 1.01 } }, { transition = "slide", duration = 0.5 })
            local video, parent = av.layer(), av.layer()
            video.frame, parent.frame = { 0, 0, 320, 240 }, { 0, 0, 320, 240 }
            parent:addSublayer(video)
            parent:addSublayer(av.textLayer{ string = "Day one", frame = { 0, 0, 320, 60 } })
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            vc.filters = { av.filter("colorControls", { saturation = 0 }) }
            av.writeTimeline(comp, vc, mix, arg[3])
            av.writeTimeline(comp, vc, mix, arg[4])
            """, arguments: [clips[0], clips[1], folder + "/notes.otio", folder + "/notes.edl"])
        #expect(result.status == 0, "\(result.err)")
        let warnings = result.errorLines.filter { $0.contains("[notInTimeline]") }
        #expect(warnings.contains { $0.contains("test.lua:8: ") && $0.contains("the text layer \"Day one\" of the animation tool is left out of the timeline") }, "\(result.err)")
        #expect(warnings.contains { $0.contains("filter \"colorControls\" is left out") }, "\(result.err)")
        #expect(warnings.contains { $0.contains("is a slide or zoom (the pictures move); timelines hold dissolves and wipes, so it is written as a dissolve") }, "\(result.err)")
        #expect(result.errorLines.contains { $0.contains("test.lua:9: ") && $0.contains("[timeRounded]") && $0.contains("rounded to the nearest frame") }, "\(result.err)")
        let strict = try Moonreel.runScript("""
            local comp, vc, mix = av.join({ av.asset(arg[1]), av.asset(arg[2]) }, { transition = "slide", duration = 0.5 })
            av.writeTimeline(comp, vc, mix, arg[3])
            """, arguments: [clips[0], clips[1], folder + "/strict.otio"], options: ["--strict"])
        #expect(strict.status != 0 && strict.err.contains("strict: the transition at"), "\(strict.err)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/strict.otio"))
    }

    /// `moonreel run --timeline` writes each export's timeline instead of rendering it, the
    /// second as NAME-2; paths relative to the timeline's folder read back from anywhere; an
    /// input is never written over.
    /// `run --timeline` writes the timeline of what the script would render, but a session's
    /// timeRange and loudness target were left out of it without a word (a 1.5 s export
    /// handed over as the whole 4 s). Each is a notInTimeline warning at the export's line.
    @Test func aSessionsTimeRangeAndLoudnessAreSaidWhenATimelineIsWritten() throws {
        let clips = try Self.colours()
        let script = Fixtures.scratchPath("part.lua"), timeline = Fixtures.scratchPath("part.otio")
        try """
            local a = av.asset(arg[1])
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, a.duration), a, 0)
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL, session.timeRange, session.loudness = arg[2], av.range(2, 1.5), -16
            print(session:export())
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try Moonreel.run(["run", "--timeline", timeline, script, clips[0], Fixtures.scratchPath("part.mp4")])
        #expect(result.status == 0 && result.out == "true\ttimeline\n", "\(result.out) \(result.err)")
        #expect(result.err.contains("part.lua:6: the session's timeRange 2–3.5 s is not in the timeline: it holds the whole composition (4 s)"), "\(result.err)")
        #expect(result.err.contains("part.lua:6: the session's loudness target (-16 LUFS) is not in the timeline"), "\(result.err)")
    }

    @Test func runWritesTimelinesInsteadOfExports() throws {
        let clips = try Self.colours()
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let script = Fixtures.scratchPath("two.lua")
        try """
            for i = 1, 2 do
                local comp, vc, mix = av.join({ av.asset(arg[1]), av.asset(arg[2]) }, { transition = "dissolve", duration = 0.5 })
                local session = av.exportSession(comp, "HighestQuality")
                session.outputURL, session.videoComposition, session.audioMix = arg[3] .. i .. ".mp4", vc, mix
                print(session:export())
            end
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try Moonreel.run(["run", "--timeline", folder + "/edit.fcpxml", script, clips[0], clips[1], folder + "/out"])
        #expect(result.status == 0 && result.out == "true\ttimeline\ntrue\ttimeline\n", "\(result.out) \(result.err)")
        #expect(FileManager.default.fileExists(atPath: folder + "/edit.fcpxml") && FileManager.default.fileExists(atPath: folder + "/edit-2.fcpxml"))
        #expect(!FileManager.default.fileExists(atPath: folder + "/out1.mp4"), "nothing rendered")
        let xml = try String(contentsOfFile: folder + "/edit.fcpxml", encoding: .utf8)
        #expect(xml.contains("<project name=\"out1\">") && xml.contains("<media-rep kind=\"original-media\" src=\"file://\(clips[0])\"/>"), "\(xml)")

        let relative = Fixtures.scratchPath("rel.otio")
        let written = try Moonreel.runScript("""
            local comp, vc, mix = av.join({ av.asset(arg[1]) })
            av.writeTimeline(comp, vc, mix, arg[2], { relativePaths = true })
            local ok, err = pcall(av.writeTimeline, comp, vc, mix, arg[1] .. ".otio")
            print(ok)
            ok, err = pcall(av.writeTimeline, comp, vc, mix, arg[2])
            print(ok, err)
            """, arguments: [clips[0], relative])
        #expect(written.status == 0, "\(written.err)")
        #expect(written.out.contains("false\t") && written.out.contains("exists"), "an existing timeline is not replaced: \(written.out)")
        let url = try OpenTimelineIOJudge.run("print(otio.adapters.read_from_file(sys.argv[1]).tracks[0][0].media_reference.target_url)", [relative])
        #expect(url.hasPrefix("../") && url.hasSuffix((clips[0] as NSString).lastPathComponent + "\n"), "\(url)")
        let back = try Moonreel.runScript("local comp = av.readTimeline(arg[1]); print(comp.duration)", arguments: [relative])
        #expect(back.status == 0 && back.out == "4.0\n", "\(back.err)")
    }
}
