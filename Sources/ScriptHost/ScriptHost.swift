import CMoonLua
import CMoonLuaShim
import MoonreelPlatform

/// Lua set up for Moonreel's two trust levels: the user script it runs is trusted like a
/// shell script (every standard library, text chunks only); each effect module the script
/// `require`s runs sandboxed in a Lua state of its own (see EffectBox.swift). Register the
/// `av` API on `lua` before running anything, and set `prepareEffectState` to register it
/// in effects' states; effects see the part of it `effectPolicy` allows.
package final class ScriptHost {
    package let lua: LuaState
    package let limits: ScriptLimits
    package let effectPolicy: EffectPolicy
    /// Where effects are searched; `runScript(atPath:)` sets `scriptDirectory`.
    package var searchPath: EffectSearchPath
    /// Effects shipped inside the embedding binary, by module name ("lyrics" → source).
    package let bundledEffects: [String: String]
    /// Searched first while `checkEffect(atPath:)` loads a candidate.
    private var candidateFolder: String?
    /// Told of every file the host reads for the script (the script, effects), so that an
    /// embedder can keep outputs from replacing them.
    package var onFileRead: (String) -> Void = { _ in }
    /// Registers globals (such as `av`) in each new effect state, before its sandbox is
    /// built; `effectPolicy.allowedGlobals` then decides which of their fields effects see.
    package var prepareEffectState: (LuaState) throws -> Void = { _ in }

    /// The state of each effect module loaded so far, shared by every `require` of it.
    private var effectBoxes: [String: EffectBox] = [:]
    /// Modules being loaded now, to name a loop of requires.
    private var loadingEffects: [String] = []

    package init(limits: ScriptLimits = ScriptLimits(), effectPolicy: EffectPolicy = EffectPolicy(),
                searchPath: EffectSearchPath = .fromEnvironment(), bundledEffects: [String: String] = [:]) throws {
        self.limits = limits
        self.effectPolicy = effectPolicy
        self.searchPath = searchPath
        self.bundledEffects = bundledEffects
        lua = try LuaState(memoryLimit: limits.memory)
        try lua.callProtected(moon_open_user_libraries)
        try runGlue(in: lua)
        moon_pop(lua.L, 1)
    }

    /// Stops the running script (or effect) from any thread, e.g. on Ctrl-C; the error it
    /// throws has `stop == .interrupted`.
    package var interrupter: LuaInterrupter { lua.interrupter }

    // MARK: User scripts

    /// Runs the script file at `path` as `lua` would: `arg[0]` is `path`, `arg[1...]` and
    /// `...` are `arguments`. A leading `#!` line and UTF-8 BOM are skipped; precompiled
    /// chunks are refused. Errors are `ScriptError`s naming the script and line, with a traceback.
    @discardableResult
    package func runScript(atPath path: String, arguments: [String] = []) throws -> [ScriptValue] {
        let bytes = try FileSystem.read(path)
        onFileRead(path)
        searchPath.scriptDirectory = Paths.parent(of: path)
        return try runScript(bytes: bytes, name: path, arguments: arguments)
    }

    /// Runs script text (a bundled example, a REPL `:load`) as if it were the file `name`.
    @discardableResult
    package func runScript(source: String, name: String, arguments: [String] = []) throws -> [ScriptValue] {
        try runScript(bytes: Array(source.utf8), name: name, arguments: arguments)
    }

    /// Runs a chunk (a REPL line) under the script limits; leaves its results on the stack
    /// and returns how many.
    @discardableResult
    package func evaluate(_ code: String, chunkName: String = "=stdin") throws -> Int32 {
        try lua.load(code, chunkName: chunkName)
        return try lua.withRunLimits(limits.script) { try lua.call(argumentCount: 0) }
    }

    /// Runs the chunk and returns what it returns, as plain values (one with no plain form
    /// comes back as nil: only plain data leaves the Lua world).
    private func runScript(bytes: [UInt8], name: String, arguments: [String]) throws -> [ScriptValue] {
        let L = lua.L
        let base = lua_gettop(L)
        defer { lua_settop(L, base) }
        try ScriptHost.sourceText(of: bytes).withUnsafeBytes { text in
            try lua.load(bytes: text, chunkName: "@" + ScriptHost.displayName(of: name))
        }
        setArgTable(script: name, arguments: arguments)
        for argument in arguments { LuaState.push(L, argument) }
        let results = try lua.withRunLimits(limits.script) {
            try lua.call(argumentCount: Int32(arguments.count), resultCount: LUA_MULTRET)
        }
        let call = LuaCall(L, functionName: "")
        let first = lua_gettop(L) - results + 1
        return (0..<results).map { (try? call.value(first + $0)) ?? .nil }
    }

    /// What `luaL_loadfile` skips: a UTF-8 BOM and a first line starting with "#" (whose
    /// newline stays, so line numbers match the file).
    static func sourceText(of bytes: [UInt8]) -> ArraySlice<UInt8> {
        var text = bytes[...]
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        if text.first == UInt8(ascii: "#") {
            text = text.drop { $0 != UInt8(ascii: "\n") }
        }
        return text
    }

    /// The script name used in messages: the path as given, or as many of its last
    /// components as fit (Lua truncates chunk names to 60 bytes, cutting off the file name).
    static func displayName(of path: String) -> String {
        var parts = path.split(separator: "/", omittingEmptySubsequences: false)
        while parts.count > 1, parts.joined(separator: "/").utf8.count > 55 { parts.removeFirst() }
        return parts.joined(separator: "/")
    }

    private func setArgTable(script: String, arguments: [String]) {
        let L = lua.L
        lua_createtable(L, Int32(arguments.count), 1)
        LuaState.push(L, script)
        lua_rawseti(L, -2, 0)
        for (index, argument) in arguments.enumerated() {
            LuaState.push(L, argument)
            lua_rawseti(L, -2, lua_Integer(index + 1))
        }
        lua_setglobal(L, "arg")
    }

    // MARK: Output

    /// Replaces the global `print`: each call's line (arguments through `tostring`,
    /// tab-separated, no newline) goes to `write`.
    package func redirectPrint(_ write: @escaping (String) -> Void) throws {
        try PackageResources.print_lua.withUnsafeBytes { try lua.load(bytes: $0, chunkName: "=[moonreel print]") }
        lua.pushFunction("print") { call in
            write(try call.string(1))
            return 0
        }
        _ = try lua.call(argumentCount: 1, resultCount: 1)
        lua.setGlobal("print")
    }

    // MARK: Globals of the embedder

    /// Sets the global `name` to a Swift function. Refuses names that are not Lua
    /// identifiers and names already taken, so an app cannot hide `print` or `av` by accident.
    package func registerGlobal(_ name: String, _ body: @escaping LuaFunction) throws {
        try checkNewGlobal(name)
        lua.pushFunction(name, body)
        lua.setGlobal(name)
    }

    /// Sets the global `name` to `value`, with the checks of `registerGlobal(_:_:)`.
    package func registerGlobal(_ name: String, value: ScriptValue) throws {
        try checkNewGlobal(name)
        do {
            try LuaCall(lua.L, functionName: name).push(value)
        } catch {
            throw RegistrationError(name: name, reason: "\(error)")
        }
        lua.setGlobal(name)
    }

    private func checkNewGlobal(_ name: String) throws {
        let isIdentifier = name.first.map { $0 == "_" || ($0.isASCII && $0.isLetter) } == true
            && name.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
        guard isIdentifier, !ScriptHost.keywords.contains(name) else {
            throw RegistrationError(name: name, reason: "not a Lua name (letters, digits and _, not starting with a digit, not a keyword)")
        }
        let L = lua.L
        moon_pushglobaltable(L)
        defer { moon_pop(L, 2) }
        guard LuaState.rawField(L, -1, name) == LUA_TNIL else {
            throw RegistrationError(name: name, reason: "scripts already have a global of that name")
        }
    }

    private static let keywords: Set<String> = [
        "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
        "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
    ]

    // MARK: Effects

    /// The names of every effect `require` can find, without loading them (for completion).
    package func effectNames() -> [String] { locator.availableModules().map(\.module) }

    /// Every effect `require` can find, each with its metadata or its load error.
    package func listEffects() -> [EffectListing] {
        locator.availableModules().map { found in
            EffectListing(module: found.module, location: found.location,
                          info: Result { try effectInfo(named: found.module) }.mapError { error in
                              error as? ScriptError ?? ScriptError(kind: .runtime, message: "\(error)")
                          })
        }
    }

    /// Loads the effect `require "effects.NAME"` would load (afresh, in a state of its own)
    /// and returns its metadata.
    package func effectInfo(named module: String) throws -> EffectInfo {
        let saved = effectBoxes
        effectBoxes = [:]
        defer { effectBoxes = saved }
        return try lua.withRunLimits(limits.script) {
            try effectBox(module, caller: lua).info(caller: lua)
        }
    }

    /// The source text `require "effects.NAME"` would load, and where it is ("bundled" for
    /// one shipped with the embedder).
    package func effectSource(named module: String) throws -> (text: String, location: String) {
        let found = try locator.find(module)
        return (String(decoding: found.source, as: UTF8.self), found.location)
    }

    /// Checks that an effect file (`NAME.lua`) or folder (`NAME/` with `init.lua`) loads in
    /// the sandbox and declares valid metadata, before `moonreel effects install` copies it.
    package func checkEffect(atPath path: String) throws -> EffectInfo {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        let entry = Paths.name(of: trimmed)
        let isFile = FileSystem.kind(of: trimmed) == .file
        let module = isFile && entry.hasSuffix(".lua") ? String(entry.dropLast(4)) : entry
        guard isFile ? entry.hasSuffix(".lua") : FileSystem.kind(of: trimmed + "/init.lua") == .file else {
            throw ScriptError(kind: .file, message: "\(path): an effect is a NAME.lua file or a NAME folder with init.lua")
        }
        guard !module.contains("."), (try? EffectLocator.relativePath(of: module)) != nil else {
            throw ScriptError(kind: .file, message: "\(path): effect names are one word (letters, digits, '_', '-')")
        }
        candidateFolder = Paths.parent(of: trimmed)
        defer { candidateFolder = nil }
        return try effectInfo(named: module)
    }

    private var locator: EffectLocator {
        EffectLocator(folders: (candidateFolder.map { [$0] } ?? []) + searchPath.folders, bundled: bundledEffects)
    }

    /// The state of `module`, loaded on first use on behalf of `caller`.
    private func effectBox(_ module: String, caller: LuaState) throws -> EffectBox {
        if let box = effectBoxes[module] { return box }
        guard !loadingEffects.contains(module) else {
            throw PositionedFromScript("effects require each other in a loop: "
                                       + (loadingEffects + [module]).map { "effects.\($0)" }.joined(separator: " → "))
        }
        let found = try locator.find(module)
        if found.location != "bundled" { onFileRead(found.location) }
        loadingEffects.append(module)
        defer { loadingEffects.removeLast() }
        let box = try EffectBox(module: module, found: found, host: self, caller: caller)
        effectBoxes[module] = box
        return box
    }

    /// Runs the glue chunk in `state` (the user script's, or an effect's) and leaves what it
    /// returns on the stack: nothing useful for the script's, the loader for an effect's.
    func runGlue(in state: LuaState) throws {
        let L = state.L
        try PackageResources.effect_host_lua.withUnsafeBytes { glue in
            try state.load(bytes: glue, chunkName: "=[moonreel effects]")
        }
        lua_createtable(L, 0, 6)                                        // glue host
        try state.callProtected(moon_sandbox_helpers, resultCount: 1)  // glue host helpers
        lua_setfield(L, -2, "helpers")
        state.setFunction("openEffect") { [unowned self, unowned state] call in
            let box = try effectBox(try call.string(1), caller: state)
            // Its own state has no handles to itself (they are proxies into another state).
            guard box.lua !== state else {
                throw PositionedFromScript("effect \"\(box.module)\" requires itself (effects.\(box.module) → effects.\(box.module)); "
                                           + "an effect cannot load itself: call its own local functions instead")
            }
            try box.pushHandles(into: state)
            return 3
        }
        LuaState.push(L, state.isSandboxed ? "effect" : "script")
        lua_setfield(L, -2, "role")
        lua_createtable(L, 0, Int32(effectPolicy.allowedGlobals.count)) // glue host allowed
        for (global, fields) in effectPolicy.allowedGlobals {
            lua_createtable(L, 0, Int32(fields.count))                  // glue host allowed set
            for field in fields {
                lua_pushboolean(L, 1)
                lua_setfield(L, -2, field)
            }
            lua_setfield(L, -2, global)
        }
        lua_setfield(L, -2, "allowedGlobals")
        lua_createtable(L, 0, Int32(effectPolicy.modules.count))        // glue host modules
        for (module, global) in effectPolicy.modules {
            LuaState.push(L, global)
            lua_setfield(L, -2, module)
        }
        lua_setfield(L, -2, "modules")
        lua_createtable(L, 0, 2)                                        // glue host checker
        LuaState.push(L, effectPolicy.colorChecker?.global ?? "")
        lua_setfield(L, -2, "global")
        LuaState.push(L, effectPolicy.colorChecker?.field ?? "")
        lua_setfield(L, -2, "field")
        lua_setfield(L, -2, "colorChecker")
        lua_pushinteger(L, lua_Integer(effectPolicy.randomSeed))
        lua_setfield(L, -2, "randomSeed")
        moon_pushglobaltable(L)
        lua_setfield(L, -2, "globals")
        try state.call(argumentCount: 1, resultCount: 1)
    }
}
