@testable import MoonreelEngine
@testable import MoonreelComposition
import Testing

@Suite struct CueReaderTests {
    func time(_ value: Int64, _ scale: Int32 = 1) -> MediaTime { MediaTime(value: value, timescale: scale) }

    @Test func timesAreExact() {
        #expect(CueReader.parseTime("12.5") == time(25, 2))
        #expect(CueReader.parseTime("01:02.25") == time(249, 4))          // 62.25 s
        #expect(CueReader.parseTime("1:00:00.001") == time(3_600_001, 1000))
        #expect(CueReader.parseTime("00:00:01,500") == time(3, 2))        // SRT's comma
        #expect(CueReader.parseTime("75:02") == time(4502))              // LRC minutes may pass 59
        for bad in ["", "1:60", "1.2.3", "abc", "1::2", "1:2x", "-1", "1:00:60", "0.1234567891"] {
            #expect(CueReader.parseTime(bad) == nil, "\(bad)")
        }
    }

    @Test func csvCues() throws {
        let text = "id,lyric,start_at,end_at\n2,second,0:12.5,00:00:15.250\n1,first,1.5,3\n"
        let cues = try CueReader.parse(text, fileName: "lyrics.csv")
        #expect(cues == [Cue(text: "first", start: time(3, 2), end: time(3), identifier: "1"),
                         Cue(text: "second", start: time(25, 2), end: time(61, 4), identifier: "2")])
    }

    @Test func csvErrorsNameTheRow() {
        let rows = (1...5).map { "\($0),line,\($0),\($0 + 1)" }.joined(separator: "\n")
        #expect(throws: TimedTextError(file: "lyrics.csv", line: 7, "start_at \"1:2x\" is not a time")) {
            try CueReader.parse("id,lyric,start_at,end_at\n\(rows)\n6,bad,1:2x,3\n", fileName: "lyrics.csv")
        }
        #expect(throws: TimedTextError(file: "lyrics.csv", line: 2, "end_at \"-2\" is negative")) {
            try CueReader.parse("lyric,start_at,end_at\nx,1,-2\n", fileName: "lyrics.csv")
        }
        #expect(throws: TimedTextError(file: "lyrics.csv", line: 2, "the cue ends (2.0 s) before it starts (5.0 s)")) {
            try CueReader.parse("lyric,start_at,end_at\nx,5,2\n", fileName: "lyrics.csv")
        }
        #expect(throws: TimedTextError(file: "lyrics.csv", line: 1, "missing column \"start_at\" (the header has \"id, lyric, start\")")) {
            try CueReader.parse("id,lyric,start\n1,x,2\n", fileName: "lyrics.csv")
        }
    }

    @Test func lrcWithOffsetRepeatsBlankLinesAndWordTimes() throws {
        let text = """
        [ar:Someone]
        [offset:+500]
        [00:12.50]First line
        [00:15.00][01:00.00]Chorus
        [00:20.00]
        [00:21.00]<00:21.00>Hel<00:21.50>lo <00:22.00>world
        """
        let cues = try CueReader.parse(text, fileName: "song.lrc")
        // Offset +500 ms shows every line half a second earlier.
        #expect(cues.map(\.text) == ["First line", "Chorus", "Hello world", "Chorus"])
        #expect(cues.map(\.start) == [time(12), time(29, 2), time(41, 2), time(119, 2)])
        // Each line ends where the next starts; the empty line ends the first chorus;
        // the last line lasts the default 5 s.
        #expect(cues.map(\.end) == [time(29, 2), time(39, 2), time(119, 2), time(129, 2)])
        #expect(cues[2].words == [
            WordTiming(text: "Hel", start: time(41, 2), end: time(21), scalars: 0..<3),
            WordTiming(text: "lo", start: time(21), end: time(43, 2), scalars: 3..<5),
            WordTiming(text: "world", start: time(43, 2), end: time(119, 2), scalars: 6..<11),
        ])
        #expect(cues[1].words.isEmpty)
        let ended = try CueReader.parse(text, fileName: "song.lrc", totalDuration: time(200))
        #expect(ended.last?.end == time(200))
    }

    /// A line with two time tags (a chorus sung again) and word times: every word time was
    /// dropped, even in the occurrence they belong to. They are kept there, and the repeat
    /// shown without them is a note naming the line.
    @Test func aRepeatedLRCLineKeepsItsWordTimesWhereTheyFall() throws {
        var log = CueLog()
        let cues = try CueReader.parse("[00:05.00][00:10.00]<00:05.00>Sing <00:05.50>along\n[00:15.00]\n", fileName: "song.lrc", log: &log)
        #expect(cues.map(\.start) == [time(5), time(10)])
        #expect(cues[0].words.map(\.text) == ["Sing", "along"] && cues[0].words.first?.start == time(5))
        #expect(cues[1].words.isEmpty)
        #expect(log.notes.map(\.description) == ["song.lrc:1: the line is shown again at 10 s without its word times, which are those of another of its time tags"],
                "\(log.notes)")
        #expect(log.notes.first?.level == .note && log.notes.first?.kind == .cueDropped)
    }

    @Test func lrcErrors() {
        #expect(throws: TimedTextError(file: "song.lrc", line: 2, "time tag [00:1x.00] is not a time like [01:23.45]")) {
            try CueReader.parse("[00:01.00]a\n[00:1x.00]b\n", fileName: "song.lrc")
        }
        #expect(throws: TimedTextError(file: "song.lrc", line: 2, "it has no time tag like [01:23.45] (it reads \"00:02.00]b\")")) {
            try CueReader.parse("[00:01.00]a\n00:02.00]b\n", fileName: "song.lrc")
        }
    }

    @Test func srtCues() throws {
        let text = "1\r\n00:00:01,000 --> 00:00:04,000\r\n<i>Hello</i> there\r\nsecond line\r\n\r\n2\r\n00:00:05,500 --> 00:00:07,000 X1:10\r\n{\\an8}Top &amp; <font color=\"red\">more</font>\r\n"
        let cues = try CueReader.parse(text, fileName: "movie.srt")
        #expect(cues == [Cue(text: "Hello there\nsecond line", start: time(1), end: time(4), identifier: "1"),
                         Cue(text: "Top & more", start: time(11, 2), end: time(7), identifier: "2")])
        #expect(throws: TimedTextError(file: "movie.srt", line: 2, "expected a time line like 00:00:01,000 --> 00:00:04,000, got \"00:00:05 -> 00:00:07\"")) {
            try CueReader.parse("1\n00:00:05 -> 00:00:07\nx\n", fileName: "movie.srt")
        }
        #expect(throws: TimedTextError(file: "movie.srt", line: 2, "the cue ends (1.0 s) before it starts (5.0 s)")) {
            try CueReader.parse("1\n00:00:05,000 --> 00:00:01,000\nx\n", fileName: "movie.srt")
        }
    }

    @Test func webVTTCuesWithWordTimings() throws {
        let text = """
        WEBVTT Kind: captions

        NOTE a comment
        over two lines

        intro
        00:01.000 --> 00:04.000 align:start position:10%
        <v Singer><c.yellow>Twinkle</c> <00:02.000><c>twinkle</c> <00:03.000>star</v>

        00:05.000 --> 00:06.000
        &lt;3 plain
        """
        let cues = try CueReader.parse(text, fileName: "song.vtt")
        #expect(cues.count == 2)
        #expect(cues[0].text == "Twinkle twinkle star" && cues[0].identifier == "intro")
        #expect(cues[0].words == [
            WordTiming(text: "Twinkle", start: time(1), end: time(2), scalars: 0..<7),
            WordTiming(text: "twinkle", start: time(2), end: time(3), scalars: 8..<15),
            WordTiming(text: "star", start: time(3), end: time(4), scalars: 16..<20),
        ])
        #expect(cues[1] == Cue(text: "<3 plain", start: time(5), end: time(6)))
        #expect(throws: TimedTextError(file: "song.vtt", line: 1, "a WebVTT file must start with a line \"WEBVTT\" (alone, or followed by a space or tab and anything)")) {
            try CueReader.parse("00:05.000 --> 00:06.000\nx\n", fileName: "song.vtt")
        }
    }

    @Test func formatByExtensionThenContent() {
        #expect(CueReader.detectFormat(fileName: "dir.v2/song.LRC", text: "") == .lrc)
        #expect(CueReader.detectFormat(fileName: "x.webvtt", text: "") == .webVTT)
        #expect(CueReader.detectFormat(fileName: "lyrics.txt", text: "\n[00:01.00]hi") == .lrc)
        #expect(CueReader.detectFormat(fileName: "subs", text: "WEBVTT\n") == .webVTT)
        #expect(CueReader.detectFormat(fileName: "subs", text: "1\n00:00:01,000 --> 00:00:02,000\n") == .srt)
        #expect(CueReader.detectFormat(fileName: "data", text: "id,lyric,start_at,end_at\n") == .csv)
    }

    // MARK: ASS / SSA

    static let ass = """
        [Script Info]
        Title: demo
        ScriptType: v4.00+

        [V4+ Styles]
        Format: Name, Fontname, Fontsize
        Style: Default,Arial,48

        [Events]
        Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
        Comment: 0,0:00:00.00,0:00:01.00,Default,,0,0,0,,not shown
        Dialogue: 0,0:00:05.00,0:00:07.00,Default,,0,0,0,,{\\b1}Hello{\\b0}, world\\Nsecond line
        Dialogue: 0,0:00:01.50,0:00:04.00,Default,,0,0,0,,{\\k50}Twin{\\kf30}kle {\\k120}star
        """

    @Test func assDialogueLinesAndKaraoke() throws {
        let cues = try CueReader.parse(Self.ass, fileName: "song.ass")
        #expect(cues.count == 2)
        let karaoke = cues[0]
        #expect(karaoke.text == "Twinkle star" && karaoke.start == time(3, 2) && karaoke.end == time(4))
        #expect(karaoke.words.map(\.text) == ["Twin", "kle", "star"])
        #expect(karaoke.words.map(\.start) == [time(3, 2), time(2), time(23, 10)])   // 1.5, +0.5, +0.3
        #expect(karaoke.words.map(\.scalars) == [0..<4, 4..<7, 8..<12])
        // Override blocks go, commas in the text stay, \N breaks the line; no karaoke, no words.
        #expect(cues[1].text == "Hello, world\nsecond line" && cues[1].start == time(5) && cues[1].words.isEmpty)
    }

    @Test func assFieldsFollowTheFormatLineAndSsaIsRecognised() throws {
        let text = "[Events]\nFormat: Start, End, Text\nDialogue: 0:00:02.00,0:00:03.50,a, b\n"
        let cues = try CueReader.parse(text, fileName: "old.ssa")
        #expect(cues == [Cue(text: "a, b", start: time(2), end: time(7, 2))])
        #expect(CueReader.detectFormat(fileName: "subs.txt", text: "[Script Info]\nTitle: x\n") == .ass)
        #expect(throws: TimedTextError(file: "bad.ass", line: 3, "End \"0:00:xx\" is not a time")) {
            try CueReader.parse("[Events]\nFormat: Start, End, Text\nDialogue: 0:00:01.00,0:00:xx,a\n", fileName: "bad.ass")
        }
    }

    @Test func aFileWithTextButNoCueIsAnError() {
        let cases: [(String, String, String)] = [
            ("empty.ass", "[Script Info]\nTitle: nothing\n", "ASS (expected Dialogue: lines in an [Events] section)"),
            ("header.csv", "id,lyric,start_at,end_at\n", "CSV (expected rows under a header with lyric, start_at and end_at columns)"),
            ("words.lrc", "[ar:someone]\njust words\n", "LRC (expected lines starting with [mm:ss.xx] time tags)"),
        ]
        for (name, text, expected) in cases {
            #expect(throws: TimedTextError(file: name, line: nil, "no cues found, read as \(expected)")) {
                try CueReader.parse(text, fileName: name)
            }
        }
        #expect((try? CueReader.parse("", fileName: "blank.srt")) == [], "an empty file is simply no cues")
        // WebVTT as players read it: a valid file whose blocks hold no cue has none.
        #expect((try? CueReader.parse("WEBVTT\n\nNOTE nothing here\n", fileName: "notes.vtt")) == [])
    }
}
