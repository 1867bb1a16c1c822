import ArgumentParser
import Foundation
import MoonreelEngine
import MoonreelPlatform

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

/// The folder of a chunked run's pieces, job scripts and logs. Moonreel works only in a
/// folder that is new, empty or marked as one of its own (an earlier, unfinished run of
/// the same command), and once the output is joined removes only the files its tasks make
/// there: whatever else is in it (the output itself, if it was written there) stays.
struct ChunkFolder {
    /// The mark of a folder Moonreel made for a chunked run (its first file, its last removed).
    static let markName = ".moonreel-chunks"

    let path: String
    let pieces: Int
    /// `moonreel-chunks/SCRIPT-KEY`, whose parent Moonreel made too.
    let isDefault: Bool

    /// Makes the folder, or takes over one that is empty or already Moonreel's; refuses one
    /// that holds anything else.
    func claim() throws {
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw ChunkFolderError("--chunk-folder \(path.quotedForMessage(limit: 200)) is not a folder") }
            if access(path + "/" + Self.markName, F_OK) != 0, let first = Self.entries(of: path).first {
                throw ChunkFolderError("--chunk-folder \(path.quotedForMessage(limit: 200)) already holds files Moonreel did not make "
                                       + "(\(first.quotedForMessage(limit: 80)), …): give a new or empty folder; Moonreel clears its chunk folder once the output is joined")
            }
        }
        try Paths.makeFolders(path + "/logs")
        do {
            try Paths.writeFile("A chunked render's pieces, job scripts and logs (moonreel run --chunks); moonreel removes them once the output is joined.\n",
                                to: path + "/" + Self.markName, replacing: false)
        } catch let error as SystemError where error.code == EEXIST {}
    }

    /// The files a chunked run's tasks make here: task logs (one per task here, one per array
    /// task and the join's on Slurm), the job scripts and the join's status. The pieces and
    /// the sound the join removes itself, each export's folder with them.
    var madeFiles: [String] {
        let logs = (1...max(pieces, 1)).map { "piece-\($0).log" } + ["sound.log", "join.log"] + (0...max(pieces, 1)).map { "task-\($0).log" }
        return logs.map { "logs/" + $0 } + ["pieces.sh", "join.sh", "join.status"]
    }

    /// Removes what the run made, then each folder it made if that leaves it empty.
    func removeWhatMoonreelMade() {
        for name in madeFiles { unlink(path + "/" + name) }
        rmdir(path + "/logs")
        for name in Self.entries(of: path) where name.hasPrefix("export-") && name.dropFirst(7).allSatisfy(\.isNumber) { rmdir(path + "/" + name) }
        unlink(path + "/" + Self.markName)
        rmdir(path)
        if isDefault { rmdir(Paths.parent(of: path)) }
    }

    static func entries(of folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }
}

struct ChunkFolderError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A task that failed: its name, the last line it wrote (moonreel's error) and its log.
struct TaskFailure {
    let task, cause, log: String
}

/// The task processes running on this machine; Ctrl-C interrupts them (each removes its
/// unfinished file) and starts no more.
final class TaskProcesses: @unchecked Sendable {
    private let lock = NSLock()
    private var running: [Process] = []
    private var stopping = false

    private var failed: [TaskFailure] = []

    var isStopping: Bool { lock.withLock { stopping } }
    /// What went wrong in the tasks that failed, one line each.
    var failures: [TaskFailure] { lock.withLock { failed } }
    func recordFailure(_ failure: TaskFailure) { lock.withLock { failed.append(failure) } }

    func interruptAll() {
        let processes = lock.withLock { stopping = true; return running }
        for process in processes where process.isRunning { kill(process.processIdentifier, SIGINT) }
    }

    /// Runs a task to its end; its output goes to `log` (nil: this process's own output).
    func run(_ words: [String], log: String?) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: words[0])
        process.arguments = Array(words.dropFirst())
        process.standardInput = FileHandle.nullDevice
        if let log {
            guard FileManager.default.createFile(atPath: log, contents: nil), let handle = FileHandle(forWritingAtPath: log) else { return Exit.failed }
            (process.standardOutput, process.standardError) = (handle, handle)
        }
        let started: Bool = lock.withLock {
            guard !stopping, (try? process.run()) != nil else { return false }
            running.append(process)
            return true
        }
        guard started else { return isStopping ? Exit.interrupted : Exit.failed }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Runs the tasks of one chunked run and reports on them.
struct ChunkedRun {
    let options: ChunkOptions
    let common: CommonOptions
    let script: String
    let arguments: [String]
    let parameterValues: [String: String]
    let pieces: Int

    init(options: ChunkOptions, common: CommonOptions, script: String, arguments: [String], parameterValues: [String: String]) {
        (self.options, self.common, self.script, self.arguments, self.parameterValues) = (options, common, script, arguments, parameterValues)
        pieces = options.chunks ?? 1
    }

    /// What the run was given: the same in every task, different for another script,
    /// argument or parameter value.
    var runKey: String {
        ChunkTask.key(of: ([Paths.absolute(script), "\(pieces)"] + arguments + parameterValues.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
            .joined(separator: "\u{0}"))
    }

    var folder: String {
        Paths.absolute(options.chunkFolder ?? "moonreel-chunks/\(Paths.name(of: script).split(separator: ".").first.map(String.init) ?? "script")-\(runKey)")
    }

    var chunkFolder: ChunkFolder { ChunkFolder(path: folder, pieces: pieces, isDefault: options.chunkFolder == nil) }

    /// This process's task, for a task process.
    func task() throws -> ChunkTask? {
        try options.role().map { ChunkTask(role: $0, pieces: pieces, folder: folder, runKey: runKey) }
    }

    /// The command line of one task.
    func command(_ role: String) -> [String] {
        var words = [BatchRunner.executable, "run", "--chunks", String(pieces), "--chunk-task", role, "--chunk-folder", folder,
                     "--memory-limit", String(common.memoryLimit)]
        // Render tasks write to their logs: notes, not progress.
        if role != "join" { words += ["--progress", "none"] }
        if let limit = common.timeLimit { words += ["--time-limit", String(limit)] }
        if common.overwrite { words.append("--overwrite") }
        if common.strict { words.append("--strict") }
        if role == "join", let progress = common.progress { words += ["--progress", progress.rawValue] }
        for (name, value) in parameterValues.sorted(by: { $0.key < $1.key }) { words += ["--set", "\(name)=\(value)"] }
        return words + ["--", Paths.absolute(script)] + arguments
    }

    var renderTasks: [(role: String, name: String)] {
        (1...pieces).map { ("piece:\($0)", "piece \($0) of \(pieces)") } + [("sound", "sound")]
    }

    func logPath(_ role: String) -> String { folder + "/logs/" + role.replacingOccurrences(of: ":", with: "-") + ".log" }

    func run() throws {
        do {
            try chunkFolder.claim()
        } catch {
            printError("moonreel: chunks: \(error)".oneLine)
            throw ExitCode(Exit.failed)
        }
        if options.slurm { return try runOnSlurm() }
        let jobs = options.jobs ?? ProcessInfo.processInfo.activeProcessorCount
        let running = TaskProcesses()
        let signals = SignalWatcher.start { running.interruptAll() }
        let started = Date()
        let slots = DispatchSemaphore(value: jobs)
        let group = DispatchGroup()
        for task in renderTasks {
            slots.wait()
            if running.isStopping { slots.signal(); break }
            group.enter()
            DispatchQueue.global().async {
                defer { slots.signal(); group.leave() }
                let taskStart = Date()
                let status = running.run(command(task.role), log: logPath(task.role))
                if status == 0 {
                    let kept = (try? String(contentsOfFile: logPath(task.role), encoding: .utf8))?.contains("kept from an earlier run") == true
                    if !common.quiet { printError("moonreel: chunks: \(task.name) " + (kept ? "kept from an earlier run" : "done in \(Self.seconds(since: taskStart))")) }
                } else {
                    running.recordFailure(TaskFailure(task: task.name, cause: lastLine(of: logPath(task.role)), log: logPath(task.role)))
                }
            }
        }
        group.wait()
        if signals.interrupted {
            printError("moonreel: interrupted; the pieces rendered are kept in \(folder): run the same command again to render only the rest")
            throw ExitCode(Exit.interrupted)
        }
        try reportFailures(running.failures)
        let status = running.run(command("join"), log: nil)
        guard status == 0 else {
            printError("moonreel: chunks: the join failed; the pieces are kept in \(folder)")
            throw ExitCode(signals.interrupted ? Exit.interrupted : Exit.failed)
        }
        chunkFolder.removeWhatMoonreelMade()
        if !common.quiet { printError("moonreel: chunks: \(pieces) pieces and the sound rendered and joined in \(Self.seconds(since: started))") }
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
        let cluster = SlurmSubmission(partition: options.partition, rowsPerTask: 1, maxRunning: nil, emit: false, wait: true, folder: folder)
        func header(_ name: String) throws -> JobScript {
            var job = JobScript()
            try job.comment("Written by moonreel run --chunks \(pieces) --slurm for \(Paths.name(of: script)); logs in \(folder)/logs")
            job.code("#SBATCH --job-name=\(name)")
            try job.directive("chdir", FileManager.default.currentDirectoryPath)
            if let partition = options.partition { try job.directive("partition", partition) }
            return job
        }
        let status = folder + "/join.status"
        var piecesJob: JobScript, joinJob: JobScript
        do {
            piecesJob = try header("moonreel-pieces")
            piecesJob.code("#SBATCH --array=0-\(pieces)")
            piecesJob.code("#SBATCH --requeue")
            try piecesJob.log(to: "\(folder)/logs/task-", eachTaskSuffix: ".log")
            piecesJob.code("case \"$SLURM_ARRAY_TASK_ID\" in")
            for (index, task) in renderTasks.enumerated() { try piecesJob.command(command(task.role), prefix: "\(index)) exec ", suffix: " ;;") }
            piecesJob.code("esac")
            joinJob = try header("moonreel-join")
            try joinJob.log(to: "\(folder)/logs/join.log")
            try joinJob.command(command("join"))
            joinJob.code("echo $? > " + (try JobScript.shellWord(status)))
        } catch let error as BatchError {
            printError("moonreel: chunks: \(error.message)")
            throw ExitCode(Exit.failed)
        }
        unlink(status)
        let started = Date()
        let signals = SignalWatcher.start { cluster.cancel() }
        let join: String
        do {
            let array = try cluster.submit(script: folder + "/pieces.sh", job: piecesJob)
            join = try cluster.submit(script: folder + "/join.sh", job: joinJob, after: array)
            if !common.quiet { printError("moonreel: chunks: Slurm job \(array) renders \(pieces) pieces and the sound, job \(join) joins them (\(folder))") }
            try cluster.waitUntilDone(join)
        } catch let error as BatchError {
            printError("moonreel: chunks: \(error.message)")
            throw ExitCode(Exit.failed)
        }
        if signals.interrupted {
            printError("moonreel: interrupted; the Slurm jobs were cancelled and the pieces rendered are kept in \(folder)")
            throw ExitCode(Exit.interrupted)
        }
        let log = (try? String(contentsOfFile: folder + "/logs/join.log", encoding: .utf8)) ?? ""
        let joined = (try? String(contentsOfFile: status, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) == "0"
        if !joined {
            let failed = renderTasks.indices.filter { Self.failedLog(folder + "/logs/task-\($0).log") }
            try reportFailures(failed.map { TaskFailure(task: renderTasks[$0].name, cause: lastLine(of: folder + "/logs/task-\($0).log"), log: folder + "/logs/task-\($0).log") })
            printError("moonreel: chunks: the join did not succeed: \(lastLine(of: folder + "/logs/join.log")); the pieces are kept in \(folder)")
            throw ExitCode(Exit.failed)
        }
        if !log.isEmpty { FileHandle.standardError.write(Data(log.utf8)) }
        chunkFolder.removeWhatMoonreelMade()
        if !common.quiet { printError("moonreel: chunks: \(pieces) pieces and the sound rendered on Slurm and joined in \(Self.seconds(since: started))") }
    }

    /// A task log that ends in moonreel's error line.
    static func failedLog(_ path: String) -> Bool {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").last?.hasPrefix("moonreel:") == true
    }
}
