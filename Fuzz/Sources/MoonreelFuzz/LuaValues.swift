import Foundation
import MoonreelBindings

/// Lua values built from the input (nil, booleans, extreme integers and floats, strings of any
/// bytes, nested tables, tables whose metamethods raise, Moonreel objects, functions) passed to
/// the `av` functions that read tables, and through an effect and back (the bridge between
/// Lua states). Errors are fine; a crash, a hang or a leak is a finding.
func fuzzLuaValues(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var reader = ValueWriter(bytes: Array(UnsafeBufferPointer(start: data, count: size)))
    let function = reader.pick(from: ValueWriter.functions)
    let value = reader.value(depth: 0)
    let script = """
        local value = \(value)
        pcall(\(function), value)
        pcall(require "effects.echo", { value = value })
        pcall(function() return (require "effects.echo")(value) end)
        """
    try? Host.shared.run(source: script, name: "fuzz.lua")
    return 0
}

enum Host {
    /// One host for the whole run (libFuzzer calls from one thread), with an effect that
    /// hands its parameters back.
    nonisolated(unsafe) static let shared: MoonreelHost = {
        let folder = NSTemporaryDirectory() + "moonreel-fuzz-\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder + "/effects", withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "moonreel-fuzz-\(getpid())") }
        try? "return { apply = function(p, ...) return p, ... end }".write(toFile: folder + "/effects/echo.lua", atomically: true, encoding: .utf8)
        let limits = ScriptLimits(memory: 256 << 20, script: RunLimits(instructions: 10_000_000, seconds: 5),
                                  effect: RunLimits(instructions: 1_000_000, seconds: 1))
        // A host is the fuzzer's whole purpose: without one there is nothing to run.
        guard let host = try? MoonreelHost(limits: limits, effectSearchPath: EffectSearchPath(scriptDirectory: folder)) else {
            fatalError("cannot create a Moonreel host")
        }
        return host
    }()
}

/// Writes a Lua expression from input bytes, one decision per byte.
struct ValueWriter {
    let bytes: [UInt8]
    var position = 0

    static let functions = [
        "av.layer", "av.textLayer", "av.keyframeAnimation", "av.basicAnimation", "av.range", "av.time", "av.transform",
        "av.color", "av.videoCompositionInstruction", "av.videoComposition", "av.audioMix", "av.animationTool",
        "av.rangeFromTo", "av.timeWithSeconds",
    ]
    static let keys = [
        "frame", "bounds", "position", "opacity", "string", "values", "keyPath", "keyTimes", "duration", "beginTime",
        "fontSize", "backgroundColor", "foregroundColor", "sublayers", "contents", "timeRange", "start", "finish",
        "renderSize", "frameDuration", "transform", "timingFunctions", "calculationMode", "repeatCount", "fillMode",
        "layerInstructions", "inputParameters", "maxLines", "alignmentMode", "fromValue", "toValue", "shadowOffset",
    ]
    static let objects = [
        "av.layer{}", "av.textLayer{ string = 'x' }", "av.time(1, 30)", "av.range(0, 1)", "av.transform()",
        "av.color('red')", "av.keyframeAnimation{ keyPath = 'opacity', values = { 0, 1 } }", "av.composition()",
    ]

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func next() -> UInt8 {
        defer { position += 1 }
        return position < bytes.count ? bytes[position] : 0
    }

    mutating func pick(from list: [String]) -> String { list[Int(next()) % list.count] }

    mutating func value(depth: Int) -> String {
        guard position < bytes.count, depth < 6 else { return "nil" }
        switch next() % 10 {
        case 0: return "nil"
        case 1: return next() & 1 == 0 ? "true" : "false"
        case 2: return integer()
        case 3: return float()
        case 4: return string()
        case 5: return "{" + (0..<Int(next() % 6)).map { _ in value(depth: depth + 1) }.joined(separator: ", ") + "}"
        case 6:
            return "{" + (0..<Int(next() % 6)).map { _ in "\(pick(from: Self.keys)) = \(value(depth: depth + 1))" }.joined(separator: ", ") + "}"
        case 7:
            let raising = ["__index = function() error('evil') end", "__len = function() error('evil') end",
                           "__pairs = function() error('evil') end", "__tostring = function() error('evil') end",
                           "__eq = function() error('evil') end"]
            return "setmetatable(\(value(depth: depth + 1)) or {}, { \(pick(from: raising)) })"
        case 8: return pick(from: Self.objects)
        default: return next() & 1 == 0 ? "function() return 1 end" : "print"
        }
    }

    mutating func integer() -> String {
        let specials = ["math.maxinteger", "math.mininteger", "0", "-1", "1", "2147483648", "-9007199254740993"]
        if next() & 1 == 0 { return pick(from: specials) }
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(next()) }
        let signed = Int64(bitPattern: value)
        return signed == .min ? "math.mininteger" : "\(signed)"
    }

    mutating func float() -> String {
        let specials = ["0/0", "1/0", "-1/0", "-0.0", "1e308", "5e-324", "0.5", "1e-300", "2^53", "2^63"]
        if next() & 1 == 0 { return pick(from: specials) }
        var bits: UInt64 = 0
        for _ in 0..<8 { bits = bits << 8 | UInt64(next()) }
        let number = Double(bitPattern: bits)
        return number.isFinite ? String(format: "%.17g", number) : "0/0"
    }

    mutating func string() -> String {
        let length = Int(next() % 64)
        return "\"" + (0..<length).map { _ in "\\\(next())" }.joined() + "\""
    }
}
