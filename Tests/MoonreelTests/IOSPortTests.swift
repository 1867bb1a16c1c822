import Foundation
import Testing
import TestSupport

/// iOS code ported line by line puts layers where iOS puts them: the animation tool's tree
/// has Core Animation's geometry (origin bottom-left, y up) unless a layer sets
/// `isGeometryFlipped`, and Apple's names and defaults work.
@Suite struct IOSPortTests {
    /// The watermark idiom (a logo 25 px above the bottom, a title at two thirds of the
    /// height) over a 640×360 grey clip; `arg[3]` "flipped" sets the parent's
    /// isGeometryFlipped, as UIKit-minded code does.
    static let watermarkPort = """
        local asset = av.asset(arg[1])
        local composition = av.composition()
        local track = composition:addMutableTrack("video")
        local assetTrack = asset:tracksWithMediaType("video")[1]
        track:insertTimeRange(av.range(0, asset.duration), assetTrack, 0)
        local videoSize = assetTrack.naturalSize
        -- let parentLayer = CALayer(); parentLayer.frame = CGRect(origin: .zero, size: videoSize)
        local parentLayer = av.layer{ frame = { 0, 0, videoSize.width, videoSize.height } }
        parentLayer.isGeometryFlipped = arg[3] == "flipped"
        local videoLayer = av.layer{ frame = { 0, 0, videoSize.width, videoSize.height } }
        parentLayer:addSublayer(videoLayer)
        -- imageLayer.frame = CGRect(x: 5, y: 25, width: 57, height: 57)
        local imageLayer = av.layer{ contents = av.image(arg[2]), frame = { 5, 25, 57, 57 } }
        parentLayer:addSublayer(imageLayer)
        -- titleLayer.frame = CGRect(x: 0, y: videoSize.height * 0.66, width: videoSize.width, height: 60)
        local titleLayer = av.textLayer{ string = "TITLE", fontSize = 40, alignmentMode = "center",
                                         foregroundColor = "white", frame = { 0, videoSize.height * 0.66, videoSize.width, 60 } }
        parentLayer:addSublayer(titleLayer)
        local videoComposition = av.videoComposition(composition)
        videoComposition.animationTool = av.animationTool{ videoLayer = videoLayer, parentLayer = parentLayer }
        local exporter = av.exportSession(composition, "HighestQuality")
        exporter.outputURL = arg[4]
        exporter.videoComposition = videoComposition
        local ok, err = exporter:export()
        if not ok then error(err, 0) end
        """

    /// Rows that hold red logo pixels, and the mean row of white text ink.
    static func measure(_ path: String) throws -> (logoRows: ClosedRange<Int>?, textRow: Double) {
        let frame = try Tool.rgbFrame(path, at: 0.5)
        var logoRows: [Int] = [], textSum = 0.0, textCount = 0.0
        for y in 0..<frame.height {
            if (5..<62).contains(where: { x in let p = frame.pixel(x, y); return p.r > 200 && p.g < 60 && p.b < 60 }) { logoRows.append(y) }
            for x in 100..<540 where frame.pixel(x, y).g > 200 && frame.pixel(x, y).r > 200 { textSum += Double(y); textCount += 1 }
        }
        return (logoRows.first.flatMap { first in logoRows.last.map { first...$0 } }, textCount > 0 ? textSum / textCount : -1)
    }

    @Test func layerGeometryIsCoreAnimationsUnlessFlipped() throws {
        let video = try Fixtures.solid("0x404040", seconds: 1, size: "640x360")
        let logo = Fixtures.scratchPath("logo.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=57x57", "-frames:v", "1", logo])
        let bottomUp = Fixtures.scratchPath("ios.mp4"), topDown = Fixtures.scratchPath("uikit.mp4")
        for (mode, output) in [("default", bottomUp), ("flipped", topDown)] {
            let result = try Moonreel.runScript(Self.watermarkPort, name: "port.lua", arguments: [video, logo, mode, output])
            try #require(result.status == 0, "\(mode): \(result.err)")
        }
        // Core Animation: the logo's bottom edge 25 px above the picture's bottom (rows
        // 278…334), the title's box 0.66 of the height up from the bottom (top at 62).
        let ios = try Self.measure(bottomUp)
        #expect(ios.logoRows.map { abs($0.lowerBound - 278) <= 1 && abs($0.upperBound - 334) <= 1 } == true, "logo rows \(String(describing: ios.logoRows))")
        #expect(ios.textRow > 62 && ios.textRow < 122, "title ink around row \(ios.textRow)")
        // isGeometryFlipped: 25 px below the top (rows 25…81), the title from row 237.6.
        let flipped = try Self.measure(topDown)
        #expect(flipped.logoRows.map { abs($0.lowerBound - 25) <= 1 && abs($0.upperBound - 81) <= 1 } == true, "logo rows \(String(describing: flipped.logoRows))")
        #expect(flipped.textRow > 238 && flipped.textRow < 298, "title ink around row \(flipped.textRow)")
    }
}
