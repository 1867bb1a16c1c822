import MoonreelFarm
import Testing

/// The job scripts of a batch on Slurm and of a chunked render: which task runs which row
/// or piece, and the `#SBATCH` lines; nothing is submitted.
@Suite struct SlurmPlanTests {
    static let options = RunOptions(memoryLimit: 512, strict: true)

    func cluster(rowsPerTask: Int = 1, maxRunning: Int? = nil, template: String = "/t/trim.lua", folder: String = "/b/batch",
                 workingFolder: String = "/w") -> SlurmBatchPlan {
        SlurmBatchPlan(executable: "/opt/moonreel", template: template, options: Self.options, folder: folder, workingFolder: workingFolder,
                       partition: "gpu", rowsPerTask: rowsPerTask, maxRunning: maxRunning)
    }

    func rows(_ count: Int) -> [BatchPlan.Row] {
        (1...count).map { BatchPlan.Row(number: $0, output: "/o/\($0).mp4", values: ["clip": "c\($0).mp4", "output": "/o/\($0).mp4"]) }
    }

    @Test func rowsAreSharedAmongTasksAndTheArrayStaysUnderSlurmsLimit() {
        #expect(cluster(rowsPerTask: 2).tasks(rows(5)).map { $0.map(\.number) } == [[1, 2], [3, 4], [5]])
        let many = cluster().tasks(rows(2500))
        #expect(many.count <= SlurmBatchPlan.maxTasks && many.count == 834)
        #expect(many.flatMap { $0 }.map(\.number) == Array(1...2500))
    }

    @Test func aBatchsScriptRunsEachTasksRowsAndSaysHowToSubmitItAgain() throws {
        let scripts = try cluster(rowsPerTask: 2, maxRunning: 4).scripts(rows(3), attempt: 2)
        #expect(scripts.first.path == "/b/batch/task-2.sh" && scripts.then == nil)
        #expect(scripts.first.job.text == """
            #!/bin/sh
            # moonreel batch: trim.lua, 3 rows in 2 tasks (attempt 2).
            # Written by moonreel batch --slurm; submit again with: sbatch '/b/batch/task-2.sh'
            #SBATCH --job-name=moonreel-batch
            #SBATCH --array=0-1%4
            #SBATCH --output=/dev/null
            #SBATCH --chdir="/w"
            #SBATCH --partition="gpu"
            #SBATCH --requeue
            exec >'/b/batch/logs/attempt-2-task-'"$SLURM_ARRAY_TASK_ID"'.log' 2>&1
            status=0
            row() { "$@" || status=1; }
            case "$SLURM_ARRAY_TASK_ID" in
            0)
               row '/opt/moonreel' 'run' '--quiet' '--memory-limit' '512' '--strict' '--diagnostics-file' '/b/batch/logs/attempt-2-row-1.diagnostics' '--set' 'clip=c1.mp4' '--set' 'output=/o/1.mp4' '--' '/t/trim.lua'
               row '/opt/moonreel' 'run' '--quiet' '--memory-limit' '512' '--strict' '--diagnostics-file' '/b/batch/logs/attempt-2-row-2.diagnostics' '--set' 'clip=c2.mp4' '--set' 'output=/o/2.mp4' '--' '/t/trim.lua'
               ;;
            1)
               row '/opt/moonreel' 'run' '--quiet' '--memory-limit' '512' '--strict' '--diagnostics-file' '/b/batch/logs/attempt-2-row-3.diagnostics' '--set' 'clip=c3.mp4' '--set' 'output=/o/3.mp4' '--' '/t/trim.lua'
               ;;
            esac
            exit $status

            """)
    }

    @Test func oddNamesAreQuotedAndLineBreaksRefusedNamingTheRow() throws {
        let odd = cluster(template: "/t/it's \"a\" $(x).lua", folder: "/b/100% sure", workingFolder: "/w/say \"hi\" \\o/")
        let text = try odd.scripts(rows(1), attempt: 1).first.job.text
        #expect(text.contains("'--' '/t/it'\\''s \"a\" $(x).lua'\n"), "\(text)")
        #expect(text.contains("#SBATCH --chdir=\"/w/say \\\"hi\\\" \\\\o/\"\n"), "\(text)")
        #expect(text.contains("exec >'/b/100% sure/logs/attempt-1-task-'"), "\(text)")
        let broken = [BatchPlan.Row(number: 7, output: "/o/7.mp4", values: ["clip": "two\nlines", "output": "/o/7.mp4"])]
        #expect(throws: BatchError("row 7: clip \"two\\nlines\" holds a line break or a NUL, which a Slurm job script cannot carry; rename it")) {
            try cluster().scripts(broken, attempt: 1)
        }
    }

    @Test func rowsInPiecesAreAnArrayOfPiecesThenAnArrayOfJoins() throws {
        let scripts = try cluster(maxRunning: 3).scripts(rows(2), attempt: 1, chunks: 2)
        let pieces = scripts.first.job.text, joins = try #require(scripts.then).job.text
        #expect(scripts.first.path == "/b/batch/pieces-1.sh" && scripts.then?.path == "/b/batch/join-1.sh")
        #expect(pieces.contains("#SBATCH --job-name=moonreel-pieces\n") && pieces.contains("#SBATCH --array=0-5%3\n") && pieces.contains("#SBATCH --requeue\n"))
        #expect(pieces.contains("row=$((SLURM_ARRAY_TASK_ID / 3)) part=$((SLURM_ARRAY_TASK_ID % 3))"))
        #expect(pieces.contains("1) number=2; set -- '--set' 'clip=c2.mp4' '--set' 'output=/o/2.mp4' '--' '/t/trim.lua' ;;"))
        #expect(pieces.contains("exec '/opt/moonreel' 'run' '--quiet' '--memory-limit' '512' '--strict' '--chunks' '2' --chunk-task \"$role\" --chunk-folder '/b/batch/chunks/row-'\"$number\" \"$@\""), "a row's chunk folder is named by its number, the same in every attempt")
        #expect(joins.contains("#SBATCH --job-name=moonreel-join\n") && joins.contains("#SBATCH --array=0-1\n") && !joins.contains("--requeue"))
        #expect(joins.contains("--chunk-task join --chunk-folder"))
    }

    @Test func tooManyPiecesForOneArrayAreRefused() {
        #expect(throws: BatchError("334 rows in 2 pieces and a sound each make 1002 Slurm tasks, over the array limit (1000): run fewer rows at a time or fewer pieces")) {
            try cluster().scripts(rows(334), attempt: 1, chunks: 2)
        }
        #expect(throws: Never.self) { try cluster().scripts(rows(333), attempt: 1, chunks: 2) }
    }

    @Test func everyScriptHasItsDirectivesBeforeItsFirstCommand() throws {
        let scripts = try cluster().scripts(rows(2), attempt: 1, chunks: 1)
        let chunk = try ChunkPlan(executable: "/opt/moonreel", script: "/s/edit.lua", arguments: [], parameterValues: [:], pieces: 2,
                                  chunkFolder: "/c", options: Self.options, progress: nil).slurmScripts(workingFolder: "/w", partition: nil)
        for text in [scripts.first.job.text, try #require(scripts.then).job.text, chunk.pieces.text, chunk.join.text] {
            let lines = text.split(separator: "\n")
            let firstCommand = try #require(lines.firstIndex { !$0.hasPrefix("#") })
            #expect(!lines[firstCommand...].contains { $0.hasPrefix("#SBATCH") }, "\(text)")
        }
    }
}

/// A chunked render's tasks, their command lines, logs and job scripts.
@Suite struct ChunkPlanTests {
    func plan(pieces: Int = 2, chunkFolder: String? = "/c/run", parameterValues: [String: String] = ["speed": "2"],
              progress: String? = "json") -> ChunkPlan {
        ChunkPlan(executable: "/opt/moonreel", script: "/s/edit.lua", arguments: ["a b"], parameterValues: parameterValues, pieces: pieces,
                  chunkFolder: chunkFolder, options: RunOptions(memoryLimit: 256, overwrite: true), progress: progress)
    }

    @Test func thePiecesThenTheSoundRenderBeforeTheJoin() {
        #expect(plan(pieces: 3).renderTasks.map(\.role) == ["piece:1", "piece:2", "piece:3", "sound"])
        #expect(plan(pieces: 3).renderTasks.map(\.name) == ["piece 1 of 3", "piece 2 of 3", "piece 3 of 3", "sound"])
        #expect(plan().logPath("piece:2") == "/c/run/logs/piece-2.log" && plan().slurmLogPath(1) == "/c/run/logs/task-1.log")
    }

    @Test func renderTasksWriteNoProgressAndTheJoinShowsTheCommands() {
        #expect(plan().command("piece:1") == ["/opt/moonreel", "run", "--chunks", "2", "--chunk-task", "piece:1", "--chunk-folder", "/c/run",
                                              "--memory-limit", "256", "--progress", "none", "--overwrite", "--set", "speed=2", "--", "/s/edit.lua", "a b"])
        #expect(plan().command("join") == ["/opt/moonreel", "run", "--chunks", "2", "--chunk-task", "join", "--chunk-folder", "/c/run",
                                           "--memory-limit", "256", "--overwrite", "--progress", "json", "--set", "speed=2", "--", "/s/edit.lua", "a b"])
    }

    @Test func theDefaultFolderIsNamedByTheScriptAndWhatItWasGiven() {
        let first = plan(chunkFolder: nil), same = plan(chunkFolder: nil), other = plan(chunkFolder: nil, parameterValues: ["speed": "3"])
        #expect(first.folder.hasSuffix("/moonreel-chunks/edit-" + first.runKey) && first.isDefaultFolder)
        #expect(first.runKey == same.runKey && first.runKey != other.runKey)
        #expect(!plan().isDefaultFolder && plan().folder == "/c/run")
    }

    @Test func onSlurmTheSoundIsTheLastArrayTaskAndTheJoinWritesItsStatus() throws {
        let scripts = try plan().slurmScripts(workingFolder: "/w", partition: "long")
        #expect(scripts.pieces.text.contains("#SBATCH --array=0-2\n#SBATCH --requeue\n"))
        #expect(scripts.pieces.text.contains("2) exec '/opt/moonreel' 'run' '--chunks' '2' '--chunk-task' 'sound'"))
        #expect(scripts.pieces.text.contains("#SBATCH --partition=\"long\"\n"))
        #expect(scripts.join.text.hasSuffix("'--' '/s/edit.lua' 'a b'\necho $? > '/c/run/join.status'\n"), "\(scripts.join.text)")
        #expect(scripts.join.text.contains("exec >'/c/run/logs/join.log' 2>&1\n"))
    }
}
