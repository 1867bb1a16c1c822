#if canImport(Glibc)
import Glibc
#endif

/// The file-system helpers every Moonreel module needs (paths, folders, syncing, errno
/// messages), written once on Glibc: the engine, the script host, the REPL and the CLI use
/// these, not copies of their own. Foundation is left out (it would cost start-up time).
package enum Paths {
    /// The folder part of `path` ("." for a bare name, "/" for a file at the root).
    package static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The last component of `path`.
    package static func name(of path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }

    /// `path` made absolute against the working folder (unchanged when it already is).
    package static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let directory = workingFolder else { return path }
        return (directory == "/" ? "" : directory) + "/" + (path.hasPrefix("./") ? String(path.dropFirst(2)) : path)
    }

    /// The process's working folder; nil when it cannot be read (removed, or too long).
    package static var workingFolder: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The names in `folder` (not "." and ".."); empty when it cannot be read.
    package static func names(in folder: String) -> [String] {
        guard let listing = opendir(folder) else { return [] }
        defer { closedir(listing) }
        var names: [String] = []
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// A new empty folder only this user can enter, under `$TMPDIR` (else /tmp), named
    /// `prefix-XXXXXX`. Throws `SystemError` when it cannot be made.
    package static func makeTemporaryFolder(prefix: String) throws -> String {
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/" + prefix + "-XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else { throw SystemError("cannot make a temporary folder in \(base)", code: errno) }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Removes a folder of plain files and the folder (what is left when a file cannot be
    /// removed stays).
    package static func removeFolder(_ path: String) {
        for name in names(in: path) { unlink("\(path)/\(name)") }
        rmdir(path)
    }

    /// Makes `path` and every missing folder above it (`mkdir -p`) with `mode`; with
    /// `durably`, each new folder's parent is synced, so the folder survives a power loss.
    /// Throws `SystemError` naming the folder that could not be made.
    package static func makeFolders(_ path: String, mode: mode_t = 0o755, durably: Bool = false) throws {
        var info = stat()
        guard stat(path, &info) != 0 else {
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw SystemError("cannot make the folder \(path)", code: ENOTDIR) }
            return
        }
        let above = parent(of: path)
        if above != path, above != "." { try makeFolders(above, mode: mode, durably: durably) }
        guard mkdir(path, mode) == 0 || errno == EEXIST else { throw SystemError("cannot make the folder \(path)", code: errno) }
        if durably { try sync(folder: above) }
    }

    /// Writes `text` to `path` whole or not at all: into a temporary file beside it, synced,
    /// then linked into place (an existing file is an error, `EEXIST`) or, `replacing`,
    /// renamed over it (a symbolic link at `path` is replaced, its target left alone).
    package static func writeFile(_ text: String, to path: String, replacing: Bool) throws {
        try writeFile(Array(text.utf8), to: path, replacing: replacing)
    }

    /// Writes `bytes` to `path` whole or not at all, as the text version does.
    package static func writeFile(_ bytes: [UInt8], to path: String, replacing: Bool) throws {
        // Made exclusively under a name nobody can guess: a link planted beside `path`
        // cannot send the bytes elsewhere.
        let temporary = parent(of: path) + "/.\(name(of: path)).moonreel-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw SystemError("cannot write \(path)", code: errno) }
        defer { unlink(temporary) }
        var bytes = bytes[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else {
                let code = errno
                close(descriptor)
                throw SystemError("cannot write \(path)", code: code)
            }
            bytes = bytes.dropFirst(written)
        }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard synced else { throw SystemError("cannot write \(path)", code: errno) }
        guard (replacing ? rename(temporary, path) : link(temporary, path)) == 0 else {
            throw SystemError(errno == EEXIST ? "\(path) exists" : "cannot write \(path)", code: errno)
        }
    }

    /// Flushes a folder's entries to disk (after a file in it was made, renamed or removed).
    package static func sync(folder: String) throws {
        try sync(folder, flags: O_RDONLY | O_DIRECTORY, naming: "the folder \(folder)")
    }

    /// Flushes a file's contents to disk (before it is renamed into place).
    package static func sync(file: String) throws {
        try sync(file, flags: O_RDONLY, naming: file)
    }

    private static func sync(_ path: String, flags: Int32, naming name: String) throws {
        let descriptor = open(path, flags | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemError("cannot open \(name) to sync it", code: errno) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw SystemError("cannot sync \(name) to disk", code: errno) }
    }
}

/// A failed system call: what was being done and the system's reason.
package struct SystemError: Error, CustomStringConvertible, Sendable {
    package let what: String
    package let code: Int32
    package init(_ what: String, code: Int32) { (self.what, self.code) = (what, code) }
    /// "what (reason)", e.g. "cannot make the folder out/2026 (Permission denied)".
    package var description: String { "\(what) (\(systemMessage(code)))" }
}

/// The system's message for an errno value ("No such file or directory").
package func systemMessage(_ code: Int32) -> String {
    String(cString: strerror(code))
}
