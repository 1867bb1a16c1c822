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

    /// ffmpeg's multi-frame field detection over the luma of `path`: frames found interlaced
    /// (either field first) and progressive.
    static func fields(_ path: String) throws -> (interlaced: Int, progressive: Int) {
        let log = try Tool.run("ffmpeg", ["-v", "info", "-nostats", "-i", path, "-vf", "extractplanes=y,idet", "-f", "null", "-"]).err
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
    }
}
