import Foundation
import Testing
import TestSupport

/// Issue 23 §2: `moonreel batch TEMPLATE ROWS --out PATTERN` on one machine — every row
/// checked first, rows as processes, resumable, retries, a JSON report, events with the row.
@Suite struct BatchTests {
    /// A trim template: a clip's range to `output`; with `flaky`, the first render of a row
    /// fails once (after the dry run, in the export's progress callback).
    static let template = """
        local p = av.parameters{
          { name = "clip", type = "string", required = true },
          { name = "start", type = "number", default = 0, min = 0 },
          { name = "duration", type = "number", default = 1, min = 0.1 },
          { name = "flaky", type = "string", default = "" },
          { name = "output", type = "string", required = true },
        }
        local asset = av.asset(p.clip)
        local comp = av.composition()
        comp:insertTimeRange(av.range(p.start, p.duration), asset, 0)
        local session = av.exportSession(comp, "LowQuality")
        session.outputURL = p.output
        local ok, err = session:export{ progress = function()
          if p.flaky ~= "" and not io.open(p.flaky) then
            io.open(p.flaky, "w"):close()
            error("a passing failure", 0)
          end
        end }
        if not ok then error(err, 0) end
        """

    struct Job {
        let folder, template, rows: String

        init(rows csv: String) throws {
            template = Fixtures.scratchPath("trim.lua")
            folder = (template as NSString).deletingLastPathComponent
            try BatchTests.template.write(toFile: template, atomically: true, encoding: .utf8)
            rows = folder + "/rows.csv"
            try csv.write(toFile: rows, atomically: true, encoding: .utf8)
        }

        func batch(_ options: [String]) throws -> Moonreel.Result {
            try Moonreel.run(["batch", template, rows, "--out", folder + "/out/{id}.mp4"] + options)
        }

        func output(_ id: String) -> String { folder + "/out/\(id).mp4" }

        func report(_ name: String = "report.json") throws -> [String: Any] {
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))) as? [String: Any] ?? [:]
        }
    }

    /// `batch --chunks`: each row's export rendered in pieces here, joined whole.
    @Test func rowsInPieces() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let job = try Job(rows: "id,clip,start,duration\n" + (1...2).map { "r\($0),\(clip),\($0),3" }.joined(separator: "\n") + "\n")
        let result = try job.batch(["--chunks", "3", "--jobs", "2"])
        #expect(result.status == 0, "\(result.err)")
        for row in 1...2 {
            let keyframes = try Tool.packets(job.output("r\(row)")).enumerated().filter { $0.element.isKeyframe }.map(\.offset)
            #expect(try Tool.ffprobe(job.output("r\(row)")).streams.first { $0.codec_type == "video" }?.frameCount == 90)
            #expect(keyframes.contains(30) && keyframes.contains(60), "row \(row): three pieces of 30 frames: \(keyframes)")
        }
    }

    /// `batch --chunks`: a row's warnings, said by its pieces, are in its row of the report
    /// (they were lost with the pieces' logs: 0 warnings).
    @Test func aRowInPiecesKeepsItsWarnings() throws {
        let clip = Fixtures.real("11_vp9_odd_161x121.webm")
        let job = try Job(rows: "id,clip,start,duration\nodd,\(clip),0,1\n")
        let result = try job.batch(["--chunks", "2", "--report", job.folder + "/report.json"])
        #expect(result.status == 0, "\(result.err)")
        let row = (try job.report()["rows"] as? [[String: Any]])?.first
        let kinds = (row?["diagnostics"] as? [[String: Any]] ?? []).map { $0["kind"] as? String }
        #expect(kinds == ["sizeRounded"], "\(row ?? [:])")
    }

    @Test func rendersEveryRowAndResumesWhereItStopped() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let job = try Job(rows: "id,clip,start,duration,note\n" + (1...5).map { "r\($0),\(clip),\(Double($0 - 1) * 0.5),\(Double($0) * 0.5),anything" }.joined(separator: "\n") + "\n")
        let first = try job.batch(["--report", job.folder + "/report.json", "--jobs", "2"])
        #expect(first.status == 0, "\(first.err)")
        for row in 1...5 {
            let probe = try Tool.ffprobe(job.output("r\(row)"))
            #expect(abs((Double(probe.format.duration ?? "") ?? 0) - Double(row) * 0.5) < 0.08, "row \(row)")
        }
        var report = try job.report()
        #expect((report["totals"] as? [String: Any])?["done"] as? Int == 5)
        // Gone again, as after a batch stopped half way: only that row runs.
        try FileManager.default.removeItem(atPath: job.output("r3"))
        let before = try FileManager.default.attributesOfItem(atPath: job.output("r1"))[.modificationDate] as? Date
        let second = try job.batch(["--report", job.folder + "/report.json"])
        #expect(second.status == 0, "\(second.err)")
        report = try job.report()
        #expect((report["totals"] as? [String: Any])?["done"] as? Int == 1)
        #expect((report["totals"] as? [String: Any])?["skipped"] as? Int == 4)
        #expect(try FileManager.default.attributesOfItem(atPath: job.output("r1"))[.modificationDate] as? Date == before)
        #expect(FileManager.default.fileExists(atPath: job.output("r3")))
    }

    @Test func everyProblemIsReportedBeforeAnythingRenders() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let job = try Job(rows: "id,clip,start,duration\nok,\(clip),0,1\nnofile,missing.mp4,0,1\nlate,\(clip),9,1\nshort,\(clip),0,-2\n")
        let result = try job.batch(["--report", job.folder + "/report.json"])
        #expect(result.status == 1)
        #expect(result.err.contains("3 of 4 rows cannot run; nothing was rendered"), "\(result.err)")
        // The report says so too (it was not written): the rows that cannot run failed the
        // check, with why; the row that could run was held back.
        let rows = try job.report()["rows"] as? [[String: Any]] ?? []
        #expect(rows.map { $0["status"] as? String } == ["held", "failed", "failed", "failed"], "\(rows)")
        #expect(rows.dropFirst().allSatisfy { ($0["error"] as? [String: Any])?["kind"] as? String == "check" })
        #expect(((rows.last?["error"] as? [String: Any])?["message"] as? String)?.contains("parameter duration must be a number ≥ 0.1, got -2") == true)
        #expect(result.err.contains("row 2: ") && result.err.contains("missing.mp4"))
        #expect(result.err.contains("row 3: ") && result.err.contains("outside the asset"))
        #expect(result.err.contains("row 4: ") && result.err.contains("parameter duration must be a number ≥ 0.1, got -2"))
        #expect(!FileManager.default.fileExists(atPath: job.output("ok")), "nothing rendered")

        let clash = try Job(rows: "id,clip\na,\(clip)\nb,\(clip)\na,\(clip)\n")
        let refused = try clash.batch([])
        #expect(refused.status == 1 && refused.err.contains("rows 1 and 3 both write"), "\(refused.err)")
        let escape = try Job(rows: "id,clip\n../../x,\(clip)\n")
        #expect(try escape.batch([]).err.contains("cannot be part of a file name"))
    }

    /// Done means right: a header's `Duration` for the parameter `duration` was dropped in
    /// silence, and every row rendered the default. It is a warning naming the column and the
    /// parameter meant (in the report too), a column no row uses is a note, and `--strict`
    /// runs nothing.
    @Test func aMistypedColumnIsAWarningAndStrictRunsNothing() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let job = try Job(rows: "id,clip,Duration,note\nr1,\(clip),3,anything\n")
        let result = try job.batch(["--report", job.folder + "/report.json"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("warning: \(job.rows):1: column \"Duration\" is no parameter of \(job.template) and no row gives duration")
                && result.err.contains("did you mean duration?") && result.err.contains("[optionIgnored]"), "\(result.err)")
        #expect(result.err.contains("note: \(job.rows):1: column \"note\" is no parameter"), "\(result.err)")
        let seconds = Double(try Tool.ffprobe(job.output("r1")).format.duration ?? "") ?? 0
        #expect(abs(seconds - 1) < 0.08, "the default duration, as the warning says: \(seconds)")
        let diagnostics = try job.report()["diagnostics"] as? [[String: Any]] ?? []
        #expect(diagnostics.map { $0["level"] as? String } == ["warning", "note"], "\(diagnostics)")
        #expect(diagnostics.first?["kind"] as? String == "optionIgnored" && diagnostics.first?["line"] as? Int == 1)

        try FileManager.default.removeItem(atPath: job.output("r1"))
        let strict = try job.batch(["--report", job.folder + "/report.json", "--strict"])
        #expect(strict.status == 1 && strict.err.contains("--strict: nothing was run"), "\(strict.err)")
        #expect(!FileManager.default.fileExists(atPath: job.output("r1")))
        #expect((try job.report()["rows"] as? [[String: Any]])?.map { $0["status"] as? String } == ["held"])
    }

    /// A row whose duration cell is empty gets the template's default (1 s), with a note in
    /// the run and the report; it was passed as "" and the row failed ("must be a number").
    @Test func anEmptyCellGetsTheDefaultWithANote() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let job = try Job(rows: "id,clip,duration\nr1,\(clip),3\nr2,\(clip),\n")
        let result = try job.batch(["--report", job.folder + "/report.json"])
        #expect(result.status == 0 && result.err.contains("note: column \"duration\" is empty in row 2 of \(job.rows), so it gets duration's default, 1 [optionIgnored]"),
                "\(result.err)")
        let seconds = Double(try Tool.ffprobe(job.output("r2")).format.duration ?? "") ?? 0
        #expect(abs(seconds - 1) < 0.08, "the default duration, as the note says: \(seconds)")
        let diagnostics = try job.report()["diagnostics"] as? [[String: Any]] ?? []
        #expect(diagnostics.contains { ($0["message"] as? String)?.contains("is empty in row 2") == true }, "\(diagnostics)")
    }

    /// JSON rows each have their own keys: row 2's `Duration`, while the others give
    /// `duration`, went unwarned (the warning looked only for a parameter no row gives) and
    /// the row rendered the default, even under --strict.
    @Test func aKeyMistypedInOneJSONRowIsAWarningNamingTheRow() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let job = try Job(rows: "")
        let rows = job.folder + "/rows.json"
        try #"[{"id": "a", "clip": "\#(clip)", "duration": 2}, {"id": "b", "clip": "\#(clip)", "Duration": 0.5}]"#
            .write(toFile: rows, atomically: true, encoding: .utf8)
        let arguments = ["batch", job.template, rows, "--out", job.folder + "/out/{id}.mp4"]
        let strict = try Moonreel.run(arguments + ["--strict"])
        #expect(strict.status == 1 && strict.err.contains("--strict: nothing was run"), "\(strict.err)")
        #expect(strict.err.contains("row 2 of \(rows): \"Duration\" is no parameter of \(job.template) and the row gives no duration")
                && strict.err.contains("did you mean duration?"), "\(strict.err)")
        #expect(!FileManager.default.fileExists(atPath: job.output("a")))
        let warned = try Moonreel.run(arguments)
        #expect(warned.status == 0 && warned.err.contains("row 2 of \(rows): \"Duration\""), "\(warned.err)")
        #expect(!warned.err.contains("no row uses it"), "the warning, not a note as well: \(warned.err)")
    }

    /// `--jobs` counts processes on this machine; with `--slurm` it was accepted and ignored.
    @Test func jobsIsRefusedWithSlurm() throws {
        let batch = try Moonreel.run(["batch", "--slurm", "--jobs", "2", "t.lua", "rows.csv", "--out", "out/{id}.mp4"])
        #expect(batch.status != 0 && batch.errorLines.contains { $0.contains("--jobs") && $0.contains("give --max-running") }, "\(batch.err)")
        let chunks = try Moonreel.run(["run", "--chunks", "2", "--slurm", "--jobs", "2", "t.lua"])
        #expect(chunks.status != 0 && chunks.errorLines.contains { $0.contains("--jobs") && $0.contains("give fewer --chunks") }, "\(chunks.err)")
    }

    /// Issue 35 §15: the pre-check ran a process per row (~2 h for 100k rows). One
    /// `check-rows` process per core dry-runs its share, answering for every row, each in a
    /// fresh host: a row's globals do not reach the next (bench/RESULTS.md has the times).
    @Test func rowsAreCheckedManyToAProcess() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let job = try Job(rows: "id,clip\nr1,\(clip)\n")
        let folder = (job.rows as NSString).deletingLastPathComponent
        let template = folder + "/leaky.lua"
        try """
            local p = av.parameters{ { name = "clip", type = "string", required = true }, { name = "output", type = "string", required = true } }
            assert(not seen, "a global of the row before")
            seen = true
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 1), av.asset(p.clip), 0)
            local session = av.exportSession(comp, "MediumQuality")
            session.outputURL = p.output
            assert(session:export())
            """.write(toFile: template, atomically: true, encoding: .utf8)
        let rows = folder + "/rows.json"
        try #"[{"row": 1, "values": {"clip": "\#(clip)", "output": "\#(folder)/a.mp4"}}, {"row": 2, "values": {"clip": "missing.mp4", "output": "\#(folder)/b.mp4"}}, {"row": 3, "values": {"clip": "\#(clip)", "output": "\#(folder)/c.mp4"}}]"#
            .write(toFile: rows, atomically: true, encoding: .utf8)
        let checked = try Moonreel.run(["check-rows", "--", template, rows])
        let lines = checked.out.split(separator: "\n").map(String.init)
        #expect(checked.status == 0 && lines.count == 3, "\(checked.out)\(checked.err)")
        #expect(lines.first == #"{"row":1}"# && lines.last == #"{"row":3}"#, "\(lines)")
        #expect(lines.dropFirst().first?.contains("missing.mp4") == true, "\(lines)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/a.mp4"), "a dry run writes nothing")
    }

    @Test func aFailedRowIsRetriedAndReportedWithItsError() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let once = try Job(rows: "id,clip,flaky\nx,\(clip),\(NSTemporaryDirectory())flaky-\(UUID().uuidString)\n")
        let retried = try once.batch(["--retry", "1", "--report", once.folder + "/report.json"])
        #expect(retried.status == 0, "\(retried.err)")
        let row = (try once.report()["rows"] as? [[String: Any]])?.first
        #expect(row?["status"] as? String == "done" && row?["attempts"] as? Int == 2, "\(String(describing: row))")

        let never = try Job(rows: "id,clip,flaky\ny,\(clip),\(NSTemporaryDirectory())flaky-\(UUID().uuidString)\n")
        let failed = try never.batch(["--report", never.folder + "/report.json", "--progress", "json"])
        #expect(failed.status == 1)
        let entry = (try never.report()["rows"] as? [[String: Any]])?.first
        let error = entry?["error"] as? [String: Any]
        #expect(entry?["status"] as? String == "failed")
        #expect(error?["message"] as? String == "a passing failure", "\(String(describing: error))")
        #expect(error?["kind"] as? String == "renderFailed", "\(String(describing: error))")
        #expect((error?["file"] as? String)?.hasSuffix("trim.lua") == true && error?["line"] as? Int == 13, "\(String(describing: error))")
        let events = failed.out.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(events.contains { $0["event"] as? String == "error" && $0["row"] as? Int == 1 })
        #expect(events.last?["event"] as? String == "row" && events.last?["status"] as? String == "failed")
        #expect(!FileManager.default.fileExists(atPath: never.output("y")), "no partial output")
    }

    /// The example template in a batch: parts of one video, each with its own lyrics.
    @Test func theLyricsTemplateMakesOneVideoPerRow() throws {
        let clip = try Fixtures.solid("0x404040", seconds: 4, size: "640x360")
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        try "id,lyric,start_at,end_at\n1,WHITE WORDS,0.0,4.0\n".write(toFile: folder + "/song.csv", atomically: true, encoding: .utf8)
        try "id,video,lyrics,start,duration\na,\(clip),\(folder)/song.csv,0,2\nb,\(clip),\(folder)/song.csv,1.5,2.5\n"
            .write(toFile: folder + "/rows.csv", atomically: true, encoding: .utf8)
        let result = try Moonreel.run(["batch", Moonreel.example("lyrics_template.lua"), folder + "/rows.csv", "--out", folder + "/{id}.mp4"])
        #expect(result.status == 0, "\(result.err)")
        for (id, seconds) in [("a", 2.0), ("b", 2.5)] {
            let output = folder + "/\(id).mp4"
            #expect(abs((Double(try Tool.ffprobe(output).format.duration ?? "") ?? 0) - seconds) < 0.08)
            let frame = try Tool.rgbFrame(output, at: 1)
            let bright = (0..<frame.width).filter { x in (frame.height * 2 / 3..<frame.height).contains { frame.pixel(x, $0).r > 200 } }.count
            #expect(bright > 50, "the lyric line in the bottom third of \(id)")
        }
    }
}
