/// SubRip (`.srt`) and WebVTT (`.vtt`): blocks separated by blank lines, each an optional
/// identifier, a time line `start --> end` (WebVTT cue settings after it are ignored) and
/// text lines. Tags (`<b>`, `<i>`, `<font …>`, `<c.yellow>`, `<v Name>`) and SRT's
/// `{\an8}` overrides are removed; WebVTT timestamp tags `<00:01.500>` give word timings.
struct SubtitleParser {
    let fileName: String
    let isWebVTT: Bool

    func cues(_ text: String) throws -> [Cue] {
        let lines = TextFile.lines(text)
        var index = 0
        if isWebVTT {
            guard lines.first?.text.hasPrefix("WEBVTT") == true else {
                throw TimedTextError(file: fileName, line: 1, "a WebVTT file must start with WEBVTT")
            }
            while index < lines.count, !lines[index].text.trimmed.isEmpty { index += 1 }   // the header
        }
        var cues: [Cue] = []
        while index < lines.count {
            var block: [(number: Int, text: Substring)] = []
            while index < lines.count, !lines[index].text.trimmed.isEmpty {
                block.append(lines[index])
                index += 1
            }
            index += 1
            guard let head = block.first?.text else { continue }
            if isWebVTT, ["NOTE", "STYLE", "REGION"].contains(where: { head.hasPrefix($0) }) { continue }
            cues.append(try cue(block))
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
        let example = isWebVTT ? "00:01.000 --> 00:04.000" : "00:00:01,000 --> 00:00:04,000"
        guard let timing = rest.first else {
            throw TimedTextError(file: fileName, line: block[0].number, "expected a time line like \(example) after \"\(identifier ?? "")\"")
        }
        let sides = timing.text.split(separator: "-->", omittingEmptySubsequences: false)
        guard sides.count == 2, let endField = sides[1].split(whereSeparator: { $0 == " " || $0 == "\t" }).first else {
            throw TimedTextError(file: fileName, line: timing.number, "expected a time line like \(example), got \"\(timing.text)\"")
        }
        let start = try CueReader.parseTime(sides[0], column: "start time", fileName: fileName, line: timing.number)
        let end = try CueReader.parseTime(endField, column: "end time", fileName: fileName, line: timing.number)
        try CueReader.checkOrder(start, end, fileName: fileName, line: timing.number)
        let markup = rest.dropFirst().map { isWebVTT ? String($0.text) : Self.withoutOverrides($0.text) }.joined(separator: "\n")
        let (text, words) = TimedTextBuilder.timedText(Substring(markup), start: start, end: end, stripTags: true,
                                                        decode: Self.decodingEntities)
        return Cue(text: text, start: start, end: end, words: words, identifier: identifier)
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

    private static let entities = ["&amp;": "&", "&lt;": "<", "&gt;": ">", "&nbsp;": "\u{00A0}", "&lrm;": "\u{200E}", "&rlm;": "\u{200F}", "&quot;": "\"", "&apos;": "'"]

    static func decodingEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = "", rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            let candidate = rest[ampersand...].prefix { $0 != ";" && $0 != " " }
            let entity = String(candidate) + ";"
            if let replacement = entities[entity], rest[candidate.endIndex...].first == ";" {
                result += replacement
                rest = rest[rest.index(after: candidate.endIndex)...]
            } else {
                result += "&"
                rest = rest[rest.index(after: ampersand)...]
            }
        }
        return result + rest
    }
}
