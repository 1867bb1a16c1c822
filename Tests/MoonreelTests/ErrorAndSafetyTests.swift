import Foundation
import Testing
import TestSupport

/// Bad input gives one clear line naming the script line and the culprit, exit 1; usage
/// errors exit 2; outputs are never partial, never overwritten silently, never an input.
@Suite struct ErrorAndSafetyTests {
    func expectFailure(_ script: String, _ expected: String, arguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try Moonreel.runScript(script, name: "bad.lua", arguments: arguments)
        #expect(result.status == 1, sourceLocation: sourceLocation)
        #expect(result.errorLines.count == 1, "\(result.err)", sourceLocation: sourceLocation)
        #expect(result.err.contains(expected), "\(result.err)", sourceLocation: sourceLocation)
    }

    @Test func missingFileNamesTheLineAndTheFile() throws {
        try expectFailure("local a = 1\nlocal asset = av.asset('nope.mov')", "bad.lua:2: bad argument #1 to 'asset' (input \"nope.mov\": no such file)")
    }

    @Test func textFileNamedMp4IsNotMedia() throws {
        let path = Fixtures.scratchPath("notes.mp4")
        try "just some text, not a video\n".write(toFile: path, atomically: true, encoding: .utf8)
        try expectFailure("av.asset(arg[1])", "not a media file FFmpeg can read", arguments: [path])
    }

    @Test func audioOnlyFileHasNoVideoTrackForCut() throws {
        let audio = Fixtures.scratchPath("tone.m4a")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "sine=duration=6", "-c:a", "aac", audio])
        let result = try Moonreel.run(["run", Moonreel.example("cut.lua"), audio, Fixtures.scratchPath("x.mp4")])
        #expect(result.status == 1 && result.err.contains("has no video track"))
    }

    @Test func rangeOutsideTheAsset() throws {
        let clip = try Fixtures.clip(seconds: 6)
        try expectFailure("""
            local track = av.asset(arg[1]):tracksWithMediaType("video")[1]
            local comp = av.composition()
            comp:addMutableTrack("video"):insertTimeRange(av.range(5, 10), track, 0)
            """, "bad.lua:3: insertTimeRange: time range 5…15 s is outside the asset (0…6 s)", arguments: [clip])
    }

    @Test func nanInfinityAndNegativeTimesAreRefused() throws {
        try expectFailure("av.range(0/0, 1)", "bad.lua:1: bad argument #1 to 'range' (time must be a finite number of seconds, got nan)")
        try expectFailure("av.range(0, 1/0)", "bad.lua:1: bad argument #2 to 'range' (time must be a finite number of seconds, got inf)")
        try expectFailure("av.range(0, -2)", "bad.lua:1: bad argument #2 to 'range' (duration must not be negative, got -2.0)")
        try expectFailure("local c = av.composition()\nc:addMutableTrack('video'):insertEmptyTimeRange(av.range(0, 1))\nc:insertTimeRange(av.range(0, 1), nil, -1)",
                          "bad.lua:3: bad argument #2 to 'insertTimeRange' (Asset expected, got nil)")
        try expectFailure("av.videoComposition{ renderSize = {1920, 1080}, frameDuration = -1 }", "frameDuration")
        try expectFailure("av.videoComposition{ renderSize = {1920, 1080}, colour = 'red' }",
                          "bad.lua:1: bad argument #1 to 'videoComposition' (unknown VideoComposition property \"colour\")")
        try expectFailure("local t = av.time(1, 1) * math.maxinteger", "bad.lua:1: bad argument #2 to '*' (time × 9223372036854775807 is too large)")
        try expectFailure("av.time(math.maxinteger, 1)", "bad.lua:1: bad argument #1 to 'time' (time 9.223372036854776e+18 s is too large)")
        try expectFailure("av.time(1, 0)", "bad.lua:1: bad argument #2 to 'time' (timescale must be a positive 32-bit integer, got 0)")
    }

    /// An edit of a range in place that starts before 0 spoke of an "insertion time": it
    /// names the range's start now; an insertion still names its time.
    @Test func aRangeStartingBeforeZeroIsNamedSo() throws {
        let clip = try Fixtures.clip(seconds: 6)
        for edit in ["removeTimeRange(av.range(-1, 2))", "scaleTimeRange(av.range(-1, 2), 4)", "insertEmptyTimeRange(av.range(-1, 2))"] {
            let name = String(edit.prefix { $0 != "(" })
            try expectFailure("local c = av.composition()\nc:insertTimeRange(av.range(0, 3), av.asset(arg[1]), 0)\nc:\(edit)",
                              "bad.lua:3: \(name): the range must not start before 0 (it starts at -1 s)", arguments: [clip])
            try expectFailure("local c = av.composition()\nlocal t = c:addMutableTrack('video')\nt:\(edit)",
                              "bad.lua:3: \(name): the range must not start before 0 (it starts at -1 s)")
        }
    }

    @Test func usageErrorsExitTwo() throws {
        #expect(try Moonreel.run(["--no-such-flag"]).status == 2)
        #expect(try Moonreel.run(["run"]).status == 2)
        #expect(try Moonreel.run(["run", "--progress", "sideways", "x.lua"]).status == 2)
        #expect(try Moonreel.run(["--help"]).status == 0)
    }

    @Test func existingOutputIsKeptUnlessOverwriteAndThenReplacedWhole() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let output = Fixtures.scratchPath("kept.mov")
        let old = Data("an older file the user cares about".utf8)
        try old.write(to: URL(fileURLWithPath: output))
        let refused = try Moonreel.run(["run", Moonreel.example("cut.lua"), clip, output])
        #expect(refused.status == 1 && refused.err.contains("already exists; set overwrite = true (or pass --overwrite)"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == old)
        let replaced = try Moonreel.run(["run", "--overwrite", Moonreel.example("cut.lua"), clip, output])
        #expect(replaced.status == 0, "\(replaced.err)")
        #expect(try Tool.ffprobe(output).video?.frameCount == 90)
        #expect(try Fixtures.leftovers(beside: output).isEmpty)
    }

    @Test func outputThatIsTheInputIsRefusedEvenThroughAHardLink() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let copy = Fixtures.scratchPath("input.mp4")
        try FileManager.default.copyItem(atPath: clip, toPath: copy)
        let link = (copy as NSString).deletingLastPathComponent + "/link.mp4"
        try FileManager.default.linkItem(atPath: copy, toPath: link)
        let before = try Data(contentsOf: URL(fileURLWithPath: copy))
        for target in [copy, link] {
            let result = try Moonreel.run(["run", "--overwrite", Moonreel.example("cut.lua"), copy, target])
            #expect(result.status == 1 && result.err.contains("is the input"), "\(result.err)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == before)
    }

    @Test func missingOutputDirectoryIsNamed() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let result = try Moonreel.run(["run", Moonreel.example("cut.lua"), clip, "/nonexistent-dir/out.mov"])
        #expect(result.status == 1 && result.err.contains("directory \"/nonexistent-dir\" does not exist"))
    }

    /// Lua 5.4's assert adds its position to a message that already has the export's.
    @Test func assertOnAFailedExportNamesTheLineOnce() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let result = try Moonreel.runScript(Moonreel.cutScript(start: 0, duration: 1, preset: "LowQuality"),
                                            arguments: [clip, "/nonexistent-folder/out.mp4"])
        #expect(result.status == 1)
        #expect(result.err.contains("/test.lua:6: output \"/nonexistent-folder/out.mp4\""), "\(result.err)")
        #expect(result.err.components(separatedBy: "test.lua:6:").count == 2, "\(result.err)")
    }

    @Test func cancelFromProgressLeavesOldFileAndNoTemporaryFile() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let output = Fixtures.scratchPath("cancelled.mp4")
        let old = Data("previous render".utf8)
        try old.write(to: URL(fileURLWithPath: output))
        let result = try Moonreel.runScript("""
            local comp = av.composition()
            local asset = av.asset(arg[1])
            comp:insertTimeRange(av.range(0, asset.duration), asset, 0)
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL = arg[2]
            session.overwrite = true
            local ok, err = session:export{ progress = function(f) if f > 0.3 then session:cancel() end end }
            print(ok, err, session.status)
            """, arguments: [clip, output])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("/test.lua:7: export cancelled\tcancelled"), "\(result.out)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == old)
        #expect(try Fixtures.leftovers(beside: output).isEmpty)
    }

    @Test func interruptCancelsCleanlyWithExitCode130() throws {
        let clip = try Fixtures.clip(seconds: 20, size: "640x360", name: "long-clip.mp4")
        let output = Fixtures.scratchPath("interrupted.mov")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Moonreel.executable)
        process.arguments = ["run", Moonreel.example("cut.lua"), clip, output, "0", "20"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let directory = (output as NSString).deletingLastPathComponent
        // Wait until the export is writing its temporary file, then press Ctrl-C.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty { usleep(20_000) }
        usleep(200_000)
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationStatus == 130)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty, "no output and no temporary file")
    }

    @Test func killedExportLeavesTheOldFileAndItsLeftoverIsCleanedNextTime() throws {
        let clip = try Fixtures.clip(seconds: 20, size: "640x360", name: "long-clip.mp4")
        let output = Fixtures.scratchPath("killed.mov")
        let old = Data("keep me".utf8)
        try old.write(to: URL(fileURLWithPath: output))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Moonreel.executable)
        process.arguments = ["run", "--overwrite", Moonreel.example("cut.lua"), clip, output, "0", "20"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, try Fixtures.leftovers(beside: output).isEmpty { usleep(20_000) }
        usleep(200_000)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == old, "SIGKILL never touches the output")
        #expect(try Fixtures.leftovers(beside: output).count == 1, "the killed export's temporary file is left")
        let again = try Moonreel.run(["run", "--overwrite", Moonreel.example("cut.lua"), clip, output])
        #expect(again.status == 0, "\(again.err)")
        #expect(try Fixtures.leftovers(beside: output).isEmpty, "the next export to that output removes it")
    }

    @Test func passthroughCutCopiesPackets() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let output = Fixtures.scratchPath("copy.mp4")
        let result = try Moonreel.runScript(Moonreel.cutScript(start: 2, duration: 3, preset: "Passthrough"), arguments: [clip, output])
        #expect(result.status == 0, "\(result.err)")
        let probe = try Tool.ffprobe(output)
        #expect(abs(probe.duration - 3) < 0.1, "\(probe.duration)")
        #expect(probe.video?.codec_name == "h264" && probe.audio?.codec_name == "aac")
        // The edit list hides the frames before the cut: playback starts at the source's 2.0 s.
        let first = try Tool.rgbFrame(output, at: 0)
        let atTwo = try Tool.rgbFrame(clip, at: 2.0)
        let atOne = try Tool.rgbFrame(clip, at: 1.0)
        #expect(first.meanDifference(atTwo) < first.meanDifference(atOne) / 2)
    }

    @Test(.enabled(if: getuid() == 0, "mounting a small tmpfs needs root"))
    func fullDiskGivesAClearErrorAndKeepsTheOldFile() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let mountPoint = Fixtures.scratchPath("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try Tool.run("mount", ["-t", "tmpfs", "-o", "size=300k", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mount failed as root: \(mounted.err)")
        defer { _ = try? Tool.run("umount", [mountPoint]) }
        let output = mountPoint + "/out.mp4"
        let old = Data("the previous export".utf8)
        try old.write(to: URL(fileURLWithPath: output))
        let result = try Moonreel.run(["run", "--overwrite", Moonreel.example("cut.lua"), clip, output, "0", "6"])
        #expect(result.status == 1)
        #expect(result.errorLines.count == 1 && result.err.contains("output \"\(output)\": the disk is full; nothing was replaced"), "\(result.err)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == old)
        #expect(try Fixtures.leftovers(beside: output).isEmpty)
    }

    /// Script-reachable values that used to kill the process with a signal: each now fails
    /// with one line, exit 1, and leaves no temporary file.
    @Test(arguments: [
        ("track ID", "local c = av.composition(); c:addMutableTrack('video', math.maxinteger); c:addMutableTrack('audio')",
         "bad argument #2 to 'addMutableTrack' (track ID must be 1…2147483647"),
        ("time scale", """
            local a = av.asset(arg[1]); local c = av.composition(); c:insertTimeRange(av.range(0, a.duration), a, 0)
            c:scaleTimeRange(av.range(0, 0.001), 9.9e8)
            local s = av.exportSession(c, "LowQuality"); s.outputURL = arg[2]; assert(s:export())
            """, "cannot play audio at 1.0101010101010101e-12× speed"),
        ("long name", """
            local a = av.asset(arg[1]); local s = av.exportSession(a, "LowQuality")
            s.outputURL = arg[3] .. "/" .. string.rep("x", 300) .. ".mp4"; assert(s:export())
            """, "File name too long"),
        ("huge layer", """
            local a = av.asset(arg[1]); local c = av.composition(); c:insertTimeRange(av.range(0, a.duration), a, 0)
            local vc = av.videoComposition(c)
            local p, v = av.layer{ frame = {0, 0, 320, 240} }, av.layer{ frame = {0, 0, 320, 240} }
            p:addSublayer(v)
            p:addSublayer(av.layer{ frame = {0, 0, 100, 100}, backgroundColor = "red", transform = av.transform():scaled(1e12) })
            vc.animationTool = av.animationTool{ videoLayer = v, parentLayer = p }
            local s = av.exportSession(c, "LowQuality"); s.outputURL = arg[2]; s.videoComposition = vc; assert(s:export())
            """, "is far larger than the output"),
    ])
    func formerCrashesGiveOneClearLine(_ name: String, _ script: String, _ message: String) throws {
        let clip = try Fixtures.clip(seconds: 2)
        let output = Fixtures.scratchPath("out.mp4")
        let directory = (output as NSString).deletingLastPathComponent
        let result = try Moonreel.runScript(script, name: "crash.lua", arguments: [clip, output, directory])
        #expect(result.status == 1, "\(name): exit \(result.status)")
        #expect(result.errorLines.count == 1 && result.err.contains(message), "\(name): \(result.err)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0 != "crash.lua" }
        #expect(left.isEmpty, "\(name): left \(left)")
    }

    /// Issue 25: a layer far larger than the output was refused at 1e5 px but silently not
    /// drawn at 1e12 px (its far edge put it "off the output"): one rule for every size. A
    /// small layer parked far away is simply not drawn.
    @Test(arguments: [1e5, 2e7, 1e12, 1e300])
    func everyHugeLayerIsRefused(_ side: Double) throws {
        let result = try Moonreel.runScript(Self.layerScript(frame: "{0, 0, \(side), \(side)}"), name: "huge.lua",
                                            arguments: [try Fixtures.clip(seconds: 2), Fixtures.scratchPath("out.mp4")])
        #expect(result.status == 1, "\(side): exit \(result.status)")
        #expect(result.errorLines.count == 1 && result.err.contains("is far larger than the output (320×240)"), "\(side): \(result.err)")
    }

    @Test func aSmallLayerFarAwayIsNotDrawn() throws {
        let output = Fixtures.scratchPath("out.mp4")
        let result = try Moonreel.runScript(Self.layerScript(frame: "{1e9, 1e9, 100, 100}"), name: "far.lua", arguments: [try Fixtures.clip(seconds: 2), output])
        #expect(result.status == 0, "\(result.err)")
        #expect(try Tool.rgbFrame(output, at: 0.5).meanDifference(Tool.rgbFrame(try Fixtures.clip(seconds: 2), at: 0.5)) < 8)
    }

    /// A red layer of `frame` over the clip `arg[1]`, exported to `arg[2]`.
    static func layerScript(frame: String) -> String {
        """
        local a = av.asset(arg[1]); local c = av.composition(); c:insertTimeRange(av.range(0, a.duration), a, 0)
        local vc = av.videoComposition(c)
        local p, v = av.layer{ frame = {0, 0, 320, 240} }, av.layer{ frame = {0, 0, 320, 240} }
        p:addSublayer(v)
        p:addSublayer(av.layer{ frame = \(frame), backgroundColor = "red" })
        vc.animationTool = av.animationTool{ videoLayer = v, parentLayer = p }
        local s = av.exportSession(c, "LowQuality"); s.outputURL = arg[2]; s.videoComposition = vc
        local ok, err = s:export(); if not ok then error(err, 0) end
        """
    }

    /// Every message is one line of at most 500 characters, naming the script line, however
    /// large the value it is about.
    @Test func messagesStayShortAndNameTheLine() throws {
        let header = Fixtures.scratchPath("wide.csv")
        try (String(repeating: "column,", count: 1_500_000) + "x\n1\n").write(toFile: header, atomically: true, encoding: .utf8)
        let cases: [(String, String)] = [
            ("error(string.rep('x', 4e7))", "big.lua:1: xxxx"),
            ("av.keyframeAnimation{ keyPath = string.rep('k', 1e6) }", "big.lua:1: keyframeAnimation: unknown keyPath \"kkk"),
            ("av.readCues(arg[1])", "big.lua:1: readCues: "),
            ("av.layer{ backgroundColor = 're\\0d' }", "unknown colour \"re\\0d\""),
            ("local s = av.exportSession(av.composition(), 'LowQuality'); s.outputURL = arg[2]; assert(s:export())", "big.lua:1: the composition is empty"),
        ]
        for (script, start) in cases {
            let result = try Moonreel.runScript(script, name: "big.lua", arguments: [header, Fixtures.scratchPath("out.mp4")])
            #expect(result.status == 1)
            #expect(result.errorLines.count == 1 && result.err.count <= 501, "\(script): \(result.err.count) characters")
            #expect(result.err.contains(start), "\(script): \(result.err.prefix(200))")
        }
        for limit in ["nan", "inf", "1e309", "0"] {
            let result = try Moonreel.runScript("print(1)", name: "limit.lua", options: ["--time-limit", limit])
            #expect(result.status == 2 && result.err.contains("--time-limit must be a number of seconds above 0"), "\(limit): \(result.err)")
        }
    }

    @Test func exportFailuresTellTheirKindToScripts() throws {
        let result = try Moonreel.runScript("""
            local s = av.exportSession(av.composition(), "LowQuality")
            s.outputURL = arg[1]
            local ok, message = s:export()
            print(ok, s.status, s.errorKind, s.error == message:match(": (.*)$"))
            """, arguments: [Fixtures.scratchPath("out.mp4")])
        #expect(result.out == "nil\tfailed\tinvalidRequest\ttrue\n", "\(result.out) \(result.err)")
    }

    /// A table whose `__index` raises, passed to a Swift function 100 000 times: Swift reads
    /// tables raw, so no error longjmps over Swift frames and leaks what they held.
    @Test func raisingMetamethodsLeaveMemoryFlat() throws {
        let result = try Moonreel.runScript("""
            local evil = setmetatable({}, { __index = function() error("evil") end })
            local function resident()
              local f = assert(io.open("/proc/self/statm")); local _, pages = f:read("n", "n"); f:close()
              return pages * 4096 / 2^20
            end
            for _ = 1, 10000 do pcall(av.layer, { frame = evil }) end
            local before = resident()
            for _ = 1, 100000 do pcall(av.layer, { frame = evil }) end
            print(("%.1f"):format(resident() - before))
            """, name: "evil.lua")
        #expect(result.status == 0, "\(result.err)")
        let growth = Double(result.out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? .infinity
        #expect(growth <= 20, "resident memory grew \(growth) MiB")
    }
}
