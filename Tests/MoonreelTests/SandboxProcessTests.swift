import Foundation
import Testing
import TestSupport

/// RELIABILITY.md's hostile scripts as a shared effect, each in its own `moonreel run`
/// child process (a hang or a crash is then a test result, not a dead test run): the user
/// script `main.lua` requires `effects.attack` from the `effects/` folder beside it. Each
/// must end with exit code 1 and one line naming the effect file, line and limit, within
/// its limit, without touching anything on disk.
@Suite struct SandboxProcessTests {
    struct Attack: CustomTestStringConvertible, Sendable {
        let name: String
        let source: String
        /// The one line expected on stderr.
        let message: String
        /// The time limit (seconds); attacks meant to hit another limit get a generous one,
        /// so a loaded machine still shows that other limit.
        var timeLimit = 0.5
        var options: [String] { ["--time-limit", "\(timeLimit)", "--memory-limit", "64"] }
        var testDescription: String { name }
    }

    static let timeLimitMessage = "script exceeded its time limit (0.5 s)"
    static let memoryLimitMessage = "script exceeded its memory limit (64 MiB)"

    static let attacks: [Attack] = [
        Attack(name: "endless loop", source: "local x = 0\nwhile true do x = x + 1 end",
               message: "effects/attack.lua:2: \(timeLimitMessage)"),
        Attack(name: "endless loop inside pcall", source: "while true do\n  pcall(function() while true do end end)\nend",
               message: "effects/attack.lua:2: \(timeLimitMessage)"),
        Attack(name: "deep recursion", source: "local function dive(n) return 1 + dive(n + 1) end\ndive(1)",
               message: "effects/attack.lua:1: stack overflow", timeLimit: 5),
        Attack(name: "recursive __index", source: "local t = setmetatable({}, { __index = function(t, k) return t[k] end })\nreturn t.x",
               message: "effects/attack.lua:1: C stack overflow", timeLimit: 5),
        Attack(name: "string.rep bomb", source: "local s = 'x'\nlocal big = string.rep(s, 200 * 1024 * 1024)",
               message: "effects/attack.lua:2: \(memoryLimitMessage)", timeLimit: 5),
        Attack(name: "table bomb", source: "local t = {}\nfor i = 1, 1e9 do t[i] = i end",
               message: "effects/attack.lua:2: \(memoryLimitMessage)", timeLimit: 5),
        Attack(name: "binary chunk", source: "\u{1B}Lua\u{54}\u{00}\u{19}\u{93}",
               message: "effects/attack.lua: precompiled (binary) chunks are refused; Moonreel loads Lua source text only"),
        Attack(name: "__gc finalizer", source: "setmetatable({}, { __gc = function() while true do end end })",
               message: "effects/attack.lua:1: effects cannot set finalizers (__gc)"),
        Attack(name: "looping __tostring error object", source: "\nerror(setmetatable({}, { __tostring = function() while true do end end }))",
               message: "effects/attack.lua:2: (error object is a table value)"),
        Attack(name: "io", source: "io.open('victim.txt', 'w'):write('pwned')",
               message: "effects/attack.lua:1: io is not available to effects: effects cannot touch files"),
        Attack(name: "os", source: "os.remove('victim.txt')", message: "effects/attack.lua:1: os is not available to effects: effects cannot run programs or read the environment"),
        Attack(name: "debug", source: "debug.sethook()", message: "effects/attack.lua:1: debug is not available to effects: effects cannot inspect or change the host"),
        Attack(name: "package.loadlib", source: "package.loadlib('libc.so.6', 'system')('touch pwned')",
               message: "effects/attack.lua:1: package is not available to effects: effects load effects with require \"effects.NAME\""),
        Attack(name: "load", source: "load('os.exit(3)')()", message: "effects/attack.lua:1: load is not available to effects: effects cannot load code"),
        Attack(name: "dofile", source: "dofile('victim.txt')", message: "effects/attack.lua:1: dofile is not available to effects: effects cannot load code"),
        Attack(name: "writing av", source: "av.asset = function() end", message: "effects/attack.lua:1: av is read-only in effects"),
        Attack(name: "opening files through av", source: "local a = av.asset('victim.txt')",
               message: "effects/attack.lua:1: av.asset is not available to effects"),
        Attack(name: "analysing files through av", source: "local a = av.analyze(av.asset('victim.txt'))",
               message: "effects/attack.lua:1: av.analyze is not available to effects"),
        Attack(name: "NaN time", source: "av.range(0/0, 1)",
               message: "effects/attack.lua:1: bad argument #1 to 'range' (time must be a finite number of seconds, got nan)"),
        Attack(name: "infinite transform", source: "av.transform{1/0, 0, 0, 1, 0, 0}",
               message: "effects/attack.lua:1: bad argument #1 to 'transform' (field 'a': number must be finite, got inf)"),
        Attack(name: "huge negative duration", source: "av.range(0, -1e308)",
               message: "effects/attack.lua:1: bad argument #2 to 'range' (time -1e+308 s is too large)"),
        Attack(name: "invalid UTF-8 and NUL in text", source: "local l = av.textLayer{ string = '\\255\\254\\0bad' }\nerror('built ' .. tostring(l))",
               message: "effects/attack.lua:2: built TextLayer("),
        Attack(name: "../../ in a module name", source: "require 'effects.../../victim'",
               message: "effects/attack.lua:1: module 'effects.../../victim' refused: effect names are words"),
        Attack(name: "symlink out of the effects folder", source: "require 'effects.escape'",
               message: "effects/attack.lua:1: module 'effects.escape' refused: ./effects/escape.lua leads outside ./effects"),
        Attack(name: "pathological string.find", source: "local s = string.rep('a', 30000)\nreturn s:find('.-.-.-.-.-.-b')",
               message: "effects/attack.lua:2: \(timeLimitMessage)"),
        Attack(name: "a million layers", source: "local root = av.layer{}\nfor i = 1, 1e6 do root:addSublayer(av.layer{ frame = {i, i, 1, 1} }) end",
               message: "effects/attack.lua:2: \(timeLimitMessage)"),
    ]

    @Test(arguments: attacks) func attackEndsWithOneClearLine(_ attack: Attack) throws {
        let project = try AttackProject(effect: attack.source)
        let before = try project.fingerprint()
        let started = Date()
        let result = try Tool.run("/bin/sh", ["-c", "cd \"$1\" && shift && exec \"$@\"", "sh", project.directory,
                                              Moonreel.executable, "run"] + attack.options + ["main.lua"], timeout: 20)
        let elapsed = Date().timeIntervalSince(started)
        // 1 is a script failure; a death by signal shows as the signal's number (sh execs moonreel).
        #expect(result.status == 1, "\(result.err)")
        let lines = result.err.split(separator: "\n").map(String.init)
        #expect(lines.count == 1, "\(result.err)")
        #expect(lines.first?.hasPrefix(attack.message) == true, "\(result.err)")
        #expect(elapsed < attack.timeLimit + 2.5, "the time limit is \(attack.timeLimit) s; took \(elapsed) s")
        #expect(try project.fingerprint() == before, "the files around the script changed")
    }

    @Test func effectGlobalsStayInsideTheEffect() throws {
        let project = try AttackProject(effect: """
            leaked = "from effect"
            string.upper = function() return "pwned" end
            math.pi = 3
            return { apply = function() return "ok" end }
            """)
        try """
            require "effects.attack"
            print(tostring(leaked), ("a"):upper(), math.pi)
            """.write(toFile: project.directory + "/main.lua", atomically: true, encoding: .utf8)
        let result = try Tool.run("/bin/sh", ["-c", "cd \"$1\" && exec \"$2\" run main.lua", "sh", project.directory, Moonreel.executable])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "nil\tA\t3.1415926535898\n")
    }
}

/// A scratch folder with `main.lua` requiring `effects.attack`, a file the attacks aim
/// at, and a symlink leading out of the effects folder.
struct AttackProject {
    let directory: String

    init(effect: String) throws {
        directory = (Fixtures.scratchPath("main.lua") as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory + "/effects", withIntermediateDirectories: true)
        try "require \"effects.attack\"\n".write(toFile: directory + "/main.lua", atomically: true, encoding: .utf8)
        try Data(effect.utf8).write(to: URL(fileURLWithPath: directory + "/effects/attack.lua"))
        try "precious\n".write(toFile: directory + "/victim.txt", atomically: true, encoding: .utf8)
        try "return { apply = function() end }\n".write(toFile: directory + "/outside.lua", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: directory + "/effects/escape.lua", withDestinationPath: "../outside.lua")
    }

    /// Every path below the folder with its size, modification time and contents' hash.
    func fingerprint() throws -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: directory)
        var entries: [String] = []
        while let path = enumerator?.nextObject() as? String {
            let full = directory + "/" + path
            let attributes = try FileManager.default.attributesOfItem(atPath: full)
            let contents = (try? Data(contentsOf: URL(fileURLWithPath: full))) ?? Data()
            entries.append("\(path) \(attributes[.size] ?? 0) \(attributes[.modificationDate] ?? "") \(contents.hashValue)")
        }
        return entries.sorted()
    }
}
