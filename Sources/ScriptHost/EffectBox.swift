import CMoonLua
import CMoonLuaShim

/// One effect module in a Lua state of its own: its own allocator and memory cap, its own
/// count hook and budget, its own globals (the sandbox) and its own `av`. Nothing of the
/// user script's state is reachable from it; values cross only through `LuaBridge`, so
/// whatever runs the effect's code (its `apply`, a function it returned, one kept in a
/// table) runs here, under the effect's limits.
final class EffectBox {
    let module: String
    let lua: LuaState
    /// The glue's functions in this state (see Lua/effect_host.lua), as registry references.
    private let applyReference: Int32
    private let fieldReference: Int32
    private let descriptionReference: Int32
    /// The effect's checked metadata, in this state's registry.
    private let infoReference: Int32

    /// Creates the state, builds its sandbox and runs the effect's chunk, on behalf of
    /// `caller` (whose limits bound the effect's).
    init(module: String, found: FoundEffect, host: ScriptHost, caller: LuaState) throws {
        self.module = module
        lua = try LuaState(memoryLimit: host.limits.effectMemory, engineObjects: host.lua.engineObjects, sandboxed: true)
        lua.effectName = module
        lua.effectLocation = found.location
        lua.effectFolder = EffectAssets.folder(ofEffectAt: found.location)
        lua.entryLimits = host.limits.effect
        lua.shareInterrupts(with: host.lua)
        try lua.callProtected(moon_open_effect_libraries)
        try host.prepareEffectState(lua)
        try host.runGlue(in: lua)                                        // api
        let L = lua.L
        func reference(_ name: String) -> Int32 {
            LuaState.rawField(L, -1, name)
            return luaL_ref(L, MOON_LUA_REGISTRYINDEX)
        }
        applyReference = reference("apply")
        fieldReference = reference("field")
        descriptionReference = reference("description")
        LuaState.rawField(L, -1, "load")                                  // api load
        moon_remove(L, -2)                                                // load
        found.source.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { _ = lua_pushlstring(L, $0.baseAddress, $0.count) }
        }
        LuaState.push(L, found.chunkName)
        LuaState.push(L, module)
        LuaState.push(L, found.location)
        let lua = self.lua
        try lua.enter(from: caller) {
            do {
                try lua.call(argumentCount: 4, resultCount: 1)           // info
            } catch let error as ScriptError {
                throw lua.crossing(error, into: caller)
            }
        }
        infoReference = luaL_ref(L, MOON_LUA_REGISTRYINDEX)
    }

    /// Pushes onto `caller`'s stack what its glue wraps: the metadata (copied), and
    /// proxies of `apply` and of the field reader.
    func pushHandles(into caller: LuaState) throws {
        lua_rawgeti(lua.L, MOON_LUA_REGISTRYINDEX, lua_Integer(infoReference))
        defer { moon_pop(lua.L, 1) }
        try LuaBridge(from: lua, to: caller).copy(-1)
        for reference in [applyReference, fieldReference] {
            lua_rawgeti(lua.L, MOON_LUA_REGISTRYINDEX, lua_Integer(reference))
            defer { moon_pop(lua.L, 1) }
            try ForeignFunction.push(from: lua, at: -1, into: caller)
        }
    }

    /// The metadata, for listings.
    func info(caller: LuaState) throws -> EffectInfo {
        let L = lua.L
        let base = lua_gettop(L)
        defer { lua_settop(L, base) }
        lua_rawgeti(L, MOON_LUA_REGISTRYINDEX, lua_Integer(descriptionReference))
        let lua = self.lua
        _ = try lua.enter(from: caller) { try lua.call(argumentCount: 0, resultCount: 1) }
        return DescriptionReader(L, at: -1).effectInfo
    }
}

extension LuaState {
    /// Runs `body`, a call into this state from `caller`. An effect's state gets its limits
    /// afresh for each outermost call, bounded by what is left of the caller's; the
    /// instructions it used are charged to the caller.
    func enter<T>(from caller: LuaState, _ body: () throws -> T) throws -> T {
        guard engineObjects.crossings < EngineObjects.maximumCrossings else {
            throw LuaArgumentError("calls between the script and effects nest more than \(EngineObjects.maximumCrossings) deep")
        }
        engineObjects.crossings += 1
        defer { engineObjects.crossings -= 1 }
        releaseReferences()
        guard let limits = entryLimits, entryDepth == 0 else {
            entryDepth += 1
            defer { entryDepth -= 1 }
            return try body()
        }
        let callerBudget = caller.budget.pointee
        let budget = self.budget
        var instructions = Int64(limits.instructions ?? -1)
        var instructionLimit = instructions
        if callerBudget.instructions_left >= 0, instructions < 0 || callerBudget.instructions_left < instructions {
            instructions = callerBudget.instructions_left
            instructionLimit = callerBudget.instruction_limit
        }
        var deadline = limits.seconds.map { moon_monotonic_now() + $0 } ?? 0
        var timeLimit = limits.seconds ?? 0
        if callerBudget.deadline > 0, deadline == 0 || callerBudget.deadline < deadline {
            deadline = callerBudget.deadline
            timeLimit = callerBudget.time_limit
        }
        budget.pointee.instructions_left = instructions
        budget.pointee.instruction_limit = instructionLimit
        budget.pointee.deadline = deadline
        budget.pointee.time_limit = timeLimit
        budget.pointee.stop_reason = 0
        moon_install_hook(L)
        entryDepth = 1
        defer {
            entryDepth = 0
            if instructions >= 0, caller.budget.pointee.instructions_left >= 0 {
                let used = instructions - max(0, budget.pointee.instructions_left)
                caller.budget.pointee.instructions_left = max(0, caller.budget.pointee.instructions_left - used)
            }
            budget.pointee.instructions_left = -1
            budget.pointee.deadline = 0
        }
        return try body()
    }

    /// The error to raise in `caller` for `error`, which code of this state raised: as it
    /// is when it names its place, else naming the effect (and then the caller's line). A
    /// stop by a limit keeps its kind.
    func crossing(_ error: ScriptError, into caller: LuaState) -> Error {
        let named = effectName.map { error.message.hasPrefix("effect \"") ? error.message : "effect \"\($0)\": \(error.message)" }
        let result: Error
        let message: String
        // Effects' chunks are "@effects/NAME.lua": a message starting so names its place.
        if error.line == nil, !error.message.hasPrefix("effects/"), let named {
            message = named
            result = PositionedFromScript(named)
        } else {
            message = error.message
            result = ScriptError(kind: error.kind, message: error.message, stop: error.stop,
                                 failureKind: error.failureKind, subject: error.subject)
        }
        if let stop = error.stop { caller.foreignStop = (message, stop) }
        return result
    }
}
