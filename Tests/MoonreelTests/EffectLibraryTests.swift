import Foundation
import Testing
import TestSupport

/// The bundled effect library as a whole (issue 37 §1): every effect in scripts/effects is
/// shipped, passes the install trial, draws in landscape and portrait, and is in the gallery;
/// and the image effects (logoBug, kenBurns) with the `image` parameter type they use.
@Suite struct EffectLibraryTests {
    static let names: [String] = {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: Moonreel.checkout + "/scripts/effects")) ?? []
        return files.filter { $0.hasSuffix(".lua") }.map { String($0.dropLast(4)) }.sorted()
    }()

    func moonreel(_ arguments: [String], data: String) throws -> (status: Int32, out: String, err: String) {
        try Tool.run(Moonreel.executable, arguments, environment: ["XDG_DATA_HOME": data, "MOONREEL_PATH": ""], timeout: 120)
    }

    @Test func everyEffectIsBundledTriedAndInTheGallery() throws {
        #expect(Self.names.count >= 16, "\(Self.names)")
        let data = Fixtures.scratchPath("data")
        let listed = try JSONSerialization.jsonObject(with: Data(try moonreel(["effects", "list", "--json"], data: data).out.utf8)) as? [[String: Any]] ?? []
        let bundled = Set(listed.filter { $0["location"] as? String == "bundled" }.compactMap { $0["name"] as? String })
        let gallery = try String(contentsOfFile: Moonreel.checkout + "/docs/gallery/README.md", encoding: .utf8)
        for name in Self.names {
            #expect(bundled.contains(name), "\(name) is not bundled")
            // The install trial: loads in the sandbox, applies the example, draws a frame.
            let copy = Fixtures.scratchPath("\(name).lua")
            try FileManager.default.copyItem(atPath: Moonreel.checkout + "/scripts/effects/\(name).lua", toPath: copy)
            let tried = try moonreel(["effects", "install", copy, "--force"], data: data)
            #expect(tried.status == 0 && tried.out.contains("it works"), "\(name): \(tried.err)")
            #expect(gallery.contains("\n## \(name)\n") && FileManager.default.fileExists(atPath: Moonreel.checkout + "/docs/gallery/\(name).jpg"),
                    "\(name) is missing from docs/gallery (moonreel effects gallery -o docs/gallery --overwrite)")
        }
    }

    @Test(arguments: ["1280x720", "1080x1920"])
    func everyEffectDrawsItsExampleWithoutAWarning(size: String) throws {
        let data = Fixtures.scratchPath("data")
        // Over a clip made once (the preview's own pattern would be encoded again for each).
        let pattern = try Fixtures.clip(seconds: 8, size: size)
        for name in Self.names {
            let output = Fixtures.scratchPath("\(name)-\(size).png")
            let result = try moonreel(["effects", "preview", name, "--size", size, "--over", pattern, "-o", output, "--strict"], data: data)
            #expect(result.status == 0 && result.err.isEmpty, "\(name) at \(size): \(result.err)")
        }
    }

    // MARK: The image type

    @Test func anImageParameterTakesImagesOnlyAndTheTrialHandsOneIn() throws {
        let folder = Fixtures.scratchPath("effects")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try """
            return { name = "framed", version = "1.0.0", example = {},
              parameters = { { name = "picture", type = "image", required = true, doc = "what to frame" } },
              apply = function(p) return av.layer{ contents = p.picture, frame = { 0, 0, p.picture.size.width, p.picture.size.height } } end }
            """.write(toFile: folder + "/framed.lua", atomically: true, encoding: .utf8)
        let script = (folder as NSString).deletingLastPathComponent + "/use.lua"
        try """
            local framed = require "effects.framed"
            local ok, problem = pcall(framed, { picture = "logo.png" })
            print(problem)
            print(select(2, pcall(framed, {})))
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let used = try Moonreel.run(["run", script])
        #expect(used.out.contains("effect \"framed\": parameter picture must be an image (av.image(path)), got \"logo.png\""), "\(used.out)")
        #expect(used.out.contains("parameter picture is required (an image (av.image(path)))"), "\(used.out)")
        // No example can hold an image: the trial gives it the test pattern's picture.
        let tried = try moonreel(["effects", "install", folder + "/framed.lua"], data: Fixtures.scratchPath("data"))
        #expect(tried.status == 0 && tried.out.contains("one frame of its layer drawn: it works"), "\(tried.out) \(tried.err)")
        // An unknown type names the ones there are, image among them.
        try """
            return { name = "odd", parameters = { { name = "x", type = "picture" } }, apply = function() end }
            """.write(toFile: folder + "/odd.lua", atomically: true, encoding: .utf8)
        let odd = try moonreel(["effects", "install", folder + "/odd.lua"], data: Fixtures.scratchPath("data"))
        #expect(odd.err.contains("parameter x has type \"picture\"; use number, integer, string, boolean, table, function, color, point, size, any, asset or image"), "\(odd.err)")
    }

    // MARK: Measuring text

    @Test func preferredFrameSizeIsTheSizeTheTextIsDrawnAt() throws {
        let output = Fixtures.scratchPath("measured.png")
        let result = try Moonreel.runScript("""
            local line = av.textLayer{ string = "Hello, summer night", fontSize = 48, foregroundColor = "white" }
            local size = line:preferredFrameSize()
            line.frame = { 0, 0, size.width, size.height }
            local whole = #line:textProblems()
            line.frame = { 0, 0, size.width - 2, size.height }
            local narrower = line:textProblems()[1]
            line.frame = { 0, 0, size.width, size.height }
            local wrapped = av.textLayer{ string = "Hello, summer night", fontSize = 48, isWrapped = true, frame = { 0, 0, 200, 10 } }
            print(size.width, size.height, whole, narrower and narrower.kind, wrapped:preferredFrameSize().height, wrapped:preferredFrameSize(4000).height)
            local comp, vc = av.join({ av.asset(arg[1]) }, { renderSize = { 640, 360 } })
            local parent, video = av.layer{ frame = { 0, 0, 640, 360 } }, av.layer{ frame = { 0, 0, 640, 360 } }
            local flipped = av.layer{ frame = { 0, 0, 640, 360 }, isGeometryFlipped = true }
            parent:addSublayer(video); parent:addSublayer(flipped); flipped:addSublayer(line)
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            local generator <close> = av.imageGenerator(comp, { videoComposition = vc })
            generator:copyImage(0.5, arg[2])
            """, arguments: [try Fixtures.solid("black", seconds: 1, size: "640x360", tone: nil), output])
        try #require(result.status == 0, "\(result.err)")
        let fields = result.out.split(whereSeparator: \.isWhitespace).map(String.init)
        try #require(fields.count == 6, "\(result.out)")
        let (width, height) = (Double(fields[0]) ?? 0, Double(fields[1]) ?? 0)
        #expect(width > 300 && width < 600 && height > 48 && height < 90, "\(width)×\(height)")
        #expect(fields[2] == "0" && fields[3] == "textOverflow", "exactly that size shows it whole; 2 px less runs past: \(result.out)")
        #expect((Double(fields[4]) ?? 0) >= 2 * height && fields[5] == fields[1], "wrapped at 200 px it takes more lines; at 4000 one: \(result.out)")
        // The ink drawn lies inside the measured box (top-left of the flipped container).
        let frame = try Tool.rgbFrame(output, at: 0)
        var right = 0, bottom = 0
        for y in 0..<360 { for x in 0..<640 where frame.pixel(x, y).g > 128 { right = max(right, x); bottom = max(bottom, y) } }
        #expect(right > Int(width) - 12 && right <= Int(width), "ink reaches x \(right) of \(width)")
        #expect(bottom > Int(height) / 2 && bottom <= Int(height), "ink reaches y \(bottom) of \(height)")
    }

    // MARK: logoBug and kenBurns

    @Test func theLogoBugFadesInAfterItsDelayInItsCorner() throws {
        let grey = try EffectPreview.grey()
        let logo = Fixtures.scratchPath("logo.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=200x100", "-frames:v", "1", logo])
        let script = Fixtures.scratchPath("bug.lua")
        try """
            local comp, vc = av.join({ av.asset(arg[1]) }, { renderSize = { 1280, 720 } })
            local parent, video = av.layer{ frame = { 0, 0, 1280, 720 } }, av.layer{ frame = { 0, 0, 1280, 720 } }
            parent:addSublayer(video)
            parent:addSublayer(require("effects.logoBug"){ renderSize = { 1280, 720 }, logo = av.image(arg[2]), corner = "bottomLeft",
                                                           delay = 1, fade = 0.5, opacity = 1, size = 0.1, margin = 0.05 })
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            local generator <close> = av.imageGenerator(comp, { videoComposition = vc })
            generator:copyImage(0.5, arg[3]); generator:copyImage(1.25, arg[4]); generator:copyImage(3, arg[5])
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let frames = (0..<3).map { Fixtures.scratchPath("bug\($0).png") }
        let result = try Moonreel.run(["run", script, grey, logo] + frames)
        try #require(result.status == 0, "\(result.err)")
        let (before, fading, shown) = (try Tool.rgbFrame(frames[0], at: 0), try Tool.rgbFrame(frames[1], at: 0), try Tool.rgbFrame(frames[2], at: 0))
        // 72 px high (a tenth of 720), 144 wide, 36 px from the left and bottom edges.
        let bug = (x: 36 + 20, y: 720 - 36 - 72 + 16, width: 100, height: 40)
        #expect(before.mean(x: bug.x, y: bug.y, width: bug.width, height: bug.height).r < 135, "not yet shown")
        let half = fading.mean(x: bug.x, y: bug.y, width: bug.width, height: bug.height)
        #expect(half.r > 160 && half.r < 230 && half.g < 100, "half faded in: \(half)")
        let full = shown.mean(x: bug.x, y: bug.y, width: bug.width, height: bug.height)
        #expect(full.r > 240 && full.g < 20, "shown: \(full)")
        #expect(abs(shown.mean(x: 36 + 150, y: bug.y, width: 40, height: 40).r - 128) < 4, "no wider than the logo's aspect")
        #expect(abs(shown.mean(x: 1100, y: 40, width: 100, height: 60).r - 128) < 4, "not in the top right")
    }

    @Test func kenBurnsMovesTheCropFromOneFramingToTheOther() throws {
        // A photo whose left half is red and right half blue: framed at zoom 2 on x = 0.25
        // the frame is all red, on x = 0.75 all blue; halfway through, the edge is centred.
        let photo = Fixtures.scratchPath("halves.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=400x225", "-f", "lavfi", "-i", "color=c=blue:size=400x225",
                         "-filter_complex", "[0][1]hstack", "-frames:v", "1", photo])
        let script = Fixtures.scratchPath("kb.lua")
        try """
            local comp, vc = av.join({ av.asset(arg[1]) }, { renderSize = { 640, 360 } })
            local parent, video = av.layer{ frame = { 0, 0, 640, 360 } }, av.layer{ frame = { 0, 0, 640, 360 } }
            parent:addSublayer(video)
            parent:addSublayer(require("effects.kenBurns"){ renderSize = { 640, 360 }, image = av.image(arg[2]), start = 1, duration = 2,
                                                            from = { zoom = 2, x = 0.25, y = 0.5 }, to = { zoom = 2, x = 0.75, y = 0.5 } })
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            local generator <close> = av.imageGenerator(comp, { videoComposition = vc })
            for i, t in ipairs({ 0.5, 1, 2, 2.999, 3.5 }) do generator:copyImage(t, arg[2 + i]) end
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let frames = (0..<5).map { Fixtures.scratchPath("kb\($0).png") }
        let result = try Moonreel.run(["run", script, try EffectPreview.grey(width: 640, height: 360), photo] + frames)
        try #require(result.status == 0, "\(result.err)")
        let images = try frames.map { try Tool.rgbFrame($0, at: 0) }
        func mean(_ image: Image) -> (r: Double, g: Double, b: Double) { image.mean(x: 0, y: 0, width: 640, height: 360) }
        #expect(abs(mean(images[0]).r - 128) < 4, "before its start: the video")
        #expect(mean(images[1]).r > 240 && mean(images[1]).b < 15, "start: all red \(mean(images[1]))")
        let middle = images[2]
        #expect(middle.mean(x: 0, y: 0, width: 300, height: 360).r > 240 && middle.mean(x: 340, y: 0, width: 300, height: 360).b > 240,
                "halfway: red left of the centre, blue right of it")
        #expect(mean(images[3]).b > 235 && mean(images[3]).r < 20, "end: all blue \(mean(images[3]))")
        #expect(abs(mean(images[4]).r - 128) < 4, "after its time: the video")
        #expect(!result.err.contains("effectAdjusted"), "framings inside the photo: nothing to say")
    }

    /// What an effect does other than asked is in the run's report at the line that called
    /// it (effect.warn / effect.note): kenBurns framing past the photo's edge; under --strict
    /// the run fails there. A stranger's text is one line.
    @Test func anEffectSaysWhatItDidOtherThanAsked() throws {
        let photo = Fixtures.scratchPath("wide.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=400x225", "-frames:v", "1", photo])
        let folder = Fixtures.scratchPath("says"), script = folder + "/frame.lua"
        try FileManager.default.createDirectory(atPath: folder + "/effects", withIntermediateDirectories: true)
        try """
            return { name = "chatty", apply = function(p) effect.note("picked\\nthe blue\\tone", "give color") return av.layer{} end }
            """.write(toFile: folder + "/effects/chatty.lua", atomically: true, encoding: .utf8)
        try """
            local kenBurns = require "effects.kenBurns"
            local drift = kenBurns{ renderSize = { 640, 360 }, image = av.image(arg[1]), from = { zoom = 1, x = 0.2, y = 0.5 } }
            require("effects.chatty"){}
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try Moonreel.run(["run", script, photo])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.errorLines.contains { $0.contains("frame.lua:2: effect \"kenBurns\": the from framing (zoom 1 at 0.2, 0.5) shows past the photo's left edge")
                                             && $0.hasSuffix("[effectAdjusted]") && $0.contains("warning") }, "\(result.err)")
        #expect(result.errorLines.contains { $0.contains("frame.lua:3: effect \"chatty\": picked the blue one; give color") }, "one line: \(result.err)")
        let strict = try Moonreel.run(["run", "--strict", script, photo])
        #expect(strict.status == 1 && strict.err.contains("strict: effect \"kenBurns\": the from framing"), "\(strict.err)")
    }
}

extension EffectLibraryTests {
    /// Done means right: the text effects shrank a long name or a wide word, and cut timings
    /// given that did not fit, in silence. Each now says so at the line that called it (a note
    /// when the size was shrunk so the text fits, a warning when timings given were cut), and
    /// text that fits says nothing.
    @Test func textEffectsSayWhatTheyShrankOrShortened() throws {
        let script = Fixtures.scratchPath("says-text.lua")
        try """
            local lowerThird, title, lyrics = require "effects.lowerThird", require "effects.title", require "effects.lyrics"
            lowerThird{ renderSize = { 1080, 1920 }, name = "Maria Fernanda de los Santos Gutiérrez Villanueva", role = "Director" }
            title{ renderSize = { 1080, 1920 }, title = "https://example.com/an-address-with-no-spaces-at-all", duration = 3 }
            title{ renderSize = { 1920, 1080 }, title = "Hello", duration = 3, inDuration = 2, outDuration = 2 }
            lyrics{ renderSize = { 1920, 1080 }, fadeIn = 1, cues = { { text = "short", start = 0, finish = 0.5 }, { text = "long", start = 1, finish = 4 } } }
            lowerThird{ renderSize = { 1920, 1080 }, name = "Ana Ribeiro", role = "Director" }
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try Moonreel.run(["run", script])
        #expect(result.status == 0, "\(result.err)")
        let said = result.errorLines.filter { $0.hasSuffix("[effectAdjusted]") }
        #expect(said.contains { $0.contains("note: ") && $0.contains("says-text.lua:2: effect \"lowerThird\": the name is drawn at ") && $0.contains("so that the longer line fits") }, "\(result.err)")
        #expect(said.contains { $0.contains("says-text.lua:3: effect \"title\": ") && $0.contains("a word of it is wider than the frame") }, "\(result.err)")
        #expect(said.contains { $0.contains("warning: ") && $0.contains("says-text.lua:4: effect \"title\": coming in and going out take 2 + 2 s, more than the title's 3 s: they take 1.5 and 1.5 s") }, "\(result.err)")
        #expect(said.contains { $0.contains("says-text.lua:5: effect \"lyrics\": 1 line lasts less than twice fadeIn or fadeOut") }, "\(result.err)")
        #expect(!said.contains { $0.contains("says-text.lua:6:") }, "a name that fits: nothing to say")
        #expect(said.count == 4, "\(said)")
    }

    /// The same for the picture effects that cap a size given: audiogram's title shrunk to fit
    /// two lines, pipFrame's corners past 3.4 times the border, border's caption higher than its
    /// polaroid edge and a bottom edge narrower than the others.
    @Test func pictureEffectsSayWhatTheyCapped() throws {
        let script = Fixtures.scratchPath("says-picture.lua"), song = try Fixtures.clip(seconds: 2)
        try """
            local audiogram, pipFrame, border = require "effects.audiogram", require "effects.pipFrame", require "effects.border"
            audiogram{ renderSize = { 1080, 1920 }, sound = av.asset(arg[1]), title = string.rep("A very long episode title ", 8) }
            pipFrame{ renderSize = { 1280, 720 }, cornerRadius = 0.1 }
            border{ renderSize = { 1280, 720 }, style = "polaroid", bottomWidth = 0.01, caption = "Day one", captionHeight = 0.3 }
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try Moonreel.run(["run", script, song])
        #expect(result.status == 0, "\(result.err)")
        let said = result.errorLines.filter { $0.hasSuffix("[effectAdjusted]") }
        #expect(said.contains { $0.contains("says-picture.lua:2: effect \"audiogram\": the title is drawn at ") }, "\(result.err)")
        #expect(said.contains { $0.contains("says-picture.lua:3: effect \"pipFrame\": the corners are rounded ") }, "\(result.err)")
        #expect(said.contains { $0.contains("says-picture.lua:4: effect \"border\": the bottom edge is ") }, "\(result.err)")
        #expect(said.contains { $0.contains("says-picture.lua:4: effect \"border\": the caption is ") }, "\(result.err)")
    }
}
