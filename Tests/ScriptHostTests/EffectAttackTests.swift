import Testing
@testable import MoonreelScriptHost

/// RELIABILITY.md's hostile scripts, run as effects: each must end with one clear line
/// naming the effect file, line and limit, within its limit, leaving the host usable.
@Suite struct EffectAttackTests {
    let project: Project
    let host: ScriptHost

    init() throws {
        project = try Project()
        host = try makeHost(project)
    }

    /// Loads `effects/attack.lua` (holding `body`) from a user script and returns the error.
    func attack(_ body: String, caller: String = "require \"effects.attack\"") throws -> (error: ScriptError, seconds: Double) {
        try project.write("effects/attack.lua", body)
        let result = try failure(of: caller, in: project, host: host)
        #expect(try host.string("return ('still ' .. 'usable')") == "still usable")
        return result
    }

    @Test func endlessLoopIsStoppedByTheTimeLimit() throws {
        let (error, seconds) = try attack("local x = 0\nwhile true do x = x + 1 end")
        #expect(error.message == "effects/attack.lua:2: script exceeded its time limit (0.5 s)")
        #expect(error.stop == .timeLimit)
        #expect(seconds < 1.5)
    }

    @Test func pcallCannotSwallowTheStop() throws {
        let (error, seconds) = try attack("""
            local caught = 0
            while true do
              pcall(function() while true do end end)
              caught = caught + 1
            end
            """)
        #expect(error.message == "effects/attack.lua:4: script exceeded its time limit (0.5 s)")
        #expect(seconds < 1.5)
    }

    @Test func nestedPcallsAndCoroutinesCannotSwallowTheStop() throws {
        let (error, seconds) = try attack("""
            local function spin() while true do end end
            while true do
              pcall(pcall, spin)
              xpcall(spin, function(m) return m end)
              coroutine.resume(coroutine.create(spin))
              pcall(string.rep, "x", 10)
            end
            """)
        #expect(error.message.hasPrefix("effects/attack.lua:"))
        #expect(error.message.hasSuffix(": script exceeded its time limit (0.5 s)"))
        #expect(seconds < 1.5)
    }

    @Test func instructionBudgetStopsATightLimit() throws {
        let limits = ScriptLimits(memory: 64 << 20, effect: RunLimits(instructions: 100_000, seconds: 10))
        let host = try makeHost(project, limits: limits)
        try project.write("effects/attack.lua", "local n = 0\nfor i = 1, math.maxinteger do n = n + i end")
        let (error, _) = try failure(of: "require 'effects.attack'", in: project, host: host)
        #expect(error.message == "effects/attack.lua:2: script exceeded its instruction limit (100000 instructions)")
        #expect(error.stop == .instructionLimit)
    }

    @Test func deepRecursionIsAnOrdinaryError() throws {
        // Overflowing Lua's stack takes about 0.2 s: more than the attack limit when tests share the cores.
        let host = try makeHost(project, limits: ScriptLimits(memory: 64 << 20, effect: RunLimits(seconds: 5)))
        try project.write("effects/attack.lua", "local function dive(n) return 1 + dive(n + 1) end\ndive(1)")
        let (error, _) = try failure(of: "require 'effects.attack'", in: project, host: host)
        #expect(error.message.hasPrefix("effects/attack.lua:1: stack overflow"))
        #expect(try host.string("return 'usable'") == "usable")
    }

    @Test func stringBombHitsTheMemoryLimit() throws {
        let (error, seconds) = try attack("local s = 'x'\nlocal big = string.rep(s, 200 * 1024 * 1024)")
        #expect(error.message == "effects/attack.lua:2: script exceeded its memory limit (64 MiB)")
        #expect(error.stop == .memoryLimit)
        #expect(seconds < 1.5)
    }

    @Test func tableBombHitsTheMemoryLimit() throws {
        let (error, _) = try attack("local t = {}\nfor i = 1, 1e9 do t[i] = i end")
        #expect(error.message == "effects/attack.lua:2: script exceeded its memory limit (64 MiB)")
    }

    @Test func memoryErrorCaughtAndRethrownKeepsItsPlace() throws {
        let (error, _) = try attack("""
            local ok, message = pcall(string.rep, "x", 1 << 30)
            error(message)
            """)
        #expect(error.message == "effects/attack.lua:2: script exceeded its memory limit (64 MiB)")
    }

    @Test func binaryChunksAreRefused() throws {
        try project.write("effects/attack.lua", "")
        try project.writeBytes("effects/attack.lua", Array("\u{1B}Lua\u{54}\u{00}".utf8))
        let (error, _) = try failure(of: "require 'effects.attack'", in: project, host: host)
        #expect(error.message == "effects/attack.lua: precompiled (binary) chunks are refused; Moonreel loads Lua source text only")
    }

    @Test func finalizersAreRefused() throws {
        let (error, _) = try attack("setmetatable({}, { __gc = function() while true do end end })")
        #expect(error.message == "effects/attack.lua:1: effects cannot set finalizers (__gc)")
    }

    @Test func errorObjectsWithLoopingTostringAreNotCalled() throws {
        let (error, seconds) = try attack("""
            error(setmetatable({}, { __tostring = function() while true do end end }))
            """)
        #expect(error.message == "effects/attack.lua:1: (error object is a table value)")
        #expect(seconds < 1.5)
    }

    @Test func dangerousLibrariesAreAbsent() throws {
        try project.write("effects/attack.lua", """
            return { apply = function()
              local found = {}
              for _, name in ipairs { "io", "os", "debug", "package", "load", "loadstring", "dofile",
                                      "loadfile", "require" } do
                if rawget(_G, name) ~= nil and name ~= "require" then found[#found + 1] = name end
                local ok, message = pcall(function() return _G[name] end)
                if name ~= "require" and (ok or not message:find("is not available to effects", 1, true)) then
                  found[#found + 1] = name .. " unexplained"
                end
              end
              if string.dump then found[#found + 1] = "string.dump" end
              local ok = pcall(collectgarbage, "collect")
              if ok then found[#found + 1] = "collectgarbage('collect')" end
              if type(collectgarbage("count")) ~= "number" then found[#found + 1] = "no count" end
              return table.concat(found, ",")
            end }
            """)
        #expect(try host.string("return require('effects.attack')()") == "")
    }

    @Test func collectgarbageOtherThanCountIsAnError() throws {
        let (error, _) = try attack("collectgarbage('stop')")
        #expect(error.message == "effects/attack.lua:1: collectgarbage: effects may only ask for \"count\"")
    }

    @Test func stringMetatableIsProtected() throws {
        let (error, _) = try attack("local mt = getmetatable('')\nmt.__index.upper = function() return 'pwned' end")
        #expect(error.message == "effects/attack.lua:2: attempt to index a nil value (local 'mt')")
        #expect(try host.string("return ('abc'):upper()") == "ABC")
    }

    @Test func globalsStayInsideTheEffect() throws {
        try project.write("effects/attack.lua", """
            leaked = "from effect"
            string.upper = function() return "pwned" end
            math.pi = 3
            return { apply = function() return leaked end }
            """)
        #expect(try host.string("return require('effects.attack')()") == "from effect")
        #expect(try host.string("return tostring(leaked) .. ' ' .. ('a'):upper() .. ' ' .. math.pi") == "nil A 3.1415926535898")
    }

    @Test func avIsAReadOnlyAllowList() throws {
        let (error, _) = try attack("av.layer = nil\n")
        #expect(error.message == "effects/attack.lua:1: av is read-only in effects")
        let (asset, _) = try attack("local a = av.asset('x.mov')")
        #expect(asset.message == "effects/attack.lua:1: av.asset is not available to effects")
        let (nested, _) = try attack("av.colors.white = 'pwned'")
        #expect(nested.message == "effects/attack.lua:1: av.colors is read-only in effects")
        try project.write("effects/attack.lua", "return { apply = function() return av.layer{ x = 1 }.x + #av.colors.white end }")
        #expect(try host.string("return tostring(require('effects.attack')())") == "8")
    }

    @Test func effectsCannotTamperWithOtherEffects() throws {
        try project.write("effects/victim.lua", "return { state = { n = 1 }, apply = function() return 'honest' end }")
        let (rawset, _) = try attack("local victim = require 'effects.victim'\nrawset(victim, 'apply', function() return 'evil' end)")
        #expect(rawset.message == "effects/attack.lua:2: rawset: cannot change a protected table")
        let (state, _) = try attack("local victim = require 'effects.victim'\nvictim.state.n = 2")
        #expect(state.message == "effects/attack.lua:2: victim.state is read-only in effects")
        #expect(try host.string("local v = require 'effects.victim' return v.apply() .. v.state.n") == "honest1")
    }

    /// Read-only tables can be walked (pairs, #) as they can be read, and no further: the
    /// allow list holds for pairs, nested tables stay read-only, nothing can be written.
    @Test func readOnlyTablesCanBeWalkedNotChanged() throws {
        try project.write("effects/victim.lua", "return { state = { n = 1, list = { 'a', 'b' } }, apply = function() return 'honest' end }")
        let walked = try host.string("""
            local v = require 'effects.victim'
            local keys = {}
            for key in pairs(v.state) do keys[#keys + 1] = key end
            table.sort(keys)
            return table.concat(keys, ',') .. ' ' .. #v.state.list .. ' ' .. v.state.list[2]
            """)
        #expect(walked == "list,n 2 b")
        let (nested, _) = try attack("local victim = require 'effects.victim'\nfor _, t in pairs(victim.state) do if type(t) == 'table' then t[3] = 'c' end end")
        #expect(nested.message == "effects/attack.lua:2: victim.state.list is read-only in effects")
        try project.write("effects/lister.lua", """
            return { apply = function()
              local names = {}
              for name in pairs(av) do names[#names + 1] = name end
              table.sort(names)
              return table.concat(names, ' ')
            end }
            """)
        let listed = try host.string("return require('effects.lister')()")
        #expect(listed == "colors layer", "av lists only what effects may use (not asset): \(listed)")
    }

    @Test func pathologicalPatternIsStopped() throws {
        let (error, seconds) = try attack("""
            local s = string.rep("a", 30000)
            return s:find(".-.-.-.-.-.-b")
            """)
        #expect(error.message == "effects/attack.lua:2: script exceeded its time limit (0.5 s)")
        #expect(seconds < 1.5)
    }

    @Test func pathologicalPatternInsidePcallIsStoppedAgain() throws {
        let (error, seconds) = try attack("""
            local s = string.rep("a", 30000)
            while true do pcall(string.match, s, ".-.-.-.-.-.-b") end
            """)
        #expect(error.message == "effects/attack.lua:2: script exceeded its time limit (0.5 s)")
        #expect(seconds < 1.5)
    }

    @Test func quadraticPlainFindIsStopped() throws {
        let (error, seconds) = try attack("""
            local s = string.rep("a", 4000000)
            local needle = string.rep("a", 100000) .. "b"
            return s:find(needle, 1, true)
            """)
        #expect(error.message == "effects/attack.lua:3: script exceeded its time limit (0.5 s)")
        #expect(seconds < 1.5)
    }

    @Test func strangeNumbersAndStringsAreHarmless() throws {
        try project.write("effects/attack.lua", """
            return { apply = function()
              local values = { 1/0, -1/0, math.maxinteger, math.mininteger, 1e308 * 10,
                               "\\0\\255\\254invalid", string.rep("\\0", 10) }
              local out = {}
              for i, v in ipairs(values) do out[i] = type(v) .. ":" .. #tostring(v) end
              return table.concat(out, " ") .. " " .. tostring(utf8.len("\\255")) .. "|" .. #("a\\0b"):gsub("\\0", "")
            end }
            """)
        let text = try host.string("return tostring(require('effects.attack')())")
        #expect(text == "number:3 number:4 number:19 number:20 number:3 string:10 string:10 nil|2")
    }

    @Test func hostSurvivesManyAttacksInARow() throws {
        for _ in 0..<3 {
            _ = try attack("while true do end")
            _ = try attack("local t = {} for i = 1, 1e9 do t[i] = i end")
            _ = try attack("return ('x'):rep(1e8)")
        }
    }
}
