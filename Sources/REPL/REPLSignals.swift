import MoonreelEngine
import MoonreelScriptHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C and SIGTERM for the REPL, received on a thread of their own (sigwait) like
/// `moonreel run`'s, but a Ctrl-C returns to the prompt instead of ending the program:
/// - while a statement runs, it stops the Lua code and cancels the statement's export;
///   a third Ctrl-C for the same statement gives up on it and exits 130;
/// - at the prompt, it makes `wakeDescriptor` readable, and the line reader drops the line;
/// - SIGTERM or SIGHUP stops the statement and ends the session with 130, within a second
///   (`TerminationDeadline`) even when the statement cannot be stopped.
final class REPLSignals: Sendable {
    private struct State {
        /// Set while a statement runs.
        var running: LuaInterrupter?
        var presses = 0
        var cancelExports = false
        var terminated = false
        /// Ctrl-Cs sent to the prompt that no line reader has taken yet: one that came
        /// after Enter but before the statement started is meant for that statement.
        var unreadWakeups = 0
    }

    private let state = Mutex(State())
    /// Readable after a Ctrl-C or SIGTERM at the prompt; line readers poll it beside stdin.
    let wakeDescriptor: Int32
    private let wakeWriter: Int32

    /// Blocks SIGINT and SIGTERM in this thread (and so in every thread started later) and
    /// starts the thread that waits for them. Call before any other thread exists.
    init() {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFL, O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
        }
        wakeDescriptor = fds[0]
        wakeWriter = fds[1]
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        var thread = pthread_t()
        pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            Unmanaged<REPLSignals>.fromOpaque(raw).takeRetainedValue().waitForSignals()
            return nil
        }, Unmanaged.passRetained(self).toOpaque())
        pthread_detach(thread)
    }

    private func waitForSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGHUP)
        var signal: Int32 = 0
        while sigwait(&set, &signal) == 0 {
            if signal != SIGINT { TerminationDeadline.arm() }
            let action = state.withLock { state -> SignalAction in
                if signal != SIGINT { state.terminated = true }
                guard let running = state.running else {
                    state.unreadWakeups += 1
                    return .wakePrompt
                }
                state.presses += 1
                state.cancelExports = true
                running.interrupt()
                if state.terminated { return .wakePrompt }
                return state.presses >= 3 ? .giveUp : .none
            }
            switch action {
            case .none: break
            case .wakePrompt:
                var byte: UInt8 = 1
                _ = write(wakeWriter, &byte, 1)
            case .giveUp:
                discardPendingExportFiles()
                let message = "\nmoonreel: interrupted three times; stopped at once\n"
                _ = message.withCString { write(STDERR_FILENO, $0, strlen($0)) }
                _exit(130)
            }
        }
    }

    private enum SignalAction { case none, wakePrompt, giveUp }

    /// Marks a statement as running: Ctrl-C now interrupts it through `interrupter`.
    func beginStatement(_ interrupter: LuaInterrupter) {
        interrupter.reset()
        state.withLock { state in
            state.running = interrupter
            state.presses = state.unreadWakeups > 0 ? 1 : 0
            state.cancelExports = state.presses > 0
            if state.presses > 0 { interrupter.interrupt() }
            state.unreadWakeups = 0
        }
        drainWakeups()
    }

    /// Back at the prompt; returns whether the statement was interrupted.
    @discardableResult
    func endStatement() -> Bool {
        state.withLock { state in
            state.running = nil
            return state.presses > 0
        }
    }

    /// Whether the running statement's export should stop (checked on each progress report).
    var exportsCancelled: Bool { state.withLock { $0.cancelExports } }
    var terminated: Bool { state.withLock { $0.terminated } }

    /// Takes one pending Ctrl-C meant for the prompt; true if there was one.
    func consumeWakeup() -> Bool {
        var byte: UInt8 = 0
        guard read(wakeDescriptor, &byte, 1) == 1 else { return false }
        state.withLock { $0.unreadWakeups = max(0, $0.unreadWakeups - 1) }
        return true
    }

    /// Empties the pipe; the bytes' meaning was taken over by `beginStatement`.
    private func drainWakeups() {
        var byte: UInt8 = 0
        while read(wakeDescriptor, &byte, 1) == 1 {}
    }
}

/// A signal that asks the program to end (SIGTERM, SIGHUP) first stops the script and its
/// export cleanly; if that has not ended the program within `seconds` (a script stuck where
/// hooks cannot run), this removes unfinished export files and exits with 130 anyway.
package enum TerminationDeadline {
    package static func arm(seconds: Double = 0.9) {
        arm(seconds: seconds, message: "moonreel: terminated; stopped at once", exitCode: 130)
    }

    /// Ends the program after `seconds` with `message` and `exitCode` unless it has ended by
    /// then (the backstop behind limits that hooks enforce, for code hooks cannot reach:
    /// `__gc` finalizers, message handlers).
    package static func arm(seconds: Double, message: String, exitCode: Int32) {
        final class Plan: @unchecked Sendable {
            // Handed to the timer thread once; nothing else touches it.
            let seconds: Double, message: String, exitCode: Int32
            init(_ seconds: Double, _ message: String, _ exitCode: Int32) { (self.seconds, self.message, self.exitCode) = (seconds, message, exitCode) }
        }
        var thread = pthread_t()
        pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            let plan = Unmanaged<Plan>.fromOpaque(raw).takeRetainedValue()
            var wait = timespec(tv_sec: Int(plan.seconds), tv_nsec: Int((plan.seconds - plan.seconds.rounded(.down)) * 1e9))
            var left = timespec()
            while nanosleep(&wait, &left) != 0 && errno == EINTR { wait = left }
            discardPendingExportFiles()
            let line = "\n" + plan.message + "\n"
            _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
            _exit(plan.exitCode)
        }, Unmanaged.passRetained(Plan(seconds, message, exitCode)).toOpaque())
        pthread_detach(thread)
    }

    /// What the process does with signals that end it through a failed system call rather
    /// than by death: a closed pipe (SIGPIPE) and a file grown past its limit (SIGXFSZ) then
    /// come back as EPIPE and EFBIG errors, so unfinished files are cleaned up.
    package static func ignoreSignalsThatKill() {
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)
    }
}
