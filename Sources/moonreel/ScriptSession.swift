import ArgumentParser
import MoonreelEngine
import MoonreelScriptHost
import MoonreelBindings
import MoonreelREPL
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import MoonreelPlatform

/// One `moonreel run`: the host, Ctrl-C handling, progress display and error reporting.
struct ScriptSession {
    let common: CommonOptions
    /// Check and describe every export instead of encoding it.
    var dryRun = false
    /// With `dryRun`: sizes from the settings alone, no sample of the pictures encoded.
    var roughEstimate = false
    /// `--set NAME=VALUE`, for the script's `av.parameters`.
    var parameterValues: [String: String] = [:]
    /// This process's task in a chunked render (`--chunks`), if it is one.
    var chunkTask: ChunkTask?
    /// `--timeline PATH`: each export writes its timeline there instead of rendering.
    var timelineOutput: String?
    /// Where a task process also leaves its diagnostics for the command that started it.
    var diagnosticsFile: DiagnosticsFile?
    /// Where `require "effects.NAME"` looks (MOONREEL_PATH and the user's folder by default).
    var effectSearchPath = EffectSearchPath.fromEnvironment()

    init(_ common: CommonOptions, dryRun: Bool = false) {
        self.common = common
        self.dryRun = dryRun
    }

    func run(script: String, arguments: [String]) throws {
        try execute { host in try host.run(file: script, arguments: arguments) }
    }

    func runBundled(_ source: String, name: String, arguments: [String]) throws {
        try execute { host in try host.run(source: source, name: name, arguments: arguments) }
    }

    private func execute(_ body: (MoonreelHost) throws -> Void) throws {
        FFmpegLog.capture()
        let host: MoonreelHost
        do {
            host = try MoonreelHost(limits: common.limits, effectSearchPath: effectSearchPath)
        } catch {
            printError("moonreel: \(error)")
            throw ExitCode(Exit.failed)
        }
        host.overwriteOutputs = common.overwrite
        host.api.policy.dryRun = dryRun
        host.api.policy.dryRunSamplesSize = !roughEstimate
        host.scripts.parameterValues = parameterValues
        host.scripts.lockedEffects = EffectLock.versions(in:)
        host.api.policy.chunkTask = chunkTask
        host.api.policy.timelineOutput = timelineOutput
        let quiet = common.quiet
        let display = ProgressDisplay(style: common.progressStyle())
        display.attach(to: host)
        // What an export's start-up and then each second of rendering free in the heap need
        // not stay resident through the render (ResidentPages).
        let showExport = host.api.policy.exportEvents
        var heapReturned = 0.0
        host.api.policy.exportEvents = { event in
            switch event {
            case .started:
                ResidentPages.returnFreeHeap()
                heapReturned = monotonicSeconds()
            case .progress where monotonicSeconds() - heapReturned >= 1:
                ResidentPages.returnFreeHeap()
                heapReturned = monotonicSeconds()
            default:
                break
            }
            showExport?(event)
        }
        display.quiet = quiet
        host.strict = common.strict
        let diagnosticsFile = diagnosticsFile
        host.onDiagnostic = { diagnostic in
            if display.report(diagnostic) { diagnosticsFile?.append(diagnostic) }
        }
        defer { display.reportRepeats() }
        let signals = SignalWatcher.start(canceller: host.canceller)
        if let limit = common.timeLimit {
            // The host stops Lua code and cancels an export at the limit; this deadline is
            // for code neither reaches (a __gc finalizer, an error handler).
            TerminationDeadline.arm(seconds: limit + 1, message: "moonreel: the script exceeded its time limit (\(limit) s) in code that cannot be interrupted (a __gc finalizer or an error handler); stopped at once", exitCode: Exit.failed)
        }
        let timeLimitMessage = "moonreel: the script exceeded its time limit (\(common.timeLimit ?? 0) s); what it was exporting was stopped and its unfinished file removed"
        do {
            try body(host)
            display.finish()
        } catch {
            display.finish()
            if display.outputClosed {
                printError("moonreel: standard output was closed (EPIPE); the export was stopped and its unfinished file removed")
                throw ExitCode(Exit.failed)
            }
            // Lua's own stop names the script line (the usual report below); any other
            // failure after the limit is the export it cancelled.
            if host.ranOutOfTime, !signals.interrupted, (error as? ScriptError)?.stop != .timeLimit {
                printError(timeLimitMessage)
                throw ExitCode(Exit.failed)
            }
            if signals.interrupted {
                printError("moonreel: interrupted")
                throw ExitCode(Exit.interrupted)
            }
            display.scriptFailed(error as? ScriptError)
            printError(message(for: error))
            throw ExitCode(Exit.failed)
        }
        if signals.interrupted { throw ExitCode(Exit.interrupted) }
        if !parameterValues.isEmpty, host.scripts.declaredParameters == nil, !common.quiet {
            printError("moonreel: note: --set was given, but the script never called av.parameters, so nothing read it")
        }
        if host.ranOutOfTime {
            printError(timeLimitMessage)
            throw ExitCode(Exit.failed)
        }
    }

    private func message(for error: Error) -> String {
        if let luaError = error as? ScriptError { return luaError.message }
        return "moonreel: \(error)".oneLine
    }
}

/// What Ctrl-C, SIGTERM and SIGHUP do to a run (`SignalListener` delivers them): the first
/// interrupts the script and cancels its export cleanly; a second removes unfinished export
/// files and exits at once; SIGTERM and SIGHUP end the program within a second whatever the
/// script is doing (`TerminationDeadline`).
final class SignalWatcher: Sendable {
    // Written by the signal thread, read by the main thread: atomic.
    private let signals = Atomic<Int>(0)

    /// Whether a signal has arrived.
    var interrupted: Bool { signals.load(ordering: .sequentiallyConsistent) > 0 }

    static func start(canceller: ScriptCanceller) -> SignalWatcher {
        start { canceller.cancel() }
    }

    /// Calls `interrupt` on the first signal (`moonreel record` stops its recording).
    static func start(_ interrupt: @escaping @Sendable () -> Void) -> SignalWatcher {
        let watcher = SignalWatcher()
        SignalListener.start { _ in
            if watcher.signals.add(1, ordering: .sequentiallyConsistent).newValue > 1 {
                PendingFiles.discardAll()
                printError("\nmoonreel: interrupted again; stopped at once\n", newline: false)
                _exit(Exit.interrupted)
            }
            interrupt()
        }
        return watcher
    }
}

func rounded(_ value: Double, _ places: Int) -> Double {
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    return (value * scale).rounded() / scale
}

func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
}

/// Writes to standard output directly; false when it failed (a closed pipe).
func writeOut(_ text: String, to descriptor: Int32 = STDOUT_FILENO) -> Bool {
    fflush(nil) // whatever print() buffered goes first
    var text = text
    return text.withUTF8 { bytes in
        guard let base = bytes.baseAddress else { return true }
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, base + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }
}

func jsonString(_ text: String) -> String { jsonQuoted(text) }
