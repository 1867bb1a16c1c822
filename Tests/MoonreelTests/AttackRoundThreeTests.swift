import Foundation
import Testing
import TestSupport

/// The third attack round (issue 24): each reproducer, run through the real `moonreel`.
/// The library's (§1–4) and overwrite's (§5) are in MediaLibraryTests and OutputRuleTests.
@Suite struct AttackRoundThreeTests {
    let work: String

    init() throws {
        work = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
    }

    /// `moonreel ARGS` in `work`, with a private effects folder and no MOONREEL_PATH.
    func moonreel(_ arguments: [String], timeout: Double = 60) throws -> (status: Int32, out: String, err: String) {
        let environment = ["XDG_DATA_HOME": work + "/data", "MOONREEL_PATH": ""]
        return try Tool.run("/bin/sh", ["-c", "cd \"$1\" && shift && exec \"$@\"", "sh", work, Moonreel.executable] + arguments,
                            environment: environment, timeout: timeout)
    }

    func write(_ text: String, to name: String) throws -> String {
        let path = work + "/" + name
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// §7: an effect file over 1 MiB (here sparse, 1.1 GB) is refused before it is read.
    @Test func aHugeEffectFileIsRefusedBeforeItIsRead() throws {
        let effect = work + "/effects/huge.lua"
        try FileManager.default.createDirectory(atPath: work + "/effects", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: effect, contents: Data("return {}\n--".utf8)))
        #expect(truncate(effect, 1_100_000_000) == 0)
        _ = try write("require 'effects.huge'", to: "use.lua")
        let result = try moonreel(["run", "--memory-limit", "100", "use.lua"], timeout: 30)
        #expect(result.status == 1)
        #expect(result.err == "use.lua:1: effect huge (./effects/huge.lua) is 1100000000 bytes; an effect's source file may be at most 1 MiB (1048576 bytes)\n",
                "\(result.err)")
        #expect(!result.err.contains("memory limit"), "\(result.err)")
    }

    /// §8: an export running past `--time-limit` is stopped by it: one line, exit 1, what
    /// the script printed before is in the (piped) output, and no temporary file is left.
    @Test func theTimeLimitStopsAnExportCleanly() throws {
        let clip = try Fixtures.clip(seconds: 30, size: "1280x720", name: "long-720p.mp4")
        let script = try write("""
            print("before the export")
            local session = av.exportSession(av.asset(arg[1]), "HighestQuality")
            session.outputURL = arg[2]
            print(session:export())
            """, to: "slow.lua")
        let started = Date()
        let result = try moonreel(["run", "--time-limit", "1", script, clip, work + "/out.mp4"])
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 1, "\(result.out) \(result.err)")
        #expect(result.out == "before the export\n", "\(result.out)")
        #expect(result.err == "moonreel: the script exceeded its time limit (1.0 s); what it was exporting was stopped and its unfinished file removed\n", "\(result.err)")
        #expect(elapsed < 5, "took \(elapsed) s")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).filter { $0.hasPrefix(".") || $0 == "out.mp4" }.isEmpty)
    }

    /// §13: a NUL in an output name is refused (it would have cut the name: a GIF landed in
    /// "new.mp4"), as are bytes that are not UTF-8 (they became U+FFFD, another name); a
    /// legal name of 250 bytes is written (its temporary name was over 255).
    @Test func outputNamesAreWrittenAsGivenOrRefused() throws {
        let clip = try Fixtures.clip(seconds: 1)
        let script = try write("""
            local session = av.exportSession(av.asset(arg[1]), "LowQuality")
            local name = arg[2] == "nul" and "new.mp4\\0.gif" or arg[2] == "latin1" and "caf\\xe9.mp4" or arg[2]
            local ok, err = pcall(function() session.outputURL = name end)
            if not ok then print(err) return end
            print(session:export())
            """, to: "names.lua")
        let nul = try moonreel(["run", script, clip, "nul"])
        #expect(nul.out.contains("a file name cannot contain a NUL byte (byte 8 of"), "\(nul.out) \(nul.err)")
        let latin1 = try moonreel(["run", script, clip, "latin1"])
        #expect(latin1.out.contains("is not valid UTF-8; Moonreel reads and writes UTF-8 names"), "\(latin1.out) \(latin1.err)")
        let long = String(repeating: "é", count: 123) + ".mp4"   // 250 bytes
        #expect(long.utf8.count == 250)
        let written = try moonreel(["run", script, clip, long])
        #expect(written.status == 0 && written.out == "true\n", "\(written.out) \(written.err)")
        #expect(try Tool.ffprobe(work + "/" + long).video != nil)
        let names = try FileManager.default.contentsOfDirectory(atPath: work)
        #expect(!names.contains("new.mp4") && !names.contains { $0.hasPrefix("caf") } && !names.contains { $0.hasPrefix(".") }, "\(names)")
    }

    /// §14: control characters in an effect's metadata reach the terminal escaped, through
    /// `install`, `list` and `info`.
    @Test func effectMetadataCannotDriveTheTerminal() throws {
        let effect = try write("""
            return { name = "sneaky", version = "1.0.0", description = "clears\\27[2J the screen\\27]0;owned\\7",
              author = "me\\r\\27[2K", license = "GPL-3.0\\rMIT",
              parameters = { { name = "size", type = "number", default = 1, doc = "side\\27[31m in red\\226\\128\\174" } },
              apply = function(p) return av.layer{} end }
            """, to: "src/sneaky.lua")
        let install = try moonreel(["effects", "install", effect])
        #expect(install.status == 0 && install.out.hasPrefix("installed effect \"sneaky\" 1.0.0 at"), "\(install.out) \(install.err)")
        for command in [["effects", "list"], ["effects", "info", "sneaky"]] {
            let result = try moonreel(command)
            #expect(result.status == 0, "\(result.err)")
            #expect(!result.out.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x0D || $0.value == 0x07 || $0.value == 0x202E },
                    "\(command): \(result.out.debugDescription)")
            #expect(result.out.contains("sneaky 1.0.0: clears\\x1b[2J the screen\\x1b]0;owned\\x07"), "\(result.out)")
            #expect(result.out.contains("side\\x1b[31m in red\\u{202e}"), "\(result.out)")
        }
        #expect(try moonreel(["effects", "info", "sneaky"]).out.contains("  license: GPL-3.0; MIT\n"))
        // A version is checked before it is shown, and shown escaped in the refusal.
        let badVersion = try write("return { name = 'badver', version = '1.0.0\\27]0;owned\\7', apply = function() return av.layer{} end }", to: "src/badver.lua")
        let refused = try moonreel(["effects", "install", badVersion])
        #expect(refused.status == 1 && !refused.err.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "\(refused.err.debugDescription)")
    }

    /// §15: an effect that requires itself inside `apply` gets one line naming it and the
    /// cycle, which its own `pcall` catches (before: an internal chunk name, uncatchable).
    @Test func anEffectRequiringItselfIsOneLineItsPcallCatches() throws {
        _ = try write("""
            return { name = "selfish", version = "1.0.0", apply = function(opts)
              local ok, err = pcall(require, "effects.selfish")
              return { caught = not ok, message = tostring(err) }
            end }
            """, to: "effects/selfish.lua")
        let script = try write("""
            local result = require("effects.selfish"){}
            print(result.caught, result.message)
            """, to: "self.lua")
        let result = try moonreel(["run", script])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "true\teffects/selfish.lua:2: effect \"selfish\" requires itself (effects.selfish → effects.selfish); an effect cannot load itself: call its own local functions instead\n",
                "\(result.out)")
    }

    /// §16: a GIF whose fileLengthLimit is below its first frame says so.
    @Test func aGIFLimitBelowTheFirstFrameSaysSo() throws {
        // Noise: the first 640×480 frame alone is far over the smallest limit, 32 KiB.
        let clip = try Fixtures.clip(seconds: 1, size: "640x480", extra: ["-vf", "noise=alls=100:allf=t"])
        let script = try write("""
            local session = av.exportSession(av.asset(arg[1]), "HighestQuality")
            session.outputURL = arg[2]
            session.fileLengthLimit = 32768
            print(session:export())
            """, to: "gif.lua")
        let result = try moonreel(["run", script, clip, work + "/tiny.gif"])
        #expect(result.out.contains("fileLengthLimit (32768 bytes) is too small for even the first frame and the file's header and index; raise it"), "\(result.out) \(result.err)")
        #expect(!FileManager.default.fileExists(atPath: work + "/tiny.gif"))
    }

    /// §17: `effects install` refuses a top-level symbolic link; parameters given as a
    /// dictionary are refused, not read as none.
    @Test func linksAndDictionaryParametersAreRefused() throws {
        let real = try write("return { name = 'linked', version = '1.0.0', apply = function() return av.layer{} end }", to: "src/real.lua")
        try FileManager.default.createSymbolicLink(atPath: work + "/linked.lua", withDestinationPath: real)
        let linked = try moonreel(["effects", "install", work + "/linked.lua"])
        #expect(linked.status == 1 && linked.err.contains("linked.lua is a symbolic link; effects are installed as plain files and folders"), "\(linked.err)")
        #expect(!FileManager.default.fileExists(atPath: work + "/data/moonreel/effects/linked.lua"))
        let dictionary = try write("""
            return { name = "dict", version = "1.0.0", parameters = { size = { type = "number" } }, apply = function(p) return av.layer{} end }
            """, to: "src/dict.lua")
        let refused = try moonreel(["effects", "install", dictionary])
        #expect(refused.status == 1 && refused.err.contains("parameters must be a list { { name = ... }, ... }, got a table with the key \"size\""), "\(refused.err)")
    }

    /// §6: export memory counts against `--memory-limit` (an export may use as much again
    /// as the limit): 16384×6102 pictures with a 100 MiB limit are refused before any is
    /// made (before, 6.46 GB resident and exit 0), under a 1.5 GB address-space cap that
    /// such an export could not live in; an export whose memory grows past it stops at
    /// that frame with one line and leaves no file.
    @Test func exportMemoryCountsAgainstTheLimit() throws {
        let clip = try Fixtures.clip(seconds: 1)
        let script = try write("""
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 0.34), av.asset(arg[1]), 0)
            local vc = av.videoComposition(comp)
            vc.renderSize = { tonumber(arg[3]), tonumber(arg[4]) }
            local session = av.exportSession(comp, "HighestQuality")
            session.videoComposition, session.outputURL = vc, arg[2]
            assert(session:export())
            """, to: "big.lua")
        let huge = try Tool.run("/bin/sh", ["-c", "ulimit -v 1500000; exec \"$@\"", "sh", Moonreel.executable,
                                            "run", "--memory-limit", "100", script, clip, work + "/huge.mp4", "16384", "6102"], timeout: 60)
        #expect(huge.status == 1)
        #expect(huge.err.hasSuffix("big.lua:7: pictures of 16384×6102 need at least 1097 MiB while exporting, over the export's memory limit (200 MiB); lower the render size or raise the limit\n"),
                "\(huge.err)")
        #expect(huge.err.split(separator: "\n").count == 1, "\(huge.err)")
        let grown = try moonreel(["run", "--memory-limit", "8", script, clip, work + "/grown.mp4", "1280", "720"])
        #expect(grown.status == 1)
        #expect(grown.err.range(of: #"big\.lua:7: the export grew by \d+ MiB by frame \d+ \(pictures of 1280×720\), over the export's memory limit \(16 MiB\); lower the render size or raise the limit\n$"#,
                                options: .regularExpression) != nil, "\(grown.err)")
        let fits = try moonreel(["run", script, clip, work + "/fits.mp4", "1280", "720"])
        #expect(fits.status == 0, "\(fits.err)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work).filter { $0.hasPrefix(".") || $0 == "huge.mp4" || $0 == "grown.mp4" }.isEmpty)
    }
}
