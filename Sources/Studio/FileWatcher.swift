import Foundation
import MoonreelEngine
import MoonreelPlatform
#if canImport(Glibc)
import Glibc
#endif

/// Calls back once per burst of changes to a set of files, through inotify. The files'
/// folders are watched rather than the files, so a save that writes a new file and renames
/// it over the old one (what most editors do) is seen, and a file deleted and made again too.
/// A burst calls back only if a file now differs from the state it was watched in (a run
/// that wrote a file and then read it set off events, but changed nothing it read).
/// A folder that is missing, or removed while watched, is waited for from the nearest folder
/// above it that exists, and watched again once it is back (a script's folder removed and
/// made again left the studio on "cannot open" until it was restarted).
final class FileWatcher: @unchecked Sendable {
    /// Changes closer together than this are one change (an editor writes, then renames).
    static let quietTime: Int32 = 80

    private let descriptor: Int32
    private let stopPipe: (read: Int32, write: Int32)
    private let lock = NSLock()
    /// Watched folder (absolute) → its watch descriptor, and the names watched in it.
    private var folders: [String: Int32] = [:]
    private var names: [Int32: Set<String>] = [:]
    /// Watches of folders above a missing one, waiting for it to be made.
    private var ancestors: Set<Int32> = []
    /// Every event that matters: a watched name written, made, moved or removed; a folder
    /// removed or moved away (then watched again from above).
    private static let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)
    /// Each watched file's state when it was read (nil: it was not there).
    private var states: [String: FileIdentity?] = [:]
    private var thread: Thread?

    /// - Throws: `SystemError` when inotify is not available.
    init(onChange: @escaping @Sendable () -> Void) throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw SystemError("cannot watch files for changes", code: errno) }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else {
            close(descriptor)
            throw SystemError("cannot watch files for changes", code: errno)
        }
        stopPipe = (ends[0], ends[1])
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let thread = Thread { [self] in run(onChange) }
        thread.name = "moonreel-watch"
        self.thread = thread
        thread.start()
    }

    /// Watches exactly these files from now on, each against the state given (files that do
    /// not exist yet are seen when made).
    func watch(_ files: [String: FileIdentity?]) {
        lock.withLock {
            states = Dictionary(files.map { (Paths.absolute($0.key), $0.value) }) { first, _ in first }
            rewatch()
        }
    }

    /// Watches each watched file's folder, or, while it is missing, the nearest folder above
    /// it that exists. Called with the lock held.
    private func rewatch() {
        var wanted: [String: Set<String>] = [:]
        for path in states.keys { wanted[Paths.parent(of: path), default: []].insert(Paths.name(of: path)) }
        var placed: [String: Int32] = [:], watchedNames: [Int32: Set<String>] = [:], waiting: Set<Int32> = []
        for (folder, files) in wanted {
            let watch = inotify_add_watch(descriptor, folder, Self.mask)
            if watch >= 0 {
                placed[folder] = watch
                watchedNames[watch, default: []].formUnion(files)
                continue
            }
            var above = Paths.parent(of: folder)
            while true {
                let watch = inotify_add_watch(descriptor, above, Self.mask)
                if watch >= 0 {
                    placed[above] = watch
                    waiting.insert(watch)
                    break
                }
                let next = Paths.parent(of: above)
                if next == above { break }
                above = next
            }
        }
        for watch in Set(folders.values).subtracting(placed.values) { inotify_rm_watch(descriptor, watch) }
        (folders, names, ancestors) = (placed, watchedNames, waiting)
    }

    func stop() {
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
        thread = nil
    }

    private func run(_ onChange: @Sendable () -> Void) {
        defer {
            close(descriptor)
            close(stopPipe.read)
            close(stopPipe.write)
        }
        var pending = false
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, pending ? Self.quietTime : -1)
            if ready < 0 && errno == EINTR { continue }
            if fds[1].revents != 0 || ready < 0 { return }
            if ready == 0 {
                // Quiet for a while after a change: one callback for the burst.
                pending = false
                if lock.withLock({ states.contains { FileIdentity(path: $0.key) != $0.value } }) { onChange() }
                continue
            }
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { continue }
            let (changed, moved) = examine(buffer[0..<count])
            if moved { lock.withLock { rewatch() } }
            if changed || moved { pending = true }
        }
    }

    /// Whether the events in `bytes` (struct inotify_event, one after another) name a watched
    /// file, and whether a folder on the way to one was removed, moved or made (watch again).
    private func examine(_ bytes: ArraySlice<UInt8>) -> (changed: Bool, moved: Bool) {
        var offset = bytes.startIndex
        var (changed, moved) = (false, false)
        let headerSize = MemoryLayout<inotify_event>.size
        let folderGone = UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)
        while offset + headerSize <= bytes.endIndex {
            let (watch, mask, nameLength) = bytes.withUnsafeBytes { raw -> (Int32, UInt32, Int) in
                let base = offset - bytes.startIndex
                return (raw.loadUnaligned(fromByteOffset: base, as: Int32.self),
                        raw.loadUnaligned(fromByteOffset: base + 4, as: UInt32.self),
                        Int(raw.loadUnaligned(fromByteOffset: base + 12, as: UInt32.self)))
            }
            let nameStart = offset + headerSize
            let nameEnd = min(nameStart + nameLength, bytes.endIndex)
            let name = String(decoding: bytes[nameStart..<nameEnd].prefix { $0 != 0 }, as: UTF8.self)
            lock.withLock {
                if names[watch]?.contains(name) == true { changed = true }
                if mask & folderGone != 0 && (names[watch] != nil || ancestors.contains(watch)) { moved = true }
                if ancestors.contains(watch) { moved = true }
            }
            offset = nameEnd
        }
        return (changed, moved)
    }
}
