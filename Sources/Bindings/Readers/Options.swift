import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

extension LuaCall {
    /// Reads the fields of the options table at `index` (nil or absent: none) through
    /// `readers`, each given the value's stack index; a name not among them is an error
    /// naming those that are. Entries 1…`positional` are left to the caller.
    func options(_ index: Int32, _ readers: [String: (Int32) throws -> Void], positional: Int = 0) throws {
        guard !isNoneOrNil(index) else { return }
        guard type(index) == LUA_TTABLE else { throw typeError(index, expected: "table of options") }
        let table = absolute(index)
        let names = readers.keys.sorted().joined(separator: ", ")
        lua_pushnil(L)                                              // key
        while lua_next(L, table) != 0 {                             // key value
            if positional > 0, lua_type(L, -2) == LUA_TNUMBER, lua_isinteger(L, -2) != 0,
               (1...positional).contains(Int(lua_tointegerx(L, -2, nil))) {
                pop()                                          // key
                continue
            }
            guard lua_type(L, -2) == LUA_TSTRING else {
                let problem = "unexpected \(typeName(-1)) entry; options are named (\(names))"
                pop(2)
                throw argumentError(index, problem)
            }
            let name = LuaState.string(L, at: -2)
            guard let read = readers[name] else {
                pop(2)
                throw argumentError(index, "unknown option \(name.quotedForMessage()) (options: \(names))")
            }
            do {
                try read(absolute(-1))
            } catch {
                pop(2)
                guard let problem = error as? LuaArgumentError else { throw error }
                throw argumentError(index, "field '\(name)': \(problem.message.argumentReason)")
            }
            pop()                                              // key
        }
    }
}
