import Foundation
import MoonreelPlatform
import Synchronization

/// Every row's dry run before a batch renders anything, all problems at once: the rows
/// shared among one `moonreel check-rows` process per core, each checking its rows one
/// after another in fresh hosts (a process per row took ~2.5 h for 100k rows before the
/// first render). Rows a check process could not answer for (it died) get a
/// `moonreel run --dry-run` each.
public struct BatchCheck: Sendable {
    /// The `moonreel` that checks.
    public let executable: String
    /// The template every row runs.
    public let template: String
    /// The options every row's run gets.
    public let options: RunOptions
    /// Check processes at once (the cores).
    public let processes: Int

    /// A check as given.
    public init(executable: String, template: String, options: RunOptions, processes: Int) {
        (self.executable, self.template, self.options, self.processes) = (executable, template, options, processes)
    }

    /// The rows shared among the check processes, in order and about equally; none empty.
    public func shares(_ rows: [BatchPlan.Row]) -> [[BatchPlan.Row]] {
        let count = max(1, min(processes, rows.count))
        let share = (rows.count + count - 1) / count
        return (0..<count).map { index in Array(rows[min(index * share, rows.count)..<min((index + 1) * share, rows.count)]) }.filter { !$0.isEmpty }
    }

    /// Each row's problem (one line), in row order; none when every dry run passes. Once
    /// `isStopping` says so (Ctrl-C), no more checks start.
    public func problems(of rows: [BatchPlan.Row], isStopping: @escaping @Sendable () -> Bool) -> [(row: Int, problem: String)] {
        let found = Mutex<[(row: Int, problem: String)]>([])
        let shares = shares(rows)
        DispatchQueue.concurrentPerform(iterations: shares.count) { index in
            let mine = shares[index]
            guard !isStopping() else { return }
            let (answered, problems) = checkInOneProcess(mine)
            found.withLock { $0 += problems }
            for row in mine where !answered.contains(row.number) && !isStopping() {
                if let problem = checkAlone(row) { found.withLock { $0.append((row.number, problem)) } }
            }
        }
        return found.withLock { $0 }.sorted { $0.row < $1.row }
    }

    /// What a `check-rows` process said: the rows it answered for, and the problems of
    /// those that cannot run. Lines that are not its answers are passed over.
    public static func answers(in output: String) -> (answered: Set<Int>, problems: [(row: Int, problem: String)]) {
        var answered = Set<Int>(), problems: [(row: Int, problem: String)] = []
        for line in output.split(separator: "\n") {
            guard let entry = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let row = entry["row"] as? Int else { continue }
            answered.insert(row)
            if let error = entry["error"] as? String { problems.append((row, error)) }
        }
        return (answered, problems)
    }

    /// The rows' dry runs in one `moonreel check-rows` process, handed the rows in a file.
    private func checkInOneProcess(_ rows: [BatchPlan.Row]) -> (answered: Set<Int>, problems: [(row: Int, problem: String)]) {
        let list = rows.map { ["row": $0.number, "values": $0.values] as [String: Any] }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("moonreel-rows-\(UUID().uuidString).json").path
        guard let data = try? JSONSerialization.data(withJSONObject: list),
              (try? Paths.writeFile(String(decoding: data, as: UTF8.self), to: file, replacing: false)) != nil else { return ([], []) }
        defer { try? FileManager.default.removeItem(atPath: file) }
        var checker = Subprocess(executable, ["check-rows"] + options.arguments() + ["--", template, file])
        checker.errors = .discard
        guard let output = try? checker.run().output else { return ([], []) }
        return Self.answers(in: output)
    }

    /// One row's dry run in a process of its own: its problem, or nil when it passes.
    private func checkAlone(_ row: BatchPlan.Row) -> String? {
        let run = Subprocess(executable, ["run", "--dry-run", "--rough-estimate", "--quiet"] + options.arguments() + row.runArguments(template: template))
        let ended: Subprocess.Finished
        do { ended = try run.run() } catch { return "cannot start \(executable): \(error)" }
        guard ended.status != 0 else { return nil }
        guard ended.signal == nil else { return "its dry run was \(ended.ending)" }
        return ended.errors.split(separator: "\n").last.map(String.init) ?? "failed (\(ended.ending))"
    }
}
