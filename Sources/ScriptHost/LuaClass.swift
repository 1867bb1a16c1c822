import CMoonLua
import CMoonLuaShim

/// A Lua-visible property of a class: a getter that pushes one value, an optional setter
/// that reads the value at `valueIndex` (3 for `obj.key = value`), and a line of help.
package struct LuaProperty {
    package let get: (LuaCall, AnyObject) throws -> Void
    package let set: ((LuaCall, AnyObject, Int32) throws -> Void)?
    package let doc: String

    package init(doc: String = "", get: @escaping (LuaCall, AnyObject) throws -> Void,
                set: ((LuaCall, AnyObject, Int32) throws -> Void)? = nil) {
        self.get = get
        self.set = set
        self.doc = doc
    }
}

/// A method: a Swift function whose argument 1 is `self`, and a line of help. A read-only
/// method changes nothing (it may be called on another state's object in an effect).
package struct LuaMethod {
    package let name: String
    package let doc: String
    package let readOnly: Bool
    package let body: LuaFunction
    package init(_ name: String, doc: String = "", readOnly: Bool = false, _ body: @escaping LuaFunction) {
        self.name = name
        self.doc = doc
        self.readOnly = readOnly
        self.body = body
    }
}

/// The Lua face of one Swift class: its methods and properties, from which the metatable,
/// argument checks, `help()` and REPL completion are all derived.
package final class LuaClass {
    package let name: String
    package let parent: LuaClass?
    package let doc: String
    /// A short Lua example of the class in use, for the API reference.
    package var example = ""
    package private(set) var methods: [LuaMethod] = []
    package private(set) var properties: [String: LuaProperty] = [:]
    package var describe: (AnyObject) -> String
    /// Bytes an object's own storage takes (not the objects it refers to): what it counts
    /// against the memory cap of the state that owns it.
    package var footprint: (AnyObject) -> Int = { _ in 256 }
    /// Whether its objects hold files open (decoders): `local x <close> = …` then lets them
    /// go when the variable goes out of scope rather than at the next garbage collection.
    package var closesFiles = false

    package init(_ name: String, parent: LuaClass? = nil, doc: String = "") {
        self.name = name
        self.parent = parent
        self.doc = doc
        self.describe = { _ in name }
        if let parent {
            describe = parent.describe
            footprint = parent.footprint
        }
    }

    var metatableName: String { "moonreel.\(name)" }

    package func method(_ name: String, doc: String = "", readOnly: Bool = false, _ body: @escaping LuaFunction) {
        methods.append(LuaMethod(name, doc: doc, readOnly: readOnly, body))
    }

    /// Sets the help line of properties defined without one (several at once, at the end of
    /// a class's definition).
    package func document(_ docs: KeyValuePairs<String, String>) {
        for (name, doc) in docs {
            guard let property = properties[name] else { preconditionFailure("\(self.name) has no property \(name) to document") }
            properties[name] = LuaProperty(doc: doc, get: property.get, set: property.set)
        }
    }

    /// Another name for a method already defined (Apple's longer selector names:
    /// `addMutableTrackWithMediaType` for `addMutableTrack`).
    package func alias(_ name: String, of existing: String) {
        guard let method = methods.first(where: { $0.name == existing }) else {
            preconditionFailure("alias \(name): \(self.name) has no method \(existing)")
        }
        methods.append(LuaMethod(name, doc: "the same as \(existing) (Apple's name)", readOnly: method.readOnly, method.body))
    }

    package func property(_ name: String, doc: String = "", get: @escaping (LuaCall, AnyObject) throws -> Void,
                         set: ((LuaCall, AnyObject, Int32) throws -> Void)? = nil) {
        properties[name] = LuaProperty(doc: doc, get: get, set: set)
    }

    /// Methods and properties including the parent's, child entries first.
    package var allMethods: [LuaMethod] { methods + (parent?.allMethods.filter { m in !methods.contains { $0.name == m.name } } ?? []) }
    package var allProperties: [String: LuaProperty] {
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
            let body = method.body
            let name = method.name
            let changes = !method.readOnly
            state.setFunction(method.name) { [unowned self] call in
                try guarded(call, member: ":\(name)", changes: changes) { try body(call) }
            }
        }
        lua_setfield(L, -2, "__methods")                              // mt

        let properties = allProperties
        let methodNames = allMethods.map(\.name)
        let className = name
        state.setFunction("__index", qualifiedName: "__index") { [unowned self] call in
            guard call.type(2) == LUA_TSTRING else { call.pushNil(); return 1 }
            let key = try call.string(2)
            lua_getmetatable(call.L, 1)
            LuaState.rawField(call.L, -1, "__methods")
            if LuaState.rawField(call.L, -1, key) != LUA_TNIL { return 1 }
            call.pop(3)
            guard let property = properties[key], let object = LuaState.objectInUserdata(call.L, 1) else {
                let hint = NameSuggestion.hint(for: key, among: Array(properties.keys) + methodNames)
                throw LuaArgumentError("\(className) has no property or method '\(key.prefix(60))'\(hint)")
            }
            return try guarded(call, member: ".\(key)", changes: false) {
                try property.get(call, object)
                return 1
            }
        }
        state.setFunction("__newindex", qualifiedName: "__newindex") { [unowned self] call in
            let key = try call.string(2)
            guard let property = properties[key], let object = LuaState.objectInUserdata(call.L, 1) else {
                throw LuaArgumentError("\(className) has no property '\(key.prefix(60))'\(NameSuggestion.hint(for: key, among: properties.keys))")
            }
            guard let setter = property.set else {
                throw LuaArgumentError("property '\(key)' of \(className) is read-only")
            }
            return try guarded(call, member: ".\(key)", changes: true) {
                do {
                    try setter(call, object, 3)
                } catch let error as LuaArgumentError where error.message.hasPrefix("bad argument") {
                    // Setters reuse argument checks; say which property was wrong instead.
                    let reason = error.message.firstIndex(of: "(").map { String(error.message[$0...]) } ?? error.message
                    throw LuaArgumentError("bad value for \(className).\(key) \(reason)")
                }
                return 0
            }
        }
        let describe = self.describe
        state.setFunction("__tostring", qualifiedName: "tostring") { call in
            guard let object = LuaState.objectInUserdata(call.L, 1) else { return 0 }
            call.push(describe(object))
            return 1
        }
        lua_pushcclosure(L, LuaState.releaseObjectInUserdata, 0)
        lua_setfield(L, -2, "__gc")
        if closesFiles {
            lua_pushcclosure(L, LuaState.releaseObjectInUserdata, 0)
            lua_setfield(L, -2, "__close")
        }
        moon_pop(L, 1)
    }

    /// Runs a method or property of the object at index 1 under the rules of `EngineObjects`:
    /// in a sandboxed state, only the state's own objects may change; reading another
    /// state's object leaves what it reaches with that state. What changed is reweighed.
    private func guarded(_ call: LuaCall, member: String, changes: Bool, _ body: () throws -> Int32) throws -> Int32 {
        guard let state = LuaState.from(call.L), changes || state.isSandboxed,
              let object = LuaState.object(call.L, at: 1, of: self) else {
            return try body()
        }
        let owner = state.engineObjects.owner(of: object)
        let isForeign = state.isSandboxed && owner !== state
        if changes {
            if isForeign { throw LuaArgumentError(LuaClass.readOnlyMessage(name, member: member)) }
            let results = try body()
            state.engineObjects.charge(object, bytes: footprint(object), to: state)
            return results
        }
        guard isForeign else { return try body() }
        let saved = state.reaching
        state.reaching = .through(owner)
        defer { state.reaching = saved }
        return try body()
    }

    static func readOnlyMessage(_ className: String, member: String) -> String {
        "\(className)\(member) is refused: this \(className) came from the script (or another effect) "
            + "and is read-only in this effect; build your own and return it"
    }
}

/// The classes of one API, found by the Swift type of their objects (each type has one
/// class), in the order they were added: a parent before its children.
package struct LuaClassTable {
    private var byType: [ObjectIdentifier: LuaClass] = [:]
    /// Every class, in the order added (the API reference and `help()` list them).
    package private(set) var all: [LuaClass] = []

    package init() {}

    /// Adds the class whose objects are of `type`.
    package mutating func add(_ luaClass: LuaClass, for type: AnyObject.Type) {
        precondition(byType[ObjectIdentifier(type)] == nil, "\(type) has two Lua classes")
        byType[ObjectIdentifier(type)] = luaClass
        all.append(luaClass)
    }

    /// Adds a class that shares its objects' type with another (the kinds of a filter),
    /// found by its owner rather than by type.
    package mutating func add(variant luaClass: LuaClass) { all.append(luaClass) }

    /// The class of objects of exactly `type`.
    package subscript(type: AnyObject.Type) -> LuaClass {
        guard let luaClass = byType[ObjectIdentifier(type)] else { preconditionFailure("no Lua class for \(type)") }
        return luaClass
    }

    /// The class of `object`: its own type's, or its nearest ancestor's that has one (a
    /// sound layer is pushed as a Layer, a text layer as a TextLayer).
    package func luaClass(of object: AnyObject) -> LuaClass {
        var type: AnyClass? = Swift.type(of: object)
        while let candidate = type {
            if let luaClass = byType[ObjectIdentifier(candidate)] { return luaClass }
            type = _getSuperclass(candidate)
        }
        preconditionFailure("no Lua class for \(Swift.type(of: object))")
    }
}
