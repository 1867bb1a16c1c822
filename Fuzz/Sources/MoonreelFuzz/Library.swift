import Foundation
import MoonreelEngine

/// A media library's hidden folder laid out from the input — journals with mutated fields
/// (destinations and file types with "../", absolute paths, a source outside the library
/// with its real identity, tokens of any shape), lock files or not, staged files that are
/// links to outside files, the hidden folder itself a link — then the library is opened,
/// which recovers what it finds. The finding: any file outside the library changed, gone,
/// or new. (Journals are never signed here, so no source may be deleted either.)
func fuzzLibrary(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var input = LibraryInput(bytes: Array(UnsafeBufferPointer(start: data, count: size)))
    let root = LibraryFiles.root, library = root + "/library", outside = root + "/outside"
    try? FileManager.default.removeItem(atPath: library)
    LibraryFiles.resetOutside()
    try? FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
    let staging = library + "/.moonreel-import"
    if input.next() % 8 == 0 {
        try? FileManager.default.createSymbolicLink(atPath: staging, withDestinationPath: outside)
    } else {
        try? FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
    }
    for _ in 0..<Int(input.next() % 4) + 1 {
        let token = input.pick(["1-a", "99999-ff", "4000000-0", "2024-01", "123", "7-" + input.hex(), input.text()])
        let name = { (suffix: String) in staging + "/" + token + suffix }
        if input.next() % 4 != 0 { FileManager.default.createFile(atPath: name(".lock"), contents: nil) }
        switch input.next() % 3 {
        case 0: try? FileManager.default.createSymbolicLink(atPath: name(".mp4"), withDestinationPath: outside + "/1-a.mp4")
        case 1: FileManager.default.createFile(atPath: name(".mp4"), contents: Data("staged".utf8))
        default: break
        }
        let victim = outside + "/" + input.pick(LibraryFiles.outsideNames)
        let fields = [
            "version=" + input.pick(["2", "1", input.text()]),
            "token=" + input.pick([token, "../" + token, input.text()]),
            "fileType=" + input.pick(["mp4", "mov", "m4a", "mp4/../../../outside/1-a.mp4", "../outside", input.text()]),
            "destination=" + input.pick(["2026/11/2026-11-24 14.03.22", "../../outside/escaped", "/tmp/escaped",
                                         "2026/11/2026-11-24 14.03.22/../../../../outside/x", "../outside/123.txt", input.text()]),
            "source=" + input.pick([victim, "relative.mp4", outside + "/../outside/123.txt", library + "/2026/x.mp4", input.text()]),
            "deleteSource=" + input.pick(["1", "0"]),
            "sourceIdentity=" + input.pick([LibraryFiles.identity(victim), input.text()]),
            "movieIdentity=" + input.pick([LibraryFiles.identity(name(".mp4")), input.text()]),
            "duration=1", "streams=[]", "fileSize=" + input.pick(["6", input.text()]),
        ]
        let turn = Int(input.next()) % fields.count
        let lines = Array(fields[turn...] + fields[..<turn])
        FileManager.default.createFile(atPath: name(".journal"), contents: Data((lines.joined(separator: "\n") + "\n").utf8))
    }
    // Through a linked hidden folder, the files above were written outside: they must stay.
    let before = LibraryFiles.snapshot(root, excluding: library)
    _ = try? MediaLibrary(folder: library)
    let after = LibraryFiles.snapshot(root, excluding: library)
    if after != before {
        let changed = Set(before.keys).symmetricDifference(after.keys).union(before.keys.filter { before[$0] != after[$0] })
        FileHandle.standardError.write(Data("fuzz: opening the library touched files outside it: \(changed.sorted())\n".utf8))
        abort()
    }
    return 0
}

/// Decisions taken from the input bytes, one byte each.
struct LibraryInput {
    let bytes: [UInt8]
    var position = 0

    mutating func next() -> UInt64 {
        defer { position += 1 }
        return UInt64(position < bytes.count ? bytes[position] : 0)
    }

    mutating func pick(_ choices: [String]) -> String { choices[Int(next()) % choices.count] }

    mutating func hex() -> String { String(next(), radix: 16) }

    /// Up to 24 bytes of the input as text (any bytes, decoded as UTF-8 with repairs).
    mutating func text() -> String {
        let count = Int(next() % 25)
        return String(decoding: (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }.filter { $0 != 10 }, as: UTF8.self)
    }
}

enum LibraryFiles {
    /// Files outside the library named as a hand-off names its own, and others.
    static let outsideNames = ["123.txt", "2024-01-01 vacation.jpg", "99999-notes.txt", "4000000-x.mp4", "1-a.mp4", "1-a.lock",
                               "1-a.journal", "victim.txt"]

    static let root: String = {
        let root = NSTemporaryDirectory() + "moonreel-fuzz-library-\(getpid())"
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        // The user's key is never used: journals here are a stranger's.
        setenv("XDG_STATE_HOME", root + "/state", 1)
        atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "moonreel-fuzz-library-\(getpid())") }
        return root
    }()

    static func resetOutside() {
        let outside = root + "/outside"
        try? FileManager.default.removeItem(atPath: outside)
        try? FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        for name in outsideNames { FileManager.default.createFile(atPath: outside + "/" + name, contents: Data(name.utf8)) }
    }

    /// Every path under `folder` but `excluded` (and the key folder), with its contents.
    static func snapshot(_ folder: String, excluding excluded: String) -> [String: Data] {
        var files: [String: Data] = [:]
        for relative in (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String]) ?? [] {
            let path = folder + "/" + relative
            guard !path.hasPrefix(excluded), !relative.hasPrefix("state") else { continue }
            files[relative] = contents(path)
        }
        return files
    }

    /// A file's bytes, a link's target, or a folder's mark (plain calls: Foundation leaks
    /// its buffer when asked for a folder's contents).
    static func contents(_ path: String) -> Data {
        var info = stat()
        guard lstat(path, &info) == 0 else { return Data("missing".utf8) }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return Data("folder".utf8)
        case S_IFLNK: return Data(("link " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "")).utf8)
        default:
            let file = open(path, O_RDONLY)
            guard file >= 0 else { return Data("unreadable".utf8) }
            defer { close(file) }
            var bytes = [UInt8](repeating: 0, count: 4096)
            let count = read(file, &bytes, bytes.count)
            return Data(bytes.prefix(max(count, 0)))
        }
    }

    /// "device:inode:size:mtime" as a journal writes it, or "" when there is no file.
    static func identity(_ path: String) -> String {
        var info = stat()
        guard lstat(path, &info) == 0 else { return "" }
        return "\(Int64(bitPattern: UInt64(info.st_dev))):\(Int64(bitPattern: UInt64(info.st_ino))):\(info.st_size):"
            + "\(Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec))"
    }
}
