import Testing
import CMoonLua
import CMoonLuaShim
@testable import MoonreelScriptHost

/// The budgeted matcher must answer exactly as Lua's own: each expression runs in a host
/// (budgeted string library) and in a bare state with Lua's lstrlib, and the printed
/// results (or error messages) must match.
@Suite struct PatternTests {
    static let expressions = [
        #"string.find("hello world", "o w")"#, #"string.find("hello", "l+")"#, #"string.find("hello", "xyz")"#,
        #"string.find("a.b", ".", 1, true)"#, #"string.find("abc", "b", -1)"#, #"string.find("abc", "", 10)"#,
        #"string.find("abc", "", 4)"#, #"string.find("abc", "^b")"#, #"string.find("aaa", "a-", 2)"#,
        #"string.match("key = value", "(%w+)%s*=%s*(%w+)")"#, #"string.match("2024-11-22", "(%d+)-(%d+)-(%d+)")"#,
        #"string.match("hello", "()ll()")"#, #"string.match("  trim  ", "^%s*(.-)%s*$")"#,
        #"string.match("THE (quick) fox", "%((%a+)%)")"#, #"string.match("f(a(b)c)d", "%b()")"#,
        #"string.match("THE (quick) fox", "%f[%a]%a+", 5)"#, #"string.match("x = 'a' .. 'b'", "(['\"])(.-)%1")"#,
        #"string.match("abc", "[^%a]")"#, #"string.match("a-z", "[a%-z]+")"#, #"string.match("]x", "[]x]+")"#,
        #"string.match("hello", ".-(l+)(.*)")"#, #"string.match("\0a\0", "%z")"#, #"string.match("a\0b", "a%zb")"#,
        #"string.match("caf\195\169", "[\128-\255]+")"#, #"string.match("x", "(")"#, #"string.match("x", "%")"#,
        #"string.match("x", "[a")"#, #"string.match("x", "%b")"#, #"string.match("x", "%f")"#, #"string.match("x", "%1")"#,
        #"string.match("x", "(()")"#, #"string.match("abc", "((a)(b))")"#, #"string.match("x", ")")"#,
        #"select('#', string.match(("a"):rep(40), ("(a)"):rep(33)))"#,
        #"string.gsub("hello world", "o", "0")"#, #"string.gsub("hello", "", "-")"#, #"string.gsub("abc", "%w", "%0%0")"#,
        #"string.gsub("hello world", "(%w+)", "<%1>")"#, #"string.gsub("abc", "b", "%2")"#, #"string.gsub("abc", "b", "%")"#,
        #"string.gsub("$name is $age", "%$(%w+)", { name = "Ann", age = 7 })"#,
        #"string.gsub("one two", "%w+", function(w) if w == "one" then return 1 end end)"#,
        #"string.gsub("abc", "%w", function() return {} end)"#, #"string.gsub("aaa", "a", "b", 2)"#,
        #"string.gsub("abc", "^a", "x")"#, #"string.gsub("hello", "l*", "x")"#, #"string.gsub("abc", "()", "%1")"#,
        #"string.gsub("abc", "a", 5)"#, #"string.gsub("abc", "a", true)"#, #"string.gsub("abc", "a", "x", -1)"#,
        #"(function() local t = {} for k, v in string.gmatch("a=1, b=2", "(%w+)=(%w+)") do t[#t+1] = k..v end return table.concat(t, ";") end)()"#,
        #"(function() local t = {} for w in ("one two  three"):gmatch("%a*") do t[#t+1] = "<"..w..">" end return table.concat(t) end)()"#,
        #"(function() local t = {} for p in ("abc"):gmatch("()", 2) do t[#t+1] = p end return table.concat(t, ",") end)()"#,
        #"(function() local t = {} for w in ("abc"):gmatch(".", 10) do t[#t+1] = w end return #t end)()"#,
        #"string.find(("a"):rep(300), ("a?"):rep(300) .. ("a"):rep(300))"#,
        #"string.rep("x", 3, ",")"#, #"("x"):find("x", 1.0)"#, #"pcall(string.find, "x", "x", 1.5)"#,
    ]

    /// Evaluates `expression` and renders its results (or its error) as one string.
    static func render(_ expression: String, in L: OpaquePointer) -> String {
        let code = "local r = table.pack(pcall(function() return \(expression) end)) "
            + "for i = 1, r.n do r[i] = type(r[i]) == 'string' and string.format('%q', r[i]) or tostring(r[i]) end "
            + "return table.concat(r, ' ', 1, r.n)"
        let base = lua_gettop(L)
        defer { lua_settop(L, base) }
        guard luaL_loadbufferx(L, code, code.utf8.count, "=test", "t") == LUA_OK,
              moon_pcall(L, 0, 1, 0) == LUA_OK else { return "host failure: \(LuaState.string(L, at: -1))" }
        return LuaState.string(L, at: -1)
    }

    @Test func budgetedMatcherAgreesWithLua() throws {
        let host = try ScriptHost(searchPath: EffectSearchPath())
        let reference = try LuaState()
        luaL_openlibs(reference.L)
        for expression in PatternTests.expressions {
            #expect(PatternTests.render(expression, in: host.lua.L) == PatternTests.render(expression, in: reference.L),
                    "\(expression)")
        }
    }
}
