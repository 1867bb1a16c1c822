#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import MoonreelPlatform

/// Makes a stop reach the input threads of a recording in bounded time, whoever asks for it
/// (`requestStop`, Ctrl-C through the parent flag, a failure to start).
///
/// A reader may be blocked inside FFmpeg: the interrupt flag (the demuxer's
/// `AVIOInterruptCB`) ends a read that goes through AVIO, and V4L2 and ALSA are opened
/// non-blocking so their reads return EAGAIN and see the stop; but some device reads wait
/// in a library that never asks (x11grab waiting on a frozen X server in libxcb). After
/// `grace` such an input is given up: its end is queued for it so the writer finishes the
/// file, and its thread is left behind, never joined (it owns its device and touches
/// nothing else once stopped).
final class CaptureStopper: @unchecked Sendable {
    // `inputs`, `queue` and the flags are set in init; `thread` is written once before
    // anyone joins. Everything the watcher shares is atomic.
    static let grace: Int64 = 2_000_000_000
    private let inputs: [CaptureInput]
    private let queue: BoundedQueue<CapturedMedia>
    private let stop: CancellationFlag
    private let parentStop: CancellationFlag?
    private let writerDone = Atomic<Bool>(false)
    private var thread: WorkerThread?

    init(inputs: [CaptureInput], queue: BoundedQueue<CapturedMedia>, stop: CancellationFlag, parentStop: CancellationFlag?) {
        (self.inputs, self.queue, self.stop, self.parentStop) = (inputs, queue, stop, parentStop)
    }

    /// Starts watching for a stop (every 20 ms) until `writerFinished`.
    func start() throws {
        thread = try WorkerThread { [self] in watch() }
    }

    /// The writer has finished the file: the watcher ends.
    func writerFinished() { writerDone.store(true, ordering: .releasing) }

    /// Stops every input now and waits at most `grace` for their threads to end (the
    /// writer never started, so the queue is closed: a reader's last push cannot block).
    func stopWithoutWriter() {
        queue.close()
        stopInputs()
        let deadline = monotonicNanoseconds() + CaptureStopper.grace
        while inputs.contains(where: { !$0.finished.load(ordering: .acquiring) }) && monotonicNanoseconds() < deadline {
            CaptureStopper.sleep(milliseconds: 10)
        }
    }

    /// Once the writer is done (or never started): joins the watcher and each reader that
    /// has ended; a stuck one is left behind. The queue is closed first, so a reader that
    /// wakes late cannot block on its last push.
    func join(readers: [WorkerThread]) {
        queue.close()
        thread?.join()
        thread = nil
        for (input, reader) in zip(inputs, readers) where input.finished.load(ordering: .acquiring) { reader.join() }
    }

    private func stopInputs() {
        stop.cancel()
        inputs.forEach { $0.interrupt() }
    }

    private func watch() {
        var stoppedAt: Int64? = nil
        var abandoned = Set<Int>()
        while !writerDone.load(ordering: .acquiring) {
            if stoppedAt == nil, stop.isCancelled || parentStop?.isCancelled == true {
                stopInputs()
                stoppedAt = monotonicNanoseconds()
            }
            if let stoppedAt, monotonicNanoseconds() - stoppedAt > CaptureStopper.grace {
                for (index, input) in inputs.enumerated() where !abandoned.contains(index) && !input.finished.load(ordering: .acquiring) {
                    // Its end, queued on its behalf (retried while the queue is full).
                    if queue.tryPush(.ended(failure: nil)) { abandoned.insert(index) }
                }
            }
            CaptureStopper.sleep(milliseconds: 20)
        }
    }

    static func sleep(milliseconds: Int) {
        var pause = timespec(tv_sec: 0, tv_nsec: milliseconds * 1_000_000)
        nanosleep(&pause, nil)
    }
}
