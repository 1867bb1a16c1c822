import Foundation
import Testing
import TestSupport

/// Issue 23 §3 and §5: `moonreel batch --slurm` and `moonreel run --chunks --slurm` on a real
/// single-node Slurm cluster the test starts — every row rendered through array jobs, a task
/// cancelled or killed mid-render costs only its rows, run again, never a broken output; and
/// one export rendered in four pieces on the cluster is the single export, frame for frame.
@Suite(.serialized) struct SlurmBatchTests {
    static func job(rows count: Int, seconds: Double, size: String = "640x360") throws -> BatchTests.Job {
        let clip = try Fixtures.clip(seconds: 6, size: size)
        return try BatchTests.Job(rows: "id,clip,start,duration\n"
            + (1...count).map { "r\($0),\(clip),\(Double($0 % 4) * 0.5),\(seconds)" }.joined(separator: "\n") + "\n")
    }

    /// `moonreel batch … --slurm` arguments for `job`: outputs, task scripts, logs and report
    /// all under the job's folder.
    static func slurmBatchArguments(_ job: BatchTests.Job, _ extra: [String]) -> [String] {
        ["batch", job.template, job.rows, "--out", job.folder + "/out/{id}.mp4", "--slurm", "--folder", job.folder + "/slurm",
         "--report", job.folder + "/report.json"] + extra
    }

    /// Runs the batch on `cluster` to its end; it must succeed.
    static func runSlurmBatch(_ job: BatchTests.Job, on cluster: SlurmCluster, _ extra: [String]) throws {
        let result = try Tool.run(Moonreel.executable, slurmBatchArguments(job, extra), environment: cluster.environment, timeout: 240)
        #expect(result.status == 0, "\(result.err) \(cluster.log("slurmctld.log").suffix(400))")
    }

    @Test func twentyRowsThroughArrayJobs() throws {
        try MachineLoad.heavy {
            let cluster = try SlurmCluster()
            defer { cluster.stop() }
            let job = try Self.job(rows: 20, seconds: 1)
            try Self.runSlurmBatch(job, on: cluster, ["--rows-per-task", "3"])
            for row in 1...20 {
                let probe = try Tool.ffprobe(job.output("r\(row)"))
                #expect(abs((Double(probe.format.duration ?? "") ?? 0) - 1) < 0.08, "row \(row)")
            }
            #expect((try job.report()["totals"] as? [String: Any])?["done"] as? Int == 20)
            let script = try String(contentsOfFile: job.folder + "/slurm/task-1.sh", encoding: .utf8)
            #expect(script.contains("#SBATCH --array=0-6"), "20 rows, 3 a task: 7 tasks")
            #expect(FileManager.default.fileExists(atPath: job.folder + "/slurm/logs/attempt-1-task-6.log"))
        }
    }

    /// A report written before the rows run says so: `written` after `--emit` (the job script
    /// only), `submitted` after `--no-wait` (left to Slurm); it said `interrupted`, as if
    /// Ctrl-C had stopped them. Running the same command again collects them as `done`.
    @Test func aReportBeforeTheRowsRunSaysWhereTheyAre() throws {
        try MachineLoad.heavy {
            let job = try Self.job(rows: 2, seconds: 1)
            func statuses() throws -> [String] { try (job.report()["rows"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? String } }
            let emitted = try Moonreel.run(Self.slurmBatchArguments(job, ["--emit"]))
            #expect(emitted.status == 0, "\(emitted.err)")
            #expect(try statuses() == ["written", "written"])
            #expect((try job.report()["totals"] as? [String: Any])?["interrupted"] as? Int == 0)
            let cluster = try SlurmCluster()
            defer { cluster.stop() }
            let submitted = try Tool.run(Moonreel.executable, Self.slurmBatchArguments(job, ["--no-wait"]), environment: cluster.environment, timeout: 60)
            #expect(submitted.status == 0, "\(submitted.err)")
            #expect(try statuses() == ["submitted", "submitted"])
            try Self.runSlurmBatch(job, on: cluster, [])
            #expect(try statuses().allSatisfy { $0 == "done" || $0 == "skipped" } && statuses().count == 2)
        }
    }

    @Test func aCancelledOrKilledTaskCostsOnlyItsRows() throws {
        try MachineLoad.heavy {
            let cluster = try SlurmCluster()
            defer { cluster.stop() }
            let job = try Self.job(rows: 6, seconds: 4, size: "1280x720")
            let batch = Process()
            batch.executableURL = URL(fileURLWithPath: Moonreel.executable)
            batch.arguments = Self.slurmBatchArguments(job, ["--retry", "2", "--max-running", "2"])
            batch.environment = ProcessInfo.processInfo.environment.merging(cluster.environment) { $1 }
            let errors = Pipe()
            (batch.standardOutput, batch.standardError) = (Pipe(), errors)
            try batch.run()
            defer { if batch.isRunning { kill(batch.processIdentifier, SIGKILL) } }
            // As soon as renders run: SIGKILL one render, and scancel one running task.
            var renders: [pid_t] = []
            var running: [String] = []
            let deadline = Date().addingTimeInterval(120)
            while renders.isEmpty || running.isEmpty, Date() < deadline {
                renders = try Tool.run("pgrep", ["-f", "--", "output=\(job.folder)/out/"]).out.split(separator: "\n").compactMap { pid_t($0) }
                running = try cluster.command("squeue", ["--noheader", "--states", "RUNNING", "--format", "%i"]).out
                    .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                usleep(50_000)
            }
            let killed = renders.first.map { kill($0, SIGKILL) == 0 } ?? false
            try cluster.command("scancel", [running.last ?? ""])
            #expect(killed, "a render was killed mid-way")
            while batch.isRunning, Date() < deadline { usleep(200_000) }
            #expect(!batch.isRunning, "the batch finished")
            let message = String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self)
            #expect(batch.terminationStatus == 0, "\(message)")
            for row in 1...6 {
                let probe = try Tool.ffprobe(job.output("r\(row)"))
                #expect(abs((Double(probe.format.duration ?? "") ?? 0) - 4) < 0.08, "row \(row) whole")
            }
            #expect(FileManager.default.fileExists(atPath: job.folder + "/slurm/task-2.sh"), "the missing rows were submitted again")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: job.folder + "/out").filter { !$0.hasSuffix(".mp4") || $0.hasPrefix(".") }
            #expect(leftovers.isEmpty, "no unfinished files: \(leftovers)")
        }
    }

    @Test func fourPiecesOnSlurmJoinIntoTheSingleExport() throws {
        try MachineLoad.heavy {
            let cluster = try SlurmCluster()
            defer { cluster.stop() }
            let job = try ChunkedRenderTests.Job(clip: try Fixtures.clip(seconds: 8))
            #expect(try job.run("single.mp4", values: ["crf=0"]).status == 0)
            let arguments = ["run", "--chunks", "4", "--slurm", "--chunk-folder", job.chunkFolder, "--set", "clip=\(job.clip)",
                             "--set", "output=\(job.path("chunked.mp4"))", "--set", "crf=0", job.template]
            let result = try Tool.run(Moonreel.executable, arguments, environment: cluster.environment, timeout: 240)
            #expect(result.status == 0, "\(result.err) \(cluster.log("slurmctld.log").suffix(400))")
            #expect(result.err.contains("renders 4 pieces and the sound"), "\(result.err)")
            #expect(try ChunkedRenderTests.frameHashes(job.path("chunked.mp4")) == ChunkedRenderTests.frameHashes(job.path("single.mp4")))
            #expect(try ChunkedRenderTests.frameHashes(job.path("chunked.mp4"), stream: "a:0")
                    == ChunkedRenderTests.frameHashes(job.path("single.mp4"), stream: "a:0"))
            #expect(!FileManager.default.fileExists(atPath: job.chunkFolder), "pieces, job scripts and logs removed once joined")
        }
    }

    /// `batch --slurm --chunks`: every piece of every row is a task of one array job, and
    /// each row's join starts once they all ended.
    @Test func rowsInPiecesOnSlurm() throws {
        try MachineLoad.heavy {
            let cluster = try SlurmCluster()
            defer { cluster.stop() }
            let job = try Self.job(rows: 3, seconds: 3)
            try Self.runSlurmBatch(job, on: cluster, ["--chunks", "2"])
            for row in 1...3 {
                let probe = try Tool.ffprobe(job.output("r\(row)"))
                #expect(probe.streams.first { $0.codec_type == "video" }?.frameCount == 90, "row \(row): 3 s at 30 fps")
                let keyframes = try Tool.packets(job.output("r\(row)")).enumerated().filter { $0.element.isKeyframe }.map(\.offset)
                #expect(keyframes.contains(45), "row \(row): its second piece starts on a keyframe at frame 45: \(keyframes)")
            }
            let pieces = try String(contentsOfFile: job.folder + "/slurm/pieces-1.sh", encoding: .utf8)
            #expect(pieces.contains("#SBATCH --array=0-8"), "3 rows × (2 pieces + the sound)")
            #expect((try job.report()["totals"] as? [String: Any])?["done"] as? Int == 3)
        }
    }

    /// Rows on Slurm ran `moonreel run --quiet` into task logs, and the report said 0
    /// warnings: a row's diagnostics are in its report row, whole or in pieces.
    @Test func rowsOnSlurmKeepTheirWarnings() throws {
        try MachineLoad.heavy {
            let cluster = try SlurmCluster()
            defer { cluster.stop() }
            for pieces in [[], ["--chunks", "2"]] {
                let job = try BatchTests.Job(rows: "id,clip,start,duration\nodd,\(Fixtures.real("11_vp9_odd_161x121.webm")),0,1\n")
                try Self.runSlurmBatch(job, on: cluster, pieces)
                let report = try job.report()
                let kinds = ((report["rows"] as? [[String: Any]])?.first?["diagnostics"] as? [[String: Any]] ?? []).map { $0["kind"] as? String }
                #expect(kinds == ["sizeRounded"], "\(pieces): \(report)")
                #expect((report["totals"] as? [String: Any])?["warnings"] as? Int == 1, "\(pieces): \(report)")
            }
        }
    }

    /// Issue 35 §4–5: from a project folder named `My Videos $(id>PWNED) 'q' "d" \b`, sbatch
    /// took the unquoted directives for invalid ones, and the folder's `$(…)` ran on the
    /// cluster. A batch and a chunked run from there, on the cluster: rendered, nothing run.
    @Test func aFolderWithSpacesAndShellCharactersOnTheCluster() throws {
        try MachineLoad.heavy {
            let cluster = try SlurmCluster()
            defer { cluster.stop() }
            let project = try AttackRoundFourTests.hostileFolder()
            let job = try BatchTests.Job(rows: "id,clip,duration\nr1,\(try Fixtures.clip(seconds: 2)),1\n")
            func here(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
                try Tool.run("/bin/sh", ["-c", "cd \"$0\" && exec \"$@\"", project, Moonreel.executable] + arguments, environment: cluster.environment, timeout: 240)
            }
            let batch = try here(["batch", job.template, job.rows, "--out", "out/{id}.mp4", "--slurm", "--folder", "slurm"])
            let logs = (try? FileManager.default.contentsOfDirectory(atPath: project + "/slurm/logs"))?.map { (try? String(contentsOfFile: project + "/slurm/logs/" + $0, encoding: .utf8)) ?? "" }
            #expect(batch.status == 0, "\(batch.err) \(logs ?? []) \(cluster.log("slurmctld.log").suffix(400)) \((try? String(contentsOfFile: project + "/slurm/task-1.sh", encoding: .utf8)) ?? "")")
            #expect(try Tool.ffprobe(project + "/out/r1.mp4").streams.first { $0.codec_type == "video" }?.frameCount == 30)
            let pieces = ChunkedRenderTests.templatePath
            let chunked = try here(["run", "--chunks", "2", "--slurm", "--chunk-folder", "chunks", "--set", "clip=\(try Fixtures.clip(seconds: 2))",
                                    "--set", "output=\(project)/chunked.mp4", pieces])
            #expect(chunked.status == 0, "\(chunked.err) \(cluster.log("slurmctld.log").suffix(400))")
            #expect(try Tool.ffprobe(project + "/chunked.mp4").streams.first { $0.codec_type == "video" }?.frameCount == 60)
            #expect(AttackRoundFourTests.planted(under: project).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: project + "/chunks"), "the chunk folder is removed once joined")
        }
    }

}
