import ArgumentParser
import Foundation
import MoonreelEngine
import MoonreelFarm
import MoonreelPlatform
import MoonreelBindings
import Synchronization

struct Batch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a template once per row of a CSV or JSON file, each row in a process of its own.",
        discussion: """
            The template declares its parameters with av.parameters; each row's columns fill them by \
            name (other columns may be used in --out), and --out names each output ({column}), \
            which reaches the template as its output parameter. Every row is checked first (a dry \
            run each); all problems are reported at once. Rows whose output exists and opens are \
            skipped, so an interrupted batch goes on where it stopped. Exit 0 only if every row \
            succeeded. See docs/batch.md.
            """)
    @OptionGroup var common: CommonOptions
    @OptionGroup var parameters: ParameterOptions
    @Option(name: .customLong("out"), help: "Output of each row, from its columns: out/{id}.mp4.") var pattern: String
    @Option(help: "Rows run at once (default: the number of cores).") var jobs: Int?
    @Option(help: "Run a failed row again up to this many times.") var retry = 0
    @Option(help: "Write a JSON report of every row and the totals to this file.") var report: String?
    @Flag(help: "Run the rows as a Slurm array job (sbatch) instead of here; outputs must be on a filesystem every node shares.")
    var slurm = false
    @Option(help: "Slurm partition (default: the cluster's default).") var partition: String?
    @Option(help: "Rows each Slurm task renders, one after another.") var rowsPerTask = 1
    @Option(help: "Slurm tasks running at once (default: as many as Slurm allows).") var maxRunning: Int?
    @Option(help: "Folder for the Slurm job script, the rows and the task logs (default: moonreel-batch-TIME).") var folder: String?
    @Flag(help: "With --slurm: write the job script and rows, submit nothing.") var emit = false
    @Flag(help: "With --slurm: submit and return; run the same command again later to collect (done rows are skipped).") var noWait = false
    @Option(help: "Render each row's export in N pieces and a sound task, then join them (as moonreel run --chunks; with --slurm, every piece is a task).")
    var chunks: Int?
    @Argument(help: "The template: a Lua script that declares av.parameters.", completion: .file(extensions: ["lua"])) var template: String
    @Argument(help: "The rows: a CSV file (a header of names) or a JSON array of objects.", completion: .file()) var rows: String

    func validate() throws {
        if let jobs, !(1...256).contains(jobs) { throw ValidationError("--jobs must be 1…256, got \(jobs)") }
        guard (1...100_000).contains(rowsPerTask) else { throw ValidationError("--rows-per-task must be 1…100000, got \(rowsPerTask)") }
        if let maxRunning, maxRunning < 1 { throw ValidationError("--max-running must be at least 1, got \(maxRunning)") }
        if !slurm, partition != nil || emit || noWait || maxRunning != nil || folder != nil || rowsPerTask != 1 {
            throw ValidationError("--partition, --rows-per-task, --max-running, --folder, --emit and --no-wait go with --slurm")
        }
        guard (0...100).contains(retry) else { throw ValidationError("--retry must be 0…100, got \(retry)") }
        if let chunks, !(1...1000).contains(chunks) { throw ValidationError("--chunks must be 1…1000, got \(chunks)") }
        if chunks != nil, rowsPerTask != 1 { throw ValidationError("--rows-per-task does not go with --chunks: each Slurm task renders one piece of one row") }
        guard pattern.contains("{") else { throw ValidationError("--out must name each row's output from its columns, e.g. out/{id}.mp4") }
    }

    func run() throws {
        FFmpegLog.capture()
        do {
            // Before any row runs: a report that could not be written must not cost the batch.
            if let report { try BatchReport(schema: ProgressDisplay.schema).checkPath(report, overwrite: common.overwrite, inputs: [template, rows]) }
            let plan = try BatchPlan(template: template, declared: try Self.declaredParameters(of: template, limits: common.limits).map(\.name),
                                     rowsFile: rows, records: { try Self.records(in: rows) }, pattern: pattern, shared: try parameters.values())
            let runner = BatchRunner(plan: plan, common: common, jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount, retry: retry, chunks: chunks)
            let outcome: (failed: Int, interrupted: Bool)
            if slurm {
                let cluster = SlurmBatchPlan(executable: BatchRunner.executable, template: template, options: common.runOptions,
                                             folder: folder ?? "moonreel-batch-\(Self.timestamp())", workingFolder: FileManager.default.currentDirectoryPath,
                                             partition: partition, rowsPerTask: rowsPerTask, maxRunning: maxRunning)
                outcome = try runner.run(on: cluster, submitting: !emit, waiting: !noWait)
            } else {
                outcome = try runner.run()
            }
            if let report { try runner.writeReport(to: report, overwrite: common.overwrite, inputs: [template, rows]) }
            if outcome.interrupted { throw ExitCode(Exit.interrupted) }
            if outcome.failed > 0 { throw ExitCode(Exit.failed) }
        } catch let error as BatchError {
            printError("moonreel: batch: " + error.message)
            throw ExitCode(Exit.failed)
        } catch let error as SlurmError {
            printError("moonreel: batch: " + error.description.oneLine)
            throw ExitCode(Exit.failed)
        }
    }
}

extension Batch {
    static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        return String(format: "%04d%02d%02d-%02d%02d%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec)
    }

    /// The template's parameters (a run that stops at its av.parameters call and writes nothing).
    static func declaredParameters(of template: String, limits: ScriptLimits) throws -> [EffectCall.Parameter] {
        let declared: [EffectCall.Parameter]?
        do {
            declared = try moonreel.declaredParameters(of: template, limits: limits)
        } catch let error as ScriptError {
            throw BatchError("\(template) stopped before declaring its parameters: \(error.message)".oneLine)
        }
        guard let declared else { throw BatchError("\(template) declares no parameters (av.parameters): a batch fills them by name from the rows") }
        return declared
    }

    /// The rows as text by column name: CSV (header = names) or a JSON array of objects.
    static func records(in path: String) throws -> [[String: String]] {
        if path.lowercased().hasSuffix(".json") {
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
                throw BatchError("cannot read \(path): \(error.localizedDescription)")
            }
            guard let array = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
                throw BatchError("\(path) is not a JSON array of objects ([{\"id\": 1, …}, …])")
            }
            return try array.enumerated().map { index, object in
                try object.mapValues { value -> String in
                    switch value {
                    case let text as String: return text
                    case let number as NSNumber: return number.stringValue
                    default: throw BatchError("row \(index + 1) of \(path): values must be strings, numbers or booleans")
                    }
                }
            }
        }
        do {
            return try CSVReader.read(path: path).rows
        } catch {
            throw BatchError("\(error)".oneLine)
        }
    }
}

/// Runs a batch's rows as `moonreel run` processes, `jobs` at a time.
final class BatchRunner: @unchecked Sendable {
    let plan: BatchPlan
    let common: CommonOptions
    let jobs: Int
    let retry: Int
    private let lock = NSLock()
    private var results: [Int: RowResult] = [:]
    /// The diagnostic lines already printed (a batch says each once, not once per row).
    private var shownDiagnostics: Set<String> = []
    /// The rows rendering here; Ctrl-C interrupts them and starts no more.
    private let processes = ProcessGroup()
    let json: Bool

    /// Each row's export in this many pieces (`moonreel run --chunks`), or whole.
    let chunks: Int?

    init(plan: BatchPlan, common: CommonOptions, jobs: Int, retry: Int, chunks: Int?) {
        (self.plan, self.common, self.jobs, self.retry, self.chunks) = (plan, common, jobs, retry, chunks)
        json = common.progressStyle() == .json
    }

    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// The rows to render, checked: rows already done (an earlier, interrupted batch) are
    /// neither checked nor run again; the others' folders are made and their dry runs pass.
    private func checkedPendingRows() throws -> [BatchPlan.Row] {
        let pending = plan.rows.filter { row in
            guard !common.overwrite, Self.isComplete(row.output) else { return true }
            record(row, RowResult(status: .skipped))
            return false
        }
        // An output there but cut short is neither trusted nor replaced unasked.
        let broken = common.overwrite ? [] : pending.filter { FileManager.default.fileExists(atPath: $0.output) }
        if !broken.isEmpty {
            throw BatchError("\(broken.count) output\(broken.count == 1 ? " is" : "s are") there but not whole (cut short, or not media); nothing was rendered:\n  "
                             + broken.map { "row \($0.number): \($0.output): remove it, or pass --overwrite, to render it again" }.joined(separator: "\n  "))
        }
        for folder in Set(pending.map { Paths.parent(of: $0.output) }) {
            do { try Paths.makeFolders(folder) } catch { throw BatchError("\(error)") }
        }
        try check(pending)
        return pending
    }

    /// Runs the rows on a Slurm cluster: every attempt is an array job of the rows still
    /// missing, so a task that died (a node down, a task cancelled) costs only its rows.
    /// Without `submitting` (`--emit`) the job scripts are only written; without `waiting`
    /// (`--no-wait`) the first attempt is submitted and left to run.
    func run(on cluster: SlurmBatchPlan, submitting: Bool, waiting: Bool) throws -> (failed: Int, interrupted: Bool) {
        let slurm = Slurm()
        let signals = SignalWatcher.start { [self] in
            processes.interruptAll()
            slurm.cancel()
        }
        var missing = try checkedPendingRows()
        var attempt = 0
        let started = Date()
        while !missing.isEmpty, attempt <= retry, !signals.interrupted {
            attempt += 1
            let job = try cluster.submit(missing, attempt: attempt, chunks: chunks, on: submitting ? slurm : nil)
            guard let job, waiting else {
                if !common.quiet {
                    printError(job.map { "moonreel: batch: submitted Slurm job \($0) (\(missing.count) rows) from \(cluster.folder); run the same command again to collect" }
                               ?? (chunks == nil ? "moonreel: batch: wrote \(cluster.folder)/task-\(attempt).sh; submit it with: sbatch \(cluster.folder)/task-\(attempt).sh"
                                   : "moonreel: batch: wrote \(cluster.folder)/pieces-\(attempt).sh and join-\(attempt).sh; submit them with: "
                                   + "sbatch --dependency=afterany:$(sbatch --parsable \(cluster.folder)/pieces-\(attempt).sh) \(cluster.folder)/join-\(attempt).sh"))
                }
                return (0, false)
            }
            if !common.quiet, !json { printError("moonreel: batch: Slurm job \(job): \(missing.count) rows in \(cluster.folder)") }
            try slurm.waitUntilDone(job)
            missing = missing.filter { !Self.isComplete($0.output) }
        }
        let seconds = Date().timeIntervalSince(started)
        for row in plan.rows where results[row.number] == nil {
            let done = Self.isComplete(row.output)
            var result = RowResult(status: done ? .done : (signals.interrupted ? .interrupted : .failed), seconds: done ? seconds : 0, attempts: attempt)
            if !done, !signals.interrupted {
                result.error = RowError(kind: "slurm", message: "no output after \(attempt) attempt\(attempt == 1 ? "" : "s"); see \(cluster.folder)/logs")
            }
            record(row, result)
        }
        summarize(interrupted: signals.interrupted)
        let failed = results.values.filter { $0.status == .failed || $0.status == .interrupted }.count
        return (failed, signals.interrupted)
    }

    private func summarize(interrupted: Bool) {
        guard !common.quiet, !json else { return }
        let count = { (status: RowStatus) in self.results.values.filter { $0.status == status }.count }
        let warned = results.values.filter { $0.warnings > 0 }.count
        printError("moonreel: batch: \(count(.done)) done" + (warned > 0 ? " (\(warned) with warnings)" : "") + ", \(count(.skipped)) skipped (already there), \(count(.failed)) failed"
                   + (interrupted ? ", \(count(.interrupted)) not run (interrupted)" : ""))
    }

    func run() throws -> (failed: Int, interrupted: Bool) {
        let signals = SignalWatcher.start { [self] in processes.interruptAll() }
        let pending = try checkedPendingRows()
        LocalPool(jobs: jobs).run(pending, isStopping: { processes.isStopping }, notStarted: { record($0, RowResult(status: .interrupted)) }) { [self] row in
            record(row, render(row))
        }
        summarize(interrupted: signals.interrupted)
        let failed = results.values.filter { $0.status == .failed || $0.status == .interrupted }.count
        return (failed, signals.interrupted)
    }

    /// Every row's dry run (BatchCheck), all problems at once.
    private func check(_ rows: [BatchPlan.Row]) throws {
        let check = BatchCheck(executable: Self.executable, template: plan.template, options: common.runOptions,
                               processes: ProcessInfo.processInfo.activeProcessorCount)
        let problems = check.problems(of: rows, isStopping: { [processes] in processes.isStopping })
        guard problems.isEmpty || processes.isStopping else {
            let lines = problems.map { "row \($0.row): \($0.problem)" }
            throw BatchError("\(problems.count) of \(rows.count) rows cannot run; nothing was rendered:\n  " + lines.joined(separator: "\n  "))
        }
    }

    /// Renders one row, again up to `retry` times; the last attempt's error.
    private func render(_ row: BatchPlan.Row) -> RowResult {
        // A row in pieces shares the cores with the rows running beside it.
        let pieces = chunks.map { ["--chunks", String($0), "--jobs", String(max(1, ProcessInfo.processInfo.activeProcessorCount / jobs))] } ?? []
        return RowResult.rendering(row.output, retries: retry, interruptedStatus: Exit.interrupted, isStopping: { processes.isStopping },
                                   isWhole: Self.isComplete) {
            renderInGroup(row, extra: ["--progress", "json"] + pieces)
        }
    }

    /// Renders `row` (`moonreel run … TEMPLATE`, `extra` options first) among the batch's
    /// processes, so Ctrl-C interrupts it; under JSON progress its events are passed on as
    /// they come, with the row's number. One that could not start fails saying why.
    private func renderInGroup(_ row: BatchPlan.Row, extra: [String]) -> Subprocess.Finished {
        let run = Subprocess(Self.executable, ["run"] + extra + common.runOptions.arguments() + row.runArguments(template: plan.template))
        let forward: @Sendable (Data) -> Void = { [self] line in
            guard var event = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else { return }
            event["row"] = row.number
            emit(event)
        }
        do {
            return try run.run(in: processes, onStart: { [self] in
                if json { emit(["event": "row", "row": row.number, "status": "started", "output": row.output]) }
            }, onLine: json ? forward : nil)
        } catch {
            // A row Ctrl-C kept from starting is interrupted, not failed: it has no error of its own.
            return Subprocess.Finished(status: error == .interrupted ? Exit.interrupted : Exit.failed, output: "",
                                       errors: error == .interrupted ? "" : "cannot start \(Self.executable): \(error)")
        }
    }

    /// Whether an output is there from an earlier run, whole: a media file that opens and
    /// whose packets reach the duration it states (a truncated one was skipped as done).
    static func isComplete(_ path: String) -> Bool {
        Asset.isWhole(path)
    }

    func record(_ row: BatchPlan.Row, _ result: RowResult) {
        lock.withLock { results[row.number] = result }
        if json {
            var event: [String: Any] = ["event": "row", "row": row.number, "status": result.status.rawValue, "output": row.output,
                                        "seconds": result.roundedSeconds]
            if let error = result.error { event["error"] = error.json }
            emit(event)
        } else if !common.quiet {
            let detail = result.error.map { ": " + $0.message } ?? ""
            let warned = result.warnings > 0 ? " (\(result.warnings) warning\(result.warnings == 1 ? "" : "s"))" : ""
            printError("moonreel: batch: row \(row.number) \(result.status.rawValue)\(warned) \(row.output)\(detail)".oneLine)
            // Each distinct diagnostic once, with the first row that had it.
            for diagnostic in result.diagnostics {
                let line = diagnostic.summary
                guard lock.withLock({ shownDiagnostics.insert(line).inserted }) else { continue }
                printError("moonreel: batch: row \(row.number): \(line)".oneLine)
            }
        }
    }

    private func emit(_ event: [String: Any]) {
        var object = event
        object["schema"] = ProgressDisplay.schema
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        lock.withLock { _ = writeOut(String(decoding: data, as: UTF8.self) + "\n") }
    }

    /// The JSON report: each row and the totals.
    func writeReport(to path: String, overwrite: Bool, inputs: [String]) throws {
        try BatchReport(schema: ProgressDisplay.schema).write(to: path, rows: plan.rows, results: lock.withLock { results }, overwrite: overwrite, inputs: inputs)
    }
}

/// The batch's check of many rows in one process (`moonreel batch` starts one per core):
/// each row's dry run in a fresh host, as `moonreel run --dry-run --rough-estimate` does it,
/// and one JSON line per row: `{"row": N}` or `{"row": N, "error": "…"}`. Not for people.
struct CheckRows: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "check-rows", abstract: "Check a batch's rows in one process (used by moonreel batch).",
                                                    shouldDisplay: false)
    @OptionGroup var common: CommonOptions
    @Argument(help: "The template.") var template: String
    @Argument(help: "A JSON array of {\"row\": N, \"values\": {NAME: VALUE}}.") var rows: String

    func run() throws {
        FFmpegLog.capture()
        let entries = (try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: rows)))) as? [[String: Any]] ?? []
        for entry in entries {
            guard let row = entry["row"] as? Int, let values = entry["values"] as? [String: String] else { continue }
            var answer: [String: Any] = ["row": row]
            if let problem = check(values) { answer["error"] = problem }
            guard let line = try? JSONSerialization.data(withJSONObject: answer) else { continue }
            print(String(decoding: line, as: UTF8.self))
            fflush(nil)
        }
    }

    /// The row's problem, one line, or nil when its dry run passes.
    private func check(_ values: [String: String]) -> String? {
        do {
            let host = try MoonreelHost(limits: common.limits, effectSearchPath: .fromEnvironment())
            host.overwriteOutputs = common.overwrite
            host.strict = common.strict
            host.api.policy.dryRun = true
            host.api.policy.dryRunSamplesSize = false
            host.scripts.parameterValues = values
            host.onPrint = { _ in }
            _ = try host.run(file: template, arguments: [])
            return nil
        } catch let error as ScriptError {
            return error.message.oneLine
        } catch {
            return "\(error)".oneLine
        }
    }
}
