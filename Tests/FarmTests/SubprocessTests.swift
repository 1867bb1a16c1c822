import Foundation
import MoonreelFarm
import Synchronization
import Testing

/// Child processes and the local pool, with `/bin/sh` (and Python, for a signal) as the child.
@Suite struct SubprocessTests {
    @Test func outputErrorsAndStatusAreCaptured() throws {
        let ended = try Subprocess("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"]).run()
        #expect(ended == Subprocess.Finished(status: 3, output: "out\n", errors: "err\n"))
    }

    @Test func aChildASignalEndedSaysWhichAsAShellWould() throws {
        let ended = try Subprocess("/bin/sh", ["-c", "kill -KILL $$"]).run()
        #expect(ended.signal == SIGKILL && ended.status == 128 + SIGKILL && ended.ending == "killed by SIGKILL (signal 9)")
        let exited = try Subprocess("/bin/sh", ["-c", "exit 9"]).run()
        #expect(exited.signal == nil && exited.status == 9 && exited.ending == "exit 9")
    }

    @Test func eachWholeLineIsHandedOnAsItComes() throws {
        let lines = Mutex<[String]>([])
        _ = try Subprocess("/bin/sh", ["-c", "printf 'one\\ntwo\\nthree'"]).run(onLine: { line in
            lines.withLock { $0.append(String(decoding: line, as: UTF8.self)) }
        })
        #expect(lines.withLock { $0 } == ["one", "two"])
    }

    @Test func aLogTakesBothStreams() throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("farm-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        var child = Subprocess("/bin/sh", ["-c", "echo out; echo err >&2"])
        child.log = log
        #expect(try child.run() == Subprocess.Finished(status: 0, output: "", errors: ""))
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "out\nerr\n")
    }

    @Test func aCommandThatCannotStartEndsAsTheShellsWould() {
        let ended = Subprocess.runCommand("moonreel-no-such-command", [])
        #expect(ended.status == 127)
        #expect(throws: Subprocess.StartFailure.self) { try Subprocess("/no/such/program", []).run() }
    }

    @Test func anInterruptedGroupStopsItsChildrenAndStartsNoMore() throws {
        let group = ProcessGroup()
        let started = DispatchSemaphore(value: 0)
        let status = Mutex<(status: Int32, signal: Int32?)?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            // A child that takes SIGINT's default whatever it inherited (the Dispatch thread
            // that starts it blocks SIGINT; moonreel, the real child, sigwaits for it), and
            // that says so before it is interrupted.
            let sleeper = Subprocess.command("python3", ["-c", "import signal, time; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                                                         + "signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT]); print('ready', flush=True); time.sleep(30)"])
            let ended = try? sleeper.run(in: group, onLine: { _ in started.signal() })
            status.withLock { $0 = ended.map { ($0.status, $0.signal) } }
            done.signal()
        }
        started.wait()
        group.interruptAll()
        #expect(done.wait(timeout: .now() + 10) == .success)
        // As a shell says it: 130, what moonreel itself exits with when Ctrl-C stops it.
        #expect(status.withLock { $0?.status } == 128 + SIGINT && status.withLock { $0?.signal } == SIGINT)
        #expect(group.isStopping)
        #expect(throws: Subprocess.StartFailure.interrupted) { try Subprocess("/bin/true", []).run(in: group) }
    }

    @Test func aPoolRunsEveryItemAtMostJobsAtOnce() {
        let state = Mutex((running: 0, most: 0, done: [Int]()))
        LocalPool(jobs: 2).run(Array(1...6), isStopping: { false }) { item in
            state.withLock { $0.running += 1; $0.most = max($0.most, $0.running) }
            usleep(20_000)
            state.withLock { $0.running -= 1; $0.done.append(item) }
        }
        let final = state.withLock { $0 }
        #expect(final.most <= 2 && final.done.sorted() == Array(1...6))
    }

    @Test func aStoppedPoolHandsBackWhatItDidNotStart() {
        let stopped = Mutex(false)
        let left = Mutex<[Int]>([])
        LocalPool(jobs: 1).run(Array(1...4), isStopping: { stopped.withLock { $0 } }, notStarted: { item in left.withLock { $0.append(item) } }) { item in
            if item == 2 { stopped.withLock { $0 = true } }
        }
        #expect(left.withLock { $0 } == [3, 4])
    }
}
