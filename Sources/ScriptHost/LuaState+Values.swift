import CMoonLua
import CMoonLuaShim

/// Stack helpers that need only the raw state, so `LuaCall` can use them too.
extension LuaState {
    static let objectCacheKey = "moonreel.objects"

    /// The string (or number) at `index`, decoded leniently (invalid UTF-8 is repaired).
    /// Numbers are written here, as Lua writes them, rather than by `lua_tolstring`, which
    /// would allocate (and so could raise) and change the value on the stack.
    package static func string(_ L: OpaquePointer, at index: Int32) -> String {
        if lua_type(L, index) == LUA_TNUMBER {
            var isInteger: Int32 = 0
            let integer = lua_tointegerx(L, index, &isInteger)
            if isInteger != 0 { return String(integer) }
            return numberText(lua_tonumberx(L, index, nil))
        }
        var length = 0
        guard lua_type(L, index) == LUA_TSTRING, let bytes = lua_tolstring(L, index, &length) else { return "" }
        // Lua strings may hold invalid UTF-8 or NULs; decoding repairs, never traps.
        return String(decoding: UnsafeRawBufferPointer(start: bytes, count: length), as: UTF8.self)
    }

    /// A float as Lua's `tostring` shows it ("%.14g"; whole numbers with ".0").
    static func numberText(_ value: Double) -> String {
        if value.isNaN { return value.sign == .minus ? "-nan" : "nan" }
        if value.isInfinite { return value < 0 ? "-inf" : "inf" }
        var buffer = [CChar](repeating: 0, count: 40)
        _ = withVaList([value]) { vsnprintf(&buffer, buffer.count, "%.14g", $0) }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.contains(where: { $0 == "." || $0 == "e" || $0 == "n" || $0 == "i" }) ? text : text + ".0"
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
        push(L, objectCacheKey)
        lua_rawget(L, MOON_LUA_REGISTRYINDEX)                             // cache
        lua_pushlightuserdata(L, key)
        if lua_rawget(L, -2) == LUA_TUSERDATA {                          // cache ud
            moon_remove(L, -2)
            return
        }
        moon_pop(L, 1)                                                    // cache
        LuaState.from(L)?.adopt(object, as: luaClass)
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
        guard rawField(L, -1, "__moonclasses") == LUA_TTABLE else { moon_pop(L, 1); return nil }
        let isKind = rawField(L, -1, luaClass.name) == LUA_TBOOLEAN
        moon_pop(L, 2)
        return isKind ? objectInUserdata(L, index) : nil
    }

    /// The class name of the userdata at `index`, if it is one of ours.
    package static func className(_ L: OpaquePointer, at index: Int32) -> String? {
        let index = lua_absindex(L, index)
        guard lua_type(L, index) == LUA_TUSERDATA, lua_getmetatable(L, index) != 0 else { return nil }
        defer { moon_pop(L, 2) }
        guard rawField(L, -1, "__name") == LUA_TSTRING else { return nil }
        let full = string(L, at: -1)
        return full.hasPrefix("moonreel.") ? String(full.dropFirst(9)) : nil
    }

    /// Pushes `table[name]` without metamethods and returns its type: the only way Swift
    /// reads tables, so no script code runs (or raises) from a Swift frame.
    @discardableResult
    package static func rawField(_ L: OpaquePointer, _ index: Int32, _ name: String) -> Int32 {
        let table = lua_absindex(L, index)
        push(L, name)
        return lua_rawget(L, table)
    }

    /// "script.lua:12: " for the script line running now (skipping Moonreel's own Lua), or ""
    /// when no script line is: the prefix of notes about what that line did.
    package static func scriptPosition(_ L: OpaquePointer) -> String {
        scriptLine(L).map { "\($0.file):\($0.line): " } ?? ""
    }

    /// The script file and line running the current call, as `scriptPosition` names them.
    package static func scriptLine(_ L: OpaquePointer) -> (file: String, line: Int)? {
        let level = moon_script_level(L)
        guard level > 0 else { return nil }
        var ar = lua_Debug()
        guard lua_getstack(L, level, &ar) != 0, lua_getinfo(L, "Sl", &ar) != 0 else { return nil }
        let source = withUnsafeBytes(of: ar.short_src) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return (source, Int(ar.currentline))
    }

    package static func objectInUserdata(_ L: OpaquePointer, _ index: Int32) -> AnyObject? {
        guard let slot = lua_touserdata(L, index),
              let raw = slot.load(as: UnsafeMutableRawPointer?.self) else { return nil }
        return Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue()
    }
}
