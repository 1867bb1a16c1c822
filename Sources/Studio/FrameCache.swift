import MoonreelEngine
import Synchronization

/// Encoded preview pictures kept around the playhead, so stepping back and forth and short
/// scrubs never render a frame twice: the least recently shown go first once the pictures
/// take more than `budget` bytes (counted in the studio's memory limit).
final class FrameCache: Sendable {
    struct Key: Hashable {
        /// `StudioItem.serial`: a new run or a proxy put in use makes new items.
        let item: Int
        let number: Int64
        let format: StillImageFormat
    }

    struct Picture {
        let bytes: [UInt8]
        let number: Int64
        let seconds: Double
    }

    let budget: Int
    private let pictures = Mutex<(kept: [Key: (picture: Picture, used: UInt64)], bytes: Int, clock: UInt64)>(([:], 0, 0))

    init(budget: Int) { self.budget = budget }

    func picture(_ key: Key) -> Picture? {
        pictures.withLock { cache in
            guard let found = cache.kept[key] else { return nil }
            cache.clock += 1
            cache.kept[key]?.used = cache.clock
            return found.picture
        }
    }

    func keep(_ picture: Picture, as key: Key) {
        guard picture.bytes.count <= budget / 4 else { return }
        pictures.withLock { cache in
            cache.clock += 1
            if let old = cache.kept.updateValue((picture, cache.clock), forKey: key) { cache.bytes -= old.picture.bytes.count }
            cache.bytes += picture.bytes.count
            guard cache.bytes > budget else { return }
            // The oldest eighth goes at once: one sort per many pictures, not one per picture.
            let byAge = cache.kept.sorted { $0.value.used < $1.value.used }
            var freed = 0
            for (oldKey, entry) in byAge where cache.bytes - freed > budget * 7 / 8 {
                freed += entry.picture.bytes.count
                cache.kept[oldKey] = nil
            }
            cache.bytes -= freed
        }
    }

    func removeAll() {
        pictures.withLock { $0 = ([:], 0, $0.clock) }
    }
}
