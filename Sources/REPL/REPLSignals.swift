import MoonreelEngine
import MoonreelScriptHost
import Synchronization
#if canImport(Glibc)
import Glibc
#endif
import MoonreelPlatform

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

    /// Blocks SIGINT, SIGTERM and SIGHUP in this thread (and so in every thread started
    /// later) and starts the thread that waits for them. Call before any other thread exists.
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
        SignalListener.start { [self] signal in handle(signal) }
    }

    private func handle(_ signal: Int32) {
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
            PendingFiles.discardAll()
            let message = "\nmoonreel: interrupted three times; stopped at once\n"
            _ = message.withCString { write(STDERR_FILENO, $0, strlen($0)) }
            _exit(130)
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

