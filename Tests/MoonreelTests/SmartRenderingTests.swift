import Foundation
import Testing
import TestSupport

/// Smart rendering (issue 25 §3): a re-encoding export whose layers leave whole GOPs of an
/// H.264 or HEVC source untouched copies those GOPs bit for bit and composes and encodes
/// only the rest. Checked against the source with ffprobe (packet hashes) and against the
/// full re-encode with ffmpeg (pixels where the layers draw).
@Suite struct SmartRenderingTests {
    /// Lyrics over a clip: `arg[1]` video, `arg[2]` lyric file, `arg[3]` output, `arg[4]`
    /// preset; `arg[5]` "on"/"off" sets `smartRendering`, `arg[6]` a frame rate for the
    /// video composition.
    static let lyricsScript = """
        local asset = av.asset(arg[1])
        local comp = av.composition()
        comp:insertTimeRange(av.range(0, asset.durationTime), asset, 0)
        local vc = av.videoComposition(comp)
        if arg[6] then vc.frameDuration = av.time(1, tonumber(arg[6])) end
        local size = vc.renderSize
        local full = { 0, 0, size.width, size.height }
        local parent, video = av.layer{ frame = full }, av.layer{ frame = full }
        parent:addSublayer(video)
        parent:addSublayer((require "effects.lyrics"){ cues = av.readCues(arg[2]), renderSize = { size.width, size.height },
                                                       fadeIn = 0.15, fadeOut = 0.15, karaokeColor = "#FFD400" })
        vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
        local session = av.exportSession(comp, arg[4])
        session.outputURL = arg[3]
        session.videoComposition = vc
        if arg[5] then session.smartRendering = arg[5] == "on" end
        assert(session:export())
        """

    /// 10 s at 30 fps, 1 s closed GOPs with B-frames (x264 medium), 640×360.
    static func source() throws -> String {
        try Fixtures.clip(seconds: 10, size: "640x360", extra: ["-preset", "medium", "-g", "30", "-keyint_min", "30", "-sc_threshold", "0"])
    }

    static func lyrics(_ lines: [(Double, Double)], name: String) throws -> String {
        let path = Fixtures.scratchPath(name)
        let rows = lines.enumerated().map { "\($0.offset + 1),\"Twinkle little star\",\($0.element.0),\($0.element.1)" }
        try (["id,lyric,start_at,end_at"] + rows).joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func export(_ arguments: [String]) throws -> Moonreel.Result {
        try Moonreel.runScript(lyricsScript, name: "smart-lyrics.lua", arguments: arguments)
    }

    @Test func copiesTheGOPsTheLayersLeaveAloneAndDrawsTheRest() throws {
        let source = try SmartRenderingTests.source()
        let cues = try SmartRenderingTests.lyrics([(4.2, 5.8)], name: "smart-4-6.csv")
        let smart = Fixtures.scratchPath("smart-rendered.mp4"), full = Fixtures.scratchPath("fully-rendered.mp4")
        let result = try SmartRenderingTests.export([source, cues, smart, "HighestQuality", "on"])
        #expect(result.status == 0, "\(result.err)")
        // The line shows from 4.05 to 5.95 s (fades included): the GOPs 4–5 and 5–6 s are drawn on.
        #expect(result.err.contains("smartRendering copies 240 frames (8 GOPs) and re-encodes 60"), "\(result.err)")
        let plain = try SmartRenderingTests.export([source, cues, full, "HighestQuality"])
        #expect(plain.status == 0 && !plain.err.contains("smartRendering"), "\(plain.err)")

        // Every frame, on the source's grid, decoding without a complaint.
        let probe = try Tool.ffprobe(smart)
        #expect(probe.video?.codec_name == "h264" && probe.video?.frameCount == 300)
        let pts = try Tool.framePTS(smart)
        #expect(pts.count == 300 && pts.enumerated().allSatisfy { abs($0.element - Double($0.offset) / 30) < 1e-3 })
        let decode = try Tool.run("ffmpeg", ["-v", "error", "-i", smart, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.err.isEmpty, "\(decode.err)")

        // Outside 4–6 s the packets are the source's own, bit for bit; inside, none is.
        let untouched = { (time: Double) in time < 4 - 1e-6 || time >= 6 - 1e-6 }
        let sourcePackets = try Tool.packets(source), written = try Tool.packets(smart)
        #expect(written.filter { untouched($0.time) }.map(\.hash) == sourcePackets.filter { untouched($0.time) }.map(\.hash))
        let sourceHashes = Set(sourcePackets.map(\.hash))
        #expect(written.filter { !untouched($0.time) }.allSatisfy { !sourceHashes.contains($0.hash) })

        // Where the lyric shows (the lower third), the picture is the full render's (both
        // lossy encodes of it), and not the source's: the text is there.
        for time in [4.5, 5.5] {
            let drawn = try Tool.rgbFrame(smart, at: time).rows(240..<360), reference = try Tool.rgbFrame(full, at: time).rows(240..<360)
            let bare = try Tool.rgbFrame(source, at: time).rows(240..<360)
            #expect(drawn.meanDifference(reference) < 1.5 && bare.meanDifference(reference) > 3 * drawn.meanDifference(reference),
                    "at \(time) s: \(drawn.meanDifference(reference)) from the full render, \(bare.meanDifference(reference)) source vs render")
        }
        // The sound is the full render's length.
        let audio = try #require(probe.audio?.durationSeconds)
        #expect(abs(audio - 10) < 0.03, "audio \(audio) s")
    }

    /// On by default for SmartCut with a video composition; `smartRendering = false` keeps
    /// the old full re-encode, and a composition that draws everywhere says so.
    @Test func smartCutWithLayersCopiesByDefaultAndSaysWhenItCannot() throws {
        let source = try SmartRenderingTests.source()
        let cues = try SmartRenderingTests.lyrics([(4.2, 5.8)], name: "smartcut-4-6.csv")
        let byDefault = try SmartRenderingTests.export([source, cues, Fixtures.scratchPath("smartcut-layers.mp4"), "SmartCut"])
        #expect(byDefault.status == 0 && byDefault.err.contains("SmartCut copies 240 frames (8 GOPs) and re-encodes 60"), "\(byDefault.err)")

        // A dry run says the same before anything is written.
        let dryOutput = Fixtures.scratchPath("smartcut-dry.mp4")
        let dry = try Moonreel.runScript(SmartRenderingTests.lyricsScript, name: "smart-lyrics.lua", arguments: [source, cues, dryOutput, "SmartCut"],
                                         options: ["--dry-run"])
        #expect(dry.status == 0 && dry.err.contains("SmartCut copies 240 frames (8 GOPs) and re-encodes 60"), "\(dry.err)")
        #expect(!FileManager.default.fileExists(atPath: dryOutput))

        let off = try SmartRenderingTests.export([source, cues, Fixtures.scratchPath("smartcut-off.mp4"), "SmartCut", "off"])
        #expect(off.status == 0 && off.err.contains("a video composition redraws every frame (smartRendering is off)"), "\(off.err)")

        let everywhere = try SmartRenderingTests.lyrics((0..<5).map { (Double($0) * 2, Double($0) * 2 + 2) }, name: "smart-everywhere.csv")
        let everywhereOutput = Fixtures.scratchPath("smart-everywhere.mp4")
        let drawn = try SmartRenderingTests.export([source, everywhere, everywhereOutput, "HighestQuality", "on"])
        #expect(drawn.status == 0 && drawn.err.contains("smartRendering encodes every frame: the video composition draws on every GOP"), "\(drawn.err)")
        #expect(try Tool.ffprobe(everywhereOutput).video?.frameCount == 300)

        // Another frame rate than the source's, or another codec: every frame encoded, with the reason.
        let rate = try SmartRenderingTests.export([source, cues, Fixtures.scratchPath("smart-25.mp4"), "HighestQuality", "on", "25"])
        #expect(rate.status == 0 && rate.err.contains("frameDuration (0.04 s) is not the source's frame rate (30.0 fps)"), "\(rate.err)")
        let hevc = try SmartRenderingTests.export([source, cues, Fixtures.scratchPath("smart-hevc.mp4"), "HEVCHighestQuality", "on"])
        #expect(hevc.status == 0 && hevc.err.contains("the source is h264, but HEVCHighestQuality writes hevc"), "\(hevc.err)")
    }

    /// A real iPhone clip stored turned (rotation tag −90): the copied GOP keeps the tag, so
    /// the frames drawn on are encoded turned back to the stored orientation; a player shows
    /// all of them upright.
    @Test func aTurnedIPhoneClipKeepsItsRotationAndIsUprightEverywhere() throws {
        let iphone = Fixtures.real("01_iphone4s_portrait_h264_rot90.mov")
        let cues = try SmartRenderingTests.lyrics([(0.2, 0.5)], name: "smart-iphone.csv")
        let smart = Fixtures.scratchPath("smart-iphone.mp4"), full = Fixtures.scratchPath("full-iphone.mp4")
        let result = try SmartRenderingTests.export([iphone, cues, smart, "SmartCut"])
        #expect(result.status == 0 && result.err.contains("SmartCut copies 36 frames (2 GOPs) and re-encodes 30"), "\(result.err)")
        let plain = try SmartRenderingTests.export([iphone, cues, full, "HighestQuality"])
        #expect(plain.status == 0, "\(plain.err)")

        let stored = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height:stream_side_data=rotation",
                                              "-of", "csv=p=0", smart])
        #expect(stored.out.contains("568,320") && stored.out.contains("-90"), "\(stored.out)")
        let copied = try Tool.packets(iphone).filter { $0.time >= 1 }.map(\.hash)
        #expect(try Tool.packets(smart).filter { $0.time >= 1 - 0.01 }.map(\.hash) == copied)
        // Upright (ffmpeg applies the tag; the full render is stored upright) and alike where
        // the line shows and where it does not: a sideways picture would differ everywhere.
        for time in [0.35, 1.5] {
            let drawn = try Tool.rgbFrame(smart, at: time), reference = try Tool.rgbFrame(full, at: time)
            #expect(drawn.pixels.count == 320 * 568 * 3 && drawn.meanDifference(reference) < 2,
                    "at \(time) s: \(drawn.meanDifference(reference)) from the full render")
        }
    }
}
