import CMoonLua
import CMoonLuaShim

/// A Lua value as plain Swift data: what app functions receive and return, and what
/// ``ScriptConvertible`` types convert through.
///
/// A Lua table whose keys are exactly 1...n is an ``array(_:)``; one with string keys a
/// ``table(_:)``; the empty table converts to either.
public enum ScriptValue: Sendable, Equatable {
    /// Lua's `nil` (also a missing argument).
    case `nil`
    /// A Lua boolean.
    case bool(Bool)
    /// A Lua integer.
    case integer(Int)
    /// A Lua float.
    case number(Double)
    /// A Lua string (invalid UTF-8 is repaired).
    case string(String)
    /// A Lua sequence, `{ "a", "b" }`.
    case array([ScriptValue])
    /// A Lua table with string keys, `{ title = "x" }`.
    case table([String: ScriptValue])

    /// The Lua type name, for messages ("string", "table", …).
    public var typeName: String {
        switch self {
        case .nil: "nil"
        case .bool: "boolean"
        case .integer, .number: "number"
        case .string: "string"
        case .array, .table: "table"
        }
    }
}

/// A Swift type that app functions can take from and give to scripts: `String`, `Int`,
/// `Double`, `Bool`, arrays and string-keyed dictionaries of them, optionals of them (nil
/// when the script leaves the argument out) and ``ScriptValue`` itself.
public protocol ScriptConvertible {
    /// How a script should write such a value, for "bad argument" messages ("string").
    static var scriptTypeName: String { get }
    /// The value from a script's, or nil when it is of another type.
    init?(scriptValue: ScriptValue)
    /// The value as scripts see it.
    var scriptValue: ScriptValue { get }
}

extension ScriptValue: ScriptConvertible {
    /// "value": any value a script can pass.
    public static var scriptTypeName: String { "value" }
    /// The value itself.
    public init?(scriptValue: ScriptValue) { self = scriptValue }
    /// The value itself.
    public var scriptValue: ScriptValue { self }
}

extension String: ScriptConvertible {
    /// "string".
    public static var scriptTypeName: String { "string" }
    /// A Lua string (numbers are not turned into strings).
    public init?(scriptValue: ScriptValue) {
        guard case .string(let value) = scriptValue else { return nil }
        self = value
    }
    /// A Lua string.
    public var scriptValue: ScriptValue { .string(self) }
}

extension Int: ScriptConvertible {
    /// "integer".
    public static var scriptTypeName: String { "integer" }
    /// A Lua integer, or a float with an exact integer value.
    public init?(scriptValue: ScriptValue) {
        switch scriptValue {
        case .integer(let value): self = value
        case .number(let value): guard let exact = Int(exactly: value) else { return nil }; self = exact
        default: return nil
        }
    }
    /// A Lua integer.
    public var scriptValue: ScriptValue { .integer(self) }
}

extension Double: ScriptConvertible {
    /// "number".
    public static var scriptTypeName: String { "number" }
    /// Any Lua number.
    public init?(scriptValue: ScriptValue) {
        switch scriptValue {
        case .integer(let value): self = Double(value)
        case .number(let value): self = value
        default: return nil
        }
    }
    /// A Lua float.
    public var scriptValue: ScriptValue { .number(self) }
}

extension Bool: ScriptConvertible {
    /// "boolean".
    public static var scriptTypeName: String { "boolean" }
    /// A Lua boolean (Lua's truthiness of other values is not applied).
    public init?(scriptValue: ScriptValue) {
        guard case .bool(let value) = scriptValue else { return nil }
        self = value
    }
    /// A Lua boolean.
    public var scriptValue: ScriptValue { .bool(self) }
}

extension Array: ScriptConvertible where Element: ScriptConvertible {
    /// "array of ELEMENT".
    public static var scriptTypeName: String { "array of \(Element.scriptTypeName)" }
    /// A Lua sequence whose every element converts.
    public init?(scriptValue: ScriptValue) {
        switch scriptValue {
        case .array(let values):
            var elements: [Element] = []
            elements.reserveCapacity(values.count)
            for value in values {
                guard let element = Element(scriptValue: value) else { return nil }
                elements.append(element)
            }
            self = elements
        case .table(let fields) where fields.isEmpty: self = []
        default: return nil
        }
    }
    /// A Lua sequence.
    public var scriptValue: ScriptValue { .array(map(\.scriptValue)) }
}

extension Dictionary: ScriptConvertible where Key == String, Value: ScriptConvertible {
    /// "table of VALUE".
    public static var scriptTypeName: String { "table of \(Value.scriptTypeName)" }
    /// A Lua table with string keys whose every value converts.
    public init?(scriptValue: ScriptValue) {
        switch scriptValue {
        case .table(let fields):
            var dictionary: [String: Value] = [:]
            for (key, value) in fields {
                guard let converted = Value(scriptValue: value) else { return nil }
                dictionary[key] = converted
            }
            self = dictionary
        case .array(let values) where values.isEmpty: self = [:]
        default: return nil
        }
    }
    /// A Lua table with string keys.
    public var scriptValue: ScriptValue { .table(mapValues(\.scriptValue)) }
}

extension Optional: ScriptConvertible where Wrapped: ScriptConvertible {
    /// "WRAPPED or nil".
    public static var scriptTypeName: String { "\(Wrapped.scriptTypeName) or nil" }
    /// nil for Lua's nil (or a missing argument), else the wrapped type's conversion.
    public init?(scriptValue: ScriptValue) {
        if case .nil = scriptValue {
            self = .none
        } else {
            guard let value = Wrapped(scriptValue: scriptValue) else { return nil }
            self = .some(value)
        }
    }
    /// Lua's nil, or the wrapped value.
    public var scriptValue: ScriptValue { map(\.scriptValue) ?? .nil }
}

extension LuaCall {
    /// Argument `index` as plain data; functions, userdata and threads are refused, as are
    /// tables nested deeper than `LuaBridge.maximumDepth` (a table holding itself).
    package func value(_ index: Int32) throws -> ScriptValue {
        do {
            return try ScriptValue.read(L, at: index)
        } catch let unsupported as UnsupportedScriptValue {
            throw argumentError(index, unsupported.reason)
        }
    }

    /// Argument `index` converted to `T`, or a "bad argument" error naming what was expected.
    package func argument<T: ScriptConvertible>(_ index: Int32, as type: T.Type = T.self) throws -> T {
        let value = try value(index)
        guard let converted = T(scriptValue: value) else {
            let got = lua_type(L, index) == LUA_TNONE ? "no value" : value.typeName
            throw argumentError(index, "\(T.scriptTypeName) expected, got \(got)")
        }
        return converted
    }

    /// Pushes `value` as a new Lua value.
    package func push(_ value: ScriptValue) throws {
        try value.push(L)
    }
}

/// Why a Lua value has no `ScriptValue` form.
private struct UnsupportedScriptValue: Error {
    let reason: String
}

/// Reads Lua values into `ScriptValue`s from a Swift frame, where no limit of the script
/// runs: tables are read raw (no metamethod runs), at most `LuaBridge.maximumDepth` deep,
/// and at most `cellsLeft` values in all (a table that holds another twice at each of
/// forty levels stands for 2⁴⁰ values).
private struct ValueReader {
    let L: OpaquePointer
    var cellsLeft = 1 << 20

    mutating func read(at index: Int32, depth: Int) throws -> ScriptValue {
        let index = lua_absindex(L, index)
        cellsLeft -= 1
        guard cellsLeft >= 0 else { throw UnsupportedScriptValue(reason: "more than \(1 << 20) values in one value") }
        switch lua_type(L, index) {
        case LUA_TNONE, LUA_TNIL:
            return .nil
        case LUA_TBOOLEAN:
            return .bool(lua_toboolean(L, index) != 0)
        case LUA_TNUMBER:
            if lua_isinteger(L, index) != 0 { return .integer(Int(lua_tointegerx(L, index, nil))) }
            return .number(lua_tonumberx(L, index, nil))
        case LUA_TSTRING:
            return .string(LuaState.string(L, at: index))
        case LUA_TTABLE:
            guard depth < LuaBridge.maximumDepth else {
                throw UnsupportedScriptValue(reason: "tables nested more than \(LuaBridge.maximumDepth) deep (does a table hold itself?)")
            }
            return try readTable(at: index, depth: depth + 1)
        default:
            let name = String(cString: lua_typename(L, lua_type(L, index)))
            throw UnsupportedScriptValue(reason: "plain values expected (nil, boolean, number, string, table), got \(name)")
        }
    }

    /// A sequence when the keys are exactly 1...n, else a string-keyed table.
    private mutating func readTable(at index: Int32, depth: Int) throws -> ScriptValue {
        guard lua_checkstack(L, 3) != 0 else { throw UnsupportedScriptValue(reason: "tables nested too deep") }
        let length = Int(lua_rawlen(L, index))
        var fields: [String: ScriptValue] = [:]
        var elements = [ScriptValue](repeating: .nil, count: length)
        var elementCount = 0
        var otherKeys = false
        lua_pushnil(L)
        while lua_next(L, index) != 0 {
            defer { moon_pop(L, 1) }
            let value: ScriptValue
            do { value = try read(at: -1, depth: depth) } catch { moon_pop(L, 1); throw error }  // the key; defer pops the value
            if lua_type(L, -2) == LUA_TSTRING {
                fields[LuaState.string(L, at: -2)] = value
            } else if lua_isinteger(L, -2) != 0, case let key = Int(lua_tointegerx(L, -2, nil)), key >= 1, key <= length {
                elements[key - 1] = value
                elementCount += 1
            } else {
                otherKeys = true
            }
        }
        if fields.isEmpty, !otherKeys, elementCount == length { return .array(elements) }
        guard !otherKeys, elementCount == 0 else {
            throw UnsupportedScriptValue(reason: "a table with either keys 1…n (an array) or string keys expected, got one with both or other keys")
        }
        return .table(fields)
    }
}

extension ScriptValue {
    fileprivate static func read(_ L: OpaquePointer, at index: Int32) throws -> ScriptValue {
        var reader = ValueReader(L: L)
        return try reader.read(at: index, depth: 0)
    }

    /// Pushes the value; on error the stack is as it was.
    fileprivate func push(_ L: OpaquePointer) throws {
        let top = lua_gettop(L)
        do {
            try push(L, depth: 0)
        } catch {
            lua_settop(L, top)
            throw error
        }
    }

    private func push(_ L: OpaquePointer, depth: Int) throws {
        guard depth < LuaBridge.maximumDepth, lua_checkstack(L, 3) != 0 else {
            throw LuaArgumentError("a value nested more than \(LuaBridge.maximumDepth) deep cannot be given to the script")
        }
        switch self {
        case .nil: lua_pushnil(L)
        case .bool(let value): lua_pushboolean(L, value ? 1 : 0)
        case .integer(let value): lua_pushinteger(L, lua_Integer(value))
        case .number(let value): lua_pushnumber(L, value)
        case .string(let value): LuaState.push(L, value)
        case .array(let values):
            lua_createtable(L, Int32(clamping: values.count), 0)
            for (position, value) in values.enumerated() {
                try value.push(L, depth: depth + 1)
                lua_rawseti(L, -2, lua_Integer(position + 1))
            }
        case .table(let fields):
            lua_createtable(L, 0, Int32(clamping: fields.count))
            for (key, value) in fields {
                LuaState.push(L, key)   // raw and whole: lua_setfield would cut a key at a NUL
                try value.push(L, depth: depth + 1)
                lua_rawset(L, -3)
            }
        }
    }
}
