import Foundation
import Synchronization

/// One child process, run to its end: the one way Moonreel starts its own tasks (a batch's
/// rows and their checks, a chunked render's pieces) and Slurm's commands.
public struct Subprocess: Sendable {
    /// Where one of the child's output streams goes.
    public enum Destination: Sendable, Equatable {
        /// Read into `Finished`; both pipes are read at once, so a chatty child cannot block.
        case capture
        /// `/dev/null`.
        case discard
        /// This process's own stream.
        case inherit
    }

    /// How a child ended and what it said.
    public struct Finished: Sendable, Equatable {
        /// The exit status, or 128 + the signal's number for a child a signal ended (as a
        /// shell says it: 130 for Ctrl-C, 137 for a kill).
        public let status: Int32
        /// The signal that ended the child, or nil when it exited.
        public let signal: Int32?
        /// Its standard output, when captured.
        public let output: String
        /// Its standard error, when captured.
        public let errors: String

        /// A child's end, as given.
        public init(status: Int32, signal: Int32? = nil, output: String, errors: String) {
            (self.status, self.signal, self.output, self.errors) = (status, signal, output, errors)
        }

        /// How it ended, for a message: `exit 3`, or `killed by SIGKILL (signal 9)`, which
        /// is how the system's out-of-memory killer ends a process.
        public var ending: String {
            guard let signal else { return "exit \(status)" }
            let names: [Int32: String] = [SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL", SIGABRT: "SIGABRT",
                                          SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGSEGV: "SIGSEGV", SIGPIPE: "SIGPIPE",
                                          SIGTERM: "SIGTERM", SIGXCPU: "SIGXCPU"]
            return "killed by \(names[signal] ?? "a signal") (signal \(signal))"
        }
    }

    /// Why a child did not start.
    public enum StartFailure: Error, Equatable, CustomStringConvertible {
        /// Its group was interrupted first: nothing more starts.
        case interrupted
        /// The executable could not be run; the system's reason.
        case cannotRun(String)

        /// The reason, for a message.
        public var description: String {
            switch self {
            case .interrupted: "interrupted"
            case .cannotRun(let reason): reason
            }
        }
    }

    /// The program's path.
    public let executable: String
    /// Its arguments, after the program's own name.
    public let arguments: [String]
    /// Where its standard output goes.
    public var output: Destination = .capture
    /// Where its standard error goes.
    public var errors: Destination = .capture
    /// A file that takes both its output and its errors instead (created or emptied).
    public var log: String?

    /// A child that runs `executable` with `arguments` (standard input is always `/dev/null`).
    public init(_ executable: String, _ arguments: [String]) {
        (self.executable, self.arguments) = (executable, arguments)
    }

    /// A command found on `PATH`, as a shell would find it (`sbatch`, `squeue`).
    public static func command(_ name: String, _ arguments: [String]) -> Subprocess {
        Subprocess("/usr/bin/env", [name] + arguments)
    }

    /// Runs the command `name` found on `PATH` to its end, its output and errors captured;
    /// one that cannot start ends with 127, as in a shell.
    public static func runCommand(_ name: String, _ arguments: [String]) -> Finished {
        do {
            return try command(name, arguments).run()
        } catch {
            return Finished(status: 127, output: "", errors: "cannot run \(name): \(error)")
        }
    }

    /// Runs the child to its end. Under a `group`, Ctrl-C there interrupts it; `onStart` is
    /// called once it runs, and `onLine` with each whole line of captured output as it comes
    /// (a row's progress events, passed on).
    public func run(in group: ProcessGroup? = nil, onStart: () -> Void = {}, onLine: (@Sendable (Data) -> Void)? = nil) throws(StartFailure) -> Finished {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        let outputPipe = Pipe(), errorPipe = Pipe()
        if let log {
            guard FileManager.default.createFile(atPath: log, contents: nil), let handle = FileHandle(forWritingAtPath: log) else {
                throw .cannotRun("cannot write the log \(log)")
            }
            (process.standardOutput, process.standardError) = (handle, handle)
        } else {
            process.standardOutput = Self.stream(output, pipe: outputPipe, own: FileHandle.standardOutput)
            process.standardError = Self.stream(errors, pipe: errorPipe, own: FileHandle.standardError)
        }
        if let group { try group.start(process) } else {
            do { try process.run() } catch { throw .cannotRun("\(error)") }
        }
        onStart()
        let captured = Mutex(Data())
        let readers = DispatchGroup()
        if log == nil, output == .capture {
            readers.enter()
            DispatchQueue.global().async {
                Self.read(outputPipe, into: captured, onLine: onLine)
                readers.leave()
            }
        }
        let errorText = log == nil && errors == .capture ? errorPipe.fileHandleForReading.readDataToEndOfFile() : Data()
        readers.wait()
        process.waitUntilExit()
        group?.finished(process)
        let signal = process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil
        return Finished(status: signal.map { 128 + $0 } ?? process.terminationStatus, signal: signal,
                        output: String(decoding: captured.withLock { $0 }, as: UTF8.self), errors: String(decoding: errorText, as: UTF8.self))
    }

    private static func stream(_ destination: Destination, pipe: Pipe, own: FileHandle) -> Any {
        switch destination {
        case .capture: pipe
        case .discard: FileHandle.nullDevice
        case .inherit: own
        }
    }

    /// Reads a pipe to its end, handing each whole line to `onLine` on the way.
    private static func read(_ pipe: Pipe, into captured: borrowing Mutex<Data>, onLine: (@Sendable (Data) -> Void)?) {
        var pending = Data()
        while case let chunk = pipe.fileHandleForReading.availableData, !chunk.isEmpty {
            captured.withLock { $0.append(chunk) }
            guard let onLine else { continue }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: 10) {
                onLine(Data(pending[pending.startIndex..<newline]))
                pending = Data(pending[pending.index(after: newline)...])
            }
        }
    }
}

/// The children running on this machine for one command: Ctrl-C interrupts them all (each
/// removes its unfinished file) and starts no more.
public final class ProcessGroup: Sendable {
    // Foundation's Process is not Sendable; it is only touched under this lock.
    private struct State: @unchecked Sendable {
        var running: [ObjectIdentifier: Process] = [:]
        var stopping = false
    }
    private let state = Mutex(State())

    /// An empty group.
    public init() {}

    /// Whether `interruptAll` was called.
    public var isStopping: Bool { state.withLock { $0.stopping } }

    /// Sends SIGINT to every running child and refuses new ones.
    public func interruptAll() {
        let running = state.withLock { state in
            state.stopping = true
            return Array(state.running.values)
        }
        for process in running where process.isRunning { kill(process.processIdentifier, SIGINT) }
    }

    /// Starts `process` unless the group is stopping; started under the lock, so an
    /// interruption either sees it or keeps it from starting.
    fileprivate func start(_ process: Process) throws(Subprocess.StartFailure) {
        let failure: Subprocess.StartFailure? = state.withLock { state in
            guard !state.stopping else { return .interrupted }
            do { try process.run() } catch { return .cannotRun("\(error)") }
            state.running[ObjectIdentifier(process)] = process
            return nil
        }
        if let failure { throw failure }
    }

    fileprivate func finished(_ process: Process) {
        _ = state.withLock { $0.running.removeValue(forKey: ObjectIdentifier(process)) }
    }
}
