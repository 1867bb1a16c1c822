import Testing
@testable import ScriptHost

@Suite struct LuaStateTests {
    @Test func runsCode() throws {
        let lua = try LuaState()
        try lua.run("return 1 + 1", chunkName: "=t")
    }
}
