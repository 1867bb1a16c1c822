import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// Moonreel objects read from arguments: by the Swift type of their class, found through
/// the API of the call's state.
extension LuaCall {
    /// The object at `index` of the class of `type` (`call.object(2, Asset.self)`).
    func object<T: AnyObject>(_ index: Int32, _ type: T.Type) throws -> T { try object(index, api().classes[T.self]) }

    /// As `object`, or nil when the argument is nil or absent.
    func optionalObject<T: AnyObject>(_ index: Int32, _ type: T.Type) throws -> T? {
        try optionalObject(index, api().classes[T.self], as: T.self)
    }

    /// As `object`, for an argument the call changes (see `LuaCall.changedObject`).
    func changedObject<T: AnyObject>(_ index: Int32, _ type: T.Type) throws -> T { try changedObject(index, api().classes[T.self]) }

    /// The objects of the class of `type` in the array at `index` (see `array(_:of:as:changed:)`).
    func array<T: AnyObject>(_ index: Int32, of type: T.Type, changed: Bool = false) throws -> [T] {
        try array(index, of: api().classes[T.self], as: T.self, changed: changed)
    }

    /// Applies a constructor's property table with the setters of the class of `type`.
    func applyProperties(_ index: Int32, to object: AnyObject, of type: AnyObject.Type) throws {
        try applyProperties(index, to: object, of: api().classes[type])
    }

    /// An array of objects of one class.
    /// The objects in the array at `index`; `changed`: the call changes them (see `LuaCall.changedObject`).
    func array<T: AnyObject>(_ index: Int32, of luaClass: LuaClass, as _: T.Type, changed: Bool = false) throws -> [T] {
        guard type(index) == LUA_TTABLE else { throw typeError(index, expected: "array of \(luaClass.name)") }
        let table = absolute(index)
        let count = rawLength(table)
        guard count <= 100_000 else { throw argumentError(index, "too many entries (\(count))") }
        var items: [T] = []
        for i in 1...max(count, 1) where count > 0 {
            pushElement(of: table, i)
            defer { pop() }
            guard let item: T = try? object(absolute(-1), luaClass) else {
                throw argumentError(index, "entry \(i) is a \(typeName(-1)), expected \(luaClass.name)")
            }
            if changed { _ = try changedObject(absolute(-1), luaClass, as: T.self) }
            items.append(item)
        }
        return items
    }
}
