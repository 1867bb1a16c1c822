import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

extension API {
    /// Reads the fields of the options table at `index` (nil or absent: none) through
    /// `readers`, each given the value's stack index; a name not among them is an error
    /// naming those that are. Entries 1…`positional` are left to the caller.
    func options(_ call: LuaCall, _ index: Int32, _ readers: [String: (Int32) throws -> Void], positional: Int = 0) throws {
        guard !call.isNoneOrNil(index) else { return }
        guard call.type(index) == LUA_TTABLE else { throw call.typeError(index, expected: "table of options") }
        let table = call.absolute(index)
        let L = call.L
        let names = readers.keys.sorted().joined(separator: ", ")
        lua_pushnil(L)                                              // key
        while lua_next(L, table) != 0 {                             // key value
            if positional > 0, lua_type(L, -2) == LUA_TNUMBER, lua_isinteger(L, -2) != 0,
               (1...positional).contains(Int(lua_tointegerx(L, -2, nil))) {
                call.pop()                                          // key
                continue
            }
            guard lua_type(L, -2) == LUA_TSTRING else {
                let problem = "unexpected \(call.typeName(-1)) entry; options are named (\(names))"
                call.pop(2)
                throw call.argumentError(index, problem)
            }
            let name = LuaState.string(L, at: -2)
            guard let read = readers[name] else {
                call.pop(2)
                throw call.argumentError(index, "unknown option \(name.quotedForMessage()) (options: \(names))")
            }
            do {
                try read(call.absolute(-1))
            } catch {
                call.pop(2)
                guard let problem = error as? LuaArgumentError else { throw error }
                throw call.argumentError(index, "field '\(name)': \(problem.message.argumentReason)")
            }
            call.pop()                                              // key
        }
    }
}
