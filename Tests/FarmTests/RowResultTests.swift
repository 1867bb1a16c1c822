import Foundation
import MoonreelFarm
import Testing

/// A row's outcome read from its run's `--progress json` lines, and written back as the
/// report and `row` events give it.
@Suite struct RowResultTests {
    static let output = """
        moonreel: a line that is not JSON
        {"event":"progress","fraction":0.5,"schema":2}
        {"event":"diagnostic","kind":"textFit","level":"warning","message":"text cut to fit","file":"t.lua","line":12,"time":1.5,"schema":2}
        {"event":"diagnostic","kind":"audio","level":"note","message":"no sound","schema":2}
        {"event":"error","kind":"export","message":"disk full","file":"t.lua","line":30,"extra":"dropped","schema":2}
        {"event":"error","kind":"script","message":"later","schema":2}
        {"event":"done","output":"out/a.mp4","schema":2}
        """

    @Test func theFirstErrorEventIsTheCause() throws {
        let error = try #require(RowError.first(in: Self.output))
        #expect(error == RowError(kind: "export", message: "disk full", file: "t.lua", line: 30))
        #expect(RowError.first(in: "nothing\n{}") == nil)
    }

    @Test func anErrorWithoutAPlaceHasNoFileOrLineField() {
        let fields = RowError(kind: "slurm", message: "no output after 2 attempts").json
        #expect(Set(fields.keys) == ["kind", "message"])
    }

    @Test func diagnosticsKeepTheirFieldsAndCountWarnings() throws {
        let diagnostics = RowDiagnostic.all(in: Self.output)
        #expect(diagnostics.map(\.summary) == ["warning: t.lua:12: text cut to fit [textFit]", "note: no sound [audio]"])
        let result = RowResult(status: .done, diagnostics: diagnostics)
        #expect(result.warnings == 1)
        let first = try #require(diagnostics.first).json
        #expect(Set(first.keys) == ["kind", "level", "message", "file", "line", "time"])
        let written = String(decoding: try JSONSerialization.data(withJSONObject: first, options: [.sortedKeys]), as: UTF8.self)
        #expect(written == #"{"file":"t.lua","kind":"textFit","level":"warning","line":12,"message":"text cut to fit","time":1.5}"#)
    }

    @Test func aDoneEventSaysWhichOutputWasCommitted() {
        #expect(RowResult.reportsDone(Self.output, writing: "out/a.mp4"))
        #expect(!RowResult.reportsDone(Self.output, writing: "out/b.mp4"))
    }

    @Test func secondsAreGivenToTheMillisecond() {
        #expect(RowResult(status: .done, seconds: 1.23456).roundedSeconds == 1.235)
    }

    @Test func statusesAreNamedAsTheReportNamesThem() {
        #expect(RowStatus.allCases.map(\.rawValue) == ["done", "skipped", "failed", "interrupted"])
    }
}
