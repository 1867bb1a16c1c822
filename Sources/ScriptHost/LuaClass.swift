import CMoonLua
import CMoonLuaShim

/// A Lua-visible property of a class: a getter that pushes one value, an optional setter
/// that reads the value at `valueIndex` (3 for `obj.key = value`), and a line of help.
public struct LuaProperty {
    public let get: (LuaCall, AnyObject) throws -> Void
    public let set: ((LuaCall, AnyObject, Int32) throws -> Void)?
    public let doc: String

    public init(doc: String = "", get: @escaping (LuaCall, AnyObject) throws -> Void,
                set: ((LuaCall, AnyObject, Int32) throws -> Void)? = nil) {
        self.get = get
        self.set = set
        self.doc = doc
    }
}

/// A method: a Swift function whose argument 1 is `self`, and a line of help.
public struct LuaMethod {
    public let name: String
    public let doc: String
    public let body: LuaFunction
    public init(_ name: String, doc: String = "", _ body: @escaping LuaFunction) {
        self.name = name
        self.doc = doc
        self.body = body
    }
}

/// The Lua face of one Swift class: its methods and properties, from which the metatable,
/// argument checks, `help()` and REPL completion are all derived.
public final class LuaClass {
    public let name: String
    public let parent: LuaClass?
    public let doc: String
    /// A short Lua example of the class in use, for the API reference.
    public var example = ""
    public private(set) var methods: [LuaMethod] = []
    public private(set) var properties: [String: LuaProperty] = [:]
    public var describe: (AnyObject) -> String

    public init(_ name: String, parent: LuaClass? = nil, doc: String = "") {
        self.name = name
        self.parent = parent
        self.doc = doc
        self.describe = { _ in name }
        if let parent { describe = parent.describe }
    }

    var metatableName: String { "moonreel.\(name)" }

    public func method(_ name: String, doc: String = "", _ body: @escaping LuaFunction) {
        methods.append(LuaMethod(name, doc: doc, body))
    }

    /// Sets the help line of properties defined without one (several at once, at the end of
    /// a class's definition).
    public func document(_ docs: KeyValuePairs<String, String>) {
        for (name, doc) in docs {
            guard let property = properties[name] else { preconditionFailure("\(self.name) has no property \(name) to document") }
            properties[name] = LuaProperty(doc: doc, get: property.get, set: property.set)
        }
    }

    /// Another name for a method already defined (Apple's longer selector names:
    /// `addMutableTrackWithMediaType` for `addMutableTrack`).
    public func alias(_ name: String, of existing: String) {
        guard let method = methods.first(where: { $0.name == existing }) else {
            preconditionFailure("alias \(name): \(self.name) has no method \(existing)")
        }
        methods.append(LuaMethod(name, doc: "the same as \(existing) (Apple's name)", method.body))
    }

    public func property(_ name: String, doc: String = "", get: @escaping (LuaCall, AnyObject) throws -> Void,
                         set: ((LuaCall, AnyObject, Int32) throws -> Void)? = nil) {
        properties[name] = LuaProperty(doc: doc, get: get, set: set)
    }

    /// Methods and properties including the parent's, child entries first.
    public var allMethods: [LuaMethod] { methods + (parent?.allMethods.filter { m in !methods.contains { $0.name == m.name } } ?? []) }
    public var allProperties: [String: LuaProperty] {
        (parent?.allProperties ?? [:]).merging(properties) { _, own in own }
    }
    var lineage: [String] { [name] + (parent?.lineage ?? []) }

    func install(in state: LuaState) {
        let L = state.L
        _ = luaL_newmetatable(L, metatableName)                       // mt (with __name)
        lua_createtable(L, 0, 4)
        for ancestor in lineage {
            lua_pushboolean(L, 1)
            lua_setfield(L, -2, ancestor)
        }
        lua_setfield(L, -2, "__moonclasses")

        lua_createtable(L, 0, Int32(allMethods.count))                // mt methods
        for method in allMethods {
            state.setFunction(method.name, method.body)
        }
        lua_setfield(L, -2, "__methods")                              // mt

        let properties = allProperties
        let className = name
        state.setFunction("__index", qualifiedName: "__index") { call in
            guard call.type(2) == LUA_TSTRING else { call.pushNil(); return 1 }
            let key = try call.string(2)
            lua_getmetatable(call.L, 1)
            lua_getfield(call.L, -1, "__methods")
            if lua_getfield(call.L, -1, key) != LUA_TNIL { return 1 }
            call.pop(3)
            guard let property = properties[key], let object = LuaState.objectInUserdata(call.L, 1) else {
                throw LuaArgumentError("\(className) has no property or method '\(key.prefix(60))'")
            }
            try property.get(call, object)
            return 1
        }
        state.setFunction("__newindex", qualifiedName: "__newindex") { call in
            let key = try call.string(2)
            guard let property = properties[key], let object = LuaState.objectInUserdata(call.L, 1) else {
                throw LuaArgumentError("\(className) has no property '\(key.prefix(60))'")
            }
            guard let setter = property.set else {
                throw LuaArgumentError("property '\(key)' of \(className) is read-only")
            }
            do {
                try setter(call, object, 3)
            } catch let error as LuaArgumentError where error.message.hasPrefix("bad argument") {
                // Setters reuse argument checks; say which property was wrong instead.
                let reason = error.message.firstIndex(of: "(").map { String(error.message[$0...]) } ?? error.message
                throw LuaArgumentError("bad value for \(className).\(key) \(reason)")
            }
            return 0
        }
        let describe = self.describe
        state.setFunction("__tostring", qualifiedName: "tostring") { call in
            guard let object = LuaState.objectInUserdata(call.L, 1) else { return 0 }
            call.push(describe(object))
            return 1
        }
        lua_pushcclosure(L, { L in
            // Release the Swift object; nil the slot so a resurrected userdata is inert.
            guard let L, let slot = lua_touserdata(L, 1) else { return 0 }
            if let raw = slot.load(as: UnsafeMutableRawPointer?.self) {
                Unmanaged<AnyObject>.fromOpaque(raw).release()
                slot.storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
            }
            return 0
        }, 0)
        lua_setfield(L, -2, "__gc")
        moon_pop(L, 1)
    }
}
