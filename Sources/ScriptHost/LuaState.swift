import CMoonLua
import CMoonLuaShim

/// A Swift function callable from Lua. It reads its arguments through `LuaCall`, pushes its
/// results and returns how many; throwing raises a Lua error at the caller's line.
public typealias LuaFunction = (LuaCall) throws -> Int32

final class FunctionBox {
    let name: String
    let body: LuaFunction
    init(name: String, body: @escaping LuaFunction) {
        self.name = name
        self.body = body
    }
}

/// The one entry point for every Swift function Lua calls. Errors never longjmp from here:
/// they are returned as a marker and raised by the C trampoline, after Swift has cleaned up.
private let dispatch: moon_swift_fn = { L in
    guard let L, let raw = lua_touserdata(L, moon_upvalueindex(2)) else { return 0 }
    let box = Unmanaged<FunctionBox>.fromOpaque(raw).takeUnretainedValue()
    do {
        return try box.body(LuaCall(L, functionName: box.name))
    } catch is LuaPassthroughError {
        return MOON_RAISE_VALUE
    } catch let error as LuaError {
        lua_pushstring(L, error.message)
        return MOON_RAISE_VALUE
    } catch let error as PositionedFromScript {
        lua_pushstring(L, error.message)
        return MOON_RAISE_FROM_SCRIPT
    } catch {
        lua_pushstring(L, "\(error)")
        return MOON_RAISE
    }
}

/// An error whose position should be the user's script line, not that of bundled Lua sugar.
public struct PositionedFromScript: Error {
    public let message: String
    public init(_ message: String) { self.message = message }
}

/// One Lua 5.4 state. Confined to one thread; closing it runs every pending `__gc`.
public final class LuaState {
    public let L: OpaquePointer
    private var boxes: [FunctionBox] = []
    private var classes: [String: LuaClass] = [:]

    /// - Parameter memoryLimit: bytes the Lua heap may hold (0: unlimited).
    public init(memoryLimit: Int = 0) throws {
        guard let state = moon_newstate(memoryLimit) else {
            throw LuaError(kind: .memory, message: "cannot create a Lua state: out of memory")
        }
        L = state
        moon_install_hook(L)
        installObjectCache()
    }

    deinit {
        moon_closestate(L)
    }

    public var budget: UnsafeMutablePointer<moon_budget> { moon_budget_of(L) }
    public var memoryUsed: Int { moon_memory_used(L) }
    public var memoryLimit: Int {
        get { moon_memory_limit(L) }
        set { moon_set_memory_limit(L, newValue) }
    }

    // MARK: Functions

    /// Pushes a Swift function as a Lua closure. `name` is used in `bad argument` messages.
    public func pushFunction(_ name: String, _ body: @escaping LuaFunction) {
        let box = FunctionBox(name: name, body: body)
        boxes.append(box)
        lua_pushlightuserdata(L, Unmanaged.passUnretained(box).toOpaque())
        moon_pushclosure(L, dispatch, 1)
    }

    /// Sets `table[name] = function` for the table on top of the stack.
    public func setFunction(_ name: String, qualifiedName: String? = nil, _ body: @escaping LuaFunction) {
        pushFunction(qualifiedName ?? name, body)
        lua_setfield(L, -2, name)
    }

    public func setGlobal(_ name: String) { lua_setglobal(L, name) }

    // MARK: Running code

    /// Loads a text chunk (binary chunks are refused) and leaves the function on the stack.
    public func load(_ code: String, chunkName: String) throws {
        let status = code.utf8CString.withUnsafeBufferPointer { buffer in
            luaL_loadbufferx(L, buffer.baseAddress, buffer.count - 1, chunkName, "t")
        }
        if status != LUA_OK { throw popError(status: status) }
    }

    /// Calls the function below `argumentCount` arguments with a traceback handler.
    /// Returns the number of results left on the stack.
    @discardableResult
    public func call(argumentCount: Int32, resultCount: Int32 = LUA_MULTRET) throws -> Int32 {
        let functionIndex = lua_gettop(L) - argumentCount
        lua_pushcclosure(L, moon_msghandler, 0)
        moon_insert(L, functionIndex)
        let status = moon_pcall(L, argumentCount, resultCount, functionIndex)
        moon_remove(L, functionIndex)
        if status != LUA_OK { throw popError(status: status) }
        return lua_gettop(L) - functionIndex + 1
    }

    /// Runs a chunk of code; returns how many results it left on the stack.
    @discardableResult
    public func run(_ code: String, chunkName: String, arguments: [String] = []) throws -> Int32 {
        try load(code, chunkName: chunkName)
        for argument in arguments { lua_pushstring(L, argument) }
        return try call(argumentCount: Int32(arguments.count))
    }

    private func popError(status: Int32) -> LuaError {
        let text = moon_tostring(L, -1).map { String(cString: $0) } ?? "(error object is not a string)"
        moon_pop(L, 1)
        let kind: LuaError.Kind
        switch status {
        case LUA_ERRSYNTAX: kind = .syntax
        case LUA_ERRMEM: kind = .memory
        case LUA_ERRERR: kind = .handler
        default: kind = .runtime
        }
        let marker = "\nstack traceback:"
        if let split = text.utf8.indices.first(where: { text.utf8[$0...].starts(with: marker.utf8) }) {
            return LuaError(kind: kind, message: String(text[..<split]),
                            traceback: String(text[split...].dropFirst()))
        }
        return LuaError(kind: kind, message: text)
    }

    // MARK: Objects

    public func register(_ luaClass: LuaClass) {
        classes[luaClass.name] = luaClass
        luaClass.install(in: self)
    }

    public func luaClass(named name: String) -> LuaClass? { classes[name] }

    private func installObjectCache() {
        moon_newtable(L)
        moon_newtable(L)
        lua_pushstring(L, "v")
        lua_setfield(L, -2, "__mode")
        lua_setmetatable(L, -2)
        lua_setfield(L, MOON_LUA_REGISTRYINDEX, LuaState.objectCacheKey)
    }

    public func push(_ object: AnyObject, as luaClass: LuaClass) { LuaState.push(L, object, as: luaClass) }
    public func object(at index: Int32, of luaClass: LuaClass) -> AnyObject? { LuaState.object(L, at: index, of: luaClass) }
}
