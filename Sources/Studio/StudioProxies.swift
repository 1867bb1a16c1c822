import Foundation
import MoonreelEngine
import MoonreelPlatform
import Synchronization

/// The studio's preview proxies: the video sources the items show, each one's proxy, and one
/// background thread that checks and makes them in turn (`ProxyCache`), so the page plays
/// and scrubs a small copy with close keyframes once it exists and the source until then.
/// A proxy is used only while its source is the file it was made from.
final class StudioProxies: Sendable {
    enum State: String, Sendable {
        /// Waiting its turn (whether it needs one is not known yet).
        case queued
        /// Being made; `fraction` says how far.
        case making
        /// Made and checked; previews read it.
        case ready
        /// Could not be made; `message` says why, and previews read the source.
        case failed
        /// Small enough, with close keyframes: previews read the source.
        case notNeeded
    }

    struct Entry: Sendable {
        var state = State.queued
        var fraction = 0.0
        var message = ""
        /// A ready proxy waiting to be checked again (it stays in use meanwhile).
        var recheck = false
        /// The proxy, and the source as it was when the proxy was found or made.
        var file: (path: String, source: FileIdentity)?

        /// The proxy previews read now.
        var inUse: String? { state == .ready ? file?.path : nil }
    }

    let cache: ProxyCache
    private let entries = Mutex<(order: [ProxyFiles.Source], all: [ProxyFiles.Source: Entry])>(([], [:]))
    private let wake = NSCondition()
    private let cancellation = CancellationFlag()
    private let events: StudioEvents
    private let changeListener = Mutex<(@Sendable () -> Void)?>(nil)

    /// Told when the proxies previews may read change (one became ready, or was lost).
    var onChange: (@Sendable () -> Void)? {
        get { changeListener.withLock { $0 } }
        set { changeListener.withLock { $0 = newValue } }
    }

    /// Starts the worker; progress goes to `events` as `{"type": "proxy", …}`.
    init(cache: ProxyCache, events: StudioEvents) {
        self.cache = cache
        self.events = events
        let worker = Thread { [self] in work() }
        worker.name = "moonreel proxies"
        worker.start()
    }

    /// Stops the worker (a proxy being made is abandoned; its temporary file removed).
    func stop() {
        cancellation.cancel()
        wake.lock()
        wake.broadcast()
        wake.unlock()
    }

    /// The sources the latest run shows: each is checked again in turn (a deleted, damaged or
    /// outdated proxy is made again), the ready ones staying in use meanwhile unless their
    /// source changed. Called by the run itself, which reads `files` afterwards (nothing is told).
    func show(_ sources: [ProxyFiles.Source]) {
        entries.withLock { entries in
            for source in sources {
                var entry = entries.all[source] ?? Entry()
                if entries.all[source] == nil { entries.order.append(source) }
                if entry.state == .ready, let file = entry.file, !(FileIdentity(path: source.path)?.sameFile(as: file.source, contents: true) ?? false) {
                    entry = Entry()
                }
                if entry.state == .ready { entry.recheck = true } else if entry.state != .making { entry.state = .queued }
                entries.all[source] = entry
            }
        }
        wake.lock()
        wake.broadcast()
        wake.unlock()
    }

    /// The proxies previews read now.
    var files: ProxyFiles {
        entries.withLock { entries in
            ProxyFiles(entries.all.compactMapValues { $0.state == .ready ? $0.file?.path : nil })
        }
    }

    /// Whether every source of `sources` that needs a proxy has one, and at least one does.
    func allProxied(_ sources: [ProxyFiles.Source]) -> Bool {
        entries.withLock { entries in
            let states = sources.compactMap { entries.all[$0]?.state }
            return states.contains(.ready) && states.allSatisfy { $0 == .ready || $0 == .notNeeded }
        }
    }

    /// The page's list: every source that needs a proxy, in the order first shown.
    var json: [[String: Any]] {
        entries.withLock { entries in
            entries.order.compactMap { source in
                guard let entry = entries.all[source], entry.state != .notNeeded else { return nil }
                return ["source": source.path, "name": Paths.name(of: source.path), "stream": source.streamIndex,
                        "state": entry.state.rawValue, "fraction": entry.fraction, "message": entry.message]
            }
        }
    }

    // MARK: The worker

    private func work() {
        while let source = nextQueued() {
            let (state, file, message) = check(source)
            let inUseChanged = update(source) { entry in
                let before = entry.inUse
                (entry.state, entry.file, entry.message, entry.recheck) = (state, file, message, false)
                entry.fraction = state == .ready ? 1 : 0
                return before != entry.inUse
            }
            if inUseChanged == true { onChange?() }
            events.send(["type": "proxy", "source": source.path, "state": state.rawValue, "fraction": state == .ready ? 1.0 : 0.0])
        }
    }

    /// The next source to check (a ready one waiting to be checked again counts), waiting
    /// for one; nil once stopped.
    private func nextQueued() -> ProxyFiles.Source? {
        wake.lock()
        defer { wake.unlock() }
        while !cancellation.isCancelled {
            let next = entries.withLock { entries in
                entries.order.first { entries.all[$0].map { $0.state == .queued || $0.recheck } ?? false }
            }
            if let next { return next }
            wake.wait()
        }
        return nil
    }

    /// Whether `source` needs a proxy, and if so the kept one or one made now.
    private func check(_ source: ProxyFiles.Source) -> (State, (path: String, source: FileIdentity)?, String) {
        let identity = FileIdentity(path: source.path)
        do {
            let asset = try Asset(path: source.path)
            guard let track = asset.tracks.first(where: { $0.streamIndex == source.streamIndex }) else {
                return (.notNeeded, nil, "no such stream")
            }
            guard case .needed(let reason) = cache.need(of: track) else { return (.notNeeded, nil, "") }
            if let kept = try cache.existing(source), let identity { return (.ready, (kept, identity), reason) }
            let gaveUp = update(source) { entry in
                let wasInUse = entry.inUse != nil
                (entry.state, entry.file, entry.message, entry.recheck) = (.making, nil, reason, false)
                return wasInUse
            }
            // A damaged proxy in use is given up at once; the source is shown until the new one is made.
            if gaveUp == true { onChange?() }
            var lastSent = ContinuousClock.now
            let made = try cache.make(source, progress: { fraction in
                guard ContinuousClock.now - lastSent > .milliseconds(100) else { return }
                lastSent = .now
                update(source) { $0.fraction = fraction }
                events.send(["type": "proxy", "source": source.path, "state": State.making.rawValue, "fraction": fraction])
            }, cancellation: cancellation)
            guard let identity else { return (.failed, nil, "\(source.path) is gone") }
            let pruned = cache.prune(keeping: [made])
            let note = pruned.count == 0 ? "" : "; \(pruned.count) older prox\(pruned.count == 1 ? "y" : "ies") removed to keep the cache under its limit"
            return (.ready, (made, identity), reason + note)
        } catch {
            return (.failed, nil, "\(error)".oneLine)
        }
    }

    /// Changes the entry of `source` under the lock; nil when it has none.
    @discardableResult
    private func update<Result>(_ source: ProxyFiles.Source, _ change: (inout Entry) -> Result) -> Result? {
        entries.withLock { entries in
            guard var entry = entries.all[source] else { return nil }
            let result = change(&entry)
            entries.all[source] = entry
            return result
        }
    }
}
