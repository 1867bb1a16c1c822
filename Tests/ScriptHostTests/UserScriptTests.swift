import Foundation
import Testing
import CMoonLua
import CMoonLuaShim
@testable import MoonreelScriptHost

@Suite struct UserScriptTests {
    let project: Project

    init() throws { project = try Project() }

    @Test func argumentsArriveAsArgAndVarargs() throws {
        let host = try makeHost(project)
        let path = try project.write("main.lua", "result = table.concat({ arg[1], arg[2], select('#', ...), ... }, ',') .. ',' .. arg[0]")
        try host.runScript(atPath: path, arguments: ["song.mov", "lyrics.csv"])
        #expect(try host.string("return result") == "song.mov,lyrics.csv,2,song.mov,lyrics.csv,\(path)")
    }

    @Test func shebangAndBomKeepLineNumbers() throws {
        let (error, _) = try failure(of: "\u{FEFF}#!/usr/bin/env moonreel\nlocal x = nil\nreturn x.y", in: project)
        #expect(error.message == "main.lua:3: attempt to index a nil value (local 'x')")
        #expect(error.traceback?.hasPrefix("stack traceback:") == true)
        #expect(error.file == "main.lua" && error.line == 3)
    }

    @Test func longPathsKeepTheFileName() {
        #expect(ScriptHost.displayName(of: "lyrics.lua") == "lyrics.lua")
        #expect(ScriptHost.displayName(of: "/very/long/path/that/goes/on/and/on/and/on/for/ever/and/ever/lyrics.lua")
                == "that/goes/on/and/on/and/on/for/ever/and/ever/lyrics.lua")
    }

    @Test func missingScriptIsAFileError() throws {
        let host = try makeHost(project)
        #expect { try host.runScript(atPath: project.root + "/nope.lua") } throws: { error in
            let error = error as? ScriptError
            return error?.kind == .file && error?.message == "cannot open \(project.root)/nope.lua: No such file or directory"
        }
    }

    @Test func binaryScriptsAndChunksAreRefused() throws {
        let host = try makeHost(project)
        let path = try project.writeBytes("compiled.lua", [0x1B, 0x4C, 0x75, 0x61, 0x54, 0x00])
        #expect { try host.runScript(atPath: path) } throws: { error in
            (error as? ScriptError)?.message == "compiled.lua: precompiled (binary) chunks are refused; Moonreel loads Lua source text only"
        }
        #expect(try host.string("return select(2, load(string.dump(function() end)))") == "attempt to load a binary chunk (mode is 't')")
        #expect(try host.string("return tostring(load('return 7', 'x', 'b')())") == "7")
        try project.writeBytes("binmod.lua", [0x1B, 0x4C, 0x75, 0x61, 0x54, 0x00])
        #expect(try host.string("return select(2, pcall(loadfile, '\(path)')) or 'refused'") == "refused")
        #expect(try host.string("return select(2, pcall(dofile, '\(path)'))").hasSuffix("attempt to load a binary chunk (mode is 't')"))
        let required = try host.string("package.path = '\(project.root)/?.lua'; return select(2, pcall(require, 'binmod'))")
        #expect(required.hasSuffix("attempt to load a binary chunk (mode is 't')"))
    }

    @Test func stringMetatableIsHiddenFromUserScriptsToo() throws {
        let host = try makeHost(project)
        #expect(try host.string("return tostring(getmetatable(''))") == "false")
    }

    @Test func scriptTimeLimitCannotBeSwallowedByPcall() throws {
        let limits = ScriptLimits(memory: 64 << 20, script: RunLimits(seconds: 0.3))
        let host = try makeHost(project, limits: limits)
        let (error, seconds) = try failure(of: "while true do pcall(function() while true do end end) end", in: project, host: host)
        #expect(error.message == "main.lua:1: script exceeded its time limit (0.3 s)")
        #expect(seconds < 1.0)
        #expect(try host.string("return 'next run is not limited by the old deadline'").hasPrefix("next"))
    }

    /// Lua runs a message handler, and the close handlers of a coroutine that died, with hooks
    /// off when the error was a limit's stop: they are skipped, so the limit holds.
    @Test(arguments: [
        "xpcall(function() while true do end end, function() while true do end end)",
        "coroutine.wrap(function() local c <close> = setmetatable({}, { __close = function() while true do end end }) while true do end end)()",
    ])
    func handlersCannotOutliveTheScriptsLimit(script: String) throws {
        let limits = ScriptLimits(memory: 64 << 20, script: RunLimits(seconds: 0.3))
        let host = try makeHost(project, limits: limits)
        let (error, seconds) = try failure(of: script, in: project, host: host)
        #expect(error.message.hasSuffix("script exceeded its time limit (0.3 s)"), "\(error.message)")
        #expect(error.stop == .timeLimit)
        #expect(seconds < 1.0)
    }

    @Test func patternWatchdogWorksForUserScripts() throws {
        let limits = ScriptLimits(memory: 64 << 20, script: RunLimits(seconds: 0.3))
        let host = try makeHost(project, limits: limits)
        let (error, seconds) = try failure(of: "local s = ('a'):rep(30000)\nfor w in s:gmatch('.-.-.-.-.-.-b') do end", in: project, host: host)
        #expect(error.message == "main.lua:2: script exceeded its time limit (0.3 s)")
        #expect(seconds < 1.0)
    }

    @Test func interruptFromAnotherThreadStopsTheScript() throws {
        let host = try makeHost(project)
        let interrupter = host.interrupter
        let path = try project.write("main.lua", "local n = 0\nwhile true do n = n + 1 end")
        let start = ContinuousClock.now
        Thread.detachNewThread {
            usleep(100_000)
            interrupter.interrupt()
        }
        #expect { try host.runScript(atPath: path) } throws: { error in
            let error = error as? ScriptError
            return error?.message == "main.lua:2: interrupted" && error?.stop == .interrupted
        }
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect(try host.string("return 'cleared'") == "cleared")
    }

    @Test func memoryLimitNamesTheLineAndTheHostStaysUsable() throws {
        let (error, _) = try failure(of: "local parts = {}\nlocal s = ('x'):rep(100 * 1024 * 1024)", in: project)
        #expect(error.message == "main.lua:2: script exceeded its memory limit (64 MiB)")
        #expect(error.kind == .memory && error.stop == .memoryLimit)
    }

    @Test func hostCodeBetweenRunsIsNotCapped() throws {
        let host = try makeHost(project)
        let L = host.lua.L
        // Past the cap, host code still allocates (an unprotected allocation error would
        // abort the process)...
        LuaState.push(L, String(repeating: "y", count: 80 << 20))
        lua_setglobal(L, "big")
        #expect(host.lua.memoryUsed > 64 << 20)
        // ...while scripts are refused until memory is freed.
        #expect { try host.evaluate("return #big") } throws: { ($0 as? ScriptError)?.stop == .memoryLimit }
        lua_pushnil(L)
        lua_setglobal(L, "big")
        moon_gc(L, LUA_GCCOLLECT, 0)
        #expect(try host.string("return ('ok'):rep(2)") == "okok")
    }
}
