import CMoonLua
import CMoonLuaShim
#if canImport(Glibc)
import Glibc
#endif

/// Moonreel as a library: one Lua state with the `av` API, running user scripts with
/// limits and reporting errors and progress as Swift values. The `moonreel` executable is
/// a thin client of this; an app that renders lyric videos on a server would use it the
/// same way (and can add its own Lua functions through `lua`).
public final class MoonreelHost {
    public let lua: LuaState
    public let api: API
    public let limits: ScriptLimits

    public init(limits: ScriptLimits = ScriptLimits()) throws {
        self.limits = limits
        lua = try LuaState(memoryLimit: limits.memoryBytes)
        luaL_openlibs(lua.L)
        api = API(installingIn: lua)
    }

    /// Runs a user script file with `arg` set as the standalone interpreter sets it.
    /// Throws `LuaError` (with file:line) or `EngineError`.
    public func runScript(path: String, arguments: [String]) throws {
        try runScript(source: try readTextFile(path), name: path, arguments: arguments)
    }

    /// Runs script text (a bundled script) as if it were the file `name`.
    public func runScript(source: String, name: String, arguments: [String]) throws {
        setArgTable(script: name, arguments: arguments)
        try lua.load(source, chunkName: "@" + displayName(name))
        for argument in arguments { lua.push(argument) }
        startLimits()
        defer { stopLimits() }
        try lua.call(argumentCount: Int32(arguments.count), resultCount: 0)
    }

    /// A handle that stops the running script or export from another thread (Ctrl-C).
    public var interrupter: Interrupter { Interrupter(budget: lua.budget, exports: api.exportCancellation) }

    private func startLimits() {
        let budget = lua.budget
        budget.pointee.instruction_limit = limits.instructions ?? -1
        budget.pointee.instructions_left = limits.instructions ?? -1
        budget.pointee.time_limit = limits.seconds ?? 0
        budget.pointee.deadline = limits.seconds.map { moon_monotonic_now() + $0 } ?? 0
    }

    private func stopLimits() {
        lua.budget.pointee.deadline = 0
        lua.budget.pointee.instructions_left = -1
    }

    private func setArgTable(script: String, arguments: [String]) {
        let L = lua.L
        lua_createtable(L, Int32(arguments.count), 1)
        lua.push(script)
        lua_rawseti(L, -2, 0)
        for (index, argument) in arguments.enumerated() {
            lua.push(argument)
            lua_rawseti(L, -2, lua_Integer(index + 1))
        }
        lua_setglobal(L, "arg")
    }
}

/// Stops a host's running script (at its next instruction check) and its exports.
/// Sendable: it touches only the budget's atomic interrupt flag and an atomic flag.
public struct Interrupter: @unchecked Sendable {
    let budget: UnsafeMutablePointer<moon_budget>
    let exports: CancellationFlag

    public func interrupt() {
        moon_interrupt(budget)
        exports.cancel()
    }
}

/// Limits on a script: heap bytes, instructions, wall-clock seconds (nil: none).
public struct ScriptLimits: Sendable {
    public var memoryBytes: Int
    public var instructions: Int64?
    public var seconds: Double?

    public init(memoryBytes: Int = 2 << 30, instructions: Int64? = nil, seconds: Double? = nil) {
        self.memoryBytes = memoryBytes
        self.instructions = instructions
        self.seconds = seconds
    }
}

extension LuaState {
    func push(_ string: String) { lua_pushstring(L, string) }
}

/// The script name used in messages: the path as given, shortened to its last components if
/// long (Lua truncates chunk names to 60 bytes otherwise, losing the file name).
func displayName(_ path: String) -> String {
    guard path.utf8.count > 55 else { return path }
    var parts = path.split(separator: "/").map(String.init)
    while parts.count > 1, parts.joined(separator: "/").utf8.count > 52 { parts.removeFirst() }
    return ".../" + parts.joined(separator: "/")
}

func readTextFile(_ path: String) throws -> String {
    guard let file = fopen(path, "rb") else {
        throw LuaError(kind: .file, message: "cannot open \(path): \(String(cString: strerror(errno)))")
    }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count > 0 { bytes.append(contentsOf: buffer[0..<count]) }
        if count < buffer.count { break }
    }
    if ferror(file) != 0 { throw LuaError(kind: .file, message: "cannot read \(path): \(String(cString: strerror(errno)))") }
    return String(decoding: bytes, as: UTF8.self)
}
