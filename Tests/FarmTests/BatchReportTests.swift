import Foundation
import MoonreelFarm
import Testing

/// The batch's JSON report: what it says of each row and in total, and where it may be
/// written.
@Suite struct BatchReportTests {
    let folder: String
    let report = BatchReport(schema: 2)

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("farm-report-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    static let rows = (1...3).map { BatchPlan.Row(number: $0, output: "out/\($0).mp4", values: ["output": "out/\($0).mp4"]) }

    @Test func eachRowAndTheTotalsAreSaid() throws {
        let warning = RowDiagnostic.all(in: #"{"event":"diagnostic","kind":"textFit","level":"warning","message":"cut","schema":2}"#)
        let results = [
            1: RowResult(status: .done, seconds: 1.0004, attempts: 1, diagnostics: warning),
            2: RowResult(status: .failed, seconds: 0.5, attempts: 2, error: RowError(kind: "export", message: "disk full")),
        ]
        let text = try report.text(rows: Self.rows, results: results)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let totals = try #require(object["totals"] as? [String: Int])
        #expect(totals == ["rows": 3, "done": 1, "skipped": 0, "failed": 1, "interrupted": 0, "submitted": 0, "written": 0, "held": 0, "warnings": 1, "rowsWithWarnings": 1])
        let entries = try #require(object["rows"] as? [[String: Any]])
        #expect(entries.map { $0["status"] as? String } == ["done", "failed", "interrupted"])
        #expect(entries[0]["seconds"] as? Double == 1.0 && entries[1]["attempts"] as? Int == 2)
        #expect((entries[1]["error"] as? [String: String]) == ["kind": "export", "message": "disk full"])
        #expect(entries[0]["error"] is NSNull && (entries[0]["diagnostics"] as? [Any])?.count == 1)
    }

    @Test func anEarlierReportIsReplacedButNoOtherFile() throws {
        let path = folder + "/report.json"
        try report.write(to: path, rows: Self.rows, results: [:], overwrite: false, inputs: [])
        #expect(report.isReport(at: path))
        #expect(throws: Never.self) { try report.write(to: path, rows: Self.rows, results: [:], overwrite: false, inputs: []) }
        let notes = folder + "/notes.json"
        try "{\"mine\": true}".write(toFile: notes, atomically: true, encoding: .utf8)
        #expect(throws: BatchError.self) { try report.checkPath(notes, overwrite: false, inputs: []) }
        #expect(throws: Never.self) { try report.checkPath(notes, overwrite: true, inputs: []) }
        #expect(!BatchReport(schema: 3).isReport(at: path))
    }

    @Test func neitherAnInputNorALinkNorAFolderIsTaken() throws {
        let rows = folder + "/rows.csv"
        try "id\n1\n".write(toFile: rows, atomically: true, encoding: .utf8)
        let input = #expect(throws: BatchError.self) { try report.checkPath(rows, overwrite: true, inputs: [rows]) }
        #expect(input?.message.hasPrefix("report \"\(rows)\" is the input ") == true)
        try FileManager.default.createSymbolicLink(atPath: folder + "/link.json", withDestinationPath: rows)
        #expect(throws: BatchError.self) { try report.checkPath(folder + "/link.json", overwrite: true, inputs: []) }
        #expect(throws: BatchError.self) { try report.checkPath(folder, overwrite: true, inputs: []) }
        #expect(throws: Never.self) { try report.checkPath(folder + "/new.json", overwrite: false, inputs: [rows]) }
    }
}
