import MoonreelMedia

/// LRC lyrics: `[mm:ss.xx]text`, several time tags on one line (a repeated chorus),
/// `[offset:±ms]` (positive shows lines earlier), metadata tags like `[ar:…]`, and the
/// enhanced form with word times `[00:12.00]<00:12.00>Some <00:12.50>words`. A line ends
/// where the next one starts; a line with a time but no text only ends the one before.
struct LRCParser {
    let fileName: String

    private struct Entry {
        var start: MediaTime
        var line: Int
        var markup: Substring
        /// One of several time tags of its line (a chorus sung again): the line's word times
        /// belong to one of them.
        var isRepeat: Bool
    }

    /// A line whose time tag cannot be read, or with words and no time tag (a bracket
    /// missing: `00:12.00]words`, `[00:12.00 words`), is dropped and told to `log` (the error
    /// itself, with `strict`); a time tag is never read as lyric text. A line after
    /// `totalDuration` is kept, to be found never shown (`CueCheck`).
    func cues(_ text: String, totalDuration: MediaTime?, log: inout CueLog) throws -> [Cue] {
        var entries: [Entry] = [], untimed: [(line: Int, text: Substring)] = []
        var offset = MediaTime.zero
        lines: for (number, raw) in TextFile.lines(text) {
            var rest = raw.trimmed
            var times: [MediaTime] = []
            while rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
                let tag = rest[rest.index(after: rest.startIndex)..<close]
                rest = rest[rest.index(after: close)...]
                if Self.isMetadata(tag) {
                    if tag.hasPrefix("offset:") { offset = try parseOffset(tag.dropFirst("offset:".count), line: number) }
                    continue
                }
                guard let time = Self.time(tag) else {
                    try log.drop(file: fileName, line: number, "line dropped", because: "time tag [\(tag)] is not a time like [01:23.45]")
                    continue lines
                }
                times.append(time)
            }
            if times.isEmpty, !rest.trimmed.isEmpty { untimed.append((number, raw.trimmed)) }
            entries += times.map { Entry(start: $0, line: number, markup: rest, isRepeat: times.count > 1) }
        }
        // Said only in a file of timed lines: another file taken for LRC is "no cues found".
        for (number, line) in untimed where !entries.isEmpty {
            try log.drop(file: fileName, line: number, "line dropped",
                         because: "it has no time tag like [01:23.45] (it reads \(String(line).quotedForMessage(limit: 60)))")
        }
        for index in entries.indices {
            let start = entries[index].start - offset
            entries[index].start = MediaTime.max(start, .zero)
            if start.isNegative, !entries[index].markup.trimmed.isEmpty {
                log.note(file: fileName, line: entries[index].line, .cueHidden,
                         "the line would start at \(shortSeconds(start)) s once [offset:] is applied, so it starts at 0 s")
            }
        }
        entries = entries.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
        var cues: [Cue] = []
        for (index, entry) in entries.enumerated() where !entry.markup.trimmed.isEmpty {
            // Bilingual files give a line's translation as a second line with the same time tag.
            if let last = cues.last, last.start == entry.start, last.translation == nil {
                cues[cues.count - 1].translation = TimedTextBuilder.timedText(entry.markup, start: entry.start, end: last.end, shift: -offset, markup: .lrc).text
                continue
            }
            let next = entries[(index + 1)...].first { $0.start > entry.start }?.start
            let end = next ?? lastLineEnd(entry, totalDuration: totalDuration)
            var (text, words, _) = TimedTextBuilder.timedText(entry.markup, start: entry.start, end: end, shift: -offset, markup: .lrc)
            // A repeated line's word times are kept where they fall within it, else left out.
            if entry.isRepeat, !words.isEmpty, !words.allSatisfy({ $0.start >= entry.start && $0.start <= end }) {
                words = []
                log.note(file: fileName, line: entry.line, .cueDropped,
                         "the line is shown again at \(shortSeconds(entry.start)) s without its word times, which are those of another of its time tags")
            }
            cues.append(Cue(text: text, start: entry.start, end: end, words: words).read(from: fileName, line: entry.line))
        }
        return cues
    }

    /// The last line lasts to `totalDuration`, or `CueReader.defaultLastLineDuration` when
    /// none is given or it starts after it (never shown then: `CueCheck` says so).
    private func lastLineEnd(_ entry: Entry, totalDuration: MediaTime?) -> MediaTime {
        guard let totalDuration, totalDuration > entry.start else { return entry.start + CueReader.defaultLastLineDuration }
        return totalDuration
    }

    /// A metadata tag's key (`ar`, `ti`, `offset`, `#`): letters, or `#`, before a colon.
    private static func isMetadata(_ tag: Substring) -> Bool {
        guard let colon = tag.firstIndex(of: ":") else { return false }
        let key = tag[..<colon]
        return key == "#" || (!key.isEmpty && key.allSatisfy { $0.isLetter })
    }

    /// `mm:ss.xx` or `mm:ss`, or `mm:ss:xx` as some editors write hundredths (LRC counts no
    /// hours: `[00:02:50]` is 2.5 s, not 170 s).
    static func time(_ tag: Substring) -> MediaTime? {
        let parts = tag.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 3, (1...3).contains(parts[2].count), parts[2].allSatisfy({ $0.isASCII && $0.isNumber }) {
            return CueReader.parseTime("\(parts[0]):\(parts[1]).\(parts[2])")
        }
        return CueReader.parseTime(tag)
    }

    /// `[offset:+500]`: milliseconds.
    private func parseOffset(_ text: Substring, line: Int) throws -> MediaTime {
        let value = text.trimmed
        let digits = value.hasPrefix("+") ? value.dropFirst() : value
        guard let milliseconds = Int64(digits), abs(milliseconds) < 1_000_000_000 else {
            throw TimedTextError(file: fileName, line: line, "[offset:\(text)] is not a number of milliseconds")
        }
        return MediaTime(value: milliseconds, timescale: 1000)
    }
}
