import Foundation
import MoonreelEngine
import MoonreelPlatform

/// Runs a batch's rows as `moonreel run` processes — here, `jobs` at a time, or on a Slurm
/// cluster — each again up to `retries` times, and keeps each row's result for the report.
/// It prints nothing: every step reaches `report` as an `Event`, one at a time, and the
/// command says it (lines for people, or JSON).
public final class BatchRun: @unchecked Sendable {
    /// A step of the run, for the command to say.
    public enum Event {
        /// A row's `moonreel run` started.
        case started(BatchPlan.Row)
        /// A JSON progress event of a row's run, as it came (only when `forwardsProgress`).
        case progress(BatchPlan.Row, [String: Any])
        /// A row ended, or was skipped (done already) or never started (interrupted).
        case ended(BatchPlan.Row, RowResult)
        /// A Slurm job of `rows` rows runs from `folder`; the run waits for it.
        case waitingForSlurm(job: String, rows: Int, folder: String)
    }

    /// How a run on a cluster ended.
    public enum SlurmOutcome: Equatable {
        /// Every attempt was waited for: `failed` rows have no whole output.
        case finished(failed: Int, interrupted: Bool)
        /// The first attempt was submitted as `job` and left to run (`--no-wait`).
        case submitted(job: String, rows: Int)
        /// The first attempt's job scripts were written, not submitted (`--emit`).
        case written(attempt: Int, rows: Int)
    }

    /// The rows, template and outputs.
    public let plan: BatchPlan
    /// The `moonreel` each row runs.
    public let executable: String
    /// The options each row's run gets; `overwrite` also renders rows whose output is whole.
    public let options: RunOptions
    /// Rows rendering here at once.
    public let jobs: Int
    /// Attempts after a row's first fails.
    public let retries: Int
    /// Each row's export in this many pieces (`moonreel run --chunks`), or whole.
    public let chunks: Int?
    /// Whether rows' progress events reach `report` (a command printing JSON passes them on).
    public let forwardsProgress: Bool
    /// The exit status of a `moonreel run` that Ctrl-C stopped.
    public let interruptedStatus: Int32

    private let report: (Event) -> Void
    private let lock = NSLock()
    private let reporting = NSLock()
    private var results: [Int: RowResult] = [:]
    /// The rows rendering here; `interrupt()` stops them and starts no more.
    private let processes = ProcessGroup()
    private let slurm = Slurm()

    /// A run of `plan`'s rows that tells `report` each step.
    public init(plan: BatchPlan, executable: String, options: RunOptions, jobs: Int, retries: Int, chunks: Int?,
                forwardsProgress: Bool, interruptedStatus: Int32, report: @escaping (Event) -> Void) {
        (self.plan, self.executable, self.options, self.jobs, self.retries) = (plan, executable, options, max(1, jobs), retries)
        (self.chunks, self.forwardsProgress, self.interruptedStatus, self.report) = (chunks, forwardsProgress, interruptedStatus, report)
    }

    /// Every row's result so far, by row number.
    public var rowResults: [Int: RowResult] { lock.withLock { results } }

    /// Whether `interrupt()` was called.
    public var isInterrupted: Bool { processes.isStopping }

    /// Stops the rows running here (and the cluster's job), and starts no more.
    public func interrupt() {
        processes.interruptAll()
        slurm.cancel()
    }

    /// Runs the rows here, `jobs` at a time: the number that failed or were interrupted.
    public func run() throws -> Int {
        let pending = try checkedPendingRows()
        LocalPool(jobs: jobs).run(pending, isStopping: { processes.isStopping }, notStarted: { record($0, RowResult(status: .interrupted)) }) { [self] row in
            record(row, render(row))
        }
        return failedCount()
    }

    /// Runs the rows on a Slurm cluster: every attempt is an array job of the rows still
    /// missing, so a task that died (a node down, a task cancelled) costs only its rows.
    /// Without `submitting` (`--emit`) the job scripts are only written; without `waiting`
    /// (`--no-wait`) the first attempt is submitted and left to run.
    public func run(on cluster: SlurmBatchPlan, submitting: Bool, waiting: Bool) throws -> SlurmOutcome {
        var missing = try checkedPendingRows()
        var attempt = 0
        let started = Date()
        while !missing.isEmpty, attempt <= retries, !isInterrupted {
            attempt += 1
            let job = try cluster.submit(missing, attempt: attempt, chunks: chunks, on: submitting ? slurm : nil)
            guard let job, waiting else {
                // Not run yet, not failed or interrupted: the report says so of each row.
                lock.withLock { for row in missing { results[row.number] = RowResult(status: job == nil ? .written : .submitted, attempts: attempt) } }
                return job.map { .submitted(job: $0, rows: missing.count) } ?? .written(attempt: attempt, rows: missing.count)
            }
            say(.waitingForSlurm(job: job, rows: missing.count, folder: cluster.folder))
            try slurm.waitUntilDone(job)
            missing = missing.filter { !Self.isComplete($0.output) }
        }
        let seconds = Date().timeIntervalSince(started)
        let interrupted = isInterrupted
        for row in plan.rows where lock.withLock({ results[row.number] == nil }) {
            let done = Self.isComplete(row.output)
            var result = RowResult(status: done ? .done : (interrupted ? .interrupted : .failed), seconds: done ? seconds : 0, attempts: attempt,
                                   diagnostics: cluster.diagnostics(of: row, attempts: attempt, chunks: chunks))
            if !done, !interrupted {
                result.error = RowError(kind: "slurm", message: "no output after \(attempt) attempt\(attempt == 1 ? "" : "s"); see \(cluster.folder)/logs")
            }
            record(row, result)
        }
        return .finished(failed: failedCount(), interrupted: interrupted)
    }

    /// Whether an output is there from an earlier run, whole: a media file that opens and
    /// whose packets reach the duration it states (a truncated one was skipped as done).
    public static func isComplete(_ path: String) -> Bool {
        Asset.isWhole(path)
    }

    private func failedCount() -> Int {
        lock.withLock { results.values.filter { $0.status == .failed || $0.status == .interrupted }.count }
    }

    /// The rows to render, checked: rows already done (an earlier, interrupted batch) are
    /// neither checked nor run again; the others' folders are made and their dry runs pass.
    private func checkedPendingRows() throws -> [BatchPlan.Row] {
        let pending = plan.rows.filter { row in
            guard !options.overwrite, Self.isComplete(row.output) else { return true }
            record(row, RowResult(status: .skipped))
            return false
        }
        // An output there but cut short is neither trusted nor replaced unasked.
        let broken = options.overwrite ? [] : pending.filter { FileManager.default.fileExists(atPath: $0.output) }
        if !broken.isEmpty {
            holdBack(pending, failing: Dictionary(broken.map { ($0.number, RowError(kind: "output", message: "\($0.output) is there but not whole (cut short, or not media)")) }) { first, _ in first })
            throw BatchError("\(broken.count) output\(broken.count == 1 ? " is" : "s are") there but not whole (cut short, or not media); nothing was rendered:\n  "
                             + broken.map { "row \($0.number): \($0.output): remove it, or pass --overwrite, to render it again" }.joined(separator: "\n  "))
        }
        for folder in Set(pending.map { Paths.parent(of: $0.output) }) {
            do { try Paths.makeFolders(folder) } catch { throw BatchError("\(error)") }
        }
        try check(pending)
        return pending
    }

    /// Records why nothing is rendered, for the report: each row with a problem failed with
    /// it, the others held back (said once, in the batch's error, not row by row).
    private func holdBack(_ rows: [BatchPlan.Row], failing problems: [Int: RowError]) {
        lock.withLock {
            for row in rows { results[row.number] = problems[row.number].map { RowResult(status: .failed, error: $0) } ?? RowResult(status: .held) }
        }
    }

    /// Every row's dry run (BatchCheck), all problems at once.
    private func check(_ rows: [BatchPlan.Row]) throws {
        let check = BatchCheck(executable: executable, template: plan.template, options: options,
                               processes: ProcessInfo.processInfo.activeProcessorCount)
        let problems = check.problems(of: rows, isStopping: { [processes] in processes.isStopping })
        guard problems.isEmpty || processes.isStopping else {
            holdBack(rows, failing: Dictionary(problems.map { ($0.row, RowError(kind: "check", message: $0.problem)) }) { first, _ in first })
            let lines = problems.map { "row \($0.row): \($0.problem)" }
            throw BatchError("\(problems.count) of \(rows.count) rows cannot run; nothing was rendered:\n  " + lines.joined(separator: "\n  "))
        }
    }

    /// Renders one row, again up to `retries` times; the last attempt's error.
    private func render(_ row: BatchPlan.Row) -> RowResult {
        // A row in pieces shares the cores with the rows running beside it.
        let pieces = chunks.map { ["--chunks", String($0), "--jobs", String(max(1, ProcessInfo.processInfo.activeProcessorCount / jobs))] } ?? []
        return RowResult.rendering(row.output, retries: retries, interruptedStatus: interruptedStatus, isStopping: { processes.isStopping },
                                   isWhole: Self.isComplete) {
            renderInGroup(row, extra: ["--progress", "json"] + pieces)
        }
    }

    /// Renders `row` (`moonreel run … TEMPLATE`, `extra` options first) among the batch's
    /// processes, so `interrupt()` stops it; its progress events are passed on as they come.
    /// One that could not start fails saying why.
    private func renderInGroup(_ row: BatchPlan.Row, extra: [String]) -> Subprocess.Finished {
        let run = Subprocess(executable, ["run"] + extra + options.arguments() + row.runArguments(template: plan.template))
        let forward: @Sendable (Data) -> Void = { [self] line in
            guard let event = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else { return }
            say(.progress(row, event))
        }
        do {
            return try run.run(in: processes, onStart: { say(.started(row)) }, onLine: forwardsProgress ? forward : nil)
        } catch {
            // A row `interrupt()` kept from starting is interrupted, not failed: it has no error of its own.
            return Subprocess.Finished(status: error == .interrupted ? interruptedStatus : 1 /* failed */, output: "",
                                       errors: error == .interrupted ? "" : "cannot start \(executable): \(error)")
        }
    }

    private func record(_ row: BatchPlan.Row, _ result: RowResult) {
        lock.withLock { results[row.number] = result }
        say(.ended(row, result))
    }

    /// Events reach `report` one at a time, whichever row's thread they come from.
    private func say(_ event: Event) {
        reporting.withLock { report(event) }
    }
}
