import ArgumentParser
import MoonreelEngine
import MoonreelScriptHost
import MoonreelScripting
import MoonreelREPL
#if canImport(Glibc)
import Glibc
#endif

/// One `moonreel run`: the host, Ctrl-C handling, progress display and error reporting.
struct ScriptSession {
    let common: CommonOptions
    /// Check and describe every export instead of encoding it.
    var dryRun = false

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
            host = try MoonreelHost(limits: common.limits, effectSearchPath: .fromEnvironment())
        } catch {
            printError("moonreel: \(error)")
            throw ExitCode(Exit.failed)
        }
        host.overwriteOutputs = common.overwrite
        host.api.dryRun = dryRun
        let quiet = common.quiet
        let display = ProgressDisplay(style: common.progressStyle())
        display.attach(to: host)
        host.onNote = { message in
            guard !quiet else { return }
            display.endLine()
            printError("moonreel: note: \(message)".oneLine)
        }
        let signals = SignalWatcher.start(canceller: host.canceller)
        if let limit = common.timeLimit {
            // The count hook stops the script at the limit; this is for code no hook reaches.
            TerminationDeadline.arm(seconds: limit + 0.5, message: "moonreel: the script exceeded its time limit (\(limit) s) in code that cannot be interrupted (a __gc finalizer or an error handler); stopped at once", exitCode: Exit.failed)
        }
        do {
            try body(host)
            display.finish()
        } catch {
            display.finish()
            if display.outputClosed {
                printError("moonreel: standard output was closed (EPIPE); the export was stopped and its unfinished file removed")
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
    }

    private func message(for error: Error) -> String {
        if let luaError = error as? ScriptError { return luaError.message }
        return "moonreel: \(error)".oneLine
    }
}

/// Ctrl-C, SIGTERM and SIGHUP arrive on a thread of their own (sigwait), so handling them
/// can do real work: the first interrupts the script and cancels its export cleanly; a
/// second removes unfinished export files and exits at once; SIGTERM and SIGHUP end the
/// program within a second whatever the script is doing (`TerminationDeadline`).
final class SignalWatcher: @unchecked Sendable {
    // Written by the signal thread, read by the main thread after the script returns.
    private(set) var interrupted = false

    static func start(canceller: ScriptCanceller) -> SignalWatcher {
        start { canceller.cancel() }
    }

    /// Calls `interrupt` on the first signal (`moonreel record` stops its recording).
    static func start(_ interrupt: @escaping @Sendable () -> Void) -> SignalWatcher {
        let watcher = SignalWatcher()
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        let context = Unmanaged.passRetained(SignalContext(watcher: watcher, interrupt: interrupt, set: set)).toOpaque()
        var thread = pthread_t()
        pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            let context = Unmanaged<SignalContext>.fromOpaque(raw).takeRetainedValue()
            var signal: Int32 = 0
            var set = context.set
            while sigwait(&set, &signal) == 0 {
                // Termination must not wait on a script that cannot be stopped.
                if signal != SIGINT { TerminationDeadline.arm() }
                if context.watcher.interrupted {
                    discardPendingExportFiles()
                    printError("\nmoonreel: interrupted again; stopped at once\n", newline: false)
                    _exit(Exit.interrupted)
                }
                context.watcher.interrupted = true
                context.interrupt()
            }
            return nil
        }, context)
        pthread_detach(thread)
        return watcher
    }
}

private final class SignalContext: @unchecked Sendable {
    // Handed once to the signal thread; never shared further.
    let watcher: SignalWatcher
    let interrupt: @Sendable () -> Void
    let set: sigset_t
    init(watcher: SignalWatcher, interrupt: @escaping @Sendable () -> Void, set: sigset_t) {
        self.watcher = watcher
        self.interrupt = interrupt
        self.set = set
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
func writeOut(_ text: String) -> Bool {
    fflush(nil) // whatever print() buffered goes first
    var text = text
    return text.withUTF8 { bytes in
        guard let base = bytes.baseAddress else { return true }
        var offset = 0
        while offset < bytes.count {
            let written = write(STDOUT_FILENO, base + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }
}

func jsonString(_ text: String) -> String { jsonQuoted(text) }
