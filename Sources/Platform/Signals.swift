#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C, SIGTERM and SIGHUP, received on a thread of their own (sigwait) so that handling
/// them can do real work (interrupt a script, cancel an export, stop a recording). The CLI,
/// the REPL and `moonreel record` each say what a signal does; SIGTERM and SIGHUP also arm
/// `TerminationDeadline`, so the program ends within a second whatever it is stuck in.
package enum SignalListener {
    /// Blocks the three signals in this thread (and so in every thread started later) and
    /// calls `handle` with each one that arrives. Call before any other thread exists.
    package static func start(_ handle: @escaping @Sendable (Int32) -> Void) {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        final class Context: @unchecked Sendable {
            // Handed to the signal thread once; nothing else touches it.
            let set: sigset_t, handle: @Sendable (Int32) -> Void
            init(_ set: sigset_t, _ handle: @escaping @Sendable (Int32) -> Void) { (self.set, self.handle) = (set, handle) }
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Context(set, handle)).toOpaque()
        pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            let context = Unmanaged<Context>.fromOpaque(raw).takeRetainedValue()
            var set = context.set
            var signal: Int32 = 0
            while sigwait(&set, &signal) == 0 {
                // Termination must not wait on work that cannot be stopped.
                if signal != SIGINT { TerminationDeadline.arm() }
                context.handle(signal)
            }
            return nil
        }, context)
        pthread_detach(thread)
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
        runAfter(seconds: seconds) {
            PendingFiles.discardAll()
            fflush(nil) // what the script printed before is kept, in a pipe or a file too
            // A progress bar may hold the terminal's line: end it first, only there.
            let line = (isatty(STDERR_FILENO) != 0 ? "\n" : "") + message + "\n"
            _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
            _exit(exitCode)
        }
    }

    /// What the process does with signals that end it through a failed system call rather
    /// than by death: a closed pipe (SIGPIPE) and a file grown past its limit (SIGXFSZ) then
    /// come back as EPIPE and EFBIG errors, so unfinished files are cleaned up.
    package static func ignoreSignalsThatKill() {
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)
    }
}
