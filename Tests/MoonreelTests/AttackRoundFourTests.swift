import Foundation
import MoonreelPlatform
import Testing
import TestSupport

/// Issue 35, the fourth attack round: what it found on the chunked, batch and Slurm paths,
/// each reproduced here as the attacker (or a user on a bad day) did it.
@Suite struct AttackRoundFourTests {
    /// A project folder of its own whose name a shell would run: `$(id>PWNED)`.
    static func hostileFolder() throws -> String {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent + "/My Videos $(id>PWNED) 'q' \"d\" \\b"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Every file named PWNED under `folder`: what an injected command would leave.
    static func planted(under folder: String) -> [String] {
        (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? []).filter { $0.hasSuffix("PWNED") }
    }

    /// §1: `--chunk-folder` naming the user's own folder (as `"$PWD"`) removed it with every
    /// file in it, the output included, exit 0. Now such a folder is refused and untouched.
    @Test func aChunkFolderHoldingTheUsersFilesIsRefusedAndKept() throws {
        let job = try ChunkedRenderTests.Job(clip: try Fixtures.clip(seconds: 2))
        let project = job.path("project")
        try FileManager.default.createDirectory(atPath: project, withIntermediateDirectories: true)
        try "my notes".write(toFile: project + "/notes.txt", atomically: true, encoding: .utf8)
        let result = try job.run("project/out.mp4", ["--chunks", "2", "--chunk-folder", project])
        #expect(result.status == 1)
        #expect(result.errorLines.count == 1 && result.err.contains("already holds files Moonreel did not make"), "\(result.err)")
        #expect(try String(contentsOfFile: project + "/notes.txt", encoding: .utf8) == "my notes")
        #expect(try FileManager.default.contentsOfDirectory(atPath: project) == ["notes.txt"], "nothing written, nothing removed")
    }

    /// An empty folder is taken, and once joined only what the tasks made there is removed:
    /// the output written into the same folder stays.
    @Test func aChunkRunRemovesOnlyWhatItMade() throws {
        let job = try ChunkedRenderTests.Job(clip: try Fixtures.clip(seconds: 2))
        let work = job.path("work")
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let result = try job.run("work/out.mp4", ["--chunks", "2", "--chunk-folder", work])
        #expect(result.status == 0, "\(result.err)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work) == ["out.mp4"], "the output stays; logs, scripts and the mark are gone")
        #expect(try Tool.ffprobe(work + "/out.mp4").streams.first { $0.codec_type == "video" }?.frameCount == 60)
    }

    /// §2: `--report package.json` replaced any file whose text starts with `{`. A file that is
    /// not a batch report is refused before any row runs, and kept.
    @Test func aReportNeverReplacesAFileThatIsNotOne() throws {
        let clip = try Fixtures.clip(seconds: 2)
        let job = try BatchTests.Job(rows: "id,clip,duration\nr1,\(clip),0.5\n")
        let package = job.folder + "/package.json"
        let text = "{\"name\": \"my-site\", \"version\": \"1.0.0\"}\n"
        try text.write(toFile: package, atomically: true, encoding: .utf8)
        let refused = try job.batch(["--report", package])
        #expect(refused.status == 1)
        #expect(refused.err.contains("is not a batch report") && refused.err.contains("--overwrite"), "\(refused.err)")
        #expect(try String(contentsOfFile: package, encoding: .utf8) == text)
        #expect(!FileManager.default.fileExists(atPath: job.output("r1")), "refused before any row ran")
        // A report of an earlier run of the batch is its own to replace (running again resumes).
        let report = job.folder + "/report.json"
        #expect(try job.batch(["--report", report]).status == 0)
        let again = try job.batch(["--report", report])
        #expect(again.status == 0, "\(again.err)")
        #expect((try job.report()["totals"] as? [String: Any])?["skipped"] as? Int == 1)
    }

    /// §3: a symlink planted at the report's temporary name (`.report.json.tmp-PID`, the PID
    /// known to whoever starts the batch) was followed and its target overwritten.
    @Test func aLinkAtTheReportsOldTemporaryNameIsNotFollowed() throws {
        let clip = try Fixtures.clip(seconds: 2)
        let job = try BatchTests.Job(rows: "id,clip,duration\nr1,\(clip),0.5\n")
        let victim = job.folder + "/victim.txt"
        try "precious".write(toFile: victim, atomically: true, encoding: .utf8)
        // `exec` keeps the shell's PID, so the link is planted at exactly the name the old code used.
        let result = try Tool.run("/bin/sh", ["-c", "ln -s \"$1\" \"$2/.report.json.tmp-$$\" && exec \"$0\" batch \"$3\" \"$4\" --out \"$2/out/{id}.mp4\" --report \"$2/report.json\"",
                                              Moonreel.executable, victim, job.folder, job.template, job.rows])
        #expect(result.status == 0, "\(result.err)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        #expect((try job.report()["totals"] as? [String: Any])?["done"] as? Int == 1)
    }

    /// Below the batch: the one writer of small files takes a temporary name nobody can
    /// guess, so a link planted at the name it once used neither redirects nor blocks it.
    @Test func smallFilesAreWrittenThroughNoPlantedLink() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let victim = folder + "/victim.txt"
        try "precious".write(toFile: victim, atomically: true, encoding: .utf8)
        let target = folder + "/cache.txt"
        let planted = folder + "/.cache.txt.moonreel-\(getpid()).tmp"
        try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: victim)
        try Paths.writeFile("fresh", to: target, replacing: true)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "fresh")
    }

    /// §4: a project folder named `proj$(id>PWNED)` ran `id` inside the job script. The
    /// scripts batch --slurm --chunks writes are run here as Slurm would run each task
    /// (`SLURM_ARRAY_TASK_ID` set, from the folder of `--chdir`): the row is rendered and
    /// nothing is injected.
    @Test func jobScriptsRunNothingAFolderNameSays() throws {
        let project = try Self.hostileFolder()
        let job = try BatchTests.Job(rows: "id,clip,duration\nr1,\(try Fixtures.clip(seconds: 2)),1\n")
        let out = project + "/out/{id}.mp4", slurm = project + "/slurm"
        let emitted = try Moonreel.run(["batch", job.template, job.rows, "--out", out, "--slurm", "--emit", "--chunks", "2", "--folder", slurm])
        #expect(emitted.status == 0, "\(emitted.err)")
        func task(_ script: String, _ id: Int) throws -> (status: Int32, out: String, err: String) {
            try Tool.run("/bin/sh", ["-c", "cd \"$0\" && exec /bin/sh \"$1\"", project, slurm + "/" + script], environment: ["SLURM_ARRAY_TASK_ID": "\(id)"])
        }
        for id in 0...2 {
            let piece = try task("pieces-1.sh", id)
            #expect(piece.status == 0, "task \(id): \(piece.err)")
        }
        let join = try task("join-1.sh", 0)
        #expect(join.status == 0, "\(join.err)")
        #expect(try Tool.ffprobe(project + "/out/r1.mp4").streams.first { $0.codec_type == "video" }?.frameCount == 30)
        #expect(Self.planted(under: (project as NSString).deletingLastPathComponent).isEmpty)
    }

    /// A template or value with a line break would end a comment or a directive and start
    /// a command: refused in one line, naming it, before anything is written or submitted.
    @Test func lineBreaksNeverReachAJobScript() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let template = folder + "/trim\nid>PWNED\n.lua"
        try BatchTests.template.write(toFile: template, atomically: true, encoding: .utf8)
        let rows = folder + "/rows.csv"
        try "id,clip,duration\nr1,\(try Fixtures.clip(seconds: 2)),1\n".write(toFile: rows, atomically: true, encoding: .utf8)
        let result = try Moonreel.run(["batch", template, rows, "--out", folder + "/{id}.mp4", "--slurm", "--emit", "--folder", folder + "/slurm"])
        #expect(result.status == 1)
        #expect(result.errorLines.count == 1 && result.err.contains("holds a line break"), "\(result.err)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/slurm/task-1.sh"))
        let noted = try job(folder)
        let value = try Moonreel.run(["batch", noted.template, noted.rows, "--out", folder + "/v/{id}.mp4", "--slurm", "--emit", "--folder", folder + "/slurm2"])
        #expect(value.status == 1)
        #expect(value.err.contains("row 1: note") && value.err.contains("holds a line break"), "\(value.err)")
    }

    /// A template whose `note` parameter gets a value with a line break from its row.
    func job(_ folder: String) throws -> BatchTests.Job {
        let template = BatchTests.template.replacingOccurrences(of: "{ name = \"output\"", with: "{ name = \"note\", type = \"string\", default = \"\" },\n  { name = \"output\"")
        let job = try BatchTests.Job(rows: "id,clip,duration,note\nr1,\(try Fixtures.clip(seconds: 2)),1,\"two\nlines\"\n")
        try template.write(toFile: job.template, atomically: true, encoding: .utf8)
        return job
    }

    /// §11: a truncated `out/r1.mkv` was "skipped (already there)" with 9 of its 60 frames.
    /// Now an output is skipped only when its packets reach its stated length; a cut one is
    /// named before anything runs, and `--overwrite` renders it again.
    @Test func aTruncatedOutputIsNotTakenAsDone() throws {
        let clip = try Fixtures.clip(seconds: 3)
        let job = try BatchTests.Job(rows: "id,clip,duration\nr1,\(clip),2\nr2,\(clip),1\n")
        let out = job.folder + "/out/{id}.mkv"
        #expect(try Moonreel.run(["batch", job.template, job.rows, "--out", out]).status == 0)
        let first = job.folder + "/out/r1.mkv"
        let handle = try #require(FileHandle(forUpdatingAtPath: first))
        try handle.truncate(atOffset: UInt64(try FileManager.default.attributesOfItem(atPath: first)[.size] as? Int ?? 0) * 3 / 10)
        try handle.close()
        let again = try Moonreel.run(["batch", job.template, job.rows, "--out", out])
        #expect(again.status == 1 && again.err.contains("row 1: \(first): remove it, or pass --overwrite") && !again.err.contains("row 2:"), "\(again.err)")
        let redone = try Moonreel.run(["batch", "--overwrite", job.template, job.rows, "--out", out])
        #expect(redone.status == 0, "\(redone.err)")
        #expect(try Tool.ffprobe(first).streams.first { $0.codec_type == "video" }.map { _ in try Tool.framePTS(first).count } == 60)
    }

    /// §12: chunks of an export to .mkv or .webm never joined ("does not hold its 45 frames;
    /// delete it and run again", forever). Matroska keeps no decoding times for the packet
    /// copy, so the join task renders such an export whole, and says so.
    @Test(arguments: ["mkv", "webm"]) func chunksJoinIntoMatroskaAndWebM(_ fileType: String) throws {
        try MachineLoad.heavy {
            let job = try ChunkedRenderTests.Job(clip: try Fixtures.clip(seconds: 3))
            let result = try job.run("out.\(fileType)", ["--chunks", "2", "--chunk-folder", job.chunkFolder])
            #expect(result.status == 0, "\(result.err)")
            #expect(result.err.contains("is rendered whole by the join task, not in pieces: pieces cannot be joined into"), "\(result.err)")
            #expect(try Tool.framePTS(job.path("out.\(fileType)")).count == 90)
            #expect(!FileManager.default.fileExists(atPath: job.chunkFolder))
        }
    }

}

extension AttackRoundFourTests {
    /// §14: `moonreel info` ran a whole script that declares no parameters (it deleted a decoy
    /// and wrote another file), and a loop before av.parameters hung it. It now stops at the
    /// first side effect, and after 10 s.
    @Test func infoDoesNotDoWhatTheScriptDoes() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let decoy = folder + "/decoy.txt"
        try "keep me".write(toFile: decoy, atomically: true, encoding: .utf8)
        let script = folder + "/cleanup.lua"
        try "local f = io.open(arg and arg[1] or '\(decoy)') if f then f:close() end\nos.remove('\(decoy)')\nio.open('\(folder)/made.txt', 'w'):close()\n"
            .write(toFile: script, atomically: true, encoding: .utf8)
        let info = try Moonreel.run(["info", script])
        #expect(info.status == 1 && info.err.contains("stopped at a side effect before av.parameters: os.remove"), "\(info.out) \(info.err)")
        #expect(FileManager.default.fileExists(atPath: decoy) && !FileManager.default.fileExists(atPath: folder + "/made.txt"))
        let loop = folder + "/loop.lua"
        try "while true do end\nav.parameters{}\n".write(toFile: loop, atomically: true, encoding: .utf8)
        let started = Date()
        let stuck = try Moonreel.run(["info", loop], timeout: 60)
        #expect(stuck.status == 1 && Date().timeIntervalSince(started) < 30 && stuck.err.contains("time limit"), "\(stuck.err)")
    }
}

extension AttackRoundFourTests {
    /// §13: two pieces of the same length swapped (or one linked to another) were joined,
    /// exit 0, with the right frame count and 60 of 90 frames wrong. Each piece carries what
    /// it holds, and the join checks it.
    @Test func swappedOrLinkedPiecesAreNotJoined() throws {
        try MachineLoad.heavy {
            let job = try ChunkedRenderTests.Job(clip: try Fixtures.clip(seconds: 3))
            let output = job.path("later/out.mp4")
            let values = ["--set", "clip=\(job.clip)", "--set", "output=\(output)"]
            // The run's chunk folder is made (its output's folder is missing, so nothing renders),
            // then each piece rendered by its task alone.
            #expect(try Moonreel.run(["run", "--chunks", "3", "--chunk-folder", job.chunkFolder] + values + [job.template]).status == 1)
            try FileManager.default.createDirectory(atPath: job.path("later"), withIntermediateDirectories: true)
            for piece in 1...3 {
                let task = try Moonreel.run(["run", "--chunks", "3", "--chunk-task", "piece:\(piece)", "--chunk-folder", job.chunkFolder] + values + [job.template])
                #expect(task.status == 0, "\(task.err)")
            }
            let folder = job.chunkFolder + "/export-1"
            let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("piece-") }.sorted()
            try #require(names.count == 3, "\(names)")
            let (first, second) = (folder + "/" + names[0], folder + "/" + names[1])
            try FileManager.default.moveItem(atPath: first, toPath: first + ".x")
            try FileManager.default.moveItem(atPath: second, toPath: first)
            try FileManager.default.moveItem(atPath: first + ".x", toPath: second)
            let swapped = try Moonreel.run(["run", "--chunks", "3", "--chunk-folder", job.chunkFolder] + values + [job.template])
            #expect(swapped.status == 1 && swapped.err.contains("holds piece 2 of 3, frames 30-59") && swapped.err.contains("instead of piece 1 of 3"), "\(swapped.err)")
            #expect(!FileManager.default.fileExists(atPath: output))
            // Put back, then the third linked to the second.
            try FileManager.default.moveItem(atPath: first, toPath: first + ".x")
            try FileManager.default.moveItem(atPath: second, toPath: first)
            try FileManager.default.moveItem(atPath: first + ".x", toPath: second)
            let third = folder + "/" + names[2]
            try FileManager.default.removeItem(atPath: third)
            try FileManager.default.createSymbolicLink(atPath: third, withDestinationPath: second)
            let linked = try Moonreel.run(["run", "--chunks", "3", "--chunk-folder", job.chunkFolder] + values + [job.template])
            #expect(linked.status == 1 && linked.err.contains("instead of piece 3 of 3"), "\(linked.err)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
    }
}
