import Foundation

/// How a batch row ended.
public enum RowStatus: String, Sendable, CaseIterable {
    /// Rendered now.
    case done
    /// Its output was there, whole, from an earlier run.
    case skipped
    /// Its last attempt failed.
    case failed
    /// Stopped by Ctrl-C, or never started because of it.
    case interrupted
    /// Handed to Slurm and left to run (`--no-wait`): the same command collects it later.
    case submitted
    /// In a job script written for Slurm and not submitted (`--emit`).
    case written
    /// Not rendered because other rows cannot run (their outputs cut short, or their dry runs
    /// failed): a batch renders nothing until every row can run.
    case held
}

/// Why a row failed: the first `error` event of its run (an export's failure, with its
/// kind and the export call's line, comes before the script's own), or what the batch saw.
public struct RowError: Sendable, Equatable {
    /// The error's kind (`script` for a run that said nothing, `slurm` for a task's row
    /// that left no output).
    public var kind: String
    /// The message.
    public var message: String
    /// The script's file and line, when the error names them.
    public var file: String?
    /// The line in `file`.
    public var line: Int?

    /// An error as given.
    public init(kind: String, message: String, file: String? = nil, line: Int? = nil) {
        (self.kind, self.message, self.file, self.line) = (kind, message, file, line)
    }

    /// The error's fields as the report and `row` events carry them.
    public var json: [String: Any] {
        // An event that came without a kind goes on without one.
        var fields: [String: Any] = kind.isEmpty ? ["message": message] : ["kind": kind, "message": message]
        if let file { fields["file"] = file }
        if let line { fields["line"] = line }
        return fields
    }

    /// The error of a run that ended without a JSON error event: killed (a signal, most often
    /// the system out of memory, gives no last words), or its last line on standard error.
    public init(_ ended: Subprocess.Finished) {
        if let signal = ended.signal {
            let memory = signal == SIGKILL ? "; the system may have run out of memory: run fewer rows at once (--jobs) or lower --memory-limit" : ""
            self.init(kind: "killed", message: "moonreel run was \(ended.ending)\(memory)")
        } else {
            self.init(kind: "script", message: ended.errors.split(separator: "\n").last.map(String.init) ?? ended.ending)
        }
    }

    /// The first `error` event of a row's `--progress json` output.
    public static func first(in output: String) -> RowError? {
        ProgressEvents(output).named("error").first.map { event in
            RowError(kind: event["kind"] as? String ?? "", message: event["message"] as? String ?? "",
                     file: event["file"] as? String, line: event["line"] as? Int)
        }
    }
}

/// One `diagnostic` event of a row's run: a warning or note the export gave.
public struct RowDiagnostic: Sendable, Equatable {
    /// The event's fields but its name and schema, as they came.
    private let fields: [String: JSONValue]

    /// The diagnostic of an event's fields.
    init(event: [String: Any]) {
        fields = event.compactMapValues(JSONValue.init).filter { $0.key != "schema" && $0.key != "event" }
    }

    /// warning, note…
    public var level: String { fields["level"]?.text ?? "note" }
    /// The diagnostic's kind.
    public var kind: String { fields["kind"]?.text ?? "" }
    /// What happened.
    public var message: String { fields["message"]?.text ?? "" }
    /// The script's file, when the diagnostic names a place.
    public var file: String? { fields["file"]?.text }
    /// The line in `file`.
    public var line: Int { fields["line"]?.integer ?? 0 }

    /// "warning: script.lua:12: what happened [kind]", as the batch prints it.
    public var summary: String {
        "\(level): \(file.map { "\($0):\(line): " } ?? "")\(message) [\(kind)]"
    }

    /// The fields, for the report.
    public var json: [String: Any] { fields.mapValues(\.object) }

    /// The `diagnostic` events of a row's `--progress json` output, in order.
    public static func all(in output: String) -> [RowDiagnostic] {
        ProgressEvents(output).named("diagnostic").map(RowDiagnostic.init)
    }
}

/// What one row of a batch came to.
public struct RowResult: Sendable, Equatable {
    /// How it ended.
    public var status: RowStatus
    /// Wall-clock seconds over all its attempts.
    public var seconds: Double
    /// Runs started (1 + retries used).
    public var attempts: Int
    /// Why it failed (the last attempt's error), if it did.
    public var error: RowError?
    /// The `diagnostic` events of its last attempt, as they came.
    public var diagnostics: [RowDiagnostic]

    /// A result as given.
    public init(status: RowStatus, seconds: Double = 0, attempts: Int = 0, error: RowError? = nil, diagnostics: [RowDiagnostic] = []) {
        (self.status, self.seconds, self.attempts, self.error, self.diagnostics) = (status, seconds, attempts, error, diagnostics)
    }

    /// How many of its diagnostics are warnings.
    public var warnings: Int { diagnostics.filter { $0.level == "warning" }.count }

    /// Seconds to the millisecond, as events and reports give them.
    public var roundedSeconds: Double { (seconds * 1000).rounded() / 1000 }

    /// Whether a run's output has a `done` event for `output`: its export was committed.
    public static func reportsDone(_ output: String, writing path: String) -> Bool {
        ProgressEvents(output).named("done").contains { $0["output"] as? String == path }
    }

    /// A row rendered by `attempt` (one `moonreel run --progress json` of it), again up to
    /// `retries` times while it fails and the batch is not stopping. A run that Ctrl-C
    /// stopped (`isStopping`, or its exit status `interruptedStatus`) after its export was
    /// committed (a `done` event for `output`, and the file whole by `isWhole`) is done;
    /// otherwise the last attempt's error is kept, or its last line on standard error.
    public static func rendering(_ output: String, retries: Int, interruptedStatus: Int32, isStopping: () -> Bool,
                                 isWhole: (String) -> Bool, attempt: () -> Subprocess.Finished) -> RowResult {
        var result = RowResult(status: .failed)
        let started = Date()
        while result.attempts <= retries, !isStopping() {
            result.attempts += 1
            let ended = attempt()
            result.diagnostics = RowDiagnostic.all(in: ended.output)
            if ended.status == 0 {
                result.status = .done
                result.error = nil
                break
            }
            if isStopping() || ended.status == interruptedStatus {
                result.status = .interrupted
                // Stopped after its export was committed: the output is whole, the row is done.
                if reportsDone(ended.output, writing: output), isWhole(output) {
                    (result.status, result.error) = (.done, nil)
                    break
                }
            }
            result.error = RowError.first(in: ended.output) ?? RowError(ended)
        }
        result.seconds = Date().timeIntervalSince(started)
        return result
    }
}

/// The JSON lines of a `--progress json` run; other lines are passed over.
package struct ProgressEvents {
    let events: [[String: Any]]

    package init(_ output: String) {
        events = output.split(separator: "\n").compactMap { line in
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }
    }

    /// The events called `name`, in order.
    package func named(_ name: String) -> [[String: Any]] {
        events.filter { $0["event"] as? String == name }
    }
}

/// A JSON scalar of an event kept as it came (a diagnostic's fields vary by kind), so it
/// can cross threads and be written back unchanged.
enum JSONValue: Sendable, Equatable {
    case text(String)
    case number(JSONNumber)

    init?(_ value: Any) {
        switch value {
        case let text as String: self = .text(text)
        case let number as NSNumber: self = .number(JSONNumber(number))
        default: return nil
        }
    }

    var text: String? { if case .text(let text) = self { text } else { nil } }
    var integer: Int? { if case .number(let number) = self { number.integer } else { nil } }
    var object: Any {
        switch self {
        case .text(let text): text
        case .number(let number): number.object
        }
    }
}

/// A number of a JSON event, whole or not, as the event wrote it.
struct JSONNumber: Sendable, Equatable {
    let integer: Int?
    let double: Double

    init(_ number: NSNumber) {
        double = number.doubleValue
        // A whole number stays one: "line": 12, not 12.0.
        integer = number.doubleValue == number.doubleValue.rounded() && abs(number.doubleValue) < 1e15 ? number.intValue : nil
    }

    var object: Any { integer.map { $0 as Any } ?? double }
}
