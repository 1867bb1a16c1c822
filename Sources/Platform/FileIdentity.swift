#if canImport(Glibc)
import Glibc
#endif

/// A file told apart by device and inode, and a state of it by size and modification time:
/// a library never deletes a new recording under the old name, and an analysis is not
/// kept under the digest of a file replaced while it was analysed.
package struct FileIdentity: Equatable, Sendable {
    var device: UInt64 = 0, inode: UInt64 = 0, size: Int64 = 0, modified: Int64 = 0

    /// The file at `path` now; nil when there is none.
    package init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    package init(_ info: stat) {
        (device, inode, size) = (UInt64(info.st_dev), UInt64(info.st_ino), Int64(info.st_size))
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    }

    package init(text: String) {
        let numbers = text.split(separator: ":").map { Int64($0) ?? 0 }
        guard numbers.count == 4 else { return }
        (device, inode, size, modified) = (UInt64(bitPattern: numbers[0]), UInt64(bitPattern: numbers[1]), numbers[2], numbers[3])
    }

    package var text: String { "\(Int64(bitPattern: device)):\(Int64(bitPattern: inode)):\(size):\(modified)" }

    package func sameFile(as other: FileIdentity, contents: Bool = false) -> Bool {
        device == other.device && inode == other.inode && (!contents || (size == other.size && modified == other.modified))
    }
}
