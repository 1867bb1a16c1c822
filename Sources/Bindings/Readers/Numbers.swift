import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// Numbers and strings read from arguments and properties, bounded as the engine needs them.
extension LuaCall {
    /// A finite number within `range`.
    func bounded(_ index: Int32, _ range: ClosedRange<Double>) throws -> Double {
        let value = try finite(index)
        guard range.contains(value) else { throw argumentError(index, "value must be in \(format(range.lowerBound))…\(format(range.upperBound)), got \(format(value))") }
        return value
    }

    /// A whole number in `range`: a fraction is refused, not cut (maxLines = 2.5 is not 2).
    func whole(_ index: Int32, _ range: ClosedRange<Int>) throws -> Int {
        let value = try bounded(index, Double(range.lowerBound)...Double(range.upperBound))
        guard value == value.rounded() else { throw argumentError(index, "must be a whole number, got \(format(value))") }
        return Int(value)
    }

    /// A length or width: 0…100 000.
    func nonNegative(_ index: Int32) throws -> Double { try bounded(index, 0...100_000) }

    /// A number in 0…1 (opacities).
    func unit(_ index: Int32) throws -> Double {
        let value = try finite(index)
        guard (0...1).contains(value) else { throw argumentError(index, "value must be in 0…1, got \(format(value))") }
        return value
    }

    /// Text for a text layer: capped in length before anything is laid out.
    func text(_ index: Int32) throws -> String {
        let value = type(index) == LUA_TNUMBER ? format(try number(index)) : try string(index)
        guard value.unicodeScalars.count <= 65_536 else {
            throw argumentError(index, "text is \(value.unicodeScalars.count) characters long; at most \(65_536) are drawn")
        }
        return value
    }

    /// A font weight: 100…1000, or a name ("bold").
    func weight(_ index: Int32) throws -> Int {
        if type(index) == LUA_TSTRING {
            switch try string(index) {
            case "thin": return 100
            case "light": return 300
            case "normal", "regular": return 400
            case "medium": return 500
            case "semibold": return 600
            case "bold": return 700
            case "heavy", "black": return 900
            case let other: throw argumentError(index, "unknown font weight \(other.quotedForMessage()) (100…900, \"normal\", \"bold\", …)")
            }
        }
        return try whole(index, 100...1000)
    }
}

extension LuaCall {
    /// A track's volume: 0…16 (1: as recorded).
    func volume(_ index: Int32) throws -> Double {
        let value = try finite(index)
        guard (0...16).contains(value) else { throw argumentError(index, "volume must be in 0…16, got \(format(value))") }
        return value
    }
}
