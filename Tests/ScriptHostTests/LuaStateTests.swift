import Testing
import CMoonLua
import CMoonLuaShim
@testable import MoonreelScriptHost

@Suite struct LuaStateTests {
    @Test func runsCode() throws {
        let lua = try LuaState()
        let results = try lua.run("return 1 + 1, 'two'", chunkName: "=t")
        #expect(results == 2)
        #expect(lua_tointegerx(lua.L, -2, nil) == 2)
        #expect(LuaState.string(lua.L, at: -1) == "two")
        #expect(throws: ScriptError.self) { try lua.run("return +", chunkName: "=t") }
    }

    /// A Swift function is never refused an allocation (Lua would longjmp through it); one
    /// that leaves the heap over the cap fails once it has returned, as Lua's own would.
    @Test func swiftFunctionsOverTheCapFailAfterReturning() throws {
        let lua = try LuaState(memoryLimit: 4 << 20)
        moon_newtable(lua.L)
        lua.setFunction("big") { call in
            call.push(String(repeating: "z", count: 8 << 20))
            return 1
        }
        lua.setFunction("garbage") { call in
            call.push(String(repeating: "z", count: 8 << 20))
            call.pop()
            return 0
        }
        lua.setGlobal("host")
        #expect { try lua.run("local s = host.big(); return #s", chunkName: "=t") } throws: {
            ($0 as? ScriptError)?.stop == .memoryLimit
        }
        // Garbage left by the function is collected before judging: this one fits.
        let results = try lua.run("host.garbage(); return 'still here'", chunkName: "=t")
        #expect(results == 1 && LuaState.string(lua.L, at: -1) == "still here")
    }

    /// A Swift function finds the host's context from its call, in a coroutine too; without
    /// one it raises a clear internal error at the script's line instead of trapping.
    @Test func functionsFindTheirContextFromTheCall() throws {
        final class Host { let name = "the host" }
        let lua = try LuaState()
        moon_newtable(lua.L)
        lua.setFunction("name") { call in
            call.push(try call.context(Host.self).name)
            return 1
        }
        lua.setGlobal("host")
        #expect { try lua.run("return host.name()", chunkName: "=t") } throws: {
            "\($0)".contains("t:1: internal error: 'name' found no Host in its Lua state")
        }
        var host: Host? = Host()
        lua.setContext(try #require(host))
        weak var kept = host
        host = nil
        #expect(kept != nil)
        try lua.callProtected(luaopen_coroutine, resultCount: 1)
        lua.setGlobal("coroutine")
        let results = try lua.run("return host.name(), coroutine.wrap(host.name)()", chunkName: "=t")
        #expect(results == 2 && LuaState.string(lua.L, at: -2) == "the host" && LuaState.string(lua.L, at: -1) == "the host")
    }

    /// Swift reads tables raw: an `__index` that raises never runs from a Swift frame.
    @Test func swiftReadsTablesWithoutMetamethods() throws {
        let lua = try LuaState()
        try lua.callProtected(luaopen_base)
        moon_newtable(lua.L)
        lua.setFunction("field") { call in
            call.pushField(of: 1, "x")
            call.pushElement(of: 1, 1)
            return 2
        }
        lua.setGlobal("host")
        let results = try lua.run("""
            local trap = setmetatable({}, { __index = function() error("ran") end })
            return host.field(trap)
            """, chunkName: "=t")
        #expect(results == 2 && lua_type(lua.L, -1) == LUA_TNIL && lua_type(lua.L, -2) == LUA_TNIL)
    }
}
