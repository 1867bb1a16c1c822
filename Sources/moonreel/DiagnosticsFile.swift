import Foundation
import MoonreelEngine
import MoonreelFarm
import MoonreelPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Where a task process (a chunked render's piece or sound, a Slurm batch row) leaves its
/// diagnostics for the command that started it, whose user would otherwise never see them:
/// each new one as a `diagnostic` event line, as `--progress json` writes it. Lines are
/// appended: a task run again (a piece kept from an earlier run, which renders nothing)
/// keeps what its first run said.
struct DiagnosticsFile {
    let path: String

    func append(_ diagnostic: Diagnostic) {
        // A batch's tasks on Slurm are given a chunk folder no run has made yet.
        try? Paths.makeFolders(Paths.parent(of: path))
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            // Said in the task's own log, which the run keeps when the task fails.
            printError("moonreel: cannot keep this diagnostic for the run in \(path.quotedForMessage(limit: 200)): \(String(cString: strerror(errno)))")
            return
        }
        defer { close(descriptor) }
        // One write of a whole line: lines of tasks sharing a file do not interleave.
        _ = writeOut(ProgressDisplay.eventLine(diagnostic), to: descriptor)
    }

    /// The diagnostics in the file, in order (none if there is no file).
    func read() -> [Diagnostic] {
        ProgressEvents((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").named("diagnostic").compactMap(Diagnostic.init(event:))
    }
}

extension Diagnostic {
    /// The diagnostic of a `diagnostic` event's fields, as `ProgressDisplay.fields` wrote them;
    /// nil for an unknown kind or level.
    init?(event: [String: Any]) {
        guard let kind = (event["kind"] as? String).flatMap(Kind.init(rawValue:)),
              let level = (event["level"] as? String).flatMap(Level.init(rawValue:)), let message = event["message"] as? String else { return nil }
        let place = { (file: String, line: String) in
            (event[file] as? String).flatMap { file in (event[line] as? Int).map { SourceLine(file: file, line: $0) } }
        }
        self.init(kind, level, message, remedy: event["remedy"] as? String, origin: place("file", "line"),
                  dataLine: place("dataFile", "dataLine"), time: event["time"] as? Double)
    }
}
