import Foundation
@testable import MoonreelEngine
import Testing
import TestSupport

/// The library hand-off (`av.mediaLibrary`): recordings of the lavfi virtual devices exported
/// into a library folder, checked with ffprobe, and a real `moonreel run` killed (SIGKILL) at
/// every step of the hand-off, then run again to recover.
@Suite(.serialized) struct MediaLibraryTests {
    /// Opens the library `arg[2]`, prints what it recovered, and hands `arg[1]` to it (when
    /// the file is there) with `arg[3]` as preset, deleting the source.
    static let handOffScript = """
        local library = av.mediaLibrary(arg[2])
        for _, item in ipairs(library.recovered) do print("recovered " .. item.path) end
        for _, warning in ipairs(library.warnings) do print("warning " .. warning) end
        local file = io.open(arg[1], "rb")
        if file then
          file:close()
          local item, err = library:add(arg[1], { preset = arg[3] or "MediumQuality", deleteSource = true })
          if not item then error(err, 0) end
          print("added " .. item.path)
        end
        """

    /// A 1.5 s recording of the virtual camera (30 fps) and microphone, made once per run.
    static func recording() throws -> String {
        try Fixtures.cached("library-source.mp4") { path in
            let result = try Moonreel.run(["record", "--quiet", "--video", "lavfi:testsrc2", "--audio", "lavfi:sine", "--size", "320x240",
                                           "--rate", "30", "--duration", "1.5", "-o", path])
            guard result.status == 0 else { throw MediaLibraryTestFailure(message: result.err) }
        }
    }

    /// A fresh copy of the recording as the source of one hand-off, in a folder of its own
    /// with the library beside it.
    static func freshSource() throws -> (source: String, library: String) {
        let source = Fixtures.scratchPath("take.mp4")
        try FileManager.default.copyItem(atPath: try recording(), toPath: source)
        return (source, (source as NSString).deletingLastPathComponent + "/Library")
    }

    /// Every file under `folder`, relative, hidden ones included.
    static func files(under folder: String) -> [String] {
        (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? []).filter {
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: folder + "/" + $0, isDirectory: &isDirectory) && !isDirectory.boolValue
        }.sorted()
    }

    /// What must hold whenever the hand-off stopped: every visible library file complete
    /// (a movie that plays as long as the source with video and audio, a sidecar that parses
    /// and names the source), the source byte-identical when present, and the recording in
    /// at least one of the two places. Returns the visible movies.
    @discardableResult
    static func checkInvariant(source: String, library: String, original: Data, step: String) throws -> [String] {
        let all = files(under: library)
        let visible = all.filter { !$0.split(separator: "/").contains { $0.hasPrefix(".") } }
        let movies = visible.filter { $0.hasSuffix(".mp4") }
        for name in visible {
            #expect(name.hasSuffix(".mp4") || name.hasSuffix(".json"), "\(step): stray file \(name)")
            #expect(name.wholeMatch(of: /\d{4}\/\d{2}\/\d{4}-\d{2}-\d{2} \d{2}\.\d{2}\.\d{2}( \d+)?\.(mp4|json)/) != nil, "\(step): name \(name)")
        }
        for movie in movies {
            let probe = try Tool.ffprobe(library + "/" + movie)
            #expect(abs(probe.duration - 1.5) <= 0.1, "\(step): \(movie) is \(probe.duration) s")
            #expect(probe.video != nil && probe.audio != nil, "\(step): \(movie) streams")
            try Tool.ffmpeg(["-i", library + "/" + movie, "-f", "null", "-"])
        }
        for sidecar in visible.filter({ $0.hasSuffix(".json") }) {
            let data = try Data(contentsOf: URL(fileURLWithPath: library + "/" + sidecar))
            let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(step): \(sidecar)")
            #expect(json["source"] as? String == source && json["preset"] as? String == "MediumQuality", "\(step): \(json)")
            #expect((json["streams"] as? [Any])?.count == 2 && json["recordingStarted"] is String && json["exported"] is String)
            #expect(movies.contains(String(sidecar.dropLast(5)) + ".mp4"), "\(step): sidecar \(sidecar) without its movie")
        }
        // Hidden files live only in the staging folder or as a sidecar's temporary file.
        for name in all where !visible.contains(name) {
            #expect(name.hasPrefix(".moonreel-import/") || name.hasSuffix(".tmp"), "\(step): hidden \(name)")
        }
        let sourceData = FileManager.default.contents(atPath: source)
        if let sourceData { #expect(sourceData == original, "\(step): the source changed") }
        #expect(sourceData != nil || !movies.isEmpty, "\(step): the recording is neither the source nor in the library")
        return movies
    }

    @Test func killedAtEveryStepTheRecordingSurvivesAndARerunFinishes() throws {
        let steps = MediaLibrary.Step.allCases.map(\.rawValue)
        #expect(steps.count == 9)
        for step in steps {
            let (source, library) = try Self.freshSource()
            let original = try Data(contentsOf: URL(fileURLWithPath: source))
            let script = Fixtures.scratchPath("handoff.lua")
            try Self.handOffScript.write(toFile: script, atomically: true, encoding: .utf8)
            let killed = try Tool.run(Moonreel.executable, ["run", script, source, library], environment: ["MOONREEL_TEST_KILL_AT": step])
            #expect(killed.status == SIGKILL && !killed.out.contains("added"), "\(step): \(killed.status) \(killed.out) \(killed.err)")
            let movies = try Self.checkInvariant(source: source, library: library, original: original, step: step)
            let placed = steps.firstIndex(of: step) ?? 0 >= steps.firstIndex(of: "moviePlaced") ?? 0
            #expect(movies.count == (placed ? 1 : 0), "\(step): \(movies)")
            #expect(FileManager.default.fileExists(atPath: source) == (step != "sourceDeleted"), "\(step)")

            let rerun = try Tool.run(Moonreel.executable, ["run", script, source, library])
            #expect(rerun.status == 0, "\(step): \(rerun.err)")
            let journaled = steps.firstIndex(of: step) ?? 0 >= steps.firstIndex(of: "journaled") ?? 0
            #expect(rerun.out.hasPrefix(journaled ? "recovered " : "added "), "\(step): \(rerun.out)")
            let finished = try Self.checkInvariant(source: source, library: library, original: original, step: step + " then rerun")
            #expect(finished.count == 1, "\(step): \(finished)")
            #expect(!FileManager.default.fileExists(atPath: source), "\(step): the source is still there")
            let everything = Self.files(under: library)
            #expect(everything.count == 2 && everything.allSatisfy { !$0.hasPrefix(".") && !$0.contains("/.") }, "\(step): \(everything)")
            // A third run has nothing left to do.
            let third = try Tool.run(Moonreel.executable, ["run", script, source, library])
            #expect(third.status == 0 && third.out.isEmpty, "\(step): \(third.out) \(third.err)")
        }
    }

    /// The bundled example: 5 s from the virtual camera and microphone at 60 fps, handed to
    /// the library with HighestQuality.
    @Test func exampleRecordsFiveSecondsAndHandsThemToTheLibrary() throws {
        let take = Fixtures.scratchPath("take.mp4")
        let library = (take as NSString).deletingLastPathComponent + "/Library"
        let result = try Moonreel.run(["run", Moonreel.example("record_to_library.lua"), take, library, "60", "5"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("recorded 5.00 s") && result.out.contains("take deleted: true"), "\(result.out)")
        let counts = try #require(result.out.firstMatch(of: /(\d+) frames \((\d+) dropped\)/), "\(result.out)")
        let dropped = Int(counts.2) ?? -1
        CaptureTests.expectPaceKept(frames: Int(counts.1) ?? 0, dropped: dropped, of: 300)
        #expect(!FileManager.default.fileExists(atPath: take))
        let movies = Self.files(under: library).filter { $0.hasSuffix(".mp4") }
        let movie = library + "/" + (try #require(movies.first))
        #expect(movies.count == 1 && FileManager.default.fileExists(atPath: String(movie.dropLast(4)) + ".json"))
        try CaptureTests.checkRecording(movie, seconds: 5, rate: 60, dropped: dropped)
    }

    /// Issue 25: a 2.000 s, 120-frame take at 60 fps whose sound runs a little longer (as an
    /// AAC encoder's last block does) came out of the library with 122 frames (2.033 s): the
    /// copy has the take's frames.
    @Test func theCopyHasTheTakesFrames() throws {
        let take = Fixtures.scratchPath("take.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=60:duration=2", "-f", "lavfi", "-i", "sine=duration=2.04",
                         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", take])
        let library = (take as NSString).deletingLastPathComponent + "/Library"
        let result = try Moonreel.runScript(Self.handOffScript, name: "handoff.lua", arguments: [take, library, "HighestQuality"])
        #expect(result.status == 0, "\(result.err)")
        let movie = library + "/" + (try #require(Self.files(under: library).first { $0.hasSuffix(".mp4") }))
        let video = try #require(try Tool.ffprobe(movie).streams.first { $0.codec_type == "video" })
        #expect(video.frameCount == 120, "the take has 120 frames")
        #expect(abs((video.durationSeconds ?? 0) - 2) < 0.001)
    }

    /// Issue 40 §2i: a take recorded by Moonreel itself (written in fragments, which state
    /// no frame count, its last frame stretched to meet the sound) still came out with 122
    /// frames for 120. The copy has as many frames as the recording reports.
    @Test func aRecordedTakeKeepsItsFrameCount() throws {
        let take = Fixtures.scratchPath("take.mp4")
        let library = (take as NSString).deletingLastPathComponent + "/Library"
        let result = try Moonreel.run(["run", Moonreel.example("record_to_library.lua"), take, library, "60", "2"])
        #expect(result.status == 0, "\(result.err)")
        let recorded = try #require(result.out.firstMatch(of: /recorded [\d.]+ s, (\d+) frames/).flatMap { Int($0.1) }, "\(result.out)")
        let movie = library + "/" + (try #require(Self.files(under: library).first { $0.hasSuffix(".mp4") }))
        let video = try #require(try Tool.ffprobe(movie).streams.first { $0.codec_type == "video" })
        #expect(video.frameCount == recorded, "the take has \(recorded) frames, the copy \(video.frameCount ?? -1)")
        #expect(abs((video.durationSeconds ?? 0) - Double(recorded) / 60) < 0.001)
    }

    /// Names come from the recording's start; a name that is taken (by an earlier recording
    /// of that second, or a file of the user's) is never replaced: " 2", " 3" follow.
    /// `--dry-run` checks a job without writing: a hand-off with deleteSource must neither
    /// export nor delete the take, and a recording must not start.
    @Test func aDryRunHandsNothingOffAndRecordsNothing() throws {
        let take = Fixtures.scratchPath("take.mp4")
        try FileManager.default.copyItem(atPath: try Fixtures.clip(seconds: 1), toPath: take)
        let library = (take as NSString).deletingLastPathComponent + "/Library"
        let result = try Moonreel.runScript("""
            local lib = av.mediaLibrary(arg[2])
            print(lib:add(arg[1], { deleteSource = true }))
            local session = av.captureSession()
            session:addInput(av.captureDevice("lavfi:testsrc2"))
            print(session:startRecording(arg[3], { maxDuration = 1 }))
            """, arguments: [take, library, (take as NSString).deletingLastPathComponent + "/new.mp4"], options: ["--dry-run"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("library:add does nothing in a dry run"), "\(result.out)")
        #expect(result.out.contains("startRecording does nothing in a dry run"), "\(result.out)")
        #expect(FileManager.default.fileExists(atPath: take), "the take was deleted by a dry run")
        let placed = (FileManager.default.enumerator(atPath: library)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".mp4") }
        #expect(placed.isEmpty, "\(placed)")
        #expect(try Fixtures.leftovers(beside: take) == ["Library"] || Fixtures.leftovers(beside: take).isEmpty)
    }

    /// Done means right: the library's export changed a 161×121 take to 160×120 and said
    /// nothing, even under `--strict`, and then deleted the take. Now its warnings come at the
    /// `add` line; under `--strict` the hand-off fails and the take is kept.
    @Test func theCopysWarningsAreSaidAndStrictKeepsTheTake() throws {
        let take = Fixtures.scratchPath("odd.webm")
        try FileManager.default.copyItem(atPath: Fixtures.real("11_vp9_odd_161x121.webm"), toPath: take)
        let library = (take as NSString).deletingLastPathComponent + "/Library"
        let strict = try Moonreel.runScript(Self.handOffScript, name: "hand-off.lua", arguments: [take, library, "HighestQuality"], options: ["--strict"])
        #expect(strict.status != 0 && strict.err.contains("strict: renderSize 161×121 is not made of even whole numbers") && strict.err.contains("the recording was kept")
                && strict.err.contains("the library copy was not written") && !strict.err.contains("/proc/self/fd"), "\(strict.err)")
        #expect(FileManager.default.fileExists(atPath: take), "the take was deleted for a copy that differs from it")
        #expect(!Self.files(under: library).contains { $0.hasSuffix(".mp4") && !$0.hasPrefix(".") }, "nothing placed")
        let plain = try Moonreel.runScript(Self.handOffScript, name: "hand-off.lua", arguments: [take, library, "HighestQuality"])
        #expect(plain.status == 0, "\(plain.err)")
        #expect(plain.errorLines.contains { $0.contains("warning: ") && $0.contains("hand-off.lua:7: renderSize 161×121") && $0.hasSuffix("[sizeRounded]") }, "\(plain.err)")
        let placed = try #require(Self.files(under: library).first { $0.hasSuffix(".mp4") && !$0.hasPrefix(".") })
        let video = try #require(try Tool.ffprobe(library + "/" + placed).video)
        #expect(video.width == 160 && video.height == 120, "the copy is as the warning says")
    }

    @Test func takenNamesAreNeverReplaced() throws {
        let (first, library) = try Self.freshSource()
        let folder = (first as NSString).deletingLastPathComponent
        let second = folder + "/second.mp4", third = folder + "/third.mp4"
        try FileManager.default.copyItem(atPath: first, toPath: second)
        try FileManager.default.copyItem(atPath: first, toPath: third)
        let when = Date(timeIntervalSince1970: 1_795_000_000.5) // the three end in the same second
        for path in [first, second, third] { try FileManager.default.setAttributes([.modificationDate: when], ofItemAtPath: path) }
        // The user's own file where the second name would go.
        let asset = try Asset(path: first)
        var start = time_t((when.timeIntervalSince1970 - asset.duration.seconds).rounded(.down))
        var parts = tm()
        localtime_r(&start, &parts)
        let base = MediaLibrary.format("%Y/%m/%Y-%m-%d %H.%M.%S", parts)
        try FileManager.default.createDirectory(atPath: library + "/" + (base as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try "mine".write(toFile: library + "/\(base) 2.json", atomically: true, encoding: .utf8)
        let script = Fixtures.scratchPath("add.lua")
        try """
            local library = av.mediaLibrary(arg[1])
            for i = 2, #arg do print(assert(library:add(arg[i], { preset = "Passthrough" })).path) end
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try Tool.run(Moonreel.executable, ["run", script, library, first, second, third])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == ["", " 3", " 4"].map { "\(library)/\(base)\($0).mp4\n" }.joined(), "\(result.out)")
        #expect(try String(contentsOfFile: library + "/\(base) 2.json", encoding: .utf8) == "mine")
        // deleteSource was not asked for: the recordings stay.
        #expect([first, second, third].allSatisfy { FileManager.default.fileExists(atPath: $0) })
    }

    /// A recovery deletes the source only if it is still the same file: a new recording
    /// made under the old name after the kill is kept.
    @Test func recoveryKeepsANewFileUnderTheSourceName() throws {
        let (source, library) = try Self.freshSource()
        let script = Fixtures.scratchPath("handoff.lua")
        try Self.handOffScript.write(toFile: script, atomically: true, encoding: .utf8)
        let killed = try Tool.run(Moonreel.executable, ["run", script, source, library], environment: ["MOONREEL_TEST_KILL_AT": "sidecarPlaced"])
        #expect(killed.status == SIGKILL)
        try FileManager.default.removeItem(atPath: source)
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30:duration=1", source])
        let fresh = try Data(contentsOf: URL(fileURLWithPath: source))
        let recover = Fixtures.scratchPath("recover.lua")
        try """
            local library = av.mediaLibrary(arg[1])
            for _, item in ipairs(library.recovered) do print(item.recovered, item.sourceDeleted) end
            """.write(toFile: recover, atomically: true, encoding: .utf8)
        let rerun = try Tool.run(Moonreel.executable, ["run", recover, library])
        #expect(rerun.status == 0 && rerun.out == "true\tfalse\n", "\(rerun.out) \(rerun.err)")
        #expect(FileManager.default.contents(atPath: source) == fresh)
        #expect(Self.files(under: library).count == 2)
    }

    /// A hand-off still running is left alone by an opening, whatever its PID says (another
    /// PID namespace or host may run it): its lock is held. A dead one's lock is free and its
    /// files go; files without a lock are not provably Moonreel's and stay.
    @Test func aRunningHandOffIsNotTouched() throws {
        let (_, library) = try Self.freshSource()
        let staging = library + "/.moonreel-import"
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        let running = "999999999-a", dead = "999999998-b", unlocked = "999999997-c"
        for token in [running, dead, unlocked] {
            try "partial".write(toFile: staging + "/\(token).mp4", atomically: true, encoding: .utf8)
        }
        for token in [running, dead] { try "".write(toFile: staging + "/\(token).lock", atomically: true, encoding: .utf8) }
        let held = open(staging + "/\(running).lock", O_RDWR)
        defer { close(held) }
        #expect(held >= 0 && flock(held, LOCK_EX) == 0)
        let script = Fixtures.scratchPath("open.lua")
        try "print(#av.mediaLibrary(arg[1]).recovered)".write(toFile: script, atomically: true, encoding: .utf8)
        let result = try Tool.run(Moonreel.executable, ["run", script, library])
        #expect(result.status == 0 && result.out == "0\n", "\(result.out) \(result.err)")
        let left = Set((try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? [])
        #expect(left == ["\(running).mp4", "\(running).lock", "\(unlocked).mp4"], "\(left)")
    }

    /// Issue 24 §1: a hidden folder that is a symbolic link is neither followed nor cleaned:
    /// the files it leads to survive (before, every name starting with digits and "-" or "."
    /// was deleted by merely opening the library), and the opening says why.
    @Test func aLinkedHiddenFolderIsNeverFollowed() throws {
        let (source, library) = try Self.freshSource()
        let elsewhere = (library as NSString).deletingLastPathComponent + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        let names = ["123.txt", "2024-01-01 vacation.jpg", "99999-notes.txt", "4000000-x.mp4", "4242-abc.lock", "4242-abc.mp4"]
        for name in names { try name.write(toFile: elsewhere + "/" + name, atomically: true, encoding: .utf8) }
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: library + "/.moonreel-import", withDestinationPath: elsewhere)
        let script = Fixtures.scratchPath("handoff.lua")
        try Self.handOffScript.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try Tool.run(Moonreel.executable, ["run", script, source, library])
        #expect(result.status != 0, "\(result.out)")
        #expect(result.out.contains("warning library \"\(library)\": its hidden folder .moonreel-import is a symbolic link or a file, not a folder"), "\(result.out)")
        #expect(result.err.contains("its hidden folder .moonreel-import is a symbolic link or a file, not a folder; Moonreel neither uses nor cleans it"), "\(result.err)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: elsewhere)) == Set(names))
        #expect(FileManager.default.fileExists(atPath: source))
    }

    /// Links inside the hidden folder are not followed either: a lock that is a link is no
    /// lock, and a staged "copy" that is a link is not removed through.
    @Test func linksInsideTheHiddenFolderAreNotFollowed() throws {
        let (_, library) = try Self.freshSource()
        let staging = library + "/.moonreel-import", outside = (library as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        for name in ["keep.mp4", "keep.lock"] { try name.write(toFile: outside + "/" + name, atomically: true, encoding: .utf8) }
        try FileManager.default.createSymbolicLink(atPath: staging + "/77-ab.lock", withDestinationPath: outside + "/keep.lock")
        try FileManager.default.createSymbolicLink(atPath: staging + "/77-ab.mp4", withDestinationPath: outside + "/keep.mp4")
        try "".write(toFile: staging + "/78-cd.lock", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: staging + "/78-cd.mp4", withDestinationPath: outside + "/keep.mp4")
        let script = Fixtures.scratchPath("open.lua")
        try "print(#av.mediaLibrary(arg[1]).recovered)".write(toFile: script, atomically: true, encoding: .utf8)
        let result = try Tool.run(Moonreel.executable, ["run", script, library])
        #expect(result.status == 0 && result.out == "0\n", "\(result.out) \(result.err)")
        for name in ["keep.mp4", "keep.lock"] { #expect(try String(contentsOfFile: outside + "/" + name, encoding: .utf8) == name) }
        let left = Set((try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? [])
        #expect(left == ["77-ab.lock", "77-ab.mp4", "78-cd.mp4"], "\(left)")
    }

    /// A journal line for the identity of the file at `path` ("device:inode:size:mtime ns").
    static func identity(_ path: String) -> String {
        var info = stat()
        _ = stat(path, &info)
        return "\(Int64(bitPattern: UInt64(info.st_dev))):\(Int64(bitPattern: UInt64(info.st_ino))):\(info.st_size):\(Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))"
    }

    /// Issue 24 §2: journals someone wrote into the hidden folder (with a free lock, as a
    /// dead hand-off leaves) cannot delete a file outside the library, place anything
    /// outside it, or pull an outside file in.
    @Test func aCraftedJournalTouchesNothingOutsideTheLibrary() throws {
        let (_, library) = try Self.freshSource()
        let outside = (library as NSString).deletingLastPathComponent
        let staging = library + "/.moonreel-import"
        try FileManager.default.createDirectory(atPath: staging + "/93-c.mp4", withIntermediateDirectories: true)
        let victim = outside + "/victim.txt", pulled = outside + "/pulled.txt"
        try "precious".write(toFile: victim, atomically: true, encoding: .utf8)
        try "mine".write(toFile: pulled, atomically: true, encoding: .utf8)
        func journal(_ token: String, fileType: String = "mp4", destination: String = "2026/11/2026-11-24 14.03.22", movie: String) -> String {
            ["version=2", "token=\(token)", "fileType=\(fileType)", "destination=\(destination)", "source=\(victim)", "preset=MediumQuality",
             "duration=1.5", "sourceDuration=1.5", "started=0", "ended=1.5", "exported=2", "streams=[]", "fileSize=8",
             "deleteSource=1", "sourceIdentity=\(Self.identity(victim))", "movieIdentity=\(Self.identity(movie))", "signature=00"]
                .joined(separator: "\n") + "\n"
        }
        // 91: a valid hand-off of the victim, but not signed with the user's key.
        try FileManager.default.copyItem(atPath: try Self.recording(), toPath: staging + "/91-a.mp4")
        // 92: the movie and sidecar placed two folders up.
        try FileManager.default.copyItem(atPath: try Self.recording(), toPath: staging + "/92-b.mp4")
        // 93: the staged "copy" is an outside file reached through "../".
        let journals = [
            "91-a": journal("91-a", movie: staging + "/91-a.mp4"),
            "92-b": journal("92-b", destination: "../../escaped", movie: staging + "/92-b.mp4"),
            "93-c": journal("93-c", fileType: "mp4/../../../pulled.txt", movie: pulled),
        ]
        for (token, text) in journals {
            try text.write(toFile: staging + "/\(token).journal", atomically: true, encoding: .utf8)
            try "".write(toFile: staging + "/\(token).lock", atomically: true, encoding: .utf8)
        }
        let script = Fixtures.scratchPath("open.lua")
        try """
            local library = av.mediaLibrary(arg[1])
            for _, item in ipairs(library.recovered) do print("recovered", item.sourceDeleted) end
            for _, warning in ipairs(library.warnings) do print(warning) end
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try Tool.run(Moonreel.executable, ["run", script, library])
        #expect(result.status == 0, "\(result.err)")
        CaptureTests.expectLines(result.out, toContain: [
            "recovered\tfalse",
            "could not be deleted: its journal is not signed with this user's library key",
            "the journal 92-b.journal was refused (destination \"../../escaped\" is not a library name)",
            "the journal 93-c.journal was refused (file type \"mp4/../../../pulled.txt\" is not one of mp4, mov, m4a)",
        ])
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        #expect(try String(contentsOfFile: pulled, encoding: .utf8) == "mine")
        let above = ((outside as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        #expect(!FileManager.default.fileExists(atPath: above + "/escaped.mp4") && !FileManager.default.fileExists(atPath: above + "/escaped.json"))
        #expect(Self.files(under: library).filter { !$0.hasPrefix(".") }.count == 2, "\(Self.files(under: library))")
    }

    /// Issue 24 §3: a source that cannot be deleted (its folder is on a read-only mount)
    /// still gives the added item, says why the source stayed, once, and leaves no journal
    /// that the next opening would warn about again.
    @Test func aSourceThatCannotBeDeletedIsAddedAndSaysSo() throws {
        let (take, library) = try Self.freshSource()
        let readOnly = (take as NSString).deletingLastPathComponent + "/card"
        try FileManager.default.createDirectory(atPath: readOnly, withIntermediateDirectories: true)
        let source = readOnly + "/take.mp4"
        try FileManager.default.moveItem(atPath: take, toPath: source)
        let script = Fixtures.scratchPath("add.lua")
        try """
            local library = av.mediaLibrary(arg[2])
            local item = assert(library:add(arg[1], { preset = "MediumQuality", deleteSource = true }))
            print(item.sourceDeleted, item.sourceDeletionError)
            local again = av.mediaLibrary(arg[2])
            print(#again.recovered, #again.warnings)
            """.write(toFile: script, atomically: true, encoding: .utf8)
        // A private mount namespace: the read-only bind mount ends with the command.
        let result = try Tool.run("unshare", ["-m", "sh", "-c", "mount --bind \"$1\" \"$1\" && mount -o remount,bind,ro \"$1\" && exec \"$2\" run \"$3\" \"$4\" \"$5\"",
                                              "sh", readOnly, Moonreel.executable, script, source, library])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "false\tRead-only file system\n0\t0\n", "\(result.out)")
        let notes = result.err.split(separator: "\n").filter { $0.contains("could not be deleted") }
        #expect(notes.count == 1 && notes[0].contains("add.lua:2: added \"\(library)/") && notes[0].hasSuffix("the source \"\(source)\" could not be deleted: Read-only file system [fileNotAsExpected]"), "\(result.err)")
        #expect(FileManager.default.fileExists(atPath: source))
        #expect(Self.files(under: library).count == 2, "\(Self.files(under: library))")
    }

    /// Issue 24 §17: Ctrl-C after the commit point (the journal is in place) still ends the
    /// run with 130, but first says what happened: the hand-off was finished, where the movie
    /// is, and that the recording was deleted (before: only "interrupted").
    @Test func anInterruptAfterTheCommitPointSaysTheHandOffFinished() throws {
        let (source, library) = try Self.freshSource()
        let script = Fixtures.scratchPath("handoff.lua")
        try Self.handOffScript.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try Tool.run(Moonreel.executable, ["run", script, source, library], environment: ["MOONREEL_TEST_KILL_AT": "journaled:INT"])
        #expect(result.status == 130, "\(result.out) \(result.err)")
        let movies = Self.files(under: library).filter { $0.hasSuffix(".mp4") }
        #expect(movies.count == 1 && !FileManager.default.fileExists(atPath: source), "\(movies)")
        let note = "moonreel: note: handoff.lua:7: the run was interrupted after the hand-off of \"\(source)\" was committed; it was finished: the movie is at \"\(library)/\(movies.first ?? "")\" and the recording was deleted"
        #expect(result.err.contains(note), "\(result.err)")
        #expect(result.err.hasSuffix("moonreel: interrupted\n"), "\(result.err)")
    }

    @Test func errorsNameTheFileAndKeepTheRecording() throws {
        let (source, library) = try Self.freshSource()
        let folder = (source as NSString).deletingLastPathComponent
        try "text".write(toFile: folder + "/notes.txt", atomically: true, encoding: .utf8)
        let result = try Moonreel.runScript("""
            local library = av.mediaLibrary(arg[2])
            print(library:add(arg[3] .. "/missing.mp4"))
            print(library:add(arg[1], { preset = "AppleM4A", deleteSource = true }))
            print(pcall(library.add, library, arg[1], { presetName = "HighestQuality" }))
            print(pcall(av.mediaLibrary, arg[3] .. "/notes.txt"))
            print(pcall(av.mediaLibrary, arg[3] .. "/no/such/Library"))
            """, arguments: [source, library, folder])
        #expect(result.status == 0, "\(result.err)")
        CaptureTests.expectLines(result.out, toContain: [
            "test.lua:2: recording \"\(folder)/missing.mp4\": no such file",
            "test.lua:3: preset AppleM4A drops the video of \"\(source)\"; use a video preset such as HighestQuality or Passthrough",
            "unknown library option \"presetName\" (known: preset, deleteSource)",
            "library \"\(folder)/notes.txt\" is a file, not a folder; choose a folder",
            "cannot make the folder (No such file or directory); check that its parent folder exists",
        ])
        #expect(FileManager.default.fileExists(atPath: source))
        #expect(Self.files(under: library).isEmpty)
    }
}

struct MediaLibraryTestFailure: Error { let message: String }
