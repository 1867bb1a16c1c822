import CMoonLua
import CMoonLuaShim
import MoonreelEngine
import MoonreelScriptHost
import MoonreelPlatform

/// Boxes that give value types a userdata identity in Lua.
final class TimeBox { let time: MediaTime; init(_ time: MediaTime) { self.time = time } }
final class RangeBox { let range: TimeRange; init(_ range: TimeRange) { self.range = range } }
final class TimeMapBox { let map: TimeMap; init(_ map: TimeMap) { self.map = map } }
final class TransformBox { let transform: AffineTransform; init(_ transform: AffineTransform) { self.transform = transform } }

/// Conversions between Lua values and engine values, with argument errors worded as Lua's.
extension LuaCall {
    // MARK: Time

    /// A time: seconds as a number, or an exact `av.time`. NaN, ±inf and absurd values are refused.
    func time(_ index: Int32, allowNegative: Bool = true) throws -> MediaTime {
        let timeClass = try api().classes[TimeBox.self]
        if let box: TimeBox = try? object(index, timeClass) {
            guard allowNegative || !box.time.isNegative else { throw argumentError(index, "time must not be negative, got \(box.time.seconds)") }
            return box.time
        }
        guard type(index) == LUA_TNUMBER else { throw typeError(index, expected: "time (seconds or av.time)") }
        let seconds = try number(index)
        guard seconds.isFinite else { throw argumentError(index, "time must be a finite number of seconds, got \(format(seconds))") }
        guard abs(seconds) < 1e9 else { throw argumentError(index, "time \(format(seconds)) s is too large") }
        guard allowNegative || seconds >= 0 else { throw argumentError(index, "time must not be negative, got \(format(seconds))") }
        guard let value = MediaTime(seconds: seconds) else { throw argumentError(index, "not a time: \(seconds)") }
        return value
    }

    /// A positive duration (seconds or av.time).
    func duration(_ index: Int32) throws -> MediaTime {
        let value = try time(index)
        guard value.value > 0 else { throw argumentError(index, "duration must be positive, got \(value.seconds)") }
        return value
    }

    /// Times are returned as seconds (numbers); exact values through the `…Time` fields.
    func push(seconds t: MediaTime) { push(t.seconds) }
    func push(exact t: MediaTime) throws { try push(TimeBox(t)) }

    // MARK: Ranges

    /// A range: `av.range(...)` or a table `{start=, duration=}` / `{start, duration}`.
    func timeRange(_ index: Int32) throws -> TimeRange {
        let rangeClass = try api().classes[RangeBox.self]
        if let box: RangeBox = try? object(index, rangeClass) { return box.range }
        guard type(index) == LUA_TTABLE else { throw typeError(index, expected: "range") }
        let table = absolute(index)
        let start = try field(table, "start", 1) { try time(-1) }
        let length = try field(table, "duration", 2) { try time(-1) }
        guard let start, let length else { throw argumentError(index, "range needs start and duration") }
        guard !length.isNegative else { throw argumentError(index, "range duration must not be negative, got \(length.seconds)") }
        return TimeRange(start: start, duration: length)
    }

    func push(range value: TimeRange) throws { try push(RangeBox(value)) }

    // MARK: Geometry

    /// `{w, h}` or `{width=, height=}`.
    func size(_ index: Int32, positive: Bool = true) throws -> Size {
        guard type(index) == LUA_TTABLE else { throw typeError(index, expected: "size {width, height}") }
        let table = absolute(index)
        let width = try field(table, "width", 1) { try finite(-1) }
        let height = try field(table, "height", 2) { try finite(-1) }
        guard let width, let height else { throw argumentError(index, "size needs width and height") }
        if positive, width <= 0 || height <= 0 || width > 65536 || height > 65536 {
            throw argumentError(index, "size must be between 1 and 65536 on each side, got \(format(width))×\(format(height))")
        }
        return Size(width: width, height: height)
    }

    /// `{x, y, w, h}` or `{x=, y=, width=, height=}`.
    func rect(_ index: Int32) throws -> Rect {
        guard type(index) == LUA_TTABLE else { throw typeError(index, expected: "rect {x, y, width, height}") }
        let table = absolute(index)
        let values = try [("x", 1), ("y", 2), ("width", 3), ("height", 4)].map { name, position in
            try field(table, name, position) { try finite(-1) }
        }
        guard let x = values[0], let y = values[1], let w = values[2], let h = values[3] else {
            throw argumentError(index, "rect needs x, y, width and height")
        }
        guard w >= 0, h >= 0 else { throw argumentError(index, "rect width and height must not be negative") }
        return Rect(x: x, y: y, width: w, height: h)
    }

    func point(_ index: Int32) throws -> Point {
        guard type(index) == LUA_TTABLE else { throw typeError(index, expected: "point {x, y}") }
        let table = absolute(index)
        guard let x = try field(table, "x", 1, { try finite(-1) }),
              let y = try field(table, "y", 2, { try finite(-1) }) else {
            throw argumentError(index, "point needs x and y")
        }
        return Point(x: x, y: y)
    }

    /// A size reads as `s.width`, `s.height` and `s[1]`, `s[2]`.
    func push(size value: Size) { pushPair(("width", value.width), ("height", value.height)) }

    func push(rect value: Rect) {
        pushRecord {
            for (name, v, i) in [("x", value.x, 1), ("y", value.y, 2), ("width", value.width, 3), ("height", value.height, 4)] {
                push(v); setField(name)
                push(v); lua_rawseti(L, -2, lua_Integer(i))
            }
        }
    }

    func push(point value: Point) { pushPair(("x", value.x), ("y", value.y)) }

    /// Two named numbers that also read as `[1]` and `[2]` (fields first, as before).
    private func pushPair(_ first: (name: String, value: Double), _ second: (name: String, value: Double)) {
        pushRecord {
            for (name, value) in [first, second] {
                push(value); setField(name)
            }
            push(first.value); lua_rawseti(L, -2, 1)
            push(second.value); lua_rawseti(L, -2, 2)
        }
    }

    // MARK: Transforms

    /// An `av.transform` or a table `{a, b, c, d, tx, ty}`.
    func affineTransform(_ index: Int32) throws -> AffineTransform {
        let transformClass = try api().classes[TransformBox.self]
        if let box: TransformBox = try? object(index, transformClass) { return box.transform }
        guard type(index) == LUA_TTABLE else { throw typeError(index, expected: "transform") }
        let table = absolute(index)
        let names = ["a", "b", "c", "d", "tx", "ty"]
        var values: [Double] = []
        for (position, name) in names.enumerated() {
            guard let v = try field(table, name, position + 1, { try finite(-1) }) else {
                throw argumentError(index, "transform needs a, b, c, d, tx and ty")
            }
            values.append(v)
        }
        return AffineTransform(a: values[0], b: values[1], c: values[2], d: values[3], tx: values[4], ty: values[5])
    }

    func push(transform value: AffineTransform) throws { try push(TransformBox(value)) }

    // MARK: Colours

    /// "#RRGGBB", "#RRGGBBAA", a CSS-like name, or `{r, g, b, a}` in 0…1.
    func color(_ index: Int32) throws -> Color {
        if type(index) == LUA_TSTRING {
            let text = try string(index)
            guard let color = Color(css: text) ?? AppleNames.colors[text] else {
                throw argumentError(index, "unknown colour \(text.quotedForMessage()) (use \"#RRGGBB\", \"#RRGGBBAA\", a name such as \"white\" or \"systemRed\", or {r, g, b, a})")
            }
            return color
        }
        guard type(index) == LUA_TTABLE else { throw typeError(index, expected: "colour") }
        let table = absolute(index)
        var components: [Double] = []
        for (position, name) in ["r", "g", "b", "a"].enumerated() {
            let v = try field(table, name, position + 1) { try finite(-1) } ?? (name == "a" ? 1 : nil)
            guard let v else { throw argumentError(index, "colour table needs r, g and b") }
            guard (0...1).contains(v) else { throw argumentError(index, "colour components must be in 0…1, got \(format(v))") }
            components.append(v)
        }
        return Color(red: components[0], green: components[1], blue: components[2], alpha: components[3])
    }

    func push(color value: Color) { push(value.hexString) }

    // MARK: Files

    /// A file to read, in a script as `filePath`; in an effect's state only a file the effect
    /// ships (`effect.asset("grain.png")`: its real path inside the effect's folder).
    func readablePath(_ index: Int32) throws -> String {
        let lua = try api().lua
        guard lua.isSandboxed else { return try filePath(index) }
        let path = try string(index)
        guard !path.utf8.contains(0), EffectAssets.isShipped(path, by: lua) else {
            throw argumentError(index, "effects read only the files they ship: pass effect.asset(\"NAME\") of a file in the effect's folder, not \(path.quotedForMessage())")
        }
        return path
    }

    /// A text layer's font: a family name as given, or the path of a font file (.ttf, .otf,
    /// .ttc, read as `readablePath` allows: in an effect, one it ships), whose family is
    /// added to the fonts and used.
    func fontFamily(_ index: Int32) throws -> String {
        let name = try string(index)
        guard FontFiles.isFontFile(name) else { return name }
        let path = try readablePath(index)
        try api().readFiles.record(path)
        do { return try FontFiles.family(registering: path) } catch let error as EngineError {
            throw argumentError(index, error.message, cause: error)
        }
    }

    /// A file path argument: a plain path or a `file://` URL (percent-escapes decoded), as
    /// code ported from AVFoundation passes URLs.
    func filePath(_ index: Int32) throws -> String {
        // Every function that opens a file names it here: none may run in an effect's state.
        guard try !api().lua.isSandboxed else { throw LuaArgumentError("\(functionName): effects cannot read or write files") }
        let text = try string(index)
        // A name is used as given or refused: C would end it at a NUL, and a Swift string
        // would turn bytes that are not UTF-8 into U+FFFD, naming another file.
        var length = 0
        if let raw = lua_tolstring(L, index, &length) {
            let bytes = UnsafeRawBufferPointer(start: raw, count: length)
            if let nul = bytes.firstIndex(of: 0) {
                throw argumentError(index, "a file name cannot contain a NUL byte (byte \(nul + 1) of \(text.quotedForMessage()))")
            }
            guard String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self) != nil else {
                throw argumentError(index, "file name \(text.quotedForMessage()) is not valid UTF-8; Moonreel reads and writes UTF-8 names")
            }
        }
        guard text.hasPrefix("file://") else { return text }
        var rest = Substring(text.dropFirst("file://".count))
        if rest.hasPrefix("localhost/") { rest = rest.dropFirst("localhost".count) }
        guard rest.hasPrefix("/") else { throw argumentError(index, "a file URL must name an absolute path (file:///…), got \"\(text)\"") }
        var bytes: [UInt8] = []
        var utf8 = rest.utf8[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "%"), utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        guard !bytes.contains(0) else { throw argumentError(index, "a file URL must not contain %00") }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw argumentError(index, "file URL \(text.quotedForMessage()) is not valid UTF-8 once decoded; Moonreel reads and writes UTF-8 names")
        }
        return decoded
    }

    // MARK: Helpers

    func finite(_ index: Int32) throws -> Double {
        let value = try number(index)
        guard value.isFinite else { throw argumentError(index, "number must be finite, got \(format(value))") }
        return value
    }

    /// Reads `table.name`, or `table[position]` when the name is absent; nil if neither.
    func field<T>(_ table: Int32, _ name: String, _ position: Int, _ read: () throws -> T) throws -> T? {
        var type = pushField(of: table, name)
        if type == LUA_TNIL {
            pop()
            type = pushElement(of: table, position)
        }
        defer { pop() }
        if type == LUA_TNIL { return nil }
        do { return try read() } catch let error as LuaArgumentError {
            throw argumentError(table, "field '\(name)': \(error.message.argumentReason)", cause: error)
        }
    }

    /// Applies a constructor's property table through the class's setters, so `{...}` and
    /// later assignment check values the same way.
    func applyProperties(_ index: Int32, to object: AnyObject, of luaClass: LuaClass) throws {
        guard !isNoneOrNil(index) else { return }
        guard type(index) == LUA_TTABLE else { throw typeError(index, expected: "table of \(luaClass.name) properties") }
        let properties = luaClass.allProperties
        try forEachField(of: index) { key in
            guard let property = properties[key] else {
                throw argumentError(index, "unknown \(luaClass.name) property \(key.quotedForMessage())\(NameSuggestion.hint(for: key, among: properties.keys))")
            }
            guard let setter = property.set else { throw argumentError(index, "\(luaClass.name) property '\(key)' is read-only") }
            do {
                try setter(self, object, absolute(-1))
            } catch let error as LuaArgumentError {
                throw argumentError(index, "property '\(key)': \(error.message.argumentReason)", cause: error)
            }
        }
    }
}

func format(_ value: Double) -> String {
    if value.isNaN { return "nan" }
    if value.isInfinite { return value < 0 ? "-inf" : "inf" }
    return value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))" : "\(value)"
}

extension String {
    /// "bad argument #3 to 'x' (reason)" → "reason"; other messages unchanged.
    var argumentReason: String {
        guard hasPrefix("bad argument"), let open = firstIndex(of: "("), last == ")" else { return self }
        return String(self[index(after: open)..<index(before: endIndex)])
    }

}

extension Color {
    static let named: [String: Color] = [
        "white": .white, "black": .black, "clear": .clear, "transparent": .clear,
        "red": Color(red: 1, green: 0, blue: 0), "green": Color(red: 0, green: 128.0 / 255, blue: 0),
        "lime": Color(red: 0, green: 1, blue: 0), "blue": Color(red: 0, green: 0, blue: 1),
        "yellow": Color(red: 1, green: 1, blue: 0), "cyan": Color(red: 0, green: 1, blue: 1),
        "magenta": Color(red: 1, green: 0, blue: 1), "gray": Color(red: 0.5, green: 0.5, blue: 0.5),
        "grey": Color(red: 0.5, green: 0.5, blue: 0.5), "orange": Color(red: 1, green: 165.0 / 255, blue: 0),
        "purple": Color(red: 128.0 / 255, green: 0, blue: 128.0 / 255), "pink": Color(red: 1, green: 192.0 / 255, blue: 203.0 / 255),
        "brown": Color(red: 165.0 / 255, green: 42.0 / 255, blue: 42.0 / 255), "navy": Color(red: 0, green: 0, blue: 128.0 / 255),
    ]

    package init?(css text: String) {
        let lower = text.lowercased()
        if let named = Color.named[lower] { self = named; return }
        guard lower.hasPrefix("#") else { return nil }
        let hex = Array(lower.dropFirst())
        guard hex.count == 6 || hex.count == 8, let value = UInt32(String(hex), radix: 16) else { return nil }
        let full = hex.count == 6 ? (value << 8) | 0xFF : value
        func byte(_ shift: UInt32) -> Double { Double((full >> shift) & 0xFF) / 255 }
        self.init(red: byte(24), green: byte(16), blue: byte(8), alpha: byte(0))
    }

    package var hexString: String {
        func hex(_ v: Double) -> String {
            let byte = Int((min(max(v, 0), 1) * 255).rounded())
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }
        return "#" + hex(red) + hex(green) + hex(blue) + (alpha < 1 ? hex(alpha) : "")
    }
}

/// Engine calls made by bindings, and arrays and names read from arguments.
extension LuaCall {
    /// Runs an engine call, turning its errors into Lua errors that name the function.
    @discardableResult
    func engine<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as EngineError {
            throw LuaArgumentError("\(functionName): \(error.scriptMessage)", kind: error.kind.rawValue, subject: error.subject)
        }
    }

    /// Runs a layer-model call, turning its errors into Lua errors naming the function.
    func model<T>(_ body: () throws -> T) throws -> T { try engine(body) }

    /// An array read element by element with `element(index)`; refuses more than `limit`.
    func list<T>(_ index: Int32, limit: Int, _ element: (Int32) throws -> T) throws -> [T] {
        guard type(index) == LUA_TTABLE else { throw typeError(index, expected: "array") }
        let table = absolute(index)
        let count = rawLength(table)
        guard count <= limit else { throw argumentError(index, "array has \(count) entries; at most \(limit) are allowed") }
        var items: [T] = []
        items.reserveCapacity(count)
        for i in 0..<count {
            pushElement(of: table, i + 1)
            defer { pop() }
            do { items.append(try element(absolute(-1))) } catch let error as LuaArgumentError {
                throw argumentError(index, "entry \(i + 1): \(error.message.argumentReason)", cause: error)
            }
        }
        return items
    }

    func choice<T: RawRepresentable & CaseIterable>(_ index: Int32, _ type: T.Type) throws -> T where T.RawValue == String {
        let name = try string(index)
        guard let value = T(rawValue: name) ?? T(rawValue: AppleNames.enumerationValue(name)) else {
            throw argumentError(index, "unknown value \(name.quotedForMessage()) (expected \(T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")))")
        }
        return value
    }

    func mediaType(_ index: Int32) throws -> MediaType {
        let name = try string(index)
        guard let type = MediaType(rawValue: AppleNames.mediaType(name)) else {
            let known = MediaType.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw argumentError(index, "unknown media type \(name.quotedForMessage()) (expected \(known))")
        }
        return type
    }
}
