/// SubRip (`.srt`): blocks of an optional number, a time line `start --> end` and text
/// lines. A time line always starts a cue, blank line before it or not, so it never becomes
/// text; a block whose time line cannot be read is dropped (and told to the log), the rest
/// of the file kept. Tags (`<b>`, `<i>`, `<font …>`) and `{\an8}` overrides are removed;
/// timestamp tags `<00:01.500>` give word timings. (WebVTT has its own reader.)
struct SubtitleParser {
    let fileName: String

    func cues(_ text: String, log: inout CueLog) throws -> [Cue] {
        let lines = TextFile.lines(text)
        var cues: [Cue] = []
        var index = 0
        while index < lines.count {
            guard !lines[index].text.trimmed.isEmpty else { index += 1; continue }
            // A block: up to a blank line, or up to the line before another time line (a
            // number line right before a time line belongs to the next block).
            var block = [lines[index]]
            index += 1
            while index < lines.count, !lines[index].text.trimmed.isEmpty {
                let startsNext = lines[index].text.contains("-->")
                    || (index + 1 < lines.count && lines[index + 1].text.contains("-->") && Int(lines[index].text.trimmed) != nil)
                if startsNext, block.contains(where: { $0.text.contains("-->") }) { break }
                block.append(lines[index])
                index += 1
            }
            do {
                cues.append(try cue(block))
            } catch let error as TimedTextError {
                try log.drop(file: fileName, line: error.line ?? block[0].number, "cue dropped", because: error.message)
            }
        }
        return cues
    }

    private func cue(_ block: [(number: Int, text: Substring)]) throws -> Cue {
        var rest = block[...]
        var identifier: String?
        if let first = rest.first, !first.text.contains("-->") {
            identifier = String(first.text.trimmed)
            rest = rest.dropFirst()
        }
        let example = "00:00:01,000 --> 00:00:04,000"
        guard let timing = rest.first else {
            throw TimedTextError(file: fileName, line: block[0].number, "it has no time line like \(example) (it starts \(String(block[0].text).quotedForMessage(limit: 60)))")
        }
        let sides = timing.text.split(separator: "-->", omittingEmptySubsequences: false)
        guard sides.count == 2, let endField = sides[1].split(whereSeparator: { $0 == " " || $0 == "\t" }).first else {
            throw TimedTextError(file: fileName, line: timing.number, "expected a time line like \(example), got \"\(timing.text)\"")
        }
        let start = try CueReader.parseTime(sides[0], column: "start time", fileName: fileName, line: timing.number)
        let end = try CueReader.parseTime(endField, column: "end time", fileName: fileName, line: timing.number)
        try CueReader.checkOrder(start, end, fileName: fileName, line: timing.number)
        let markup = rest.dropFirst().map { Self.withoutOverrides($0.text) }.joined(separator: "\n")
        let (text, words, _) = TimedTextBuilder.timedText(Substring(markup), start: start, end: end, markup: .subRip)
        return Cue(text: text, start: start, end: end, words: words, identifier: identifier).read(from: fileName, line: timing.number)
    }

    /// SRT files from ASS converters carry `{\an8}`-style overrides.
    private static func withoutOverrides(_ line: Substring) -> String {
        var result = "", rest = line
        while let open = rest.firstIndex(of: "{"), rest[open...].dropFirst().first == "\\",
              let close = rest[open...].firstIndex(of: "}") {
            result += rest[..<open]
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }
}
