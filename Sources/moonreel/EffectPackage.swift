import Foundation
import MoonreelEngine
import MoonreelPlatform
import MoonreelScriptHost
#if canImport(Glibc)
import Glibc
#endif

/// An effect as one file to share (`NAME-VERSION.moonfx`): a POSIX ustar archive whose first
/// entry is `moonfx.json`, the manifest (name, version, licence, author, what it requires,
/// and every file's size and SHA-256), followed by the effect's files as plain entries. Read
/// strictly: no links or devices, no absolute paths or `..`, no file the manifest does not
/// list or whose hash differs, within size limits, so what is installed is exactly what was
/// packed. `tar tf` lists one.
struct EffectPackage {
    struct Manifest: Codable, Equatable {
        var format = 1
        /// As in `require "effects.NAME"`.
        var name: String
        var version: String
        var license: String
        var author: String
        var requires: Requires
        /// "folder" (the files of a NAME/ folder with init.lua) or "file" (one NAME.lua).
        var kind: String
        var files: [File]

        struct Requires: Codable, Equatable {
            var moonreel: String
            var effects: [String: String]
        }

        struct File: Codable, Equatable {
            var path: String
            var size: Int
            var sha256: String
        }
    }

    let manifest: Manifest
    /// Each file's bytes, by its path in the manifest.
    let contents: [String: [UInt8]]

    static let manifestName = "moonfx.json"
    static let maxFileSize = 8 << 20
    static let maxTotalSize = 32 << 20
    static let maxFiles = 1000

    /// The package of the effect at `path` (a NAME.lua file or a NAME folder), which the
    /// sandboxed loader read as `info`.
    static func make(from path: String, info: EffectInfo) throws -> EffectPackage {
        let isFolder = EffectInstaller.kindOf(path) == .directory
        return try EffectPackage(info: info, kind: isFolder ? "folder" : "file",
                                 contents: isFolder ? try files(of: path) : [info.module + ".lua": try readLimited(path)])
    }

    /// The package of `contents` (paths in the effect → bytes), read by the loader as `info`.
    init(info: EffectInfo, kind: String, contents: [String: [UInt8]]) throws {
        guard EffectVersion(info.version) != nil else {
            throw EffectInstaller.Refusal(description: "its version \(info.version.quotedForMessage()) is not a semantic version; "
                                          + "declare version = \"1.0.0\" (MAJOR[.MINOR[.PATCH]]) in the effect")
        }
        try EffectRequirements.checkRanges(of: info)
        var files: [Manifest.File] = []
        for (file, bytes) in contents.sorted(by: { $0.key < $1.key }) {
            files.append(.init(path: file, size: bytes.count, sha256: try FileDigest.sha256(of: bytes)))
        }
        manifest = Manifest(name: info.module, version: info.version, license: info.license, author: info.author,
                            requires: .init(moonreel: info.requiresMoonreel, effects: info.requiresEffects), kind: kind, files: files)
        self.contents = contents
    }

    init(manifest: Manifest, contents: [String: [UInt8]]) {
        (self.manifest, self.contents) = (manifest, contents)
    }

    /// The effect name and kind ("file" or "folder") of a NAME.lua file or a NAME folder with init.lua.
    static func module(at path: String) throws -> (name: String, kind: String) {
        let entry = Paths.name(of: path)
        let kind = EffectInstaller.kindOf(path)
        let name = kind == .file && entry.hasSuffix(".lua") ? String(entry.dropLast(4)) : entry
        guard kind == .file ? entry.hasSuffix(".lua") : EffectInstaller.kindOf(path + "/init.lua") == .file, EffectInstaller.isEffectName(name) else {
            throw EffectInstaller.Refusal(description: "\(path): an effect is a NAME.lua file or a NAME folder with init.lua, NAME one word (letters, digits, '_', '-')")
        }
        return (name, kind == .file ? "file" : "folder")
    }

    /// The plain files under `folder` (links refused), by path inside it; a top-level
    /// folder named in `skipping` (a clone's `.git`) is left out.
    static func files(of folder: String, skipping: Set<String> = []) throws -> [String: [UInt8]] {
        var contents: [String: [UInt8]] = [:]
        try collect(folder, prefix: "", skipping: skipping, into: &contents)
        return contents
    }

    private static func collect(_ folder: String, prefix: String, skipping: Set<String>, into contents: inout [String: [UInt8]]) throws {
        for entry in FileSystem.entries(of: folder) where !skipping.contains(entry) {
            let path = folder + "/" + entry
            switch EffectInstaller.kindOf(path) {
            case .directory: try collect(path, prefix: prefix + entry + "/", skipping: [], into: &contents)
            case .file:
                contents[prefix + entry] = try readLimited(path)
                guard contents.count <= maxFiles else {
                    throw EffectInstaller.Refusal(description: "it has more than \(maxFiles) files; an effect package holds at most \(maxFiles)")
                }
                guard contents.values.reduce(0, { $0 + $1.count }) <= maxTotalSize else {
                    throw EffectInstaller.Refusal(description: "its files are larger than \(maxTotalSize >> 20) MiB together, the most an effect package holds")
                }
            case .symlink: throw EffectInstaller.Refusal(description: "\(path) is a symbolic link; effects are installed as plain files and folders")
            case .other, .missing: throw EffectInstaller.Refusal(description: "\(path) is not a plain file or folder")
            }
        }
    }

    static func readLimited(_ path: String) throws -> [UInt8] {
        do {
            return try FileSystem.read(path, limit: maxFileSize) { size in
                "\(path) is \(size) bytes; a file in an effect package may be at most \(maxFileSize >> 20) MiB"
            }
        } catch let error as ScriptError {
            throw EffectInstaller.Refusal(description: error.message)
        }
    }

    /// The manifest as stored: sorted keys, so the same effect always gives the same bytes
    /// (its SHA-256 is what `effects.lock` records for a folder or git source).
    func manifestBytes() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(manifest)) + [10]
    }

    /// The archive: the manifest, then the files in the manifest's order.
    func archive() throws -> [UInt8] {
        var tar = Ustar.Writer()
        try tar.add(Self.manifestName, manifestBytes())
        for file in manifest.files { try tar.add(file.path, contents[file.path] ?? []) }
        return tar.finished()
    }

    /// Reads and verifies an archive; errors name `path` and the entry at fault.
    static func read(archive bytes: [UInt8], path: String) throws -> EffectPackage {
        func refuse(_ problem: String) -> EffectInstaller.Refusal {
            EffectInstaller.Refusal(description: "\(path): \(problem); it is not installed (make it again with `moonreel effects pack`)")
        }
        let entries: [Ustar.Entry]
        do { entries = try Ustar.entries(of: bytes, maxFileSize: maxFileSize, maxEntries: maxFiles + 1) } catch let error as Ustar.Problem {
            throw refuse(error.description)
        }
        guard let first = entries.first, first.path == manifestName else { throw refuse("its first entry is not \(manifestName)") }
        let manifest: Manifest
        do { manifest = try JSONDecoder().decode(Manifest.self, from: Data(first.bytes)) } catch {
            throw refuse("its \(manifestName) is not a manifest (\(String(describing: error).oneLine.prefix(120)))")
        }
        guard manifest.format == 1 else { throw refuse("its manifest is format \(manifest.format); this Moonreel reads format 1: update Moonreel") }
        guard EffectInstaller.isEffectName(manifest.name) else { throw refuse("its name \(manifest.name.quotedForMessage()) is not an effect name") }
        guard EffectVersion(manifest.version) != nil else { throw refuse("its version \(manifest.version.quotedForMessage()) is not a semantic version") }
        guard manifest.kind == "folder" || (manifest.kind == "file" && manifest.files.map(\.path) == [manifest.name + ".lua"]) else {
            throw refuse("its kind \(manifest.kind.quotedForMessage()) is not a folder, or a file holding only \(manifest.name).lua")
        }
        if let twice = Dictionary(grouping: manifest.files.map(\.path), by: { $0 }).first(where: { $0.value.count > 1 })?.key {
            throw refuse("its manifest lists \(twice.quotedForMessage()) twice")
        }
        var contents: [String: [UInt8]] = [:]
        for entry in entries.dropFirst() where !entry.isFolder {
            guard contents[entry.path] == nil else { throw refuse("it holds \(entry.path.quotedForMessage()) twice") }
            contents[entry.path] = entry.bytes
        }
        guard contents.values.reduce(0, { $0 + $1.count }) <= maxTotalSize else {
            throw refuse("its files are larger than \(maxTotalSize >> 20) MiB together")
        }
        for file in manifest.files {
            if let problem = Ustar.problem(with: file.path) { throw refuse("the manifest's file \(file.path.quotedForMessage()) \(problem)") }
            guard let bytes = contents[file.path] else { throw refuse("the manifest lists \(file.path.quotedForMessage()), which it does not hold") }
            guard bytes.count == file.size, try FileDigest.sha256(of: bytes) == file.sha256.lowercased() else {
                throw refuse("\(file.path.quotedForMessage()) does not match its SHA-256 in the manifest (changed after packing)")
            }
        }
        if let extra = contents.keys.sorted().first(where: { path in !manifest.files.contains { $0.path == path } }) {
            throw refuse("it holds \(extra.quotedForMessage()), which the manifest does not list")
        }
        if manifest.kind == "folder", contents["init.lua"] == nil { throw refuse("it is a folder effect without init.lua") }
        return EffectPackage(manifest: manifest, contents: contents)
    }

    /// Writes the effect's files under `folder` as NAME/… or NAME.lua; returns that path.
    func extract(into folder: String) throws -> String {
        try Self.write(contents, name: manifest.name, kind: manifest.kind, into: folder)
    }

    /// Writes `contents` under `folder` as the effect `name`: a folder NAME/, or the file NAME.lua.
    static func write(_ contents: [String: [UInt8]], name: String, kind: String, into folder: String) throws -> String {
        let root = folder + "/" + name + (kind == "file" ? ".lua" : "")
        do {
            if kind == "file" {
                try Paths.writeFile(contents[name + ".lua"] ?? [], to: root, replacing: false)
                return root
            }
            for (file, bytes) in contents.sorted(by: { $0.key < $1.key }) {
                if let problem = Ustar.problem(with: file) { throw EffectInstaller.Refusal(description: "\(file.quotedForMessage()) \(problem)") }
                let path = root + "/" + file
                try Paths.makeFolders(Paths.parent(of: path))
                try Paths.writeFile(bytes, to: path, replacing: false)
            }
        } catch {
            throw EffectInstaller.Refusal(description: "cannot unpack it into \(folder): \(error)")
        }
        return root
    }
}

/// POSIX ustar (what `tar --format=ustar` writes), the part effect packages need: plain
/// files and folders; every other entry type (links, devices, GNU and pax extensions) is
/// refused, as are names that are absolute or climb out with `..`.
enum Ustar {
    struct Entry {
        let path: String
        let isFolder: Bool
        let bytes: [UInt8]
    }

    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    struct Writer {
        private var bytes: [UInt8] = []

        /// Adds a plain file (mode 0644, owner 0, time 0: the same effect packs to the same bytes).
        mutating func add(_ path: String, _ content: [UInt8]) throws {
            var header = [UInt8](repeating: 0, count: 512)
            let name = Array(path.utf8)
            var (prefix, rest) = ([UInt8](), name)
            if name.count > 100 {
                // Split at a slash: up to 155 bytes of folders, then up to 100 of name.
                guard let slash = name.indices.last(where: { name[$0] == UInt8(ascii: "/") && $0 <= 155 && name.count - $0 - 1 <= 100 }) else {
                    throw EffectInstaller.Refusal(description: "\(path) is too long a path for an effect package (at most 100 bytes per name, 255 in all)")
                }
                (prefix, rest) = (Array(name[..<slash]), Array(name[(slash + 1)...]))
            }
            func put(_ field: [UInt8], at offset: Int) { header.replaceSubrange(offset..<offset + field.count, with: field) }
            func octal(_ value: Int, width: Int) -> [UInt8] {
                let digits = String(value, radix: 8)
                return Array((String(repeating: "0", count: max(0, width - 1 - digits.count)) + digits).utf8) + [0]
            }
            put(rest, at: 0)
            put(octal(0o644, width: 8), at: 100)
            put(octal(0, width: 8), at: 108)
            put(octal(0, width: 8), at: 116)
            put(octal(content.count, width: 12), at: 124)
            put(octal(0, width: 12), at: 136)
            header[156] = UInt8(ascii: "0")
            put(Array("ustar".utf8) + [0] + Array("00".utf8), at: 257)
            put(prefix, at: 345)
            put(octal(Ustar.checksum(of: header), width: 7) + [UInt8(ascii: " ")], at: 148)
            bytes += header + content
            bytes += [UInt8](repeating: 0, count: (512 - content.count % 512) % 512)
        }

        /// The archive, ended by two empty blocks.
        func finished() -> [UInt8] { bytes + [UInt8](repeating: 0, count: 1024) }
    }

    /// The header's checksum: its bytes summed with the checksum field read as spaces.
    static func checksum(of header: [UInt8]) -> Int {
        header.enumerated().reduce(0) { sum, item in sum + ((148..<156).contains(item.offset) ? 32 : Int(item.element)) }
    }

    /// Why `path` cannot be an entry of a package, or nil when it can.
    static func problem(with path: String) -> String? {
        if path.isEmpty { return "has no name" }
        if path.hasPrefix("/") { return "is an absolute path" }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        if parts.contains("..") { return "leads outside the package (..)" }
        if parts.contains(where: { $0.isEmpty || $0 == "." }) { return "is not a plain relative path" }
        if path.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\\") }) { return "has a control character or backslash in its name" }
        return nil
    }

    /// Every entry of the archive, strictly: checksums, plain files and folders only, safe
    /// names, sizes within `maxFileSize`, nothing but zeros after the end.
    static func entries(of bytes: [UInt8], maxFileSize: Int, maxEntries: Int) throws -> [Entry] {
        var entries: [Entry] = []
        var offset = 0
        func text(_ header: ArraySlice<UInt8>) -> String { String(decoding: header.prefix { $0 != 0 }, as: UTF8.self) }
        while true {
            guard offset + 512 <= bytes.count else { throw Problem(description: "it ends inside an entry (truncated?)") }
            let header = Array(bytes[offset..<offset + 512])
            if header.allSatisfy({ $0 == 0 }) {
                guard bytes[offset...].allSatisfy({ $0 == 0 }) else { throw Problem(description: "it has data after its end") }
                return entries
            }
            let name = text(header[0..<100]), prefix = text(header[345..<500])
            let path = prefix.isEmpty ? name : prefix + "/" + name
            let shown = path.quotedForMessage()
            guard text(header[257..<263]).hasPrefix("ustar") else { throw Problem(description: "entry \(shown) is not a ustar header") }
            let sizeText = text(header[124..<136]).trimmingCharacters(in: .whitespaces)
            guard let stored = Int(text(header[148..<156]).trimmingCharacters(in: .whitespaces), radix: 8), stored == checksum(of: header),
                  let size = Int(sizeText.isEmpty ? "0" : sizeText, radix: 8), size >= 0 else {
                throw Problem(description: "entry \(shown) has a damaged header")
            }
            let type = header[156]
            let isFolder = type == UInt8(ascii: "5")
            guard type == UInt8(ascii: "0") || type == 0 || isFolder else {
                let kind = type == UInt8(ascii: "1") || type == UInt8(ascii: "2") ? "a link" : "not a plain file or folder (type \(Character(UnicodeScalar(type))))"
                throw Problem(description: "entry \(shown) is \(kind); effect packages hold plain files only")
            }
            let plain = isFolder && path.hasSuffix("/") ? String(path.dropLast()) : path
            if let problem = problem(with: plain) { throw Problem(description: "entry \(shown) \(problem)") }
            guard size <= maxFileSize else { throw Problem(description: "entry \(shown) is \(size) bytes, more than \(maxFileSize >> 20) MiB") }
            guard entries.count < maxEntries else { throw Problem(description: "it has more than \(maxEntries) entries") }
            let start = offset + 512
            guard start + size <= bytes.count else { throw Problem(description: "entry \(shown) is cut short (truncated?)") }
            entries.append(Entry(path: plain, isFolder: isFolder, bytes: isFolder ? [] : Array(bytes[start..<start + size])))
            offset = start + (size + 511) / 512 * 512
        }
    }
}
