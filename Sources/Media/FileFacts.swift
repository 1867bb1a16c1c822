#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import Synchronization

/// What was read from a file, kept while the file is unchanged (the same inode, size and
/// modification time), so that a script opening one file many times — a logo in every
/// lower third, the studio running a script again at each save — reads it once.
package final class FileFacts<Value: Sendable>: Sendable {
    private struct Identity: Hashable {
        let path: String, part: Int
        let device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int
    }

    private let known = Mutex<[Identity: Value]>([:])
    /// Facts kept at most; past it they are all let go (a batch of thousands of files).
    private let limit: Int

    package init(limit: Int = 256) { self.limit = limit }

    /// The fact about `part` of the file at `path` (a stream's index, or 0), read by `reading`
    /// the first time and while the file changes.
    package func value(for path: String, part: Int = 0, reading: () throws -> Value) rethrows -> Value {
        var info = stat()
        guard stat(path, &info) == 0 else { return try reading() }
        let identity = Identity(path: path, part: part, device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                                seconds: Int(info.st_mtim.tv_sec), nanoseconds: Int(info.st_mtim.tv_nsec))
        if let value = known.withLock({ $0[identity] }) { return value }
        let value = try reading()
        known.withLock { facts in
            if facts.count >= limit { facts.removeAll() }
            facts[identity] = value
        }
        return value
    }
}
