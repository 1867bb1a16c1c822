import Foundation
import Testing
import TestSupport

/// Timed text as players read it (issue 27): WebVTT by the WHATWG algorithm, checked with
/// the web-platform-tests file-parsing suite in Tests/Fixtures/conformance-webvtt (a copy, with its sources and licence); and for every
/// format, one bad block is dropped with a note naming the file and line — never the whole
/// file, never a timing line turned into text — or, with `strict = true`, is the error.
@Suite struct TimedTextConformanceTests {
    static let suite = Moonreel.checkout + "/Tests/Fixtures/conformance-webvtt"

    @Test func theWebPlatformTestsFileParsingSuitePasses() throws {
        try #require(FileManager.default.fileExists(atPath: Self.suite + "/run.sh"), "the WebVTT suite is missing from the checkout: \(Self.suite)")
        let result = try Tool.run("/bin/bash", [Self.suite + "/run.sh"], environment: ["MOONREEL": Moonreel.executable], timeout: 600)
        let summary = result.out.split(separator: "\n").last.map(String.init) ?? ""
        let counts = summary.split(separator: " ").compactMap { Int($0) }
        #expect(counts.count == 2 && counts[0] >= 49 && counts[0] + counts[1] == 50, "\(summary)\n\(result.out.suffix(3000))")
        #expect(result.out.contains("probes: 26 passed, 0 failed"), "\(result.out.suffix(3000))")
    }

    /// Writes `text` to a scratch file named `name` and reads it with `av.readCues(path, options)`,
    /// printing each cue as "start-finish|id|text".
    func read(_ name: String, _ text: String, options: String = "{}") throws -> (status: Int32, out: String, err: String, path: String) {
        let path = Fixtures.scratchPath(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try Moonreel.runScript("""
            for _, cue in ipairs(av.readCues(arg[1], \(options))) do
              print(string.format("%g-%g|%s|%s", cue.start, cue.finish, cue.id or "", (cue.text:gsub("\\n", "/"))))
            end
            """, arguments: [path])
        return (result.status, result.out, result.err, path)
    }

    /// The typos of the issue, in one lyric file: a missing blank line before a cue (its
    /// timing line became text and the cue vanished), a missing blank line after the header
    /// (the first line was lost), seconds of 60, a stray line without timing.
    static let typos = """
        WEBVTT
        00:00:00.000 --> 00:00:01.000
        first line

        00:00:01.000 --> 00:00:02.000
        second line
        00:00:02.000 --> 00:00:03.000
        third line

        00:00:03.000 --> 00:00:60.000
        bad seconds

        just a stray line

        00:00:04.000 --> 00:00:05.000
          indented last line

        """

    @Test func aBadWebVTTBlockIsDroppedWithANoteAndStrictMakesItTheError() throws {
        let loose = try read("lyrics.vtt", Self.typos)
        #expect(loose.status == 0, "\(loose.err)")
        #expect(loose.out == "0-1||first line\n1-2||second line\n2-3||third line\n4-5||  indented last line\n", "\(loose.out)")
        // Each: "moonreel: warning: …/test.lua:1: FILE:LINE: what [cueDropped]", the readCues line first.
        let notes = loose.err.split(separator: "\n").map { $0.replacingOccurrences(of: #"^moonreel: warning: \S*test\.lua:1: "#, with: "", options: .regularExpression) }
        #expect(notes == [
            "\(loose.path):10: cue dropped: end time \"00:00:60.000\" is not a time (hh:mm:ss.ttt or mm:ss.ttt) [cueDropped]",
            "\(loose.path):13: block dropped: it has no timing line like 00:01.000 --> 00:04.000 (it starts \"just a stray line\") [cueDropped]",
        ], "\(loose.err)")
        let strict = try read("lyrics.vtt", Self.typos, options: "{ strict = true }")
        #expect(strict.status == 1)
        #expect(strict.err.hasSuffix("readCues: \(strict.path):10: end time \"00:00:60.000\" is not a time (hh:mm:ss.ttt or mm:ss.ttt)\n"), "\(strict.err)")
        #expect(strict.err.split(separator: "\n").count == 1)
    }

    @Test func srtLRCAndASSDropOneBadEntryNotTheFile() throws {
        let srt = try read("movie.srt", """
            1
            00:00:01,000 --> 00:00:02,000
            one
            2
            00:00:02,000 --> 00:00:03,000
            two

            3
            00:00:03,000 --> 00:00:6x,000
            three

            4
            00:00:04,000 --> 00:00:05,000
            four

            """)
        #expect(srt.out == "1-2|1|one\n2-3|2|two\n4-5|4|four\n", "\(srt.out) \(srt.err)")
        #expect(srt.err.hasPrefix("moonreel: warning: ") && srt.err.hasSuffix("test.lua:1: \(srt.path):9: cue dropped: end time \"00:00:6x,000\" is not a time [cueDropped]\n"), "\(srt.err)")

        let lrc = try read("song.lrc", "[00:01.00]one\n[00:1x.00]two\n[00:03.00]three\n")
        #expect(lrc.out == "1-3||one\n3-8||three\n", "\(lrc.out) \(lrc.err)")
        #expect(lrc.err.hasPrefix("moonreel: warning: ") && lrc.err.hasSuffix("test.lua:1: \(lrc.path):2: line dropped: time tag [00:1x.00] is not a time like [01:23.45] [cueDropped]\n"), "\(lrc.err)")

        let ass = try read("song.ass", "[Events]\nFormat: Start, End, Text\nDialogue: 0:00:01.00,0:00:02.00,one\nDialogue: 0:00:02.00,0:00:xx,two\nDialogue: 0:00:03.00,0:00:04.00,three\n")
        #expect(ass.out == "1-2||one\n3-4||three\n", "\(ass.out) \(ass.err)")
        #expect(ass.err.hasPrefix("moonreel: warning: ") && ass.err.hasSuffix("test.lua:1: \(ass.path):4: Dialogue line dropped: End \"0:00:xx\" is not a time [cueDropped]\n"), "\(ass.err)")
        let strict = try read("song.ass", "[Events]\nFormat: Start, End, Text\nDialogue: 0:00:02.00,0:00:xx,two\n", options: "{ strict = true }")
        #expect(strict.status == 1 && strict.err.contains(":3: End \"0:00:xx\" is not a time"), "\(strict.err)")
    }

    /// A "<" that opens no tag is text in SRT and LRC ("I <3 you" was drawn "I I <3 you":
    /// the words before it twice), and so is one that opens no SRT tag ("a < b and c > d" lost
    /// "b and c"); WebVTT reads it as a tag, as its tokenizer does, and now says so. Character
    /// references are decoded, numeric ones too (`&#39;`, in files converted from YouTube's
    /// timed text, was drawn as written).
    @Test func aSignThatOpensNoTagIsTextAndReferencesAreDecoded() throws {
        let srt = try read("signs.srt", "1\n00:00:00,500 --> 00:00:03,500\nI <3 you\n\n2\n00:00:04,000 --> 00:00:05,000\n"
                           + "a < b and c > d <i>it</I> <font color=\"red\">&#39;q&#x27;</font> &mdash; &bogus; Tom & Jerry\n")
        #expect(srt.out == "0.5-3.5|1|I <3 you\n4-5|2|a < b and c > d it 'q' \u{2014} &bogus; Tom & Jerry\n", "\(srt.out) \(srt.err)")
        #expect(srt.err.isEmpty, "\(srt.err)")
        let lrc = try read("signs.lrc", "[00:00.50]I <3 you\n[00:02.00]<00:02.00>so <00:02.50>long\n")
        #expect(lrc.out == "0.5-2||I <3 you\n2-7||so long\n", "\(lrc.out) \(lrc.err)")
        let vtt = try read("signs.vtt", "WEBVTT\n\n00:00.000 --> 00:04.000\ndon&#39;t stop &#8212; a &lt; b <c.yellow>y</c>\n\n00:04.000 --> 00:05.000\nI <3 you\n")
        #expect(vtt.out == "0-4||don't stop \u{2014} a < b y\n4-5||I \n", "\(vtt.out) \(vtt.err)")
        #expect(vtt.err.hasSuffix(":6: text left out: \"<3 you\" is read as a tag, as WebVTT reads what follows a \"<\"; write &lt; for the sign [cueDropped]\n"), "\(vtt.err)")
    }

    /// LRC lines with a bracket missing or a letter for a digit vanished without a word (and
    /// the line before stayed on over them); each is now dropped with a note. `[mm:ss:xx]`
    /// (hundredths after a colon, as some editors write) was read as hours: 170 s for
    /// [00:02:50]. A line after the song's `duration` made the whole file an error, and so
    /// did one that `[offset:]` moves before 0 s: the first is kept, never shown and said so,
    /// the second starts at 0 s with a note.
    @Test func anLRCLineWithABrokenTimeTagIsDroppedWithANote() throws {
        let typos = try read("typos.lrc", "[ar:Someone]\n[00:01.00]one\n00:02.00]missing bracket\n[O0:03.00]letter O\n[00:04.00 missing close\n[00:06.00]six\n[00:07:50]hundredths\n")
        #expect(typos.out == "1-6||one\n6-7.5||six\n7.5-12.5||hundredths\n", "\(typos.out) \(typos.err)")
        let dropped = typos.err.split(separator: "\n").filter { $0.contains("[cueDropped]") }
        let said = [":3: line dropped: it has no time tag like [01:23.45] (it reads \"00:02.00]missing bracket\")",
                    ":4: line dropped: time tag [O0:03.00] is not a time", ":5: line dropped: it has no time tag"]
        #expect(dropped.count == 3 && said.allSatisfy { line in dropped.contains { $0.contains(line) } }, "\(typos.err)")
        let late = try read("late.lrc", "[00:01.00]one\n[00:02.00]two\n[00:30.00]late line\n", options: "{ duration = 4 }")
        #expect(late.status == 0 && late.out.hasSuffix("30-35||late line\n") && late.err.contains("starts after the video ends (0:04.00): it is never shown [cueHidden]"), "\(late.out) \(late.err)")
        let early = try read("early.lrc", "[offset:+500]\n[00:00.20]early\n[00:01.00]next\n")
        #expect(early.status == 0 && early.out == "0-0.5||early\n0.5-5.5||next\n" && early.err.contains(":2: the line would start at -0.3 s once [offset:] is applied, so it starts at 0 s [cueHidden]"), "\(early.out) \(early.err)")
    }

    /// An ASS line's drawing (`{\p1}` vector commands `{\p0}`, a logo shape) was drawn as
    /// its commands, "m 0 0 l 100 0…", as words: it is left out, with a note.
    @Test func anASSDrawingIsLeftOutWithANote() throws {
        let ass = try read("logo.ass", "[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
                           + "Dialogue: 0,0:00:00.50,0:00:02.00,Default,,0,0,0,,{\\p1}m 0 0 l 100 0 100 100 0 100{\\p0}logo {\\pos(10,10)}here\n")
        #expect(ass.out == "0.5-2||logo here\n", "\(ass.out) \(ass.err)")
        #expect(ass.err.hasSuffix(":3: the line's drawing ({\\p1}…{\\p0}, a vector shape) is not drawn: it is left out of the text [cueDropped]\n"), "\(ass.err)")
    }
}
