import ArgumentParser
import MoonreelEngine

struct Cues: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Timed text (CSV, LRC, SRT, WebVTT, ASS) before any render.",
        subcommands: [Check.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print what is wrong with a lyric or subtitle file: blocks that cannot be read, lines that overlap in time, lines after the end of the video.",
            discussion: "Exit 0 when there is nothing to say, 1 when something is listed, 2 when the file cannot be read at all.")
        @Argument(help: "The file.", completion: .file()) var file: String
        @Option(help: "The video's length in seconds: lines after it are never shown (LRC: also the last line's end).") var duration: Double?
        @Option(help: "The format, when the extension does not say it: csv, lrc, srt, webvtt or ass.") var format: String?

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
            let problems = log.notes + CueCheck.problems(in: cues, duration: total, file: file)
            for problem in problems { print(problem.text.oneLine) }
            let span = cues.isEmpty ? "" : ", \(CueCheck.clock(cues.map(\.start).min() ?? .zero))–\(CueCheck.clock(cues.map(\.end).max() ?? .zero))"
            printError("moonreel: cues: \(file): \(cues.count) cue\(cues.count == 1 ? "" : "s")\(span); "
                       + (problems.isEmpty ? "no problems" : "\(problems.count) problem\(problems.count == 1 ? "" : "s")"))
            if !problems.isEmpty { throw ExitCode(Exit.failed) }
        }
    }
}
