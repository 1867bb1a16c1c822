// LyricJobs: a small app that renders lyric videos by running its users' Lua scripts
// in-process with Moonreel. It shows the whole embedding API:
//  1. a host with limits, an app function and an app value the scripts can use;
//  2. a job that cuts a clip and adds lyrics, with progress and the script's output;
//  3. a second job cancelled from another thread;
//  4. a broken script, reported as a typed error.
// Exit status 0 when every step did what it should (CI runs this).
import Foundation
import MoonreelEngine      // only for TestPattern, to make a clip; hosting needs just MoonreelBindings
import MoonreelBindings

@main
struct LyricJobs {
    static func main() throws {
        // A folder for this run, a source clip (a test pattern with a tone) and a lyrics CSV.
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("lyricjobs-\(getpid())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let clip = work + "/source.mp4"
        try TestPattern.write(to: clip, seconds: 8, width: 640, height: 360)
        let lyrics = work + "/lyrics.csv"
        try """
            id,lyric,start_at,end_at
            1,Moonreel runs inside your app,0.2,2.4
            2,月の光の中で,2.6,4.4
            3,and your users write the scripts,4.6,5.8
            """.write(toFile: lyrics, atomically: true, encoding: .utf8)

        // 1. The host: 512 MiB for the script, at most 2 minutes a run. Scripts get `notify` and
        //    `job` from the app; effects they load never see them.
        let host = try MoonreelHost(limits: ScriptLimits(memory: 512 << 20, script: RunLimits(seconds: 120)))
        var notifications: [String] = []
        try host.register("notify") { (message: String) in
            notifications.append(message)
            print("[app] notified: \(message)")
        }
        try host.register("job", value: ["id": "A-17", "customer": "Studio Kaguya"])
        host.onPrint = { line in print("[script] \(line)") }
        var lastStep = -1
        host.onExport = { update in
            switch update.phase {
            case .started: print("[app] exporting \(update.output): \(update.frameCount) frames")
            case .progress:
                let step = Int(update.fraction * 4)          // a line at each quarter
                if step > lastStep { lastStep = step; print("[app] \(step * 25) %") }
            case .finished: print("[app] finished \(update.output)")
            case .failed(let message): print("[app] export failed: \(message)")
            case .planned: break
            }
        }

        // 2. The job: seconds 1–7 with lyrics.
        let output = work + "/lyric-video.mp4"
        try host.run(file: script("lyric_video"), arguments: [clip, lyrics, output])
        let rendered = try Asset(path: output)
        check(abs(rendered.duration.seconds - 6) < 0.05, "the lyric video lasts \(rendered.duration.seconds) s, not 6")
        check(notifications == ["starting job A-17 for Studio Kaguya", "job A-17 done"], "notifications: \(notifications)")

        // 3. The same job again, cancelled from another thread once a fifth is written. Another
        //    thread may only use the canceller (it is Sendable); the host stays on this one.
        let canceller = host.canceller
        let quarterDone = DispatchSemaphore(value: 0)
        var signalled = false
        host.onExport = { update in
            if update.phase == .progress, update.fraction > 0.2, !signalled {
                signalled = true
                quarterDone.signal()
            }
        }
        Thread.detachNewThread {
            quarterDone.wait()
            print("[app] cancelling the second job")
            canceller.cancel()
        }
        let cancelledOutput = work + "/cancelled.mp4"
        do {
            try host.run(file: script("lyric_video"), arguments: [clip, lyrics, cancelledOutput])
            check(false, "the cancelled job finished")
        } catch let error as ScriptError where error.stop == .interrupted {
            print("[app] the second job was cancelled: \(error.message)")
        }
        check(!FileManager.default.fileExists(atPath: cancelledOutput), "a cancelled job left its output")

        // 4. A script with a mistake: the app gets the kind, the file, the line and the message.
        do {
            try host.run(file: script("broken"), arguments: [clip])
            check(false, "the broken script ran")
        } catch let error as ScriptError {
            print("[app] the user's script failed: kind \(error.kind), \(error.file ?? "?") line \(error.line ?? 0): \(error.message)")
            check(error.kind == .runtime && error.line == 5 && error.file?.hasSuffix("broken.lua") == true,
                  "unexpected error \(error)")
        }
        print("LyricJobs: all jobs behaved")
    }
}

/// The path of one of the example's user scripts (shipped as resources).
func script(_ name: String) -> String {
    if let path = Bundle.module.path(forResource: name, ofType: "lua", inDirectory: "scripts") { return path }
    fail("the example's resources lack scripts/\(name).lua")
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

func fail(_ message: String) -> Never {
    print("LyricJobs: FAILED: \(message)")
    exit(1)
}
