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
    /// The effect versions a script's folder locks (module → version; nil: no lock), read by
    /// the embedder (`moonreel` reads its effects.lock). A locked effect is loaded only from
    /// that folder's effects/ and at that version.
    /// A lock that cannot be read throws (the `require` fails saying why).
    package var lockedEffects: (_ folder: String) throws -> [String: String]? = { _ in nil }
    /// Told what an effect says it did other than as asked (`effect.warn(message [, remedy])`
    /// or `effect.note`): the effect's name, whether it is a warning, the message and remedy,
    /// each one line (an effect is a stranger's code). Throwing fails the effect's call.
    package var onEffectReport: (_ effect: String, _ isWarning: Bool, _ message: String, _ remedy: String?) throws -> Void = { _, _, _, _ in }
    /// Registers globals (such as `av`) in each new effect state, before its sandbox is
    /// built; `effectPolicy.allowedGlobals` then decides which of their fields effects see.
    package var prepareEffectState: (LuaState) throws -> Void = { _ in }

    /// Told of each effect the script calls, with the options it gave; what it returns
    /// replaces those options (a previewing host lets its user change parameters).
    package var onEffectCall: ((EffectCall) -> [String: ScriptValue])?
    /// How many times each place in the script has called an effect so far.
    private var effectCallCounts: [String: Int] = [:]

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
        // The glue's av.parameters, for the embedder's API table (`installScriptParameters`).
        lua_getfield(lua.L, -1, "parameters")
        lua_setfield(lua.L, MOON_LUA_REGISTRYINDEX, ScriptHost.parametersKey)
        moon_pop(lua.L, 1)
    }

    private static let parametersKey = "moonreel.scriptParameters"

    /// Sets field `name` of the table on top of the stack to the script-parameters function:
    /// `name{ { name =, type =, default =, min =, max =, required =, doc = }, … }` declares the
    /// script's parameters as an effect declares its own (same types and checks) and returns
    /// their values: `parameterValues` (text, as `--set` gives it) converted to the declared
    /// types, or `parameterOverrides`, or the defaults.
    package func installScriptParameters(as name: String) {
        lua_getfield(lua.L, MOON_LUA_REGISTRYINDEX, ScriptHost.parametersKey)
        lua_setfield(lua.L, -2, name)
    }

    /// The script's parameters as text, by name (`--set NAME=VALUE`).
    package var parameterValues: [String: String] = [:]
    /// Typed values that win over `parameterValues` (the studio's controls).
    package var parameterOverrides: [String: ScriptValue] = [:]
    /// What the script declared with its parameters function, once it has (nil: not yet).
    package private(set) var declaredParameters: [EffectCall.Parameter]?
    /// Told the declarations before the values are checked; throwing stops the script
    /// (`moonreel info` lists them without running the rest).
    package var onParametersDeclared: (([EffectCall.Parameter]) throws -> Void)?

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
        let (module, folder) = try candidate(atPath: path)
        candidateFolder = folder
        defer { candidateFolder = nil }
        return try effectInfo(named: module)
    }

    /// Applies the effect at `path` once, under the limits, as `effects install` does before
    /// copying it: with the options its `example` field declares, else with its defaults
    /// (nil, nothing run, when a parameter has no default and there is no example).
    /// A parameter of a type in `samples` that the options leave out gets the value its
    /// function pushes (a test picture for `image`: an example cannot hold an object).
    /// `check` sees what it returned (on top of the stack) and throws if it does not draw.
    package func applyEffectOnce(atPath path: String, samples: [String: (LuaState) throws -> Void] = [:],
                                 check: (LuaState) throws -> Void) throws -> EffectTrial? {
        let (module, folder) = try candidate(atPath: path)
        candidateFolder = folder
        defer { candidateFolder = nil }
        let info = try effectInfo(named: module)
        let saved = effectBoxes
        effectBoxes = [:]
        defer { effectBoxes = saved }
        let L = lua.L
        let base = lua_gettop(L)
        defer { lua_settop(L, base) }
        var trial: EffectTrial?
        do {
            try lua.withRunLimits(limits.script) {
                try lua.load(Self.trialSource, chunkName: "=[effects install]")
                LuaState.push(L, "effects." + module)
                lua_pushboolean(L, info.parameters.contains { $0.required && samples[$0.type] == nil } ? 1 : 0)
                lua_createtable(L, 0, Int32(samples.count))
                // Made only for the types the effect declares (a test clip is encoded for one).
                for (type, push) in samples where info.parameters.contains(where: { $0.type == type }) {
                    try push(lua)
                    lua_setfield(L, -2, type)
                }
                _ = try lua.call(argumentCount: 3, resultCount: 2)
                guard lua_type(L, -2) == LUA_TFUNCTION else { return }
                trial = lua_toboolean(L, -1) != 0 ? .example : .defaults
                moon_pop(L, 1)
                _ = try lua.call(argumentCount: 0, resultCount: 1)
                try check(lua)
            }
        } catch let error as ScriptError {
            throw ScriptError(kind: error.kind, message: "applied once with its \(trial == .defaults ? "defaults" : "example"), it fails: \(error.message)")
        }
        return trial
    }

    /// What `applyEffectOnce` applied the effect with.
    package enum EffectTrial: Sendable { case example, defaults }

    /// (module, needsOptions, samples by type) → a function applying the effect, and whether
    /// with its example; nil when options are needed and none are declared.
    private static let trialSource = """
        local module, needsOptions, samples = ...
        local effect = require(module)
        local example = effect.example
        if example ~= nil and type(example) ~= "table" then
          error("example must be a table of the options that make it draw, got " .. type(example), 0)
        end
        if example == nil and needsOptions then return nil, nil end
        local function plain(value, depth)
          if type(value) ~= "table" then return value end
          if depth > 16 then error("example is nested more than 16 tables deep", 0) end
          local copy = {}
          for key, field in pairs(value) do copy[key] = plain(field, depth + 1) end
          return copy
        end
        local options = plain(example or {}, 0)
        for _, parameter in ipairs(effect.parameters) do
          if options[parameter.name] == nil then options[parameter.name] = samples[parameter.type] end
        end
        return function() return effect(options) end, example ~= nil
        """

    /// The module an effect file or folder would be, and the folder it is in.
    private func candidate(atPath path: String) throws -> (module: String, folder: String) {
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
        return (module, Paths.parent(of: trimmed))
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
        let locked: (String, String)?
        do {
            locked = try searchPath.scriptDirectory.flatMap { folder in try lockedEffects(folder)?[module].map { (folder, $0) } }
        } catch {
            throw PositionedFromScript("module 'effects.\(module)': \(error)")
        }
        if let (folder, version) = locked, !found.location.hasPrefix(folder + "/effects/") {
            throw PositionedFromScript("module 'effects.\(module)' is locked at \(version) by \(folder)/effects.lock but not installed in "
                                       + "\(folder)/effects (found: \(found.location)); run `moonreel effects install --frozen` there")
        }
        if found.location != "bundled" { onFileRead(found.location) }
        loadingEffects.append(module)
        defer { loadingEffects.removeLast() }
        let box = try EffectBox(module: module, found: found, host: self, caller: caller)
        if let (folder, version) = locked {
            let installed = try box.info(caller: caller).version
            guard installed == version else {
                throw PositionedFromScript("module 'effects.\(module)' is locked at \(version) by \(folder)/effects.lock, but \(found.location) is "
                                           + "\(installed.isEmpty ? "unversioned" : installed); run `moonreel effects install --frozen` there")
            }
        }
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
        lua_createtable(L, 0, 7)                                        // glue host
        try state.callProtected(moon_sandbox_helpers, resultCount: 1)  // glue host helpers
        lua_setfield(L, -2, "helpers")
        // "did you mean fontSize?" for a mistyped parameter, as for properties and methods.
        state.setFunction("closestName") { call in
            let names = try (0..<call.rawLength(2)).map { index in
                defer { call.pop() }
                call.pushElement(of: 2, index + 1)
                return try call.string(-1)
            }
            if let near = NameSuggestion.closest(to: try call.string(1), among: names) { call.push(near) } else { call.pushNil() }
            return 1
        }
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
        if state.isSandboxed {
            // effect.asset("grain.png"): the path of a file the effect ships, or a refusal.
            state.setFunction("asset") { [unowned state] call in
                call.push(try EffectAssets.resolve(call, in: state))
                return 1
            }
            // effect.warn / effect.note: what it did other than asked, for the run's report.
            for (name, isWarning) in [("warn", true), ("note", false)] {
                state.setFunction(name) { [unowned self, unowned state] call in
                    let line = { (text: String) in String(text.map { $0.isNewline || $0 == "\t" ? " " : $0 }.prefix(500)) }
                    try onEffectReport(state.effectName ?? "?", isWarning, line(try call.string(1)), try call.optionalString(2).map(line))
                    return 0
                }
            }
        } else {
            state.setFunction("observeEffectCall") { [unowned self] call in
                try observeEffectCall(call)
            }
            state.setFunction("givenParameters") { [unowned self] call in
                try givenParameters(call)
            }
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
        lua_createtable(L, 0, Int32(effectPolicy.objectTypes.count))   // glue host objectTypes
        for (name, objectType) in effectPolicy.objectTypes {
            lua_createtable(L, 0, 2)
            LuaState.push(L, objectType.phrase)
            lua_setfield(L, -2, "phrase")
            lua_createtable(L, 0, Int32(objectType.metatables.count))
            for metatable in objectType.metatables {
                lua_pushboolean(L, 1)
                lua_setfield(L, -2, metatable)
            }
            lua_setfield(L, -2, "metatables")
            lua_setfield(L, -2, name)
        }
        lua_setfield(L, -2, "objectTypes")
        lua_pushinteger(L, lua_Integer(effectPolicy.randomSeed))
        lua_setfield(L, -2, "randomSeed")
        moon_pushglobaltable(L)
        lua_setfield(L, -2, "globals")
        try state.call(argumentCount: 1, resultCount: 1)
    }

    /// `givenParameters(declared)` of the glue: the values for the script's declared
    /// parameters, by name (missing ones take their defaults in the glue's check).
    private func givenParameters(_ call: LuaCall) throws -> Int32 {
        let declared = declaredParameterList(call.L, 1)
        declaredParameters = declared
        try onParametersDeclared?(declared)
        let names = Set(declared.map(\.name))
        if let unknown = (Set(parameterValues.keys).union(parameterOverrides.keys)).subtracting(names).sorted().first {
            let known = declared.isEmpty ? "it declares none" : "it declares " + declared.map(\.name).joined(separator: ", ")
            throw PositionedFromScript("--set \(unknown): the script has no parameter \(unknown) (\(known))")
        }
        lua_createtable(call.L, 0, Int32(declared.count))
        for parameter in declared {
            guard let value = parameterOverrides[parameter.name] ?? parameterValues[parameter.name].map({ Self.typed($0, as: parameter.type) }) else { continue }
            try call.push(value)
            lua_setfield(call.L, -2, parameter.name)
        }
        return 1
    }

    /// `--set` text as the declared type wants it; text that is not such a value stays text,
    /// so the check names it as given.
    package static func typed(_ text: String, as type: String) -> ScriptValue {
        switch type {
        case "number": return Double(text).map { .number($0) } ?? .string(text)
        case "integer": return Int(text).map { .integer($0) } ?? .string(text)
        case "boolean":
            switch text.lowercased() {
            case "true", "yes", "1", "on": return .bool(true)
            case "false", "no", "0", "off": return .bool(false)
            default: return .string(text)
            }
        default: return .string(text)
        }
    }

    /// `observeEffectCall(module, options)` of the glue: the options to call the effect with.
    private func observeEffectCall(_ call: LuaCall) throws -> Int32 {
        guard let observer = onEffectCall, call.type(2) == LUA_TTABLE else {
            call.pushValue(2)
            return 1
        }
        let L = call.L
        let location = String(LuaState.scriptPosition(L).dropLast(2))
        let occurrence = effectCallCounts[location, default: 0]
        effectCallCounts[location] = occurrence + 1
        let given = plainFields(L, 2)
        let declared = declaredParameterList(L, 3)
        let overrides = observer(EffectCall(module: try call.string(1), location: location, occurrence: occurrence,
                                            given: given, parameters: declared))
        guard !overrides.isEmpty else {
            call.pushValue(2)
            return 1
        }
        // A copy: the script's own table stays as it wrote it.
        lua_createtable(L, 0, 0)
        lua_pushnil(L)
        while lua_next(L, 2) != 0 {
            lua_pushvalue(L, -2)
            lua_rotate(L, -2, 1)
            lua_rawset(L, -4)
        }
        for (name, value) in overrides {
            try call.push(value)
            lua_setfield(L, -2, name)
        }
        return 1
    }
}

/// The glue's checked parameter declarations (a list of {name=, type=, min=, max=,
/// default=, doc=}) at `index`, read raw; empty when there is no list there.
private func declaredParameterList(_ L: OpaquePointer, _ index: Int32) -> [EffectCall.Parameter] {
    guard lua_type(L, index) == LUA_TTABLE else { return [] }
    let list = lua_absindex(L, index)
    var declared: [EffectCall.Parameter] = []
    var position: lua_Integer = 1
    while lua_rawgeti(L, list, position) == LUA_TTABLE {
        let fields = plainFields(L, -1)
        let choices = stringList(L, -1, field: "choices")
        moon_pop(L, 1)
        position += 1
        guard case .string(let name) = fields["name"], case .string(let type) = fields["type"] else { continue }
        let number = { (value: ScriptValue?) -> Double? in if case .number(let n) = value { n } else { nil } }
        var doc = ""
        if case .string(let text) = fields["doc"] { doc = text }
        var required = false
        if case .bool(let flag) = fields["required"] { required = flag }
        declared.append(EffectCall.Parameter(name: name, type: type, minimum: number(fields["min"]), maximum: number(fields["max"]),
                                             defaultValue: fields["default"], required: required, doc: doc, choices: choices))
    }
    moon_pop(L, 1)
    return declared
}

/// The strings of the list in `field` of the table at `index` (a parameter's `choices`),
/// read raw; empty when there is none.
private func stringList(_ L: OpaquePointer, _ index: Int32, field: String) -> [String] {
    let table = lua_absindex(L, index)
    LuaState.push(L, field)
    defer { moon_pop(L, 1) }
    guard lua_rawget(L, table) == LUA_TTABLE else { return [] }
    var strings: [String] = []
    var position: lua_Integer = 1
    while lua_rawgeti(L, -1, position) == LUA_TSTRING {
        strings.append(LuaState.string(L, at: -1))
        moon_pop(L, 1)
        position += 1
    }
    moon_pop(L, 1)
    return strings
}

/// The string-keyed fields of the table at `index` whose values are strings, numbers or
/// booleans, read raw.
private func plainFields(_ L: OpaquePointer, _ index: Int32) -> [String: ScriptValue] {
    let table = lua_absindex(L, index)
    var fields: [String: ScriptValue] = [:]
    lua_pushnil(L)
    while lua_next(L, table) != 0 {
        if lua_type(L, -2) == LUA_TSTRING {
            switch lua_type(L, -1) {
            case LUA_TBOOLEAN: fields[LuaState.string(L, at: -2)] = .bool(lua_toboolean(L, -1) != 0)
            case LUA_TNUMBER: fields[LuaState.string(L, at: -2)] = .number(lua_tonumberx(L, -1, nil))
            case LUA_TSTRING: fields[LuaState.string(L, at: -2)] = .string(LuaState.string(L, at: -1))
            default: break
            }
        }
        moon_pop(L, 1)
    }
    return fields
}

/// One call of an effect by the script, as `ScriptHost.onEffectCall` is told it.
package struct EffectCall: Sendable, Equatable {
    /// A parameter the effect declares (plain defaults only).
    package struct Parameter: Sendable, Equatable {
        package let name, type: String
        package let minimum, maximum: Double?
        package let defaultValue: ScriptValue?
        package let required: Bool
        package let doc: String
        /// The only values a string may take (`choices = {…}`); empty: any.
        package var choices: [String] = []
    }

    /// As in `require "effects.MODULE"`.
    package let module: String
    /// Where the script called it ("lyrics.lua:27").
    package let location: String
    /// How many calls that place made before this one (a loop calls one place many times).
    package let occurrence: Int
    /// The options given with a plain value (string, number, boolean), by name.
    package let given: [String: ScriptValue]
    /// What the effect declares, in its order.
    package let parameters: [Parameter]
}
