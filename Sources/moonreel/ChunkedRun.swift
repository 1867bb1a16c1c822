import ArgumentParser
import Foundation
import MoonreelEngine
import MoonreelFarm
import MoonreelPlatform
import Synchronization

/// `moonreel run --chunks N`: each export of the script rendered in N pieces by tasks of
/// their own (here, `--jobs` at a time, or as Slurm jobs), its sound by one more task, then
/// joined by a last task that copies their packets into the output.
struct ChunkOptions: ParsableArguments {
    @Option(help: "Render each export in N pieces split at keyframes, plus one task for the sound, then join them (see docs/batch.md).")
    var chunks: Int?
    @Flag(help: "With --chunks: run the tasks as Slurm jobs (an array for the pieces and the sound, then the join); files must be on a filesystem every node shares.")
    var slurm = false
    @Option(help: "With --chunks: tasks running at once on this machine (default: the cores).")
    var jobs: Int?
    @Option(help: "With --chunks --slurm: the Slurm partition (default: the cluster's default).")
    var partition: String?
    @Option(help: "With --chunks: the folder for the pieces, job scripts and logs (default: moonreel-chunks/SCRIPT-KEY); removed once the output is joined.")
    var chunkFolder: String?
    @Option(help: .hidden) var chunkTask: String?

    func validate() throws {
        if let chunks, !(1...1000).contains(chunks) { throw ValidationError("--chunks must be 1…1000, got \(chunks)") }
        if chunks == nil, slurm || jobs != nil || partition != nil || chunkFolder != nil || chunkTask != nil {
            throw ValidationError("--slurm, --jobs, --partition and --chunk-folder go with --chunks N")
        }
        if !slurm, partition != nil { throw ValidationError("--partition goes with --slurm") }
        if slurm, jobs != nil {
            throw ValidationError("--jobs counts tasks run on this machine; with --slurm the cluster runs the pieces as it has room: give fewer --chunks to use fewer of its cores")
        }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1, got \(jobs)") }
        _ = try role()
    }

    /// The hidden `--chunk-task` of a task process: piece:I (from 1), sound or join.
    func role() throws -> ChunkTask.Role? {
        guard let chunkTask else { return nil }
        if chunkTask == "sound" { return .sound }
        if chunkTask == "join" { return .join }
        if chunkTask.hasPrefix("piece:"), let index = Int(chunkTask.dropFirst(6)), (1...(chunks ?? 0)).contains(index) { return .piece(index - 1) }
        throw ValidationError("--chunk-task must be piece:I (1…N), sound or join, got \(chunkTask.quotedForMessage())")
    }
}

/// A task that failed: its name, the last line it wrote (moonreel's error) and its log.
struct TaskFailure {
    let task, cause, log: String
}

/// Runs the tasks of one chunked run and reports on them.
struct ChunkedRun {
    let options: ChunkOptions
    let common: CommonOptions
    let plan: ChunkPlan
    /// The script as the command named it (the tasks are given its absolute path).
    let script: String

    init(options: ChunkOptions, common: CommonOptions, script: String, arguments: [String], parameterValues: [String: String]) {
        (self.options, self.common, self.script) = (options, common, script)
        plan = ChunkPlan(executable: Batch.executable, script: script, arguments: arguments, parameterValues: parameterValues,
                         pieces: options.chunks ?? 1, chunkFolder: options.chunkFolder, options: common.runOptions, progress: common.progress?.rawValue)
    }

    var folder: String { plan.folder }
    var pieces: Int { plan.pieces }

    /// This process's task, for a task process.
    func task() throws -> ChunkTask? {
        try options.role().map { ChunkTask(role: $0, pieces: pieces, folder: folder, runKey: plan.runKey) }
    }

    /// Where this task process leaves its diagnostics, for the run that started it to say.
    var taskDiagnosticsFile: DiagnosticsFile? {
        options.chunkTask.map { DiagnosticsFile(path: plan.diagnosticsPath($0)) }
    }

    /// Says the pieces' and the sound's diagnostics, which went to files of their own: each
    /// once (every piece renders the same edit, so most come from each of them), and none
    /// the join already said. Under --progress json they are events, so a batch row has them.
    private func reportTaskDiagnostics() {
        let display = ProgressDisplay(style: common.progressStyle())
        display.quiet = common.quiet
        diagnostics(of: "join").forEach(display.markSaid)
        for task in plan.renderTasks { diagnostics(of: task.role).forEach { display.report($0) } }
    }

    /// What task `role` left in its diagnostics file, at lines of the script as the command
    /// named it (a run without pieces names it so).
    private func diagnostics(of role: String) -> [Diagnostic] {
        DiagnosticsFile(path: plan.diagnosticsPath(role)).read().map { diagnostic in
            guard let origin = diagnostic.origin, origin.file == plan.script else { return diagnostic }
            var named = diagnostic
            named.origin = SourceLine(file: script, line: origin.line)
            return named
        }
    }

    /// Runs the task `role` to its end (among `group`'s, so Ctrl-C interrupts it); its output
    /// goes to `log` (nil: this process's own output). How it ended.
    private func runTask(_ role: String, log: String?, in group: ProcessGroup) -> Subprocess.Finished {
        let words = plan.command(role)
        var task = Subprocess(words[0], Array(words.dropFirst()))
        (task.log, task.output, task.errors) = (log, .inherit, .inherit)
        do {
            return try task.run(in: group)
        } catch {
            return Subprocess.Finished(status: error == .interrupted ? Exit.interrupted : Exit.failed, output: "", errors: "\(error)")
        }
    }

    func run() throws {
        do {
            try plan.chunkFolder.claim()
        } catch {
            printError("moonreel: chunks: \(error)".oneLine)
            throw ExitCode(Exit.failed)
        }
        if options.slurm { return try runOnSlurm() }
        let running = ProcessGroup()
        let failures = Mutex<[TaskFailure]>([])
        let signals = SignalWatcher.start { running.interruptAll() }
        let started = Date()
        LocalPool(jobs: options.jobs ?? ProcessInfo.processInfo.activeProcessorCount).run(plan.renderTasks, isStopping: { running.isStopping }) { task in
            let taskStart = Date()
            let log = plan.logPath(task.role)
            let ended = runTask(task.role, log: log, in: running)
            if ended.status == 0 {
                let kept = (try? String(contentsOfFile: log, encoding: .utf8))?.contains("kept from an earlier run") == true
                if !common.quiet { printError("moonreel: chunks: \(task.name) " + (kept ? "kept from an earlier run" : "done in \(Self.seconds(since: taskStart))")) }
            } else {
                // A task killed outright (out of memory, say) leaves no last words in its log.
                let cause = ended.signal == nil ? lastLine(of: log) : "it was \(ended.ending)"
                failures.withLock { $0.append(TaskFailure(task: task.name, cause: cause, log: log)) }
            }
        }
        if signals.interrupted {
            printError("moonreel: interrupted; the pieces rendered are kept in \(folder): run the same command again to render only the rest")
            throw ExitCode(Exit.interrupted)
        }
        try reportFailures(failures.withLock { $0 })
        let joined = runTask("join", log: nil, in: running).status == 0
        reportTaskDiagnostics()
        guard joined else {
            printError("moonreel: chunks: the join failed; the pieces are kept in \(folder)")
            throw ExitCode(signals.interrupted ? Exit.interrupted : Exit.failed)
        }
        plan.chunkFolder.removeWhatMoonreelMade()
        if !common.quiet { printError("moonreel: chunks: \(pieces) piece tasks and the sound done and joined in \(Self.seconds(since: started))") }
    }

    private func reportFailures(_ failures: [TaskFailure]) throws {
        guard !failures.isEmpty else { return }
        // Every task runs the same script: one cause is said once.
        let causes = Set(failures.map(\.cause))
        if failures.count > 1, causes.count == 1, let cause = causes.first {
            printError("moonreel: chunks: every task failed: \(cause) (logs: \(folder)/logs)".oneLine)
        } else {
            for failure in failures { printError("moonreel: chunks: \(failure.task) failed: \(failure.cause) (log: \(failure.log))".oneLine) }
        }
        printError("moonreel: chunks: nothing was joined; the pieces rendered are kept in \(folder): fix the cause and run the same command again to render only the rest")
        throw ExitCode(Exit.failed)
    }


    private func lastLine(of path: String) -> String {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").last.map(String.init) ?? "no output"
    }

    static func seconds(since start: Date) -> String {
        String(format: "%.1f s", Date().timeIntervalSince(start))
    }

    // MARK: Slurm

    /// An array job for the pieces and the sound (task N is the sound), and the join as a job
    /// that starts only once all of them succeeded (`afterok`); waits for the join.
    private func runOnSlurm() throws {
        let slurm = Slurm()
        let status = plan.joinStatusPath
        let scripts: (pieces: JobScript, join: JobScript)
        do {
            scripts = try plan.slurmScripts(workingFolder: FileManager.default.currentDirectoryPath, partition: options.partition)
        } catch let error as BatchError {
            printError("moonreel: chunks: \(error.message)")
            throw ExitCode(Exit.failed)
        }
        unlink(status)
        let started = Date()
        let signals = SignalWatcher.start { slurm.cancel() }
        let join: String
        do {
            let array = try slurm.submit(script: folder + "/pieces.sh", job: scripts.pieces)
            join = try slurm.submit(script: folder + "/join.sh", job: scripts.join, after: array)
            if !common.quiet { printError("moonreel: chunks: Slurm job \(array) renders \(pieces) pieces and the sound, job \(join) joins them (\(folder))") }
            try slurm.waitUntilDone(join)
        } catch let error as BatchError {
            printError("moonreel: chunks: \(error.message)")
            throw ExitCode(Exit.failed)
        } catch let error as SlurmError {
            printError("moonreel: chunks: \(error.description.oneLine)")
            throw ExitCode(Exit.failed)
        }
        if signals.interrupted {
            printError("moonreel: interrupted; the Slurm jobs were cancelled and the pieces rendered are kept in \(folder)")
            throw ExitCode(Exit.interrupted)
        }
        let log = (try? String(contentsOfFile: folder + "/logs/join.log", encoding: .utf8)) ?? ""
        let joined = (try? String(contentsOfFile: status, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) == "0"
        if !joined {
            let failed = plan.renderTasks.enumerated().filter { Self.failedLog(plan.slurmLogPath($0.offset)) }
            try reportFailures(failed.map { TaskFailure(task: $0.element.name, cause: lastLine(of: plan.slurmLogPath($0.offset)), log: plan.slurmLogPath($0.offset)) })
            printError("moonreel: chunks: the join did not succeed: \(lastLine(of: folder + "/logs/join.log")); the pieces are kept in \(folder)")
            throw ExitCode(Exit.failed)
        }
        if !log.isEmpty { FileHandle.standardError.write(Data(log.utf8)) }
        reportTaskDiagnostics()
        plan.chunkFolder.removeWhatMoonreelMade()
        if !common.quiet { printError("moonreel: chunks: \(pieces) piece tasks and the sound done on Slurm and joined in \(Self.seconds(since: started))") }
    }

    /// A task log that ends in moonreel's error line.
    static func failedLog(_ path: String) -> Bool {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").last?.hasPrefix("moonreel:") == true
    }
}
