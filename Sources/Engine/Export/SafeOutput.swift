#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Temporary files being written right now, so a second Ctrl-C (which exits at once)
/// can still remove them.
private let pendingTemporaryFiles = Mutex<Set<String>>([])

/// Removes every export temporary file still being written (for a forced exit).
public func discardPendingExportFiles() {
    for path in pendingTemporaryFiles.withLock({ $0 }) { unlink(path) }
}

/// The "nothing lost" rule for one output path: media is written to a temporary file in
/// the same directory, verified, synced and renamed over the output in one step, so the
/// output path only ever holds a complete file and an old file survives any failure.
struct SafeOutput {
    let path: String
    let temporaryPath: String
    let directory: String

    /// Checks the destination before any work: directory present and writable, no existing
    /// file unless `overwrite`, and never one of the inputs (same device and inode, so hard
    /// links and symlinks to an input are caught too).
    init(path: String, overwrite: Bool, inputs: [String]) throws {
        guard !path.isEmpty else { throw EngineError("outputURL is empty") }
        self.path = path
        let slash = path.lastIndex(of: "/")
        directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard !name.isEmpty else { throw EngineError("output \"\(path)\" names a directory, not a file") }

        var directoryInfo = stat()
        guard stat(directory, &directoryInfo) == 0, (directoryInfo.st_mode & S_IFMT) == S_IFDIR else {
            throw EngineError("output \"\(path)\": directory \"\(directory)\" does not exist")
        }
        guard access(directory, W_OK) == 0 else {
            throw EngineError("output \"\(path)\": directory \"\(directory)\" is not writable")
        }
        var outputInfo = stat()
        if stat(path, &outputInfo) == 0 {
            for input in inputs {
                var inputInfo = stat()
                if stat(input, &inputInfo) == 0, inputInfo.st_dev == outputInfo.st_dev, inputInfo.st_ino == outputInfo.st_ino {
                    throw EngineError("output \"\(path)\" is the input \"\(input)\" (same file); choose another output path")
                }
            }
            if (outputInfo.st_mode & S_IFMT) == S_IFDIR { throw EngineError("output \"\(path)\" is a directory") }
            if !overwrite {
                throw EngineError("output \"\(path)\" already exists; set overwrite = true (or pass --overwrite) to replace it")
            }
        }
        SafeOutput.removeAbandonedFiles(in: directory, for: name)
        temporaryPath = "\(directory)/.\(name).moonreel-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        let registered = temporaryPath
        pendingTemporaryFiles.withLock { _ = $0.insert(registered) }
    }

    /// Temporary files left by an export that was killed (SIGKILL, power loss) for the same
    /// output: removed when their process no longer exists.
    private static func removeAbandonedFiles(in directory: String, for name: String) {
        guard let folder = opendir(directory) else { return }
        defer { closedir(folder) }
        let prefix = ".\(name).moonreel-"
        while let entry = readdir(folder) {
            let file = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard file.hasPrefix(prefix), file.hasSuffix(".tmp"),
                  let pid = Int32(file.dropFirst(prefix.count).prefix { $0 != "-" }) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlink("\(directory)/\(file)") }
        }
    }

    /// Makes the temporary file durable, then puts it in place and makes the rename durable.
    func commit() throws {
        try SafeOutput.sync(temporaryPath, flags: O_RDONLY)
        guard rename(temporaryPath, path) == 0 else {
            let reason = String(cString: strerror(errno))
            discard()
            throw EngineError("output \"\(path)\": cannot move the finished file into place (\(reason))")
        }
        let registered = temporaryPath
        pendingTemporaryFiles.withLock { _ = $0.remove(registered) }
        try? SafeOutput.sync(directory, flags: O_RDONLY | O_DIRECTORY)
    }

    /// Removes the temporary file (a no-op after `commit`).
    func discard() {
        unlink(temporaryPath)
        let registered = temporaryPath
        pendingTemporaryFiles.withLock { _ = $0.remove(registered) }
    }

    private static func sync(_ path: String, flags: Int32) throws {
        let descriptor = open(path, flags)
        guard descriptor >= 0 else { throw EngineError("cannot open \"\(path)\" to sync it (\(String(cString: strerror(errno))))") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw EngineError("cannot sync \"\(path)\" to disk (\(String(cString: strerror(errno))))") }
    }
}
