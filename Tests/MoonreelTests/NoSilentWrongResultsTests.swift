import Foundation
import Testing
import TestSupport

/// Jobs that used to "succeed" with a result the user did not ask for: each now does what
/// was asked, or fails saying why.
@Suite struct NoSilentWrongResultsTests {
    /// Layers over a background colour with no video media: over a song (seed 001's
    /// background-image case) or, with "-", over an empty video track (a title card).
    static let layersOverNothing = """
        local comp = av.composition()
        if arg[1] ~= "-" then
          local song = av.asset(arg[1])
          comp:insertTimeRange(av.range(0, song.duration), song, 0)
        else
          comp:addMutableTrack("video"):insertEmptyTimeRange(av.range(0, 2))
        end
        local vc = av.videoComposition{ renderSize = {640, 360}, frameDuration = av.time(1, 25) }
        vc.instructions = { av.videoCompositionInstruction{ timeRange = av.range(0, comp.duration), backgroundColor = "#204080" } }
        local parent = av.layer{ frame = {0, 0, 640, 360} }
        local video = av.layer{ frame = {0, 0, 640, 360} }
        parent:addSublayer(video)
        parent:addSublayer(av.textLayer{ string = "LYRICS", fontSize = 60, frame = {0, 130, 640, 100},
                                         alignmentMode = "center", foregroundColor = "white" })
        vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
        local session = av.exportSession(comp, "HighestQuality")
        session.outputURL = arg[2]
        session.videoComposition = vc
        local ok, err = session:export()
        if not ok then error(err, 0) end
        """

    /// Background colour in the corners, white text ink in the middle band.
    static func expectCard(_ output: String, at time: Double) throws {
        let frame = try Tool.rgbFrame(output, at: time)
        let corner = frame.mean(x: 0, y: 0, width: 100, height: 60)
        #expect(abs(corner.r - 0x20) < 8 && abs(corner.g - 0x40) < 8 && abs(corner.b - 0x80) < 8, "background \(corner)")
        var ink = 0
        for y in 140..<220 { for x in 200..<440 where frame.pixel(x, y).r > 200 && frame.pixel(x, y).b > 200 { ink += 1 } }
        #expect(ink > 1500, "white text in the middle: \(ink) pixels")
    }

    @Test func layersOverASongMakeAVideo() throws {
        let song = Fixtures.scratchPath("song.m4a")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=330:duration=3", "-c:a", "aac", song])
        let output = Fixtures.scratchPath("card.mp4")
        let result = try Moonreel.runScript(Self.layersOverNothing, arguments: [song, output])
        try #require(result.status == 0, "\(result.err)")
        let probe = try Tool.ffprobe(output)
        let video = try #require(probe.video, "the export has no video stream")
        #expect(video.width == 640 && video.height == 360 && video.frameRate == 25)
        #expect(abs((video.durationSeconds ?? 0) - 3) < 0.04 && abs((probe.audio?.durationSeconds ?? 0) - 3) < 0.04)
        try Self.expectCard(output, at: 1)
    }

    @Test func titleCardOverEmptyTime() throws {
        let output = Fixtures.scratchPath("title.mp4")
        let result = try Moonreel.runScript(Self.layersOverNothing, arguments: ["-", output])
        try #require(result.status == 0, "\(result.err)")
        let probe = try Tool.ffprobe(output)
        let video = try #require(probe.video)
        #expect(video.frameCount == 50 && probe.audio == nil)
        try Self.expectCard(output, at: 1.5)
    }
}
