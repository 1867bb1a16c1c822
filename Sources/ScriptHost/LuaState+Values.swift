import CMoonLua
import CMoonLuaShim

/// Stack helpers that need only the raw state, so `LuaCall` can use them too.
extension LuaState {
    static let objectCacheKey = "moonreel.objects"

    /// The string (or number) at `index`, decoded leniently (invalid UTF-8 is repaired).
    public static func string(_ L: OpaquePointer, at index: Int32) -> String {
        var length = 0
        guard let bytes = lua_tolstring(L, index, &length) else { return "" }
        // Lua strings may hold invalid UTF-8 or NULs; decoding repairs, never traps.
        return String(decoding: UnsafeRawBufferPointer(start: bytes, count: length), as: UTF8.self)
    }

    static func push(_ L: OpaquePointer, _ value: String) {
        var value = value
        value.withUTF8 { buffer in
            _ = buffer.withMemoryRebound(to: CChar.self) { lua_pushlstring(L, $0.baseAddress, $0.count) }
        }
    }

    /// Pushes the one userdata that stands for `object` (the same userdata every time while
    /// Lua holds it, so identity and `==` work in scripts).
    static func push(_ L: OpaquePointer, _ object: AnyObject, as luaClass: LuaClass) {
        let key = Unmanaged.passUnretained(object).toOpaque()
        lua_getfield(L, MOON_LUA_REGISTRYINDEX, objectCacheKey)          // cache
        lua_pushlightuserdata(L, key)
        if lua_rawget(L, -2) == LUA_TUSERDATA {                          // cache ud
            moon_remove(L, -2)
            return
        }
        moon_pop(L, 1)                                                    // cache
        let slot = lua_newuserdatauv(L, MemoryLayout<UnsafeMutableRawPointer>.size, 0)!
        slot.storeBytes(of: Unmanaged.passRetained(object).toOpaque(), as: UnsafeMutableRawPointer.self)
        _ = moon_getmetatable_named(L, luaClass.metatableName)            // cache ud mt
        lua_setmetatable(L, -2)                                           // cache ud
        lua_pushlightuserdata(L, key)
        lua_pushvalue(L, -2)
        lua_rawset(L, -4)                                                 // cache ud
        moon_remove(L, -2)                                                // ud
    }

    /// The object at `index` if it is a userdata of `luaClass` (or of a class derived from it).
    static func object(_ L: OpaquePointer, at index: Int32, of luaClass: LuaClass) -> AnyObject? {
        let index = lua_absindex(L, index)
        guard lua_type(L, index) == LUA_TUSERDATA, lua_getmetatable(L, index) != 0 else { return nil }
        defer { moon_pop(L, 1) }
        guard lua_getfield(L, -1, "__moonclasses") == LUA_TTABLE else { moon_pop(L, 1); return nil }
        let isKind = lua_getfield(L, -1, luaClass.name) == LUA_TBOOLEAN
        moon_pop(L, 2)
        return isKind ? objectInUserdata(L, index) : nil
    }

    /// The class name of the userdata at `index`, if it is one of ours.
    public static func className(_ L: OpaquePointer, at index: Int32) -> String? {
        let index = lua_absindex(L, index)
        guard lua_type(L, index) == LUA_TUSERDATA, lua_getmetatable(L, index) != 0 else { return nil }
        defer { moon_pop(L, 2) }
        guard lua_getfield(L, -1, "__name") == LUA_TSTRING else { return nil }
        let full = string(L, at: -1)
        return full.hasPrefix("moonreel.") ? String(full.dropFirst(9)) : nil
    }

    /// "script.lua:12: " for the script line running now (skipping Moonreel's own Lua), or ""
    /// when no script line is: the prefix of notes about what that line did.
    public static func scriptPosition(_ L: OpaquePointer) -> String {
        let level = moon_script_level(L)
        guard level > 0 else { return "" }
        var ar = lua_Debug()
        guard lua_getstack(L, level, &ar) != 0, lua_getinfo(L, "Sl", &ar) != 0 else { return "" }
        let source = withUnsafeBytes(of: ar.short_src) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return "\(source):\(ar.currentline): "
    }

    static func objectInUserdata(_ L: OpaquePointer, _ index: Int32) -> AnyObject? {
        guard let slot = lua_touserdata(L, index),
              let raw = slot.load(as: UnsafeMutableRawPointer?.self) else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue()
    }
}
