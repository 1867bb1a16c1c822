#if canImport(Glibc)
import Glibc
#endif
import CMoonAVShim
import Synchronization
import MoonreelPlatform

/// The size in bytes of the file at `path`, or nil if there is none.
package func fileSize(_ path: String) -> Int64? {
    var info = stat()
    return stat(path, &info) == 0 ? Int64(info.st_size) : nil
}

/// A place an export writes to: a temporary path while it works, then `commit` puts the
/// result at `path` (a file, or an image sequence's numbered files), or `discard` removes it.
package protocol ExportOutput {
    var path: String { get }
    var temporaryPath: String { get }
    func commit() throws
    func discard()
}

/// Every file a run has read (media, images, cue and CSV files, scripts, effects), which
/// no output may replace, `overwrite` or not. Files are told apart by device and inode, so
/// hard links and symlinks to them are caught too.
public final class InputRegistry: Sendable {
    private struct Identity: Hashable { let device: UInt64, inode: UInt64 }
    private let files = Mutex<[Identity: String]>([:])
    private let states = Mutex<[String: FileIdentity]>([:])

    /// An empty registry.
    public init() {}

    /// Remembers the file at `path` (nothing, if it cannot be read).
    public func record(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        let identity = Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        files.withLock { if $0[identity] == nil { $0[identity] = path } }
        states.withLock { if $0[path] == nil { $0[path] = FileIdentity(info) } }
    }

    /// Each file read, as it was when first read (a watcher tells a later change from one
    /// the run made itself before reading it).
    package var statesWhenRead: [String: FileIdentity] { states.withLock { $0 } }

    /// The paths of the files read, in no particular order.
    public var paths: [String] { files.withLock { Array($0.values) } }

    /// The path under which the file described by `info` was read, if it was.
    func readPath(of info: stat) -> String? {
        let identity = Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        return files.withLock { $0[identity] }
    }
}

/// The one rule for every output Moonreel writes (exports, stills, images): the file is
/// written to a temporary name in the same directory, verified, synced and only then moved
/// into place, so the output path only ever holds a complete file and an old file survives
/// any failure. An existing output (a dangling symlink included) is replaced only when
/// asked, never one of the files the run has read, and never anything but a regular file (a
/// symbolic link, a device such as /dev/null, a FIFO: the output path is refused). "Exists" is decided when the file
/// is moved into place, atomically: an output that appears while exporting (another
/// export, another program) is not replaced, and the export that loses says so.
package struct SafeOutput: ExportOutput {
    package let path: String
    package let temporaryPath: String
    let directory: String
    private let overwrite: Bool
    private let inputs: [String]
    private let readFiles: InputRegistry?
    /// A recording's temporary file is the only copy of the take: a forced exit or a failed
    /// move leaves it (hidden, beside the output) rather than removing it.
    private let keepsTemporaryFile: Bool

    /// Checks the destination before any work: directory present and writable, no existing
    /// file unless `overwrite`, and never an input.
    /// `temporarySuffix`: how the temporary name ends; anything but "tmp" is not swept up as
    /// abandoned (a recording interrupted by a crash is the user's only copy).
    package init(path: String, overwrite: Bool, inputs: [String], readFiles: InputRegistry? = nil, temporarySuffix: String = "tmp") throws {
        (self.path, self.overwrite, self.inputs, self.readFiles) = (path, overwrite, inputs, readFiles)
        let name: String
        (directory, name) = try SafeOutput.checkedLocation(of: path)
        try SafeOutput.checkReplaceable(path, overwrite: overwrite, inputs: inputs, readFiles: readFiles)
        temporaryPath = SafeOutput.temporaryPath(in: directory, for: name, suffix: temporarySuffix)
        // A forced exit removes unfinished exports, never a recording (a take cannot be redone).
        keepsTemporaryFile = temporarySuffix != "tmp"
        if !keepsTemporaryFile {
            let registered = temporaryPath
            PendingFiles.started(registered)
        }
    }

    /// A hidden name beside the output, `.NAME.moonreel-PID-N.SUFFIX`, after removing those
    /// a killed run left for the same output. A long NAME is cut (at a character) so that
    /// any name the file system takes, up to 255 bytes, has a temporary name it takes too.
    package static func temporaryPath(in directory: String, for name: String, suffix: String) -> String {
        let stem = temporaryStem(name)
        removeAbandonedFiles(in: directory, for: stem)
        return "\(directory)/.\(stem).moonreel-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).\(suffix)"
    }

    /// At most 200 bytes of `name`: room for ".", ".moonreel-PID-N." and a suffix in 255.
    static func temporaryStem(_ name: String) -> String {
        guard name.utf8.count > 200 else { return name }
        var stem = ""
        for character in name {
            guard stem.utf8.count + String(character).utf8.count <= 200 else { break }
            stem.append(character)
        }
        return stem
    }

    /// The output's directory and file name, once the directory is known to exist and be writable.
    package static func checkedLocation(of path: String) throws -> (directory: String, name: String) {
        guard !path.isEmpty else { throw EngineError("outputURL is empty") }
        guard !path.utf8.contains(0) else {
            throw EngineError("output \(path.quotedForMessage(limit: 200)) contains a NUL byte, which no file name can hold", subject: path)
        }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard !name.isEmpty else { throw EngineError("output \(path.quotedForMessage(limit: 200)) names a directory, not a file", subject: path) }
        var directoryInfo = stat()
        guard stat(directory, &directoryInfo) == 0, (directoryInfo.st_mode & S_IFMT) == S_IFDIR else {
            throw EngineError("output \(path.quotedForMessage(limit: 200)): directory \(directory.quotedForMessage(limit: 200)) does not exist", kind: .notFound, subject: path)
        }
        guard access(directory, W_OK) == 0 else {
            throw EngineError("output \(path.quotedForMessage(limit: 200)): directory \(directory.quotedForMessage(limit: 200)) is not writable", kind: .io, subject: path)
        }
        return (directory, name)
    }

    /// Refuses what is at the output path now: an input or a read file always, anything
    /// else unless `overwrite`. A symlink counts as existing even when it leads nowhere.
    package static func checkReplaceable(_ path: String, overwrite: Bool, inputs: [String], readFiles: InputRegistry?) throws {
        var linkInfo = stat()
        guard lstat(path, &linkInfo) == 0 else { return }
        var info = stat()
        if stat(path, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFDIR { throw EngineError("output \(path.quotedForMessage(limit: 200)) is a directory", kind: .io, subject: path) }
            for input in inputs {
                var inputInfo = stat()
                if stat(input, &inputInfo) == 0, inputInfo.st_dev == info.st_dev, inputInfo.st_ino == info.st_ino {
                    throw EngineError("output \(path.quotedForMessage(limit: 200)) is the input \(input.quotedForMessage(limit: 200)) (same file); choose another output path", subject: path)
                }
            }
            if let read = readFiles?.readPath(of: info) {
                throw EngineError("output \(path.quotedForMessage(limit: 200)) is \(read.quotedForMessage(limit: 200)), which this run read; choose another output path", subject: path)
            }
        }
        if let kind = SafeOutput.nonRegularKind(linkInfo.st_mode) {
            throw EngineError("output \(path.quotedForMessage(limit: 200)) is \(kind), not a regular file; Moonreel replaces only regular files, overwrite or not: choose another output path", kind: .io, subject: path)
        }
        if !overwrite {
            throw EngineError("output \(path.quotedForMessage(limit: 200)) already exists; set overwrite = true (or pass --overwrite) to replace it", kind: .io, subject: path)
        }
    }

    /// What a file of `mode` is, when it is not a regular file ("a symbolic link", "a FIFO"…).
    static func nonRegularKind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFLNK: return "a symbolic link"
        case S_IFCHR, S_IFBLK: return "a device"
        case S_IFIFO: return "a FIFO (named pipe)"
        case S_IFSOCK: return "a socket"
        case S_IFDIR: return "a directory"
        default: return "not a regular file"
        }
    }

    /// Temporary files left by an export that was killed (SIGKILL, power loss) for the same
    /// output: removed when their process no longer exists (a folder with its files).
    static func removeAbandonedFiles(in directory: String, for name: String) {
        guard let folder = opendir(directory) else { return }
        defer { closedir(folder) }
        let prefix = ".\(name).moonreel-"
        while let entry = readdir(folder) {
            let file = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard file.hasPrefix(prefix), file.hasSuffix(".tmp"),
                  let pid = Int32(file.dropFirst(prefix.count).prefix { $0 != "-" }) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH, unlink("\(directory)/\(file)") != 0 { Paths.removeFolder("\(directory)/\(file)") }
        }
    }

    /// Makes the temporary file durable, then puts it in place and makes that durable.
    /// Without `overwrite` the move fails if anything appeared at the output meanwhile; the
    /// temporary file is then removed, unless it is a recording's.
    package func commit() throws {
        do {
            try SafeOutput.place(temporaryPath, at: path, overwrite: overwrite, inputs: inputs, readFiles: readFiles)
        } catch {
            if !keepsTemporaryFile { discard() }
            throw error
        }
        let registered = temporaryPath
        PendingFiles.finished(registered)
        try? Paths.sync(folder: directory)
    }

    /// Syncs a finished file and moves it to `destination`: over what is there only with
    /// `overwrite` (never over an input), else only if nothing is there.
    package static func place(_ source: String, at destination: String, overwrite: Bool, inputs: [String], readFiles: InputRegistry?) throws {
        try Paths.sync(file: source)
        guard overwrite else { return try SafeOutput.moveIntoPlace(source, to: destination) }
        try SafeOutput.checkReplaceable(destination, overwrite: true, inputs: inputs, readFiles: readFiles)
        guard rename(source, destination) == 0 else {
            throw EngineError("output \(destination.quotedForMessage(limit: 200)): cannot move the finished file into place (\(systemMessage(errno)))", kind: .io, subject: destination)
        }
    }

    /// Moves a finished file to `destination` only if nothing is there, atomically where the
    /// file system allows (renameat2, else a hard link), so two writers never both succeed.
    package static func moveIntoPlace(_ source: String, to destination: String) throws {
        let appeared = EngineError("output \(destination.quotedForMessage(limit: 200)) appeared while it was being written (another export or program made it); it was not replaced: set overwrite = true to replace it", kind: .io, subject: destination)
        if moon_rename_noreplace(source, destination) == 0 { return }
        if errno == EEXIST { throw appeared }
        guard errno == EINVAL || errno == ENOSYS else {
            throw EngineError("output \(destination.quotedForMessage(limit: 200)): cannot move the finished file into place (\(systemMessage(errno)))", kind: .io, subject: destination)
        }
        // A file system without renameat2: a hard link cannot replace either.
        if link(source, destination) == 0 {
            unlink(source)
            return
        }
        if errno == EEXIST { throw appeared }
        // Without hard links either (some FUSE and FAT volumes), check, then rename.
        var info = stat()
        if lstat(destination, &info) == 0 { throw appeared }
        guard rename(source, destination) == 0 else {
            throw EngineError("output \(destination.quotedForMessage(limit: 200)): cannot move the finished file into place (\(systemMessage(errno)))", kind: .io, subject: destination)
        }
    }

    /// Removes the temporary file (a no-op after `commit`).
    package func discard() {
        unlink(temporaryPath)
        let registered = temporaryPath
        PendingFiles.finished(registered)
    }

}

/// Output rules for files written outside exports (the CLI's effect installer).
public enum OutputFiles {
    /// Moves `source` to `destination` only if nothing is there, atomically where the file
    /// system allows; throws a clear error naming `destination` otherwise.
    public static func moveIntoPlace(_ source: String, to destination: String) throws {
        try SafeOutput.moveIntoPlace(source, to: destination)
    }
}
