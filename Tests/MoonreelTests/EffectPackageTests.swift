import Foundation
import Testing
import TestSupport

/// `moonreel effects pack | install (.moonfx, git+URL@TAG, --project, --frozen) | outdated |
/// update | list --json`, run for real in project folders with a private XDG_DATA_HOME.
@Suite struct EffectPackageTests {
    let work: String
    let dataHome: String

    init() throws {
        work = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        dataHome = work + "/data"
    }

    func moonreel(_ arguments: [String], in directory: String) throws -> (status: Int32, out: String, err: String) {
        try Tool.run("/bin/sh", ["-c", "cd \"$1\" && shift && exec \"$@\"", "sh", directory, Moonreel.executable] + arguments,
                     environment: ["XDG_DATA_HOME": dataHome, "MOONREEL_PATH": ""], timeout: 120)
    }

    func folder(_ name: String) throws -> String {
        let path = work + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// An effect folder `name` that fills the frame with `color`; `requires` goes into its table.
    @discardableResult
    func writeEffect(_ name: String, version: String, color: String, requires: String = "nil", in parent: String) throws -> String {
        let path = parent + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try """
            return { name = "\(name)", version = "\(version)", description = "fills the frame", author = "Tester", license = "MIT",
              requires = \(requires),
              parameters = { { name = "color", type = "color", default = "\(color)" } },
              example = {},
              apply = function(p) return av.layer{ frame = { 0, 0, 320, 240 }, backgroundColor = p.color } end }
            """.write(toFile: path + "/init.lua", atomically: true, encoding: .utf8)
        try "notes\n".write(toFile: path + "/README.txt", atomically: true, encoding: .utf8)
        return path
    }

    /// Runs, in `project`, a script that requires `effect`, prints its version and draws it
    /// over black; returns the printed version and the middle pixel.
    func render(_ effect: String, in project: String) throws -> (version: String, pixel: (r: Int, g: Int, b: Int)) {
        let still = project + "/still-\(UUID().uuidString).png"
        try """
            local effect = require "effects.\(effect)"
            local comp, vc = av.join({ av.asset(arg[1]) }, { renderSize = { 320, 240 } })
            local parent, video = av.layer{ frame = { 0, 0, 320, 240 } }, av.layer{ frame = { 0, 0, 320, 240 } }
            parent:addSublayer(video); parent:addSublayer(effect{})
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            local generator <close> = av.imageGenerator(comp, { videoComposition = vc })
            generator:copyImage(0.5, arg[2])
            print(effect.version)
            """.write(toFile: project + "/use.lua", atomically: true, encoding: .utf8)
        let black = try Fixtures.solid("black", seconds: 1, size: "320x240", tone: nil)
        let run = try moonreel(["run", "use.lua", black, still], in: project)
        try #require(run.status == 0, "\(run.err)")
        return (run.out.trimmingCharacters(in: .whitespacesAndNewlines), try Tool.rgbFrame(still, at: 0).pixel(160, 120))
    }

    func isRed(_ p: (r: Int, g: Int, b: Int)) -> Bool { p.r > 200 && p.g < 50 && p.b < 50 }
    func isBlue(_ p: (r: Int, g: Int, b: Int)) -> Bool { p.b > 200 && p.r < 50 && p.g < 50 }

    func lock(in project: String) throws -> [[String: String]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: project + "/effects.lock"))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        return (object?["effects"] as? [[String: String]]) ?? []
    }

    @Test func packInstallListAndRender() throws {
        let source = try writeEffect("box", version: "1.2.0", color: "red", requires: #"{ moonreel = ">=0.1" }"#, in: work + "/src")
        let pack = try moonreel(["effects", "pack", source], in: work)
        #expect(pack.status == 0, "\(pack.err)")
        #expect(pack.out.hasPrefix("packed effect \"box\" 1.2.0 (2 files, sha256 "), "\(pack.out)")
        let archive = work + "/box-1.2.0.moonfx"
        let listed = try Tool.run("/usr/bin/tar", ["tf", archive])
        #expect(listed.out == "moonfx.json\nREADME.txt\ninit.lua\n", "a ustar archive, manifest first: \(listed.out)")
        let again = try moonreel(["effects", "pack", source], in: work)
        #expect(again.status == 1)
        #expect(again.err == "moonreel: effects pack \(source): box-1.2.0.moonfx already exists; pass --overwrite to replace it, or -o another name\n")

        let project = try folder("project")
        let installed = try moonreel(["effects", "install", "../box-1.2.0.moonfx", "--project"], in: project)
        #expect(installed.status == 0, "\(installed.err)")
        #expect(installed.out.hasPrefix("installed effect \"box\" 1.2.0 at \(project)/effects/box\n  applied once with its example and one frame of its layer drawn: it works\n"),
                "\(installed.out)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: project + "/effects/box").sorted() == ["README.txt", "init.lua"])
        let archiveHash = try Tool.run("/usr/bin/sha256sum", [archive]).out.prefix(64)
        #expect(try lock(in: project) == [["name": "box", "version": "1.2.0", "source": "../box-1.2.0.moonfx", "sha256": String(archiveHash)]])
        #expect(!FileManager.default.fileExists(atPath: dataHome + "/moonreel/effects/box"), "a project install stays in the project")

        let json = try moonreel(["effects", "list", "--json"], in: project)
        #expect(json.status == 0, "\(json.err)")
        let effects = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [[String: Any]] ?? []
        let box = effects.first { $0["name"] as? String == "box" }
        #expect(box?["version"] as? String == "1.2.0")
        #expect(box?["location"] as? String == project + "/effects/box/init.lua")
        #expect((box?["requires"] as? [String: Any])?["moonreel"] as? String == ">=0.1")
        #expect(((box?["parameters"] as? [[String: Any]])?.first)?["name"] as? String == "color")
        #expect(effects.contains { $0["name"] as? String == "watermark" && $0["location"] as? String == "bundled" })

        let drawn = try render("box", in: project)
        #expect(drawn.version == "1.2.0")
        #expect(isRed(drawn.pixel), "\(drawn.pixel)")

        // Moved elsewhere and installed from the lock alone; until then the locked effect is
        // not taken from elsewhere (here the user's folder, which has another version).
        try FileManager.default.removeItem(atPath: project + "/effects")
        try writeEffect("box", version: "0.9.0", color: "blue", in: dataHome + "/moonreel/effects")
        let unlocked = try moonreel(["run", "use.lua", try Fixtures.solid("black", seconds: 1, size: "320x240", tone: nil), project + "/x.png"], in: project)
        #expect(unlocked.status == 1)
        #expect(unlocked.err.contains("use.lua:1: module 'effects.box' is locked at 1.2.0 by ./effects.lock but not installed in ./effects (found: \(dataHome)/moonreel/effects/box/init.lua); run `moonreel effects install --frozen` there"),
                "\(unlocked.err)")
        let frozen = try moonreel(["effects", "install", "--frozen"], in: project)
        #expect(frozen.status == 0, "\(frozen.err)")
        #expect(frozen.out.hasSuffix("installed the 1 effect effects.lock lists, each matching its SHA-256\n"), "\(frozen.out)")
        #expect(isRed(try render("box", in: project).pixel))

        // Another version put in by hand is not the locked one.
        try writeEffect("box", version: "1.3.0", color: "blue", in: project + "/effects")
        let changed = try moonreel(["run", "use.lua", try Fixtures.solid("black", seconds: 1, size: "320x240", tone: nil), project + "/y.png"], in: project)
        #expect(changed.status == 1)
        #expect(changed.err.contains("use.lua:1: module 'effects.box' is locked at 1.2.0 by ./effects.lock, but ./effects/box/init.lua is 1.3.0; run `moonreel effects install --frozen` there"),
                "\(changed.err)")
        // The REPL reads the lock as `run` does (a script loaded there finds its effects/).
        try "require \"effects.box\"\n".write(toFile: project + "/need.lua", atomically: true, encoding: .utf8)
        let typed = try Tool.run("/bin/sh", ["-c", "cd \"$1\" && printf ':load need.lua\\n' | \"$2\" repl", "sh", project, Moonreel.executable],
                                 environment: ["XDG_DATA_HOME": dataHome, "MOONREEL_PATH": ""], timeout: 60)
        #expect(typed.err.contains("module 'effects.box' is locked at 1.2.0 by ./effects.lock, but ./effects/box/init.lua is 1.3.0"), "\(typed.out) \(typed.err)")
        // A lock that cannot be read stops the require instead of being passed over.
        try "{ \"lockVersion\": 1, \"effects\": [ { \"name\": \"box\" ".write(toFile: project + "/effects.lock", atomically: true, encoding: .utf8)
        let damaged = try moonreel(["run", "use.lua", try Fixtures.solid("black", seconds: 1, size: "320x240", tone: nil), project + "/z.png"], in: project)
        #expect(damaged.status == 1 && damaged.err.split(separator: "\n").count == 1, "\(damaged.err)")
        #expect(damaged.err.contains("use.lua:1: module 'effects.box': ./effects.lock cannot be read ("), "\(damaged.err)")
    }

    @Test func aTamperedArchiveIsRefused() throws {
        let source = try writeEffect("box", version: "1.0.0", color: "red", in: work + "/src")
        #expect(try moonreel(["effects", "pack", source, "-o", "box.moonfx"], in: work).status == 0)
        let project = try folder("project")
        #expect(try moonreel(["effects", "install", "../box.moonfx", "--project"], in: project).status == 0)
        let lockBefore = try String(contentsOfFile: project + "/effects.lock", encoding: .utf8)

        // One byte of init.lua changed ("red" → "rEd"): the manifest's SHA-256 no longer matches.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: work + "/box.moonfx")))
        let red = Array(#"default = "red""#.utf8)
        let at = try #require((0...(bytes.count - red.count)).first { Array(bytes[$0..<$0 + red.count]) == red })
        bytes[at + 12] = UInt8(ascii: "E")
        try Data(bytes).write(to: URL(fileURLWithPath: work + "/box.moonfx"))

        let frozen = try moonreel(["effects", "install", "--frozen"], in: project)
        #expect(frozen.status == 1)
        #expect(frozen.err.hasPrefix("moonreel: effects install --frozen: effects.lock: \"box\" from ../box.moonfx: ../box.moonfx: \"init.lua\" does not match its SHA-256 in the manifest"),
                "\(frozen.err)")
        #expect(frozen.err.split(separator: "\n").count == 1)
        let plain = try moonreel(["effects", "install", "../box.moonfx", "--overwrite"], in: project)
        #expect(plain.status == 1)
        #expect(plain.err == "moonreel: effects install ../box.moonfx: ../box.moonfx: \"init.lua\" does not match its SHA-256 in the manifest (changed after packing); it is not installed (make it again with `moonreel effects pack`)\n")

        // Packed again from a changed effect, its files and manifest agree, but not with the lock.
        try writeEffect("box", version: "1.0.0", color: "blue", in: work + "/src")
        #expect(try moonreel(["effects", "pack", source, "-o", "box.moonfx", "--overwrite"], in: work).status == 0)
        let repacked = try moonreel(["effects", "install", "--frozen"], in: project)
        #expect(repacked.status == 1)
        #expect(repacked.err.range(of: #"^moonreel: effects install --frozen: effects.lock: "box" from \.\./box\.moonfx has SHA-256 [0-9a-f]{16}… \(box 1\.0\.0\), the lock records [0-9a-f]{16}… \(box 1\.0\.0\): it changed since it was locked; nothing was installed\n$"#,
                                     options: .regularExpression) != nil, "\(repacked.err)")
        #expect(try String(contentsOfFile: project + "/effects.lock", encoding: .utf8) == lockBefore)
        #expect(isRed(try render("box", in: project).pixel), "the installed effect is untouched")
    }

    @Test func archivesWithTraversalOrLinksAreRefused() throws {
        let staging = try folder("evil/inner")
        try #"{"format":1,"name":"box","version":"1.0.0","license":"","author":"","kind":"folder","requires":{"moonreel":"","effects":{}},"files":[]}"#
            .write(toFile: staging + "/moonfx.json", atomically: true, encoding: .utf8)
        try "return {}\n".write(toFile: work + "/evil/escape.lua", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: staging + "/init.lua", withDestinationPath: "/etc/hostname")
        let cases: [(archive: String, arguments: [String], problem: String)] = [
            ("dotdot.moonfx", ["-P", "moonfx.json", "../escape.lua"], #""../escape.lua" leads outside the package (..)"#),
            ("absolute.moonfx", ["-P", "moonfx.json", work + "/evil/escape.lua"], "is an absolute path"),
            ("link.moonfx", ["moonfx.json", "init.lua"], #""init.lua" is a link; effect packages hold plain files only"#),
        ]
        let project = try folder("project")
        for (archive, arguments, problem) in cases {
            let made = try Tool.run("/usr/bin/tar", ["--format=ustar", "-C", staging, "-cf", work + "/" + archive] + arguments)
            try #require(made.status == 0, "\(made.err)")
            let result = try moonreel(["effects", "install", "../" + archive, "--project"], in: project)
            #expect(result.status == 1)
            #expect(result.err.hasPrefix("moonreel: effects install ../\(archive): ../\(archive): entry "), "\(result.err)")
            #expect(result.err.hasSuffix("\(problem); it is not installed (make it again with `moonreel effects pack`)\n"), "\(result.err)")
            #expect(result.err.split(separator: "\n").count == 1)
        }

        // A good package cut short, and one with a file appended that its manifest does not list.
        let source = try writeEffect("box", version: "1.0.0", color: "red", in: work + "/src")
        #expect(try moonreel(["effects", "pack", source, "-o", "good.moonfx"], in: work).status == 0)
        let good = try Data(contentsOf: URL(fileURLWithPath: work + "/good.moonfx"))
        try good.prefix(1500).write(to: URL(fileURLWithPath: work + "/cut.moonfx"))
        try good.write(to: URL(fileURLWithPath: work + "/extra.moonfx"))
        try "return {}\n".write(toFile: staging + "/extra.lua", atomically: true, encoding: .utf8)
        let appended = try Tool.run("/usr/bin/tar", ["--format=ustar", "-C", staging, "-rf", work + "/extra.moonfx", "extra.lua"])
        try #require(appended.status == 0, "\(appended.err)")
        for (archive, problem) in [("cut.moonfx", "it ends inside an entry (truncated?)"),
                                   ("extra.moonfx", #"it holds "extra.lua", which the manifest does not list"#)] {
            let result = try moonreel(["effects", "install", "../" + archive, "--project"], in: project)
            #expect(result.status == 1)
            #expect(result.err == "moonreel: effects install ../\(archive): ../\(archive): \(problem); it is not installed (make it again with `moonreel effects pack`)\n",
                    "\(result.err)")
        }
        #expect(!FileManager.default.fileExists(atPath: project + "/effects"))
        #expect(!FileManager.default.fileExists(atPath: project + "/effects.lock"))
        #expect(FileManager.default.fileExists(atPath: work + "/evil/escape.lua"))
    }

    func git(_ arguments: [String], in repository: String) throws {
        let result = try Tool.run("/usr/bin/git", ["-C", repository, "-c", "user.name=Tester", "-c", "user.email=t@example.com",
                                                   "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"] + arguments)
        try #require(result.status == 0, "git \(arguments): \(result.err)")
    }

    @Test func aGitTagIsInstalledAndUpdated() throws {
        let repository = try folder("repos/fill")
        try git(["init", "--quiet"], in: repository)
        for (version, color) in [("1.0.0", "red"), ("1.1.0", "blue"), ("2.0.0-beta", "lime")] {
            try writeEffect("fill", version: version, color: color, in: work + "/repos")
            try git(["add", "init.lua", "README.txt"], in: repository)
            try git(["commit", "--quiet", "-m", version], in: repository)
            try git(["tag", "v" + version], in: repository)
        }
        let url = "file://" + repository
        let project = try folder("project")
        let installed = try moonreel(["effects", "install", "git+\(url)@v1.0.0", "--project"], in: project)
        #expect(installed.status == 0, "\(installed.err)")
        #expect(installed.out.hasPrefix("installed effect \"fill\" 1.0.0 at \(project)/effects/fill\n"), "\(installed.out)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: project + "/effects/fill").sorted() == ["README.txt", "init.lua"], "no .git copied")
        let locked = try lock(in: project)
        #expect(locked.first?["source"] == "git+\(url)@v1.0.0" && locked.first?["version"] == "1.0.0", "\(locked)")
        #expect(isRed(try render("fill", in: project).pixel))

        let outdated = try moonreel(["effects", "outdated"], in: project)
        #expect(outdated.status == 0, "\(outdated.err)")
        // A pre-release is not the latest for a project on releases (as npm's latest).
        #expect(outdated.out == "name  locked  latest\nfill  1.0.0   v1.1.0\n", "\(outdated.out)")

        // Another project pins 1.0.0 and keeps it.
        let other = try folder("other")
        #expect(try moonreel(["effects", "install", "git+\(url)@v1.0.0", "--project"], in: other).status == 0)

        // A missing tag is one line naming it.
        let missing = try moonreel(["effects", "install", "git+\(url)@v9.9.9", "--project", "--overwrite"], in: project)
        #expect(missing.status == 1)
        #expect(missing.err.hasPrefix("moonreel: effects install git+\(url)@v9.9.9: \(url) has no tag or commit \"v9.9.9\""), "\(missing.err)")
        #expect(missing.err.split(separator: "\n").count == 1)

        // "other" requires fill ^1.0: update stops at 1.1.0, not 2.0.0-beta.
        try writeEffect("needsfill", version: "1.0.0", color: "red", requires: #"{ effects = { fill = "^1.0" } }"#, in: work + "/src")
        #expect(try moonreel(["effects", "install", work + "/src/needsfill", "--project"], in: project).status == 0)
        let updated = try moonreel(["effects", "update", "fill"], in: project)
        #expect(updated.status == 0, "\(updated.err)")
        #expect(updated.out.hasPrefix("updated fill 1.0.0 → v1.1.0 in effects.lock\ninstalled effect \"fill\" 1.1.0 at \(project)/effects/fill (replacing 1.0.0)\n"), "\(updated.out)")
        let entry = try lock(in: project).first { $0["name"] == "fill" }
        #expect(entry?["version"] == "1.1.0" && entry?["source"] == "git+\(url)@v1.1.0", "\(String(describing: entry))")
        let drawn = try render("fill", in: project)
        #expect(drawn.version == "1.1.0" && isBlue(drawn.pixel), "\(drawn)")
        let pinned = try render("fill", in: other)
        #expect(pinned.version == "1.0.0" && isRed(pinned.pixel), "the other project keeps its pin: \(pinned)")

        // From the lock alone, the same commit comes back.
        try FileManager.default.removeItem(atPath: project + "/effects")
        let frozen = try moonreel(["effects", "install", "--frozen"], in: project)
        #expect(frozen.status == 0, "\(frozen.err)")
        #expect(try render("fill", in: project).version == "1.1.0")
    }

    @Test func aDependencyChainAndAConflict() throws {
        let source = work + "/src"
        try writeEffect("base", version: "1.4.0", color: "red", in: source)
        try writeEffect("top", version: "1.0.0", color: "blue", requires: #"{ moonreel = ">=0.1 <99", effects = { base = "^1.2" } }"#, in: source)
        // top also uses base as it loads.
        let top = try String(contentsOfFile: source + "/top/init.lua", encoding: .utf8)
        try ("local base = require \"effects.base\"\n" + top).write(toFile: source + "/top/init.lua", atomically: true, encoding: .utf8)
        let project = try folder("project")

        let first = try moonreel(["effects", "install", source + "/top", "--project"], in: project)
        #expect(first.status == 1)
        #expect(first.err == "moonreel: effects install \(source)/top: effects/top/init.lua:1: module 'effects.base' not found\n"
                || first.err == "moonreel: effects install \(source)/top: it requires the effect \"base\" ^1.2, which is not installed (nor bundled); install base first\n",
                "\(first.err)")

        #expect(try moonreel(["effects", "install", source + "/base", "--project"], in: project).status == 0)
        let chained = try moonreel(["effects", "install", source + "/top", "--project"], in: project)
        #expect(chained.status == 0, "\(chained.err)")
        #expect(try lock(in: project).map { $0["name"] ?? "" } == ["base", "top"])

        // base 2.0.0 would break top, which requires ^1.2.
        try writeEffect("base", version: "2.0.0", color: "lime", in: source)
        let conflict = try moonreel(["effects", "install", source + "/base", "--overwrite"], in: project)
        #expect(conflict.status == 1)
        #expect(conflict.err == "moonreel: effects install \(source)/base: \"top\" 1.0.0 (\(project)/effects/top/init.lua) requires base ^1.2, and this is base 2.0.0; pass --force to install it anyway\n",
                "\(conflict.err)")
        #expect(try render("base", in: project).version == "1.4.0")

        // A package requiring a version that is not there: one line naming both.
        try writeEffect("picky", version: "1.0.0", color: "red", requires: #"{ effects = { base = ">=1.5" } }"#, in: source)
        let picky = try moonreel(["effects", "install", source + "/picky"], in: project)
        #expect(picky.status == 1)
        #expect(picky.err == "moonreel: effects install \(source)/picky: it requires the effect \"base\" >=1.5, but base 1.4.0 is installed (\(project)/effects/base/init.lua); install a base matching >=1.5 first\n",
                "\(picky.err)")
        try writeEffect("future", version: "1.0.0", color: "red", requires: #"{ moonreel = ">=99" }"#, in: source)
        let future = try moonreel(["effects", "install", source + "/future"], in: project)
        #expect(future.err.hasPrefix("moonreel: effects install \(source)/future: it requires Moonreel >=99, and this is Moonreel "), "\(future.err)")
        try writeEffect("wrong", version: "1.0.0", color: "red", requires: #"{ effects = { base = 3 } }"#, in: source)
        let wrong = try moonreel(["effects", "install", source + "/wrong"], in: project)
        #expect(wrong.status == 1)
        #expect(wrong.err.hasSuffix(#"requires.effects.base must be a version range such as "^1.2", got 3"# + "\n"), "\(wrong.err)")
        try writeEffect("bad", version: "1.0.0", color: "red", requires: #"{ effects = { base = "soon" } }"#, in: source)
        let bad = try moonreel(["effects", "pack", source + "/bad"], in: work)
        #expect(bad.err == "moonreel: effects pack \(source)/bad: it requires base \"soon\", which is not a version range; write one such as \">=1.2\", \"^1.2\" or \">=1.0 <2\"\n",
                "\(bad.err)")

        // The whole chain from the lock, dependency first, into an empty effects folder.
        try writeEffect("base", version: "1.4.0", color: "red", in: source)
        try FileManager.default.removeItem(atPath: project + "/effects")
        let frozen = try moonreel(["effects", "install", "--frozen"], in: project)
        #expect(frozen.status == 0, "\(frozen.err)")
        #expect(isBlue(try render("top", in: project).pixel))
    }
}
