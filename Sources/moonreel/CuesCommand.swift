import ArgumentParser
import MoonreelEngine
import MoonreelBindings
import MoonreelScriptHost

struct Cues: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Timed text (CSV, LRC, SRT, WebVTT, ASS) before any render.",
        subcommands: [Check.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print what is wrong with a lyric or subtitle file: every block or row that cannot be read, lines with no text, lines that overlap in time, lines after the end of the video, and (with --size) lines the lyrics effect cannot fit.",
            discussion: "Exit 0 when there is nothing to say, 1 when something is listed, 2 when the file cannot be read at all.")
        @Argument(help: "The file.", completion: .file()) var file: String
        @Option(help: "The video's length in seconds: lines after it are never shown (LRC: also the last line's end).") var duration: Double?
        @Option(help: "The format, when the extension does not say it: csv, lrc, srt, webvtt or ass.") var format: String?
        @Option(help: ArgumentHelp("The video's size, WIDTHxHEIGHT (e.g. 1080x1920): lays every line out as the bundled lyrics effect draws it there and lists those cut to fit.", valueName: "WxH"))
        var size: String?

        func run() throws {
            let total: MediaTime?
            if let duration {
                guard duration.isFinite, duration > 0, let time = MediaTime(seconds: duration) else {
                    throw ValidationError("--duration must be a number of seconds above 0, got \(duration)")
                }
                total = time
            } else {
                total = nil
            }
            let chosen: CueFormat?
            if let format {
                guard let known = CueFormat(rawValue: format) ?? CueFormat.allCases.first(where: { $0.rawValue.lowercased() == format.lowercased() }) else {
                    throw ValidationError("--format must be one of \(CueFormat.allCases.map(\.rawValue).joined(separator: ", ")), got \(format.quotedForMessage())")
                }
                chosen = known
            } else {
                chosen = nil
            }
            var log = CueLog(strict: false)
            let cues: [Cue]
            do {
                cues = try CueReader.read(path: file, format: chosen, totalDuration: total, log: &log)
            } catch {
                printError("moonreel: cues: \(error)".oneLine)
                throw ExitCode(Exit.usage)
            }
            let dropped = log.notes.sorted { ($0.dataLine?.line ?? 0) < ($1.dataLine?.line ?? 0) }
            var problems = dropped + CueCheck.problems(in: cues, duration: total, file: file)
            if let size, !cues.isEmpty { problems += try linesCut(at: try Self.dimensions(size), format: chosen) }
            for problem in problems { print(problem.text.oneLine) }
            let span = cues.isEmpty ? "" : ", \(CueCheck.clock(cues.map(\.start).min() ?? .zero))–\(CueCheck.clock(cues.map(\.end).max() ?? .zero))"
            printError("moonreel: cues: \(file): \(cues.count) cue\(cues.count == 1 ? "" : "s")\(span); "
                       + (problems.isEmpty ? "no problems" : "\(problems.count) problem\(problems.count == 1 ? "" : "s")"))
            if !problems.isEmpty { throw ExitCode(Exit.failed) }
        }

        /// "1080x1920" as whole pixels, each side 16…8192.
        static func dimensions(_ text: String) throws -> (width: Int, height: Int) {
            let sides = text.lowercased().split(separator: "x", omittingEmptySubsequences: false).map { Int($0) }
            guard sides.count == 2, let width = sides[0], let height = sides[1], (16...8192).contains(width), (16...8192).contains(height) else {
                throw ValidationError("--size must be WIDTHxHEIGHT in pixels, each 16 to 8192 (e.g. 1080x1920), got \(text.quotedForMessage())")
            }
            return (width, height)
        }

        /// The warnings the bundled lyrics effect's text layers would give at `size`: the
        /// effect itself lays the lines out (in a host of its own), so this is what a render says.
        private func linesCut(at size: (width: Int, height: Int), format: CueFormat?) throws -> [Diagnostic] {
            let host = try MoonreelHost(effectSearchPath: .fromEnvironment())
            host.onDiagnostic = { _ in } // the file's own problems are listed already
            let found = try host.run(source: Self.layOut, name: "cues-check", arguments: [file, String(size.width), String(size.height), format?.rawValue ?? ""])
            guard case .array(let messages)? = found.first else { return [] }
            return messages.compactMap { value in
                guard case .string(let message) = value else { return nil }
                return Diagnostic(.textTruncated, .warning, message)
            }
        }

        private static let layOut = """
            local path, width, height, format = arg[1], tonumber(arg[2]), tonumber(arg[3]), arg[4]
            local cues = av.readCues(path, { format = format ~= "" and format or nil })
            local lyrics = require("effects.lyrics"){ cues = cues, renderSize = { width, height } }
            local cut = {}
            for _, problem in ipairs(lyrics:textProblems()) do
              if problem.level == "warning" then cut[#cut + 1] = problem.message end
            end
            return cut
            """
    }
}
