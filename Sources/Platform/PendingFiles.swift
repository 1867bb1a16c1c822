#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Files (or folders of numbered images) being written right now, so that a forced exit —
/// a second Ctrl-C, a termination deadline — can still remove them: unfinished output is
/// never left behind under a name a user might take for a result.
package enum PendingFiles {
    private static let paths = Mutex<Set<String>>([])

    /// Marks `path` as being written until `finished(_:)`.
    package static func started(_ path: String) { paths.withLock { _ = $0.insert(path) } }

    /// `path` is complete (moved into place) or already removed.
    package static func finished(_ path: String) { paths.withLock { _ = $0.remove(path) } }

    /// Removes every file or folder still being written (for a forced exit).
    package static func discardAll() {
        for path in paths.withLock({ $0 }) where unlink(path) != 0 { Paths.removeFolder(path) }
    }
}
