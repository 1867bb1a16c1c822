#if canImport(Glibc)
import Glibc
#endif
import CMoonFFmpeg
import MoonreelPlatform
import MoonreelMedia

/// A media library's hidden folder `.moonreel-import`, where hand-offs stage their copies and
/// journals. It is opened once, never through a symbolic link, and every later step goes
/// through that open folder (`path` names it as `/proc/self/fd/N`): a folder swapped for a
/// link meanwhile cannot send a removal or a move elsewhere. Only names a hand-off makes
/// (`PID-HEX.lock`, `.journal`, `.mp4` …) are ever removed, and only regular files.
final class LibraryStaging {
    static let folderName = ".moonreel-import"
    /// The kinds of copies a hand-off stages.
    static let fileTypes = ["mp4", "mov", "m4a"]

    /// "LIBRARY/.moonreel-import", for messages.
    let displayPath: String
    /// The opened folder, for the path-taking calls (exports, renames).
    let path: String
    private let descriptor: Int32

    /// Opens the folder, making it first when `create`; nil when it does not exist and
    /// `create` is false. Throws a one-line error when it is a symbolic link or not a folder.
    init?(library: String, create: Bool) throws {
        displayPath = library + "/" + LibraryStaging.folderName
        if create, mkdir(displayPath, 0o700) == 0 {
            try? Paths.sync(folder: library)
        }
        let opened = open(displayPath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard opened >= 0 else {
            let reason = errno
            if reason == ENOENT && !create { return nil }
            guard reason == ELOOP || reason == ENOTDIR else {
                throw EngineError("library \(library.quotedForMessage(limit: 200)): cannot open its hidden folder \(LibraryStaging.folderName) (\(systemMessage(reason)))", kind: .io, subject: library)
            }
            throw EngineError("library \(library.quotedForMessage(limit: 200)): its hidden folder \(LibraryStaging.folderName) is a symbolic link or a file, not a folder; Moonreel neither uses nor cleans it: remove it and try again", kind: .io, subject: library)
        }
        descriptor = opened
        let procPath = "/proc/self/fd/\(opened)"
        path = access(procPath + "/.", F_OK) == 0 ? procPath : displayPath
    }

    deinit { close(descriptor) }

    /// The names in the folder (hidden ones too, not "." and "..").
    func names() -> [String] {
        let copy = dup(descriptor)
        guard copy >= 0, let folder = fdopendir(copy) else { return [] }
        defer { closedir(folder) }
        rewinddir(folder)
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// What `name` is, when it is a regular file (a symbolic link is not followed).
    func regularFile(_ name: String) -> stat? {
        var info = stat()
        guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return info
    }

    /// Removes `name` if it is a regular file.
    func remove(_ name: String) {
        if regularFile(name) != nil { unlinkat(descriptor, name, 0) }
    }

    /// The text of the regular file `name`, at most `limit` bytes (nil when larger or absent).
    func read(_ name: String, limit: Int) -> String? {
        let file = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard file >= 0 else { return nil }
        defer { close(file) }
        var info = stat()
        guard fstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= limit else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeMutableBytes { Glibc.read(file, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            offset += count
        }
        return String(decoding: bytes[..<offset], as: UTF8.self)
    }

    func sync() throws {
        guard fsync(descriptor) == 0 else {
            throw EngineError("cannot sync \(displayPath.quotedForMessage(limit: 200)) to disk (\(systemMessage(errno)))", kind: .io, subject: displayPath)
        }
    }

    // MARK: Hand-off locks

    /// A hand-off's token: the process and 64 random bits, e.g. "4242-9f3a0c…".
    static func newToken() -> String {
        "\(getpid())-\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
    }

    /// Whether `name` is a file a hand-off with `token` makes: its lock, journal (and the
    /// journal's temporary), its staged copy, or the export's hidden temporary of that copy.
    static func isHandOffFile(_ name: String, token: String) -> Bool {
        let own = [".lock", ".journal", ".journal.tmp"] + fileTypes.map { "." + $0 }
        if own.contains(where: { name == token + $0 }) { return true }
        return fileTypes.contains { type in
            let prefix = ".\(token).\(type).moonreel-"
            guard name.hasPrefix(prefix), name.hasSuffix(".tmp") else { return false }
            let middle = name.dropFirst(prefix.count).dropLast(4)
            return middle.split(separator: "-", omittingEmptySubsequences: false).count == 2 && middle.allSatisfy { $0 == "-" || $0.isASCIIDigit }
        }
    }

    /// The token a file of a hand-off belongs to, if its name has the form of one.
    static func token(of name: String) -> String? {
        let token = String(name.drop { $0 == "." }.prefix { $0 != "." })
        let parts = token.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...10).contains(parts[0].count), parts[0].allSatisfy(\.isASCIIDigit),
              (1...16).contains(parts[1].count), parts[1].allSatisfy(\.isLowercaseHexDigit),
              isHandOffFile(name, token: token) else { return nil }
        return token
    }

    /// Makes and takes the lock of a new hand-off; it is held until `release`. The lock
    /// (flock) is what tells a running hand-off from a dead one, in any PID namespace and,
    /// on NFS, on any host: the kernel (or the server) drops it when its process dies.
    func lock(token: String) throws -> HandOffLock {
        let file = openat(descriptor, token + ".lock", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard file >= 0 else {
            throw EngineError("cannot create a lock in \(displayPath.quotedForMessage(limit: 200)) (\(systemMessage(errno)))", kind: .io, subject: displayPath)
        }
        guard flock(file, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            close(file)
            unlinkat(descriptor, token + ".lock", 0)
            throw EngineError("cannot lock a hand-off in \(displayPath.quotedForMessage(limit: 200)) (\(systemMessage(reason))); the file system must support locks", kind: .io, subject: displayPath)
        }
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count - 1)
        let text = Array("moonreel hand-off: process \(getpid()) on \(String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))\n".utf8)
        _ = text.withUnsafeBytes { Glibc.write(file, $0.baseAddress, $0.count) }
        return HandOffLock(token: token, descriptor: file, staging: self)
    }

    /// The lock of a hand-off whose process is gone, taken for its recovery; nil when its
    /// process still holds it (or there is no lock file, so nothing proves Moonreel made
    /// the token's files).
    func lockIfAbandoned(token: String) -> HandOffLock? {
        let file = openat(descriptor, token + ".lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard file >= 0 else { return nil }
        var info = stat()
        guard fstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, flock(file, LOCK_EX | LOCK_NB) == 0 else {
            close(file)
            return nil
        }
        return HandOffLock(token: token, descriptor: file, staging: self)
    }

    fileprivate func unlock(_ lock: HandOffLock, descriptor file: Int32) {
        unlinkat(descriptor, lock.token + ".lock", 0)
        close(file)
    }
}

/// A held hand-off lock; `release` removes the lock file (the hand-off is over) and lets go.
final class HandOffLock {
    let token: String
    private var descriptor: Int32
    private let staging: LibraryStaging

    fileprivate init(token: String, descriptor: Int32, staging: LibraryStaging) {
        (self.token, self.descriptor, self.staging) = (token, descriptor, staging)
    }

    func release() {
        guard descriptor >= 0 else { return }
        staging.unlock(self, descriptor: descriptor)
        descriptor = -1
    }

    deinit { release() }
}

/// The per-user secret that signs library journals: recovery deletes a source only when its
/// journal carries this user's signature, so a journal someone else wrote into a shared
/// library cannot make Moonreel delete a file of theirs. Kept in
/// `$XDG_STATE_HOME/moonreel/library-key` (else `~/.local/state/…`), made on first use.
enum LibraryKey {
    static let current: [UInt8]? = load()

    private static func load() -> [UInt8]? {
        let state = getenv("XDG_STATE_HOME").map { String(cString: $0) }.flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? getenv("HOME").map { String(cString: $0) + "/.local/state" }
        guard let state, state.hasPrefix("/") else { return nil }
        let folder = state + "/moonreel", path = folder + "/library-key"
        if let key = read(path) { return key }
        try? Paths.makeFolders(folder, mode: 0o700)
        var generator = SystemRandomNumberGenerator()
        let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let temporary = "\(path).\(getpid()).tmp"
        guard (try? MediaLibrary.writeDurably(key, to: temporary, mode: 0o600)) != nil else { return nil }
        defer { unlink(temporary) }
        // Another process may have made one meanwhile: the first in place wins.
        guard link(temporary, path) == 0 || errno == EEXIST else { return nil }
        return read(path)
    }

    private static func read(_ path: String) -> [UInt8]? {
        let file = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard file >= 0 else { return nil }
        defer { close(file) }
        var key = [UInt8](repeating: 0, count: 33)
        let count = key.withUnsafeMutableBytes { Glibc.read(file, $0.baseAddress, $0.count) }
        return count == 32 ? Array(key.prefix(32)) : nil
    }

    /// HMAC-SHA256 of `text` under `key`, as lowercase hex.
    static func signature(of text: String, key: [UInt8]) -> String? {
        guard let context = av_hmac_alloc(AV_HMAC_SHA256) else { return nil }
        defer { av_hmac_free(context) }
        var digest = [UInt8](repeating: 0, count: 32)
        let bytes = Array(text.utf8)
        guard av_hmac_calc(context, bytes, UInt32(bytes.count), key, UInt32(key.count), &digest, UInt32(digest.count)) == 32 else { return nil }
        return hexString(digest)
    }

    /// Whether `signature` is `text`'s under `key` (compared in constant time).
    static func verify(_ text: String, signature: String, key: [UInt8]) -> Bool {
        guard let expected = self.signature(of: text, key: key), expected.utf8.count == signature.utf8.count else { return false }
        return zip(expected.utf8, signature.utf8).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
    var isLowercaseHexDigit: Bool { isASCIIDigit || ("a"..."f").contains(self) }
}
