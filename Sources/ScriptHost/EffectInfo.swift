import CMoonLua
import CMoonLuaShim

/// What effects may reach of the user state, given by the embedder (the scripting core knows
/// no module of its own): `allowedGlobals` maps a global table (such as `av`) to the fields
/// an effect may read through its read-only proxy, e.g.
/// `EffectPolicy(allowedGlobals: ["av": ["layer", "textLayer", "keyframeAnimation"]])`.
/// Fields that exist but are not listed raise "av.asset is not available to effects".
package struct EffectPolicy: Sendable, Equatable {
    package var allowedGlobals: [String: [String]]
    /// Names scripts and effects may `require` to get one of those globals (`"moonreel"`
    /// gives `av`).
    package var modules: [String: String]
    /// The function that checks parameters declared `type = "color"` (it raises on a bad
    /// colour), as a global table and its field; without it any string or table passes.
    package var colorChecker: GlobalFunction?
    /// Parameter types of the embedder's objects (`type = "image"`), by name.
    package var objectTypes: [String: ObjectType]
    /// Every effect's `math.random` starts from this seed, so renders are reproducible.
    package var randomSeed: Int

    package init(allowedGlobals: [String: [String]] = [:], modules: [String: String] = [:],
                 colorChecker: GlobalFunction? = nil, objectTypes: [String: ObjectType] = [:], randomSeed: Int = 0x4D6F_6F6E) {
        self.allowedGlobals = allowedGlobals
        self.modules = modules
        self.colorChecker = colorChecker
        self.objectTypes = objectTypes
        self.randomSeed = randomSeed
    }
}

/// A parameter type whose values are engine objects: those whose metatable is named one of
/// `metatables` (`"moonreel.Image"`), described in messages as `phrase`.
package struct ObjectType: Sendable, Equatable {
    package var metatables: [String]
    package var phrase: String

    package init(metatables: [String], phrase: String) {
        self.metatables = metatables
        self.phrase = phrase
    }
}

/// A function in a global table, such as `av.color`.
package struct GlobalFunction: Sendable, Equatable {
    package var global: String
    package var field: String

    package init(_ global: String, _ field: String) {
        self.global = global
        self.field = field
    }
}

/// An effect's declared metadata, for `moonreel effects list` and `effects info NAME`.
package struct EffectInfo: Sendable, Equatable {
    /// As in `require "effects.MODULE"`.
    package let module: String
    package let name: String
    package let version: String
    package let description: String
    package let author: String
    package let license: String
    package let parameters: [EffectParameter]
    /// The file it was loaded from, or "bundled".
    package let location: String
    /// The Moonreel versions it works with, as it declares (`requires = { moonreel = ">=1.0" }`): "" for any.
    package var requiresMoonreel = ""
    /// Other effects it needs, each with a version range (`requires = { effects = { other = "^1.2" } }`).
    package var requiresEffects: [String: String] = [:]
}

package struct EffectParameter: Sendable, Equatable {
    package let name: String
    /// number, integer, string, boolean, table, function, color, point, size, any, or one of the
    /// embedder's object types (`EffectPolicy.objectTypes`: image).
    package let type: String
    /// The default as a script would write it (`48`, `"white"`, `{1, 1, 1, 1}`), or nil.
    package let defaultValue: String?
    package let minimum: Double?
    package let maximum: Double?
    package let required: Bool
    package let doc: String
    /// The only values a string parameter takes; empty: any.
    package var choices: [String] = []
}

/// One effect `listEffects` found: its metadata, or why it failed to load.
package struct EffectListing: Sendable {
    package let module: String
    package let location: String
    package let info: Result<EffectInfo, ScriptError>
}

/// Reads the plain description table the glue's `inspect` returns (strings, numbers and
/// booleans only), with raw reads so no Lua code runs.
struct DescriptionReader {
    let L: OpaquePointer
    let index: Int32

    init(_ L: OpaquePointer, at index: Int32) {
        self.L = L
        self.index = lua_absindex(L, index)
    }

    private func withField<T>(_ key: String, _ read: (Int32) -> T?) -> T? {
        LuaState.push(L, key)
        let type = lua_rawget(L, index)
        defer { moon_pop(L, 1) }
        return type == LUA_TNIL ? nil : read(type)
    }

    func string(_ key: String) -> String {
        withField(key) { type in type == LUA_TSTRING ? LuaState.string(L, at: -1) : nil } ?? ""
    }

    func number(_ key: String) -> Double? {
        withField(key) { type in type == LUA_TNUMBER ? lua_tonumberx(L, -1, nil) : nil }
    }

    func boolean(_ key: String) -> Bool {
        withField(key) { type in type == LUA_TBOOLEAN ? lua_toboolean(L, -1) != 0 : nil } ?? false
    }

    func list<T>(_ key: String, _ element: (DescriptionReader) -> T) -> [T] {
        withField(key) { type -> [T]? in
            guard type == LUA_TTABLE else { return nil }
            var items: [T] = []
            var i: lua_Integer = 1
            while lua_rawgeti(L, -1, i) == LUA_TTABLE {
                items.append(element(DescriptionReader(L, at: -1)))
                moon_pop(L, 1)
                i += 1
            }
            moon_pop(L, 1)
            return items
        } ?? []
    }

    var effectInfo: EffectInfo {
        EffectInfo(module: string("module"), name: string("name"), version: string("version"),
                   description: string("description"), author: string("author"), license: string("license"),
                   parameters: list("parameters") { parameter in
                       EffectParameter(name: parameter.string("name"), type: parameter.string("type"),
                                       defaultValue: parameter.withField("default") { _ in LuaState.string(parameter.L, at: -1) },
                                       minimum: parameter.number("min"), maximum: parameter.number("max"),
                                       required: parameter.boolean("required"), doc: parameter.string("doc"),
                                       choices: parameter.string("choices").split(separator: "\n").map(String.init))
                   },
                   location: string("location"), requiresMoonreel: string("requiresMoonreel"),
                   requiresEffects: Dictionary(string("requiresEffects").split(separator: "\n").map { line in
                       let parts = line.split(separator: " ", maxSplits: 1)
                       return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
                   }, uniquingKeysWith: { first, _ in first }))
    }
}
