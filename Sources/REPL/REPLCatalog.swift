import MoonreelEngine
import MoonreelScriptHost
import MoonreelBindings
import CMoonLua
import CMoonLuaShim

/// `help()` and tab completion for the REPL, both read from the same `LuaClass` tables and
/// `av` function list that register the bindings, so they cannot drift from the API.
/// Everything here works the Lua stack with raw accesses only: no metamethod runs, so
/// nothing can raise an error through these Swift frames.
struct REPLCatalog {
    let host: MoonreelHost

    private var L: OpaquePointer { host.lua.L }

    // MARK: help

    static let commandHelp = """
        REPL commands:
          :snapshot T [file.png]  write the current composition's frame at T seconds (default file snapshot-N.png)
          :studio                 show the current composition live in the browser (the page follows every statement)
          :probe FILE             what the engine sees in a media file
          :load FILE              run a script file in this session
          :save FILE              write the statements that ran without an error as a script (:save! replaces a file)
          :reset                  start a fresh session (all globals are lost)
          :quit                   leave (Ctrl-D too)
        """

    var overview: String {
        let functions = host.api.functionHelp.map { "  " + $0.doc }.joined(separator: "\n")
        let classes = host.api.classes.all.map(\.name).sorted().joined(separator: ", ")
        return """
            av functions:
            \(functions)
            classes: \(classes)
            help(av.NAME), help("Class") or help(value) shows a class's properties and methods.
            \(REPLCatalog.commandHelp)
            """
    }

    /// Help for the value at `index`: a class name or `av.` function name (string), an `av`
    /// function, or a Moonreel object.
    func help(forValueAt index: Int32) -> String {
        switch lua_type(L, index) {
        case LUA_TNONE, LUA_TNIL:
            return overview
        case LUA_TSTRING:
            return help(forName: LuaState.string(L, at: index))
        case LUA_TUSERDATA:
            guard let name = className(at: index), let luaClass = host.lua.luaClass(named: name) else { break }
            return describe(luaClass)
        case LUA_TFUNCTION:
            guard let name = avFunctionName(at: index) else { break }
            return help(forName: name)
        case LUA_TTABLE:
            if avFunctionName(at: index) == "av" { return overview }
        default:
            break
        }
        let type = String(cString: lua_typename(L, lua_type(L, index)))
        return "no help for this \(type); help() lists the av functions and classes"
    }

    private func help(forName name: String) -> String {
        let bare = name.hasPrefix("av.") ? String(name.dropFirst(3)) : name
        let function = host.api.functionHelp.first { $0.name == "av." + bare }
        // av.exportSession makes an ExportSession: show the function and the class it makes.
        let className = bare.prefix(1).uppercased() + bare.dropFirst()
        let luaClass = host.api.classes.all.first { $0.name == className || $0.name == bare }
        let parts = [function?.doc, luaClass.map(describe)].compactMap { $0 }
        guard !parts.isEmpty else {
            let names = host.api.functionHelp.map(\.name) + host.api.classes.all.map(\.name)
            let near = NameSuggestion.closest(to: name.hasPrefix("av.") ? name : bare, among: names + names.map { String($0.dropFirst(3)) })
            return "no av function or class named \"\(name)\"\(near.map { "; did you mean \($0)?" } ?? ""); help() lists them"
        }
        return parts.joined(separator: "\n")
    }

    private func describe(_ luaClass: LuaClass) -> String {
        var lines = [luaClass.doc.isEmpty ? luaClass.name : "\(luaClass.name): \(luaClass.doc)"]
        if let parent = luaClass.parent { lines.append("  (a kind of \(parent.name): it has all of its properties and methods)") }
        let properties = luaClass.allProperties.sorted { $0.key < $1.key }
        if !properties.isEmpty {
            let width = properties.map(\.key.count).max() ?? 0
            lines.append("properties:")
            for (name, property) in properties {
                let note = [property.doc, property.set == nil ? "(read-only)" : ""].filter { !$0.isEmpty }.joined(separator: " ")
                lines.append("  " + name + String(repeating: " ", count: width - name.count) + "  " + note)
            }
        }
        let methods = luaClass.allMethods
        if !methods.isEmpty {
            lines.append("methods:")
            lines += methods.map { "  " + ($0.doc.isEmpty ? ":\($0.name)(...)" : $0.doc) }
        }
        return lines.joined(separator: "\n")
    }

    /// "av.NAME" if the value at `index` is a function of the global `av` table, "av" for
    /// the table itself.
    private func avFunctionName(at index: Int32) -> String? {
        let value = lua_absindex(L, index)
        let base = lua_gettop(L)
        defer { lua_settop(L, base) }
        moon_pushglobaltable(L)
        lua_pushstring(L, "av")
        guard lua_rawget(L, -2) == LUA_TTABLE else { return nil }
        if lua_rawequal(L, -1, value) != 0 { return "av" }
        lua_pushnil(L)
        while lua_next(L, -2) != 0 {
            if lua_type(L, -2) == LUA_TSTRING, lua_rawequal(L, -1, value) != 0 {
                return "av." + LuaState.string(L, at: -2)
            }
            moon_pop(L, 1)
        }
        return nil
    }

    /// The class of a Moonreel userdata ("Composition"), or nil.
    func className(at index: Int32) -> String? { LuaState.className(L, at: index) }

    // MARK: completion

    private static let keywords = ["and", "break", "do", "else", "elseif", "end", "false", "for", "function",
                                   "goto", "if", "in", "local", "nil", "not", "or", "repeat", "return", "then",
                                   "true", "until", "while"]

    /// Every completion of `word` ("comp:ins", "av.ex", "pri"), whole words, sorted: globals
    /// and keywords; fields of tables reached through `a.b.c`; properties (after ".") and
    /// methods (after ":") of Moonreel objects; string methods after "s:".
    func completions(for word: String) -> [String] {
        let base = lua_gettop(L)
        defer { lua_settop(L, base) }
        guard let separator = word.lastIndex(where: { $0 == "." || $0 == ":" }) else {
            moon_pushglobaltable(L)
            return (tableKeys(at: -1, functionsOnly: false) + REPLCatalog.keywords)
                .filter { $0.hasPrefix(word) }.sorted()
        }
        let isMethod = word[separator] == ":"
        let partial = String(word[word.index(after: separator)...])
        guard let steps = REPLCatalog.steps(of: word[..<separator]) else { return [] }
        moon_pushglobaltable(L)
        for step in steps {
            guard push(step, of: -1) else { return [] }
        }
        var names: [String]
        switch lua_type(L, -1) {
        case LUA_TTABLE:
            names = tableKeys(at: -1, functionsOnly: isMethod)
        case LUA_TUSERDATA:
            guard let name = className(at: -1), let luaClass = host.lua.luaClass(named: name) else { return [] }
            names = luaClass.allMethods.map(\.name) + (isMethod ? [] : Array(luaClass.allProperties.keys))
        case LUA_TSTRING where isMethod:
            moon_pushglobaltable(L)
            lua_pushstring(L, "string")
            lua_rawget(L, -2)
            names = lua_type(L, -1) == LUA_TTABLE ? tableKeys(at: -1, functionsOnly: true) : []
        default:
            return []
        }
        let prefix = String(word[...separator])
        return Set(names).filter { $0.hasPrefix(partial) }.sorted().map { prefix + $0 }
    }

    /// One step of an expression being completed: `.name` or `[1]`.
    enum Step: Equatable {
        case field(String)
        case element(Int)
    }

    /// "vc.instructions[1]" as its steps; nil for anything else (calls, string keys…).
    static func steps(of path: Substring) -> [Step]? {
        var steps: [Step] = []
        for part in path.split(separator: ".", omittingEmptySubsequences: false) {
            var rest = part
            let name = rest.prefix { $0 != "[" }
            guard isIdentifier(String(name)) else { return nil }
            steps.append(.field(String(name)))
            rest = rest.dropFirst(name.count)
            while rest.hasPrefix("[") {
                guard let close = rest.firstIndex(of: "]"), let index = Int(rest[rest.index(after: rest.startIndex)..<close]) else { return nil }
                steps.append(.element(index))
                rest = rest[rest.index(after: close)...]
            }
            guard rest.isEmpty else { return nil }
        }
        return steps
    }

    /// Replaces the value at `index` with its field or element: raw for tables; for Moonreel
    /// objects through their properties (Swift getters, run protected). False when there is none.
    private func push(_ step: Step, of index: Int32) -> Bool {
        let value = lua_absindex(L, index)
        switch (lua_type(L, value), step) {
        case (LUA_TTABLE, .field(let name)):
            lua_pushstring(L, name)
            lua_rawget(L, value)
        case (LUA_TTABLE, .element(let i)):
            lua_rawgeti(L, value, lua_Integer(i))
        case (LUA_TUSERDATA, _) where className(at: value) != nil:
            guard (try? host.lua.load("local object, key = ...\nreturn object[key]", chunkName: "=[moonreel completion]")) != nil else {
                return false
            }
            lua_pushvalue(L, value)
            switch step {
            case .field(let name): lua_pushstring(L, name)
            case .element(let i): lua_pushinteger(L, lua_Integer(i))
            }
            guard (try? host.lua.call(argumentCount: 2, resultCount: 1)) != nil else { return false }
        default:
            return false
        }
        moon_remove(L, value)
        return lua_type(L, -1) > LUA_TNIL
    }

    /// The identifier keys of the table at `index` (raw), optionally only function-valued ones.
    private func tableKeys(at index: Int32, functionsOnly: Bool) -> [String] {
        let table = lua_absindex(L, index)
        var keys: [String] = []
        lua_pushnil(L)
        while lua_next(L, table) != 0 {
            if lua_type(L, -2) == LUA_TSTRING, !functionsOnly || lua_type(L, -1) == LUA_TFUNCTION {
                let key = LuaState.string(L, at: -2)
                if REPLCatalog.isIdentifier(key) { keys.append(key) }
            }
            moon_pop(L, 1)
        }
        return keys
    }

    private static func isIdentifier(_ text: String) -> Bool {
        guard let first = text.utf8.first, !(0x30...0x39).contains(first) else { return false }
        return text.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F
        }
    }
}
