import ArgumentParser
import MoonreelInterchange

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run a script; arguments reach it as `arg` (arg[0] = SCRIPT).")
    @OptionGroup var common: CommonOptions
    @OptionGroup var parameters: ParameterOptions
    @Flag(help: "Check every export (settings, output path, composition) and print what it would write, without writing it; a constant-quality size is measured by encoding a few short samples of the pictures.")
    var dryRun = false
    @Flag(help: "With --dry-run: estimate sizes from the settings alone, encoding no sample (faster, rougher).")
    var roughEstimate = false
    @Option(help: ArgumentHelp("Write each export's timeline (.otio, .fcpxml or .edl) instead of rendering it; a second export writes PATH with -2 before the extension, and so on (docs/interchange.md).", valueName: "PATH"))
    var timeline: String?
    @OptionGroup var chunking: ChunkOptions
    @Option(help: .hidden) var diagnosticsFile: String?
    @Argument(help: "The Lua script to run.", completion: .file(extensions: ["lua"])) var script: String
    @Argument(parsing: .captureForPassthrough, help: "Arguments for the script.") var arguments: [String] = []

    func run() throws {
        var arguments = arguments
        // `--` before the script's arguments says they are the script's, whatever they look like.
        if arguments.first == "--" {
            arguments.removeFirst()
        } else if !common.quiet, let misplaced = arguments.first(where: Self.looksLikeOurs) {
            printError("moonreel: note: \(misplaced) comes after the script, so the script gets it in arg; "
                       + "moonreel's options go before it (moonreel run \(misplaced) SCRIPT …), or write -- to silence this")
        }
        var session = ScriptSession(common, dryRun: dryRun)
        session.roughEstimate = roughEstimate
        session.parameterValues = try parameters.values()
        session.diagnosticsFile = diagnosticsFile.map(DiagnosticsFile.init)
        if let timeline {
            guard TimelineFormat(path: timeline) != nil else { throw ValidationError("--timeline \(timeline.quotedForMessage()): name a .otio, .fcpxml or .edl file") }
            guard !dryRun, chunking.chunks == nil else { throw ValidationError("--timeline writes timelines instead of exports: it does not go with --dry-run or --chunks") }
            session.timelineOutput = timeline
        }
        if chunking.chunks != nil, !dryRun {
            let chunked = ChunkedRun(options: chunking, common: common, script: script, arguments: arguments, parameterValues: session.parameterValues)
            session.chunkTask = try chunked.task()
            if session.chunkTask == nil { return try chunked.run() }
            session.diagnosticsFile = chunked.taskDiagnosticsFile
        }
        try session.run(script: script, arguments: arguments)
    }

    static func looksLikeOurs(_ argument: String) -> Bool {
        ["--overwrite", "--quiet", "--progress", "--memory-limit", "--time-limit", "--dry-run", "--rough-estimate", "--timeline", "--set", "--chunks", "--slurm", "--jobs", "--strict"].contains { argument == $0 || argument.hasPrefix($0 + "=") }
    }
}
