@testable import MoonreelEngine
@testable import MoonreelComposition
import Testing

@Suite struct CSVReaderTests {
    @Test func quotedFieldsBOMAndCRLF() throws {
        let text = "\u{FEFF}id,lyric,start_at,end_at\r\n1,\"Hello, world\",1.5,3\r\n2,\"He said \"\"hi\"\"\r\nnext line\",12.5,15\r\n\r\n3,君の名は,60,62\n"
        let table = try CSVReader.parse(text, fileName: "lyrics.csv")
        #expect(table.header == ["id", "lyric", "start_at", "end_at"])
        #expect(table.rows.map { $0["lyric"] } == ["Hello, world", "He said \"hi\"\r\nnext line", "君の名は"])
        #expect(table.rows[2]["id"] == "3")
        // Row 2 spans lines 3–4; the empty line 5 is skipped.
        #expect(table.rowLines == [2, 3, 6])
    }

    @Test func lastRecordWithoutLineBreakAndEmptyFields() throws {
        let table = try CSVReader.parse("a,b\n,\"\"\nx,y", fileName: "t.csv")
        #expect(table.rows == [["a": "", "b": ""], ["a": "x", "b": "y"]])
    }

    @Test func errorsNameTheLine() {
        #expect(throws: TimedTextError(file: "lyrics.csv", line: 3, "a quoted field is not closed (missing \")")) {
            try CSVReader.parse("id,lyric\n1,ok\n2,\"never closed\n3,x\n", fileName: "lyrics.csv")
        }
        #expect(throws: TimedTextError(file: "lyrics.csv", line: 3, "row has 3 fields but the header has 2 (a comma in a field needs the field in double quotes)")) {
            try CSVReader.parse("id,lyric\n1,ok\n2,a,b\n", fileName: "lyrics.csv")
        }
        #expect(throws: TimedTextError(file: "lyrics.csv", line: 2, "unexpected text after a closing quote (write \"\" for a quote inside a field)")) {
            try CSVReader.parse("id,lyric\n1,\"a\"b\n", fileName: "lyrics.csv")
        }
        #expect(throws: TimedTextError(file: "t.csv", line: 1, "the header names column \"a\" twice")) {
            try CSVReader.parse("a, a\n1,2\n", fileName: "t.csv")
        }
        #expect(throws: TimedTextError(file: "t.csv", line: 1, "is empty: a header row is needed")) {
            try CSVReader.parse("\n\n", fileName: "t.csv")
        }
        #expect("\(TimedTextError(file: "a.csv", line: 7, "bad"))" == "a.csv:7: bad")
    }

    @Test func readsAFileAndReportsAMissingOne() throws {
        let path = "/tmp/moonreel-csv-test-\(getpid()).csv"
        let bytes = Array("\u{FEFF}lyric,start_at,end_at\r\nおはよう,0:01.25,2\r\n".utf8)
        let file = try #require(fopen(path, "wb"))
        fwrite(bytes, 1, bytes.count, file)
        fclose(file)
        defer { unlink(path) }
        let cues = try CueReader.read(path: path)
        #expect(cues == [Cue(text: "おはよう", start: MediaTime(value: 5, timescale: 4), end: MediaTime(value: 2, timescale: 1))])
        #expect(throws: TimedTextError(file: "/nonexistent/x.csv", line: nil, "cannot open: No such file or directory")) {
            try CSVReader.read(path: "/nonexistent/x.csv")
        }
    }

    @Test func invalidUTF8IsRefused() {
        #expect(throws: TimedTextError(file: "x.csv", line: 2, "is not valid UTF-8 text")) {
            try TextFile.decode(Array("a,b\n".utf8) + [0xFF, 0x41], fileName: "x.csv")
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
