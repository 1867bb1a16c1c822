import Foundation
import MoonreelEngine
import MoonreelPlatform

/// The tasks of one chunked run (`moonreel run --chunks N`): N pieces and the sound, each
/// a `moonreel run` of the same script in a task of its own, then the join; their command
/// lines, logs and, on Slurm, their job scripts.
public struct ChunkPlan: Sendable {
    /// One task of the run.
    public struct Task: Sendable, Equatable {
        /// Its `--chunk-task`: piece:I (from 1), sound or join.
        public let role: String
        /// Its name in messages: "piece 2 of 4", "sound".
        public let name: String
    }

    /// The `moonreel` every task runs.
    public let executable: String
    /// The script, by its absolute path.
    public let script: String
    /// The script's own arguments.
    public let arguments: [String]
    /// `--set` values.
    public let parameterValues: [String: String]
    /// How many pieces each export is split into.
    public let pieces: Int
    /// The options every task gets.
    public let options: RunOptions
    /// The join's `--progress` (the render tasks write notes to their logs, no progress).
    public let progress: String?
    /// What the run was given: the same in every task, different for another script,
    /// argument or parameter value.
    public let runKey: String
    /// The folder of the pieces, job scripts and logs (absolute).
    public let folder: String
    /// Whether `folder` is the default `moonreel-chunks/SCRIPT-KEY`, whose parent Moonreel made too.
    public let isDefaultFolder: Bool

    /// A plan for `script`; `chunkFolder` is `--chunk-folder` (nil: `moonreel-chunks/SCRIPT-KEY`).
    public init(executable: String, script: String, arguments: [String], parameterValues: [String: String], pieces: Int,
                chunkFolder: String?, options: RunOptions, progress: String?) {
        (self.executable, self.arguments, self.parameterValues, self.pieces) = (executable, arguments, parameterValues, pieces)
        (self.options, self.progress, isDefaultFolder) = (options, progress, chunkFolder == nil)
        self.script = Paths.absolute(script)
        runKey = ChunkTask.key(of: ([self.script, "\(pieces)"] + arguments + parameterValues.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
            .joined(separator: "\u{0}"))
        folder = Paths.absolute(chunkFolder ?? "moonreel-chunks/\(Paths.name(of: script).split(separator: ".").first.map(String.init) ?? "script")-\(runKey)")
    }

    /// The folder, to claim and clear.
    public var chunkFolder: ChunkFolder { ChunkFolder(path: folder, pieces: pieces, isDefault: isDefaultFolder) }

    /// The pieces, then the sound: the tasks that run before the join.
    public var renderTasks: [Task] {
        (1...max(pieces, 1)).map { Task(role: "piece:\($0)", name: "piece \($0) of \(pieces)") } + [Task(role: "sound", name: "sound")]
    }

    /// The command line of the task `role`.
    public func command(_ role: String) -> [String] {
        var words = [executable, "run", "--chunks", String(pieces), "--chunk-task", role, "--chunk-folder", folder]
        // Render tasks write to their logs: notes, not progress.
        words += options.arguments(progress: role == "join" ? nil : "none")
        if role == "join", let progress { words += ["--progress", progress] }
        for (name, value) in parameterValues.sorted(by: { $0.key < $1.key }) { words += ["--set", "\(name)=\(value)"] }
        return words + ["--", script] + arguments
    }

    /// The log of task `role` run on this machine.
    public func logPath(_ role: String) -> String { taskFile(role, ".log") }

    /// Where task `role`, here or on Slurm, leaves its diagnostics for the run to say.
    public func diagnosticsPath(_ role: String) -> String { taskFile(role, ".diagnostics") }

    private func taskFile(_ role: String, _ suffix: String) -> String {
        folder + "/logs/" + role.replacingOccurrences(of: ":", with: "-") + suffix
    }

    /// The log of render task `index` (from 0) run on Slurm.
    public func slurmLogPath(_ index: Int) -> String { folder + "/logs/task-\(index).log" }

    /// Where the Slurm join writes its exit status.
    public var joinStatusPath: String { folder + "/join.status" }

    /// The Slurm job scripts: an array for the pieces and the sound (task N is the sound),
    /// and the join, which writes its status to `joinStatusPath`.
    public func slurmScripts(workingFolder: String, partition: String?) throws -> (pieces: JobScript, join: JobScript) {
        func header(_ name: String) throws -> JobScript {
            var job = JobScript()
            try job.comment("Written by moonreel run --chunks \(pieces) --slurm for \(Paths.name(of: script)); logs in \(folder)/logs")
            job.ownDirective("job-name", name)
            try job.directive("chdir", workingFolder)
            if let partition { try job.directive("partition", partition) }
            return job
        }
        var piecesJob = try header("moonreel-pieces")
        piecesJob.ownDirective("array", "0-\(pieces)")
        piecesJob.ownDirective("requeue")
        try piecesJob.log(to: "\(folder)/logs/task-", eachTaskSuffix: ".log")
        piecesJob.code("case \"$SLURM_ARRAY_TASK_ID\" in")
        for (index, task) in renderTasks.enumerated() { try piecesJob.command(command(task.role), prefix: "\(index)) exec ", suffix: " ;;") }
        piecesJob.code("esac")
        var joinJob = try header("moonreel-join")
        try joinJob.log(to: "\(folder)/logs/join.log")
        try joinJob.command(command("join"))
        joinJob.code("echo $? > " + (try JobScript.shellWord(joinStatusPath)))
        return (piecesJob, joinJob)
    }
}
