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
        """ + Moonreel.exportThroughVideoComposition()

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

    // MARK: Photos

    /// testsrc2 as a JPEG, and the same JPEG with an EXIF orientation of 6 (shown turned a
    /// quarter turn clockwise), the way phone cameras store portrait photos.
    static func photos() throws -> (plain: String, turned: String) {
        let plain = Fixtures.scratchPath("plain.jpg")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x160:rate=1", "-frames:v", "1", "-q:v", "2", plain])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plain)))
        // APP1 "Exif": a little-endian TIFF header and IFD0 with one entry, 0x0112 = 6.
        let tiff: [UInt8] = [0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]
        let payload: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        bytes.insert(contentsOf: [0xFF, 0xE1, 0, UInt8(payload.count + 2)] + payload, at: 2)
        let turned = (plain as NSString).deletingLastPathComponent + "/turned.jpg"
        try Data(bytes).write(to: URL(fileURLWithPath: turned))
        return (plain, turned)
    }

    /// ffmpeg's own picture of the photo turned clockwise (an oracle we did not write).
    static func turnedReference(_ plain: String) throws -> Image {
        let png = Fixtures.scratchPath("reference.png")
        try Tool.ffmpeg(["-i", plain, "-vf", "transpose=1", png])
        return try Tool.rgbFrame(png, at: 0)
    }

    @Test func aPhotoIsAClipOfAnyDurationShownUpright() throws {
        let (plain, turned) = try Self.photos()
        let output = Fixtures.scratchPath("photo.mp4")
        let result = try Moonreel.runScript("""
            local photo = av.asset(arg[1])
            local track = photo:tracksWithMediaType("video")[1]
            print(photo.duration, track.naturalSize.width, track.naturalSize.height)
            local comp = av.composition()
            comp:addMutableTrack("video"):insertTimeRange(av.range(0, 12), track, 0)
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL = arg[2]
            local ok, err = session:export()
            if not ok then error(err, 0) end
            """, name: "photo.lua", arguments: [turned, output])
        try #require(result.status == 0, "\(result.err)")
        #expect(result.out.hasPrefix("5.0\t320.0\t160.0"), "a photo lasts 5 s when inserted whole: \(result.out)")
        let video = try #require(try Tool.ffprobe(output).video)
        #expect(video.width == 160 && video.height == 320, "upright size \(video.width ?? 0)×\(video.height ?? 0)")
        #expect(video.frameCount == 360 && abs((video.durationSeconds ?? 0) - 12) < 0.001)
        let reference = try Self.turnedReference(plain)
        for time in [0.0, 6.0, 11.9] {
            let difference = try Tool.rgbFrame(output, at: time).meanDifference(reference)
            #expect(difference < 6, "frame at \(time) s differs from the upright photo by \(difference)")
        }
    }

    @Test func layerContentsFromAPhotoAreUpright() throws {
        let (plain, turned) = try Self.photos()
        let output = Fixtures.scratchPath("logo.png")
        let result = try Moonreel.runScript("""
            local logo = av.image(arg[1])
            print(logo.size.width, logo.size.height)
            local comp = av.composition()
            comp:addMutableTrack("video"):insertEmptyTimeRange(av.range(0, 1))
            local vc = av.videoComposition{ renderSize = {160, 320}, frameDuration = av.time(1, 30) }
            vc.instructions = { av.videoCompositionInstruction{ timeRange = av.range(0, 1) } }
            local parent, video = av.layer{ frame = {0, 0, 160, 320} }, av.layer{ frame = {0, 0, 160, 320} }
            parent:addSublayer(video)
            parent:addSublayer(av.layer{ contents = logo, frame = {0, 0, 160, 320} })
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            av.imageGenerator(comp, { videoComposition = vc }):copyImage(0.5, arg[2])
            """, name: "logo.lua", arguments: [turned, output])
        try #require(result.status == 0, "\(result.err)")
        #expect(result.out.hasPrefix("160.0\t320.0"), "av.image reports the upright size: \(result.out)")
        let difference = try Tool.rgbFrame(output, at: 0).meanDifference(try Self.turnedReference(plain))
        #expect(difference < 6, "the layer shows the photo upright (difference \(difference))")
    }
}
