import MoonreelFarm
import Testing

/// Which rows a batch runs, with which values and outputs, and what it refuses before
/// anything runs; no template is run (its parameter names are given).
@Suite struct BatchPlanTests {
    static let declared = ["clip", "duration", "output"]

    func plan(_ records: [[String: String]], pattern: String = "out/{id}.mp4", shared: [String: String] = [:],
              declared: [String] = Self.declared) throws -> BatchPlan {
        try BatchPlan(template: "trim.lua", declared: declared, rowsFile: "rows.csv", records: { records }, pattern: pattern, shared: shared)
    }

    func refusal(_ make: () throws -> BatchPlan) -> String? {
        do {
            _ = try make()
            return nil
        } catch let error as BatchError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func rowsAreNumberedFromOneAndTakeOnlyTheDeclaredColumns() throws {
        let plan = try plan([["id": "a", "clip": "a.mp4", "note": "not declared"], ["id": "b", "clip": "b.mp4", "duration": "2"]],
                            shared: ["duration": "5"])
        #expect(plan.rows == [
            BatchPlan.Row(number: 1, output: "out/a.mp4", values: ["clip": "a.mp4", "duration": "5", "output": "out/a.mp4"]),
            BatchPlan.Row(number: 2, output: "out/b.mp4", values: ["clip": "b.mp4", "duration": "2", "output": "out/b.mp4"]),
        ])
    }

    /// An empty cell gives nothing: the row gets the `--set` value or the default, said in a
    /// note, or a warning when there is neither. It was passed as "": a title left out of a
    /// row rendered empty where the template's default is "Untitled", "done" with nothing said.
    /// A required parameter's empty cell is passed, for the template to refuse by name.
    @Test func anEmptyCellGivesTheDefaultAndSaysSo() throws {
        let records = [["id": "a", "clip": "a.mp4", "duration": "2", "title": "Hi", "note": "x"],
                       ["id": "b", "clip": "", "duration": "", "title": " ", "note": ""],
                       ["id": "c", "clip": "c.mp4", "duration": "", "title": "", "note": ""]]
        let plan = try BatchPlan(template: "t.lua", declared: ["clip", "duration", "title", "note", "output"], rowsFile: "rows.csv", records: { records },
                                 pattern: "{id}.mp4", shared: ["note": "shared"], defaults: ["duration": "1", "note": "\"\""], required: ["clip"])
        #expect(plan.rows.map(\.values) == [["clip": "a.mp4", "duration": "2", "title": "Hi", "note": "x", "output": "a.mp4"],
                                            ["clip": "", "note": "shared", "output": "b.mp4"],
                                            ["clip": "c.mp4", "note": "shared", "output": "c.mp4"]])
        #expect(plan.diagnostics.map(\.summary) == [
            "note: column \"duration\" is empty in rows 2, 3 of rows.csv, so they get duration's default, 1 [optionIgnored]",
            "note: column \"note\" is empty in rows 2, 3 of rows.csv, so they get --set note=shared [optionIgnored]",
            "warning: column \"title\" is empty in rows 2, 3 of rows.csv, and title has no default: those rows render without it (fill the cells, or give title a default) [optionIgnored]",
        ], "\(plan.diagnostics.map(\.summary))")
    }

    @Test func aRowsOutputColumnNeverOverridesItsOutput() throws {
        let plan = try plan([["id": "a", "output": "/etc/passwd"]])
        #expect(plan.rows.first?.values["output"] == "out/a.mp4")
    }

    @Test func runArgumentsSetEveryValueInNameOrderThenTheTemplate() throws {
        let row = try #require(try plan([["id": "a", "clip": "a.mp4", "duration": "1"]]).rows.first)
        #expect(row.runArguments(template: "t.lua") == ["--set", "clip=a.mp4", "--set", "duration=1", "--set", "output=out/a.mp4", "--", "t.lua"])
    }

    @Test func aTemplateWithoutAnOutputParameterIsRefusedBeforeTheRowsAreRead() {
        var read = false
        let message = refusal {
            try BatchPlan(template: "trim.lua", declared: ["clip"], rowsFile: "rows.csv", records: { read = true; return [] }, pattern: "{id}")
        }
        #expect(message?.hasPrefix("trim.lua declares no parameter \"output\"") == true, "\(message ?? "")")
        #expect(!read)
    }

    @Test func sharedValuesMustBeDeclaredAndCannotBeTheOutput() {
        #expect(refusal { try plan([["id": "a"]], shared: ["speed": "2"]) } == "--set speed: trim.lua declares no parameter speed (it declares clip, duration, output)")
        #expect(refusal { try plan([["id": "a"]], shared: ["output": "x.mp4"]) } == "--set output: each row's output comes from --out")
    }

    @Test func everyRowProblemIsSaidAtOnceWithItsNumber() {
        let message = refusal { try plan([["id": "a"], ["id": "a"], ["id": "../up"], ["name": "x"], ["id": "b"]]) }
        #expect(message == """
            3 problems before anything ran:
              rows 1 and 2 both write out/a.mp4
              row 3: column id is "../up", which cannot be part of a file name
              row 4: --out names column {id}, which this row does not have (columns: name)
            """)
    }

    @Test func noRowsIsRefused() {
        #expect(refusal { try plan([]) } == "rows.csv has no rows")
    }

    @Test func outputPatternsFillEachColumnAndRefuseWhatLeavesTheFolder() throws {
        #expect(try BatchPlan.output("out/{id}-{lang}.mp4", ["id": "7", "lang": "fr"]) == "out/7-fr.mp4")
        #expect(try BatchPlan.output("plain.mp4", [:]) == "plain.mp4")
        for value in ["", ".", "..", "a/b", "a\0b"] {
            #expect(throws: BatchError.self) { try BatchPlan.output("{id}.mp4", ["id": value]) }
        }
        #expect(throws: BatchError("--out has a { without }")) { try BatchPlan.output("out/{id.mp4", ["id": "1"]) }
    }

    @Test func runOptionsAreWordsInTheCommandsOrder() {
        let options = RunOptions(memoryLimit: 512, timeLimit: 30, overwrite: true, strict: true)
        #expect(options.arguments() == ["--memory-limit", "512", "--time-limit", "30.0", "--overwrite", "--strict"])
        #expect(options.arguments(progress: "none") == ["--memory-limit", "512", "--progress", "none", "--time-limit", "30.0", "--overwrite", "--strict"])
        #expect(RunOptions(memoryLimit: 2048).arguments() == ["--memory-limit", "2048"])
    }
}

/// How a batch's rows are shared among its check processes, and what a check process's
/// answers say; no check is run.
@Suite struct BatchCheckTests {
    func check(processes: Int) -> BatchCheck {
        BatchCheck(executable: "/opt/moonreel", template: "t.lua", options: RunOptions(memoryLimit: 256), processes: processes)
    }

    func rows(_ count: Int) -> [BatchPlan.Row] {
        (0..<count).map { BatchPlan.Row(number: $0 + 1, output: "\($0).mp4", values: [:]) }
    }

    @Test func rowsAreSharedInOrderAmongAtMostOneProcessPerCore() {
        #expect(check(processes: 2).shares(rows(5)).map { $0.map(\.number) } == [[1, 2, 3], [4, 5]])
        #expect(check(processes: 4).shares(rows(2)).map { $0.map(\.number) } == [[1], [2]])
        #expect(check(processes: 3).shares(rows(7)).map(\.count) == [3, 3, 1])
        #expect(check(processes: 0).shares(rows(3)).map(\.count) == [3])
        #expect(check(processes: 2).shares([]).isEmpty)
    }

    @Test func aCheckProcessAnswersForEachRowItChecked() {
        let (answered, problems) = BatchCheck.answers(in: """
            {"row": 1}
            moonreel: a note, not an answer
            {"row": 3, "error": "t.lua:4: clip not found"}
            {"error": "no row"}
            """)
        #expect(answered == [1, 3])
        #expect(problems.map(\.row) == [3] && problems.map(\.problem) == ["t.lua:4: clip not found"])
    }
}
