import ArgumentParser
import MoonreelEngine
import MoonreelScriptHost
import MoonreelBindings
import MoonreelREPL
import MoonreelStudio
#if canImport(Glibc)
import Glibc
#endif

struct Repl: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "An interactive Lua session with the av API (see REPL.md), optionally after running SCRIPT.",
        discussion: """
            On a terminal: line editing, history in $XDG_DATA_HOME/moonreel/history \
            (default ~/.local/share/moonreel/history), tab completion. Piped input is read line \
            by line without prompts. help() lists the API; :snapshot, :probe, :load, :reset and \
            :quit are REPL commands. Ctrl-C stops the running statement, Ctrl-D leaves.
            """,
        version: moonreelVersion)
    @OptionGroup var common: CommonOptions
    @Argument(help: "A script to run first; its globals stay in the session.", completion: .file(extensions: ["lua"])) var script: String?
    @Argument(parsing: .captureForPassthrough, help: "Arguments for the script (its arg).") var arguments: [String] = []

    func run() throws {
        FFmpegLog.capture()
        let quiet = common.quiet
        let overwrite = common.overwrite
        let display = ProgressDisplay(style: common.progressStyle())
        var options = REPLOptions(
            limits: common.limits,
            probe: { path in ProbeReport.text(try Asset(path: path)) },
            configureHost: { host in
                host.overwriteOutputs = overwrite
                host.scripts.lockedEffects = EffectLock.versions(in:)
                display.attach(to: host)
                display.quiet = quiet
                host.onDiagnostic = { display.report($0) }
            })
        let studio = REPLStudio(limits: common.limits)
        options.showInStudio = { composition, videoComposition in try studio.show(composition, videoComposition) }
        let repl: REPL
        do {
            repl = try REPL(options: options)
        } catch {
            printError("moonreel: \(error)")
            throw ExitCode(Exit.failed)
        }
        let status = repl.run(script: script, arguments: arguments.first == "--" ? Array(arguments.dropFirst()) : arguments)
        display.finish()
        if status != Exit.ok { throw ExitCode(status) }
    }
}

/// The REPL's studio: started by the first `:studio`, then shown each statement's edit.
private final class REPLStudio {
    private let options: StudioSession.Options
    private var studio: Studio?

    init(limits: ScriptLimits) {
        var options = StudioSession.Options()
        options.limits = limits
        options.proxies = ProxyCache.standard(previewSize: options.previewSize)
        self.options = options
    }

    func show(_ composition: Composition, _ videoComposition: VideoComposition?) throws -> String {
        let studio = try self.studio ?? Studio(session: StudioSession(source: .edit(name: "REPL"), options: options))
        self.studio = studio
        try studio.session.show(composition: composition, videoComposition: videoComposition)
        return studio.server.url
    }
}
