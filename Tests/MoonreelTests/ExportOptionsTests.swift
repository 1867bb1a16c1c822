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

    @Test func customMetadataKeysAreWrittenNotDropped() throws {
        let clip = try Fixtures.clip(seconds: 2)
        var cases = [(clip, "mp4", "LowQuality"), (clip, "mov", "LowQuality"), (clip, "m4a", "AppleM4A"), (clip, "mp4", "Passthrough")]
        if let phone = Fixtures.real("01_iphone4s_portrait_h264_rot90.mov") { cases += [(phone, "mov", "Passthrough"), (phone, "mp4", "LowQuality")] }
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

    @Test func progressAsJSONLines() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let output = Fixtures.scratchPath("progress.mp4")
        let result = try Moonreel.run(["run", "--progress", "json", Moonreel.example("cut.lua"), clip, output])
        #expect(result.status == 0, "\(result.err)")
        let events = result.out.split(separator: "\n").filter { $0.hasPrefix("{") }
        #expect(!events.isEmpty)
        for line in events {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["event"] as? String == "progress" && object?["fraction"] is Double)
        }
        let last = try JSONSerialization.jsonObject(with: Data(events.last!.utf8)) as? [String: Any]
        #expect(last?["fraction"] as? Double == 1.0 && last?["frames"] as? Int == 90)
    }

    @Test func probeJSONDescribesRotationAndTracks() throws {
        guard let phone = Fixtures.real("01_iphone4s_portrait_h264_rot90.mov") else {
            print("skipped: ../shared/media/real is not here")
            return
        }
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
        guard let podcast = Fixtures.real("09_garageband_podcast_aac_cover_chapters.m4a"),
              let motion = Fixtures.real("05_pixel_motionphoto_hevc_rot270_2videotracks.mp4") else {
            print("skipped: ../shared/media/real is not here")
            return
        }
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
