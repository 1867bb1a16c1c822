import Foundation
import Testing
import TestSupport

/// One output rule for everything that writes: an existing path (a dangling symlink too) is
/// replaced only when asked; a file the run has read never, even when asked; "exists" is
/// decided when the finished file is moved into place; and every way the process can be
/// told to stop removes the unfinished file.
@Suite struct OutputRuleTests {
    static let longClip: String = (try? Fixtures.clip(seconds: 20, size: "640x360", name: "long-clip.mp4")) ?? ""

    /// Files in the output's folder other than those named.
    func others(in directory: String, besides names: Set<String>) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { !names.contains($0) }
    }

    @Test func filesTheRunReadAreNeverReplacedEvenWithOverwrite() throws {
        let clip = try Fixtures.clip(seconds: 1)
        let directory = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let logo = directory + "/logo.png", cues = directory + "/cues.csv"
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=16x16", "-frames:v", "1", logo])
        try "id,lyric,start_at,end_at\n1,a,0,1\n".write(toFile: cues, atomically: true, encoding: .utf8)
        let script = """
            local clip = av.asset(arg[1])
            local logo, cues = av.image(arg[2]), av.readCues(arg[3])
            local session = av.exportSession(clip, "LowQuality")
            session.outputURL = arg[4]
            session.outputFileType = "mp4"
            session.overwrite = true
            local ok, err = session:export()
            print(err)
            """
        let scriptPath = directory + "/self.lua"
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        for target in [logo, cues, scriptPath] {
            let before = try Data(contentsOf: URL(fileURLWithPath: target))
            let result = try Moonreel.run(["run", scriptPath, clip, logo, cues, target])
            #expect(result.out.contains("which this run read; choose another output path"), "\(target): \(result.out) \(result.err)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == before, "\(target) is untouched")
        }
        #expect(try others(in: directory, besides: ["logo.png", "cues.csv", "self.lua"]).isEmpty)
    }

    @Test func aFileThatAppearsDuringTheExportIsNotReplaced() throws {
        let output = Fixtures.scratchPath("late.mp4")
        let result = try Moonreel.runScript("""
            local session = av.exportSession(av.asset(arg[1]), "LowQuality")
            session.outputURL = arg[2]
            local made = false
            local ok, err = session:export{ progress = function(f)
              if f > 0.2 and not made then
                local file = assert(io.open(arg[2], "w")); file:write("someone else's"); file:close(); made = true
              end
            end }
            print(ok, err)
            """, arguments: [Self.longClip, output])
        #expect(result.out.contains("appeared while it was being written"), "\(result.out) \(result.err)")
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "someone else's")
        #expect(try others(in: (output as NSString).deletingLastPathComponent, besides: ["late.mp4", "test.lua"]).isEmpty)
    }

    @Test func twoExportsToOneNewPathCannotBothWin() throws {
        let output = Fixtures.scratchPath("race.mp4")
        let script = Fixtures.scratchPath("race.lua")
        try """
            local session = av.exportSession(av.asset(arg[1]), "LowQuality")
            session.outputURL = arg[2]
            assert(session:export())
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let processes = try (0..<2).map { _ -> Process in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Moonreel.executable)
            process.arguments = ["run", script, try Fixtures.clip(seconds: 3, size: "640x360"), output]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        processes.forEach { $0.waitUntilExit() }
        let statuses = processes.map(\.terminationStatus).sorted()
        #expect(statuses == [0, 1], "one export wins, the other says so: \(statuses)")
        #expect(try Tool.ffprobe(output).video != nil)
        #expect(try others(in: (output as NSString).deletingLastPathComponent, besides: ["race.mp4", "race.lua"]).isEmpty)
    }

    @Test func aDanglingSymlinkCountsAsExisting() throws {
        let clip = try Fixtures.clip(seconds: 1)
        let output = Fixtures.scratchPath("link.mp4")
        try FileManager.default.createSymbolicLink(atPath: output, withDestinationPath: "/nonexistent/target.mp4")
        let script = "local s = av.exportSession(av.asset(arg[1]), 'LowQuality'); s.outputURL = arg[2]; assert(s:export())"
        let refused = try Moonreel.runScript(script, arguments: [clip, output])
        #expect(refused.status == 1 && refused.err.contains("is a symbolic link, not a regular file"), "\(refused.err)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: output) == "/nonexistent/target.mp4")
        let stillRefused = try Moonreel.runScript(script, arguments: [clip, output], options: ["--overwrite"])
        #expect(stillRefused.status == 1 && stillRefused.err.contains("is a symbolic link, not a regular file; Moonreel replaces only regular files"), "\(stillRefused.err)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: output) == "/nonexistent/target.mp4")
    }

    /// Issue 24 §5: `--overwrite` replaces regular files only. A device node (a copy of
    /// /dev/null's), a FIFO and a link to a regular file are refused with one line and stay
    /// what they were; a regular file is replaced.
    @Test func overwriteReplacesRegularFilesOnly() throws {
        let clip = try Fixtures.clip(seconds: 1)
        let directory = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let device = directory + "/null", fifo = directory + "/pipe.mp4", link = directory + "/latest.mp4", regular = directory + "/old.mp4"
        #expect(mknod(device, S_IFCHR | 0o666, dev_t(1 << 8 | 3) /* 1:3 */) == 0, "mknod: \(String(cString: strerror(errno)))")
        #expect(mkfifo(fifo, 0o644) == 0)
        try "old".write(toFile: regular, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: regular)
        let script = "local s = av.exportSession(av.asset(arg[1]), 'LowQuality'); s.outputURL = arg[2]; s.outputFileType = 'mp4'; assert(s:export())"
        for (path, kind) in [(device, "a device"), (fifo, "a FIFO (named pipe)"), (link, "a symbolic link")] {
            let result = try Moonreel.runScript(script, arguments: [clip, path], options: ["--overwrite"])
            #expect(result.status == 1 && result.err.contains("\"\(path)\" is \(kind), not a regular file"), "\(path): \(result.err)")
            #expect(result.err.split(separator: "\n").count == 1, "\(result.err)")
        }
        var info = stat()
        #expect(lstat(device, &info) == 0 && (info.st_mode & S_IFMT) == S_IFCHR)
        #expect(lstat(fifo, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == regular)
        #expect(try String(contentsOfFile: regular, encoding: .utf8) == "old")
        let replaced = try Moonreel.runScript(script, arguments: [clip, regular], options: ["--overwrite"])
        #expect(replaced.status == 0, "\(replaced.err)")
        #expect(try Tool.ffprobe(regular).video != nil)
        #expect(try others(in: directory, besides: ["null", "pipe.mp4", "latest.mp4", "old.mp4", "test.lua"]).isEmpty)
    }

    /// Starts a 20-second export, waits for its temporary file, then does `stop` to it.
    func interruptedExport(_ options: [String] = [], stop: (Process) -> Void) throws -> (status: Int32, left: [String], err: String) {
        let output = Fixtures.scratchPath("stopped.mp4")
        let directory = (output as NSString).deletingLastPathComponent
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Moonreel.executable)
        process.arguments = ["run", "--quiet"] + options + [Moonreel.example("cut.lua"), Self.longClip, output, "0", "20"]
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty { usleep(20_000) }
        usleep(200_000)
        stop(process)
        process.waitUntilExit()
        let err = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, try FileManager.default.contentsOfDirectory(atPath: directory), err)
    }

    @Test func hangupAndTerminationCleanUp() throws {
        for signal in [SIGHUP, SIGTERM] {
            let result = try interruptedExport { kill($0.processIdentifier, signal) }
            #expect(result.status == 130 && result.left.isEmpty, "signal \(signal): exit \(result.status), left \(result.left)")
        }
    }

    @Test func aFileSizeLimitIsAnErrorNotADeath() throws {
        let output = Fixtures.scratchPath("limited.mp4")
        let result = try Tool.run("/bin/sh", ["-c", "ulimit -f 100; exec \"$0\" run --quiet \"$1\" \"$2\" \"$3\"",
                                              Moonreel.executable, Moonreel.example("cut.lua"), Self.longClip, output])
        #expect(result.status == 1 && result.err.contains("File too large"), "exit \(result.status): \(result.err)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: (output as NSString).deletingLastPathComponent).isEmpty)
    }

    @Test func aClosedPipeStopsTheExportCleanly() throws {
        let output = Fixtures.scratchPath("piped.mp4")
        let result = try Tool.run("/bin/sh", ["-c", "\"$0\" run --progress json \"$1\" \"$2\" \"$3\" 0 20 | head -n 2 >/dev/null; exit $(( $? ))",
                                              Moonreel.executable, Moonreel.example("cut.lua"), Self.longClip, output])
        #expect(result.err.contains("standard output was closed (EPIPE)"), "\(result.err)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: (output as NSString).deletingLastPathComponent).isEmpty)
    }

    @Test func scriptsThatHooksCannotStopEndAtTheirLimitsAnyway() throws {
        let endless = "setmetatable({}, { __gc = function() while true do end end }); collectgarbage(); collectgarbage()"
        let started = Date()
        let limited = try Moonreel.runScript(endless, name: "gc.lua", options: ["--time-limit", "1"])
        #expect(limited.status == 1 && limited.err.contains("exceeded its time limit (1.0 s)"), "\(limited.err)")
        #expect(Date().timeIntervalSince(started) < 3, "stopped within the limit and its grace")
        // SIGTERM ends it within a second, limit or not.
        let script = Fixtures.scratchPath("gc.lua")
        try endless.write(toFile: script, atomically: true, encoding: .utf8)
        for command in [["run", script], ["repl", script]] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Moonreel.executable)
            process.arguments = command
            process.standardInput = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(700_000)
            let sent = Date()
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
            #expect(Date().timeIntervalSince(sent) < 1.5 && process.terminationStatus == 130, "\(command[0]): exit \(process.terminationStatus)")
        }
    }
}
