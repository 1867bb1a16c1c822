import ArgumentParser
import MoonreelEngine
import MoonreelScripting

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the parameters a script declares with av.parameters (what --set fills).",
        discussion: "The script runs until its av.parameters call, with exports that write nothing; a script that declares none reads its arguments from arg.")
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
        print("\(script): \(declared.count) parameter\(declared.count == 1 ? "" : "s") (moonreel run \(script) --set NAME=VALUE …)")
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
/// and whose exports write nothing; nil when the script ends without declaring any.
/// - Throws: the `ScriptError` of a script that fails before declaring them.
func declaredParameters(of script: String, limits: ScriptLimits) throws -> [EffectCall.Parameter]? {
    struct Declared: Error {}
    let host = try MoonreelHost(limits: limits, effectSearchPath: .fromEnvironment())
    host.api.policy.previewExport = { _ in }
    host.onPrint = { _ in }
    var declared: [EffectCall.Parameter]?
    host.scripts.onParametersDeclared = { parameters in
        declared = parameters
        throw Declared()
    }
    do {
        try host.run(file: script)
    } catch where declared != nil {}
    return declared
}
