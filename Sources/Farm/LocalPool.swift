import Foundation

/// Runs work items on this machine, a few at a time: a batch's rows, a chunked render's
/// pieces and sound.
public struct LocalPool: Sendable {
    /// Items running at once.
    public let jobs: Int

    /// A pool running `jobs` items at once (at least one).
    public init(jobs: Int) { self.jobs = max(1, jobs) }

    /// Runs `work` on each item in order, at most `jobs` at once, and returns once all have
    /// ended. Once `isStopping` says so (Ctrl-C), no more start: each item left is handed
    /// to `notStarted` instead.
    public func run<Item: Sendable>(_ items: [Item], isStopping: () -> Bool, notStarted: (Item) -> Void = { _ in },
                                    work: @escaping @Sendable (Item) -> Void) {
        let slots = DispatchSemaphore(value: jobs)
        let group = DispatchGroup()
        for item in items {
            slots.wait()
            if isStopping() {
                slots.signal()
                notStarted(item)
                continue
            }
            group.enter()
            DispatchQueue.global().async {
                defer { slots.signal(); group.leave() }
                work(item)
            }
        }
        group.wait()
    }
}
