import Foundation
import Testing
import TestSupport

/// Export session options and the command line's machine-readable outputs.
@Suite struct ExportOptionsTests {
    @Test func metadataFastStartTimeRangeAndPresetSize() throws {
        let clip = try Fixtures.clip(seconds: 6, size: "640x480")
        let output = Fixtures.scratchPath("tagged.mp4")
        let result = try Moonreel.runScript("""
            local asset = av.asset(arg[1])
            local session = av.exportSession(asset, "LowQuality")
            session.outputURL = arg[2]
            session.timeRange = av.range(1, 2)
            session.metadata = { title = "Moonreel test", artist = "ffprobe" }
            session.shouldOptimizeForNetworkUse = true
            local ok, err = session:export()
            print(ok, session.status, session.progress)
            """, arguments: [clip, output])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("true\tcompleted\t1.0"), "\(result.out)")
        let probe = try Tool.ffprobe(output)
        #expect(probe.format.tags?["title"] == "Moonreel test" && probe.format.tags?["artist"] == "ffprobe")
        #expect(abs(probe.duration - 2) < 0.05)
        // LowQuality fits 640×480 into 480×360.
        #expect(probe.video?.width == 480 && probe.video?.height == 360)
        // Fast start: the moov box comes before mdat.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: output))
        let moov = bytes.range(of: Data("moov".utf8)), mdat = bytes.range(of: Data("mdat".utf8))
        #expect(moov != nil && mdat != nil && moov!.lowerBound < mdat!.lowerBound)
    }

    /// Three messages that said other than what happened: an empty timeRange was called
    /// "outside the composition", AAC at 7350 Hz (in AAC's list of rates) was refused as
    /// outside 8000…192000, and a 15 fps clip at frameDuration 1/29.97 was "rendered at 30
    /// fps". ffprobe reads the AAC file's rate.
    @Test func messagesSayWhatHappened() throws {
        let (empty, aac, ntsc) = (Fixtures.scratchPath("empty.mp4"), Fixtures.scratchPath("7350.m4a"), Fixtures.scratchPath("ntsc.mp4"))
        let result = try Moonreel.runScript("""
            local a = av.asset(arg[1])
            local s = av.exportSession(a, "HighestQuality"); s.outputURL = arg[3]; s.timeRange = av.range(1, 0)
            print(s:export())
            s = av.exportSession(a, "AppleM4A"); s.outputURL = arg[4]; s.audioSettings = { sampleRate = 7350 }
            assert(s:export())
            local comp = av.composition(); comp:insertTimeRange(av.range(0, 1), av.asset(arg[2]), 0)
            local vc = av.videoComposition(comp); vc.frameDuration = 1 / 29.97
            s = av.exportSession(comp, "HighestQuality"); s.outputURL = arg[5]; s.videoComposition = vc
            assert(s:export())
            """, name: "said.lua", arguments: [try Fixtures.clip(seconds: 2), try Fixtures.clip(seconds: 1, rate: "15"), empty, aac, ntsc])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("said.lua:3: timeRange [1.0…1.0) s is empty: give it a duration over 0"), "\(result.out)")
        #expect(try Tool.ffprobe(aac).audio?.sample_rate == "7350")
        #expect(result.err.contains("said.lua:9: rendered at 29.97 fps, \"clip-1.0-15-"), "\(result.err)")
    }

    /// Passthrough copied an iPhone's HEVC with the muxer's own sample entry, hev1, which
    /// QuickTime and Photos do not play: a "lossless" trim that no longer opened on a Mac.
    /// The source's tag is kept where the container knows it (hvc1 in MOV and MP4).
    @Test func passthroughKeepsTheSourcesHEVCTag() throws {
        for (fixture, ext) in [("02_iphone14pro_portrait_hevc10_hlg_dovi.MOV", "mov"), ("05_pixel_motionphoto_hevc_rot270_2videotracks.mp4", "mp4")] {
            let output = Fixtures.scratchPath("copy.\(ext)")
            let result = try Moonreel.runScript("""
                local session = av.exportSession(av.asset(arg[1]), "Passthrough")
                session.outputURL = arg[2]
                assert(session:export())
                """, arguments: [Fixtures.real(fixture), output])
            try #require(result.status == 0, "\(fixture): \(result.err)")
            let tags = try Tool.ffprobe(output).streams.filter { $0.codec_type == "video" }.map(\.codec_tag_string)
            #expect(!tags.isEmpty && tags.allSatisfy { $0 == "hvc1" }, "\(fixture): \(tags)")
        }
    }

    @Test func customMetadataKeysAreWrittenNotDropped() throws {
        let clip = try Fixtures.clip(seconds: 2)
        let phone = Fixtures.real("01_iphone4s_portrait_h264_rot90.mov")
        let cases = [(clip, "mp4", "LowQuality"), (clip, "mov", "LowQuality"), (clip, "m4a", "AppleM4A"), (clip, "mp4", "Passthrough"),
                     (phone, "mov", "Passthrough"), (phone, "mp4", "LowQuality")]
        for (clip, ext, preset) in cases {
            let output = Fixtures.scratchPath("custom.\(ext)")
            let result = try Moonreel.runScript("""
                local session = av.exportSession(av.asset(arg[1]), arg[3])
                session.outputURL = arg[2]
                session.metadata = { title = "Song", source_id = "job-42", ["com.example.take"] = 7 }
                local ok, err = session:export()
                if not ok then error(err, 0) end
                """, arguments: [clip, output, preset])
            try #require(result.status == 0, "\(ext) \(preset): \(result.err)")
            let tags = try Tool.ffprobe(output).format.tags ?? [:]
            #expect(tags["source_id"] == "job-42" && tags["com.example.take"] == "7", "\(ext) \(preset): \(tags)")
            #expect(tags["title"] == "Song" && tags["com.apple.quicktime.title"] == "Song", "\(ext) \(preset): \(tags)")
        }
        let bad = try Moonreel.runScript("av.exportSession(av.composition(), 'LowQuality').metadata = { ['two words'] = 'x' }")
        #expect(bad.status == 1 && bad.err.contains("metadata keys are 1–128 letters, digits"), "\(bad.err)")
    }

    /// `--progress json`: standard output carries JSON lines only (schema 1): start, progress,
    /// done or error; the script's own `print` goes to standard error.
    @Test func progressAsJSONLines() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let output = Fixtures.scratchPath("progress.mp4")
        let result = try Moonreel.runScript("print(\"from the script\")\n" + Moonreel.cutScript(start: 1, duration: 3, preset: "LowQuality") + """
            local again = av.exportSession(comp, "LowQuality")
            again.outputURL = arg[2]
            local ok = again:export()
            error("done here")
            """, arguments: [clip, output], options: ["--progress", "json"])
        #expect(result.status == 1, "\(result.err)")
        #expect(result.err.contains("from the script"))
        let lines = result.out.split(separator: "\n")
        let events = try lines.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(events.allSatisfy { $0["schema"] as? Int == 2 })
        let kinds = events.map { $0["event"] as? String ?? "?" }
        #expect(kinds.first == "start" && kinds.filter { $0 == "done" }.count == 1 && kinds.suffix(2) == ["error", "error"], "\(kinds)")
        #expect(events[0]["frames"] as? Int == 90 && events[0]["duration"] as? Double == 3 && events[0]["output"] as? String == output)
        let progress = events.filter { $0["event"] as? String == "progress" }
        #expect(!progress.isEmpty && progress.allSatisfy { $0["fraction"] is Double && ($0["speed"] is Double || $0["speed"] is NSNull) })
        #expect(progress.last?["fraction"] as? Double == 1.0 && progress.last?["frames"] as? Int == 90)
        let done = try #require(events.first { $0["event"] as? String == "done" })
        let size = try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int
        #expect(done["bytes"] as? Int == size && done["seconds"] is Double)
        let refused = events[events.count - 2], failed = events[events.count - 1]
        #expect(refused["kind"] as? String == "outputUnavailable" && refused["line"] as? Int == 10 && (refused["file"] as? String)?.hasSuffix("/test.lua") == true)
        #expect(failed["kind"] as? String == "script" && (failed["message"] as? String)?.hasSuffix("done here") == true && failed["line"] as? Int == 11)
    }

    /// Issue 25: under `--progress json` nothing but JSON lines reaches standard output — not
    /// `io.write`, `io.stdout:write` or a program the script runs; notes are `note` events
    /// (before the export's `done`), `start` names the inputs, and `av.event{…}` sends the
    /// script's own line.
    @Test func jsonProgressKeepsStandardOutputForJSONAndCarriesNotesInputsAndScriptEvents() throws {
        let clip = try Fixtures.clip(seconds: 2)
        let output = Fixtures.scratchPath("json.mp4")
        let result = try Moonreel.runScript("""
            io.write("from io.write\\n"); io.stdout:write("from io.stdout\\n"); os.execute("echo from a child")
            av.event{ name = "chapter", title = "Intro \\"one\\"", index = 1, at = 0.5, final = false }
            local a = av.asset(arg[1]); local comp = av.composition(); comp:insertTimeRange(av.range(0, 1), a, 0)
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL = arg[2]
            session.videoComposition = av.videoComposition(comp, { renderSize = {101, 100}, fit = "fit" })
            assert(session:export())
            """, arguments: [clip, output], options: ["--progress", "json"])
        #expect(result.status == 0, "\(result.err)")
        for text in ["from io.write", "from io.stdout", "from a child"] {
            #expect(!result.out.contains(text) && result.err.contains(text), "\(text) goes to standard error")
        }
        let events = try result.out.split(separator: "\n").map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        let kinds = events.map { $0["event"] as? String ?? "?" }
        let script = try #require(events.first { $0["event"] as? String == "script" })
        #expect(script["name"] as? String == "chapter" && script["title"] as? String == "Intro \"one\"" && script["index"] as? Int == 1
                && script["at"] as? Double == 0.5 && script["final"] as? Bool == false, "\(script)")
        #expect((events.first { $0["event"] as? String == "start" }?["inputs"] as? [String]) == [clip])
        let note = try #require(kinds.firstIndex(of: "diagnostic"))
        #expect((events[note]["message"] as? String)?.contains("renderSize 101×100") == true)
        #expect(events[note]["kind"] as? String == "sizeRounded" && events[note]["level"] as? String == "warning" && events[note]["line"] is Int, "\(events[note])")
        #expect(note < (kinds.firstIndex(of: "done") ?? 0), "\(kinds)")
        for (fields, message) in [("{ title = 'x' }", "an event needs a name"), ("{ name = 'x', event = 'y' }", "is the event line's own"),
                                  ("{ name = 'x', list = {} }", "event fields are strings, numbers or booleans")] {
            let refused = try Moonreel.runScript("av.event\(fields)")
            #expect(refused.status == 1 && refused.err.contains(message), "\(fields): \(refused.err)")
        }
    }

    @Test func probeJSONDescribesRotationAndTracks() throws {
        let phone = Fixtures.real("01_iphone4s_portrait_h264_rot90.mov")
        let result = try Moonreel.run(["probe", "--json", phone])
        #expect(result.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any]
        let tracks = object?["tracks"] as? [[String: Any]] ?? []
        let video = tracks.first { $0["mediaType"] as? String == "video" }
        #expect(video?["width"] as? Int == 568 && video?["uprightWidth"] as? Int == 320 && video?["uprightHeight"] as? Int == 568)
        #expect(video?["preferredTransform"] as? [Double] == [0, 1, -1, 0, 320, 0])
        #expect(tracks.contains { $0["mediaType"] as? String == "audio" })
    }

    @Test func coverArtIsNotVideoAndBothVideoTracksAreListed() throws {
        let podcast = Fixtures.real("09_garageband_podcast_aac_cover_chapters.m4a")
        let motion = Fixtures.real("05_pixel_motionphoto_hevc_rot270_2videotracks.mp4")
        let result = try Moonreel.runScript("""
            local podcast = av.asset(arg[1])
            print(#podcast:tracksWithMediaType("video"), #podcast:tracksWithMediaType("image"), #podcast:tracksWithMediaType("audio"))
            local motion = av.asset(arg[2])
            local videos = motion:tracksWithMediaType("video")
            print(#videos, videos[1].naturalSize.width, videos[2].naturalSize.width, videos[1].isPortrait)
            """, arguments: [podcast, motion])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("0\t1\t1"), "\(result.out)")
        #expect(result.out.contains("2\t1440.0\t2048.0\ttrue"), "\(result.out)")
    }
}
