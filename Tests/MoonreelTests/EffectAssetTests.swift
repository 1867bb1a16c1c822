import Foundation
import Testing
import TestSupport

/// `effect.asset("dot.png")` (issue 37 §1): an effect that is a folder reads the files it
/// ships — a picture for av.image, a LUT for colorCube — and nothing else; packages carry
/// those files through pack and install.
@Suite struct EffectAssetTests {
    let work: String

    init() throws {
        work = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
    }

    func moonreel(_ arguments: [String], in directory: String) throws -> (status: Int32, out: String, err: String) {
        try Tool.run("/bin/sh", ["-c", "cd \"$1\" && shift && exec \"$@\"", "sh", directory, Moonreel.executable] + arguments,
                     environment: ["XDG_DATA_HOME": work + "/data", "MOONREEL_PATH": ""], timeout: 120)
    }

    /// `project/effects/dotted/`: init.lua, a red dot.png and the swap LUT (red ↔ blue). Its
    /// layer shows `file` on the left half, and on the right half through the LUT.
    @discardableResult
    func writeDotted(in project: String) throws -> String {
        let folder = project + "/effects/dotted"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try """
            return { name = "dotted", version = "1.0.0", example = {},
              parameters = { { name = "file", type = "string", default = "dot.png", doc = "which of its files" } },
              apply = function(p)
                local picture = av.image(effect.asset(p.file))
                local group = av.layer{ frame = { 0, 0, 320, 240 } }
                group:addSublayer(av.layer{ contents = picture, frame = { 0, 0, 160, 240 } })
                group:addSublayer(av.layer{ contents = picture, frame = { 160, 0, 160, 240 },
                                            filters = { av.filter("colorCube", { path = effect.asset("looks/swap.cube") }) } })
                return group
              end }
            """.write(toFile: folder + "/init.lua", atomically: true, encoding: .utf8)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=32x32", "-frames:v", "1", folder + "/dot.png"])
        try FileManager.default.createDirectory(atPath: folder + "/looks", withIntermediateDirectories: true)
        try FilterTests.swapCube.write(toFile: folder + "/looks/swap.cube", atomically: true, encoding: .utf8)
        return folder
    }

    /// Draws `dotted` over black in `project` and returns the left and right middle pixels.
    func render(in project: String) throws -> (left: (r: Int, g: Int, b: Int), right: (r: Int, g: Int, b: Int)) {
        let still = project + "/still.png"
        try """
            local comp, vc = av.join({ av.asset(arg[1]) }, { renderSize = { 320, 240 } })
            local parent, video = av.layer{ frame = { 0, 0, 320, 240 } }, av.layer{ frame = { 0, 0, 320, 240 } }
            parent:addSublayer(video); parent:addSublayer(require("effects.dotted"){})
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            local generator <close> = av.imageGenerator(comp, { videoComposition = vc })
            generator:copyImage(0.5, arg[2])
            """.write(toFile: project + "/draw.lua", atomically: true, encoding: .utf8)
        let run = try moonreel(["run", "draw.lua", try Fixtures.solid("black", seconds: 1, size: "320x240", tone: nil), still], in: project)
        try #require(run.status == 0, "\(run.err)")
        let frame = try Tool.rgbFrame(still, at: 0)
        return (frame.pixel(80, 120), frame.pixel(240, 120))
    }

    @Test func anEffectFolderDrawsThePictureAndTheLUTItShips() throws {
        let project = work + "/project"
        try writeDotted(in: project)
        let (left, right) = try render(in: project)
        #expect(left.r > 200 && left.g < 50 && left.b < 50, "its dot.png, red: \(left)")
        #expect(right.b > 200 && right.r < 50 && right.g < 50, "through its looks/swap.cube, blue: \(right)")
    }

    @Test func pathsLeadingOutOfTheEffectAreRefusedInOneLine() throws {
        let project = work + "/attacks"
        let folder = try writeDotted(in: project)
        try "secret\n".write(toFile: project + "/secret.png", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: folder + "/out.png", withDestinationPath: project + "/secret.png")
        try FileManager.default.createSymbolicLink(atPath: folder + "/inside.png", withDestinationPath: "dot.png")
        try """
            return { apply = function() return effect.asset("dot.png") end }
            """.write(toFile: project + "/effects/single.lua", atomically: true, encoding: .utf8)
        try """
            return { apply = function() return av.image("secret.png") end }
            """.write(toFile: project + "/effects/peeker.lua", atomically: true, encoding: .utf8)
        try """
            local dotted = require "effects.dotted"
            for _, file in ipairs({ "../secret.png", "looks/../../../secret.png", "/etc/passwd", "out.png", "missing.png", "looks", "" }) do
              print(select(2, pcall(dotted, { file = file })))
            end
            print(pcall(dotted, { file = "inside.png" }))
            print(select(2, pcall(require("effects.single"), {})))
            print(select(2, pcall(require("effects.peeker"), {})))
            """.write(toFile: project + "/attack.lua", atomically: true, encoding: .utf8)
        let run = try moonreel(["run", "attack.lua"], in: project)
        try #require(run.status == 0, "\(run.err)")
        let where_ = "(./effects/dotted)"
        let prefix = "effects/dotted/init.lua:4: effect \"dotted\": effect.asset"
        #expect(run.out == """
            \(prefix)("../secret.png") refused: '..' would lead outside the effect's folder \(where_)
            \(prefix)("looks/../../../secret.png") refused: '..' would lead outside the effect's folder \(where_)
            \(prefix)("/etc/passwd") refused: an absolute path; name a file inside the effect's folder \(where_)
            \(prefix)("out.png") refused: it is a link leading outside the effect's folder \(where_)
            \(prefix)("missing.png") refused: no such file in the effect's folder \(where_)
            \(prefix)("looks") refused: not a plain file (in ./effects/dotted)
            \(prefix)("") refused: name a file in the effect's folder
            true\tLayer(0, 0, 320×240, 2 sublayers, 0 animations)
            effects/single.lua:1: effect "single": effect.asset("dot.png") refused: a single-file effect ships no files; make it a folder single/ with init.lua and its files beside it
            effects/peeker.lua:1: bad argument #1 to 'image' (effects read only the files they ship: pass effect.asset("NAME") of a file in the effect's folder, not "secret.png")

            """, "\(run.out)")
        #expect(try String(contentsOfFile: project + "/secret.png", encoding: .utf8) == "secret\n")
    }

    @Test func aPackedEffectCarriesItsFilesThroughInstall() throws {
        let source = try writeDotted(in: work + "/src")
        let pack = try moonreel(["effects", "pack", source, "-o", work + "/dotted-1.0.0.moonfx"], in: work)
        try #require(pack.status == 0, "\(pack.err)")
        #expect(pack.out.hasPrefix("packed effect \"dotted\" 1.0.0 (3 files, sha256 "), "\(pack.out)")
        let listed = try Tool.run("/usr/bin/tar", ["tf", work + "/dotted-1.0.0.moonfx"])
        #expect(listed.out == "moonfx.json\ndot.png\ninit.lua\nlooks/swap.cube\n", "\(listed.out)")
        let manifest = try Tool.run("/usr/bin/tar", ["xOf", work + "/dotted-1.0.0.moonfx", "moonfx.json"]).out
        #expect(manifest.contains("\"path\" : \"dot.png\"") || manifest.contains("\"path\":\"dot.png\""), "every file hashed: \(manifest)")
        // Installed into another project (the trial draws it there first), it draws the same.
        let project = work + "/elsewhere"
        try FileManager.default.createDirectory(atPath: project, withIntermediateDirectories: true)
        let install = try moonreel(["effects", "install", work + "/dotted-1.0.0.moonfx", "--project"], in: project)
        try #require(install.status == 0, "\(install.err)")
        #expect(FileManager.default.fileExists(atPath: project + "/effects/dotted/looks/swap.cube"))
        let (left, right) = try render(in: project)
        #expect(left.r > 200 && left.b < 50 && right.b > 200 && right.r < 50, "\(left) \(right)")
    }

    /// DejaVu Serif Bold renamed "Moonreel Srf" (its name table patched in place, same
    /// length): a font no system has installed, so it draws only if its file is read.
    static func unknownFont(at path: String) throws {
        let system = "/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf"
        try #require(FileManager.default.fileExists(atPath: system), "tools/install-deps.sh installs fonts-dejavu")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: system)))
        for (from, to) in [("DejaVu Serif", "Moonreel Srf")] {
            for encode in [{ (text: String) in Array(text.utf8) }, { (text: String) in Array(text.utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } }] {
                let (old, new) = (encode(from), encode(to))
                var index = 0
                while index + old.count <= bytes.count {
                    if Array(bytes[index..<index + old.count]) == old { bytes.replaceSubrange(index..<index + old.count, with: new) }
                    index += 1
                }
            }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func anEffectWritesInAFontItShips() throws {
        let project = work + "/typed"
        let folder = project + "/effects/typed"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Self.unknownFont(at: folder + "/serif.ttf")
        try "not a font\n".write(toFile: folder + "/broken.ttf", atomically: true, encoding: .utf8)
        try """
            return { name = "typed", version = "1.0.0", example = {},
              parameters = { { name = "font", type = "string", default = "serif.ttf", doc = "a family, or a font file it ships" } },
              apply = function(p)
                local font = p.font:match("%.ttf$") and not p.font:match("^/") and effect.asset(p.font) or p.font
                local line = av.textLayer{ string = "Hello WORLD", font = font, fontSize = 60, foregroundColor = "white" }
                local size = line:preferredFrameSize()
                line.frame = { 20, 20, size.width, size.height }
                return line
              end }
            """.write(toFile: folder + "/init.lua", atomically: true, encoding: .utf8)
        try """
            local typed = require "effects.typed"
            print(select(2, pcall(typed, { font = "/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf" })))
            print(select(2, pcall(typed, { font = "broken.ttf" })))
            local line = typed{ font = arg[3] }
            print(line.font, math.floor(line.frame[3]))
            local comp, vc = av.join({ av.asset(arg[1]) }, { renderSize = { 640, 360 } })
            local parent, video = av.layer{ frame = { 0, 0, 640, 360 } }, av.layer{ frame = { 0, 0, 640, 360 } }
            parent:addSublayer(video); parent:addSublayer(line)
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            local generator <close> = av.imageGenerator(comp, { videoComposition = vc })
            generator:copyImage(0.5, arg[2])
            """.write(toFile: project + "/draw.lua", atomically: true, encoding: .utf8)
        let black = try Fixtures.solid("black", seconds: 1, size: "640x360", tone: nil)
        func draw(_ font: String) throws -> (out: String, right: Int) {
            let still = project + "/\(font).png"
            let run = try moonreel(["run", "draw.lua", black, still, font], in: project)
            try #require(run.status == 0, "\(run.err)")
            let frame = try Tool.rgbFrame(still, at: 0)
            let right = (0..<640).last { x in (0..<360).contains { frame.pixel(x, $0).g > 128 } } ?? 0
            return (run.out, right)
        }
        let shipped = try draw("serif.ttf"), unknown = try draw("Moonreel Srf")
        let lines = shipped.out.split(separator: "\n").map(String.init)
        try #require(lines.count == 3, "\(shipped.out)")
        #expect(lines[0] == "effects/typed/init.lua:5: bad argument #1 to 'textLayer' (property 'font': effects read only the files they ship: pass effect.asset(\"NAME\") of a file in the effect's folder, not \"/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf\")",
                "\(lines[0])")
        #expect(lines[1].hasPrefix("effects/typed/init.lua:5: bad argument #1 to 'textLayer' (property 'font': \"") && lines[1].hasSuffix("broken.ttf\" is not a font file (TrueType or OpenType) that can be read)"),
                "\(lines[1])")
        // Its family, read from the file; measured and drawn in it: bold serif, wider than
        // the fallback the same name gets where the file was not read.
        #expect(lines[2].hasPrefix("Moonreel Srf\t"), "\(lines[2])")
        #expect(shipped.right > unknown.right + 40, "the shipped font's ink reaches x \(shipped.right), the fallback's \(unknown.right)")
        let measured = Int(lines[2].split(separator: "\t").last ?? "") ?? 0
        #expect(abs(measured + 20 - shipped.right) < 12, "measured \(measured) px wide from x 20, ink to \(shipped.right)")
    }
}
