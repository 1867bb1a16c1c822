import CMoonLua
import CMoonLuaShim

/// A Swift function callable from Lua. It reads its arguments through `LuaCall`, pushes its
/// results and returns how many; throwing raises a Lua error at the caller's line.
package typealias LuaFunction = (LuaCall) throws -> Int32

final class FunctionBox {
    let name: String
    let body: LuaFunction
    init(name: String, body: @escaping LuaFunction) {
        self.name = name
        self.body = body
    }
}

/// The one entry point for every Swift function Lua calls.
private let dispatch: moon_swift_fn = { L in
    guard let L, let raw = lua_touserdata(L, moon_upvalueindex(2)) else { return 0 }
    let box = Unmanaged<FunctionBox>.fromOpaque(raw).takeUnretainedValue()
    return LuaState.returning(L) { try box.body(LuaCall(L, functionName: box.name)) }
}

/// An error whose position should be the user's script line, not that of bundled Lua sugar.
package struct PositionedFromScript: Error, CustomStringConvertible {
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// One Lua 5.4 state. Confined to one thread; closing it runs every pending `__gc`.
package final class LuaState {
    package let L: OpaquePointer
    private var boxes: [FunctionBox] = []
    private var classes: [String: LuaClass] = [:]
    private var interruptFlag = InterruptFlag()
    private var configuredMemoryLimit: Int
    /// How many `load`/`call`s are running (refusals are counted from the outermost).
    private var protectedDepth = 0
    /// What the host hung on the state for its Swift functions to find (`LuaCall.context`):
    /// the `av` API, so a binding reaches it from the call instead of capturing it.
    private var context: AnyObject?

    /// Owners and weights of the engine objects this state's scripts reached (shared by the
    /// states of one host).
    package let engineObjects: EngineObjects
    /// Bytes of engine objects this state owns; they count against its memory cap.
    var engineBytes = 0 {
        didSet { moon_set_engine_memory(L, max(0, engineBytes)) }
    }
    /// A sandboxed (effect) state may change only the engine objects it owns.
    package let isSandboxed: Bool
    /// Who owns objects this state reaches for the first time: itself, or, while a property
    /// or read-only method of another state's object runs, that state (nil if it is gone).
    enum Reach {
        case own
        case through(LuaState?)
    }
    var reaching = Reach.own
    /// Set when an error that came from another state (an effect) was a stop by a limit, so
    /// that the error this state raises with that message keeps its kind.
    var foreignStop: (message: String, stop: ScriptStop)?
    /// An effect's state: its module name (for messages) and the limits of each call into it.
    package internal(set) var effectName: String?
    /// An effect's state: where its source was found (a path, or "bundled"), and the folder
    /// of an effect that is a folder (`NAME/init.lua`), whose files it may read
    /// (`EffectAssets`); nil for a single file or a bundled effect.
    package internal(set) var effectLocation: String?
    package internal(set) var effectFolder: String?
    var entryLimits: RunLimits?
    var entryDepth = 0
    /// Registry references that proxies in other states no longer need.
    private var releasedReferences: [Int32] = []

    /// - Parameters:
    ///   - memoryLimit: bytes the Lua heap and this state's engine objects may hold (0: unlimited).
    ///   - engineObjects: shared with the other states of the same host.
    ///   - sandboxed: for effect states, which may change only the objects they made.
    package init(memoryLimit: Int = 0, engineObjects: EngineObjects = EngineObjects(), sandboxed: Bool = false) throws {
        // The cap holds only while Lua code runs (see `moon_pcall`); host code is never refused.
        guard let state = moon_newstate(memoryLimit) else {
            throw ScriptError(kind: .memory, message: "cannot create a Lua state: out of memory")
        }
        L = state
        configuredMemoryLimit = memoryLimit
        self.engineObjects = engineObjects
        isSandboxed = sandboxed
        moon_set_interrupt_flag(moon_budget_of(L), interruptFlag.pointer)
        moon_install_hook(L)
        moon_set_host_context(L, Unmanaged.passUnretained(self).toOpaque())
        moon_set_memory_sweeper(L, sweepEngineObjects, Unmanaged.passUnretained(self).toOpaque())
        installObjectCache()
    }

    /// The `LuaState` that `L` (or a coroutine of it) belongs to.
    package static func from(_ L: OpaquePointer) -> LuaState? {
        moon_host_context(L).map { Unmanaged<LuaState>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Runs the body of a Swift function called from Lua. Errors never longjmp from here:
    /// they are returned as a marker and raised by the C trampoline, after Swift has cleaned up.
    static func returning(_ L: OpaquePointer, _ body: () throws -> Int32) -> Int32 {
        do {
            return try body()
        } catch is LuaPassthroughError {
            return MOON_RAISE_VALUE
        } catch let error as ScriptError {
            push(L, error.message)
            guard let failureKind = error.failureKind else { return MOON_RAISE_VALUE }
            push(L, failureKind)                            // message kind
            if let subject = error.subject { push(L, subject) } else { lua_pushnil(L) } // message kind subject
            return MOON_RAISE_KINDED_VALUE
        } catch let error as PositionedFromScript {
            push(L, error.message.oneLine)
            return MOON_RAISE_FROM_SCRIPT
        } catch let error as KindedError {
            push(L, error.scriptMessage.oneLine)            // message
            push(L, error.errorKindName)                    // message kind
            if let subject = error.errorSubject { push(L, subject) } else { lua_pushnil(L) } // message kind subject
            return MOON_RAISE_KINDED
        } catch {
            push(L, "\(error)".oneLine)
            return MOON_RAISE
        }
    }

    /// `__gc` of userdata holding a retained Swift object: releases it, and empties the slot
    /// so a resurrected userdata is inert.
    static let releaseObjectInUserdata: lua_CFunction = { L in
        guard let L, let slot = lua_touserdata(L, 1) else { return 0 }
        if let raw = slot.load(as: UnsafeMutableRawPointer?.self) {
            Unmanaged<AnyObject>.fromOpaque(raw).release()
            slot.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
        }
        return 0
    }

    /// Frees a registry reference later, when this state's own code is not in the middle of
    /// anything (the proxy holding it was collected by another state).
    func releaseLater(_ reference: Int32) { releasedReferences.append(reference) }

    func releaseReferences() {
        for reference in releasedReferences { luaL_unref(L, MOON_LUA_REGISTRYINDEX, reference) }
        releasedReferences.removeAll()
    }

    /// Makes `object` what `LuaCall.context` finds for every call into this state (and its
    /// coroutines), and keeps it alive as long as the state: one object, set by the host
    /// once it has registered its functions; a second replaces the first.
    package func setContext(_ object: AnyObject) {
        context = object
    }

    /// The state's context if it is a `T` (see `setContext`).
    package func context<T: AnyObject>(_ type: T.Type) -> T? { context as? T }

    /// Makes `other`'s interrupter stop this state too (an effect's state, its host's script).
    func shareInterrupts(with other: LuaState) {
        interruptFlag = other.interruptFlag
        moon_set_interrupt_flag(budget, interruptFlag.pointer)
    }

    deinit {
        moon_closestate(L)
    }

    /// Which limit, if any, has stopped the script running here (until the budget is rearmed).
    package var stop: ScriptStop? {
        switch Int(budget.pointee.stop_reason) {
        case MOON_STOP_INTERRUPTED: .interrupted
        case MOON_STOP_INSTRUCTIONS: .instructionLimit
        case MOON_STOP_TIME: .timeLimit
        default: nil
        }
    }

    package var budget: UnsafeMutablePointer<moon_budget> { moon_budget_of(L) }

    /// Seconds left before the running call's wall-clock limit (nil: none set): what a long
    /// Swift call, during which the count hook cannot run, must stop by.
    package var secondsLeft: Double? {
        let deadline = budget.pointee.deadline
        return deadline > 0 ? max(0, deadline - moon_monotonic_now()) : nil
    }
    package var memoryUsed: Int { moon_memory_used(L) }
    /// Bytes the Lua heap may hold while Lua code runs (0: unlimited). Host code (Swift
    /// functions and the host between runs) is not capped: an allocation error there would
    /// longjmp through Swift frames. A Swift function that leaves the heap over the cap
    /// fails as the allocation would have when it returns to Lua.
    package var memoryLimit: Int {
        get { configuredMemoryLimit }
        set {
            configuredMemoryLimit = newValue
            moon_set_memory_limit(L, newValue)
        }
    }

    /// Stops the running script from any thread (Ctrl-C).
    package var interrupter: LuaInterrupter { LuaInterrupter(flag: interruptFlag) }

    /// Runs `body` with the instruction and time budget of `limits` armed for this state,
    /// and the budget (and any interrupt) cleared afterwards. Coroutines share the budget;
    /// a script that catches the stop with `pcall` is stopped again at its next instruction.
    @discardableResult
    package func withRunLimits<T>(_ limits: RunLimits, _ body: () throws -> T) rethrows -> T {
        let budget = self.budget
        budget.pointee.instruction_limit = Int64(limits.instructions ?? -1)
        budget.pointee.instructions_left = Int64(limits.instructions ?? -1)
        budget.pointee.time_limit = limits.seconds ?? 0
        budget.pointee.deadline = limits.seconds.map { moon_monotonic_now() + $0 } ?? 0
        budget.pointee.stop_reason = 0
        foreignStop = nil
        defer {
            budget.pointee.instructions_left = -1
            budget.pointee.instruction_limit = -1
            budget.pointee.deadline = 0
            budget.pointee.stop_reason = 0
            moon_clear_interrupt(budget)
            moon_install_hook(L)
        }
        return try body()
    }

    /// Forgets old memory refusals when the outermost `load` or `call` begins.
    private func protected<T>(_ body: () throws -> T) rethrows -> T {
        if protectedDepth == 0 { moon_clear_memory_refusals(L) }
        protectedDepth += 1
        defer { protectedDepth -= 1 }
        return try body()
    }

    // MARK: Functions

    /// Pushes a Swift function as a Lua closure. `name` is used in `bad argument` messages.
    package func pushFunction(_ name: String, _ body: @escaping LuaFunction) {
        let box = FunctionBox(name: name, body: body)
        boxes.append(box)
        lua_pushlightuserdata(L, Unmanaged.passUnretained(box).toOpaque())
        moon_pushclosure(L, dispatch, 1)
    }

    /// Sets `table[name] = function` for the table on top of the stack.
    package func setFunction(_ name: String, qualifiedName: String? = nil, _ body: @escaping LuaFunction) {
        pushFunction(qualifiedName ?? name, body)
        lua_setfield(L, -2, name)
    }

    /// Pops the value on top of the stack into global `name`, raw: no `__newindex` a script
    /// gave `_G` runs from a Swift frame.
    package func setGlobal(_ name: String) {
        moon_pushglobaltable(L)         // value G
        lua_rotate(L, -2, 1)            // G value
        LuaState.push(L, name)          // G value name
        lua_rotate(L, -2, 1)            // G name value
        lua_rawset(L, -3)               // G
        moon_pop(L, 1)
    }

    // MARK: Running code

    /// Loads a text chunk (binary chunks are refused) and leaves the function on the stack.
    package func load(_ code: String, chunkName: String) throws {
        var code = code
        try code.withUTF8 { try load(bytes: UnsafeRawBufferPointer($0), chunkName: chunkName) }
    }

    /// Loads a text chunk from raw bytes (a file's exact contents, whatever their encoding)
    /// and leaves the function on the stack. Wraps `luaL_loadbufferx` in mode "t".
    package func load(bytes: UnsafeRawBufferPointer, chunkName: String) throws {
        if bytes.first == 0x1B {
            throw ScriptError(kind: .syntax, message: "\(LuaState.displayName(ofChunk: chunkName)): "
                           + String(cString: moon_binary_chunk_refused))
        }
        let status = protected {
            moon_load(L, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count, chunkName)
        }
        if status != LUA_OK { throw popError(status: status) }
    }

    /// Calls the function below `argumentCount` arguments with a traceback handler
    /// (`lua_pcallk` with `moon_msghandler`). Returns the number of results left on the stack.
    @discardableResult
    package func call(argumentCount: Int32, resultCount: Int32 = LUA_MULTRET) throws -> Int32 {
        let functionIndex = lua_gettop(L) - argumentCount
        lua_pushcclosure(L, moon_msghandler, 0)
        moon_insert(L, functionIndex)
        let status = protected { moon_pcall(L, argumentCount, resultCount, functionIndex) }
        moon_remove(L, functionIndex)
        if status != LUA_OK { throw popError(status: status) }
        return lua_gettop(L) - functionIndex + 1
    }

    /// Runs a chunk of code; returns how many results it left on the stack.
    @discardableResult
    package func run(_ code: String, chunkName: String, arguments: [String] = []) throws -> Int32 {
        try load(code, chunkName: chunkName)
        for argument in arguments { LuaState.push(L, argument) }
        return try call(argumentCount: Int32(arguments.count))
    }

    /// Calls a C function that may raise (library setup, `moon_sandbox_helpers`) under
    /// `lua_pcall`, so its errors come back as a `ScriptError` instead of aborting.
    @discardableResult
    package func callProtected(_ function: lua_CFunction, resultCount: Int32 = 0) throws -> Int32 {
        lua_pushcclosure(L, function, 0)
        return try call(argumentCount: 0, resultCount: resultCount)
    }

    /// The kind and subject this state remembers for an error it raised with that text
    /// (an engine failure), or nils.
    private func failureFields(of message: String) -> (kind: String?, subject: String?) {
        LuaState.push(L, message)
        moon_push_error_fields(L, -1)
        defer { moon_pop(L, 3) }
        return (moon_tostring(L, -2).map { String(cString: $0) }, moon_tostring(L, -1).map { String(cString: $0) })
    }

    private func popError(status: Int32) -> ScriptError {
        let text = moon_tostring(L, -1).map { String(cString: $0) } ?? "(error object is not a string)"
        moon_pop(L, 1)
        let kind: ScriptError.Kind
        switch status {
        case LUA_ERRSYNTAX: kind = .syntax
        case LUA_ERRMEM: kind = .memory
        case LUA_ERRERR: kind = .handler
        default: kind = .runtime
        }
        let marker = "\nstack traceback:"
        var message = text
        var traceback: String?
        if let split = text.utf8.indices.first(where: { text.utf8[$0...].starts(with: marker.utf8) }) {
            message = String(text[..<split])
            traceback = String(text[split...].dropFirst())
        }
        if let limited = memoryLimitMessage(for: message) {
            return ScriptError(kind: .memory, message: limited, traceback: traceback, stop: .memoryLimit)
        }
        let foreign = foreignStop.flatMap { message.hasSuffix($0.message) ? $0.stop : nil }
        let (failureKind, subject) = failureFields(of: message)
        return ScriptError(kind: kind, message: message, traceback: traceback, stop: stop ?? foreign,
                           failureKind: failureKind, subject: subject)
    }

    /// Lua says "not enough memory" without a position (LUA_ERRMEM reaches no message
    /// handler, and lauxlib's buffers raise the bare string); when the cap refused, say which
    /// limit and where instead. A script that re-raised the message keeps its own position.
    private func memoryLimitMessage(for message: String) -> String? {
        let lua = "not enough memory"
        guard moon_memory_refusals(L) > 0, message.hasSuffix(lua) else { return nil }
        var position = String(message.dropLast(lua.utf8.count))
        if position.isEmpty {
            let refusal = String(cString: moon_memory_refusal_position(L))
            position = refusal.isEmpty ? "" : refusal + " "
        }
        return position + "script exceeded its memory limit (\(LuaState.describeBytes(configuredMemoryLimit)))"
    }

    /// "64 MiB", "1.5 GiB", "300 KiB": how limits are named in messages.
    static func describeBytes(_ bytes: Int) -> String {
        let units = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        for (size, unit) in units where bytes >= size {
            let whole = bytes / size
            let tenths = (bytes % size) * 10 / size
            return tenths == 0 ? "\(whole) \(unit)" : "\(whole).\(tenths) \(unit)"
        }
        return "\(bytes) bytes"
    }

    /// The name Lua shows for a chunk name: "@x.lua" and "=x" both show as "x".
    static func displayName(ofChunk chunkName: String) -> String {
        chunkName.hasPrefix("@") || chunkName.hasPrefix("=") ? String(chunkName.dropFirst()) : chunkName
    }

    // MARK: Objects

    package func register(_ luaClass: LuaClass) {
        classes[luaClass.name] = luaClass
        luaClass.install(in: self)
    }

    package func luaClass(named name: String) -> LuaClass? { classes[name] }

    private func installObjectCache() {
        moon_newtable(L)
        moon_newtable(L)
        lua_pushstring(L, "v")
        lua_setfield(L, -2, "__mode")
        lua_setmetatable(L, -2)
        lua_setfield(L, MOON_LUA_REGISTRYINDEX, LuaState.objectCacheKey)
    }

    package func push(_ object: AnyObject, as luaClass: LuaClass) { LuaState.push(L, object, as: luaClass) }

    /// Records an object pushed for the first time: it belongs to this state (or to the one
    /// it was reached through).
    func adopt(_ object: AnyObject, as luaClass: LuaClass) {
        guard !engineObjects.isKnown(object) else { return }
        switch reaching {
        case .own: engineObjects.charge(object, bytes: luaClass.footprint(object), to: self)
        case .through(let owner): engineObjects.charge(object, bytes: luaClass.footprint(object), to: owner)
        }
    }

    /// Whether scripts in this state may change `object` (always, unless sandboxed).
    package func mayChange(_ object: AnyObject) -> Bool {
        !isSandboxed || engineObjects.owner(of: object) === self
    }
    package func object(at index: Int32, of luaClass: LuaClass) -> AnyObject? { LuaState.object(L, at: index, of: luaClass) }
}
