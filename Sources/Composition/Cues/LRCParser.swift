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

    /// A line whose time tag cannot be read is dropped and told to `log` (the error itself,
    /// with `strict`); a time tag is never read as lyric text.
    func cues(_ text: String, totalDuration: MediaTime?, log: inout CueLog) throws -> [Cue] {
        var entries: [Entry] = []
        var offset = MediaTime.zero
        lines: for (number, raw) in TextFile.lines(text) {
            var rest = raw.trimmed
            var times: [MediaTime] = []
            while rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
                let tag = rest[rest.index(after: rest.startIndex)..<close]
                rest = rest[rest.index(after: close)...]
                if tag.first?.isNumber == true {
                    guard let time = CueReader.parseTime(tag) else {
                        try log.drop(file: fileName, line: number, "line dropped", because: "time tag [\(tag)] is not a time")
                        continue lines
                    }
                    times.append(time)
                } else if tag.hasPrefix("offset:") {
                    offset = try parseOffset(tag.dropFirst("offset:".count), line: number)
                }
            }
            entries += times.map { Entry(start: $0, line: number, markup: rest, isRepeat: times.count > 1) }
        }
        for index in entries.indices {
            entries[index].start = entries[index].start - offset
            guard !entries[index].start.isNegative else {
                throw TimedTextError(file: fileName, line: entries[index].line, "the line starts before 0 s once [offset:] is applied")
            }
        }
        entries = entries.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
        var cues: [Cue] = []
        for (index, entry) in entries.enumerated() where !entry.markup.trimmed.isEmpty {
            // Bilingual files give a line's translation as a second line with the same time tag.
            if let last = cues.last, last.start == entry.start, last.translation == nil {
                cues[cues.count - 1].translation = TimedTextBuilder.timedText(entry.markup, start: entry.start, end: last.end, shift: -offset, stripTags: false).text
                continue
            }
            let next = entries[(index + 1)...].first { $0.start > entry.start }?.start
            let end = try next ?? lastLineEnd(entry, totalDuration: totalDuration)
            var (text, words) = TimedTextBuilder.timedText(entry.markup, start: entry.start, end: end, shift: -offset, stripTags: false)
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

    private func lastLineEnd(_ entry: Entry, totalDuration: MediaTime?) throws -> MediaTime {
        guard let totalDuration else { return entry.start + CueReader.defaultLastLineDuration }
        guard totalDuration > entry.start else {
            throw TimedTextError(file: fileName, line: entry.line, "the last line starts at \(entry.start.seconds) s, after the total duration \(totalDuration.seconds) s")
        }
        return totalDuration
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
