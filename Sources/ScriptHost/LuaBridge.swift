import CMoonLua
import CMoonLuaShim

/// Carries values between two Lua states (the user script's and an effect's, or two
/// effects'), which share no Lua values at all:
/// - nil, booleans, numbers and strings as they are;
/// - tables copied deeply (shared parts and cycles kept; Moonreel value metatables such as
///   colours kept, any other metatable dropped, so no metamethod crosses);
/// - Moonreel objects as the same engine object (what the receiving state may do with it is
///   decided by `EngineObjects`);
/// - functions as proxies that run in the state they came from, under its limits.
/// Threads and other userdata cannot cross.
struct LuaBridge {
    let from: LuaState
    let to: LuaState

    static let maximumDepth = 100

    /// Pushes onto `to` a copy of the value at `index` of `from`. On error both stacks are
    /// as they were.
    func copy(_ index: Int32) throws {
        let fromTop = lua_gettop(from.L)
        let toTop = lua_gettop(to.L)
        var copier = Copier(bridge: self, source: lua_absindex(from.L, index))
        do {
            try copier.run()
        } catch {
            lua_settop(from.L, fromTop)
            lua_settop(to.L, toTop)
            throw error
        }
        lua_settop(from.L, fromTop)
    }

    /// Who is on the other side, for messages: `effect "lyrics"` or "the script".
    var peerName: String {
        let effect = from.effectName ?? to.effectName
        return effect.map { "effect \"\($0)\"" } ?? "the script"
    }

    private struct Copier {
        let bridge: LuaBridge
        let source: Int32
        /// Tables already copied, by address in `from`, as keys of the table at `copiesIndex`
        /// of `to` (which keeps their copies).
        var copied: [UnsafeRawPointer: lua_Integer] = [:]
        var copiesIndex: Int32 = 0
        /// Roughly how much has been copied (entries, and strings by the 64 bytes), to check
        /// the receiving state's cap every so often.
        var cells = 0
        var checkedAt = 0

        init(bridge: LuaBridge, source: Int32) {
            self.bridge = bridge
            self.source = source
        }

        mutating func run() throws {
            let to = bridge.to.L
            try reserve(to, 4)
            lua_createtable(to, 0, 0)
            copiesIndex = lua_gettop(to)
            try copy(source, depth: 0)
            try checkMemory()
            moon_remove(to, copiesIndex)
        }

        private func reserve(_ L: OpaquePointer, _ slots: Int32) throws {
            guard lua_checkstack(L, slots) != 0 else {
                throw LuaArgumentError("a value too deeply nested to pass between the script and \(bridge.peerName)")
            }
        }

        private mutating func copy(_ index: Int32, depth: Int) throws {
            let from = bridge.from.L, to = bridge.to.L
            switch lua_type(from, index) {
            case LUA_TNIL: lua_pushnil(to)
            case LUA_TBOOLEAN: lua_pushboolean(to, lua_toboolean(from, index))
            case LUA_TNUMBER:
                if lua_isinteger(from, index) != 0 {
                    lua_pushinteger(to, lua_tointegerx(from, index, nil))
                } else {
                    lua_pushnumber(to, lua_tonumberx(from, index, nil))
                }
            case LUA_TSTRING:
                var length = 0
                let bytes = lua_tolstring(from, index, &length)
                lua_pushlstring(to, bytes, length)
                cells += length / 64
            case LUA_TTABLE: try copyTable(index, depth: depth)
            case LUA_TFUNCTION: try ForeignFunction.push(from: bridge.from, at: index, into: bridge.to)
            case LUA_TUSERDATA:
                guard let name = LuaState.className(from, at: index), let object = LuaState.objectInUserdata(from, index),
                      let luaClass = bridge.to.luaClass(named: name) else {
                    throw refusal(index)
                }
                LuaState.push(to, object, as: luaClass)
            default:
                throw refusal(index)
            }
        }

        private func refusal(_ index: Int32) -> LuaArgumentError {
            let type = String(cString: lua_typename(bridge.from.L, lua_type(bridge.from.L, index)))
            return LuaArgumentError("a \(type) cannot be passed between the script and \(bridge.peerName)")
        }

        private mutating func copyTable(_ index: Int32, depth: Int) throws {
            let from = bridge.from.L, to = bridge.to.L
            guard depth < LuaBridge.maximumDepth else {
                throw LuaArgumentError("a table nested more than \(LuaBridge.maximumDepth) deep cannot be passed between the script and \(bridge.peerName)")
            }
            // A read-only view (an effect's table, seen by a script) holds nothing itself:
            // what it shows is copied, or a copy would arrive empty.
            try reserve(from, 3)
            switch moon_readonly_target(from, index) {
            case 1:
                defer { moon_pop(from, 1) }
                return try copyTable(lua_gettop(from), depth: depth)
            case 2:
                throw LuaArgumentError("a read-only view of part of a table (such as av) cannot be passed between the script and \(bridge.peerName)")
            default:
                break
            }
            guard let address = lua_topointer(from, index) else { throw refusal(index) }
            if let key = copied[address] {
                lua_rawgeti(to, copiesIndex, key)
                return
            }
            try reserve(from, 4)
            try reserve(to, 6)
            lua_createtable(to, Int32(min(lua_rawlen(from, index), 1 << 16)), 0)
            let copy = lua_gettop(to)
            let key = lua_Integer(copied.count + 1)
            copied[address] = key
            lua_pushvalue(to, copy)
            lua_rawseti(to, copiesIndex, key)
            lua_pushnil(from)
            while lua_next(from, index) != 0 {                     // from: key value
                let top = lua_gettop(from)
                try self.copy(top - 1, depth: depth + 1)
                try self.copy(top, depth: depth + 1)
                lua_rawset(to, copy)
                moon_pop(from, 1)
                cells += 1
                if cells > checkedAt + 4096 {
                    checkedAt = cells
                    try checkMemory()
                }
            }
            if lua_getmetatable(from, index) != 0 {
                if LuaState.rawField(from, -1, "__name") == LUA_TSTRING {
                    let name = LuaState.string(from, at: -1)
                    if name.hasPrefix("moonreel."), moon_getmetatable_named(to, name) == LUA_TTABLE {
                        lua_setmetatable(to, copy)
                    } else {
                        moon_pop(to, 1)
                    }
                }
                moon_pop(from, 2)
            }
        }

        /// A copy stops as soon as it no longer fits in the receiving state's cap.
        private func checkMemory() throws {
            let limit = bridge.to.memoryLimit
            guard limit > 0, bridge.to.memoryUsed + bridge.to.engineBytes > limit else { return }
            throw LuaArgumentError("the values passed between the script and \(bridge.peerName) exceed the memory "
                                   + "limit (\(LuaState.describeBytes(limit)))")
        }
    }
}

/// A function of one state called from another: the proxy the other state holds runs it
/// in its own state, with the arguments and results carried by `LuaBridge`, under the
/// owner's limits when the owner is an effect.
final class ForeignFunction {
    private weak var owner: LuaState?
    private let reference: Int32

    private init(owner: LuaState, reference: Int32) {
        self.owner = owner
        self.reference = reference
    }

    deinit { owner?.releaseLater(reference) }

    private static let holderMetatable = "moonreel.foreignfunction"

    /// Pushes onto `target` a function standing for the function at `index` of `owner`
    /// (the function itself when it is a proxy of one of `target`'s).
    static func push(from owner: LuaState, at index: Int32, into target: LuaState) throws {
        if let proxied = proxy(in: owner.L, at: index), proxied.owner === target {
            lua_rawgeti(target.L, MOON_LUA_REGISTRYINDEX, lua_Integer(proxied.reference))
            return
        }
        lua_pushvalue(owner.L, index)
        let function = ForeignFunction(owner: owner, reference: luaL_ref(owner.L, MOON_LUA_REGISTRYINDEX))
        let L = target.L
        let slot = lua_newuserdatauv(L, MemoryLayout<UnsafeMutableRawPointer>.size, 0)!
        slot.storeBytes(of: Unmanaged.passRetained(function).toOpaque(), as: UnsafeMutableRawPointer.self)
        if moon_getmetatable_named(L, holderMetatable) != LUA_TTABLE {
            moon_pop(L, 1)
            _ = luaL_newmetatable(L, holderMetatable)
            lua_pushcclosure(L, LuaState.releaseObjectInUserdata, 0)
            lua_setfield(L, -2, "__gc")
        }
        lua_setmetatable(L, -2)
        moon_pushclosure(L, foreignFunctionDispatch, 1)
    }

    /// The `ForeignFunction` behind a proxy at `index`, if it is one.
    private static func proxy(in L: OpaquePointer, at index: Int32) -> ForeignFunction? {
        guard lua_iscfunction(L, index) != 0 else { return nil }
        guard lua_getupvalue(L, index, 1) != nil else { return nil }
        let marker = lua_touserdata(L, -1)
        moon_pop(L, 1)
        guard marker == unsafeBitCast(foreignFunctionDispatch, to: UnsafeMutableRawPointer.self),
              lua_getupvalue(L, index, 2) != nil else { return nil }
        defer { moon_pop(L, 1) }
        return LuaState.objectInUserdata(L, -1) as? ForeignFunction
    }

    /// Calls the function in its state with the caller's arguments; pushes its results.
    func call(_ call: LuaCall) throws -> Int32 {
        guard let owner, let caller = LuaState.from(call.L) else {
            throw LuaArgumentError("this function belonged to an effect that has ended")
        }
        let count = call.count
        return try owner.enter(from: caller) {
            let L = owner.L
            let base = lua_gettop(L)
            defer { lua_settop(L, base) }
            guard lua_checkstack(L, count + 8) != 0 else { throw LuaArgumentError("too many arguments") }
            lua_rawgeti(L, MOON_LUA_REGISTRYINDEX, lua_Integer(reference))
            let inbound = LuaBridge(from: caller, to: owner)
            if count > 0 {
                for index in 1...count { try inbound.copy(index) }
            }
            let results: Int32
            do {
                results = try owner.call(argumentCount: count)
            } catch let error as ScriptError {
                throw owner.crossing(error, into: caller)
            }
            guard lua_checkstack(call.L, results + 8) != 0 else { throw LuaArgumentError("too many results") }
            let outbound = LuaBridge(from: owner, to: caller)
            for index in 0..<results { try outbound.copy(base + 1 + index) }
            return results
        }
    }
}

/// Proxies' entry point (upvalue 2 holds the `ForeignFunction`).
private let foreignFunctionDispatch: moon_swift_fn = { L in
    guard let L, let function = LuaState.objectInUserdata(L, moon_upvalueindex(2)) as? ForeignFunction else { return 0 }
    return LuaState.returning(L) { try function.call(LuaCall(L, functionName: "function")) }
}
