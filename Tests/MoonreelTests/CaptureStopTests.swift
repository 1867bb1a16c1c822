import Foundation
import Testing
import TestSupport

/// Stopping a recording whose device has stalled: the X server of an x11grab is frozen
/// (SIGSTOP), so the reader waits inside libxcb for a picture that never comes. Ctrl-C must
/// still finish the file in bounded time, with what was recorded before the stall.
@Suite(.serialized) struct CaptureStopTests {
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/Xvfb"), "needs Xvfb (tools/install-deps.sh)"))
    func ctrlCFinishesARecordingWhoseDeviceStalled() throws {
        try CaptureTests.withXvfb { server, display in try stopsAStalledRecording(server: server, display: display) }
    }

    private func stopsAStalledRecording(server: Process, display: String) throws {
        let output = Fixtures.scratchPath("stalled.mp4")
        let recorder = Process()
        recorder.executableURL = URL(fileURLWithPath: Moonreel.executable)
        recorder.arguments = ["record", "--quiet", "--video", "x11grab:\(display)", "--rate", "10", "-o", output]
        recorder.environment = ProcessInfo.processInfo.environment.merging(["DISPLAY": display]) { $1 }
        recorder.standardOutput = FileHandle.nullDevice
        let errors = Fixtures.scratchPath("recorder.err")
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        recorder.standardError = FileHandle(forWritingAtPath: errors)
        try recorder.run()
        defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
        // Recording runs once its hidden file is there (the device is open: a busy machine
        // starts slowly); two seconds later it holds fragments.
        let recording = Date()
        while Date().timeIntervalSince(recording) < 30, (try? Fixtures.leftovers(beside: output))?.isEmpty ?? true { usleep(50_000) }
        usleep(2_000_000)
        try #require(recorder.isRunning, "the recorder ended before the stall: \((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")")
        kill(server.processIdentifier, SIGSTOP) // the screen stops answering
        usleep(1_000_000)
        let asked = Date()
        kill(recorder.processIdentifier, SIGINT)
        while recorder.isRunning && Date().timeIntervalSince(asked) < 10 { usleep(20_000) }
        let waited = Date().timeIntervalSince(asked)
        #expect(!recorder.isRunning, "Ctrl-C did not stop a recording whose device stalled (waited \(waited) s)")
        guard !recorder.isRunning else { return }
        recorder.waitUntilExit()
        #expect(recorder.terminationStatus == 0, "\((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")")
        #expect(waited < 4, "stopping took \(waited) s")
        let video = try #require(try Tool.ffprobe(output).video)
        #expect((video.frameCount ?? 0) >= 10, "\(video.frameCount ?? 0) frames")
        try Tool.ffmpeg(["-i", output, "-f", "null", "-"])
    }

    /// Issue 24 §9: an X display that accepts connections and never answers (a stopped
    /// Xvfb) and a PulseAudio server that does the same (a socket nobody reads) are given
    /// up after 2 s each, with a line saying so; opening a named device asks no other
    /// backend, so the virtual camera records at once. Before, all of these hung.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/Xvfb"), "needs Xvfb (tools/install-deps.sh)"))
    func devicesThatDoNotAnswerAreGivenUp() throws {
        try CaptureTests.withXvfb { server, display in try givesUpSilentDevices(server: server, display: display) }
    }

    private func givesUpSilentDevices(server: Process, display: String) throws {
        kill(server.processIdentifier, SIGSTOP)
        // A "sound server": connections complete in the listen backlog; nothing is ever read.
        let silent = Process()
        silent.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        silent.arguments = ["-c", "import socket, time; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(64); print(s.getsockname()[1], flush=True); time.sleep(120)"]
        let portPipe = Pipe()
        silent.standardOutput = portPipe
        try silent.run()
        // SIGKILL: a test thread may have SIGTERM blocked, and children inherit the mask.
        defer { kill(silent.processIdentifier, SIGKILL); silent.waitUntilExit() }
        let port = String(decoding: portPipe.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let environment = ["DISPLAY": display, "PULSE_SERVER": "tcp:127.0.0.1:\(port)"]

        let output = Fixtures.scratchPath("virtual.mp4")
        var asked = Date()
        let record = try Tool.run(Moonreel.executable, ["record", "--quiet", "--video", "lavfi:testsrc2", "--audio", "lavfi:sine", "--size", "320x240", "--rate", "30",
                                                                  "--duration", "2", "-o", output],
                                  environment: environment, timeout: 60)
        #expect(record.status == 0, "\(record.err)")
        #expect(Date().timeIntervalSince(asked) < 7, "recording the virtual devices took \(Date().timeIntervalSince(asked)) s")
        try CaptureTests.checkRecording(output, seconds: 2, rate: 30)

        asked = Date()
        let list = try Tool.run(Moonreel.executable, ["record", "--list"], environment: environment, timeout: 60)
        let took = Date().timeIntervalSince(asked)
        #expect(list.status == 0 && list.out.contains("lavfi:testsrc2") && !list.out.contains("x11grab"), "\(list.out)")
        #expect(list.err.contains("moonreel: note: X display \"\(display)\" does not answer (waited 2 s); the screen is not listed"), "\(list.err)")
        #expect(list.err.contains("moonreel: note: the PulseAudio server does not answer (waited 2 s)"), "\(list.err)")
        #expect(took < 9, "listing took \(took) s")
    }
}
