import Foundation
import Testing
import TestSupport

/// Issue 12 §2, filters on pixels: scripts put `av.filter`s on the video composition, on
/// layer instructions and on layers; Moonreel exports; the ffmpeg CLI decodes the result and
/// every expectation is measured from its samples (detail left after a blur, chroma after
/// desaturation, colours through a LUT, what shows through a keyed green screen).
@Suite struct FilterTests {
    // MARK: Blur and sharpening

    /// What a true Gaussian of σ leaves of a sine with this period: exp(−2π²σ²/period²).
    static func gaussianResponse(sigma: Double, period: Double) -> Double { exp(-2 * .pi * .pi * sigma * sigma / (period * period)) }

    /// What the ffmpeg CLI's gblur (3 steps, as ours) leaves of the grating's sine.
    static func gblurResponse(sigma: Double) throws -> Double {
        let (plain, blurred) = (Fixtures.scratchPath("plain.png"), Fixtures.scratchPath("gblur.png"))
        try Tool.ffmpeg(["-i", try grating(), "-frames:v", "1", plain])
        try Tool.ffmpeg(["-i", try grating(), "-vf", "gblur=sigma=\(sigma):steps=3", "-frames:v", "1", blurred])
        return try amplitude(Tool.rgbFrame(blurred, at: 0)) / amplitude(Tool.rgbFrame(plain, at: 0))
    }

    @Test func blurIsFFmpegsGblurAndLowersDetailAsAGaussian() throws {
        let grating = try Self.grating()
        let plain = try exportFiltered(grating, "")
        let blurred = try exportFiltered(grating, #"vc.filters = { av.filter("gaussianBlur", { radius = 3 }) }"#)
        let ratio = try amplitude(blurred, at: 0.5) / amplitude(plain, at: 0.5)
        let gaussian = Self.gaussianResponse(sigma: 3, period: 16)
        // gblur's three recursive passes keep a little more of the finest detail than a true
        // Gaussian: the energy left is 0.29 where a Gaussian leaves 0.25.
        #expect(abs(ratio * ratio - gaussian * gaussian) < 0.06, "energy left \(ratio * ratio), Gaussian \(gaussian * gaussian)")
        // The same as the ffmpeg CLI's gblur on the same frames (luma; the grating has no colour).
        let reference = Fixtures.scratchPath("gblur.mp4")
        try Tool.ffmpeg(["-i", grating, "-vf", "gblur=sigma=3:steps=3", "-c:v", "libx264", "-qp", "0", reference])
        #expect(try Tool.psnr(blurred, against: reference) > 40)
    }

    @Test func sharpenLuminanceAddsBackTheDetailABlurTakes() throws {
        let grating = try Self.grating()
        let plain = try exportFiltered(grating, "")
        let sharpened = try exportFiltered(grating, #"vc.filters = { av.filter("sharpenLuminance", { sharpness = 1, radius = 2 }) }"#)
        // luma + 1 · (luma − blurred): the sine grows by 1 + (1 − gblur's 0.75 at σ 2).
        let ratio = try amplitude(sharpened, at: 0.5) / amplitude(plain, at: 0.5)
        #expect(abs(ratio - 1.25) < 0.04, "amplitude × \(ratio)")
    }

    @Test func blurRampAndLayerAnimationChangeTheEffectOverTime() throws {
        let grating = try Self.grating()
        let plain = try amplitude(try exportFiltered(grating, ""), at: 0.5)
        // σ 0 → 4 over 0…2 s (so σ 1 at 0.5 s and σ 3 at 1.5 s), by vc:setFilterRamp and by a
        // Core Animation animation of the video layer's filter.
        let setups = ["""
            vc.filters = { av.filter("gaussianBlur", { radius = 0 }) }
            vc:setFilterRamp("gaussianBlur", "radius", 0, 4, av.range(0, 2))
            """, """
            local parent, video = av.layer{ frame = {0, 0, 320, 240} }, av.layer{ frame = {0, 0, 320, 240} }
            video.filters = { av.filter("gaussianBlur", { radius = 0, name = "soft" }) }
            video:addAnimation(av.basicAnimation{ keyPath = "filters.soft.radius", fromValue = 0, toValue = 4, duration = 2 }, "focus")
            parent:addSublayer(video)
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            """]
        let expected = (early: try Self.gblurResponse(sigma: 1), late: try Self.gblurResponse(sigma: 3))
        for setup in setups {
            // The composed frames themselves (stills): each has exactly the σ of its time.
            let stills = try stillsFiltered(grating, setup, at: [0, 0.5, 1.5]).map { Self.amplitude(try Tool.rgbFrame($0, at: 0)) }
            #expect(abs(stills[1] / stills[0] - expected.early) < 0.01, "σ 1 at 0.5 s leaves \(stills[1] / stills[0]), gblur \(expected.early)")
            #expect(abs(stills[2] / stills[0] - expected.late) < 0.01, "σ 3 at 1.5 s leaves \(stills[2] / stills[0]), gblur \(expected.late)")
            // The export too, though x264 lets slow changes of fine detail lag a little.
            let output = try exportFiltered(grating, setup)
            let early = try amplitude(output, at: 0.5) / plain, late = try amplitude(output, at: 1.5) / plain
            #expect(early > 0.88 && late < 0.62, "after encoding: \(early) at 0.5 s, \(late) at 1.5 s")
        }
    }

    // MARK: Colour

    @Test func saturationZeroLeavesNeutralChromaAndTheSameLuma() throws {
        let clip = try Fixtures.clip(seconds: 1)
        let plain = try exportFiltered(clip, "")
        let grey = try exportFiltered(clip, #"vc.filters = { av.filter("CIColorControls", { inputSaturation = 0 }) }"#)
        let planes = try yuvPlanes(grey, at: 0.5)
        #expect((planes.cb + planes.cr).allSatisfy { abs($0 - 128) <= 1 }, "chroma \(planes.cb.min() ?? 0)…\(planes.cb.max() ?? 0)")
        let lumaBefore = try yuvPlanes(plain, at: 0.5).y
        let difference = zip(lumaBefore, planes.y).reduce(0.0) { $0 + Double(abs($1.0 - $1.1)) } / Double(lumaBefore.count)
        #expect(difference < 1.5, "luma moved by \(difference) on average")
    }

    @Test func whitePointAdjustMultipliesLinearLightByTheColour() throws {
        let clip = try Fixtures.clip(seconds: 1)
        let plain = try Tool.rgbFrame(try exportFiltered(clip, ""), at: 0.5)
        let warm = try Tool.rgbFrame(try exportFiltered(clip, #"vc.filters = { av.filter("CIWhitePointAdjust", { inputColor = { 1, 0.8, 0.6 } }) }"#), at: 0.5)
        // The sRGB curve (IEC 61966-2-1) both ways, written from the standard.
        func linear(_ code: Int) -> Double {
            let v = Double(code) / 255
            return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
        }
        func code(_ light: Double) -> Double { 255 * (light <= 0.0031308 ? 12.92 * light : 1.055 * pow(light, 1 / 2.4) - 0.055) }
        let gains = (linear(255), linear(204), linear(153))
        var error = 0.0, count = 0.0
        for y in stride(from: 8, to: plain.height, by: 16) {
            for x in stride(from: 8, to: plain.width, by: 16) {
                let (before, after) = (plain.pixel(x, y), warm.pixel(x, y))
                error += abs(code(linear(before.r) * gains.0) - Double(after.r)) + abs(code(linear(before.g) * gains.1) - Double(after.g))
                    + abs(code(linear(before.b) * gains.2) - Double(after.b))
                count += 3
            }
        }
        // Encoding both to 4:2:0 H.264 costs a few code values at colour edges.
        #expect(error / count < 3, "mean difference from the formula: \(error / count)")
        let untouched = try Tool.rgbFrame(try exportFiltered(clip, #"vc.filters = { av.filter("whitePointAdjust") }"#), at: 0.5)
        #expect(untouched.meanDifference(plain) < 0.5, "white leaves the picture as it is")
    }

    @Test func swapLUTSwapsRedAndBlueOnVideoAndOnALayer() throws {
        let cube = Fixtures.scratchPath("swap.cube")
        try Self.swapCube.write(toFile: cube, atomically: true, encoding: .utf8)
        let source = try Fixtures.solid("#E6781E", seconds: 1)
        let output = try exportFiltered(source, """
            vc.filters = { av.filter("colorCube", { path = arg[3] }) }
            local parent, video = av.layer{ frame = {0, 0, 320, 240} }, av.layer{ frame = {0, 0, 320, 240} }
            local badge = av.layer{ frame = {0, 0, 80, 60}, backgroundColor = "#E6781E" }
            badge.filters = { av.filter("CIColorCube", { path = arg[3] }) }
            parent:addSublayer(video)
            parent:addSublayer(badge)
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            """, arguments: [cube])
        let frame = try Tool.rgbFrame(output, at: 0.5)
        expectColor(frame.mean(x: 120, y: 40, width: 160, height: 120), (30, 120, 230), "video through the LUT")
        // The badge (bottom-left: Core Animation's y is up) goes through its own LUT only:
        // vc.filters act on the composed video, before the layers are drawn around it.
        expectColor(frame.mean(x: 8, y: 188, width: 64, height: 44), (30, 120, 230), "badge through its own LUT")
    }

    @Test func exposureAndBrightnessShiftGreyByTheirMaths() throws {
        let grey = try Fixtures.solid("#808080", seconds: 2)
        // One instruction a second: brightness +0.2, then exposure +1 EV.
        let output = try exportFiltered(grey, """
            local track = comp:tracksWithMediaType("video")[1]
            local brighter, exposed = av.layerInstruction(track), av.layerInstruction(track)
            brighter.filters = { av.filter("colorControls", { brightness = 0.2 }) }
            exposed.filters = { av.filter("exposureAdjust", { ev = 1 }) }
            vc.instructions = { av.videoCompositionInstruction{ timeRange = av.range(0, 1), layerInstructions = { brighter } },
                                av.videoCompositionInstruction{ timeRange = av.range(1, 1), layerInstructions = { exposed } } }
            """)
        let level = 128.0 / 255
        let linear = pow((level + 0.055) / 1.055, 2.4) * 2
        let exposed = (1.055 * pow(linear, 1 / 2.4) - 0.055) * 255
        for (time, expected, what) in [(0.5, 128 + 0.2 * 255, "brightness +0.2"), (1.5, exposed, "exposure +1 EV")] {
            let measured = try Tool.rgbFrame(output, at: time).mean(x: 40, y: 40, width: 240, height: 160)
            expectColor(measured, (expected, expected, expected), "\(what) at \(time) s", tolerance: 3)
        }
    }

    // MARK: Keying

    @Test func chromaKeyedGreenScreenShowsWhatIsUnderIt() throws {
        let greenScreen = try Self.greenScreen()
        // A layer: the video layer keyed over a red parent layer.
        let layered = try exportFiltered(greenScreen, """
            local parent = av.layer{ frame = {0, 0, 320, 240}, backgroundColor = "red" }
            local video = av.layer{ frame = {0, 0, 320, 240} }
            video.filters = { av.filter("chromaKey", { color = "lime", similarity = 0.1, blend = 0.05 }) }
            parent:addSublayer(video)
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            """)
        // A layer instruction: the keyed track drawn over a red track.
        let red = try Fixtures.solid("red", seconds: 1)
        let composed = try exportComposed([greenScreen, red], """
            local keyed, under = av.layerInstruction(tracks[1]), av.layerInstruction(tracks[2])
            keyed.filters = { av.filter("chromaKey", { color = "#00FF00" }) }
            vc.instructions = { av.videoCompositionInstruction{ timeRange = av.range(0, 1), layerInstructions = { keyed, under } } }
            """)
        for output in [layered, composed] {
            let frame = try Tool.rgbFrame(output, at: 0.5)
            expectColor(frame.mean(x: 0, y: 0, width: 100, height: 240), Solid.red, "keyed green shows red under it")
            expectColor(frame.mean(x: 128, y: 88, width: 64, height: 64), Solid.blue, "the blue square stays")
        }
    }

    // MARK: HDR

    @Test func filtersRunOnTenBitHDRAndKeepIt() throws {
        let output = try exportFiltered(HDRTests.sources.hlg, """
            vc.filters = { av.filter("colorControls", { saturation = 0 }), av.filter("gaussianBlur", { radius = 2 }),
                           av.filter("vignette", { intensity = 0.5 }) }
            """, preset: "HEVCHighestQuality")
        let line = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=pix_fmt,color_transfer",
                                            "-of", "csv=p=0", output]).out
        #expect(line.contains("yuv420p10le,arib-std-b67"), "\(line)")
        let planes = try yuvPlanes(output, at: 1, tenBit: true)
        #expect((planes.cb + planes.cr).allSatisfy { abs($0 - 512) <= 3 }, "10-bit chroma \(planes.cb.min() ?? 0)…\(planes.cb.max() ?? 0)")
    }

    // MARK: Mistakes, effects, the example, a phone clip

    @Test func mistakesAreOneLineMessages() throws {
        let cube = Fixtures.scratchPath("broken.cube")
        try "LUT_3D_SIZE 2\n0 0 0\n1 0\n".write(toFile: cube, atomically: true, encoding: .utf8)
        let result = try Moonreel.runScript("""
            local function try(f) local ok, message = pcall(f); print(ok and "no error" or message) end
            try(function() av.filter("gausianBlur") end)
            try(function() av.filter("gaussianBlur", { radious = 2 }) end)
            try(function() av.filter("colorControls", { saturation = 9 }) end)
            try(function() av.filter("colorCube", { path = arg[1] }) end)
            try(function() av.filter("gaussianBlur").radius = 0 / 0 end)
            try(function() av.filter("gaussianBlur").name = "a.b" end)
            local layer = av.layer{}
            layer.filters = { av.filter("gaussianBlur") }
            try(function() layer:addAnimation(av.basicAnimation{ keyPath = "filters.blur.radius", toValue = 2 }) end)
            try(function() layer:addAnimation(av.basicAnimation{ keyPath = "filters.gaussianBlur.radius", toValue = 999 }) end)
            local vc = av.videoComposition{ renderSize = {320, 240}, frameDuration = 1 / 30 }
            vc.filters = { av.filter("chromaKey") }
            try(function() vc:setFilterRamp("key", "similarity", 0, 1, av.range(0, 1)) end)
            try(function() vc:setFilterValue("chromaKey", "color", 1, 0) end)
            try(function() av.videoComposition(av.composition(), { filter = {} }) end)
            """, arguments: [cube])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.split(separator: "\n").map(Self.fromScriptName) == [
            #"test.lua:2: bad argument #1 to 'filter' (unknown filter "gausianBlur"; did you mean gaussianBlur? (filters: gaussianBlur, colorControls, exposureAdjust, colorCube, sharpenLuminance, vignette, whitePointAdjust, chromaKey, lumaThreshold, grain, glitch))"#,
            #"test.lua:3: bad argument #2 to 'filter' (gaussianBlur has no parameter "radious"; did you mean radius? (parameters: radius))"#,
            "test.lua:4: bad argument #2 to 'filter' (field 'saturation': saturation must be in 0…3, got 9)",
            #"test.lua:5: bad argument #2 to 'filter' (field 'path': \#(cube):3: a table line needs three numbers (red green blue), got "1 0")"#,
            "test.lua:6: bad value for GaussianBlurFilter.radius (number must be finite, got nan)",
            #"test.lua:7: bad value for GaussianBlurFilter.name (a filter name must be 1…64 characters without dots (it is part of key paths such as filters.NAME.radius), got "a.b")"#,
            #"test.lua:10: addAnimation: keyPath filters.blur.radius: no filter named "blur" (filters: "gaussianBlur")"#,
            "test.lua:11: addAnimation: keyPath filters.gaussianBlur.radius: gaussianBlur radius must be in 0…200, got 999",
            #"test.lua:14: setFilterRamp: no filter named "key" (filters: "chromaKey")"#,
            "test.lua:15: setFilterValue: chromaKey color is not a number, so it cannot change over time",
            #"test.lua:16: bad argument #2 to 'videoComposition' (unknown option "filter"; did you mean filters? (renderSize, fit, focus, filters))"#,
        ], "\(result.out)")
    }

    @Test func keyingTheWholeVideoIsRefusedAtExport() throws {
        let result = try Moonreel.runScript(Moonreel.wholeAssetComposition() + """
            local vc = av.videoComposition(comp, { filters = { av.filter("chromaKey") } })

            """ + Moonreel.exportThroughVideoComposition(), arguments: [try Fixtures.solid("blue", seconds: 1), Fixtures.scratchPath("keyed.mp4")])
        #expect(result.status == 1)
        #expect(result.errorLines.map(Self.fromScriptName) == ["test.lua:8: videoComposition.filters: chromaKey makes pixels transparent, and nothing lies under the composed video; put it on a layer instruction (li.filters) or a layer"], "\(result.err)")
    }

    @Test func effectsMakeFiltersButReadOnlyTheLUTFilesTheyShip() throws {
        let directory = (Fixtures.scratchPath("main.lua") as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory + "/effects", withIntermediateDirectories: true)
        let cube = directory + "/swap.cube"
        try Self.swapCube.write(toFile: cube, atomically: true, encoding: .utf8)
        try """
            return { apply = function(p)
              local _, refused = pcall(function() return av.filter("colorCube", { path = "look.cube" }) end)
              local soft = av.layer{ frame = {0, 0, 320, 240}, backgroundColor = "#E6781E" }
              -- The script's LUT filter, passed in, is read (copied) like any value.
              soft.filters = { av.filter("gaussianBlur", { radius = p.radius }), av.filter("colorControls", { saturation = 0 }), p.look }
              local changed = pcall(function() p.theirs.filters = {} end)
              return { layer = soft, refused = refused, changed = changed }
            end }
            """.write(toFile: directory + "/effects/soften.lua", atomically: true, encoding: .utf8)
        try (Moonreel.wholeAssetComposition() + """
            local look = av.filter("colorCube", { path = arg[3] })
            local made = require("effects.soften"){ radius = 4, theirs = av.layer{}, look = look }
            local soft = made.layer
            print(made.refused)
            print(made.changed, #soft.filters, soft.filters[1])
            local vc = av.videoComposition(comp)
            local parent, video = av.layer{ frame = {0, 0, 320, 240} }, av.layer{ frame = {0, 0, 320, 240} }
            parent:addSublayer(video)
            video:addSublayer(soft)
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            """ + Moonreel.exportThroughVideoComposition()).write(toFile: directory + "/main.lua", atomically: true, encoding: .utf8)
        let run = try Tool.run("/bin/sh", ["-c", "cd \"$1\" && shift && exec \"$@\"", "sh", directory, Moonreel.executable, "run", "main.lua",
                                           try Fixtures.clip(seconds: 1), "out.mp4", cube])
        let result = Moonreel.Result(status: run.status, out: run.out, err: run.err)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == """
            effects/soften.lua:2: bad argument #2 to 'filter' (field 'path': effects read only the files they ship: pass effect.asset("NAME") of a file in the effect's folder, not "look.cube")
            false\t3\tFilter(gaussianBlur, radius 4)

            """, "\(result.out)")
        // The effect's layer covers the video, greyed (the swap leaves grey grey): luma of #E6781E.
        let frame = try Tool.rgbFrame(directory + "/out.mp4", at: 0.5)
        expectColor(frame.mean(x: 120, y: 80, width: 80, height: 80), (137, 137, 137), "the effect's filtered layer")
    }

    @Test func grainAndGlitchDrawAnewEveryFrameAndTheSameInEveryExport() throws {
        // A glitch on the whole (moving) picture, and grain on an opaque grey layer over it,
        // whose drawing would otherwise be kept while nothing animates: every frame of the
        // layer is its own, and a second export is the same, frame for frame.
        let clip = try Fixtures.clip(seconds: 1, size: "320x240")
        let setup = """
            vc.filters = { av.filter("glitch", { intensity = 1, rate = 0, shift = 4, bands = 6, bandOffset = 30 }) }
            local parent, video = av.layer{ frame = { 0, 0, 320, 240 } }, av.layer{ frame = { 0, 0, 320, 240 } }
            parent:addSublayer(video)
            parent:addSublayer(av.layer{ frame = { 40, 40, 200, 100 }, backgroundColor = "#606060", filters = { av.filter("grain", { amount = 0.5 }) } })
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            """
        let (first, second) = (try exportFiltered(clip, setup), try exportFiltered(clip, setup))
        func hashes(_ path: String, crop: String) throws -> [String] {
            try Tool.run("/usr/bin/ffmpeg", ["-loglevel", "error", "-i", path, "-an", "-vf", "crop=\(crop)", "-f", "framemd5", "-"]).out
                .split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: ",").last.map(String.init) }
        }
        let layer = try hashes(first, crop: "200:100:40:100")
        #expect(layer.count == 30 && Set(layer).count == 30, "every frame of the grained layer its own: \(Set(layer).count) of \(layer.count)")
        #expect(try hashes(first, crop: "320:240:0:0") == (try hashes(second, crop: "320:240:0:0")), "the same export twice: the same frames")
    }

    @Test func exampleScriptGradesFocusesAndTitles() throws {
        let cube = Fixtures.scratchPath("swap.cube")
        try Self.swapCube.write(toFile: cube, atomically: true, encoding: .utf8)
        let output = Fixtures.scratchPath("filters.mp4")
        let result = try Moonreel.run(["run", Moonreel.example("filters.lua"), try Self.grating(), output, "Title", cube])
        #expect(result.status == 0, "\(result.err)")
        #expect(try Tool.ffprobe(output).video?.frameCount == 60)
        // Out of focus at the start, sharp once the opening second is over.
        #expect(try amplitude(output, at: 0) < 0.5 * amplitude(output, at: 1.5))
    }

    @Test func realRotatedPhoneClipComesOutUprightAndGrey() throws {
        let source = Fixtures.real("01_iphone4s_portrait_h264_rot90.mov")
        let output = try exportFiltered(source, """
            vc.filters = { av.filter("colorControls", { saturation = 0 }), av.filter("gaussianBlur", { radius = 1 }) }
            """)
        let video = try #require(try Tool.ffprobe(output).video)
        #expect(video.width == 320 && video.height == 568)
        let planes = try yuvPlanes(output, at: 1)
        #expect((planes.cb + planes.cr).allSatisfy { abs($0 - 128) <= 1 })
        // Upright: our frame looks like ffmpeg's autorotated picture (greyed and slightly
        // softened here, so compared in brightness).
        let ours = try Tool.rgbFrame(output, at: 1)
        let upright = try Tool.referenceFrame(source, at: 1, width: 320, height: 568)
        func brightness(_ image: Image) -> [Double] {
            stride(from: 0, to: image.pixels.count, by: 3).map { Double(image.pixels[$0]) * 0.2126 + Double(image.pixels[$0 + 1]) * 0.7152 + Double(image.pixels[$0 + 2]) * 0.0722 }
        }
        let difference = zip(brightness(ours), brightness(upright)).reduce(0.0) { $0 + abs($1.0 - $1.1) } / Double(320 * 568)
        #expect(difference < 6, "mean brightness difference \(difference) from ffmpeg's upright frame")
    }

    // MARK: Helpers

    /// A message from "test.lua:" on (scratch scripts sit in folders of their own).
    static func fromScriptName(_ line: some StringProtocol) -> String {
        line.range(of: "test.lua:").map { String(line[$0.lowerBound...]) } ?? String(line)
    }

    /// 320×240, 2 s: vertical stripes of luma 128 ± 64 · sin(2πx/16), no colour, lossless.
    static func grating() throws -> String {
        try Fixtures.cached("grating-16.mp4") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=gray:size=320x240:rate=30:duration=2,format=yuv420p,geq=lum='128+64*sin(2*PI*X/16)':cb=128:cr=128",
                             "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", path])
        }
    }

    /// 320×240, 1 s: lime with a blue 96×96 square in the middle.
    static func greenScreen() throws -> String {
        try Fixtures.cached("green-screen.mp4") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=lime:size=320x240:rate=30:duration=1", "-f", "lavfi", "-i", "color=c=blue:size=96x96:rate=30:duration=1",
                             "-filter_complex", "[0][1]overlay=112:72", "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", "-pix_fmt", "yuv420p", path])
        }
    }

    /// A 2³ .cube mapping (r, g, b) to (b, g, r).
    static let swapCube = "LUT_3D_SIZE 2\n" + (0..<8).map { i in "\(i >> 2 & 1) \(i >> 1 & 1) \(i & 1)" }.joined(separator: "\n") + "\n"

    /// Exports `arg[1]` whole through `vc = av.videoComposition(comp)` after `setup` (Lua
    /// lines; `arg[3…]` are `arguments`); returns the output's path.
    func exportFiltered(_ source: String, _ setup: String, arguments: [String] = [], preset: String = "HighestQuality",
                        sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let output = Fixtures.scratchPath(preset.hasPrefix("HEVC") ? "filtered.mov" : "filtered.mp4")
        let script = Moonreel.wholeAssetComposition() + "local vc = av.videoComposition(comp)\n" + setup + "\n"
            + Moonreel.exportThroughVideoComposition(preset: "\"\(preset)\"")
        let result = try Moonreel.runScript(script, name: "filters.lua", arguments: [source, output] + arguments)
        try #require(result.status == 0, "\(result.err)", sourceLocation: sourceLocation)
        return output
    }

    /// Amplitude of the grating's luma sine in the middle of the frame at `time`.
    func amplitude(_ path: String, at time: Double) throws -> Double {
        let (values, width) = try Tool.luma(path, at: time, tenBit: false)
        try #require(values.count >= 180 * width && width >= 280, "no \(width)-wide frame at \(time) s in \(path)")
        return Self.amplitude((60..<180).flatMap { y in (40..<280).map { Double(values[y * width + $0]) } })
    }

    /// The same from a picture's red channel (a grey grating: any channel will do).
    static func amplitude(_ image: Image) -> Double {
        amplitude((60..<180).flatMap { y in (40..<280).map { Double(image.pixel($0, y).r) } })
    }

    /// √2 × RMS about the mean: the amplitude of a sine.
    static func amplitude(_ samples: [Double]) -> Double {
        let mean = samples.reduce(0, +) / Double(samples.count)
        return (samples.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(samples.count) * 2).squareRoot()
    }

    /// The composed frames at `times` (av.imageGenerator) of `arg[1]` whole through
    /// `vc = av.videoComposition(comp)` after `setup`, as PNG files.
    func stillsFiltered(_ source: String, _ setup: String, at times: [Double]) throws -> [String] {
        let paths = times.map { _ in Fixtures.scratchPath("still.png") }
        let script = Moonreel.wholeAssetComposition() + "local vc = av.videoComposition(comp)\n" + setup + """

            local generator = av.imageGenerator(comp, { videoComposition = vc })
            for i = 2, #arg, 2 do generator:copyImage(tonumber(arg[i]), arg[i + 1]) end
            """
        let result = try Moonreel.runScript(script, name: "stills.lua", arguments: [source] + zip(times, paths).flatMap { ["\($0)", $1] })
        try #require(result.status == 0, "\(result.err)")
        return paths
    }

    /// The three planes of the 4:2:0 frame at `time`, as the stream's own code values.
    func yuvPlanes(_ path: String, at time: Double, tenBit: Bool = false) throws -> (y: [Int], cb: [Int], cr: [Int]) {
        let video = try #require(try Tool.ffprobe(path).video)
        let (width, height) = (video.width ?? 0, video.height ?? 0)
        let raw = Fixtures.scratchPath("planes.yuv")
        try Tool.ffmpeg(["-i", path, "-ss", String(format: "%.6f", time), "-frames:v", "1", "-f", "rawvideo",
                         "-pix_fmt", tenBit ? "yuv420p10le" : "yuv420p", raw])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let values = tenBit ? stride(from: 0, to: bytes.count - 1, by: 2).map { Int(bytes[$0]) | Int(bytes[$0 + 1]) << 8 } : bytes.map(Int.init)
        let lumaCount = width * height, chromaCount = ((width + 1) / 2) * ((height + 1) / 2)
        return (Array(values[0..<lumaCount]), Array(values[lumaCount..<lumaCount + chromaCount]),
                Array(values[lumaCount + chromaCount..<lumaCount + 2 * chromaCount]))
    }
}
