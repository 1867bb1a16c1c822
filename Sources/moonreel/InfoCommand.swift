import ArgumentParser
import MoonreelEngine
import MoonreelBindings

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the parameters a script declares with av.parameters (what --set fills).",
        discussion: "The script runs until its av.parameters call, with exports that write nothing, and is stopped at anything else that would change a file or run a program (and after 10 s unless --time-limit says otherwise); a script that declares none reads its arguments from arg.")
    @OptionGroup var common: CommonOptions
    @Argument(help: "The Lua script.", completion: .file(extensions: ["lua"])) var script: String

    func run() throws {
        FFmpegLog.capture()
        let declared: [EffectCall.Parameter]?
        do {
            declared = try declaredParameters(of: script, limits: common.limits)
        } catch let error as ScriptError {
            printError("moonreel: info: \(script) stopped before declaring its parameters: \(error.message)".oneLine)
            throw ExitCode(Exit.failed)
        }
        guard let declared else {
            print("\(script) declares no parameters (av.parameters); it reads its arguments from arg")
            return
        }
        print("\(script): \(declared.count) parameter\(declared.count == 1 ? "" : "s") (moonreel run --set NAME=VALUE … \(script))")
        let width = declared.map(\.name.count).max() ?? 0
        for parameter in declared {
            var facts: [String] = []
            if parameter.required { facts.append("required") }
            if let value = parameter.defaultValue { facts.append("default " + Self.shown(value)) }
            switch (parameter.minimum, parameter.maximum) {
            case let (low?, high?): facts.append("\(Self.shown(.number(low)))…\(Self.shown(.number(high)))")
            case let (low?, nil): facts.append("≥ \(Self.shown(.number(low)))")
            case let (nil, high?): facts.append("≤ \(Self.shown(.number(high)))")
            default: break
            }
            let padded = parameter.name.padding(toLength: width, withPad: " ", startingAt: 0)
            let type = parameter.type.padding(toLength: 8, withPad: " ", startingAt: 0)
            print("  \(padded)  \(type) \(facts.joined(separator: ", "))\(parameter.doc.isEmpty ? "" : " — " + parameter.doc)")
        }
    }

    static func shown(_ value: ScriptValue) -> String {
        switch value {
        case .number(let number) where number == number.rounded() && abs(number) < 1e15: "\(Int(number))"
        case .number(let number): "\(number)"
        case .integer(let number): "\(number)"
        case .string(let text): text.quotedForMessage()
        case .bool(let flag): flag ? "true" : "false"
        default: "\(value)"
        }
    }
}

/// The parameters `script` declares with av.parameters, from a run that stops at that call
/// and whose exports write nothing; nil when the script ends without declaring any. A script
/// that reaches something that would change a file or run a program first is stopped there
/// (asking what a script takes must not do what it does), and unless `limits` bound its
/// time, it is stopped after `defaultSeconds`.
/// - Throws: the `ScriptError` of a script that fails or is stopped before declaring them.
func declaredParameters(of script: String, limits: ScriptLimits, defaultSeconds: Double = 10) throws -> [EffectCall.Parameter]? {
    struct Declared: Error {}
    var limits = limits
    limits.script.seconds = limits.script.seconds ?? defaultSeconds
    let host = try MoonreelHost(limits: limits, effectSearchPath: .fromEnvironment())
    host.api.policy.previewExport = { _ in }
    host.onPrint = { _ in }
    var declared: [EffectCall.Parameter]?
    host.scripts.onParametersDeclared = { parameters in
        declared = parameters
        throw Declared()
    }
    do {
        try host.run(source: sideEffectsStopped, name: "moonreel info")
        try host.run(file: script)
    } catch where declared != nil {}
    return declared
}

/// The message that stops a script read for its parameters at its first side effect.
private let sideEffectStop = "stopped at a side effect before av.parameters: "

/// Lua run before the script by `declaredParameters`: what writes files, removes or renames
/// them, or runs programs raises `sideEffectStop` instead; reading files stays allowed.
private let sideEffectsStopped = """
    local stop = function(name) return function() error("\(sideEffectStop)" .. name, 2) end end
    for _, name in ipairs{ "remove", "rename", "execute", "exit", "tmpname" } do os[name] = stop("os." .. name) end
    for _, name in ipairs{ "popen", "output", "tmpfile" } do io[name] = stop("io." .. name) end
    local open = io.open
    io.open = function(path, mode)
      if mode and mode:find("[wa+]") then error("\(sideEffectStop)io.open(" .. tostring(path) .. ", " .. mode .. ")", 2) end
      return open(path, mode)
    end
    """
