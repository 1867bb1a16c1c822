import Foundation
import Testing
import TestSupport

/// HDR10's static metadata on PQ video (the mastering display and MaxCLL/MaxFALL a TV fits
/// the picture to its own peak with): read from a file's SEI or boxes, stated again by every
/// export that keeps PQ (x265's SEI and the container's boxes, read back by ffprobe), kept
/// by copies, and a note where the output cannot state it as the sources did.
@Suite struct HDRMetadataTests {
    static let display1000 = "G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1)"
    static let display4000 = "G(8500,39850)B(6550,2300)R(35400,14600)WP(15635,16450)L(40000000,50)"

    /// A PQ clip as an HDR10 camera or grading tool writes it: x265 with the display (and
    /// the light levels, when given) in its SEI only, as ffmpeg's CLI writes it. Made beside
    /// and renamed into place, as tests running at once share it.
    static func hdr10(_ name: String, display: String?, lightLevel: String?) throws -> String {
        let path = Fixtures.directory + "/" + name
        guard !FileManager.default.fileExists(atPath: path) else { return path }
        let stated = (display.map { [":master-display=\($0)"] } ?? []) + (lightLevel.map { [":max-cll=\($0)"] } ?? [])
        let made = Fixtures.scratchPath(name)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=1", "-vf", "format=yuv420p10le",
                         "-c:v", "libx265", "-preset", "ultrafast",
                         "-x265-params", "log-level=error" + stated.joined(),
                         "-color_primaries", "bt2020", "-color_trc", "smpte2084", "-colorspace", "bt2020nc", made])
        _ = rename(made, path)
        return path
    }

    /// Each HDR10 side data of `path`'s video as ffprobe reads it, by name: the stream's
    /// (a container's boxes) or its first frame's (the codec's SEI).
    static func stated(_ path: String, inFrames: Bool) throws -> [String: [String: String]] {
        let arguments = inFrames ? ["-show_frames", "-read_intervals", "%+#1"] : ["-show_streams"]
        let json = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-of", "json"] + arguments + [path]).out
        let root = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let entries = (root[inFrames ? "frames" : "streams"] as? [[String: Any]])?.first?["side_data_list"] as? [[String: Any]] ?? []
        var found: [String: [String: String]] = [:]
        for entry in entries {
            guard let type = entry["side_data_type"] as? String, type.contains("Mastering") || type.contains("light level") else { continue }
            found[type] = entry.filter { $0.key != "side_data_type" }.mapValues { "\($0)" }
        }
        return found
    }

    /// The numbers of one display as ffprobe prints them (fractions reduced, so the same
    /// display compares equal whichever container wrote it).
    static func reduced(_ values: [String: String]?) -> [String: Double] {
        (values ?? [:]).compactMapValues { text in
            let parts = text.split(separator: "/").compactMap { Double($0) }
            return parts.count == 2 && parts[1] != 0 ? parts[0] / parts[1] : parts.first
        }
    }

    static let exportScript = Moonreel.wholeAssetComposition() + """
        for i = 4, #arg do
          local more = av.asset(arg[i])
          comp:insertTimeRange(av.range(0, more.durationTime), more, comp.durationTime)
        end
        local session = av.exportSession(comp, "HighestQuality")
        session.outputURL = arg[2]
        session.hdr = "keep"
        local codec, format = arg[3]:match("([^,]+),([^,]+)")
        session.videoSettings = {codec = codec, pixelFormat = format}
        local ok, err = session:export()
        if not ok then error(err, 0) end
        for _, d in ipairs(session.diagnostics) do print(d.kind, d.level, d.message) end
        """

    func export(_ sources: [String], to name: String, codec: String) throws -> (path: String, said: String) {
        let output = Fixtures.scratchPath(name)
        let result = try Moonreel.runScript(Self.exportScript, arguments: [sources[0], output, codec] + sources.dropFirst())
        try #require(result.status == 0, "\(result.err)")
        return (output, result.out)
    }

    @Test func everyExportKeepingPQStatesTheSourcesMetadata() throws {
        let source = try Self.hdr10("hdr10-1000.mp4", display: Self.display1000, lightLevel: "1000,400")
        let expected = try Self.stated(source, inFrames: true)
        try #require(expected.count == 2, "the source carries both in its SEI: \(expected)")
        let display = Self.reduced(expected["Mastering display metadata"])
        for (name, codec) in [("hevc.mp4", "hevc,yuv420p10le"), ("prores.mov", "prores,yuv422p10le"),
                              ("vp9.webm", "vp9,yuv420p10le"), ("av1.mkv", "av1,yuv420p10le")] {
            let (output, said) = try export([source], to: name, codec: codec)
            let boxes = try Self.stated(output, inFrames: false)
            #expect(Self.reduced(boxes["Mastering display metadata"]) == display, "\(name): \(boxes)")
            #expect(boxes["Content light level metadata"]?["max_content"] == "1000" && boxes["Content light level metadata"]?["max_average"] == "400", "\(name): \(boxes)")
            #expect(!said.contains("HDR10"), "\(name): nothing lost, nothing said: \(said)")
            if codec.hasPrefix("hevc") {
                // HEVC players read the SEI, as the source's.
                #expect(try Self.stated(output, inFrames: true) == expected, "\(name)")
            }
        }
    }

    @Test func copiesKeepTheStreamsMetadata() throws {
        let source = try Self.hdr10("hdr10-1000.mp4", display: Self.display1000, lightLevel: "1000,400")
        let (webm, _) = try export([source], to: "vp9.webm", codec: "vp9,yuv420p10le")
        let before = try Self.stated(webm, inFrames: false)
        try #require(before.count == 2)
        let copy = Fixtures.scratchPath("copy.webm")
        let result = try Moonreel.runScript(Moonreel.exportWholeAssetScript, arguments: [webm, copy, "Passthrough"])
        try #require(result.status == 0, "\(result.err)")
        #expect(try Self.stated(copy, inFrames: false) == before)
    }

    @Test func differentDisplaysAndAMissingLightLevelAreSaid() throws {
        let bright = try Self.hdr10("hdr10-4000-nocll.mp4", display: Self.display4000, lightLevel: nil)
        let usual = try Self.hdr10("hdr10-1000.mp4", display: Self.display1000, lightLevel: "1000,400")
        let (output, said) = try export([usual, bright], to: "both.mp4", codec: "hevc,yuv420p10le")
        #expect(said.contains("encodingChanged\tnote\tthe PQ sources were mastered on different displays: the output states the brightest, mastered at 4000 cd/m²"), "\(said)")
        #expect(said.contains("optionIgnored\tnote\tthe output's MaxCLL and MaxFALL are left unknown (0): 1 of the 2 PQ sources gives none, and may be the brightest"), "\(said)")
        let stated = try Self.stated(output, inFrames: false)
        #expect(stated["Mastering display metadata"]?["max_luminance"] == "40000000/10000", "\(stated)")
        #expect(stated["Content light level metadata"] == nil, "\(stated)")
    }

    /// A PQ source that states nothing beside one that does: the display stated is the
    /// other's, a guess for it, and said; light levels of the same display but different
    /// brightness are combined exactly (the highest of each), and nothing is said.
    @Test func aSourceWithoutMetadataIsSaidAndLightLevelsAreTheHighest() throws {
        let plain = try Self.hdr10("pq-plain.mp4", display: nil, lightLevel: nil)
        let usual = try Self.hdr10("hdr10-1000.mp4", display: Self.display1000, lightLevel: "1000,400")
        let brighter = try Self.hdr10("hdr10-1000-cll2000.mp4", display: Self.display1000, lightLevel: "2000,600")
        let (_, guessed) = try export([usual, plain], to: "guessed.mp4", codec: "hevc,yuv420p10le")
        #expect(guessed.contains("encodingChanged\tnote\t1 of the 2 PQ sources gives no mastering display: the output states the others', mastered at 1000 cd/m², for them too"), "\(guessed)")
        #expect(guessed.contains("1 of the 2 PQ sources gives none, and may be the brightest"), "\(guessed)")
        let (output, said) = try export([usual, brighter], to: "levels.mp4", codec: "hevc,yuv420p10le")
        #expect(!said.contains("PQ sources"), "\(said)")
        let light = try Self.stated(output, inFrames: false)["Content light level metadata"]
        #expect(light?["max_content"] == "2000" && light?["max_average"] == "600", "\(String(describing: light))")
    }

    @Test func theAssetTellsItsHDR10Values() throws {
        let source = try Self.hdr10("hdr10-1000.mp4", display: Self.display1000, lightLevel: "1000,400")
        let script = """
            local c = av.asset(arg[1]).tracks[1].color
            print(c.hdr, c.masteringLuminance.max, c.masteringLuminance.min, c.maxCLL, c.maxFALL)
            """
        let result = try Moonreel.runScript(script, arguments: [source])
        #expect(result.status == 0 && result.out.contains("PQ\t1000.0\t0.0001\t1000\t400"), "\(result.out) \(result.err)")
        let probe = try Moonreel.run(["probe", source])
        #expect(probe.out.contains("HDR (PQ), mastered at 1000 cd/m², MaxCLL 1000, MaxFALL 400"), "\(probe.out)")
    }

    /// How many frames of `path` carry HDR10+ dynamic metadata, and how many it has, as
    /// ffprobe reads them.
    static func hdr10PlusFrames(_ path: String) throws -> (carrying: Int, of: Int) {
        let frames = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_frames", "-show_entries", "frame=key_frame:frame_side_data=side_data_type", "-of", "flat", path]).out
        let count = frames.split(separator: "\n").filter { $0.hasSuffix(".key_frame=0") || $0.hasSuffix(".key_frame=1") }.count
        return (frames.components(separatedBy: "SMPTE2094-40").count - 1, count)
    }

    /// x265's HDR10+ (an SEI per frame, real file #22): named by the asset and probe, kept by
    /// Passthrough frame for frame, and said where a re-encode that keeps PQ loses it (before,
    /// it was dropped without a word).
    @Test func hdr10PlusIsKeptByCopiesAndSaidWhereLost() throws {
        let source = Fixtures.real("22_x265_hdr10plus_tears_of_steel.mkv")
        #expect(try Self.hdr10PlusFrames(source) == (259, 259))
        let probe = try Moonreel.run(["probe", source])
        #expect(probe.out.contains("HDR (PQ), HDR10+, mastered at 1000 cd/m²"), "\(probe.out)")
        let script = """
            local asset = av.asset(arg[1])
            print(asset.tracks[1].color.hdr10Plus)
            local comp = av.composition()
            comp:addMutableTrack("video"):insertTimeRange(av.range(0, 5), asset.tracks[1], 0)
            local session = av.exportSession(comp, arg[3])
            session.outputURL, session.hdr = arg[2], arg[3] == "Passthrough" and "auto" or "keep"
            assert(session:export())
            for _, d in ipairs(session.diagnostics) do print(d.kind, d.level, d.message) end
            """
        let copied = Fixtures.scratchPath("hdr10plus-copy.mp4")
        let copy = try Moonreel.runScript(script, arguments: [source, copied, "Passthrough"])
        try #require(copy.status == 0, "\(copy.err)")
        #expect(copy.out.hasPrefix("true\n") && !copy.out.contains("HDR10+"), "\(copy.out)")
        let kept = try Self.hdr10PlusFrames(copied)
        #expect(kept.of >= 119 && kept.carrying == kept.of, "\(kept)")
        let encoded = Fixtures.scratchPath("hdr10plus-hevc.mp4")
        let reencode = try Moonreel.runScript(script, arguments: [source, encoded, "HEVCHighestQuality"])
        try #require(reencode.status == 0, "\(reencode.err)")
        #expect(reencode.out.contains("optionIgnored\twarning\tthe export does not keep the source's HDR10+ dynamic metadata (SMPTE ST 2094-40, a tone-mapping curve per scene): the output is HDR10"), "\(reencode.out)")
        #expect(try Self.hdr10PlusFrames(encoded).carrying == 0)
        #expect(try Self.stated(encoded, inFrames: false)["Mastering display metadata"] != nil, "the static metadata is kept")
    }
}
