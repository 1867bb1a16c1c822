import Foundation
import Testing
import TestSupport

/// `moonreel effects list | info | install` against a private XDG_DATA_HOME.
@Suite struct EffectsCommandTests {
    let dataHome: String
    let work: String

    init() throws {
        work = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        dataHome = work + "/data"
    }

    func moonreel(_ arguments: [String], in directory: String? = nil, path: String? = nil) throws -> (status: Int32, out: String, err: String) {
        // An empty MOONREEL_PATH is none: the user's own setting must not leak in.
        let environment = ["XDG_DATA_HOME": dataHome, "MOONREEL_PATH": path ?? ""]
        let script = "cd \"$1\" && shift && exec \"$@\""
        return try Tool.run("/bin/sh", ["-c", script, "sh", directory ?? work, Moonreel.executable] + arguments,
                            environment: environment, timeout: 60)
    }

    /// A folder effect whose init.lua requires a helper module beside it.
    func writeGlowEffect(version: String = "0.2") throws -> String {
        let folder = work + "/src/glow"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try """
            local shape = require "effects.glow.shape"
            return { name = "glow", version = "\(version)", description = "A red square", author = "Tester", license = "MIT",
              parameters = { { name = "size", type = "number", default = 10, min = 1, max = 100, doc = "side in pixels" } },
              apply = function(p) return shape{ size = p.size } end }
            """.write(toFile: folder + "/init.lua", atomically: true, encoding: .utf8)
        try """
            return { name = "glow.shape", parameters = { { name = "size", type = "number", required = true } },
              apply = function(p) return av.layer{ frame = {0, 0, p.size, p.size}, backgroundColor = "red" } end }
            """.write(toFile: folder + "/shape.lua", atomically: true, encoding: .utf8)
        try "notes\n".write(toFile: folder + "/README.txt", atomically: true, encoding: .utf8)
        return folder
    }

    @Test func listShowsTheBundledEffectsWithTheirParameters() throws {
        let result = try moonreel(["effects", "list"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("lyrics 1.4: Timed lyric lines"))
        #expect(result.out.contains("watermark 1.2: A logo image and a copyright text line"))
        #expect(result.out.contains("  found: bundled\n"))
        #expect(result.out.range(of: #"\n    logoHeight +number +default 0\.1, 0\.01…1 +logo height as a fraction of the video height\n"#,
                                 options: .regularExpression) != nil, "\(result.out)")
        #expect(result.out.range(of: #"\n    cues +table +required +cues \{text="#, options: .regularExpression) != nil)
    }

    @Test func infoShowsAuthorLicenceAndUse() throws {
        let result = try moonreel(["effects", "info", "watermark"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("  author: Moonreel\n  license: MIT\n"))
        #expect(result.out.contains("    local watermark = require \"effects.watermark\"\n    watermark{ renderSize = … }"))
        let missing = try moonreel(["effects", "info", "nope"])
        #expect(missing.status == 1)
        #expect(missing.err == "moonreel: effect \"nope\": module 'effects.nope' not found; `moonreel effects list` shows what there is\n")
    }

    @Test func folderEffectIsInstalledFoundAndRuns() throws {
        let source = try writeGlowEffect()
        let installed = try moonreel(["effects", "install", source])
        #expect(installed.status == 0, "\(installed.err)")
        let target = dataHome + "/moonreel/effects/glow"
        #expect(installed.out == "installed effect \"glow\" 0.2 at \(target)\n  applied once with its defaults and one frame of its layer drawn: it works\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: target).sorted() == ["README.txt", "init.lua", "shape.lua"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dataHome + "/moonreel/effects") == ["glow"], "no temporary left")

        let listed = try moonreel(["effects", "list"])
        #expect(listed.out.contains("glow 0.2: A red square\n  found: \(target)/init.lua\n"))
        #expect(listed.out.range(of: #"\n    size +number +default 10, 1…100 +side in pixels"#, options: .regularExpression) != nil)

        let elsewhere = work + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try "local glow = require 'effects.glow'\nprint(glow{ size = 20 })\n".write(toFile: elsewhere + "/use.lua", atomically: true, encoding: .utf8)
        let run = try moonreel(["run", "use.lua"], in: elsewhere)
        #expect(run.status == 0, "\(run.err)")
        #expect(run.out == "Layer(0, 0, 20×20, 0 sublayers, 0 animations)\n")
    }

    @Test func installRefusesToClobberUnlessOverwrite() throws {
        let source = try writeGlowEffect()
        #expect(try moonreel(["effects", "install", source]).status == 0)
        _ = try writeGlowEffect(version: "0.3")
        let refused = try moonreel(["effects", "install", source])
        #expect(refused.status == 1)
        #expect(refused.err.contains("an effect \"glow\" is already installed at \(dataHome)/moonreel/effects/glow; pass --overwrite to replace it"))
        #expect(try moonreel(["effects", "info", "glow"]).out.hasPrefix("glow 0.2"))
        let replaced = try moonreel(["effects", "install", "--overwrite", source + "/"])
        #expect(replaced.status == 0, "\(replaced.err)")
        #expect(try moonreel(["effects", "info", "glow"]).out.hasPrefix("glow 0.3"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dataHome + "/moonreel/effects") == ["glow"])
    }

    @Test func installRefusesSymlinksAndEffectsThatDoNotLoad() throws {
        let source = try writeGlowEffect()
        try FileManager.default.createSymbolicLink(atPath: source + "/secret.lua", withDestinationPath: "/etc/hostname")
        let linked = try moonreel(["effects", "install", source])
        #expect(linked.status == 1)
        #expect(linked.err == "moonreel: effects install \(source): \(source)/secret.lua is a symbolic link; effects are installed as plain files and folders\n")

        let broken = work + "/broken.lua"
        try "return {\n".write(toFile: broken, atomically: true, encoding: .utf8)
        let syntax = try moonreel(["effects", "install", broken])
        #expect(syntax.status == 1)
        #expect(syntax.err == "moonreel: effects install \(broken): effects/broken.lua:2: unexpected symbol near <eof>\n")

        let hostile = work + "/hostile.lua"
        try "io.open('x', 'w')\n".write(toFile: hostile, atomically: true, encoding: .utf8)
        let sandboxed = try moonreel(["effects", "install", hostile])
        #expect(sandboxed.status == 1)
        #expect(sandboxed.err.contains("effects/hostile.lua:1: io is not available to effects: effects cannot touch files"))
        #expect(!FileManager.default.fileExists(atPath: dataHome + "/moonreel/effects/broken.lua"))
        #expect(!FileManager.default.fileExists(atPath: dataHome + "/moonreel/effects/hostile.lua"))
    }

    /// Issue 25: install also applies an effect once with its defaults, under the limits, so
    /// one that loads but fails (or never ends) when used is refused, not installed.
    @Test func installAppliesTheEffectOnceWithItsDefaults() throws {
        let badge = work + "/badge.lua"
        let effect = { (body: String) in
            try """
                return { name = "badge", version = "1.0.0", description = "A badge",
                  parameters = { { name = "text", type = "string", default = "NEW" }, { name = "size", type = "number", default = 40 } },
                  apply = function(p) \(body) end }
                """.write(toFile: badge, atomically: true, encoding: .utf8)
        }
        try effect("return av.textLayer{ string = p.text, fontSize = p.size * p.missing }")
        let failing = try moonreel(["effects", "install", badge])
        #expect(failing.status == 1 && failing.err.contains("applied once with its defaults, it fails: effects/badge.lua:3: attempt to perform arithmetic on a nil value"), "\(failing.err)")
        try effect("while true do end")
        let endless = try moonreel(["effects", "install", badge])
        #expect(endless.status == 1 && endless.err.contains("applied once with its defaults, it fails") && endless.err.contains("limit"), "\(endless.err)")
        #expect(!FileManager.default.fileExists(atPath: dataHome + "/moonreel/effects/badge.lua"))
        try effect("return av.textLayer{ string = p.text, fontSize = p.size }")
        let working = try moonreel(["effects", "install", badge])
        #expect(working.status == 0 && working.out.contains("applied once with its defaults and one frame of its layer drawn: it works"), "\(working.out) \(working.err)")
        let glow = try moonreel(["effects", "install", "--force", try writeGlowEffect()])
        #expect(glow.status == 0 && glow.out.contains("applied once with its defaults and one frame of its layer drawn: it works"), "\(glow.out) \(glow.err)")
    }

    /// Issue 40 §2k: an effect whose apply opens a file was installed ("renderSize has no
    /// default", apply never ran). Without an example it cannot be tried and is refused
    /// (unless --force); with one, apply runs in the sandbox and its io.open is refused; a
    /// working one is applied with its example and one frame of its layer drawn.
    @Test func installTriesTheEffectsExample() throws {
        let sneaky = work + "/sneaky.lua"
        let effect = { (example: String) in
            try """
                return { name = "sneaky", version = "1.0.0", description = "A frame",
                  parameters = { { name = "renderSize", type = "table", required = true }, { name = "reads", type = "boolean", default = false } },
                  \(example)
                  apply = function(p)
                    if p.reads then io.open("/etc/hostname") end
                    return av.textLayer{ string = "hi", frame = { 0, 0, p.renderSize[1], p.renderSize[2] } }
                  end }
                """.write(toFile: sneaky, atomically: true, encoding: .utf8)
        }
        try effect("")
        let untried = try moonreel(["effects", "install", sneaky])
        #expect(untried.status == 1 && untried.err.contains("it cannot be tried: renderSize has no default and it declares no example"), "\(untried.err)")
        try effect("example = { renderSize = { 320, 180 }, reads = true },")
        let reads = try moonreel(["effects", "install", sneaky])
        #expect(reads.status == 1 && reads.err.contains("applied once with its example, it fails: effects/sneaky.lua:") && reads.err.contains("io is not available to effects"), "\(reads.err)")
        #expect(!FileManager.default.fileExists(atPath: dataHome + "/moonreel/effects/sneaky.lua"))
        try effect("example = { renderSize = { 320, 180 } },")
        let works = try moonreel(["effects", "install", sneaky])
        #expect(works.status == 0 && works.out.contains("applied once with its example and one frame of its layer drawn: it works"), "\(works.out) \(works.err)")
        let template = work + "/fresh.lua"
        #expect(try moonreel(["effects", "new", "fresh", "--folder", work]).status == 0)
        let fresh = try moonreel(["effects", "install", template])
        #expect(fresh.status == 0 && fresh.out.contains("applied once with its example and one frame of its layer drawn"), "the template declares its example: \(fresh.out) \(fresh.err)")
    }

    @Test func singleFileEffectFromMoonreelPathIsListed() throws {
        let library = work + "/library"
        try FileManager.default.createDirectory(atPath: library + "/effects", withIntermediateDirectories: true)
        try "return { name = 'tint', version = '2.1', description = 'A tint', apply = function() end }\n"
            .write(toFile: library + "/effects/tint.lua", atomically: true, encoding: .utf8)
        let result = try moonreel(["effects", "list"], path: library)
        #expect(result.out.contains("tint 2.1: A tint\n  found: \(library)/effects/tint.lua\n  parameters: none\n"), "\(result.out)")
    }

    @Test func helpAndVersionForEachCommand() throws {
        for command in [["repl"], ["effects"], ["effects", "list"], ["effects", "info"], ["effects", "install"]] {
            let help = try moonreel(command + ["--help"])
            #expect(help.status == 0 && help.out.contains("USAGE: moonreel \(command.joined(separator: " "))"), "\(command)")
            #expect(try moonreel(command + ["--version"]).out == "0.1.0\n", "\(command)")
        }
        let script = try moonreel(["--generate-completion-script", "bash"])
        #expect(script.status == 0 && script.out.contains("effects") && script.out.contains("repl"))
    }

    @Test func newShowInstallVersionsAndRemove() throws {
        let made = try moonreel(["effects", "new", "sparkle"])
        #expect(made.status == 0 && made.out.hasPrefix("wrote effects/sparkle.lua\n") && made.out.contains("moonreel run try-sparkle.lua"), "\(made.err)")
        #expect(try moonreel(["effects", "new", "sparkle"]).err.contains("effects/sparkle.lua already exists"))
        #expect(try moonreel(["effects", "new", "../x"]).status == 2)
        // The template loads, declares its parameters and draws (its own try script).
        let shown = try moonreel(["effects", "show", "sparkle"])
        #expect(shown.status == 0 && shown.err == "-- \(work)/effects/sparkle.lua\n" && shown.out.contains("version = \"0.1.0\""))
        let bundled = try moonreel(["effects", "show", "watermark"])
        #expect(bundled.err == "-- bundled\n" && bundled.out.hasPrefix("-- A logo and a copyright line"))

        let template = work + "/effects/sparkle.lua"
        #expect(try moonreel(["effects", "install", template]).out.contains("installed effect \"sparkle\" 0.1.0"))
        let older = work + "/older/sparkle.lua"
        try FileManager.default.createDirectory(atPath: work + "/older", withIntermediateDirectories: true)
        try String(contentsOfFile: template, encoding: .utf8).replacingOccurrences(of: "0.1.0", with: "0.0.9")
            .write(toFile: older, atomically: true, encoding: .utf8)
        let downgrade = try moonreel(["effects", "install", "--overwrite", older])
        #expect(downgrade.status == 1 && downgrade.err.contains("it would replace \"sparkle\" 0.1.0 with the older 0.0.9; pass --force to downgrade"))
        let forced = try moonreel(["effects", "install", "--overwrite", "--force", older])
        #expect(forced.out.contains("(replacing 0.1.0)\n"), "\(forced.err)")

        let unversioned = work + "/older/plain.lua"
        try "return { version = 'latest' }".write(toFile: unversioned, atomically: true, encoding: .utf8)
        #expect(try moonreel(["effects", "install", unversioned]).err.contains("its version \"latest\" is not a semantic version"))
        // One rule for versions (issue 25): "1" is 1.0.0, as the bundled effects' "1.0" is.
        let short = work + "/older/short.lua"
        try "return { version = '1', apply = function() end }".write(toFile: short, atomically: true, encoding: .utf8)
        #expect(try moonreel(["effects", "install", short]).out.hasPrefix("installed effect \"short\" 1 at"))
        try "return { version = '1.0.1', apply = function() end }".write(toFile: short, atomically: true, encoding: .utf8)
        #expect(try moonreel(["effects", "install", "--overwrite", short]).out.contains("(replacing 1)\n"))
        let lyrics = work + "/older/lyrics.lua"
        try "return { version = '9.0.0', apply = function() end }".write(toFile: lyrics, atomically: true, encoding: .utf8)
        #expect(try moonreel(["effects", "install", lyrics]).err.contains("it would hide the bundled effect \"lyrics\""))
        #expect(try moonreel(["effects", "install", "--force", lyrics]).status == 0)
        #expect(try moonreel(["effects", "list"]).out.contains("shadows the bundled effect \"lyrics\""))

        let removed = try moonreel(["effects", "remove", "lyrics"])
        #expect(removed.out == "removed effect \"lyrics\" (\(dataHome)/moonreel/effects/lyrics.lua); the bundled one is used again\n")
        #expect(try moonreel(["effects", "show", "lyrics"]).err == "-- bundled\n")
        #expect(try moonreel(["effects", "remove", "lyrics"]).err.contains("no effect \"lyrics\" is installed"))
        #expect(try moonreel(["effects", "remove", "../../etc"]).err.contains("never paths"))
    }

    // MARK: effects preview

    @Test func previewDrawsTheExampleAtTheSizeAskedOverTheFileGiven() throws {
        let grey = try EffectPreview.grey(width: 640, height: 360)
        let image = try EffectPreview.still("watermark", at: 1, with: "{ text = \"PREVIEW PREVIEW\", textHeight = 0.08 }", over: grey, width: 640, height: 360)
        #expect(image.width == 640 && image.height == 360)
        // The copyright line is right-aligned along the bottom edge: white there, grey elsewhere.
        func whitePixels(x: Int, y: Int, width: Int, height: Int) -> Int {
            var count = 0
            for row in y..<y + height { for column in x..<x + width where image.pixel(column, row).r > 220 { count += 1 } }
            return count
        }
        let untouched = image.mean(x: 40, y: 40, width: 200, height: 150)
        #expect(whitePixels(x: 320, y: 300, width: 310, height: 55) > 500, "white text along the bottom right")
        #expect(whitePixels(x: 0, y: 0, width: 640, height: 250) == 0, "nothing drawn above it")
        #expect(abs(untouched.r - 128) < 4 && abs(untouched.b - 128) < 4, "top left \(untouched)")
    }

    @Test func previewKeepsTheExamplesNestedTables() throws {
        // lyrics' example holds its cues as tables in a table: read through the effect's
        // read-only views they crossed back empty, and nothing was drawn.
        let image = try EffectPreview.still("lyrics", at: 1.5, over: try EffectPreview.grey(width: 640, height: 360), width: 640, height: 360)
        var sung = 0
        for y in 240..<360 { for x in 0..<640 where image.pixel(x, y).r > 200 && image.pixel(x, y).b < 100 { sung += 1 } }
        #expect(sung > 300, "yellow karaoke text in the bottom third: \(sung) pixels")
    }

    @Test func galleryShowsEveryEffectWithItsStillParametersAndCall() throws {
        let folder = work + "/gallery-source/effects"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // A stranger's metadata: markup in it is shown as text, never run.
        try """
            return { name = "badge", version = "1.0.0", description = "<script>alert(1)</script> a | red badge",
              author = "Eve <eve@example.com>", license = "MIT",
              parameters = { { name = "size", type = "number", default = 40, min = 1, max = 500, doc = "side in *pixels*" } },
              example = { size = 80 },
              apply = function(p) return av.layer{ frame = { 0, 0, p.size, p.size }, backgroundColor = "red" } end }
            """.write(toFile: folder + "/badge.lua", atomically: true, encoding: .utf8)
        try "return { name = \"broken\", apply = 5 }".write(toFile: folder + "/broken.lua", atomically: true, encoding: .utf8)
        let output = work + "/gallery"
        let made = try moonreel(["effects", "gallery", "-o", output], in: work + "/gallery-source")
        // The broken effect is named and makes the run fail; the others are drawn.
        #expect(made.status == 1 && made.err.contains("warning: broken") && made.err.contains("apply must be a function"), "\(made.err)")
        let page = try String(contentsOfFile: output + "/index.html", encoding: .utf8)
        let markdown = try String(contentsOfFile: output + "/README.md", encoding: .utf8)
        for name in ["badge", "lyrics", "watermark"] {
            #expect(page.contains("<h2>\(name)</h2>") && page.contains("src=\"\(name).jpg\""), "\(name) on the page")
            #expect(markdown.contains("![\(name) at "), "\(name) in the Markdown")
            #expect(try Tool.ffprobe(output + "/\(name).jpg").video?.width == 640)
        }
        #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && !page.contains("<script>"))
        #expect(page.contains("Eve &lt;eve@example.com&gt;"))
        #expect(markdown.contains("\\<script\\>") && markdown.contains("a \\| red badge"))
        #expect(page.contains("parent:addSublayer(badge{ size = 80 })"), "the call, with the example's options")
        #expect(page.contains("default 40, 1…500"))
        #expect(!page.contains("http"), "nothing fetched from elsewhere")
        // The badge's red square is in its still's bottom-left corner (Core Animation's origin).
        let still = try Tool.rgbFrame(output + "/badge.jpg", at: 0)
        let corner = still.mean(x: 5, y: 300, width: 30, height: 50)
        #expect(corner.r > 200 && corner.g < 60, "\(corner)")
        // Run again: nothing is replaced without --overwrite.
        let again = try moonreel(["effects", "gallery", "-o", output], in: work + "/gallery-source")
        #expect(again.status == 1 && again.err.contains("already exists"), "\(again.err)")
    }

    @Test func previewAppliesALookAndWritesAClip() throws {
        let folder = work + "/look/effects"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try """
            return { name = "dim", version = "1.0.0", parameters = {}, example = {},
              apply = function() return { av.filter("exposureAdjust", { ev = -2 }) } end }
            """.write(toFile: folder + "/dim.lua", atomically: true, encoding: .utf8)
        let output = work + "/look/dim.mp4"
        let grey = try EffectPreview.grey(width: 320, height: 180)
        let made = try moonreel(["effects", "preview", "dim", "--size", "320x180", "--over", grey, "-o", output, "--quiet"], in: work + "/look")
        #expect(made.status == 0, "\(made.err)")
        let probe = try Tool.ffprobe(output)
        #expect(probe.video?.width == 320 && probe.video?.height == 180)
        #expect(abs(probe.duration - 6) < 0.1, "as long as the picture it is drawn over: \(probe.duration)")
        // Two stops darker: a quarter of the light.
        let frame = try Tool.rgbFrame(output, at: 1)
        #expect(frame.mean(x: 100, y: 60, width: 100, height: 60).g < 90, "\(frame.mean(x: 100, y: 60, width: 100, height: 60))")
    }

    @Test func previewErrorsAreOneLineAndNothingIsReplaced() throws {
        let output = work + "/kept.png"
        try "mine".write(toFile: output, atomically: true, encoding: .utf8)
        let cases: [([String], String)] = [
            (["nosuch", "-o", work + "/x.png"], "module 'effects.nosuch' not found"),
            (["watermark", "--with", "{ text = 5 }", "-o", work + "/x.png"], "effect \"watermark\": parameter text must be a string, got 5"),
            (["watermark", "--with", "os.exit(1)", "-o", work + "/x.png"], "--with must be a Lua table of options"),
            (["watermark", "--size", "10x10", "-o", work + "/x.png"], "--size must be WIDTHxHEIGHT"),
            (["watermark", "-o", output], "already exists"),
        ]
        for (arguments, message) in cases {
            let result = try moonreel(["effects", "preview"] + arguments)
            #expect(result.status != 0 && result.err.contains(message), "\(arguments): \(result.err)")
            // Option errors come with ArgumentParser's usage line; the effect's own errors are one line.
            #expect(result.err.split(separator: "\n").count <= (message.hasPrefix("--size") ? 3 : 1), "\(arguments): \(result.err)")
        }
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "mine")
        #expect(!FileManager.default.fileExists(atPath: work + "/x.png"))
    }
}
