import CMoonLua
import CMoonLuaShim

/// The arguments and results of one call from Lua into Swift. Argument checks throw
/// `LuaArgumentError`s worded as Lua's own (`bad argument #2 to 'insertTimeRange' (...)`).
package struct LuaCall {
    package let L: OpaquePointer
    package let functionName: String

    package init(_ L: OpaquePointer, functionName: String) {
        self.L = L
        self.functionName = functionName
    }

    /// The object the host set as this state's context (`LuaState.setContext`), as `T`: how
    /// a Swift function finds its API from the call rather than capturing it. Without one
    /// (a host that never set it, or set another type) it throws an internal error, which
    /// is raised at the script's line as any other; it never traps.
    package func context<T: AnyObject>(_ type: T.Type = T.self) throws -> T {
        guard let object = LuaState.from(L)?.context(T.self) else { throw MissingContext(functionName: functionName, type: "\(T.self)") }
        return object
    }

    package var count: Int32 { lua_gettop(L) }
    package func type(_ index: Int32) -> Int32 { lua_type(L, index) }
    package func isNoneOrNil(_ index: Int32) -> Bool { lua_type(L, index) <= LUA_TNIL }

    /// Lua's type name, or the class name for Moonreel objects (`Composition`).
    package func typeName(_ index: Int32) -> String {
        if let name = LuaState.className(L, at: index) { return name }
        return String(cString: lua_typename(L, lua_type(L, index)))
    }

    /// `bad argument #N to 'name' (message)`, numbered as Lua numbers it for methods; of
    /// the kind and subject of `cause` when that is a `KindedError` (else `invalidArgument`).
    package func argumentError(_ index: Int32, _ message: String, cause: Error? = nil) -> LuaArgumentError {
        let plain = plainArgumentError(index, message)
        guard let kinded = cause as? KindedError else { return plain }
        return LuaArgumentError(plain.message, kind: kinded.errorKindName, subject: kinded.errorSubject)
    }

    private func plainArgumentError(_ index: Int32, _ message: String) -> LuaArgumentError {
        var position = index
        var ar = lua_Debug()
        if lua_getstack(L, 0, &ar) != 0, lua_getinfo(L, "n", &ar) != 0,
           let namewhat = ar.namewhat, String(cString: namewhat) == "method" {
            position -= 1
            if position == 0 {
                return LuaArgumentError("calling '\(functionName)' on bad self (\(message))")
            }
        }
        return LuaArgumentError("bad argument #\(position) to '\(functionName)' (\(message))")
    }

    package func typeError(_ index: Int32, expected: String) -> LuaArgumentError {
        let got = lua_type(L, index) == LUA_TNONE ? "no value" : typeName(index)
        return argumentError(index, "\(expected) expected, got \(got)")
    }

    // MARK: Reading arguments

    package func number(_ index: Int32) throws -> Double {
        var isNumber: Int32 = 0
        let value = lua_tonumberx(L, index, &isNumber)
        guard isNumber != 0, lua_type(L, index) == LUA_TNUMBER else { throw typeError(index, expected: "number") }
        return value
    }

    package func integer(_ index: Int32) throws -> Int {
        guard lua_type(L, index) == LUA_TNUMBER else { throw typeError(index, expected: "integer") }
        var isInteger: Int32 = 0
        let value = lua_tointegerx(L, index, &isInteger)
        guard isInteger != 0 else { throw argumentError(index, "number has no integer representation") }
        return Int(value)
    }

    package func string(_ index: Int32) throws -> String {
        guard lua_type(L, index) == LUA_TSTRING else { throw typeError(index, expected: "string") }
        return LuaState.string(L, at: index)
    }

    package func optionalString(_ index: Int32) throws -> String? {
        isNoneOrNil(index) ? nil : try string(index)
    }

    package func boolean(_ index: Int32) throws -> Bool {
        guard lua_type(L, index) == LUA_TBOOLEAN else { throw typeError(index, expected: "boolean") }
        return lua_toboolean(L, index) != 0
    }

    /// The Swift object behind a Moonreel userdata of `luaClass` (or of a class derived from it).
    package func object<T: AnyObject>(_ index: Int32, _ luaClass: LuaClass, as type: T.Type = T.self) throws -> T {
        guard let object = LuaState.object(L, at: index, of: luaClass) as? T else {
            if LuaState.className(L, at: index) == luaClass.name, LuaState.objectInUserdata(L, index) == nil {
                throw argumentError(index, "this \(luaClass.name) was closed (its <close> variable went out of scope)")
            }
            throw typeError(index, expected: luaClass.name)
        }
        return object
    }

    /// As `object`, for an argument the call changes (a layer it adopts as a sublayer): in
    /// an effect, it must be one the effect owns.
    package func changedObject<T: AnyObject>(_ index: Int32, _ luaClass: LuaClass, as type: T.Type = T.self) throws -> T {
        let object: T = try object(index, luaClass)
        if let state = LuaState.from(L), !state.mayChange(object) {
            throw argumentError(index, "this \(luaClass.name) came from the script (or another effect) and is read-only "
                                + "in this effect; build your own and return it")
        }
        return object
    }

    package func optionalObject<T: AnyObject>(_ index: Int32, _ luaClass: LuaClass, as type: T.Type = T.self) throws -> T? {
        isNoneOrNil(index) ? nil : try object(index, luaClass, as: type)
    }

    /// Calls `body` with each string-keyed field of the table at `index`; the value is on
    /// top of the stack (index -1) during the call. Non-string keys are an error.
    package func forEachField(of index: Int32, _ body: (String) throws -> Void) throws {
        let table = lua_absindex(L, index)
        lua_pushnil(L)
        while lua_next(L, table) != 0 {
            guard lua_type(L, -2) == LUA_TSTRING else {
                let keyType = String(cString: lua_typename(L, lua_type(L, -2)))
                moon_pop(L, 2)
                throw argumentError(table, "property names must be strings, got a \(keyType) key")
            }
            let key = LuaState.string(L, at: -2)
            do { try body(key) } catch {
                moon_pop(L, 2)
                throw error
            }
            moon_pop(L, 1)
        }
    }

    /// Pushes `table[i]` (1-based) and returns its Lua type; pop it when done. Raw: no
    /// metamethod runs (one could raise an error through the Swift frames calling this).
    @discardableResult
    package func pushElement(of index: Int32, _ i: Int) -> Int32 { lua_rawgeti(L, index, lua_Integer(i)) }

    /// Pushes `table.name` and returns its Lua type; pop it when done. Raw, as `pushElement`.
    @discardableResult
    package func pushField(of index: Int32, _ name: String) -> Int32 {
        let table = lua_absindex(L, index)
        LuaState.push(L, name)
        return lua_rawget(L, table)
    }

    package func rawLength(_ index: Int32) -> Int { Int(lua_rawlen(L, index)) }
    package func pop(_ n: Int32 = 1) { moon_pop(L, n) }
    package func absolute(_ index: Int32) -> Int32 { lua_absindex(L, index) }

    // MARK: Results

    package func push(_ value: Double) { lua_pushnumber(L, value) }
    package func push(_ value: Int) { lua_pushinteger(L, lua_Integer(value)) }
    package func push(_ value: String) { LuaState.push(L, value) }
    package func push(_ value: Bool) { lua_pushboolean(L, value ? 1 : 0) }
    package func pushNil() { lua_pushnil(L) }
    package func push(_ object: AnyObject, as luaClass: LuaClass) { LuaState.push(L, object, as: luaClass) }
    package func pushValue(_ index: Int32) { lua_pushvalue(L, index) }

    /// Pushes `error`'s one-line message after `position` for a function that returns its
    /// failure (`nil, err`): the text answers `err.kind`, `err.subject` and `err.message` as
    /// a raised error's does (an error of no kind is the text alone).
    package func pushError(_ error: any Error, at position: String) {
        guard let error = error as? KindedError else {
            LuaState.push(L, position + "\(error)".oneLine)
            return
        }
        LuaState.push(L, error.scriptMessage.oneLine)
        LuaState.push(L, error.errorKindName)
        if let subject = error.errorSubject { LuaState.push(L, subject) } else { lua_pushnil(L) }
        moon_push_kinded_error(L, position)
    }

    /// Pushes a new array table filled by `element`, which pushes exactly one value (if it
    /// throws, the unfinished table is left on the stack, under the error the call raises).
    package func pushArray<S: Sequence>(_ items: S, _ element: (S.Element) throws -> Void) rethrows {
        lua_createtable(L, 0, 0)
        var i: lua_Integer = 1
        for item in items {
            try element(item)
            lua_rawseti(L, -2, i)
            i += 1
        }
    }

    /// Pushes a new table with string keys; `fill` sets its fields with `setField`.
    package func pushRecord(_ fill: () throws -> Void) rethrows {
        lua_createtable(L, 0, 4)
        try fill()
    }

    /// Sets `name` of the table just below the value on top of the stack to that value.
    package func setField(_ name: String) { lua_setfield(L, -2, name) }
}

/// `LuaCall.context` found nothing of the type asked for: a host that registered functions
/// needing a context without setting one (a bug in Moonreel, not in the script).
package struct MissingContext: Error, CustomStringConvertible {
    package let functionName: String
    package let type: String
    package var description: String {
        "internal error: '\(functionName)' found no \(type) in its Lua state (the host set no context)"
    }
}
