import ArgumentParser
import MoonreelEngine
import MoonreelScriptHost
import MoonreelBindings
#if canImport(Glibc)
import Glibc
#endif

enum ProgressStyle: String, ExpressibleByArgument, CaseIterable {
    case bar, json, none
}

/// Shows how exports go: a bar on standard error for people, or JSON lines on standard
/// output for programs (then standard output carries nothing else: the script's `print`
/// goes to standard error). The JSON schema (version 2) is in README.md.
final class ProgressDisplay {
    /// 2: diagnostics are `diagnostic` events with kind and level (1 had `note` lines).
    static let schema = 2
    let style: ProgressStyle
    private var started = 0.0
    private var lastDraw = 0.0
    private var drawnBar = false
    /// Set when standard output was closed under the JSON lines (a reader that quit early).
    private(set) var outputClosed = false
    /// Where the JSON lines go: standard output as it was when the run began.
    private var jsonOutput = STDOUT_FILENO

    init(style: ProgressStyle) { self.style = style }

    /// Receives the host's export and script events, and routes the script's `print`
    /// around the bar (or to standard error under JSON, where standard output carries
    /// nothing but the JSON lines: see `reserveStandardOutput`).
    func attach(to host: MoonreelHost) {
        host.api.policy.exportEvents = { [unowned self] event in handle(event) }
        host.api.policy.scriptEvents = { [unowned self] event in
            emit([("event", "\"script\""), ("name", jsonString(event.name))] + event.fields.map { ($0.0, json($0.1)) })
        }
        guard style != .none else { return }
        if style == .json { reserveStandardOutput() }
        host.onPrint = { [unowned self] line in
            if style == .json {
                printError(line)
            } else {
                endLine()
                _ = writeOut(line + "\n")
            }
        }
    }

    /// Under JSON, standard output is for the JSON lines alone: whatever else writes to it
    /// (a script's `io.write`, a program it runs, a library) goes to standard error, and
    /// the lines go to a descriptor of their own onto the original standard output.
    private func reserveStandardOutput() {
        fflush(nil)
        let reserved = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)
        guard reserved >= 0, dup2(STDERR_FILENO, STDOUT_FILENO) >= 0 else { return }
        jsonOutput = reserved
    }

    /// Each diagnostic once, in order; repeats are counted (`reportRepeats`).
    private let diagnostics = DiagnosticLog()
    /// No diagnostic lines on standard error (`--quiet`); JSON events are still written.
    var quiet = false

    /// A diagnostic the first time it comes: one line on standard error, and under JSON a
    /// `diagnostic` event with its fields; a repeat is only counted. Whether it was new.
    @discardableResult
    func report(_ diagnostic: Diagnostic) -> Bool {
        guard diagnostics.report(diagnostic) else { return false }
        if !quiet {
            endLine()
            printError(Self.line(diagnostic))
        }
        emit(Self.fields(diagnostic))
        return true
    }

    /// Counts `diagnostic` as said already (by another process), so `report` passes over it.
    func markSaid(_ diagnostic: Diagnostic) {
        diagnostics.report(diagnostic)
    }

    /// The fields of a `diagnostic` event (values already JSON).
    static func fields(_ diagnostic: Diagnostic) -> [(String, String)] {
        var fields = [("event", "\"diagnostic\""), ("kind", jsonString(diagnostic.kind.rawValue)), ("level", jsonString(diagnostic.level.rawValue)),
                      ("message", jsonString(diagnostic.message))]
        if let remedy = diagnostic.remedy { fields.append(("remedy", jsonString(remedy))) }
        if let origin = diagnostic.origin { fields += [("file", jsonString(origin.file)), ("line", "\(origin.line)")] }
        if let data = diagnostic.dataLine { fields += [("dataFile", jsonString(data.file)), ("dataLine", "\(data.line)")] }
        if let time = diagnostic.time { fields.append(("time", number(time))) }
        return fields
    }

    /// A `diagnostic` event as one JSON line, as `--progress json` writes it.
    static func eventLine(_ diagnostic: Diagnostic) -> String {
        "{" + (["\"schema\":\(schema)"] + fields(diagnostic).map { "\(jsonString($0.0)):\($0.1)" }).joined(separator: ",") + "}\n"
    }

    /// "moonreel: warning: script.lua:12: what happened; what to do [kind]".
    static func line(_ diagnostic: Diagnostic) -> String {
        "moonreel: \(diagnostic.level.rawValue): \(diagnostic) [\(diagnostic.kind.rawValue)]".oneLine
    }

    /// At the end of a run: how often each diagnostic that came more than once came.
    func reportRepeats() {
        guard !quiet else { return }
        for (diagnostic, count) in diagnostics.counted where count > 1 {
            printError("moonreel: \(diagnostic.level.rawValue) [\(diagnostic.kind.rawValue)] \(diagnostic.origin.map { "at \($0) " } ?? "")came \(count) times in all".oneLine)
        }
    }

    private func json(_ value: ScriptEvent.Value) -> String {
        switch value {
        case .string(let text): jsonString(text)
        case .integer(let number): "\(number)"
        case .number(let number): Self.number(number, places: 6)
        case .boolean(let flag): flag ? "true" : "false"
        }
    }

    func handle(_ event: ExportEvent) {
        let output = event.session.outputURL ?? ""
        let now = monotonicSeconds()
        switch event {
        case .started(_, let progress, let duration):
            started = now
            lastDraw = 0
            let inputs = event.session.composition.sourcePaths.sorted().map(jsonString).joined(separator: ",")
            emit(["event": "\"start\"", "output": jsonString(output), "inputs": "[\(inputs)]", "duration": Self.number(duration), "frames": "\(progress.frameCount)"])
        case .progress(let session, let progress):
            guard progress.fraction >= 1 || now - lastDraw >= 0.1 else { return }
            lastDraw = now
            let elapsed = now - started
            // Speed and time left mean something only after half a second of work.
            let known = elapsed >= 0.5 && progress.mediaSecondsWritten > 0 && progress.fraction > 0
            let speed = known ? progress.mediaSecondsWritten / elapsed : nil
            let eta = known ? elapsed * (1 - progress.fraction) / progress.fraction : nil
            switch style {
            case .none: return
            case .json:
                emit(["event": "\"progress\"", "output": jsonString(output), "fraction": Self.number(progress.fraction, places: 4),
                      "frames": "\(progress.framesWritten)", "frameCount": "\(progress.frameCount)",
                      "speed": speed.map { Self.number($0, places: 2) } ?? "null", "eta": eta.map { Self.number($0, places: 1) } ?? "null"])
                if outputClosed { session.cancel() }
            case .bar:
                printError("\r" + barLine(output: output, progress: progress, speed: speed, eta: eta), newline: false)
                drawnBar = true
            }
        case .finished(_, let seconds):
            var info = stat()
            let bytes = stat(output, &info) == 0 ? Int64(info.st_size) : 0
            emit(["event": "\"done\"", "output": jsonString(output), "bytes": "\(bytes)", "seconds": Self.number(seconds, places: 3)])
            endLine()
        case .planned(_, let summary):
            if style == .json {
                emit(["event": "\"plan\"", "output": jsonString(output), "width": summary.video.map { "\($0.width)" } ?? "null",
                      "height": summary.video.map { "\($0.height)" } ?? "null",
                      "frameRate": summary.video.map { Self.number(1 / max($0.frameDuration.seconds, 1e-9)) } ?? "null",
                      "duration": Self.number(summary.duration.seconds), "estimatedBytes": summary.estimatedBytes.map { "\($0)" } ?? "null"])
            } else {
                endLine()
                _ = writeOut("would export \(summary)\n")
            }
        case .failed(_, let error, let position):
            let (file, line) = Self.place(in: position)
            emit(["event": "\"error\"", "output": jsonString(output), "kind": jsonString(error.kind.rawValue),
                  "message": jsonString(error.scriptMessage), "file": file.map(jsonString) ?? "null", "line": line.map(String.init) ?? "null"])
            endLine()
        }
    }

    /// The script itself failed (not an export): one last JSON line for programs.
    func scriptFailed(_ error: ScriptError?) {
        guard let error else { return }
        emit(["event": "\"error\"", "kind": "\"script\"", "message": jsonString(error.message),
              "file": error.file.map(jsonString) ?? "null", "line": error.line.map(String.init) ?? "null"])
    }

    /// "script.lua:12: " as its file and line.
    static func place(in position: String) -> (String?, Int?) {
        let parts = position.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 3, let line = Int(parts[parts.count - 2]) else { return (nil, nil) }
        return (parts.dropLast(2).joined(separator: ":"), line)
    }

    /// Ends the bar's line, so that what is printed next starts on a line of its own.
    func endLine() {
        if drawnBar { printError("\n", newline: false) }
        drawnBar = false
    }

    func finish() { endLine() }

    private func emit(_ fields: KeyValuePairs<String, String>) {
        emit(fields.map { ($0.key, $0.value) })
    }

    /// One JSON line of `fields` (values already JSON).
    private func emit(_ fields: [(String, String)]) {
        guard style == .json, !outputClosed else { return }
        let body = (["\"schema\":\(Self.schema)"] + fields.map { "\(jsonString($0.0)):\($0.1)" }).joined(separator: ",")
        // The reader is gone (SIGPIPE is ignored, so this is EPIPE): the export stops cleanly.
        if !writeOut("{" + body + "}\n", to: jsonOutput) { outputClosed = true }
    }

    /// "cut.mp4 ████████░░░░ 45%  40/90 frames  2.3× realtime  ETA 0:12", fitted to the
    /// terminal's width by dropping the least useful parts first and shortening the name.
    private func barLine(output: String, progress: ExportProgress, speed: Double?, eta: Double?) -> String {
        let columns = terminalColumns() - 1
        let percent = Int(progress.fraction * 100)
        let percentText = (percent < 10 ? "  " : percent < 100 ? " " : "") + "\(percent)%"
        let frames = progress.frameCount > 0 ? "\(progress.framesWritten)/\(progress.frameCount) frames" : nil
        let speedText = speed.map { "\(rounded($0, 1))× realtime" } ?? "…× realtime"
        let etaText = "ETA " + (eta.map(clock) ?? "-:--")
        let name = output.split(separator: "/").last.map(String.init) ?? output
        for (optional, barWidth) in [([frames, speedText, etaText], 30), ([frames, etaText], 20), ([etaText], 12), ([], 10)] {
            let tail = ([percentText] + optional.compactMap { $0 }).joined(separator: "  ")
            let room = columns - barWidth - tail.count - 2
            guard room >= min(12, name.count) else { continue }
            let bar = String(repeating: "█", count: Int(progress.fraction * Double(barWidth))).padding(toLength: barWidth, with: "░")
            return fitted(name, room) + " " + bar + " " + tail
        }
        return String(percentText.prefix(max(0, columns)))
    }

    private func fitted(_ name: String, _ width: Int) -> String {
        guard name.count > width else { return name }
        let keep = max(1, width - 1)
        return String(name.prefix(keep / 2)) + "…" + String(name.suffix(keep - keep / 2))
    }

    private func terminalColumns() -> Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    private static func number(_ value: Double, places: Int = 3) -> String {
        value.isFinite ? "\(rounded(value, places))" : "null"
    }

    private func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        let s = total % 60
        return "\(total / 60):\(s < 10 ? "0" : "")\(s)"
    }
}

extension String {
    fileprivate func padding(toLength length: Int, with pad: Character) -> String {
        count >= length ? self : self + String(repeating: pad, count: length - count)
    }
}
