/// A least-recently-used cache bounded by the bytes its values hold. A value larger
/// than the whole budget is not kept (the caller still uses it once). Owners that work in
/// rounds (a renderer's frames) can also drop what recent rounds did not use, so the cache
/// holds what is on screen rather than filling its budget with what was. One owner thread.
final class LRUCache<Key: Hashable, Value> {
    private struct Entry {
        let value: Value
        let bytes: Int
        var lastUse: UInt64
        var lastRound: UInt64
    }
    private var entries: [Key: Entry] = [:]
    private var clock: UInt64 = 0
    private var round: UInt64 = 0
    private(set) var totalBytes = 0
    let budget: Int

    init(budget: Int) { self.budget = budget }

    var count: Int { entries.count }

    func value(for key: Key) -> Value? {
        guard var entry = entries[key] else { return nil }
        clock += 1
        entry.lastUse = clock
        entry.lastRound = round
        entries[key] = entry
        return entry.value
    }

    func insert(_ value: Value, bytes: Int, for key: Key) {
        guard bytes <= budget else { return }
        if let old = entries.removeValue(forKey: key) { totalBytes -= old.bytes }
        while totalBytes + bytes > budget, let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            totalBytes -= oldest.value.bytes
            entries.removeValue(forKey: oldest.key)
        }
        clock += 1
        entries[key] = Entry(value: value, bytes: bytes, lastUse: clock, lastRound: round)
        totalBytes += bytes
    }

    /// Starts a new round and drops the values that none of the last `rounds` rounds used.
    func startRound(droppingUnusedFor rounds: UInt64) {
        round += 1
        guard round > rounds else { return }
        let oldest = round - rounds
        guard entries.values.contains(where: { $0.lastRound < oldest }) else { return }
        entries = entries.filter { $0.value.lastRound >= oldest }
        totalBytes = entries.values.reduce(0) { $0 + $1.bytes }
    }

    /// The cached value, or a new one made by `make` and cached with its size.
    func value(for key: Key, orMake make: () throws -> (Value, bytes: Int)) rethrows -> Value {
        if let cached = value(for: key) { return cached }
        let (made, bytes) = try make()
        insert(made, bytes: bytes, for: key)
        return made
    }
}
