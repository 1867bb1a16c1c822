import MoonreelMedia

/// WebVTT read by the WHATWG/W3C parsing algorithm (the file-parsing rules every browser and
/// player follows): a bad block is dropped and the rest kept, never the whole file, and a
/// timing line always starts a cue (even with no blank line before it), so it never becomes
/// text. Cue text keeps its spaces; ids are the line before the timing line, as written.
/// Timestamp tags `<00:01.500>` give word timings; other tags and entities are resolved as
/// for SRT. Cue settings, STYLE and REGION blocks are read past.
struct WebVTTParser {
    let fileName: String

    /// The cues the algorithm keeps; each dropped block is told to `log` once.
    func cues(_ text: String, log: inout CueLog) throws -> [Cue] {
        // Preprocessing: NUL becomes U+FFFD; CRLF and CR become LF.
        var scalars = String.UnicodeScalarView()
        var previous: Unicode.Scalar?
        for scalar in text.unicodeScalars {
            if scalar == "\n", previous == "\r" { previous = scalar; continue }
            scalars.append(scalar == "\0" ? "\u{FFFD}" : scalar == "\r" ? "\n" : scalar)
            previous = scalar
        }
        let lines = String(scalars).split(separator: "\n", omittingEmptySubsequences: false)
        // The signature: "WEBVTT" alone, or followed by a space or a tab.
        let signature = lines.first ?? ""
        guard signature == "WEBVTT" || signature.hasPrefix("WEBVTT ") || signature.hasPrefix("WEBVTT\t") else {
            throw TimedTextError(file: fileName, line: 1, "a WebVTT file must start with a line \"WEBVTT\" (alone, or followed by a space or tab and anything)")
        }
        var reader = BlockReader(lines: lines, position: 1)
        _ = reader.block(inHeader: true)
        var cues: [Cue] = []
        while true {
            reader.skipBlankLines()
            guard !reader.isAtEnd else { break }
            let block = reader.block(inHeader: false)
            if let timing = block.timing {
                switch Self.timings(timing.text) {
                case .success(let (start, end)):
                    if end < start {
                        // The specification keeps it; it is never on screen.
                        log.hidden(file: fileName, line: timing.line, "cue ends (\(end.seconds) s) before it starts (\(start.seconds) s); it is kept but never shown")
                    }
                    let (cueText, words, hidden) = TimedTextBuilder.timedText(Substring(block.text), start: start, end: end, markup: .webVTT, trimming: false)
                    for tag in hidden {
                        try log.drop(file: fileName, line: timing.line, "text left out",
                                     because: "\(tag.quotedForMessage(limit: 40)) is read as a tag, as WebVTT reads what follows a \"<\"; write &lt; for the sign")
                    }
                    cues.append(Cue(text: cueText, start: start, end: end, words: words, identifier: block.identifier).read(from: fileName, line: timing.line))
                case .failure(let reason):
                    try log.drop(file: fileName, line: timing.line, "cue dropped", because: "\(reason)")
                }
            } else if let first = block.firstLine, !["NOTE", "STYLE", "REGION"].contains(where: { Self.startsBlock(first.text, $0) }) {
                try log.drop(file: fileName, line: first.line, "block dropped",
                             because: "it has no timing line like 00:01.000 --> 00:04.000 (it starts \(first.text.quotedForMessage(limit: 60)))")
            }
        }
        return cues
    }

    /// Whether a block's first line is `keyword` alone or followed by a space or tab.
    private static func startsBlock(_ line: String, _ keyword: String) -> Bool {
        line == keyword || line.hasPrefix(keyword + " ") || line.hasPrefix(keyword + "\t")
    }

    /// One block as the algorithm collects it: lines up to a blank line, or up to a line with
    /// "-->" that cannot belong to it (which then starts the next block).
    private struct Block {
        var firstLine: (line: Int, text: String)?
        var timing: (line: Int, text: String)?
        var identifier: String?
        var text = ""
    }

    private struct BlockReader {
        let lines: [Substring]
        var position: Int

        var isAtEnd: Bool { position >= lines.count }

        mutating func skipBlankLines() {
            while position < lines.count, lines[position].isEmpty { position += 1 }
        }

        mutating func block(inHeader: Bool) -> Block {
            var block = Block()
            var buffer: String?
            var lineCount = 0
            while position < lines.count {
                let line = String(lines[position]), number = position + 1
                lineCount += 1
                if line.contains("-->") {
                    guard !inHeader, lineCount == 1 || (lineCount == 2 && block.timing == nil) else { break }
                    block.timing = (number, line)
                    block.identifier = buffer
                    block.firstLine = block.firstLine ?? (number, line)
                    buffer = nil
                    position += 1
                    continue
                }
                if line.isEmpty { break }
                block.firstLine = block.firstLine ?? (number, line)
                buffer = buffer.map { $0 + "\n" + line } ?? line
                position += 1
            }
            block.text = buffer ?? ""
            return block
        }
    }

    // MARK: Timings

    /// The start and end of a timing line (cue settings after them are read past), or why
    /// it is not one.
    static func timings(_ line: String) -> Result<(MediaTime, MediaTime), TimingError> {
        var input = Substring(line).unicodeScalars[...]
        skipWhitespace(&input)
        let startField = String(String.UnicodeScalarView(input.prefix { !isWhitespace($0) }))
        guard let start = timestamp(&input) else { return .failure(TimingError(field: startField.isEmpty ? line : startField, side: "start")) }
        skipWhitespace(&input)
        guard input.starts(with: "-->".unicodeScalars) else {
            return .failure(TimingError(description: "\(line.quotedForMessage(limit: 60)) has no \"-->\" right after its start time"))
        }
        input = input.dropFirst(3)
        skipWhitespace(&input)
        let endField = String(String.UnicodeScalarView(input.prefix { !isWhitespace($0) }))
        guard let end = timestamp(&input) else { return .failure(TimingError(field: endField.isEmpty ? line : endField, side: "end")) }
        return .success((start, end))
    }

    struct TimingError: Error, CustomStringConvertible {
        let description: String
        init(description: String) { self.description = description }
        init(field: String, side: String) {
            let shown = String(String.UnicodeScalarView(field.unicodeScalars.drop(while: isWhitespace).reversed().drop(while: isWhitespace).reversed()))
            description = "\(side) time \(shown.quotedForMessage(limit: 60)) is not a time (hh:mm:ss.ttt or mm:ss.ttt)"
        }
    }

    /// ASCII whitespace as the specification counts it: tab, form feed, space (LF and CR are
    /// gone by now). A vertical tab is not.
    private static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool { scalar == " " || scalar == "\t" || scalar == "\u{0C}" }

    private static func skipWhitespace(_ input: inout Substring.UnicodeScalarView.SubSequence) {
        while let first = input.first, isWhitespace(first) { input = input.dropFirst() }
    }

    /// "Collect a WebVTT timestamp": [hours:]mm:ss.ttt, minutes and seconds of two digits
    /// below 60, hours of any count of digits (two-digit first parts over 59 are hours),
    /// exactly three fraction digits.
    private static func timestamp(_ input: inout Substring.UnicodeScalarView.SubSequence) -> MediaTime? {
        func digits() -> Substring.UnicodeScalarView.SubSequence {
            let run = input.prefix { ("0"..."9").contains($0) }
            input = input.dropFirst(run.count)
            return run
        }
        func value(_ run: Substring.UnicodeScalarView.SubSequence) -> Int64? {
            run.count <= 12 ? Int64(String(String.UnicodeScalarView(run))) : nil
        }
        let first = digits()
        guard !first.isEmpty, var value1 = value(first) else { return nil }
        let firstIsHours = first.count != 2 || value1 > 59
        guard input.first == ":" else { return nil }
        input = input.dropFirst()
        let second = digits()
        guard second.count == 2, var value2 = value(second) else { return nil }
        var value3: Int64
        if firstIsHours || input.first == ":" {
            guard input.first == ":" else { return nil }
            input = input.dropFirst()
            let third = digits()
            guard third.count == 2, let parsed = value(third) else { return nil }
            value3 = parsed
        } else {
            (value3, value2, value1) = (value2, value1, 0)
        }
        guard input.first == "." else { return nil }
        input = input.dropFirst()
        let fraction = digits()
        guard fraction.count == 3, let milliseconds = value(fraction), value2 <= 59, value3 <= 59 else { return nil }
        return MediaTime(value: ((value1 * 60 + value2) * 60 + value3) * 1000 + milliseconds, timescale: 1000).reduced()
    }
}

/// What a timed-text reader noticed: blocks or lines it dropped (and why), and cues kept
/// that may surprise. With `strict`, a dropped block is the error instead.
public struct CueLog: Sendable {
    /// Whether a dropped block is an error (the first one is thrown).
    public let strict: Bool
    /// What was dropped or will not show, each with its file and line.
    public private(set) var notes: [Diagnostic] = []

    /// A log that notes (or, `strict`, throws) what a reader drops.
    public init(strict: Bool = false) { self.strict = strict }

    /// A block or line the reader leaves out (`what`: "cue dropped"), and why; with
    /// `strict`, the reason is the error.
    mutating func drop(file: String, line: Int, _ what: String, because reason: String) throws {
        if strict { throw TimedTextError(file: file, line: line, reason) }
        notes.append(Diagnostic(.cueDropped, .warning, "\(file):\(line): \(what): \(reason)", dataLine: SourceLine(file: file, line: line)))
    }

    /// A note on a cue kept otherwise than written.
    mutating func note(file: String, line: Int, _ kind: Diagnostic.Kind, _ message: String) {
        notes.append(Diagnostic(kind, .note, "\(file):\(line): \(message)", dataLine: SourceLine(file: file, line: line)))
    }

    /// A cue kept that will never show.
    mutating func hidden(file: String, line: Int, _ message: String) {
        notes.append(Diagnostic(.cueHidden, .warning, "\(file):\(line): \(message)", dataLine: SourceLine(file: file, line: line)))
    }
}
