import Testing
@testable import MoonreelScriptHost

/// Effect code runs under the effect's limits however it is reached: each effect has a Lua
/// state of its own, and what crosses back is a copy or a proxy that enters that state.
/// The host's limits here: effects 0.5 s, the script 3 s, so an effect's code that escaped
/// its limits would be stopped by the script's, later and with another message.
extension EffectAttackTests {
    static let effectTimeLimit = "script exceeded its time limit (0.5 s)"

    @Test func aFunctionAnEffectReturnsRunsUnderTheEffectsLimits() throws {
        let (error, seconds) = try attack("""
            return { apply = function()
              return function() while true do end end
            end }
            """, caller: "local spin = require('effects.attack')()\nspin()")
        #expect(error.message == "effects/attack.lua:2: \(Self.effectTimeLimit)")
        #expect(error.stop == .timeLimit)
        #expect(seconds < 1.5)
    }

    @Test func functionsKeptInTablesRunUnderTheEffectsLimits() throws {
        let (error, seconds) = try attack("""
            return { apply = function() return { nested = { spin = function() while true do end end } } end,
                     helper = function() while true do end end }
            """, caller: "local e = require('effects.attack')\nlocal ok = pcall(e().nested.spin)\ne.helper()")
        #expect(error.message == "effects/attack.lua:2: \(Self.effectTimeLimit)")
        #expect(seconds < 2.5)
    }

    @Test func metatablesOfReturnedTablesStayBehind() throws {
        try project.write("effects/attack.lua", """
            return { apply = function()
              return setmetatable({ plain = 1 }, { __index = function() while true do end end,
                                                   __len = function() while true do end end })
            end }
            """)
        #expect(try host.string("local t = require('effects.attack')() return tostring(t.missing) .. #t .. t.plain") == "nil01")
    }

    @Test func stoppedMessageHandlersAreSkipped() throws {
        let (error, seconds) = try attack("""
            xpcall(function() while true do end end,
                   function() while true do end end)
            """, caller: "require 'effects.attack'")
        #expect(error.message.hasSuffix(Self.effectTimeLimit), "\(error.message)")
        #expect(seconds < 1.5)
    }

    @Test func closeHandlersOfAStoppedCoroutineNeverRun() throws {
        let (error, seconds) = try attack("""
            local f = coroutine.wrap(function()
              local guard <close> = setmetatable({}, { __close = function() while true do end end })
              while true do end
            end)
            f()
            """, caller: "require 'effects.attack'")
        #expect(error.message.hasSuffix(Self.effectTimeLimit), "\(error.message)")
        #expect(seconds < 1.5)
    }

    @Test func aStoppedCoroutineCannotBeClosedLater() throws {
        try project.write("effects/attack.lua", """
            local stopped
            return { apply = function()
              if stopped then return coroutine.close(stopped) end
              stopped = coroutine.create(function()
                local guard <close> = setmetatable({}, { __close = function() while true do end end })
                while true do end
              end)
              coroutine.resume(stopped)
            end }
            """)
        let path = try project.write("main.lua", "attack = require 'effects.attack'\nlocal ok, message = pcall(attack)\nassert(not ok)")
        try host.runScript(atPath: path)
        let start = ContinuousClock.now
        #expect { try host.evaluate("attack()") } throws: { error in
            (error as? ScriptError)?.message.hasSuffix("cannot close a coroutine that a limit stopped") == true
        }
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    @Test func errorsWithoutAPlaceNameTheEffect() throws {
        let (error, _) = try attack("coroutine.yield()", caller: "\nrequire 'effects.attack'")
        #expect(error.message == "main.lua:2: effect \"attack\": attempt to yield from outside a coroutine")
    }

    @Test func callsBackAndForthNestOnlySoDeep() throws {
        let (error, _) = try attack("return { apply = function(p) return p.again() end }",
                                    caller: "local e = require 'effects.attack'\nlocal function again() return e{ again = again } end\nagain()")
        #expect(error.message.contains("calls between the script and effects nest more than 32 deep"), "\(error.message)")
    }

    @Test func valuesCrossAsCopies() throws {
        try project.write("effects/attack.lua", """
            return { apply = function(p)
              p.list[1] = "changed by the effect"
              local shared = p.pair[1] == p.pair[2]
              return { text = p.text, n = p.n, shared = shared, back = p.callback, looped = p.loop.self == p.loop }
            end }
            """)
        let result = try host.string("""
            local list, item = { "mine" }, {}
            local loop = {}; loop.self = loop
            local function callback() return "called" end
            local r = require('effects.attack'){ list = list, pair = { item, item }, text = "é\\0x", n = 2^53, callback = callback, loop = loop }
            return table.concat({ list[1], tostring(r.shared), r.text, math.type(r.n), tostring(r.back == callback),
                                  tostring(r.looped) }, " ")
            """)
        #expect(result == "mine true é\0x float true true")
    }

    @Test func threadsAndForeignUserdataDoNotCross() throws {
        let (error, _) = try attack("return { apply = function() end }",
                                    caller: "require('effects.attack'){ file = io.stdout }")
        #expect(error.message.contains("a userdata cannot be passed between the script and effect \"attack\""), "\(error.message)")
    }

    @Test func anEffectsMemoryIsItsOwn() throws {
        let limits = ScriptLimits(memory: 256 << 20, effectMemory: 16 << 20, script: RunLimits(seconds: 10),
                                  effect: RunLimits(seconds: 5))
        let host = try makeHost(project, limits: limits)
        try project.write("effects/attack.lua", "return { apply = function() return #string.rep('x', 32 << 20) end }")
        #expect { try host.evaluate("require('effects.attack')()") } throws: { error in
            (error as? ScriptError)?.message == "effects/attack.lua:1: script exceeded its memory limit (16 MiB)"
        }
        // The same string is fine in the script, and a big value passed in does not fit.
        #expect(try host.string("return tostring(#string.rep('x', 32 << 20))") == "33554432")
        #expect { try host.evaluate("require('effects.attack'){ big = string.rep('x', 32 << 20) }") } throws: { error in
            (error as? ScriptError)?.message.contains("exceed the memory limit (16 MiB)") == true
        }
    }

    @Test func stopsAreReadFromTheBudgetNotTheMessage() throws {
        let (error, _) = try attack("error('script exceeded its time limit (9 s)', 0)", caller: "require 'effects.attack'")
        #expect(error.stop == nil)
        #expect { try host.evaluate("error('interrupted', 0)") } throws: { ($0 as? ScriptError)?.stop == nil }
    }
}
