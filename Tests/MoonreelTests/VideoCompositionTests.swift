import Foundation
import Testing
import TestSupport

/// Issue 3's video half, end to end: Lua scripts build video compositions, Moonreel exports
/// them, and the ffmpeg CLI decodes the result so every expectation is read from pixels.
/// Solid-colour clips make the expected colours exact; testsrc2 clips make frames tell
/// apart.
@Suite struct VideoCompositionTests {
    // MARK: Background, opacity, crop

    /// Issue 25: the reference's Transform example said `scaled(0.5):translated(960, 0)` puts
    /// a picture in the right half; each step applies before those already there, so it is
    /// `translated(960, 0):scaled(0.5)`. The example as the reference gives it.
    /// Issue 25: a variable-rate Android clip averaging 10.5 fps was exported at 23.976 fps
    /// (each picture repeated); the export takes the sources' real average.
    @Test func aVariableRateClipIsExportedAtItsAverageRate() throws {
        let output = Fixtures.scratchPath("android.mp4")
        let result = try Moonreel.runScript(Moonreel.exportWholeAssetScript, arguments: [Fixtures.real("06_android_rot180_vfr_10fps.mp4"), output, "HighestQuality"])
        #expect(result.status == 0, "\(result.err)")
        let video = try #require(try Tool.ffprobe(output).streams.first { $0.codec_type == "video" })
        #expect(video.r_frame_rate == "21/2", "10.5 fps, got \(video.r_frame_rate ?? "?")")
        #expect(video.frameCount == 25, "the clip's 25 pictures, not 57")
    }

    @Test func theReferencesTransformExamplePutsThePictureInTheRightHalf() throws {
        let red = try Fixtures.solid("red", seconds: 1, size: "1920x1080", tone: nil)
        let output = Fixtures.scratchPath("right.mp4")
        let example = try #require(try Moonreel.run(["docs"]).out.split(separator: "\n").first { $0.contains("local t = av.transform()") })
        let result = try Moonreel.runScript(String(example) + """

            local a = av.asset(arg[1]); local comp = av.composition(); comp:insertTimeRange(av.range(0, 1), a, 0)
            local vc = av.videoComposition(comp)
            vc.instructions[1].layerInstructions[1]:setTransform(t, 0)
            local s = av.exportSession(comp, "HighestQuality"); s.outputURL = arg[2]; s.videoComposition = vc
            assert(s:export())
            """, arguments: [red, output])
        #expect(result.status == 0, "\(result.err)")
        let frame = try Tool.rgbFrame(output, at: 0.5)
        #expect(frame.mean(x: 980, y: 20, width: 920, height: 500).r > 200, "the right half's top is the picture")
        #expect(frame.mean(x: 0, y: 20, width: 940, height: 500).r < 30, "the left half is empty")
    }

    @Test func backgroundExampleShowsTheClipInItsCornerOverRed() throws {
        let output = Fixtures.scratchPath("pip.mp4")
        let result = try Moonreel.run(["run", Moonreel.example("background.lua"), try Fixtures.solid("blue"), output])
        #expect(result.status == 0, "\(result.err)")
        #expect(try Tool.ffprobe(output).video?.frameCount == 60)
        // Half size in the bottom-right corner, 12 px (1/20 of the height) from the edges:
        // x 148…308, y 108…228.
        let frame = try Tool.rgbFrame(output, at: 1)
        expectColor(frame.mean(x: 152, y: 112, width: 152, height: 112), Solid.blue)
        for (x, y, width, height) in [(0, 0, 320, 104), (0, 0, 144, 240), (312, 0, 8, 240), (0, 232, 320, 8)] {
            expectColor(frame.mean(x: x, y: y, width: width, height: height), Solid.red, "background at \(x),\(y)")
        }
    }

    @Test func opacityRampBlendsOverTheBackgroundLinearly() throws {
        // White fades out over black from 0.5 s to 1.5 s; samples fall on frame times (k/30 s).
        let output = try exportComposed([try Fixtures.solid("white")], """
            local li = av.layerInstruction(tracks[1])
            li:setOpacityRamp(1, 0, av.range(0.5, 1))
            vc.instructions = { av.videoCompositionInstruction{ timeRange = av.range(0, 2), backgroundColor = "black",
                                                                layerInstructions = { li } } }
            """)
        for (time, opacity) in [(0.2, 1.0), (0.8, 0.7), (1.0, 0.5), (1.2, 0.3), (1.7, 0.0)] {
            let level = try Tool.rgbFrame(output, at: time).mean(x: 0, y: 0, width: 320, height: 240)
            expectColor(level, (255 * opacity, 255 * opacity, 255 * opacity), "opacity \(opacity) at \(time) s")
        }
    }

    @Test func cropShowsOnlyTheCroppedRegion() throws {
        let output = try croppedQuadrants()
        try expectColors(output, at: 0.5, [((164, 4, 152, 112), Solid.lime, "cropped quadrant in place"),
                                           ((0, 0, 156, 240), Solid.black, "left half outside the crop"),
                                           ((160, 124, 160, 116), Solid.black, "bottom right outside the crop")])
        try expectColors(output, at: 1.5, [((4, 0, 316, 240), Solid.lime, "the cropped quadrant fills the frame")])
        // Halfway through the ramp the crop is 240 px wide.
        try expectColors(output, at: 2.5, [((164, 4, 72, 112), Solid.lime, "inside the widening crop"),
                                           ((164, 124, 72, 112), Solid.white, "inside the widening crop"),
                                           ((244, 0, 76, 240), Solid.black, "outside the widening crop")])
    }

    @Test func scaledCropEdgesDoNotPickUpNeighbouringPixels() throws {
        let filling = try Tool.rgbFrame(try croppedQuadrants(), at: 1.5)
        expectColor(filling.mean(x: 0, y: 0, width: 2, height: 240), Solid.lime, "left edge of the scaled crop, next to red in the source")
    }

    /// A crop set at 1 s held from 0 s (the timeline started at its first value), and a crop
    /// reaching past the picture drew the picture's edge pixels out over the rest. Before its
    /// first time a crop keeps the whole picture (AVFoundation's CGRectInfinite), and a crop
    /// is cut to the picture (as AVFoundation cuts it to the clean aperture): past the edge,
    /// the background.
    @Test func aCropHoldsTheWholePictureUntilItsTimeAndStopsAtThePicturesEdge() throws {
        let output = try exportComposed([try quadrantClip()], """
            local late, past = av.layerInstruction(tracks[1]), av.layerInstruction(tracks[1])
            late:setCropRectangle({160, 0, 160, 120}, 1)
            past:setTransform(av.transform{1, 0, 0, 1, -160, 0}, 0)
            past:setCropRectangle({160, 0, 320, 240}, 0)
            vc.instructions = { av.videoCompositionInstruction{ timeRange = av.range(0, 2), backgroundColor = "black", layerInstructions = { late } },
                                av.videoCompositionInstruction{ timeRange = av.range(2, 1), backgroundColor = "black", layerInstructions = { past } } }
            """)
        try expectColors(output, at: 0.5, [((164, 124, 152, 112), Solid.white, "the whole picture before the crop's time")])
        try expectColors(output, at: 1.5, [((164, 124, 152, 112), Solid.black, "cropped from its time")])
        try expectColors(output, at: 2.5, [((4, 4, 152, 112), Solid.lime, "the crop's part inside the picture"),
                                           ((164, 0, 156, 240), Solid.black, "past the picture's edge: the background")])
    }

    /// `fit = "fill"` over one track holding a landscape clip and a portrait one: the
    /// portrait clip's crop was kept for the landscape clip (set only where a crop was
    /// needed, and held from 0 s), so a clip that fits the frame lost its top and right
    /// in black. Each clip is cropped by its own shape now, whichever comes first.
    @Test(arguments: [false, true]) func fillCropsEachClipOfATrackByItsOwnShape(portraitFirst: Bool) throws {
        let landscape = try quadrantClip()
        let portrait = try Fixtures.solid("blue", seconds: 2, size: "240x320", tone: nil)
        let clips = portraitFirst ? [portrait, landscape] : [landscape, portrait]
        let output = Fixtures.scratchPath("fill-both.mp4")
        let result = try Moonreel.runScript("""
            local comp = av.composition()
            local track = comp:addMutableTrack("video")
            for i = 2, 3 do
              local source = av.asset(arg[i]):tracksWithMediaType("video")[1]
              track:insertTimeRange(source.timeRange, source, comp.duration)
            end
            local vc = av.videoComposition(comp, { renderSize = {320, 240}, fit = "fill" })
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL, session.videoComposition = arg[1], vc
            assert(session:export())
            """, name: "fill.lua", arguments: [output] + clips)
        #expect(result.status == 0, "\(result.err)")
        try expectColors(output, at: portraitFirst ? 3 : 1, [((164, 4, 152, 112), Solid.lime, "the landscape clip's top right"),
                                                             ((164, 124, 152, 112), Solid.white, "the landscape clip's bottom right")])
    }

    /// Quadrants red | lime over blue | white; the top-right (lime) one is cropped out: in
    /// place (0–1 s), scaled ×2 to fill the frame (1–2 s), then the crop widens from the
    /// left half to the whole frame (2–3 s).
    func croppedQuadrants() throws -> String {
        try exportComposed([try quadrantClip()], """
            local inPlace, filling, ramped = av.layerInstruction(tracks[1]), av.layerInstruction(tracks[1]), av.layerInstruction(tracks[1])
            local topRight = {160, 0, 160, 120}
            inPlace:setCropRectangle(topRight, 0)
            filling:setCropRectangle(topRight, 0)
            filling:setTransform(av.transform{2, 0, 0, 2, -320, 0}, 0)
            ramped:setCropRectangleRamp({0, 0, 160, 240}, {0, 0, 320, 240}, av.range(2, 1))
            local function over(start, li)
              return av.videoCompositionInstruction{ timeRange = av.range(start, 1), backgroundColor = "black", layerInstructions = { li } }
            end
            vc.instructions = { over(0, inPlace), over(1, filling), over(2, ramped) }
            """)
    }

    @Test func concatFadeExampleDissolvesRedIntoAFittedPortraitBlue() throws {
        // The portrait blue clip (240×320) is fitted into the red clip's 320×240 frame:
        // 180×240 at x 70…250, black bars beside it.
        let output = Fixtures.scratchPath("dissolve.mp4")
        let result = try Moonreel.run(["run", Moonreel.example("concat_fade.lua"), output,
                                       try Fixtures.solid("red"), try Fixtures.solid("blue", size: "240x320")])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.errorLines.isEmpty, "fitting needs no note: \(result.err)")
        // 2 + 2 − 1 s; the dissolve runs over 1…2 s.
        let video = try #require(try Tool.ffprobe(output).video)
        #expect(video.frameCount == 90 && video.width == 320 && video.height == 240)
        func centre(_ frame: Image) -> (r: Double, g: Double, b: Double) { frame.mean(x: 74, y: 0, width: 172, height: 240) }
        func bar(_ frame: Image) -> (r: Double, g: Double, b: Double) { frame.mean(x: 0, y: 0, width: 66, height: 240) }
        let first = try Tool.rgbFrame(output, at: 0.5), second = try Tool.rgbFrame(output, at: 2.5)
        expectColor(centre(first), Solid.red)
        expectColor(bar(first), Solid.red)
        expectColor(centre(second), Solid.blue)
        expectColor(bar(second), Solid.black)
        func mix(_ a: (r: Double, g: Double, b: Double), _ b: (r: Double, g: Double, b: Double), _ share: Double) -> (Double, Double, Double) {
            (a.r * share + b.r * (1 - share), a.g * share + b.g * (1 - share), a.b * share + b.b * (1 - share))
        }
        for (time, share) in [(1.2, 0.8), (1.5, 0.5), (1.8, 0.2)] {
            let frame = try Tool.rgbFrame(output, at: time)
            expectColor(centre(frame), mix(centre(first), centre(second), share), "\(Int(share * 100)) % red at \(time) s")
            expectColor(bar(frame), mix(bar(first), bar(second), share), "\(Int(share * 100)) % red over the bar at \(time) s")
        }
    }

    // MARK: Transforms and several tracks

    @Test func transformRampsSlideWithTheirTimingFunctions() throws {
        // A 40×40 white square slides from x 0 to 280 over 0.5…1.5 s on three rows:
        // linear, easeIn and the Bézier (0.25, 0.1, 0.25, 1) (CSS "ease").
        let square = try Fixtures.solid("white", size: "40x40")
        let output = try exportComposed([square, square, square], """
            local rows = { {20, nil}, {100, "easeIn"}, {180, {0.25, 0.1, 0.25, 1}} }
            local layers = {}
            for i, row in ipairs(rows) do
              layers[i] = av.layerInstruction(tracks[i])
              layers[i]:setTransformRamp(av.transform():translated(0, row[1]), av.transform():translated(280, row[1]),
                                         av.range(0.5, 1), row[2])
            end
            vc.instructions = { av.videoCompositionInstruction{ timeRange = av.range(0, 2), layerInstructions = layers } }
            """)
        // Progress of each curve at half time, worked out independently by bisection on x(t).
        let midpoints = [0.5, 0.315357, 0.802403]
        for (time, progress) in [(0.5, [0.0, 0, 0]), (1.0, midpoints), (1.5, [1.0, 1, 1]), (1.8, [1.0, 1, 1])] {
            let frame = try Tool.rgbFrame(output, at: time)
            for (row, y) in [40, 120, 200].enumerated() {
                let left = brightCentre(frame, row: y) - 20
                #expect(abs(left - 280 * progress[row]) < 1, "row \(row + 1) at \(time) s: x \(left), expected \(280 * progress[row])")
            }
        }
        // The eased rows really differ from the linear one, by the expected amounts.
        let middle = try Tool.rgbFrame(output, at: 1.0)
        #expect(abs(brightCentre(middle, row: 40) - brightCentre(middle, row: 120) - 280 * (0.5 - 0.315357)) < 1.5)
        #expect(abs(brightCentre(middle, row: 200) - brightCentre(middle, row: 40) - 280 * (0.802403 - 0.5)) < 1.5)
    }

    @Test func severalTracksAreDrawnFirstLayerInstructionOnTop() throws {
        // Red fills the frame; blue (120×90 at 0,0) and green (160×120 at 40,40) overlap
        // at 40…120 × 40…90. Blue is on top during 0–1 s, green during 1–2 s.
        let output = try exportComposed([try Fixtures.solid("red"), try Fixtures.solid("lime"), try Fixtures.solid("blue")], """
            local red, green, blue = av.layerInstruction(tracks[1]), av.layerInstruction(tracks[2]), av.layerInstruction(tracks[3])
            green:setTransform(av.transform{0.5, 0, 0, 0.5, 40, 40}, 0)
            blue:setTransform(av.transform{0.375, 0, 0, 0.375, 0, 0}, 0)
            vc.instructions = {
              av.videoCompositionInstruction{ timeRange = av.range(0, 1), layerInstructions = { blue, green, red } },
              av.videoCompositionInstruction{ timeRange = av.range(1, 1), layerInstructions = { green, blue, red } },
            }
            """)
        for (time, overlap) in [(0.5, Solid.blue), (1.5, Solid.lime)] {
            let frame = try Tool.rgbFrame(output, at: time)
            expectColor(frame.mean(x: 4, y: 4, width: 30, height: 30), Solid.blue, "blue alone at \(time) s")
            expectColor(frame.mean(x: 124, y: 94, width: 70, height: 60), Solid.lime, "green alone at \(time) s")
            expectColor(frame.mean(x: 204, y: 164, width: 110, height: 70), Solid.red, "red alone at \(time) s")
            expectColor(frame.mean(x: 44, y: 44, width: 72, height: 42), overlap, "the overlap at \(time) s")
        }
    }

    // MARK: Frame rate

    struct RateCase: CustomTestStringConvertible, Sendable {
        let name: String
        let ffmpegArguments: [String]
        /// Source frame shown by each of the first output frames, worked out by hand.
        let firstShown: [Int]
        var testDescription: String { name }
    }

    static let rateCases = [
        RateCase(name: "10 fps, each frame shown 3 times", ffmpegArguments: ["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10:duration=1"],
                 firstShown: [0, 0, 0, 1, 1, 1, 2, 2, 2]),
        RateCase(name: "60 fps, every other frame", ffmpegArguments: ["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=60:duration=1"],
                 firstShown: [0, 2, 4, 6, 8]),
        // 10 fps (frames 0–3), then 60 fps (4–15), then 20 fps.
        RateCase(name: "variable rate", ffmpegArguments: [
            "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30:duration=1",
            "-vf", "settb=1/600,setpts='if(lt(N,4),N*60,if(lt(N,16),240+(N-4)*10,360+(N-16)*30))'",
            "-fps_mode", "passthrough", "-enc_time_base", "1/600", "-video_track_timescale", "600"],
                 firstShown: [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 6, 8, 10, 12, 14, 16, 16, 17, 18]),
    ]

    @Test(arguments: rateCases)
    func outputFramesAreTheSourceFramesShownAtTheirTimes(_ c: RateCase) throws {
        let source = Fixtures.scratchPath("source.mp4")
        try Tool.ffmpeg(c.ffmpegArguments + ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", source])
        let output = try exportComposed([source], """
            vc.renderSize = {160, 120}
            vc.instructions = { av.videoCompositionInstruction{ timeRange = av.range(0, comp.duration),
                                                                layerInstructions = { av.layerInstruction(tracks[1]) } } }
            """)
        let sourceTimes = try Tool.framePTS(source)
        let outputTimes = try Tool.framePTS(output)
        let expectedCount = Int((try Tool.ffprobe(source).video?.durationSeconds ?? 0) * 30 - 1e-6) + 1
        #expect(outputTimes.count == expectedCount)
        #expect(outputTimes.enumerated().allSatisfy { abs($1 - Double($0) / 30) < 1e-4 }, "output frames every 1/30 s: \(outputTimes)")

        let sourceFrames = try decodedFrames(source), outputFrames = try decodedFrames(output)
        try #require(sourceFrames.count == sourceTimes.count && outputFrames.count == outputTimes.count)
        var shown: [Int] = []
        for (k, frame) in outputFrames.enumerated() {
            // Hold: the last source frame that has started by the output frame's time.
            let expected = sourceTimes.lastIndex { $0 <= Double(k) / 30 + 1e-6 } ?? 0
            let candidates = max(expected - 1, 0)...min(expected + 1, sourceFrames.count - 1)
            let closest = candidates.min { rawDifference(frame, sourceFrames[$0]) < rawDifference(frame, sourceFrames[$1]) }
            #expect(closest == expected, "output frame \(k) at \(Double(k) / 30) s looks like source frame \(closest ?? -1), not \(expected)")
            shown.append(expected)
        }
        #expect(Array(shown.prefix(c.firstShown.count)) == c.firstShown, "the source's timestamps are not the intended ones")
    }

    // MARK: Validation

    struct InvalidCase: CustomTestStringConvertible, Sendable {
        let problem: String
        let instructions: String
        let message: String
        var testDescription: String { problem }
    }

    static let invalidCases = [
        InvalidCase(problem: "gap", instructions: "{ over(0, 1), over(1.5, 0.5) }",
                    message: "videoComposition.instructions[2] starts at 1.5 s, leaving a gap after 1.0 s; instructions must cover the composition without gaps"),
        InvalidCase(problem: "late start", instructions: "{ over(0.5, 1.5) }",
                    message: "videoComposition.instructions[1] starts at 0.5 s, leaving a gap after 0.0 s"),
        InvalidCase(problem: "overlap", instructions: "{ over(0, 1.25), over(1, 1) }",
                    message: "videoComposition.instructions[2] starts at 1.0 s, overlapping the previous instruction, which ends at 1.25 s"),
        InvalidCase(problem: "short", instructions: "{ over(0, 1), over(1, 0.5) }",
                    message: "videoComposition.instructions[2] ends at 1.5 s but the composition lasts 2.0 s; the last instruction must reach its end"),
        InvalidCase(problem: "empty", instructions: "{}",
                    message: "videoComposition has no instructions; add one covering 0…2.0 s"),
        InvalidCase(problem: "missing track", instructions: "{ over(0, 2, av.layerInstruction(99)) }",
                    message: "videoComposition.instructions[1] has a layer instruction for track 99, which is not a video track of the composition"),
        InvalidCase(problem: "audio track", instructions: "{ over(0, 2, av.layerInstruction(comp:addMutableTrack('audio'))) }",
                    message: "bad argument #1 to 'layerInstruction' (track 2 is an audio track, not a video track)"),
    ]

    @Test(arguments: invalidCases)
    func invalidInstructionsAreRefusedNamingTheCulprit(_ c: InvalidCase) throws {
        let output = Fixtures.scratchPath("invalid.mp4")
        let result = try Moonreel.runScript(compositionExportScript(compose: """
            local function over(start, duration, li)
              return av.videoCompositionInstruction{ timeRange = av.range(start, duration), layerInstructions = { li } }
            end
            vc.instructions = \(c.instructions)
            """), name: "invalid.lua", arguments: [output, try Fixtures.solid("red")])
        #expect(result.status == 1)
        #expect(result.errorLines.count == 1 && result.err.contains(c.message), "\(result.err)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test func oddRenderSizeIsRoundedDownWithANote() throws {
        let output = Fixtures.scratchPath("odd.mp4")
        let result = try Moonreel.runScript(compositionExportScript(compose: """
            vc.renderSize = {321, 241}
            """), arguments: [output, try Fixtures.solid("red")])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.errorLines.contains { $0.contains("renderSize 321×241 is not made of even whole numbers, which 4:2:0 video needs; the output is 320×240") },
                "\(result.err)")
        let video = try #require(try Tool.ffprobe(output).video)
        #expect(video.width == 320 && video.height == 240)
    }

    // MARK: Orientation

    @Test func portraitExampleLetterboxesAPortraitClipInALandscapeFrame() throws {
        // A 240×320 portrait clip fitted into 320×240: 180×240 at x 70…250, bars beside it.
        let output = Fixtures.scratchPath("mixed.mp4")
        let result = try Moonreel.run(["run", Moonreel.example("portrait.lua"), output, try Fixtures.solid("lime", size: "240x320"),
                                       try Fixtures.solid("blue"), "#336699"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.errorLines.allSatisfy { !$0.contains("portrait") }, "fitting needs no note: \(result.err)")
        let video = try #require(try Tool.ffprobe(output).video)
        #expect(video.width == 320 && video.height == 240 && video.frameCount == 120)
        expectColor(try Tool.rgbFrame(output, at: 1).mean(x: 0, y: 0, width: 320, height: 240), Solid.blue, "the landscape clip fills the frame")
        let fitted = try Tool.rgbFrame(output, at: 3)
        let bar = (51.0, 102.0, 153.0)
        expectColor(fitted.mean(x: 0, y: 0, width: 66, height: 240), bar, "left bar")
        expectColor(fitted.mean(x: 254, y: 0, width: 66, height: 240), bar, "right bar")
        expectColor(fitted.mean(x: 74, y: 0, width: 172, height: 240), Solid.lime, "the portrait clip, full height")
    }

    @Test func mixedShapesWithoutFitAreExplainedAndDrawnAtTheirOwnSize() throws {
        let portrait = try Fixtures.solid("lime", size: "240x320")
        let output = Fixtures.scratchPath("unfitted.mp4")
        let result = try Moonreel.runScript("""
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 2), av.asset(arg[2]), 0)
            comp:insertTimeRange(av.range(0, 2), av.asset(arg[3]), 2)
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL = arg[1]
            session.videoComposition = av.videoComposition(comp, { renderSize = {320, 240} })
            assert(session:export())
            """, name: "mixed.lua", arguments: [output, try Fixtures.solid("blue"), portrait])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.errorLines.count == 1, "one note, for the portrait clip: \(result.err)")
        let note = result.errorLines.first ?? ""
        #expect(note.contains("clip \"\(portrait)\" at 2.0 s is portrait 240×320 but the render size is landscape 320×240"), "\(note)")
        #expect(note.contains("use fit = \"fit\" to scale it into the frame, or fit = \"fill\" to fill it"), "\(note)")
        let frame = try Tool.rgbFrame(output, at: 3)
        expectColor(frame.mean(x: 0, y: 0, width: 236, height: 240), Solid.lime, "the clip from the top-left corner")
        expectColor(frame.mean(x: 244, y: 0, width: 76, height: 240), Solid.black, "background beside it")
    }

    struct PhoneCase: CustomTestStringConvertible, Sendable {
        let file: String
        let preset: String
        let width: Int
        let height: Int
        var testDescription: String { file }
    }

    /// Small presets keep the debug-build test quick; the size is the upright picture fitted
    /// into the preset's box (480×360, turned for portrait).
    static let phoneCases = [
        PhoneCase(file: "01_iphone4s_portrait_h264_rot90.mov", preset: "HighestQuality", width: 320, height: 568),
        PhoneCase(file: "03_iphone_trimmed_hevc10_editlist_vfr.mp4", preset: "LowQuality", width: 270, height: 480),
        PhoneCase(file: "04_android12_portrait_4k60_rot90_yuvj.mp4", preset: "LowQuality", width: 270, height: 480),
        PhoneCase(file: "05_pixel_motionphoto_hevc_rot270_2videotracks.mp4", preset: "LowQuality", width: 360, height: 480),
        PhoneCase(file: "06_android_rot180_vfr_10fps.mp4", preset: "LowQuality", width: 480, height: 270),
    ]

    /// Phone files through `av.videoComposition(comp)`: upright (like ffmpeg's autorotated
    /// picture of the source frame shown at that time), at the upright size, as long as the video.
    @Test(arguments: phoneCases)
    func phoneVideoComesOutUprightThroughPropertiesOf(_ c: PhoneCase) throws {
        let source = Fixtures.real(c.file)
        let output = Fixtures.scratchPath("phone.mp4")
        let result = try Moonreel.runScript(Moonreel.wholeAssetComposition(argument: 2) + "local vc = av.videoComposition(comp)\n"
                                            + Moonreel.exportThroughVideoComposition(preset: "arg[3]", output: 1),
                                            name: "phone.lua", arguments: [output, source, c.preset])
        #expect(result.status == 0, "\(c.file): \(result.err)")
        let probe = try Tool.ffprobe(output)
        let video = try #require(probe.video)
        #expect(video.width == c.width && video.height == c.height, "got \(video.width ?? 0)×\(video.height ?? 0)")
        // The source's stream duration from its header: counting frames of 4K or 10-bit HEVC is slow.
        let header = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=duration", "-of", "csv=p=0", source])
        let rate = try #require(video.frameRate)
        let videoSeconds = try #require(video.durationSeconds)
        let sourceSeconds = try #require(header.out.split(separator: ",").first.flatMap { Double($0) }, "\(header.out)")
        #expect(abs(videoSeconds - sourceSeconds) <= 1 / rate + 1e-3, "\(videoSeconds) s from \(sourceSeconds) s")
        #expect(video.side_data_list?.compactMap(\.rotation).allSatisfy { $0 == 0 } ?? true, "no display matrix left")

        // The middle output frame shows the last source frame that had started by then.
        let sourceTimes = try shownPacketTimes(source)
        let outputTimes = try Tool.framePTS(output)
        let time = outputTimes[outputTimes.count / 2]
        let shown = try #require(sourceTimes.last { $0 <= time + 1e-4 })
        let ours = try Tool.rgbFrame(output, at: time)
        let reference = try Tool.referenceFrame(source, at: shown, width: c.width, height: c.height)
        let upright = ours.meanDifference(reference)
        #expect(upright < 12, "\(c.file): mean difference from ffmpeg's upright frame is \(upright)")
    }

    @Test func portraitExampleExportsAPhoneClipUpright() throws {
        let phone = Fixtures.real("01_iphone4s_portrait_h264_rot90.mov")
        let output = Fixtures.scratchPath("upright.mp4")
        let result = try Moonreel.run(["run", Moonreel.example("portrait.lua"), output, phone])
        #expect(result.status == 0, "\(result.err)")
        let video = try #require(try Tool.ffprobe(output).video)
        #expect(video.width == 320 && video.height == 568)
        let difference = try Tool.rgbFrame(output, at: 1).meanDifference(try Tool.referenceFrame(phone, at: 1, width: 320, height: 568))
        #expect(difference < 12, "mean difference from ffmpeg's upright frame is \(difference)")
    }
}

// MARK: Helpers

/// Colours of ffmpeg's solid clips as they decode (limited-range YUV back to RGB).
enum Solid {
    static let red = (254.0, 0.0, 0.0), lime = (0.0, 255.0, 1.0), blue = (0.0, 0.0, 254.0)
    static let white = (255.0, 255.0, 255.0), black = (0.0, 0.0, 0.0)
}

/// A colour within a few levels per channel (limited-range YUV 4:2:0 and x264 round-trips).
func expectColor(_ measured: (r: Double, g: Double, b: Double), _ expected: (Double, Double, Double), _ what: String = "",
                 tolerance: Double = 4, sourceLocation: SourceLocation = #_sourceLocation) {
    let close = abs(measured.r - expected.0) <= tolerance && abs(measured.g - expected.1) <= tolerance && abs(measured.b - expected.2) <= tolerance
    #expect(close, "\(what): \(measured) instead of \(expected)", sourceLocation: sourceLocation)
}

/// The frame of `output` at `time` has each colour in its region (x, y, width, height).
func expectColors(_ output: String, at time: Double, _ regions: [((Int, Int, Int, Int), (Double, Double, Double), String)],
                  sourceLocation: SourceLocation = #_sourceLocation) throws {
    let frame = try Tool.rgbFrame(output, at: time)
    for ((x, y, width, height), colour, what) in regions {
        expectColor(frame.mean(x: x, y: y, width: width, height: height), colour, what, sourceLocation: sourceLocation)
    }
}

/// Script that exports `arg[2...]`, each on its own video track from 0 s (`tracks[i]`), to
/// `arg[1]` through `vc` (320×240 at 30 fps, built by `compose`).
func compositionExportScript(compose: String) -> String {
    """
    local comp = av.composition()
    local tracks = {}
    for i = 2, #arg do
      local source = av.asset(arg[i]):tracksWithMediaType("video")[1]
      tracks[i - 1] = comp:addMutableTrack("video")
      tracks[i - 1]:insertTimeRange(source.timeRange, source, 0)
    end
    local vc = av.videoComposition{ renderSize = {320, 240}, frameDuration = av.time(1, 30) }
    vc.instructions = { av.videoCompositionInstruction{ timeRange = av.range(0, comp.duration),
                                                        layerInstructions = { av.layerInstruction(tracks[1]) } } }
    \(compose)
    local session = av.exportSession(comp, "HighestQuality")
    session.outputURL = arg[1]
    session.videoComposition = vc
    local ok, err = session:export()
    if not ok then error(err, 0) end
    """
}

/// Exports `clips` through `compositionExportScript(compose:)` and returns the output's path.
func exportComposed(_ clips: [String], _ compose: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
    let output = Fixtures.scratchPath("composed.mp4")
    let result = try Moonreel.runScript(compositionExportScript(compose: compose), name: "compose.lua", arguments: [output] + clips)
    try #require(result.status == 0, "\(result.err)", sourceLocation: sourceLocation)
    return output
}

/// 320×240: red | lime over blue | white, 3 s.
func quadrantClip() throws -> String {
    try Fixtures.cached("quadrants.mp4") { path in
        let quadrant = { (color: String) in ["-f", "lavfi", "-i", "color=c=\(color):size=160x120:rate=30:duration=3"] }
        try Tool.ffmpeg(quadrant("red") + quadrant("lime") + quadrant("blue") + quadrant("white")
                        + ["-filter_complex", "[0][1]hstack[top];[2][3]hstack[bottom];[top][bottom]vstack",
                           "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", path])
    }
}

/// Horizontal centre of the bright pixels on one row (brightness-weighted, sub-pixel).
func brightCentre(_ image: Image, row y: Int) -> Double {
    var weighted = 0.0, total = 0.0
    for x in 0..<image.width {
        let p = image.pixel(x, y)
        let brightness = Double(p.r + p.g + p.b) / 765
        weighted += brightness * (Double(x) + 0.5)
        total += brightness
    }
    return total > 0 ? weighted / total : .nan
}

/// Every frame of a video at 80×60 RGB, in stream order with no rate conversion.
func decodedFrames(_ path: String) throws -> [[UInt8]] {
    let raw = Fixtures.scratchPath("frames.rgb")
    try Tool.ffmpeg(["-i", path, "-map", "0:v:0", "-fps_mode", "passthrough", "-vf", "scale=80:60", "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
    let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
    let size = 80 * 60 * 3
    return stride(from: 0, to: data.count - size + 1, by: size).map { Array(data[$0..<$0 + size]) }
}

/// Sum of absolute differences of two equally sized pixel buffers.
func rawDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
    zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
}

/// Presentation times of the first video stream's packets that are shown (an edit list's
/// pre-roll is at negative times), sorted: read from the container alone, because decoding
/// 4K or 10-bit HEVC phone video just for its timestamps is slow.
func shownPacketTimes(_ path: String) throws -> [Double] {
    let result = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time", "-of", "csv=p=0", path])
    try #require(result.status == 0, "ffprobe: \(result.err)")
    return result.out.split(separator: "\n").compactMap { Double($0.split(separator: ",").first ?? "") }.filter { $0 >= 0 }.sorted()
}
