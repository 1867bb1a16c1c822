import CMoonLua
import CMoonLuaShim

/// Moonreel as a library: a script host (user scripts trusted, effect scripts sandboxed)
/// with the `av` API, running scripts with limits and reporting errors and progress as
/// Swift values. The `moonreel` executable is a thin client of this; an app that renders
/// lyric videos on a server would use it the same way, adding its own Lua functions
/// through `lua`.
public final class MoonreelHost {
    public let scripts: ScriptHost
    public let api: API

    public init(limits: ScriptLimits = ScriptLimits(), searchPath: EffectSearchPath = .fromEnvironment()) throws {
        let policy = EffectPolicy(allowedGlobals: ["av": API.effectSafeFunctions.sorted()])
        scripts = try ScriptHost(limits: limits, effectPolicy: policy, searchPath: searchPath,
                                 bundledEffects: BundledEffects.sources)
        api = API(installingIn: scripts.lua)
        let readFiles = api.readFiles
        scripts.onFileRead = { readFiles.record($0) }
        // Each effect's state gets an `av` of its own; the policy shows effects the safe part.
        scripts.prepareEffectState = { state in state.keepAlive(API(installingIn: state)) }
    }

    public var lua: LuaState { scripts.lua }

    /// Sends what the script's `print` writes (one line: its arguments through `tostring`,
    /// tab-separated, with the newline) to `write` instead of standard output.
    public func redirectPrint(_ write: @escaping (String) -> Void) {
        let L = lua.L
        lua_getglobal(L, "tostring")
        let tostring = luaL_ref(L, MOON_LUA_REGISTRYINDEX)
        lua.pushFunction("print") { [unowned lua] call in
            var parts: [String] = []
            for index in 0..<call.count {
                lua_rawgeti(call.L, MOON_LUA_REGISTRYINDEX, lua_Integer(tostring))
                call.pushValue(index + 1)
                try lua.call(argumentCount: 1, resultCount: 1)
                parts.append(LuaState.string(call.L, at: -1))
                call.pop()
            }
            write(parts.joined(separator: "\t") + "\n")
            return 0
        }
        lua.setGlobal("print")
    }

    /// Runs a user script file with `arg` set as the standalone interpreter sets it.
    /// Throws `LuaError` (with file:line) for script errors.
    public func runScript(path: String, arguments: [String]) throws {
        try scripts.runScript(atPath: path, arguments: arguments)
    }

    /// Runs script text (a bundled example) as if it were the file `name`.
    public func runScript(source: String, name: String, arguments: [String]) throws {
        try scripts.runScript(source: source, name: name, arguments: arguments)
    }

    /// A handle that stops the running script and its export from another thread (Ctrl-C).
    public var interrupter: Interrupter { Interrupter(script: scripts.interrupter, exports: api.exportCancellation) }
}

/// Stops a host's running script (at its next instruction) and cancels its running export.
public struct Interrupter: Sendable {
    let script: LuaInterrupter
    let exports: CancellationFlag

    public func interrupt() {
        script.interrupt()
        exports.cancel()
    }
}
