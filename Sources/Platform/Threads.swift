#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A blocking first-in first-out queue with a fixed capacity: the pipeline's back-pressure,
/// which keeps memory flat however long the export is. Capacity 0 is a hand-over: `push`
/// returns once the consumer has taken the item, so the producer holds one item at a time.
package final class BoundedQueue<Element: Sendable>: @unchecked Sendable {
    // All state is guarded by `mutex`; the two conditions wake producers and consumers.
    private var items: [Element] = []
    private var closed = false
    private let capacity: Int
    private let handsOver: Bool
    private var mutex = pthread_mutex_t()
    private var notEmpty = pthread_cond_t()
    private var notFull = pthread_cond_t()

    package init(capacity: Int) {
        self.capacity = max(capacity, 1)
        handsOver = capacity == 0
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&notEmpty, nil)
        pthread_cond_init(&notFull, nil)
    }

    deinit {
        pthread_mutex_destroy(&mutex)
        pthread_cond_destroy(&notEmpty)
        pthread_cond_destroy(&notFull)
    }

    /// Waits for room (in a hand-over, until the consumer has taken the item); returns false
    /// if the queue was closed (the consumer gave up).
    @discardableResult
    package func push(_ item: Element) -> Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while items.count >= capacity && !closed { pthread_cond_wait(&notFull, &mutex) }
        guard !closed else { return false }
        items.append(item)
        pthread_cond_signal(&notEmpty)
        if handsOver {
            while !items.isEmpty && !closed { pthread_cond_wait(&notFull, &mutex) }
        }
        return true
    }

    /// Adds the item only if there is room now: false when full or closed (a real-time
    /// producer drops rather than waits).
    package func tryPush(_ item: Element) -> Bool {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        guard items.count < capacity, !closed else { return false }
        items.append(item)
        pthread_cond_signal(&notEmpty)
        return true
    }

    /// Waits for an item; nil once the queue is closed and drained.
    package func pop() -> Element? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while items.isEmpty && !closed { pthread_cond_wait(&notEmpty, &mutex) }
        guard !items.isEmpty else { return nil }
        let item = items.removeFirst()
        pthread_cond_signal(&notFull)
        return item
    }

    /// Wakes every waiter; pushes fail from now on, pops drain what is left.
    package func close() {
        pthread_mutex_lock(&mutex)
        closed = true
        pthread_cond_broadcast(&notEmpty)
        pthread_cond_broadcast(&notFull)
        pthread_mutex_unlock(&mutex)
    }
}

/// A dedicated OS thread (not a pool thread: pipeline stages block on queues and on
/// FFmpeg for seconds at a time).
package final class WorkerThread: @unchecked Sendable {
    // `thread` is written once by pthread_create before anyone can call join().
    private var thread = pthread_t()
    private let body: @Sendable () -> Void

    package init(_ body: @escaping @Sendable () -> Void) throws {
        self.body = body
        let retained = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            let worker = Unmanaged<WorkerThread>.fromOpaque(raw).takeRetainedValue()
            worker.body()
            return nil
        }, retained)
        if status != 0 {
            Unmanaged<WorkerThread>.fromOpaque(retained).release()
            throw SystemError("cannot start a render thread", code: status)
        }
    }

    package func join() { pthread_join(thread, nil) }
}

/// Set from any thread (a Ctrl-C handler, a progress callback); checked by every stage.
public final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    private let parent: CancellationFlag?
    /// A flag that is not set.
    public init() { parent = nil }
    /// A flag of its own that also reads as set whenever `parent` is (work under a deadline
    /// of its own that the whole run's cancel must stop too).
    public init(parent: CancellationFlag) { self.parent = parent }
    /// Sets the flag (from any thread); work that checks it stops at its next check.
    public func cancel() { flag.store(true, ordering: .relaxed) }
    /// Clears the flag, so the work it is shared with can run again.
    public func reset() { flag.store(false, ordering: .relaxed) }
    /// Whether the flag (or its parent) is set.
    public var isCancelled: Bool { flag.load(ordering: .relaxed) || parent?.isCancelled == true }
}

/// Runs `body` once, `seconds` from now, on a detached thread of its own (a deadline that
/// must fire whatever the calling thread is stuck in). Sleeps through signals.
package func runAfter(seconds: Double, _ body: @escaping @Sendable () -> Void) {
    final class Plan: @unchecked Sendable {
        // Handed to the timer thread once; nothing else touches it.
        let seconds: Double, body: @Sendable () -> Void
        init(_ seconds: Double, _ body: @escaping @Sendable () -> Void) { (self.seconds, self.body) = (seconds, body) }
    }
    var thread = pthread_t()
    let plan = Unmanaged.passRetained(Plan(max(seconds, 0), body)).toOpaque()
    let status = pthread_create(&thread, nil, { raw in
        guard let raw else { return nil }
        let plan = Unmanaged<Plan>.fromOpaque(raw).takeRetainedValue()
        let whole = plan.seconds.rounded(.down)
        var wait = timespec(tv_sec: Int(min(whole, 1e9)), tv_nsec: Int((plan.seconds - whole) * 1e9))
        var left = timespec()
        while nanosleep(&wait, &left) != 0 && errno == EINTR { wait = left }
        plan.body()
        return nil
    }, plan)
    if status == 0 {
        pthread_detach(thread)
    } else {
        Unmanaged<Plan>.fromOpaque(plan).release()
    }
}

/// Runs `body` on a thread of its own and waits at most `seconds` for it: a probe of a
/// server that may accept a connection and never answer (a stopped X display, a dead
/// PulseAudio server) cannot hang the caller. Nil when the time ran out, or `cancellation`
/// was set meanwhile; the probe's thread is then left to finish (or not) on its own.
package func withDeadline<T: Sendable>(seconds: Double, cancellation: CancellationFlag? = nil,
                                        _ body: @escaping @Sendable () -> T) -> T? {
    let result = Mutex<T?>(nil)
    let done = Atomic<Bool>(false)
    let thread = try? WorkerThread {
        let value = body()
        result.withLock { $0 = value }
        done.store(true, ordering: .releasing)
    }
    guard thread != nil else { return nil }
    var waited = 0.0
    while !done.load(ordering: .acquiring) {
        guard waited < seconds, cancellation?.isCancelled != true else { return nil }
        usleep(10_000)
        waited += 0.01
    }
    thread?.join()
    return result.withLock { $0 }
}

/// The process's resident memory now (from /proc/self/statm), or nil where it cannot be read.
package func residentBytes() -> Int64? {
    let file = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
    guard file >= 0 else { return nil }
    defer { close(file) }
    var buffer = [UInt8](repeating: 0, count: 128)
    let count = buffer.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
    guard count > 0 else { return nil }
    let fields = buffer[..<count].split(separator: UInt8(ascii: " "))
    guard fields.count > 1, let pages = Int64(String(decoding: fields[1], as: UTF8.self)) else { return nil }
    return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
}

