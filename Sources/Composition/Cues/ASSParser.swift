import MoonreelMedia

/// Advanced SubStation Alpha (`.ass`) and SubStation Alpha (`.ssa`): the `Dialogue:` lines
/// of the `[Events]` section, read through that section's `Format:` line (Text is the last
/// field and may hold commas). Karaoke tags `\k`, `\K`, `\kf` and `\ko` (centiseconds per
/// syllable, counted from the line's start) become word timings; every other override
/// block (`{\b1}`, `{\pos(…)}`) is removed; `\N` is a line break, `\h` a space. A drawing
/// (`{\p1}m 0 0 l 100 0…{\p0}`, a vector shape) is left out with a note: its commands are
/// not words.
struct ASSParser {
    let fileName: String

    /// A Dialogue line that cannot be read is dropped and told to `log` (the error itself, with `strict`).
    func cues(_ text: String, log: inout CueLog) throws -> [Cue] {
        var inEvents = false
        var fields: [String]?
        var cues: [Cue] = []
        for (number, line) in TextFile.lines(text) {
            let trimmed = line.trimmed
            if trimmed.hasPrefix("[") {
                inEvents = trimmed.lowercased() == "[events]"
                continue
            }
            guard inEvents, let colon = trimmed.firstIndex(of: ":") else { continue }
            let kind = trimmed[..<colon].lowercased()
            let body = trimmed[trimmed.index(after: colon)...]
            if kind == "format" {
                fields = body.split(separator: ",").map { $0.trimmed.lowercased() }
            } else if kind == "dialogue" {
                do {
                    let (cue, drawing) = try cue(body, fields: fields ?? ASSParser.defaultFields, line: number)
                    cues.append(cue)
                    if drawing {
                        log.note(file: fileName, line: number, .cueDropped, "the line's drawing ({\\p1}…{\\p0}, a vector shape) is not drawn: it is left out of the text")
                    }
                } catch let error as TimedTextError {
                    try log.drop(file: fileName, line: number, "Dialogue line dropped", because: error.message)
                }
            }
        }
        return cues
    }

    /// ASS v4.00+ order, for files whose `[Events]` has no Format line.
    static let defaultFields = ["layer", "start", "end", "style", "name", "marginl", "marginr", "marginv", "effect", "text"]

    /// The cue, and whether a drawing was left out of it.
    private func cue(_ body: Substring, fields: [String], line: Int) throws -> (Cue, Bool) {
        let values = body.split(separator: ",", maxSplits: max(fields.count - 1, 0), omittingEmptySubsequences: false)
        func field(_ name: String) throws -> Substring {
            guard let index = fields.firstIndex(of: name), index < values.count else {
                throw TimedTextError(file: fileName, line: line, "Dialogue line has no \(name) field (format: \(fields.joined(separator: ", ")))")
            }
            return values[index]
        }
        let start = try CueReader.parseTime(try field("start"), column: "Start", fileName: fileName, line: line)
        let end = try CueReader.parseTime(try field("end"), column: "End", fileName: fileName, line: line)
        try CueReader.checkOrder(start, end, fileName: fileName, line: line)
        let (text, words, drawing) = ASSParser.karaokeText(try field("text"), start: start, end: end)
        return (Cue(text: text, start: start, end: end, words: words).read(from: fileName, line: line), drawing)
    }

    /// The plain text of an event, its syllable timings when it has karaoke tags, and
    /// whether it held a drawing (left out).
    static func karaokeText(_ markup: Substring, start: MediaTime, end: MediaTime) -> (String, [WordTiming], Bool) {
        var builder = TimedTextBuilder()
        var elapsed: Int64 = 0          // centiseconds from the line's start
        var pendingStart: MediaTime?    // when the next syllable starts, if a \k tag said so
        var pendingSweeps = false       // \kf and \K fill the syllable across its time
        var isKaraoke = false
        var pendingText = ""
        var isDrawing = false, drew = false
        func flushText() {
            guard !pendingText.isEmpty else { return }
            builder.append(pendingText, startingAt: pendingStart, sweeps: pendingSweeps)
            pendingStart = nil
            pendingText = ""
        }
        var rest = markup
        while !rest.isEmpty {
            if rest.first == "{", let close = rest.firstIndex(of: "}") {
                for (duration, sweeps) in karaokeDurations(in: rest[rest.index(after: rest.startIndex)..<close]) {
                    flushText()
                    isKaraoke = true
                    pendingStart = start + MediaTime(value: elapsed, timescale: 100)
                    pendingSweeps = sweeps
                    elapsed += duration
                }
                if let scale = drawingScale(in: rest[rest.index(after: rest.startIndex)..<close]) { isDrawing = scale > 0 }
                rest = rest[rest.index(after: close)...]
                continue
            }
            if isDrawing {
                drew = true
                rest.removeFirst()
                continue
            }
            if rest.first == "\\", let code = rest.dropFirst().first, "Nnh".contains(code) {
                pendingText += code == "h" ? " " : code == "N" ? "\n" : " "
                rest = rest.dropFirst(2)
                continue
            }
            pendingText.append(rest.removeFirst())
        }
        flushText()
        let (text, words) = builder.finish(end: end)
        return (text, isKaraoke ? words : [], drew)
    }

    /// The last `\p` tag's scale in an override block (`\p1` starts a drawing, `\p0` ends
    /// it); nil without one (`\pos(…)` is another tag).
    static func drawingScale(in block: Substring) -> Int? {
        block.split(separator: "\\").compactMap { tag -> Int? in
            guard tag.first == "p", tag.count > 1, tag.dropFirst().allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(tag.dropFirst().prefix(9))
        }.last
    }

    /// The centisecond values of the karaoke tags in one override block, in order, and
    /// whether each fills its syllable across its time (`\kf`, `\K`).
    static func karaokeDurations(in block: Substring) -> [(centiseconds: Int64, sweeps: Bool)] {
        block.split(separator: "\\").compactMap { tag -> (Int64, Bool)? in
            let name = tag.prefix { $0.isLetter }
            guard ["k", "K", "kf", "ko"].contains(String(name)) else { return nil }
            let digits = tag.dropFirst(name.count).prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 9, let value = Int64(digits) else { return nil }
            return (value, name == "kf" || name == "K")
        }
    }
}
