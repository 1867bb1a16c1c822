import Foundation
import MoonreelEngine
import MoonreelPlatform

/// A batch's JSON report (`--report`): every row with how it ended, and the totals. Its
/// path follows the output rule, and a report an earlier run wrote may be replaced, since
/// running the same command again is how a batch resumes.
public struct BatchReport: Sendable {
    /// The progress events' schema, which the report carries too.
    public let schema: Int

    /// Reports of `schema`.
    public init(schema: Int) { self.schema = schema }

    /// The report's text: each row (a row with no result was not run: interrupted), then
    /// the totals by status and of warnings, and what the batch as a whole left out.
    public func text(rows: [BatchPlan.Row], results: [Int: RowResult], diagnostics: [RowDiagnostic] = []) throws -> String {
        let entries = rows.map { row -> [String: Any] in
            let result = results[row.number] ?? RowResult(status: .interrupted)
            var entry: [String: Any] = ["row": row.number, "status": result.status.rawValue, "output": row.output,
                                        "seconds": result.roundedSeconds, "attempts": result.attempts]
            entry["error"] = result.error?.json ?? NSNull()
            entry["diagnostics"] = result.diagnostics.map(\.json)
            return entry
        }
        var totals: [String: Any] = ["rows": rows.count]
        totals["warnings"] = results.values.reduce(0) { $0 + $1.warnings }
        totals["rowsWithWarnings"] = results.values.filter { $0.warnings > 0 }.count
        for status in RowStatus.allCases {
            totals[status.rawValue] = results.values.filter { $0.status == status }.count
        }
        let data = try JSONSerialization.data(withJSONObject: ["schema": schema, "rows": entries, "totals": totals,
                                                               "diagnostics": diagnostics.map(\.json)],
                                              options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// Writes the report whole (an exclusive temporary file beside it, renamed into place),
    /// and only where `checkPath` allows.
    public func write(to path: String, rows: [BatchPlan.Row], results: [Int: RowResult], diagnostics: [RowDiagnostic] = [],
                      overwrite: Bool, inputs: [String]) throws {
        let text = try text(rows: rows, results: results, diagnostics: diagnostics)
        try checkPath(path, overwrite: overwrite, inputs: inputs)
        do {
            try Paths.writeFile(text, to: path, replacing: true)
        } catch {
            throw BatchError("cannot write the report: \(error)")
        }
    }

    /// The report's path follows the output rule: never an input or anything but a regular
    /// file, and an existing file only with `overwrite` — or when it is a report an earlier
    /// run of a batch wrote (its schema, rows and totals).
    public func checkPath(_ path: String, overwrite: Bool, inputs: [String]) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        let shown = path.quotedForMessage(limit: 200)
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw BatchError("report \(shown) exists and is not a regular file (a link, a folder or a device); choose another name")
        }
        for input in inputs {
            var inputInfo = stat()
            if stat(input, &inputInfo) == 0, inputInfo.st_dev == info.st_dev, inputInfo.st_ino == info.st_ino {
                throw BatchError("report \(shown) is the input \(input.quotedForMessage()); choose another name")
            }
        }
        guard overwrite || isReport(at: path) else {
            throw BatchError("report \(shown) already exists and is not a batch report; choose another name, or pass --overwrite to replace it (and render every row again)")
        }
    }

    /// Whether the file at `path` is a report of this schema.
    public func isReport(at path: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return false }
        return object["schema"] as? Int == schema && object["rows"] is [Any] && object["totals"] is [String: Any]
    }
}
