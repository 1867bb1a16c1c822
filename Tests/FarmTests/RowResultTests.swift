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
        #expect(RowStatus.allCases.map(\.rawValue) == ["done", "skipped", "failed", "interrupted", "submitted", "written", "held"])
    }

    /// `rendering` with attempts that end as `runs` say, one after another.
    func render(_ runs: [Subprocess.Finished], retries: Int, stopping: Bool = false, whole: Bool = true) -> (result: RowResult, runs: Int) {
        var next = 0
        let result = RowResult.rendering("out/a.mp4", retries: retries, interruptedStatus: 130, isStopping: { stopping && next > 0 },
                                         isWhole: { _ in whole }) {
            defer { next += 1 }
            return runs[min(next, runs.count - 1)]
        }
        return (result, next)
    }

    static let failed = Subprocess.Finished(status: 1, output: #"{"event":"error","kind":"export","message":"disk full"}"#, errors: "moonreel: disk full\n")
    static let succeeded = Subprocess.Finished(status: 0, output: "", errors: "")

    @Test func aFailedRowIsRetriedUntilItSucceeds() {
        let (result, runs) = render([Self.failed, Self.succeeded], retries: 2)
        #expect(runs == 2 && result.status == .done && result.attempts == 2 && result.error == nil)
    }

    @Test func aRowThatKeepsFailingKeepsItsLastError() {
        let (result, runs) = render([Self.failed], retries: 2)
        #expect(runs == 3 && result.status == .failed && result.attempts == 3)
        #expect(result.error == RowError(kind: "export", message: "disk full"))
        let silent = render([Subprocess.Finished(status: 1, output: "", errors: "first\nmoonreel: the cause\n")], retries: 0).result
        #expect(silent.error == RowError(kind: "script", message: "moonreel: the cause"))
        #expect(render([Subprocess.Finished(status: 9, output: "", errors: "")], retries: 0).result.error?.message == "exit 9")
    }

    @Test func aRowKilledOutrightSaysSoAndNotItsLastLine() {
        let killed = Subprocess.Finished(status: 137, signal: SIGKILL, output: "", errors: "rendering 40 %\n")
        #expect(render([killed], retries: 0).result.error == RowError(kind: "killed", message: "moonreel run was killed by SIGKILL (signal 9); "
                                                                          + "the system may have run out of memory: run fewer rows at once (--jobs) or lower --memory-limit"))
        let crashed = Subprocess.Finished(status: 139, signal: SIGSEGV, output: "", errors: "")
        #expect(render([crashed], retries: 0).result.error == RowError(kind: "killed", message: "moonreel run was killed by SIGSEGV (signal 11)"))
    }

    @Test func aRowStoppedAfterItsExportWasCommittedIsDone() {
        let committed = Subprocess.Finished(status: 130, output: #"{"event":"done","output":"out/a.mp4"}"#, errors: "")
        #expect(render([committed], retries: 3).result.status == .done)
        #expect(render([committed], retries: 3, whole: false).result.status == .interrupted)
        let stopped = render([Self.failed], retries: 3, stopping: true)
        #expect(stopped.runs == 1 && stopped.result.status == .interrupted && stopped.result.error?.message == "disk full")
    }
}
