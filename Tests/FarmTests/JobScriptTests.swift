import Foundation
import MoonreelFarm
import Testing

/// A job script is a shell script that sbatch reads first: every value a user gave (a
/// file name, a column, a folder) must reach sh and sbatch as itself, never as code.
@Suite struct JobScriptTests {
    static let oddNames = [
        "plain", "with space", "it's", "say \"hi\"", "$(touch /tmp/pwned)", "`id`", "a;b&&c|d", "back\\slash", "tab\there",
        "%j %A", "*?[x]", "~root", "-n", "",
    ]

    /// What sh makes of `word` when it reads it in a command line.
    func shellReads(_ word: String) throws -> String {
        try Subprocess("/bin/sh", ["-c", "printf %s " + JobScript.shellWord(word)]).run().output
    }

    @Test func everyOddNameReachesTheShellAsItself() throws {
        for name in Self.oddNames {
            #expect(try shellReads(name) == name, "\(name)")
        }
    }

    @Test func lineBreaksAndNULsAreRefusedNamingTheValue() {
        for value in ["two\nlines", "carriage\rreturn", "nul\0byte", "line\u{2028}separator", "para\u{2029}graph", "crlf\r\nline", "vertical\u{0B}tab", "next\u{85}line"] {
            #expect(throws: BatchError.self) { try JobScript.shellWord(value) }
            #expect(throws: BatchError.self) { try JobScript.directiveWord(value) }
        }
        #expect(throws: BatchError("row 3: clip \"a\\nb\" holds a line break or a NUL, which a Slurm job script cannot carry; rename it")) {
            try JobScript.checked("a\nb", "row 3: clip")
        }
    }

    @Test func directiveValuesAreQuotedForSbatch() throws {
        #expect(try JobScript.directiveWord("/w/a \"b\" \\c") == "\"/w/a \\\"b\\\" \\\\c\"")
        var job = JobScript()
        try job.directive("partition", "gpu fast")
        #expect(job.text == "#!/bin/sh\n#SBATCH --partition=\"gpu fast\"\n")
    }

    @Test func directivesComeBeforeTheFirstCommandWhateverTheOrderTheyWereGiven() throws {
        var job = JobScript()
        job.code("echo one")
        try job.command(["/bin/echo", "it's"], prefix: "exec ")
        job.ownDirective("requeue")
        try job.comment("why")
        try job.log(to: "/logs/task-", eachTaskSuffix: ".log")
        #expect(job.text == """
            #!/bin/sh
            #SBATCH --requeue
            # why
            #SBATCH --output=/dev/null
            exec >'/logs/task-'"$SLURM_ARRAY_TASK_ID"'.log' 2>&1
            echo one
            exec '/bin/echo' 'it'\\''s'

            """)
    }

    @Test func aScriptIsWrittenWhole() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("farm-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var job = JobScript()
        job.code("exit 0")
        try job.write(to: folder + "/job.sh")
        #expect(try String(contentsOfFile: folder + "/job.sh", encoding: .utf8) == job.text)
        #expect(throws: BatchError.self) { try job.write(to: folder + "/missing/job.sh") }
    }
}
