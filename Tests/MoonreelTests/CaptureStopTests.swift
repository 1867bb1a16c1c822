import Foundation
import Testing
import TestSupport

/// Stopping a recording whose device has stalled: the X server of an x11grab is frozen
/// (SIGSTOP), so the reader waits inside libxcb for a picture that never comes. Ctrl-C must
/// still finish the file in bounded time, with what was recorded before the stall.
@Suite(.serialized) struct CaptureStopTests {
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/Xvfb"), "needs Xvfb (tools/install-deps.sh)"))
    func ctrlCFinishesARecordingWhoseDeviceStalled() throws {
        let (server, display) = try CaptureTests.startXvfb(number: 1000)
        defer { kill(server.processIdentifier, SIGCONT); kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }
        // The screen answers once moonreel lists it (a loaded machine is slow to start Xvfb).
        let started = Date()
        while Date().timeIntervalSince(started) < 30,
              !(try Tool.run(Moonreel.executable, ["record", "--list"], environment: ["DISPLAY": display])).out.contains("x11grab:\(display)") {
            usleep(200_000)
        }
        let output = Fixtures.scratchPath("stalled.mp4")
        let recorder = Process()
        recorder.executableURL = URL(fileURLWithPath: Moonreel.executable)
        recorder.arguments = ["record", "--quiet", "--video", "x11grab:\(display)", "--rate", "10", "-o", output]
        recorder.environment = ProcessInfo.processInfo.environment.merging(["DISPLAY": display]) { $1 }
        recorder.standardOutput = FileHandle.nullDevice
        let errors = Fixtures.scratchPath("recorder.err")
        FileManager.default.createFile(atPath: errors, contents: nil)
        recorder.standardError = FileHandle(forWritingAtPath: errors)
        try recorder.run()
        defer { if recorder.isRunning { kill(recorder.processIdentifier, SIGKILL) } }
        // Recording runs once its hidden file is there (the device is open: a busy machine
        // starts slowly); two seconds later it holds fragments.
        let recording = Date()
        while Date().timeIntervalSince(recording) < 30, (try? CaptureTests.leftovers(beside: output))?.isEmpty ?? true { usleep(50_000) }
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
}
