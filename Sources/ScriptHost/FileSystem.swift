#if canImport(Glibc)
import Glibc
#endif
import MoonreelPlatform

/// The few file-system calls the host (and the CLI's effect installer) needs, on Glibc
/// (Foundation would cost start-up time).
package enum FileSystem {
    package enum Kind { case missing, file, directory, symlink, other }

    /// What is at `path`; with `followingSymlinks: false` (`lstat`) a symlink is reported
    /// as such instead of what it points to.
    package static func kind(of path: String, followingSymlinks: Bool = true) -> Kind {
        var info = stat()
        guard (followingSymlinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .directory
        case S_IFLNK: return .symlink
        default: return .other
        }
    }

    /// The canonical path with every symlink resolved (`realpath`), or nil.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// A file's exact bytes. Errors read like lua.c's: "cannot open x.lua: No such file...".
    /// With `limit`, a file larger than that many bytes is refused before it is read (and
    /// reading stops there, should it grow meanwhile): `tooLarge` words the refusal.
    package static func read(_ path: String, limit: Int? = nil, tooLarge: (Int64) -> String = { _ in "" }) throws -> [UInt8] {
        guard let file = fopen(path, "rb") else {
            throw ScriptError(kind: .file, message: "cannot open \(path): \(systemMessage(errno))")
        }
        defer { fclose(file) }
        var info = stat()
        if let limit, fstat(fileno(file), &info) == 0, info.st_size > limit {
            throw ScriptError(kind: .file, message: tooLarge(Int64(info.st_size)))
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            bytes.append(contentsOf: buffer[0..<count])
            if let limit, bytes.count > limit { throw ScriptError(kind: .file, message: tooLarge(Int64(bytes.count))) }
            if count < buffer.count { break }
        }
        if ferror(file) != 0 {
            throw ScriptError(kind: .file, message: "cannot read \(path): \(systemMessage(errno))")
        }
        return bytes
    }

    /// Names in a directory (without "." and ".."), sorted; empty if it cannot be read.
    package static func entries(of directory: String) -> [String] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                raw.bindMemory(to: CChar.self).baseAddress.map { String(cString: $0) } ?? ""
            }
            if !name.isEmpty && name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// An environment variable, or nil when unset or empty.
    package static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}
