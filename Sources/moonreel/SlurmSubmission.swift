import Foundation
import MoonreelPlatform
import Synchronization

/// A batch's rows as Slurm array jobs: a job script written into the batch folder (visible
/// and reusable: `sbatch FOLDER/task-N.sh` submits it again), submitted with `sbatch`, then
/// waited for with `squeue`. Each task runs its rows as `moonreel run` commands, one after
/// another; outputs appear whole or not at all (the export's output rule), so a task that
/// dies leaves only rows to run again.
final class SlurmSubmission: Sendable {
    let partition: String?
    let rowsPerTask: Int
    let maxRunning: Int?
    let emit: Bool
    let wait: Bool
    let folder: String
    private let submitted = Mutex<[String]>([])

    init(partition: String?, rowsPerTask: Int, maxRunning: Int?, emit: Bool, wait: Bool, folder: String) {
        (self.partition, self.rowsPerTask, self.maxRunning, self.emit, self.wait) = (partition, rowsPerTask, maxRunning, emit, wait)
        self.folder = Paths.absolute(folder)
    }

    /// Slurm's default largest array index is 1000 (MaxArraySize=1001): larger batches take
    /// more rows per task.
    static let maxTasks = 1000

    /// Writes the job script for `rows` and submits it; the job id, or nil with `emit`. With
    /// `chunks`, every row's export is rendered in that many pieces (`moonreel run --chunks`).
    func submit(_ rows: [BatchPlan.Row], template: String, common: CommonOptions, attempt: Int, chunks: Int? = nil) throws -> String? {
        do {
            try Paths.makeFolders(folder + "/logs")
        } catch {
            throw BatchError("\(error)")
        }
        var options = ["run", "--quiet", "--memory-limit", String(common.memoryLimit)]
        if let limit = common.timeLimit { options += ["--time-limit", String(limit)] }
        if common.overwrite { options.append("--overwrite") }
        if common.strict { options.append("--strict") }
        if let chunks { return try submitInPieces(rows, chunks: chunks, template: template, options: options, attempt: attempt) }
        let perTask = max(rowsPerTask, (rows.count + Self.maxTasks - 1) / Self.maxTasks)
        let tasks = stride(from: 0, to: rows.count, by: perTask).map { Array(rows[$0..<min($0 + perTask, rows.count)]) }
        var job = JobScript()
        try job.comment("moonreel batch: \(Paths.name(of: template)), \(rows.count) rows in \(tasks.count) tasks (attempt \(attempt)).")
        let script = folder + "/task-\(attempt).sh"
        try job.comment("Written by moonreel batch --slurm; submit again with: sbatch " + JobScript.shellWord(script))
        job.code("#SBATCH --job-name=moonreel-batch")
        job.code("#SBATCH --array=0-\(tasks.count - 1)" + (maxRunning.map { "%\($0)" } ?? ""))
        try job.log(to: "\(folder)/logs/attempt-\(attempt)-task-", eachTaskSuffix: ".log")
        try directives(&job)
        job.code("#SBATCH --requeue")
        job.code("status=0")
        job.code("row() { \"$@\" || status=1; }")
        job.code("case \"$SLURM_ARRAY_TASK_ID\" in")
        for (index, task) in tasks.enumerated() {
            job.code("\(index))")
            for row in task { try job.command([BatchRunner.executable] + options + rowArguments(row, template: template), prefix: "   row ") }
            job.code("   ;;")
        }
        job.code("esac")
        job.code("exit $status")
        guard !emit else {
            try job.write(to: script)
            return nil
        }
        return try submit(script: script, job: job)
    }

    /// The directives every job script of this submission has: the working folder and partition.
    private func directives(_ job: inout JobScript) throws {
        try job.directive("chdir", FileManager.default.currentDirectoryPath)
        if let partition { try job.directive("partition", partition) }
    }

    /// The words after `moonreel run` that make `row`: its parameter values and the template.
    private func rowArguments(_ row: BatchPlan.Row, template: String) throws -> [String] {
        try row.values.sorted { $0.key < $1.key }.flatMap { name, value in
            ["--set", "\(name)=" + (try JobScript.checked(name == "output" ? Paths.absolute(value) : value, "row \(row.number): \(name)"))]
        } + ["--", try JobScript.checked(Paths.absolute(template), "the template path")]
    }

    /// Rows in pieces: one array job whose tasks each render one piece (or the sound) of one
    /// row, then an array job with a join per row that starts once all of them ended
    /// (`afterany`: a row whose pieces are missing fails its join alone, and the batch runs it
    /// again). Returns the joins' job id, which is the one to wait for.
    private func submitInPieces(_ rows: [BatchPlan.Row], chunks: Int, template: String, options: [String], attempt: Int) throws -> String? {
        let parts = chunks + 1
        guard rows.count * parts <= Self.maxTasks else {
            throw BatchError("\(rows.count) rows in \(chunks) pieces and a sound each make \(rows.count * parts) Slurm tasks, over the array limit (\(Self.maxTasks)): run fewer rows at a time or fewer pieces")
        }
        func header(_ name: String, _ output: String) throws -> JobScript {
            var job = JobScript()
            try job.comment("moonreel batch: \(Paths.name(of: template)), \(rows.count) rows in \(chunks) pieces each (attempt \(attempt)); "
                            + "written by moonreel batch --slurm --chunks")
            job.code("#SBATCH --job-name=\(name)")
            try job.log(to: "\(folder)/logs/attempt-\(attempt)-\(output)-", eachTaskSuffix: ".log")
            try directives(&job)
            return job
        }
        /// Sets the positional parameters to the row's `moonreel run` words, then runs the
        /// task's role (`$role`) of that row in its own chunk folder.
        func runRow(_ job: inout JobScript, role: String) throws {
            job.code("case \"$row\" in")
            for (index, row) in rows.enumerated() { try job.command(rowArguments(row, template: template), prefix: "\(index)) set -- ", suffix: " ;;") }
            job.code("esac")
            try job.command([BatchRunner.executable] + options + ["--chunks", String(chunks)], prefix: "exec ",
                            suffix: " --chunk-task \(role) --chunk-folder " + JobScript.shellWord(folder + "/chunks/row-") + "\"$row\" \"$@\"")
        }
        var pieces = try header("moonreel-pieces", "piece")
        pieces.code("#SBATCH --requeue")
        pieces.code("#SBATCH --array=0-\(rows.count * parts - 1)" + (maxRunning.map { "%\($0)" } ?? ""))
        pieces.code("row=$((SLURM_ARRAY_TASK_ID / \(parts))) part=$((SLURM_ARRAY_TASK_ID % \(parts)))")
        pieces.code("if [ \"$part\" -lt \(chunks) ]; then role=piece:$((part + 1)); else role=sound; fi")
        try runRow(&pieces, role: "\"$role\"")
        var joins = try header("moonreel-join", "join")
        joins.code("#SBATCH --array=0-\(rows.count - 1)")
        joins.code("row=$SLURM_ARRAY_TASK_ID")
        try runRow(&joins, role: "join")
        let (piecesScript, joinScript) = (folder + "/pieces-\(attempt).sh", folder + "/join-\(attempt).sh")
        guard !emit else {
            try pieces.write(to: piecesScript)
            try joins.write(to: joinScript)
            return nil
        }
        let array = try submit(script: piecesScript, job: pieces)
        return try submit(script: joinScript, job: joins, after: array, dependency: "afterany")
    }

    /// Writes a job script and submits it (to start once job `after` succeeded, or by
    /// another `dependency` type, if given); its job id.
    func submit(script: String, job: JobScript, after: String? = nil, dependency: String = "afterok") throws -> String {
        try job.write(to: script)
        let (status, output, errors) = Self.command("sbatch", ["--parsable"] + (after.map { ["--dependency=\(dependency):\($0)"] } ?? []) + [script])
        guard status == 0, let id = output.split(separator: ";").first.map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }), !id.isEmpty else {
            throw BatchError("sbatch refused \(script): \(errors.isEmpty ? output : errors)".oneLine)
        }
        submitted.withLock { $0.append(id) }
        return id
    }

    /// Returns once Slurm lists none of the job's tasks (finished, failed or cancelled), or
    /// once it waits for a job that failed (`afterok` never satisfied): then it is cancelled.
    func waitUntilDone(_ job: String) throws {
        while true {
            let (status, output, errors) = Self.command("squeue", ["--noheader", "--jobs", job, "--format", "%i %r"])
            if status != 0 {
                // squeue forgets finished jobs and then calls the id invalid.
                if errors.contains("Invalid job id") { return }
                throw BatchError("squeue failed: \(errors)".oneLine)
            }
            if output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return }
            if output.contains("DependencyNeverSatisfied") {
                _ = Self.command("scancel", [job])
                return
            }
            usleep(500_000)
        }
    }

    /// Cancels every job this batch submitted (Ctrl-C).
    func cancel() {
        for job in submitted.withLock({ $0 }) { _ = Self.command("scancel", [job]) }
    }

    static func command(_ name: String, _ arguments: [String]) -> (Int32, String, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [name] + arguments
        let output = Pipe(), errors = Pipe()
        (process.standardOutput, process.standardError, process.standardInput) = (output, errors, FileHandle.nullDevice)
        do { try process.run() } catch { return (127, "", "cannot run \(name): \(error)") }
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }
}
