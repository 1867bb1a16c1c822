import Foundation
import Testing
import CMoonLua
@testable import MoonreelScriptHost

/// A throwaway project folder: a user script beside an `effects/` folder.
final class Project {
    let root: String

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("moonreel-host-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    @discardableResult
    func write(_ relative: String, _ text: String) throws -> String {
        let path = root + "/" + relative
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @discardableResult
    func writeBytes(_ relative: String, _ bytes: [UInt8]) throws -> String {
        let path = root + "/" + relative
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func link(_ relative: String, to target: String) throws {
        let path = root + "/" + relative
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    }
}

/// Limits small enough that every attack ends in well under a second.
let testLimits = ScriptLimits(memory: 64 << 20, script: RunLimits(seconds: 3),
                              effect: RunLimits(instructions: 1_000_000_000, seconds: 0.5))

/// A host with a stand-in `av` table, in the script's state and in each effect's: effects
/// may use `av.layer` and `av.colors` only.
func makeHost(_ project: Project? = nil, limits: ScriptLimits = testLimits,
              bundled: [String: String] = [:]) throws -> ScriptHost {
    let host = try ScriptHost(limits: limits, effectPolicy: EffectPolicy(allowedGlobals: ["av": ["layer", "colors"]], modules: ["moonreel": "av"]),
                              searchPath: EffectSearchPath(scriptDirectory: project?.root), bundledEffects: bundled)
    let standIn = """
        av = { layer = function(t) return t end, asset = function() return "opened" end,
               colors = { white = "#FFFFFF" } }
        """
    try host.evaluate(standIn, chunkName: "=setup")
    host.prepareEffectState = { state in try state.run(standIn, chunkName: "=setup") }
    return host
}

/// Runs `script` as `main.lua` of `project` and returns the error it must raise, with the
/// time it took.
func failure(of script: String, in project: Project, host: ScriptHost? = nil) throws -> (error: ScriptError, seconds: Double) {
    let host = try host ?? makeHost(project)
    let path = try project.write("main.lua", script)
    let start = ContinuousClock.now
    do {
        try host.runScript(atPath: path)
    } catch let error as ScriptError {
        let elapsed = ContinuousClock.now - start
        return (error, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
    }
    Issue.record("script did not fail: \(script)")
    throw ScriptError(kind: .runtime, message: "no failure")
}

extension ScriptHost {
    /// The string `code` returns, for checking that the state still works.
    func string(_ code: String) throws -> String {
        let L = lua.L
        let base = lua_gettop(L)
        defer { lua_settop(L, base) }
        try evaluate(code)
        return LuaState.string(L, at: -1)
    }
}
