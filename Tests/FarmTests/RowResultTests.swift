import Foundation
import MoonreelFarm
import Synchronization
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

/// Child processes and the local pool, with `/bin/sh` (and Python, for a signal) as the child.
@Suite struct SubprocessTests {
    @Test func outputErrorsAndStatusAreCaptured() throws {
        let ended = try Subprocess("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"]).run()
        #expect(ended == Subprocess.Finished(status: 3, output: "out\n", errors: "err\n"))
    }

    @Test func eachWholeLineIsHandedOnAsItComes() throws {
        let lines = Mutex<[String]>([])
        _ = try Subprocess("/bin/sh", ["-c", "printf 'one\\ntwo\\nthree'"]).run(onLine: { line in
            lines.withLock { $0.append(String(decoding: line, as: UTF8.self)) }
        })
        #expect(lines.withLock { $0 } == ["one", "two"])
    }

    @Test func aLogTakesBothStreams() throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("farm-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        var child = Subprocess("/bin/sh", ["-c", "echo out; echo err >&2"])
        child.log = log
        #expect(try child.run() == Subprocess.Finished(status: 0, output: "", errors: ""))
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "out\nerr\n")
    }

    @Test func aCommandThatCannotStartEndsAsTheShellsWould() {
        let ended = Subprocess.runCommand("moonreel-no-such-command", [])
        #expect(ended.status == 127)
        #expect(throws: Subprocess.StartFailure.self) { try Subprocess("/no/such/program", []).run() }
    }

    @Test func anInterruptedGroupStopsItsChildrenAndStartsNoMore() throws {
        let group = ProcessGroup()
        let started = DispatchSemaphore(value: 0)
        let status = Mutex<Int32?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            // A child that takes SIGINT's default whatever it inherited (the Dispatch thread
            // that starts it blocks SIGINT; moonreel, the real child, sigwaits for it), and
            // that says so before it is interrupted.
            let sleeper = Subprocess.command("python3", ["-c", "import signal, time; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                                                         + "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT]); print('ready', flush=True); time.sleep(30)"])
            let ended = try? sleeper.run(in: group, onLine: { _ in started.signal() })
            status.withLock { $0 = ended?.status }
            done.signal()
        }
        started.wait()
        group.interruptAll()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(status.withLock { $0 } == SIGINT)
        #expect(group.isStopping)
        #expect(throws: Subprocess.StartFailure.interrupted) { try Subprocess("/bin/true", []).run(in: group) }
    }

    @Test func aPoolRunsEveryItemAtMostJobsAtOnce() {
        let state = Mutex((running: 0, most: 0, done: [Int]()))
        LocalPool(jobs: 2).run(Array(1...6), isStopping: { false }) { item in
            state.withLock { $0.running += 1; $0.most = max($0.most, $0.running) }
            usleep(20_000)
            state.withLock { $0.running -= 1; $0.done.append(item) }
        }
        let final = state.withLock { $0 }
        #expect(final.most <= 2 && final.done.sorted() == Array(1...6))
    }

    @Test func aStoppedPoolHandsBackWhatItDidNotStart() {
        let stopped = Mutex(false)
        let left = Mutex<[Int]>([])
        LocalPool(jobs: 1).run(Array(1...4), isStopping: { stopped.withLock { $0 } }, notStarted: { item in left.withLock { $0.append(item) } }) { item in
            if item == 2 { stopped.withLock { $0 = true } }
        }
        #expect(left.withLock { $0 } == [3, 4])
    }
}
