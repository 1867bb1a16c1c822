import Foundation
import Testing
import TestSupport

/// Interlaced video (a camcorder's 1080i, DV, broadcast): each frame holds two fields a
/// field apart in time, which drawn as they are comb every moving edge. They are made whole
/// frames when drawn (bwdif, as players show them), and said; Passthrough keeps the fields.
/// Judged by ffmpeg's own field detector (`idet`) on the luma, and against ffmpeg's bwdif.
@Suite struct InterlacedTests {
    /// 4 s of moving `testsrc2` at 50 fields a second, woven top field first into 25 frames a
    /// second and encoded interlaced, as a 576i camcorder records; with a tone.
    static func interlaced() throws -> String {
        let path = Fixtures.directory + "/interlaced-576i.mp4"
        guard !FileManager.default.fileExists(atPath: path) else { return path }
        let made = Fixtures.scratchPath("interlaced-576i.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=720x576:rate=50,format=yuv420p", "-f", "lavfi", "-i", "sine=duration=4", "-t", "4",
                         "-vf", "tinterlace=interleave_top,fieldorder=tff", "-c:v", "libx264", "-preset", "ultrafast", "-flags", "+ildct+ilme",
                         "-x264opts", "tff=1", "-c:a", "aac", made])
        _ = rename(made, path)
        return path
    }

    /// ffmpeg's multi-frame field detection over the luma of `path` (from `start` s): frames
    /// found interlaced (either field first) and progressive.
    static func fields(_ path: String, from start: Double = 0) throws -> (interlaced: Int, progressive: Int) {
        let log = try Tool.run("ffmpeg", ["-v", "info", "-nostats", "-ss", "\(start)", "-i", path, "-vf", "extractplanes=y,idet", "-f", "null", "-"]).err
        let line = try #require(log.split(separator: "\n").first { $0.contains("Multi frame detection") }, "\(log)")
        let count = { (name: String) -> Int in
            guard let range = line.range(of: name + ":") else { return 0 }
            return Int(line[range.upperBound...].split(separator: " ").first ?? "") ?? 0
        }
        return (count("TFF") + count("BFF"), count("Progressive"))
    }

    static let exportScript = """
        local asset = av.asset(arg[1])
        print(asset.tracks[1].fieldOrder)
        local comp = av.composition()
        comp:addMutableTrack("video"):insertTimeRange(av.range(0, 3), asset:tracksWithMediaType("video")[1], 0)
        local session = av.exportSession(comp, arg[3])
        session.outputURL = arg[2]
        assert(session:export())
        for _, d in ipairs(session.diagnostics) do print(d.kind, d.level, d.message) end
        """

    @Test func interlacedFramesAreMadeWholeAndSaid() throws {
        let source = try Self.interlaced()
        let stored = try Self.fields(source)
        #expect(stored.interlaced > 60 && stored.progressive == 0, "the source is interlaced: \(stored)")

        let output = Fixtures.scratchPath("deinterlaced.mp4")
        let result = try Moonreel.runScript(Self.exportScript, arguments: [source, output, "HighestQuality"])
        try #require(result.status == 0, "\(result.err)")
        #expect(result.out.hasPrefix("top field first\n"), "\(result.out)")
        #expect(result.out.contains("encodingChanged\tnote\t\"interlaced-576i.mp4\" is interlaced: its fields are made whole frames (bwdif, a frame for each frame), and the output is progressive"), "\(result.out)")
        let drawn = try Self.fields(output)
        #expect(drawn.progressive >= 65 && drawn.interlaced <= 5, "combing left in the output: \(drawn)")
        // The same frames as ffmpeg's own bwdif makes of them.
        let reference = Fixtures.scratchPath("bwdif.mp4")
        try Tool.ffmpeg(["-i", source, "-t", "3", "-vf", "bwdif=mode=send_frame:parity=auto:deint=interlaced", "-c:v", "libx264", "-crf", "12", reference])
        #expect(try Tool.psnr(output, against: reference) > 40)

        let copied = Fixtures.scratchPath("copied.mp4")
        let copy = try Moonreel.runScript(Self.exportScript, arguments: [source, copied, "Passthrough"])
        try #require(copy.status == 0, "\(copy.err)")
        #expect(!copy.out.contains("interlaced:"), "Passthrough keeps the fields: \(copy.out)")
        #expect(try Self.fields(copied).interlaced > 60)

        let probe = try Moonreel.run(["probe", source])
        #expect(probe.out.contains("25.0 fps, interlaced (top field first)"), "\(probe.out)")

        // The studio's preview proxy shows the frames as the export draws them: whole.
        let cache = Fixtures.scratchPath("cache")
        let made = try Tool.run(Moonreel.executable, ["proxy", source], environment: ["XDG_CACHE_HOME": cache])
        try #require(made.status == 0, "\(made.err)")
        let proxy = try #require(try FileManager.default.contentsOfDirectory(atPath: cache + "/moonreel/proxies").first { $0.hasSuffix(".mov") })
        let previewed = try Self.fields(cache + "/moonreel/proxies/" + proxy)
        #expect(previewed.progressive >= 90 && previewed.interlaced <= 6, "the proxy combs: \(previewed)")
    }

    /// PAL DV, whose container says nothing of its fields: read from its first frame (bottom
    /// field first), said, and made whole. A still taken on a keyframe after a jump back (a
    /// keyframe a second) is the frame ffmpeg's bwdif makes reading in order: the frame
    /// before it is fed first. A range that shows no interlaced clip says nothing.
    @Test func dvIsReadFromItsFramesAndAJumpShowsTheSameFrame() throws {
        let dv = Fixtures.scratchPath("pal.dv")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=720x576:rate=50", "-t", "3", "-vf", "tinterlace=interleave_bottom,fieldorder=bff", "-target", "pal-dv", "-an", dv])
        let probe = try Moonreel.runScript("print(av.asset(arg[1]).tracks[1].fieldOrder)", arguments: [dv])
        #expect(probe.out == "bottom field first\n", "\(probe.out) \(probe.err)")

        let keyed = Fixtures.scratchPath("interlaced-gop25.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=720x576:rate=50,format=yuv420p", "-t", "3", "-vf", "tinterlace=interleave_top,fieldorder=tff",
                         "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-flags", "+ildct+ilme", "-x264opts", "tff=1", keyed])
        let stills = Fixtures.scratchPath("stills")
        try FileManager.default.createDirectory(atPath: stills, withIntermediateDirectories: true)
        let script = """
            local asset = av.asset(arg[1])
            local comp = av.composition()
            comp:addMutableTrack("video"):insertTimeRange(av.range(0, 3), asset:tracksWithMediaType("video")[1], 0)
            local generator = av.imageGenerator(comp)
            generator:copyImage(0.2, arg[2] .. "/a.png")
            generator:copyImage(2.0, arg[2] .. "/b.png")
            generator:copyImage(1.0, arg[2] .. "/c.png")
            """
        let result = try Moonreel.runScript(script, arguments: [keyed, stills])
        try #require(result.status == 0, "\(result.err)")
        for (name, time) in [("b", "2.0"), ("c", "1.0")] {
            let reference = Fixtures.scratchPath("bwdif-\(name).png")
            try Tool.ffmpeg(["-i", keyed, "-vf", "bwdif=mode=send_frame:parity=auto:deint=interlaced,select='gte(t,\(time))'", "-frames:v", "1", reference])
            // On the luma: the two turn the chroma into RGB otherwise. Fed without the frame before
            // it, the frame at 2 s came out 40 dB from bwdif's; drawn as stored, 31 dB.
            #expect(try Tool.psnr(stills + "/\(name).png", against: reference, filter: "format=gray") > 43, "\(name) at \(time) s")
        }
        let mixed = """
            local dv, plain = av.asset(arg[1]), av.asset(arg[2])
            local comp = av.composition()
            local video = comp:addMutableTrack("video")
            video:insertTimeRange(av.range(0, 1), dv:tracksWithMediaType("video")[1], 0)
            video:insertTimeRange(av.range(0, 2), plain:tracksWithMediaType("video")[1], 1)
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL, session.timeRange = arg[3], av.range(tonumber(arg[4]), 0.8)
            assert(session:export())
            for _, d in ipairs(session.diagnostics) do print(d.kind, d.message) end
            """
        let plain = try Fixtures.clip(seconds: 2)
        let later = try Moonreel.runScript(mixed, arguments: [dv, plain, Fixtures.scratchPath("later.mp4"), "1.5"])
        try #require(later.status == 0, "\(later.err)")
        #expect(!later.out.contains("interlaced"), "only the progressive clip is shown: \(later.out)")
        let earlier = try Moonreel.runScript(mixed, arguments: [dv, plain, Fixtures.scratchPath("earlier.mp4"), "0.5"])
        #expect(earlier.out.contains("\"pal.dv\" is interlaced"), "\(earlier.out)")
    }

    /// A recording that turns interlaced partway (a progressive advert, then a 576i
    /// programme: two transport streams joined), whose track says progressive from its first
    /// frame: its interlaced frames are made whole all the same, and now said, with where
    /// (the export said nothing of it).
    @Test func aFileTurningInterlacedPartwayIsMadeWholeAndSaid() throws {
        let progressive = Fixtures.scratchPath("advert.ts"), programme = Fixtures.scratchPath("programme.ts")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=720x576:rate=25:duration=2", "-c:v", "libx264", "-preset", "ultrafast", progressive])
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=720x576:rate=50:duration=2", "-vf", "tinterlace=interleave_top,fieldorder=tff",
                         "-c:v", "libx264", "-preset", "ultrafast", "-flags", "+ildct+ilme", "-x264opts", "tff=1", "-output_ts_offset", "2", programme])
        let joined = Fixtures.scratchPath("recording.ts")
        try (try Data(contentsOf: URL(fileURLWithPath: progressive)) + Data(contentsOf: URL(fileURLWithPath: programme))).write(to: URL(fileURLWithPath: joined))
        let output = Fixtures.scratchPath("recording.mp4")
        let result = try Moonreel.runScript(Self.exportScript, arguments: [joined, output, "HighestQuality"])
        try #require(result.status == 0, "\(result.err)")
        #expect(result.out.hasPrefix("progressive\n"), "\(result.out)")
        #expect(result.out.contains("encodingChanged\tnote\t\"recording.ts\" turns interlaced partway, though its track says otherwise: its interlaced fields are made whole frames (bwdif), and the output is progressive"), "\(result.out)")
        // idet is judged where the programme is: it takes testsrc2's 25 jumps a second for combing.
        #expect(try Self.fields(programme).interlaced >= 45, "the programme is interlaced")
        let drawn = try Self.fields(output, from: 2)
        #expect(drawn.progressive >= 20 && drawn.interlaced <= 5, "combing left in the output: \(drawn)")
    }
}
