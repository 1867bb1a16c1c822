import Testing
import CMoonLua
import CMoonLuaShim
@testable import MoonreelScriptHost

/// A Swift function's `KindedError` reaches Lua as the same positioned string as any error,
/// and that string answers `kind`, `subject` and `message`; other strings answer nil.
@Suite struct ErrorFieldsTests {
    struct Missing: KindedError, CustomStringConvertible {
        let path: String
        var errorKindName: String { "notFound" }
        var errorSubject: String? { path }
        var description: String { "input \"\(path)\": no such file" }
    }

    func state() throws -> LuaState {
        let lua = try LuaState()
        try lua.callProtected(moon_open_user_libraries)
        moon_newtable(lua.L)
        lua.setFunction("open") { call in throw Missing(path: try call.string(1)) }
        lua.setFunction("plain") { _ in throw PlainError() }
        lua.setGlobal("host")
        return lua
    }

    struct PlainError: Error, CustomStringConvertible { var description: String { "plain failure" } }

    func strings(_ lua: LuaState, _ code: String) throws -> [String] {
        let count = try lua.run(code, chunkName: "=t")
        return (0..<count).map { LuaState.string(lua.L, at: Int32($0) - count) }
    }

    @Test func theErrorStringAnswersItsFields() throws {
        let lua = try state()
        let out = try strings(lua, """
            local ok, err = pcall(function() host.open("a.mp4") end)
            return err, type(err), err.kind, err.subject, err.message, err:upper():sub(1, 3), "x" .. err
            """)
        #expect(out == ["t:1: input \"a.mp4\": no such file", "string", "notFound", "a.mp4",
                        "input \"a.mp4\": no such file", "T:1", "xt:1: input \"a.mp4\": no such file"])
    }

    @Test func otherStringsAndErrorsHaveNoFields() throws {
        let lua = try state()
        let out = try strings(lua, """
            local _, plain = pcall(host.plain)
            local _, own = pcall(error, "mine")
            return plain, tostring(plain.kind), tostring(own.kind), tostring(("kind").kind), ("abc"):len()
            """)
        #expect(out == ["plain failure", "nil", "nil", "nil", "3"])
    }

    @Test func theStateRemembersARecentErrorsOnly() throws {
        let lua = try state()
        let out = try strings(lua, """
            local _, first = pcall(host.open, "first")
            for i = 1, 200 do pcall(host.open, "f" .. i) end
            local _, last = pcall(host.open, "last")
            return tostring(first.kind), last.kind
            """)
        #expect(out == ["nil", "notFound"])
    }
}
