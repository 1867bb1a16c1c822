import MoonreelMedia

/// One timed line of text (a lyric line, a subtitle): shown over `[start, end)`.
/// Readers produce them with `end >= start`; the engine does not enforce it on cues made
/// by hand.
public struct Cue: Sendable, Hashable {
    /// The text shown, without markup or surrounding white space; may hold line breaks.
    public var text: String
    /// When the cue appears, on the file's timeline.
    public var start: MediaTime
    /// When the cue disappears (excluded).
    public var end: MediaTime
    /// Word (or syllable) timings when the source has them (enhanced LRC, WebVTT
    /// timestamps); each names the Unicode scalars of `text` it covers, for karaoke.
    public var words: [WordTiming]
    /// The cue's id in the source (CSV `id`, SRT number, WebVTT identifier), if any.
    public var identifier: String?
    /// The line in another language shown with it (CSV `translation`; in LRC, a second line
    /// with the same time tag), not sung; nil for none.
    public var translation: String?
    /// The file and line it was read from (a CSV row's, a subtitle's timing line), so what
    /// is said about it can point there; not part of what the cue is (`==` ignores it).
    public var source: SourceLine?

    /// A cue shown from `start` until `end`, with optional word timings and source id.
    public init(text: String, start: MediaTime, end: MediaTime, words: [WordTiming] = [], identifier: String? = nil) {
        self.text = text
        self.start = start
        self.end = end
        self.words = words
        self.identifier = identifier
    }

    /// Cues with the same text, times, words, id and translation (wherever they were read).
    public static func == (a: Cue, b: Cue) -> Bool {
        (a.text, a.start, a.end, a.words, a.identifier, a.translation) == (b.text, b.start, b.end, b.words, b.identifier, b.translation)
    }

    /// Hashes what `==` compares (the text, times and id).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(text)
        hasher.combine(start)
        hasher.combine(end)
        hasher.combine(identifier)
    }

    /// The cue with where it was read from.
    func read(from file: String, line: Int) -> Cue {
        var cue = self
        cue.source = SourceLine(file: file, line: line)
        return cue
    }
}

/// When one word (or syllable) of a cue is sung: the karaoke timing that enhanced LRC,
/// WebVTT timestamps and ASS `\k` tags give.
public struct WordTiming: Sendable, Hashable {
    /// The word, without surrounding white space.
    public var text: String
    /// When the word starts.
    public var start: MediaTime
    /// When the word ends: the next word's start, or the cue's end for the last word.
    public var end: MediaTime
    /// Offsets of the word's Unicode scalars in the cue's text
    /// (`TextStyle.highlightedScalars = scalars.upperBound` once it is sung).
    public var scalars: Range<Int>
    /// Sung as a fill sweeping across the word over its time (ASS `\kf`, `\K`), rather than
    /// all at once when it starts (`\k`, LRC and WebVTT word tags).
    public var sweeps = false
}

/// Assembles a cue's text from segments, some of which start at a known time, and the
/// word timings that follow from them.
struct TimedTextBuilder {
    private(set) var text = ""
    private var scalarCount = 0
    private var words: [(text: String, start: MediaTime, scalars: Range<Int>, sweeps: Bool)] = []
    private var segmentStart: MediaTime?
    private var segmentSweeps = false

    /// Text that begins at `start` (or continues the current word when nil); `sweeps`: it
    /// is sung as a fill across it (see `WordTiming.sweeps`).
    mutating func append(_ segment: String, startingAt start: MediaTime?, sweeps: Bool = false) {
        if let start { (segmentStart, segmentSweeps) = (start, sweeps) }
        let leading = segment.unicodeScalars.prefix { $0.properties.isWhitespace }.count
        let word = segment.trimmed
        if let at = segmentStart, !word.isEmpty {
            let offset = scalarCount + leading
            words.append((String(word), at, offset..<(offset + word.unicodeScalars.count), segmentSweeps))
            segmentStart = nil
        }
        text += segment
        scalarCount += segment.unicodeScalars.count
    }

    /// The text without surrounding white space, and the words, each ending where the
    /// next starts (the last at `end`).
    /// The text (trimmed unless `trimming` is false: WebVTT keeps a cue's spaces) and the
    /// word timings, each word ending where the next starts (the last at `end`).
    func finish(end: MediaTime, trimming: Bool = true) -> (text: String, words: [WordTiming]) {
        let leading = trimming ? text.unicodeScalars.prefix { $0.properties.isWhitespace }.count : 0
        let timings = words.indices.map { i in
            let word = words[i]
            let wordEnd = i + 1 < words.count ? words[i + 1].start : end
            let scalars = (word.scalars.lowerBound - leading)..<(word.scalars.upperBound - leading)
            return WordTiming(text: word.text, start: word.start, end: MediaTime.max(wordEnd, word.start), scalars: scalars, sweeps: word.sweeps)
        }
        return (trimming ? String(text.trimmed) : text, timings)
    }
}

/// How a cue format marks up its text besides timestamp tags (`<00:01.500>`), which start
/// words in each.
enum CueMarkup {
    /// Every `<…>` is a tag, shown as nothing: one no `>` closes runs to the text's end, as
    /// WebVTT's tokenizer reads it. Character references (`&amp;`, `&#39;`) are decoded.
    case webVTT
    /// `<b>`, `<i>`, `<u>`, `<s>`, `<font …>` and their ends are tags; any other `<` is text
    /// ("I <3 you", "a < b and c > d"). Character references are decoded, as converters write them.
    case subRip
    /// LRC: only timestamp tags (read as LRC writes times, `LRCParser.time`); the rest is
    /// text as written.
    case lrc
}

extension TimedTextBuilder {
    /// The text and word timings of cue markup: `<mm:ss.xx>` (or `<hh:mm:ss.xxx>`) tags
    /// start words; text before the first one starts at `start`. Without such tags there
    /// are no word timings. `shift` is added to every tag's time. `hidden` lists the tags
    /// that were likely meant as text (WebVTT's: a `<` no `>` closes, or one naming no
    /// WebVTT tag), which are not shown.
    static func timedText(_ text: Substring, start: MediaTime, end: MediaTime, shift: MediaTime = .zero,
                          markup: CueMarkup, trimming: Bool = true) -> (text: String, words: [WordTiming], hidden: [String]) {
        var segments: [(text: String, start: MediaTime?)] = []
        var current = "", currentStart: MediaTime? = nil, hidden: [String] = []
        var rest = text
        while let open = rest.firstIndex(of: "<") {
            current += rest[..<open]
            let inside = rest[rest.index(after: open)...]
            let close = inside.firstIndex(of: ">")
            let tag = inside[..<(close ?? inside.endIndex)]
            let after = close.map { inside[inside.index(after: $0)...] } ?? inside[inside.endIndex...]
            if close != nil, let time = markup == .lrc ? LRCParser.time(tag) : CueReader.parseTime(tag) {
                segments.append((current, currentStart))
                (current, currentStart) = ("", time + shift)
                rest = after
                continue
            }
            switch markup {
            case .webVTT:
                if close == nil || !Self.isWebVTTTag(tag) { hidden.append("<" + tag + (close == nil ? "" : ">")) }
                rest = after
            case .subRip where close != nil && Self.isSubRipTag(tag):
                rest = after
            case .subRip, .lrc:
                current += "<"
                rest = inside
            }
        }
        current += rest
        segments.append((current, currentStart))
        let isTimed = segments.count > 1
        var builder = TimedTextBuilder()
        for (index, segment) in segments.enumerated() {
            let shown = markup == .lrc ? segment.text : CharacterReferences.decoded(segment.text)
            builder.append(shown, startingAt: segment.start ?? (isTimed && index == 0 ? start : nil))
        }
        let (shownText, words) = builder.finish(end: end, trimming: trimming)
        return (shownText, words, hidden)
    }

    /// WebVTT's tags, open or closed (`c.yellow`, `v Roger`, `/i`).
    private static func isWebVTTTag(_ tag: Substring) -> Bool {
        let name = tag.drop { $0 == "/" }.prefix { !$0.isWhitespace && $0 != "." }
        return ["c", "i", "b", "u", "ruby", "rt", "v", "lang"].contains(name)
    }

    /// The formatting tags SRT files carry, open or closed, in either case.
    private static func isSubRipTag(_ tag: Substring) -> Bool {
        let name = tag.drop { $0 == "/" }.prefix { !$0.isWhitespace }.lowercased()
        return ["b", "i", "u", "s", "font"].contains(name)
    }
}
