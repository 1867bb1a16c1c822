import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// Numbers and strings read from arguments and properties, bounded as the engine needs them.
extension API {
    /// A finite number within `range`.
    func bounded(_ call: LuaCall, _ index: Int32, _ range: ClosedRange<Double>) throws -> Double {
        let value = try finite(call, index)
        guard range.contains(value) else { throw call.argumentError(index, "value must be in \(format(range.lowerBound))…\(format(range.upperBound)), got \(format(value))") }
        return value
    }

    /// A length or width: 0…100 000.
    func nonNegative(_ call: LuaCall, _ index: Int32) throws -> Double { try bounded(call, index, 0...100_000) }

    /// A number in 0…1 (opacities).
    func unit(_ call: LuaCall, _ index: Int32) throws -> Double {
        let value = try finite(call, index)
        guard (0...1).contains(value) else { throw call.argumentError(index, "value must be in 0…1, got \(format(value))") }
        return value
    }

    /// Text for a text layer: capped in length before anything is laid out.
    func text(_ call: LuaCall, _ index: Int32) throws -> String {
        let value = call.type(index) == LUA_TNUMBER ? format(try call.number(index)) : try call.string(index)
        guard value.unicodeScalars.count <= 65_536 else {
            throw call.argumentError(index, "text is \(value.unicodeScalars.count) characters long; at most \(65_536) are drawn")
        }
        return value
    }

    /// A font weight: 100…1000, or a name ("bold").
    func weight(_ call: LuaCall, _ index: Int32) throws -> Int {
        if call.type(index) == LUA_TSTRING {
            switch try call.string(index) {
            case "thin": return 100
            case "light": return 300
            case "normal", "regular": return 400
            case "medium": return 500
            case "semibold": return 600
            case "bold": return 700
            case "heavy", "black": return 900
            case let other: throw call.argumentError(index, "unknown font weight \(other.quotedForMessage()) (100…900, \"normal\", \"bold\", …)")
            }
        }
        return Int(try bounded(call, index, 100...1000))
    }
}
