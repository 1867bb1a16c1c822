import Foundation
import MoonreelPlatform

/// A batch's rows as Slurm array jobs: job scripts written into the batch folder (visible
/// and reusable: `sbatch FOLDER/task-N.sh` submits one again). Each task runs its rows as
/// `moonreel run` commands, one after another; outputs appear whole or not at all (the
/// export's output rule), so a task that dies leaves only rows to run again.
public struct SlurmBatchPlan: Sendable {
    /// Slurm's default largest array index is 1000 (MaxArraySize=1001): larger batches take
    /// more rows per task.
    public static let maxTasks = 1000

    /// The `moonreel` every task runs.
    public let executable: String
    /// The template, as given (the scripts name it by its absolute path).
    public let template: String
    /// The options every row's run gets.
    public let options: RunOptions
    /// The batch folder (absolute): job scripts, logs and chunk folders.
    public let folder: String
    /// The folder the tasks run in (`#SBATCH --chdir`).
    public let workingFolder: String
    /// `--partition`, or the cluster's default.
    public let partition: String?
    /// Rows each task renders, at least (more when the array limit needs it).
    public let rowsPerTask: Int
    /// `--max-running`: array tasks at once.
    public let maxRunning: Int?

    /// A plan as given; `folder` is made absolute.
    public init(executable: String, template: String, options: RunOptions, folder: String, workingFolder: String,
                partition: String?, rowsPerTask: Int, maxRunning: Int?) {
        (self.executable, self.template, self.options, self.workingFolder) = (executable, template, options, workingFolder)
        // At least one row a task: a stride of 0 never ends.
        (self.partition, self.rowsPerTask, self.maxRunning) = (partition, max(1, rowsPerTask), maxRunning)
        self.folder = Paths.absolute(folder)
    }

    /// The job scripts of one attempt and where they go; Slurm runs `first`, then `then`
    /// (if any) once `first` ended in any way.
    public struct Scripts: Sendable {
        /// The first job: every row's task, or every row's pieces and sound.
        public let first: (path: String, job: JobScript)
        /// The joins of rows in pieces, after `first`.
        public let then: (path: String, job: JobScript)?
    }

    /// The rows split into array tasks: `rowsPerTask` each, more if the array would be longer
    /// than `maxTasks`.
    public func tasks(_ rows: [BatchPlan.Row]) -> [[BatchPlan.Row]] {
        let perTask = max(rowsPerTask, (rows.count + Self.maxTasks - 1) / Self.maxTasks)
        return stride(from: 0, to: rows.count, by: perTask).map { Array(rows[$0..<min($0 + perTask, rows.count)]) }
    }

    /// The scripts of attempt `attempt` for `rows`. With `chunks`, every row's export is
    /// rendered in that many pieces (`moonreel run --chunks`).
    public func scripts(_ rows: [BatchPlan.Row], attempt: Int, chunks: Int? = nil) throws -> Scripts {
        if let chunks { return try scriptsInPieces(rows, chunks: chunks, attempt: attempt) }
        let tasks = tasks(rows)
        let script = folder + "/task-\(attempt).sh"
        var job = JobScript()
        try job.comment("moonreel batch: \(Paths.name(of: template)), \(rows.count) rows in \(tasks.count) tasks (attempt \(attempt)).")
        try job.comment("Written by moonreel batch --slurm; submit again with: sbatch " + JobScript.shellWord(script))
        job.ownDirective("job-name", "moonreel-batch")
        job.ownDirective("array", "0-\(tasks.count - 1)" + (maxRunning.map { "%\($0)" } ?? ""))
        try job.log(to: "\(folder)/logs/attempt-\(attempt)-task-", eachTaskSuffix: ".log")
        try directives(&job)
        job.ownDirective("requeue")
        job.code("status=0")
        job.code("row() { \"$@\" || status=1; }")
        job.code("case \"$SLURM_ARRAY_TASK_ID\" in")
        for (index, task) in tasks.enumerated() {
            job.code("\(index))")
            for row in task {
                let diagnostics = try JobScript.checked(diagnosticsPath(row: row.number, attempt: attempt), "the batch folder")
                try job.command([executable, "run", "--quiet"] + options.arguments() + ["--diagnostics-file", diagnostics] + rowArguments(row), prefix: "   row ")
            }
            job.code("   ;;")
        }
        job.code("esac")
        job.code("exit $status")
        return Scripts(first: (script, job), then: nil)
    }

    /// Writes the scripts of attempt `attempt` and submits them on `slurm`: the id of the job
    /// to wait for. Without `slurm` (`--emit`) they are only written: nil.
    public func submit(_ rows: [BatchPlan.Row], attempt: Int, chunks: Int? = nil, on slurm: Slurm?) throws -> String? {
        do {
            try Paths.makeFolders(folder + "/logs")
        } catch {
            throw BatchError("\(error)")
        }
        let scripts = try scripts(rows, attempt: attempt, chunks: chunks)
        guard let slurm else {
            try scripts.first.job.write(to: scripts.first.path)
            if let then = scripts.then { try then.job.write(to: then.path) }
            return nil
        }
        let first = try slurm.submit(script: scripts.first.path, job: scripts.first.job)
        guard let then = scripts.then else { return first }
        return try slurm.submit(script: then.path, job: then.job, after: first, dependency: "afterany")
    }

    /// Where row `row`'s run in attempt `attempt` leaves its diagnostics (its log has them
    /// only as lines for people).
    public func diagnosticsPath(row: Int, attempt: Int) -> String {
        "\(folder)/logs/attempt-\(attempt)-row-\(row).diagnostics"
    }

    /// The chunk folder of row `row` in pieces, the same in every attempt.
    public func chunkFolder(row: Int) -> String { chunkFolderStem + String(row) }
    private var chunkFolderStem: String { folder + "/chunks/row-" }

    /// The diagnostics of `row` (rendered in `chunks` pieces, or whole) in its last attempt
    /// of `attempts`, each once: a whole row's from its run, a row in pieces' from its tasks.
    public func diagnostics(of row: BatchPlan.Row, attempts: Int, chunks: Int?) -> [RowDiagnostic] {
        let files: [String]
        if let chunks {
            let plan = ChunkPlan(executable: executable, script: template, arguments: [], parameterValues: [:], pieces: chunks,
                                 chunkFolder: chunkFolder(row: row.number), options: options, progress: nil)
            files = (plan.renderTasks.map(\.role) + ["join"]).map(plan.diagnosticsPath)
        } else {
            // The last attempt that ran the row (a row is run again only while it has no output).
            files = (1...max(attempts, 1)).reversed().map { diagnosticsPath(row: row.number, attempt: $0) }
                .first { FileManager.default.fileExists(atPath: $0) }.map { [$0] } ?? []
        }
        var diagnostics: [RowDiagnostic] = []
        for file in files {
            for diagnostic in RowDiagnostic.all(in: (try? String(contentsOfFile: file, encoding: .utf8)) ?? "") where !diagnostics.contains(diagnostic) {
                diagnostics.append(diagnostic)
            }
        }
        return diagnostics
    }

    /// The directives every job script of this batch has: the working folder and partition.
    private func directives(_ job: inout JobScript) throws {
        try job.directive("chdir", workingFolder)
        if let partition { try job.directive("partition", partition) }
    }

    /// The words after `moonreel run` that make `row`, with absolute paths for the output
    /// and template, each checked to fit a job script.
    private func rowArguments(_ row: BatchPlan.Row) throws -> [String] {
        try row.values.sorted { $0.key < $1.key }.flatMap { name, value in
            ["--set", "\(name)=" + (try JobScript.checked(name == "output" ? Paths.absolute(value) : value, "row \(row.number): \(name)"))]
        } + ["--", try JobScript.checked(Paths.absolute(template), "the template path")]
    }

    /// Rows in pieces: one array job whose tasks each render one piece (or the sound) of one
    /// row, then an array job with a join per row that starts once all of them ended
    /// (`afterany`: a row whose pieces are missing fails its join alone, and the batch runs it
    /// again).
    private func scriptsInPieces(_ rows: [BatchPlan.Row], chunks: Int, attempt: Int) throws -> Scripts {
        let parts = chunks + 1
        guard rows.count <= Self.maxTasks / parts else {
            throw BatchError("\(rows.count) rows in \(chunks) pieces and a sound each make \(rows.count.multipliedReportingOverflow(by: parts).partialValue) Slurm tasks, over the array limit (\(Self.maxTasks)): run fewer rows at a time or fewer pieces")
        }
        func header(_ name: String, _ output: String) throws -> JobScript {
            var job = JobScript()
            try job.comment("moonreel batch: \(Paths.name(of: template)), \(rows.count) rows in \(chunks) pieces each (attempt \(attempt)); "
                            + "written by moonreel batch --slurm --chunks")
            job.ownDirective("job-name", name)
            try job.log(to: "\(folder)/logs/attempt-\(attempt)-\(output)-", eachTaskSuffix: ".log")
            try directives(&job)
            return job
        }
        /// Sets the positional parameters to the row's `moonreel run` words, then runs the
        /// task's role (`$role`) of that row in its own chunk folder.
        func runRow(_ job: inout JobScript, role: String) throws {
            job.code("case \"$row\" in")
            // A row's chunk folder is named by its number, not its place in this attempt: its
            // tasks' diagnostics are read from there.
            for (index, row) in rows.enumerated() { try job.command(rowArguments(row), prefix: "\(index)) number=\(row.number); set -- ", suffix: " ;;") }
            job.code("esac")
            try job.command([executable, "run", "--quiet"] + options.arguments() + ["--chunks", String(chunks)], prefix: "exec ",
                            suffix: " --chunk-task \(role) --chunk-folder " + JobScript.shellWord(chunkFolderStem) + "\"$number\" \"$@\"")
        }
        var pieces = try header("moonreel-pieces", "piece")
        pieces.ownDirective("requeue")
        pieces.ownDirective("array", "0-\(rows.count * parts - 1)" + (maxRunning.map { "%\($0)" } ?? ""))
        pieces.code("row=$((SLURM_ARRAY_TASK_ID / \(parts))) part=$((SLURM_ARRAY_TASK_ID % \(parts)))")
        pieces.code("if [ \"$part\" -lt \(chunks) ]; then role=piece:$((part + 1)); else role=sound; fi")
        try runRow(&pieces, role: "\"$role\"")
        var joins = try header("moonreel-join", "join")
        joins.ownDirective("array", "0-\(rows.count - 1)")
        joins.code("row=$SLURM_ARRAY_TASK_ID")
        try runRow(&joins, role: "join")
        return Scripts(first: (folder + "/pieces-\(attempt).sh", pieces), then: (folder + "/join-\(attempt).sh", joins))
    }
}
