import MoonreelMedia

/// A timed-text file format `CueReader` reads; the raw value is the file extension.
public enum CueFormat: String, Sendable, CaseIterable {
    /// CSV with a header naming the columns `lyric`, `start_at` and `end_at` (and an
    /// optional `id`); times in seconds or `mm:ss.xx`.
    case csv
    /// LRC lyrics: `[mm:ss.xx]` line tags, optional `<mm:ss.xx>` word tags and `[offset:]`.
    case lrc
    /// SubRip subtitles.
    case srt
    /// WebVTT subtitles (extension "vtt").
    case webVTT = "vtt"
    /// Advanced SubStation Alpha / SSA (`Dialogue:` lines, `\k` karaoke tags).
    case ass

    /// What a file of this format must hold, for the error when it holds no cue.
    var expectedContent: String {
        switch self {
        case .csv: return "rows under a header with lyric, start_at and end_at columns"
        case .lrc: return "lines starting with [mm:ss.xx] time tags"
        case .srt: return "blocks of a number, a line like 00:00:01,000 --> 00:00:04,000 and text"
        case .webVTT: return "cues with a line like 00:01.000 --> 00:04.000 after the WEBVTT header"
        case .ass: return "Dialogue: lines in an [Events] section"
        }
    }
}

/// Reads timed text into cues sorted by start: CSV (`id,lyric,start_at,end_at`), LRC
/// (with `[offset:]`, several time tags per line and `<mm:ss.xx>` word times), SubRip,
/// WebVTT and ASS/SSA (with `\k` karaoke times). Errors name the file and line; a file with
/// text but no cue is an error, never an empty list.
public enum CueReader {
    /// How long the last line of an LRC file lasts when no total duration is given.
    public static let defaultLastLineDuration = MediaTime(value: 5, timescale: 1)

    /// `format`: nil chooses by extension, then by content. `totalDuration`: where the last
    /// LRC line ends (the song's length). A block or line that cannot be read is dropped and
    /// the rest kept; `log` holds a note for each (with `log.strict`, the first is thrown).
    /// - Throws: `TimedTextError` (with file and line where it can) when the file cannot be
    ///   read, is larger than 64 MB, is not UTF-8, is no WebVTT file (its signature), has a
    ///   malformed CSV row, or (but WebVTT) holds text and no cue.
    public static func read(path: String, format: CueFormat? = nil, totalDuration: MediaTime? = nil, log: inout CueLog) throws -> [Cue] {
        try parse(TextFile.read(path), fileName: path, format: format, totalDuration: totalDuration, log: &log)
    }

    /// As `read(path:format:totalDuration:log:)`, strict: the first dropped block is the error.
    public static func read(path: String, format: CueFormat? = nil, totalDuration: MediaTime? = nil) throws -> [Cue] {
        var log = CueLog(strict: true)
        return try read(path: path, format: format, totalDuration: totalDuration, log: &log)
    }

    /// A file's contents already in memory (uploaded, or embedded); `fileName` names it in
    /// errors and chooses the format by extension when `format` is nil.
    public static func parse(bytes: [UInt8], fileName: String, format: CueFormat? = nil, totalDuration: MediaTime? = nil, log: inout CueLog) throws -> [Cue] {
        try parse(TextFile.decode(bytes, fileName: fileName), fileName: fileName, format: format, totalDuration: totalDuration, log: &log)
    }

    /// As `parse(bytes:fileName:format:totalDuration:log:)`, strict: the first dropped block is the error.
    public static func parse(bytes: [UInt8], fileName: String, format: CueFormat? = nil, totalDuration: MediaTime? = nil) throws -> [Cue] {
        var log = CueLog(strict: true)
        return try parse(bytes: bytes, fileName: fileName, format: format, totalDuration: totalDuration, log: &log)
    }

    /// Cues from text already decoded; `fileName` names it in errors and chooses the format
    /// by extension when `format` is nil (then the content decides). Cues come sorted by
    /// start, in file order for equal starts; empty text gives no cues.
    /// - Throws: `TimedTextError` as `read(path:format:totalDuration:log:)`.
    public static func parse(_ text: String, fileName: String, format: CueFormat? = nil, totalDuration: MediaTime? = nil, log: inout CueLog) throws -> [Cue] {
        let text = TextFile.withoutByteOrderMark(text)
        let cues: [Cue]
        let chosen = format ?? detectFormat(fileName: fileName, text: text)
        switch chosen {
        case .csv: cues = try csvCues(text, fileName: fileName, log: &log)
        case .lrc: cues = try LRCParser(fileName: fileName).cues(text, totalDuration: totalDuration, log: &log)
        case .srt: cues = try SubtitleParser(fileName: fileName).cues(text, log: &log)
        case .webVTT: cues = try WebVTTParser(fileName: fileName).cues(text, log: &log)
        case .ass: cues = try ASSParser(fileName: fileName).cues(text, log: &log)
        }
        // A WebVTT file whose every cue was dropped has none, as players read it.
        if cues.isEmpty, chosen != .webVTT, !text.trimmed.isEmpty {
            throw TimedTextError(file: fileName, line: nil,
                                 "no cues found, read as \(chosen.rawValue.uppercased()) (expected \(chosen.expectedContent))")
        }
        return cues.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
    }

    /// As `parse(_:fileName:format:totalDuration:log:)`, strict: the first dropped block is the error.
    public static func parse(_ text: String, fileName: String, format: CueFormat? = nil, totalDuration: MediaTime? = nil) throws -> [Cue] {
        var log = CueLog(strict: true)
        return try parse(text, fileName: fileName, format: format, totalDuration: totalDuration, log: &log)
    }

    /// By extension (csv, lrc, srt, vtt, ass, ssa); otherwise by the first lines.
    public static func detectFormat(fileName: String, text: String) -> CueFormat {
        let fileExtension = fileName.split(separator: "/").last?.split(separator: ".").dropFirst().last?.lowercased()
        let aliases = ["webvtt": "vtt", "ssa": "ass"]
        if let fileExtension, let format = CueFormat(rawValue: aliases[fileExtension] ?? fileExtension) { return format }
        let firstLines = TextFile.lines(text).map(\.text.trimmed).filter { !$0.isEmpty }.prefix(3)
        if firstLines.first?.hasPrefix("WEBVTT") == true { return .webVTT }
        if firstLines.first?.lowercased() == "[script info]" { return .ass }
        if firstLines.first?.hasPrefix("[") == true { return .lrc }
        if firstLines.contains(where: { $0.contains("-->") }) { return .srt }
        return .csv
    }

    /// A row that cannot be read (a wrong number of fields, a time that is not one, an end
    /// before the start) is dropped into `log`, as the other readers drop a block.
    static func csvCues(_ text: String, fileName: String, log: inout CueLog) throws -> [Cue] {
        let table = try CSVReader.parse(text, fileName: fileName) { problem in
            try log.drop(file: fileName, line: problem.line ?? 1, "row dropped", because: problem.message)
        }
        for column in ["lyric", "start_at", "end_at"] where !table.header.contains(column) {
            throw TimedTextError(file: fileName, line: 1,
                                 "missing column \"\(column)\" (the header has \(table.header.joined(separator: ", ").quotedForMessage(limit: 120)))")
        }
        var cues: [Cue] = []
        for (row, line) in zip(table.rows, table.rowLines) {
            func time(_ column: String) throws -> MediaTime {
                try parseTime(row[column] ?? "", column: column, fileName: fileName, line: line)
            }
            do {
                let (start, end) = (try time("start_at"), try time("end_at"))
                try checkOrder(start, end, fileName: fileName, line: line)
                var cue = Cue(text: row["lyric"] ?? "", start: start, end: end, identifier: row["id"]).read(from: fileName, line: line)
                cue.translation = row["translation"].flatMap { $0.trimmed.isEmpty ? nil : String($0.trimmed) }
                cues.append(cue)
            } catch let problem as TimedTextError {
                try log.drop(file: fileName, line: line, "row dropped", because: problem.message)
            }
        }
        return cues
    }

    static func checkOrder(_ start: MediaTime, _ end: MediaTime, fileName: String, line: Int) throws {
        guard end >= start else {
            throw TimedTextError(file: fileName, line: line, "the cue ends (\(end.seconds) s) before it starts (\(start.seconds) s)")
        }
    }

    /// A time for a cue, or an error naming the field and line.
    static func parseTime(_ text: some StringProtocol, column: String, fileName: String, line: Int) throws -> MediaTime {
        let field = text.trimmed
        if field.hasPrefix("-") { throw TimedTextError(file: fileName, line: line, "\(column) \"\(field)\" is negative") }
        guard let time = parseTime(field) else { throw TimedTextError(file: fileName, line: line, "\(column) \"\(field)\" is not a time") }
        return time
    }

    /// Seconds (`12.5`), `mm:ss.xx` or `hh:mm:ss.xxx` (also with a decimal comma, as SRT
    /// writes), exactly: `12.34` is 1234/100 s.
    public static func parseTime(_ text: some StringProtocol) -> MediaTime? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let last = parts.last else { return nil }
        let secondsParts = last.split(omittingEmptySubsequences: false) { $0 == "." || $0 == "," }
        guard secondsParts.count <= 2, let wholeSeconds = digits(secondsParts[0]) else { return nil }
        var units = [wholeSeconds]
        for part in parts.dropLast() {
            guard let value = digits(part) else { return nil }
            units.insert(value, at: units.count - 1)
        }
        // Minutes and seconds below 60 when a larger unit precedes them.
        guard units.dropFirst().allSatisfy({ $0 < 60 }) else { return nil }
        let whole = units.reduce(0) { $0 * 60 + $1 }
        var fraction: Int64 = 0, scale: Int64 = 1
        if secondsParts.count == 2 {
            guard let value = digits(secondsParts[1], maxDigits: 9) else { return nil }
            fraction = value
            scale = (0..<secondsParts[1].count).reduce(1) { value, _ in value * 10 }
        }
        return MediaTime(value: whole * scale + fraction, timescale: Int32(scale)).reduced()
    }

    private static func digits(_ text: some StringProtocol, maxDigits: Int = 9) -> Int64? {
        guard !text.isEmpty, text.count <= maxDigits, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(text)
    }
}
