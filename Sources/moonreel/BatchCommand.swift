import ArgumentParser
import Foundation
import MoonreelEngine
import MoonreelFarm
import MoonreelPlatform
import MoonreelBindings
import MoonreelScriptHost
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
        if slurm, jobs != nil {
            throw ValidationError("--jobs counts rows run on this machine; with --slurm, give --max-running to limit the Slurm tasks running at once")
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
            let declared = try Self.declaredParameters(of: template, limits: common.limits)
            let plan = try BatchPlan(template: template, declared: declared.map(\.name), rowsFile: rows, records: { try Self.records(in: rows) },
                                     pattern: pattern, shared: try parameters.values(), defaults: Self.defaults(of: declared),
                                     required: Set(declared.filter(\.required).map(\.name)),
                                     suggest: { NameSuggestion.closest(to: $0, among: $1) })
            let printer = BatchPrinter(common: common)
            printer.say(plan.diagnostics)
            let batch = BatchRun(plan: plan, executable: Self.executable, options: common.runOptions, jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount,
                                 retries: retry, chunks: chunks, forwardsProgress: printer.json, interruptedStatus: Exit.interrupted, report: printer.say)
            let signals = SignalWatcher.start { batch.interrupt() }
            let writeReport = { [self] (results: [Int: RowResult]) in
                if let report {
                    try BatchReport(schema: ProgressDisplay.schema).write(to: report, rows: plan.rows, results: results, diagnostics: plan.diagnostics,
                                                                          overwrite: common.overwrite, inputs: [template, rows])
                }
            }
            if common.strict, let first = plan.diagnostics.first(where: { $0.level == "warning" }) {
                // Every row held back, and the report says why.
                try writeReport(Dictionary(uniqueKeysWithValues: plan.rows.map { ($0.number, RowResult(status: .held)) }))
                throw BatchError("\(first.summary) (--strict: nothing was run)")
            }
            var failed = 0
            do {
                if slurm {
                    let cluster = SlurmBatchPlan(executable: Self.executable, template: template, options: common.runOptions,
                                                 folder: folder ?? "moonreel-batch-\(Self.timestamp())", workingFolder: FileManager.default.currentDirectoryPath,
                                                 partition: partition, rowsPerTask: rowsPerTask, maxRunning: maxRunning)
                    switch try batch.run(on: cluster, submitting: !emit, waiting: !noWait) {
                    case .finished(let count, _):
                        failed = count
                        printer.summarize(batch.rowResults, interrupted: signals.interrupted)
                    case .submitted(let job, let rows):
                        if !common.quiet { printError("moonreel: batch: submitted Slurm job \(job) (\(rows) rows) from \(cluster.folder); run the same command again to collect") }
                    case .written(let attempt, _):
                        if !common.quiet { printError(submitCommand(folder: cluster.folder, attempt: attempt)) }
                    }
                } else {
                    failed = try batch.run()
                    printer.summarize(batch.rowResults, interrupted: signals.interrupted)
                }
            } catch let error as BatchError where !batch.rowResults.isEmpty {
                // Rows that cannot run stop the batch before it renders: the report says which, and why.
                do { try writeReport(batch.rowResults) } catch { printError("moonreel: batch: \(error)".oneLine) }
                throw error
            }
            try writeReport(batch.rowResults)
            if signals.interrupted { throw ExitCode(Exit.interrupted) }
            if failed > 0 { throw ExitCode(Exit.failed) }
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
    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// How to submit the job scripts `--emit` wrote.
    func submitCommand(folder: String, attempt: Int) -> String {
        chunks == nil ? "moonreel: batch: wrote \(folder)/task-\(attempt).sh; submit it with: sbatch \(folder)/task-\(attempt).sh"
            : "moonreel: batch: wrote \(folder)/pieces-\(attempt).sh and join-\(attempt).sh; submit them with: "
            + "sbatch --dependency=afterany:$(sbatch --parsable \(folder)/pieces-\(attempt).sh) \(folder)/join-\(attempt).sh"
    }

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

    /// Each declared default as a message shows it: "Untitled" quoted, 1 as written.
    static func defaults(of parameters: [EffectCall.Parameter]) -> [String: String] {
        parameters.reduce(into: [:]) { defaults, parameter in
            switch parameter.defaultValue {
            case .string(let text): defaults[parameter.name] = text.quotedForMessage(limit: 60)
            case .integer(let value): defaults[parameter.name] = String(value)
            case .number(let value): defaults[parameter.name] = shortNumber(value)
            case .bool(let value): defaults[parameter.name] = String(value)
            case .array, .table: defaults[parameter.name] = "a table"
            case .nil, nil: break
            }
        }
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

/// Says a batch's steps: a line for people on standard error per row (each distinct
/// diagnostic once, with the first row that had it), or JSON events on standard output.
final class BatchPrinter {
    let common: CommonOptions
    let json: Bool
    /// The diagnostic lines already printed (a batch says each once, not once per row).
    private var shownDiagnostics: Set<String> = []

    init(common: CommonOptions) {
        self.common = common
        json = common.progressStyle() == .json
    }

    /// Says `event`; BatchRun hands events over one at a time.
    func say(_ event: BatchRun.Event) {
        switch event {
        case .started(let row):
            if json { emit(["event": "row", "row": row.number, "status": "started", "output": row.output]) }
        case .progress(let row, var event):
            event["row"] = row.number
            emit(event)
        case .ended(let row, let result):
            ended(row, result)
        case .waitingForSlurm(let job, let rows, let folder):
            if !common.quiet, !json { printError("moonreel: batch: Slurm job \(job): \(rows) rows in \(folder)") }
        }
    }

    private func ended(_ row: BatchPlan.Row, _ result: RowResult) {
        if json {
            var event: [String: Any] = ["event": "row", "row": row.number, "status": result.status.rawValue, "output": row.output,
                                        "seconds": result.roundedSeconds]
            if let error = result.error { event["error"] = error.json }
            emit(event)
        } else if !common.quiet {
            let detail = result.error.map { ": " + $0.message } ?? ""
            let warned = result.warnings > 0 ? " (\(result.warnings) warning\(result.warnings == 1 ? "" : "s"))" : ""
            printError("moonreel: batch: row \(row.number) \(result.status.rawValue)\(warned) \(row.output)\(detail)".oneLine)
            for diagnostic in result.diagnostics where shownDiagnostics.insert(diagnostic.summary).inserted {
                printError("moonreel: batch: row \(row.number): \(diagnostic.summary)".oneLine)
            }
        }
    }

    /// What the batch as a whole leaves out, before any row runs.
    func say(_ diagnostics: [RowDiagnostic]) {
        for diagnostic in diagnostics {
            if json {
                emit(diagnostic.json.merging(["event": "diagnostic"]) { _, new in new })
            } else if !common.quiet {
                printError("moonreel: batch: \(diagnostic.summary)".oneLine)
            }
        }
    }

    /// The totals, for people.
    func summarize(_ results: [Int: RowResult], interrupted: Bool) {
        guard !common.quiet, !json else { return }
        let count = { (status: RowStatus) in results.values.filter { $0.status == status }.count }
        let warned = results.values.filter { $0.warnings > 0 }.count
        printError("moonreel: batch: \(count(.done)) done" + (warned > 0 ? " (\(warned) with warnings)" : "") + ", \(count(.skipped)) skipped (already there), \(count(.failed)) failed"
                   + (interrupted ? ", \(count(.interrupted)) not run (interrupted)" : ""))
    }

    private func emit(_ event: [String: Any]) {
        var object = event
        object["schema"] = ProgressDisplay.schema
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        _ = writeOut(String(decoding: data, as: UTF8.self) + "\n")
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
