import Foundation
import Testing
import TestSupport
@testable import MoonreelEngine

/// Capture sessions with no camera: lavfi's virtual camera (testsrc2) and microphone (sine),
/// recorded in real time and checked with ffprobe. Serialized: each records in real time,
/// and recordings side by side on two cores would drop frames.
@Suite(.serialized) struct CaptureTests {
    /// Records `arg[1]` for `arg[2]` seconds from the virtual camera at 320×240, `arg[3]` fps,
    /// and the virtual microphone; prints each callback and the summary.
    static let recordScript = """
        local camera = av.captureDevice("lavfi:testsrc2")
        camera:format{ width = 320, height = 240, frameRate = tonumber(arg[3]) }
        local session = av.captureSession()
        session:addInput(camera)
        session:addInput(av.captureDevice("lavfi:sine"))
        session.onStarted = function(path) print("started " .. path) end
        session.onFinished = function(s) print("finished " .. s.reason) end
        session.onError = function(message) print("error " .. message) end
        assert(session:startRecording(arg[1], { maxDuration = tonumber(arg[2]) }))
        local summary = assert(session:wait())
        print(summary.videoFrames, summary.droppedVideoFrames, summary.audioSamples, summary.droppedAudioSamples, summary.duration, session.status)
        """

    /// ffprobe's view of a recording of `seconds` at `rate` fps with audio: frame rate, frame
    /// count (with the `dropped` frames the recorder counted), durations within 2 %, and audio
    /// starting and ending with the video.
    static func checkRecording(_ path: String, seconds: Double, rate: Double, dropped: Int = 0) throws {
        let probe = try Tool.ffprobe(path)
        let video = try #require(probe.video), audio = try #require(probe.audio)
        #expect(video.frameRate == rate, "r_frame_rate \(video.r_frame_rate ?? "?")")
        let frames = Double(video.frameCount ?? 0)
        #expect(abs(frames + Double(dropped) - seconds * rate) <= 3, "\(frames) frames, \(dropped) dropped")
        let videoDuration = video.durationSeconds ?? 0, audioDuration = audio.durationSeconds ?? 0
        #expect(abs(probe.duration - seconds) <= seconds * 0.02, "file \(probe.duration) s")
        #expect(abs(videoDuration - seconds) <= seconds * 0.02, "video \(videoDuration) s")
        #expect(abs(audioDuration - seconds) <= seconds * 0.02, "audio \(audioDuration) s")
        let videoStart = Double(video.start_time ?? "") ?? -1, audioStart = Double(audio.start_time ?? "") ?? -1
        #expect(abs(videoStart - audioStart) <= 0.03, "video starts at \(videoStart) s, audio at \(audioStart) s")
        #expect(abs((videoStart + videoDuration) - (audioStart + audioDuration)) <= 0.05, "video ends at \(videoStart + videoDuration) s, audio at \(audioStart + audioDuration) s")
        #expect(audio.sample_rate == "48000" && audio.channels == 2)
    }

    @Test func scriptRecordsFiveSecondsAtSixtyFPS() throws {
        let output = Fixtures.scratchPath("take.mp4")
        let result = try Moonreel.runScript(Self.recordScript, arguments: [output, "5", "60"])
        #expect(result.status == 0, "\(result.err)")
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(lines.first == "started \(output)" && lines.dropFirst().first == "finished maxDuration", "\(result.out)")
        let numbers = (lines.last ?? "").split(separator: "\t").map(String.init)
        #expect(numbers.count == 6 && numbers[5] == "finished", "\(result.out)")
        var dropped = 0
        if numbers.count == 6 {
            dropped = Int(numbers[1]) ?? -1
            Self.expectPaceKept(frames: Int(numbers[0]) ?? 0, dropped: dropped, of: 300)
            #expect(abs((Int(numbers[2]) ?? 0) - 240_000) <= 1024 && numbers[3] == "0", "samples: \(numbers[2]), dropped \(numbers[3])")
        }
        try Self.checkRecording(output, seconds: 5, rate: 60, dropped: dropped)
        #expect(try Fixtures.leftovers(beside: output).isEmpty)
    }

    @Test func recordCommandRecordsFiveSeconds() throws {
        let output = Fixtures.scratchPath("take.mov")
        let result = try Moonreel.run(["record", "--video", "lavfi:testsrc2", "--audio", "lavfi:sine", "--size", "320x240",
                                       "--rate", "60", "--duration", "5", "-o", output])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("reason: maxDuration"), "\(result.out)")
        let counts = try #require(result.out.firstMatch(of: /(\d+) frames \((\d+) dropped\)/), "\(result.out)")
        let (frames, dropped) = (Int(counts.1) ?? 0, Int(counts.2) ?? -1)
        Self.expectPaceKept(frames: frames, dropped: dropped, of: 300)
        try Self.checkRecording(output, seconds: 5, rate: 60, dropped: dropped)
    }

    /// `--rate` and `--size` set the camera's format, `--sample-rate` and `--channels` the
    /// microphone's: given without that device they were dropped in silence (a sound-only
    /// recording "at 60 fps" wrote 0 frames, exit 0). Each is refused, naming the device to give.
    @Test func aDevicesSettingsWithoutTheDeviceAreRefused() throws {
        let output = Fixtures.scratchPath("orphan.mp4")
        let sound = try Moonreel.run(["record", "--audio", "lavfi:sine", "--rate", "60", "--size", "1280x720", "--duration", "1", "-o", output])
        #expect(sound.status != 0 && sound.err.contains("--size and --rate set the camera's format; give --video too, or leave them out"), "\(sound.err)")
        let picture = try Moonreel.run(["record", "--video", "lavfi:testsrc2", "--channels", "2", "--duration", "1", "-o", output])
        #expect(picture.status != 0 && picture.err.contains("--channels sets the microphone's format; give --audio too, or leave it out"), "\(picture.err)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    /// Done means right: a camera picture that the preset's box fits at a fraction of a pixel
    /// is rounded with a note (it was silent) — from the command and at the script's line —
    /// and ffprobe reads the size the note gives; under --strict a note still records.
    @Test func aPresetThatRoundsTheCameraSaysSo() throws {
        let output = Fixtures.scratchPath("webcam.mp4")
        let command = try Moonreel.run(["record", "--video", "lavfi:testsrc2", "--size", "1280x1024", "--rate", "30", "--duration", "1",
                                        "--preset", "960x540", "-o", output])
        #expect(command.status == 0, "\(command.err)")
        #expect(command.err.contains("moonreel: note: the camera's picture 1280×1024 fitted into the preset's 960×540 box is 675×540; "
                                     + "the output is 674×540") && command.err.contains("[sizeRounded]"), "\(command.err)")
        let video = try #require(try Tool.ffprobe(output).streams.first { $0.codec_type == "video" })
        #expect(video.width == 674 && video.height == 540)
        let script = """
            local camera = av.captureDevice("lavfi:testsrc2")
            camera:format{ width = 1280, height = 1024, frameRate = 30 }
            local session = av.captureSession()
            session:addInput(camera)
            session.presetName = "960x540"
            assert(session:startRecording(arg[1], { maxDuration = 1 }))
            assert(session:wait())
            """
        let second = Fixtures.scratchPath("webcam-script.mp4")
        let result = try Moonreel.runScript(script, arguments: [second], options: ["--strict"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains(":6: the camera's picture 1280×1024 fitted into the preset's 960×540 box") && result.err.contains("[sizeRounded]"), "\(result.err)")
        #expect(try Tool.ffprobe(second).streams.first { $0.codec_type == "video" }?.width == 674)
    }

    /// A camera whose picture has odd sides is rounded to even ones with a warning; under
    /// strict the recording does not start and leaves nothing behind.
    @Test func anOddCameraSizeIsAWarningAndStrictRefusesIt() throws {
        func oddCamera() throws -> CaptureDevice {
            let camera = CaptureDevice(backend: .lavfi, mediaType: .video, name: "testsrc2", localizedName: "Virtual camera (odd)",
                                       formats: [.video(width: 161, height: 121, pixelFormat: "yuv420p", frameRates: [FrameRateRange(1, 120)])])
            try camera.selectFormat(width: 161, height: 121, frameRate: 30)
            return camera
        }
        let refused = Fixtures.scratchPath("odd-strict.mp4")
        let strict = CaptureSession()
        try strict.addInput(try oddCamera())
        strict.strict = true
        #expect(throws: ExportError.self) { try strict.startRecording(to: refused) }
        #expect(strict.status == .failed && !FileManager.default.fileExists(atPath: refused))
        #expect(try Fixtures.leftovers(beside: refused).isEmpty)
        let kept = Fixtures.scratchPath("odd.mp4")
        let session = CaptureSession()
        try session.addInput(try oddCamera())
        session.maxDuration = MediaTime(seconds: 0.5)
        try session.startRecording(to: kept)
        session.waitUntilFinished()
        #expect(session.diagnostics.map(\.level) == [.warning] && session.diagnostics.first?.kind == .sizeRounded, "\(session.diagnostics)")
        let video = try #require(try Tool.ffprobe(kept).streams.first { $0.codec_type == "video" })
        #expect(video.width == 160 && video.height == 120)
    }

    /// A live source keeps its pace: a machine too busy for a frame drops it and counts it, so
    /// recorded and dropped frames make the whole take, and a loaded machine drops a few at most
    /// (issue 25 §4: one run dropped 3 of 300 beside the rest of the suite on two cores).
    static func expectPaceKept(frames: Int, dropped: Int, of expected: Int) {
        #expect(abs(frames + dropped - expected) <= 3 && (0...15).contains(dropped), "frames: \(frames), dropped \(dropped)")
    }

    /// Runs `moonreel record` of the virtual devices at 30 fps into `output`, with no end,
    /// and sends it `signal` after `seconds`; returns its exit status.
    static func record(_ output: String, signal: Int32, after seconds: Double) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Moonreel.executable)
        process.arguments = ["record", "--quiet", "--video", "lavfi:testsrc2", "--audio", "lavfi:sine", "--size", "320x240", "--rate", "30", "-o", output]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        usleep(UInt32(seconds * 1_000_000))
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func ctrlCFinishesTheFileCleanly() throws {
        let output = Fixtures.scratchPath("interrupted.mp4")
        #expect(try Self.record(output, signal: SIGINT, after: 3) == 0)
        let probe = try Tool.ffprobe(output)
        #expect(probe.duration > 1.5 && probe.duration < 3.5, "\(probe.duration) s")
        #expect(abs((probe.video?.durationSeconds ?? 0) - (probe.audio?.durationSeconds ?? 0)) <= 0.05)
        #expect(try Fixtures.leftovers(beside: output).isEmpty)
    }

    /// A file that appears at the output name while recording is never replaced, and the
    /// take is not lost either: it stays as the hidden file, which the message names.
    @Test func aFileThatAppearsAtTheOutputKeepsTheTake() throws {
        let output = Fixtures.scratchPath("taken.mp4")
        let recorder = Process()
        recorder.executableURL = URL(fileURLWithPath: Moonreel.executable)
        recorder.arguments = ["record", "--quiet", "--video", "lavfi:testsrc2", "--size", "320x240", "--rate", "30",
                              "--duration", "3", "-o", output]
        let errors = Pipe()
        recorder.standardOutput = FileHandle.nullDevice
        recorder.standardError = errors
        try recorder.run()
        let started = Date()
        while Date().timeIntervalSince(started) < 30, (try? Fixtures.leftovers(beside: output))?.isEmpty ?? true { usleep(50_000) }
        try "the user's own file".write(toFile: output, atomically: false, encoding: .utf8)
        recorder.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(recorder.terminationStatus != 0)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "the user's own file")
        let kept = try #require(try Fixtures.leftovers(beside: output).first, "the take was deleted: \(message)")
        #expect(message.contains("the recording was kept as") && message.contains(kept), "\(message)")
        let video = try #require(try Tool.ffprobe((output as NSString).deletingLastPathComponent + "/" + kept).video)
        #expect((video.frameCount ?? 0) >= 60, "\(video.frameCount ?? 0) frames kept")
    }

    /// SIGKILL cannot be caught: what was written up to the last fragment must still play,
    /// and the output name must never hold a half-written file.
    @Test func killedRecordingLeavesAPlayableHiddenFile() throws {
        let output = Fixtures.scratchPath("killed.mp4")
        _ = try Self.record(output, signal: SIGKILL, after: 4)
        #expect(!FileManager.default.fileExists(atPath: output))
        let left = try Fixtures.leftovers(beside: output)
        #expect(left.count == 1 && left[0].hasPrefix(".killed.mp4.moonreel-") && left[0].hasSuffix(".recording.mp4"), "\(left)")
        guard let hidden = left.first else { return }
        let path = (output as NSString).deletingLastPathComponent + "/" + hidden
        let probe = try Tool.ffprobe(path)
        #expect((probe.video?.frameCount ?? 0) >= 30, "\(probe.video?.frameCount ?? 0) frames survived")
        #expect((probe.audio?.frameCount ?? 0) > 0)
        try Tool.ffmpeg(["-i", path, "-f", "null", "-"]) // decodes to the end without an error
        // A new recording to the same name keeps the survivor (it is no abandoned .tmp file).
        let again = try Moonreel.run(["record", "--quiet", "--video", "lavfi:testsrc2", "--duration", "1", "-o", output])
        #expect(again.status == 0, "\(again.err)")
        #expect(try Fixtures.leftovers(beside: output) == [hidden])
    }

    /// An encoder slower than the camera (1080p60 with HighestQuality on a loaded machine)
    /// drops pictures, spread over the take and counted, and never the sound.
    @Test func aSlowEncoderDropsFramesEvenlyAndCountsThem() throws {
        let output = Fixtures.scratchPath("busy.mp4")
        let result = try Moonreel.run(["record", "--video", "lavfi:testsrc2", "--audio", "lavfi:sine", "--size", "1920x1080",
                                       "--rate", "60", "--preset", "HighestQuality", "--duration", "2", "-o", output])
        #expect(result.status == 0, "\(result.err)")
        // Every frame slot of the take is a picture or a dropped frame.
        let counts = try #require(result.out.firstMatch(of: /(\d+) frames \((\d+) dropped\), \d+ audio samples \((\d+) dropped\)/))
        #expect(Int(counts.1).map { $0 + (Int(counts.2) ?? 0) } == 120 && counts.3 == "0", "\(result.out)")
        // Each dropped picture is said, as a warning, not only counted in the summary.
        let warned = result.errorLines.filter { $0.contains("[framesDropped]") }
        #expect(counts.2 == "0" ? warned.isEmpty : warned.count == 1 && warned[0].contains("has no picture in \(counts.2) of its 120 frame slots"),
                "\(counts.2) dropped: \(result.err)")
        let times = try Tool.framePTS(output)
        #expect((times.last ?? 0) > 1.5, "the last picture is at \(times.last ?? 0) s")
        #expect(abs((try Tool.ffprobe(output).audio?.durationSeconds ?? 0) - 2) <= 0.04)
    }

    @Test func maxFileSizeStopsBeforeTheLimit() throws {
        let output = Fixtures.scratchPath("small.mp4")
        let limit = 400_000
        let result = try Moonreel.runScript("""
            local camera = av.captureDevice("lavfi:testsrc2")
            camera:format{ width = 640, height = 480, frameRate = 30 }
            local session = av.captureSession()
            session.presetName = "HighestQuality"
            session:addInput(camera)
            assert(session:startRecording(arg[1], { maxDuration = 30, maxFileSize = \(limit) }))
            local summary = assert(session:wait())
            print(summary.reason, summary.fileSize)
            """, arguments: [output])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.hasPrefix("maxFileSize\t"), "\(result.out)")
        let size = (try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
        #expect(size > limit / 2 && size <= limit, "\(size) bytes")
        #expect((try Tool.ffprobe(output).video?.frameCount ?? 0) > 0)
    }

    @Test func stopRecordingFromTheScriptAndWhenTheScriptEnds() throws {
        let stopped = Fixtures.scratchPath("stopped.mp4"), abandoned = Fixtures.scratchPath("abandoned.mp4")
        let result = try Moonreel.runScript("""
            local function record(path)
              local session = av.captureSession()
              session:addInput(av.captureDevice("lavfi:sine"))
              assert(session:startRecording(path))
              local t = os.clock() + 0.5
              while os.clock() < t do end
              return session
            end
            local summary = assert(record(arg[1]):stopRecording())
            print(summary.reason, summary.audioSamples > 0)
            record(arg[2]) -- never stopped: ending the script finishes it
            """, arguments: [stopped, abandoned])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "stopped\ttrue\n", "\(result.out)")
        for path in [stopped, abandoned] {
            #expect((try Tool.ffprobe(path).audio?.durationSeconds ?? 0) > 0.2, "\(path)")
            #expect(try Fixtures.leftovers(beside: path).isEmpty)
        }
    }

    @Test func formatAndRequestErrorsSayWhatThereIs() throws {
        let result = try Moonreel.runScript("""
            local camera = av.captureDevice("lavfi:testsrc2")
            local mic = av.captureDevice("lavfi:sine")
            local function try(f) local ok, err = pcall(f); print(err) end
            try(function() camera:format{ width = 333, height = 240, frameRate = 60 } end)
            try(function() camera:format{ width = 320, height = 240, frameRate = 500 } end)
            try(function() camera:format{ width = 320, fps = 30 } end)
            try(function() mic:format{ sampleRate = 12345 } end)
            try(function() av.captureDevice("v4l2:/dev/nothing") end)
            local session = av.captureSession()
            session:addInput(camera)
            try(function() session:addInput(av.captureDevice("video")) end)
            print(session:startRecording("take.mkv"))
            try(function() session.presetName = "Passthrough" end)
            try(function() session:wait() end)
            """)
        #expect(result.status == 0, "\(result.err)")
        Self.expectLines(result.out, toContain: [
            "has no format 333×240 at 60 fps (it has 320×240 yuv420p 1–120 fps; 640×480 yuv420p 1–120 fps; 1280×720 yuv420p 1–120 fps; 1280×1024 yuv420p 1–120 fps; 1920×1080 yuv420p 1–120 fps)",
            "has no format 320×240 at 500 fps",
            "unknown video format field \"fps\" (known: width, height, frameRate)",
            "microphone \"lavfi:sine\" has no format 12345 Hz (it has 48000 Hz stereo; 48000 Hz mono; 44100 Hz stereo; 44100 Hz mono)",
            "no capture device \"v4l2:/dev/nothing\" (there are: lavfi:testsrc2",
            "the session already records video from \"lavfi:testsrc2\"",
            "test.lua:12: recordings are written as fragmented MP4: name the output .mp4 or .mov",
            "preset \"Passthrough\" cannot record",
            "the session is not recording (call startRecording first)",
        ])
    }

    /// Each line of `output` contains its fragment, and there are as many lines as fragments.
    static func expectLines(_ output: String, toContain fragments: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.count == fragments.count, "\(output)", sourceLocation: sourceLocation)
        for (line, fragment) in zip(lines, fragments) {
            #expect(line.contains(fragment), "\(line)\nshould contain: \(fragment)", sourceLocation: sourceLocation)
        }
    }

    @Test func effectsCannotRecord() throws {
        let (result, directory) = try EffectBoundaryTests().run(main: """
            local session = av.captureSession()
            session:addInput(av.captureDevice("lavfi:sine"))
            print(require("effects.probe").apply{ session = session })
            """, effect: """
            return { apply = function(p)
              local refused = {}
              for _, attempt in ipairs{
                function() return av.captureSession() end,
                function() return av.captureDevices("video") end,
                function() return p.session:startRecording("spy.mp4", { maxDuration = 1 }) end,
              } do
                local ok = pcall(attempt)
                refused[#refused + 1] = tostring(not ok)
              end
              return table.concat(refused, " ")
            end }
            """)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "true true true\n", "\(result.out)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/spy.mp4"))
    }

    /// x11grab of an Xvfb screen: listed at the screen's size when DISPLAY names it, and
    /// recorded at the chosen rate.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/Xvfb"), "needs Xvfb (tools/install-deps.sh)"))
    func recordsAnXvfbScreen() throws {
        try Self.withXvfb { _, display in try recordsTheScreen(display) }
    }

    private func recordsTheScreen(_ display: String) throws {
        let environment = ["DISPLAY": display]
        let list = try Tool.run(Moonreel.executable, ["record", "--list"], environment: environment)
        #expect(list.out.contains("x11grab:\(display)  Screen \(display)\n    320×240 bgr0 1–60 fps"), "\(list.out)")
        let output = Fixtures.scratchPath("screen.mp4")
        let result = try Tool.run(Moonreel.executable, ["record", "--video", "x11grab:\(display)", "--rate", "30", "--duration", "2", "-o", output],
                                  environment: environment)
        #expect(result.status == 0, "\(result.err)")
        let video = try #require(try Tool.ffprobe(output).video)
        #expect(video.width == 320 && video.height == 240 && video.frameRate == 30)
        // x11grab skips frames when the machine is busy; each skipped slot is counted.
        let counts = try #require(result.out.firstMatch(of: /(\d+) frames \((\d+) dropped\)/))
        #expect(Int(counts.1) == video.frameCount && (Int(counts.1) ?? 0) + (Int(counts.2) ?? 0) == 60, "\(result.out)")
        #expect((video.frameCount ?? 0) >= 45, "\(video.frameCount ?? 0) frames")
    }

    /// One Xvfb at a time in this test process: tests of two suites starting servers at the
    /// same moment on a loaded machine once saw one's display vanish under the other.
    static let xvfbLock = NSLock()

    /// Runs `body` with an Xvfb server (a 320×240 screen) on a display number it picks itself
    /// (`-displayfd`), once the display *answers*: an x11grab of one picture from it succeeds,
    /// not only its number being written. The server is killed afterwards (SIGKILL: the test
    /// process may block SIGTERM, and a child inherits the mask).
    static func withXvfb(_ body: (_ server: Process, _ display: String) throws -> Void) throws {
        xvfbLock.lock()
        defer { xvfbLock.unlock() }
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/Xvfb")
        server.arguments = ["-displayfd", "1", "-screen", "0", "320x240x24", "-nolisten", "tcp"]
        let number = Pipe()
        server.standardOutput = number
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { kill(server.processIdentifier, SIGCONT); kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }
        var text = ""
        let started = Date()
        while !text.hasSuffix("\n"), Date().timeIntervalSince(started) < 60, server.isRunning {
            let chunk = number.fileHandleForReading.availableData
            if chunk.isEmpty { usleep(20_000) } else { text += String(decoding: chunk, as: UTF8.self) }
        }
        let display = ":" + text.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(display.count > 1 && server.isRunning, "Xvfb did not start within 60 s")
        var answered = false
        while !answered, Date().timeIntervalSince(started) < 60, server.isRunning {
            answered = (try? Tool.run("ffmpeg", ["-v", "error", "-f", "x11grab", "-i", display, "-frames:v", "1", "-f", "null", "-"], timeout: 20))?.status == 0
            if !answered { usleep(200_000) }
        }
        try #require(answered, "Xvfb \(display) did not answer within 60 s")
        try body(server, display)
    }

    /// A PulseAudio microphone: the monitor of a null sink that ffmpeg plays a 660 Hz tone
    /// into, recorded with the virtual camera. Listed, in sync with the video, the tone there.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/pulseaudio"), "needs pulseaudio (tools/install-deps.sh)"))
    func recordsAPulseAudioNullSinkMonitor() throws {
        let environment = try Self.startPulseAudio()
        defer { _ = try? Tool.run("/usr/bin/pulseaudio", ["--kill"], environment: environment, timeout: 30) }
        let player = Process()
        player.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        player.arguments = ["-nostdin", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "sine=frequency=660:sample_rate=48000:duration=20",
                            "-f", "pulse", "-device", "moonreel_test", "tone"]
        player.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        try player.run()
        defer { kill(player.processIdentifier, SIGKILL); player.waitUntilExit() }

        let list = try Tool.run(Moonreel.executable, ["record", "--list"], environment: environment)
        #expect(list.out.contains("pulse:moonreel_test.monitor  Monitor of Null Output"), "\(list.out)")
        let output = Fixtures.scratchPath("pulse.mp4")
        let result = try Tool.run(Moonreel.executable, ["record", "--video", "lavfi:testsrc2", "--audio", "pulse:moonreel_test.monitor",
                                                        "--size", "320x240", "--rate", "30", "--duration", "4", "-o", output],
                                  environment: environment)
        #expect(result.status == 0, "\(result.err)")
        try Self.checkRecording(output, seconds: 4, rate: 30)
        let samples = try Tool.audioSamples(output)
        #expect(abs(samples.toneFrequency(from: 48_000, to: 144_000, rate: 48_000) - 660) < 5)
    }

    /// Starts a PulseAudio server of this test's own (its files in a scratch folder) with a
    /// null sink "moonreel_test"; returns the environment that reaches it. Daemonized: the
    /// server closes every inherited descriptor, which Foundation's Process takes for its end.
    static func startPulseAudio() throws -> [String: String] {
        let folder = (Fixtures.scratchPath("pulse") as NSString).deletingLastPathComponent
        let socket = folder + "/native"
        try """
            load-module module-null-sink sink_name=moonreel_test rate=48000 channels=2
            load-module module-native-protocol-unix auth-anonymous=1 socket=\(socket)
            """.write(toFile: folder + "/default.pa", atomically: true, encoding: .utf8)
        let environment = ["PULSE_SERVER": "unix:" + socket, "PULSE_RUNTIME_PATH": folder + "/run",
                           "PULSE_STATE_PATH": folder + "/state", "HOME": folder]
        let started = try Tool.run("/usr/bin/pulseaudio", ["-n", "-F", folder + "/default.pa", "--daemonize=yes", "--exit-idle-time=-1"],
                                   environment: environment, timeout: 30)
        try #require(started.status == 0, "pulseaudio did not start: \(started.err)")
        return environment
    }

    // MARK: Device format lists (canned data: the code paths of real cameras and microphones)

    @Test func v4l2FormatListBecomesCaptureFormats() throws {
        let entries = [
            V4L2Devices.Entry(fourCC: "YUYV", width: 640, height: 480, shortestInterval: (1, 30), longestInterval: (1, 5)),
            V4L2Devices.Entry(fourCC: "YUYV", width: 1280, height: 720, shortestInterval: (1, 10), longestInterval: (1, 10)),
            V4L2Devices.Entry(fourCC: "MJPG", width: 1280, height: 720, shortestInterval: (1001, 60000), longestInterval: (1, 15)),
            V4L2Devices.Entry(fourCC: "Z16 ", width: 320, height: 240, shortestInterval: (0, 0), longestInterval: (0, 0)),
        ]
        let formats = V4L2Devices.formats(from: entries)
        #expect(formats.map(\.description) == [
            "1280×720 yuyv422 10 fps", "1280×720 mjpeg 15–59.94 fps", "640×480 yuyv422 5–30 fps", "320×240 z16  any rate",
        ])
        let camera = CaptureDevice(backend: .v4l2, mediaType: .video, name: "/dev/video0", localizedName: "Webcam", formats: formats)
        // The seed's activeFormat search: the first format of that size that supports the rate.
        let chosen = try camera.selectFormat(width: 1280, height: 720, frameRate: 15)
        #expect(chosen.pixelFormat == "mjpeg" && camera.recordingFormat.frameRate == 15)
        #expect(CaptureInput.openRequest(device: camera, format: chosen, frameRate: 15)
                == ("/dev/video0", ["video_size": "1280x720", "framerate": "15", "input_format": "mjpeg"]))
        #expect(throws: EngineError.self) { try camera.selectFormat(width: 1280, height: 720, frameRate: 60) }
        #expect(camera.activeFormat == chosen) // a failed selection keeps the format there was
        #expect(V4L2Devices.fourCCText(0x5659_5559) == "YUYV")
    }

    @Test func alsaPCMListGivesCaptureDevices() {
        let listing = """
            00-00: ALC887-VD Analog : ALC887-VD Analog : playback 1 : capture 1
            00-01: ALC887-VD Digital : ALC887-VD Digital : playback 1
            01-03: HDMI 0 : HDMI 0 : playback 1
            02-00: USB Audio : USB Audio : capture 1
            """
        let devices = ALSADevices.captureDevices(inPCMList: listing)
        #expect(devices.map(\.device) == ["plughw:0,0", "plughw:2,0"])
        #expect(devices.map(\.name) == ["ALC887-VD Analog", "USB Audio"])
        let microphone = CaptureDevice(backend: .alsa, mediaType: .audio, name: devices[0].device, localizedName: devices[0].name,
                                       formats: CaptureDevices.standardAudioFormats)
        let format = try? microphone.selectFormat(sampleRate: 44100, channels: 1)
        #expect(format.map { CaptureInput.openRequest(device: microphone, format: $0, frameRate: 0) }
                .map { $0 == ("plughw:0,0", ["sample_rate": "44100", "channels": "1"]) } == true)
    }

    @Test func frameDurationsAreExact() {
        #expect(CaptureSession.frameDuration(forRate: 60) == MediaTime(value: 1, timescale: 60))
        #expect(CaptureSession.frameDuration(forRate: 29.97) == MediaTime(value: 1001, timescale: 30000))
        #expect(CaptureSession.frameDuration(forRate: 59.94) == MediaTime(value: 1001, timescale: 60000))
        #expect(CaptureSession.frameIndex(of: MediaTime(value: 2501, timescale: 1000), frameDuration: MediaTime(value: 1, timescale: 60)) == 150)
    }
}
