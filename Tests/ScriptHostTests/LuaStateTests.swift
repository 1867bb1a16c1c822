import Testing
import CMoonLua
@testable import ScriptHost

@Suite struct LuaStateTests {
    @Test func runsCode() throws {
        let lua = try LuaState()
        let results = try lua.run("return 1 + 1, 'two'", chunkName: "=t")
        #expect(results == 2)
        #expect(lua_tointegerx(lua.L, -2, nil) == 2)
        #expect(LuaState.string(lua.L, at: -1) == "two")
        #expect(throws: LuaError.self) { try lua.run("return +", chunkName: "=t") }
    }
}
