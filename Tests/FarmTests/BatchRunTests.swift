import Foundation
import MoonreelFarm
import Synchronization
import Testing

/// A batch run's steps and results, with a shell script standing in for `moonreel`: it
/// answers no `check-rows` (so each row's dry run runs alone and passes), and a row's run
/// prints one progress event, then fails when its `take` is `bad` (saying why on standard
/// error, or as a JSON error event when it is `typed`).
@Suite struct BatchRunTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("farm-run-\(UUID().uuidString)").path

    func executable() throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/moonreel"
        try """
            #!/bin/sh
            [ "$1" = check-rows ] && exit 0
            for word in "$@"; do
              [ "$word" = --dry-run ] && exit 0
              case "$word" in take=bad) bad=1 ;; take=typed) typed=1 ;; esac
            done
            echo '{"event":"progress","fraction":0.5}'
            [ -n "$typed" ] && { echo '{"event":"error","kind":"decode","message":"clip.mp4 is cut short"}'; exit 1; }
            [ -n "$bad" ] && { echo "moonreel: it broke" >&2; exit 1; }
            exit 0
            """.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    func plan(_ takes: [String]) throws -> BatchPlan {
        try BatchPlan(template: "t.lua", declared: ["take", "output"], rowsFile: "rows.csv",
                      records: { takes.enumerated().map { ["id": String($0.offset + 1), "take": $0.element] } },
                      pattern: folder + "/out/{id}.mp4", shared: [:])
    }

    func run(_ takes: [String], retries: Int = 0) throws -> (failed: Int, results: [Int: RowResult], events: [String]) {
        let events = Mutex<[String]>([])
        let batch = try self.batch(takes, retries: retries) { line in events.withLock { $0.append(line) } }
        let failed = try batch.run()
        return (failed, batch.rowResults, events.withLock { $0 })
    }

    /// A batch of `takes` run by the stand-in script, saying each event as a line to `say`.
    func batch(_ takes: [String], retries: Int = 0, say: @escaping @Sendable (String) -> Void = { _ in }) throws -> BatchRun {
        BatchRun(plan: try plan(takes), executable: try executable(), options: RunOptions(memoryLimit: 512, timeLimit: nil, overwrite: false, strict: false),
                 jobs: 2, retries: retries, chunks: nil, forwardsProgress: true, interruptedStatus: 130) { event in
            let line: String
            switch event {
            case .started(let row): line = "started \(row.number)"
            case .progress(let row, let fields): line = "progress \(row.number) \(fields["fraction"] ?? "")"
            case .ended(let row, let result): line = "ended \(row.number) \(result.status.rawValue)"
            case .waitingForSlurm(let job, _, _): line = "slurm \(job)"
            }
            say(line)
        }
    }

    @Test func everyRowRunsAndEachStepIsReportedInItsRowsOrder() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (failed, results, events) = try run(["a", "bad", "c"])
        #expect(failed == 1)
        #expect(results.mapValues(\.status) == [1: .done, 2: .failed, 3: .done])
        #expect(results[2]?.error == RowError(kind: "script", message: "moonreel: it broke"))
        for row in 1...3 {
            let mine = events.filter { $0.split(separator: " ")[1] == "\(row)" }.map { $0.split(separator: " ")[0] }
            #expect(mine == ["started", "progress", "ended"], "row \(row): \(events)")
        }
    }

    @Test func aFailedRowRunsAgainAndKeepsItsTypedError() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (failed, results, events) = try run(["typed"], retries: 2)
        #expect(failed == 1)
        #expect(results[1]?.attempts == 3)
        #expect(results[1]?.error == RowError(kind: "decode", message: "clip.mp4 is cut short"))
        #expect(events.filter { $0.hasPrefix("started") }.count == 3)
    }

    @Test func anOutputThereButNotWholeStopsTheBatchBeforeAnyRowRuns() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/out", withIntermediateDirectories: true)
        try "not a video".write(toFile: folder + "/out/2.mp4", atomically: true, encoding: .utf8)
        let batch = try batch(["a", "b"])
        #expect(throws: BatchError("1 output is there but not whole (cut short, or not media); nothing was rendered:\n  "
                                   + "row 2: \(folder)/out/2.mp4: remove it, or pass --overwrite, to render it again")) {
            _ = try batch.run()
        }
        // For the report: the row in the way failed, the other was held back.
        #expect(batch.rowResults.mapValues(\.status) == [1: RowStatus.held, 2: .failed])
        #expect(batch.rowResults[2]?.error?.kind == "output")
    }
}
