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

    /// Writes the job script for `rows` and submits it; the job id, or nil with `emit`.
    func submit(_ rows: [BatchPlan.Row], template: String, common: CommonOptions, attempt: Int) throws -> String? {
        do {
            try Paths.makeFolders(folder + "/logs")
        } catch {
            throw BatchError("\(error)")
        }
        let perTask = max(rowsPerTask, (rows.count + Self.maxTasks - 1) / Self.maxTasks)
        let tasks = stride(from: 0, to: rows.count, by: perTask).map { Array(rows[$0..<min($0 + perTask, rows.count)]) }
        var options = ["run", "--quiet", "--memory-limit", String(common.memoryLimit)]
        if let limit = common.timeLimit { options += ["--time-limit", String(limit)] }
        if common.overwrite { options.append("--overwrite") }
        var lines = [
            "#!/bin/sh",
            "# moonreel batch: \(Paths.name(of: template)), \(rows.count) rows in \(tasks.count) tasks (attempt \(attempt)).",
            "# Written by moonreel batch --slurm; submit again with: sbatch \(Self.quoted(folder))/task-\(attempt).sh",
            "#SBATCH --job-name=moonreel-batch",
            "#SBATCH --array=0-\(tasks.count - 1)" + (maxRunning.map { "%\($0)" } ?? ""),
            "#SBATCH --output=\(folder)/logs/attempt-\(attempt)-task-%a.log",
            "#SBATCH --chdir=\(FileManager.default.currentDirectoryPath)",
            "#SBATCH --requeue",
        ]
        if let partition { lines.append("#SBATCH --partition=\(partition)") }
        lines += ["status=0", "row() { \"$@\" || status=1; }", "case \"$SLURM_ARRAY_TASK_ID\" in"]
        for (index, task) in tasks.enumerated() {
            let commands = task.map { row -> String in
                let values = row.values.sorted { $0.key < $1.key }.flatMap { ["--set", "\($0.key)=\($0.key == "output" ? Paths.absolute($0.value) : $0.value)"] }
                return "row " + ([BatchRunner.executable] + options + values + ["--", Paths.absolute(template)]).map(Self.quoted).joined(separator: " ")
            }
            lines.append("\(index)) " + commands.joined(separator: "\n   ") + " ;;")
        }
        lines += ["esac", "exit $status", ""]
        let script = folder + "/task-\(attempt).sh"
        guard !emit else {
            try write(script, lines: lines)
            return nil
        }
        return try submit(script: script, lines: lines)
    }

    /// Writes a job script and submits it (to start once job `after` succeeded, if given); its job id.
    func submit(script: String, lines: [String], after: String? = nil) throws -> String {
        try write(script, lines: lines)
        let (status, output, errors) = Self.command("sbatch", ["--parsable"] + (after.map { ["--dependency=afterok:\($0)"] } ?? []) + [script])
        guard status == 0, let job = output.split(separator: ";").first.map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }), !job.isEmpty else {
            throw BatchError("sbatch refused \(script): \(errors.isEmpty ? output : errors)".oneLine)
        }
        submitted.withLock { $0.append(job) }
        return job
    }

    private func write(_ script: String, lines: [String]) throws {
        do {
            try lines.joined(separator: "\n").write(toFile: script, atomically: true, encoding: .utf8)
        } catch {
            throw BatchError("cannot write \(script): \(error.localizedDescription)")
        }
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

    static func quoted(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
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
