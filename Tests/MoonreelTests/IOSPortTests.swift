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
        local comp = av.composition()
        local track = comp:addMutableTrack("video")
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
        local vc = av.videoComposition(comp)
        vc.animationTool = av.animationTool{ videoLayer = videoLayer, parentLayer = parentLayer }
        """ + Moonreel.exportThroughVideoComposition(output: 4)

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

    // MARK: Apple's names

    @Test func applesNamesWorkAsWritten() throws {
        let clip = try Fixtures.clip(seconds: 3, size: "320x240")
        let directory = (Fixtures.scratchPath("names") as NSString).deletingLastPathComponent
        let result = try Moonreel.runScript("""
            local asset = av.asset("file://" .. arg[1])
            local composition = av.composition()
            local videoTrack = composition:addMutableTrackWithMediaType("AVMediaTypeVideo", 0)
            local audioTrack = composition:addMutableTrackWithMediaType(".audio", 0)
            local sourceVideo = asset:tracksWithMediaType("vide")[1]
            local sourceAudio = asset:tracksWithMediaType("soun")[1]
            videoTrack:insertTimeRange(av.range{ start = av.kCMTimeZero, duration = asset.durationTime }, sourceVideo, av.zero)
            audioTrack:insertTimeRange(av.range{ start = 0, finish = asset.duration }, sourceAudio, av.zero)
            videoTrack:setPreferredTransform(sourceVideo.preferredTransform)
            assert(av.time(2.5, 600).value == 1500 and av.time(2.5, 600).timescale == 600, "CMTimeMakeWithSeconds")
            assert(av.time(1, 30).seconds == 1 / 30, "CMTimeMake")

            local instruction = av.videoCompositionInstruction{ timeRange = av.range(av.zero, composition.durationTime),
                                                                backgroundColor = "blackColor" }
            -- Layer instructions from the source's asset track, as AVFoundation code passes them.
            local layerInstruction = av.layerInstruction(sourceVideo)
            layerInstruction:setOpacityRampFromStartOpacity(1, 0.5, av.range(0, 1))
            layerInstruction:setTransformRampFromStartTransform(av.transform(), av.transform(), av.range(0, 1))
            instruction.layerInstructions = { layerInstruction }
            local videoComposition = av.videoComposition{ renderSize = { 320, 240 }, frameDuration = av.time(1, 30) }
            videoComposition.instructions = { instruction }

            local parent, video = av.layer{ frame = { 0, 0, 320, 240 } }, av.layer{ frame = { 0, 0, 320, 240 } }
            parent:addSublayer(video)
            local badge = av.layer{ frame = { 0, 0, 100, 60 }, backgroundColor = av.color("systemRed"):withAlphaComponent(1),
                                    contentsGravity = "kCAGravityResizeAspectFill" }
            parent:addSublayer(badge)
            local title = av.textLayer{ string = "x", alignmentMode = "kCAAlignmentCenter", foregroundColor = "whiteColor",
                                        frame = { 0, 100, 320, 40 }, truncationMode = "kCATruncationEnd" }
            parent:addSublayer(title)
            local fade = av.keyframeAnimation{ keyPath = "opacity" }
            fade.values = { 1, 0 }
            fade.keyTimes = { 0, 1 }
            fade.calculationMode = "kCAAnimationDiscrete"
            fade.timingFunctions = { "kCAMediaTimingFunctionEaseIn" }
            fade.beginTime = av.AVCoreAnimationBeginTimeAtZero
            fade.duration = 2
            fade.fillMode = "kCAFillModeForwards"
            fade.isRemovedOnCompletion = false
            title:add(fade, "fade")
            videoComposition.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }

            local volume = av.audioMixInputParameters(sourceAudio)
            volume:setVolumeRampFromStartVolume(1, 0, av.range(0, 3))
            local exporter = av.exportSession(composition, "AVAssetExportPresetHighestQuality")
            exporter.outputURL = "file://" .. arg[2] .. "/names%20out.mov"
            exporter.outputFileType = "AVFileTypeQuickTimeMovie"
            exporter.videoComposition = videoComposition
            exporter.audioMix = av.audioMix{ inputParameters = { volume } }
            local finished
            exporter:exportAsynchronously(function(session) finished = session.status end)
            assert(finished == "completed", "completion handler: " .. tostring(finished) .. " " .. tostring(exporter.error))
            local generator = av.imageGenerator(composition, { videoComposition = videoComposition })
            local image, actual = generator:copyCGImageAtTime(av.time(45, 30))
            assert(actual.seconds == 1.5 and image.size.width == 320)
            image:write(arg[2] .. "/frame.png")
            """, name: "names.lua", arguments: [clip, directory])
        try #require(result.status == 0, "\(result.err)")
        let output = directory + "/names out.mov"
        let probe = try Tool.ffprobe(output)
        #expect(probe.format.format_name.contains("mov") && probe.video?.width == 320)
        // The system red badge sits at the bottom-left (Core Animation geometry).
        let frame = try Tool.rgbFrame(output, at: 2.5)
        let badge = frame.mean(x: 10, y: 190, width: 80, height: 40)
        #expect(abs(badge.r - 255) < 12 && abs(badge.g - 59) < 12 && abs(badge.b - 48) < 12, "systemRed badge: \(badge)")
        // The opacity ramp from the asset track's layer instruction: half-dark video at 1.5 s.
        let still = try Tool.rgbFrame(directory + "/frame.png", at: 0)
        let exported = try Tool.rgbFrame(output, at: 1.5)
        #expect(still.meanDifference(exported) < 6, "copyCGImageAtTime shows the exported frame")
        let audio = try Tool.audioSamples(output)
        #expect(audio.level(from: 0, to: 4800) > 4 * audio.level(from: 120_000, to: 139_000), "the volume ramp from the asset track's parameters")
    }

    // MARK: Apple's defaults and leniency

    @Test func animationsFilledInLaterAndRemovedOnCompletionAsCoreAnimation() throws {
        let video = try Fixtures.solid("0x404040", seconds: 3, size: "320x240")
        let output = Fixtures.scratchPath("defaults.mp4")
        let result = try Moonreel.runScript(Moonreel.wholeAssetComposition() + """
            local vc = av.videoComposition(comp)
            local parent, video = av.layer{ frame = { 0, 0, 320, 240 } }, av.layer{ frame = { 0, 0, 320, 240 } }
            parent:addSublayer(video)
            local held = av.layer{ frame = { 0, 0, 160, 240 }, backgroundColor = "white", opacity = 0 }
            local dropped = av.layer{ frame = { 160, 0, 160, 240 }, backgroundColor = "white", opacity = 0 }
            parent:addSublayer(held); parent:addSublayer(dropped)
            for _, layer in ipairs({ held, dropped }) do
              local show = av.keyframeAnimation{ keyPath = "opacity" }
              show.duration = 1
              show.values = { 1, 1, 1 }
              show.keyTimes = { 0, 0.5, 1.5 }      -- a list longer than the animation
              show.fillMode = "forwards"
              show.isRemovedOnCompletion = layer ~= held
              layer:addAnimation(show, "show")
            end
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            """ + Moonreel.exportThroughVideoComposition() + """
            local empty = av.videoComposition{}
            local ok, err = pcall(function()
              local s = av.exportSession(comp, "HighestQuality"); s.outputURL = arg[2] .. ".2.mp4"; s.videoComposition = empty
              assert(s:export())
            end)
            print(err)
            local incomplete = av.keyframeAnimation{ keyPath = "opacity" }
            print(select(2, pcall(held.addAnimation, held, incomplete)))
            """, name: "defaults.lua", arguments: [video, output])
        try #require(result.status == 0, "\(result.err)")
        #expect(result.err.contains("moonreel: warning: defaults.lua:17: keyTimes of the opacity animation run to 1.5"), "\(result.err)")
        #expect(result.err.contains("fillMode \"forwards\" but is removed on completion"), "\(result.err)")
        #expect(result.out.contains("videoComposition.renderSize must be set"), "\(result.out)")
        #expect(result.out.contains("the opacity keyframe animation has no values yet"), "\(result.out)")
        let during = try Tool.rgbFrame(output, at: 0.5), after = try Tool.rgbFrame(output, at: 2)
        #expect(during.mean(x: 200, y: 100, width: 40, height: 40).g > 200, "shown while the animation runs")
        #expect(after.mean(x: 40, y: 100, width: 40, height: 40).g > 200, "isRemovedOnCompletion = false holds the last value")
        #expect(after.mean(x: 200, y: 100, width: 40, height: 40).g < 80, "removed on completion: back to opacity 0")
    }

    @Test func naturalSizeIsTheStoredSizeSoPortsThatSwapGetTheUprightOne() throws {
        let phone = Fixtures.real("01_iphone4s_portrait_h264_rot90.mov")
        let output = Fixtures.scratchPath("swapped.mp4")
        let result = try Moonreel.runScript(Moonreel.wholeAssetComposition() + """
            local assetTrack = asset:tracksWithMediaType("video")[1]
            -- The classic port: naturalSize, swapped when the transform is a quarter turn.
            local size = comp.naturalSize
            local t = assetTrack.preferredTransform
            if t.a == 0 and t.d == 0 and (t.b == 1 or t.b == -1) and (t.c == 1 or t.c == -1) then
              size = { width = size.height, height = size.width }
            end
            print(comp.naturalSize.width, comp.naturalSize.height, size.width, size.height)
            local vc = av.videoComposition{ renderSize = size, frameDuration = av.time(1, 30) }
            local instruction = av.videoCompositionInstruction{ timeRange = av.range(0, comp.duration) }
            local li = av.layerInstruction(comp:tracksWithMediaType("video")[1])
            li:setTransform(t, 0)
            instruction.layerInstructions = { li }
            vc.instructions = { instruction }
            """ + Moonreel.exportThroughVideoComposition() + """
            """, name: "swap.lua", arguments: [phone, output])
        try #require(result.status == 0, "\(result.err)")
        #expect(result.out.hasPrefix("568.0\t320.0\t320.0\t568.0"), "\(result.out)")
        let video = try #require(try Tool.ffprobe(output).video)
        #expect(video.width == 320 && video.height == 568)
    }

    // MARK: The AAC priming packet

    @Test func passthroughKeepsTheAACPrimingPacket() throws {
        let generated = try Fixtures.clip(seconds: 2, tone: 1000)
        for source in [generated] + ["02_iphone14pro_portrait_hevc10_hlg_dovi.MOV", "03_iphone_trimmed_hevc10_editlist_vfr.mp4"].map(Fixtures.real) {
            let output = Fixtures.scratchPath("copy.mov")
            let result = try Moonreel.runScript("""
                local asset = av.asset(arg[1])
                local composition = av.composition()
                composition:insertTimeRange(av.range(0, asset.duration), asset, 0)
                local session = av.exportSession(composition, "Passthrough")
                session.outputURL = arg[2]
                assert(session:export())
                """, name: "copy.lua", arguments: [source, output])
            try #require(result.status == 0, "\(result.err)")
            // The first 50 ms decode to the same samples as the source's.
            let original = try Tool.audioSamples(source).prefix(2400), copied = try Tool.audioSamples(output).prefix(2400)
            let difference = zip(original, copied).map { abs($0 - $1) }.max() ?? 1
            #expect(original.count == 2400 && copied.count == 2400 && difference < 1e-4, "\(source): first 50 ms differ by up to \(difference)")
        }
    }
}
