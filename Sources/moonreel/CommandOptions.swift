import ArgumentParser
import MoonreelBindings
import MoonreelFarm
import MoonreelScriptHost
#if canImport(Glibc)
import Glibc
#endif

/// The options every command that runs a script shares.
struct CommonOptions: ParsableArguments {
    @Flag(help: "Replace existing output files (only once the new file is complete).")
    var overwrite = false
    @Flag(help: "Print nothing but errors.")
    var quiet = false
    @Option(help: "Progress display: bar, json or none (default: bar on a terminal, else none).")
    var progress: ProgressStyle?
    @Option(help: "Memory limit in MiB: the script's Lua heap and objects, and as much again for each export's pictures and encoders.")
    var memoryLimit: Int = 2048
    @Option(help: "Stop the script after this many seconds.")
    var timeLimit: Double?
    @Flag(help: "Make every warning an error: text cut to fit, sound left out, a cue never shown… fail the export before its file is written (docs/diagnostics.md).")
    var strict = false

    var limits: ScriptLimits { ScriptLimits(memory: memoryLimit << 20, script: RunLimits(seconds: timeLimit)) }

    /// The options a batch's rows and a chunked run's tasks get from this command.
    var runOptions: RunOptions { RunOptions(memoryLimit: memoryLimit, timeLimit: timeLimit, overwrite: overwrite, strict: strict) }

    func validate() throws {
        if let timeLimit, !(timeLimit.isFinite && timeLimit > 0 && timeLimit <= 1e9) {
            throw ValidationError("--time-limit must be a number of seconds above 0 (up to 1e9), got \(timeLimit)")
        }
        guard memoryLimit >= 1, memoryLimit <= 1 << 20 else {
            throw ValidationError("--memory-limit must be 1…1048576 MiB, got \(memoryLimit)")
        }
    }

    func progressStyle() -> ProgressStyle {
        if quiet { return .none }
        return progress ?? (isatty(STDERR_FILENO) != 0 ? .bar : .none)
    }
}

/// `--set NAME=VALUE`: the script's own parameters (`av.parameters`).
struct ParameterOptions: ParsableArguments {
    @Option(name: .customLong("set"), help: ArgumentHelp("A parameter the script declares with av.parameters (repeatable).", valueName: "NAME=VALUE"))
    var assignments: [String] = []

    func validate() throws { _ = try values() }

    func values() throws -> [String: String] {
        var values: [String: String] = [:]
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw ValidationError("--set needs NAME=VALUE, got \(assignment.quotedForMessage())")
            }
            let name = String(assignment[..<equals])
            guard values[name] == nil else { throw ValidationError("--set \(name) is given twice") }
            values[name] = String(assignment[assignment.index(after: equals)...])
        }
        return values
    }
}
