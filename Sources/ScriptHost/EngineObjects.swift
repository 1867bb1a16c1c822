import CMoonLuaShim

/// Which Lua state each engine object belongs to, and what it weighs, for every object a
/// script has reached. Shared by the states of one host (the user script's and each
/// effect's), on the host's thread.
///
/// Two promises rest on it. Memory the engine allocates for a script (keyframes, layers,
/// text, images, composition segments) counts against that state's memory cap, beside its
/// Lua heap. And a sandboxed state may change only objects it owns: an object another state
/// made reaches it as a read-only view (properties and read-only methods work; anything that
/// would change the object or write a file is refused).
///
/// An object belongs to the state that made it (or last changed it); an object first reached
/// through another's object belongs to that one's owner. Entries are weak: an object freed by
/// Swift leaves its owner's count at the next sweep, which runs when a state would go over
/// its cap and every so often as objects are added.
package final class EngineObjects {
    private struct Entry {
        weak var object: AnyObject?
        weak var owner: LuaState?
        var bytes: Int
    }

    private var entries: [ObjectIdentifier: Entry] = [:]
    private var changesSinceSweep = 0
    /// How deeply calls between the host's states nest now (each crossing takes Swift and C
    /// stack that no Lua limit counts).
    var crossings = 0
    static let maximumCrossings = 32

    package init() {}

    /// The state that owns `object`, or nil if none does (never reached, or its state is gone).
    func owner(of object: AnyObject) -> LuaState? {
        guard let entry = entries[ObjectIdentifier(object)], entry.object === object else { return nil }
        return entry.owner
    }

    func isKnown(_ object: AnyObject) -> Bool {
        entries[ObjectIdentifier(object)]?.object === object
    }

    /// Records that `owner` owns `object`, which now weighs `bytes` (its own storage, not
    /// the objects it refers to, which have entries of their own).
    func charge(_ object: AnyObject, bytes: Int, to owner: LuaState?) {
        let key = ObjectIdentifier(object)
        // The entry there is this object's, or a freed one's whose address it now has.
        if let old = entries[key], let oldOwner = old.owner {
            oldOwner.engineBytes -= old.bytes
        }
        entries[key] = Entry(object: object, owner: owner, bytes: bytes)
        owner?.engineBytes += bytes
        changesSinceSweep += 1
        if changesSinceSweep > max(4096, entries.count) { sweep() }
    }

    /// Forgets objects Swift has freed, taking their bytes off their owners' counts.
    func sweep() {
        changesSinceSweep = 0
        let freed = entries.filter { $0.value.object == nil }
        for (key, entry) in freed {
            entries[key] = nil
            entry.owner?.engineBytes -= entry.bytes
        }
    }
}

/// Called by the allocator (from C) when an allocation would not fit: recount first.
let sweepEngineObjects: moon_sweeper = { context in
    guard let context else { return }
    Unmanaged<LuaState>.fromOpaque(context).takeUnretainedValue().engineObjects.sweep()
}
