#if canImport(Glibc)
import Glibc
#endif
import MoonreelPlatform

/// The REPL's history file as people can read it: each statement as typed, the lines after
/// the first of a statement typed over several lines indented by one tab. (libedit's own
/// format escapes every space as `\040`; a file in that format is read and written anew.)
struct REPLHistory {
    let path: String
    /// Entries kept; the file is rewritten with the newest this many once it holds twice as many.
    static let limit = 1000
    private(set) var count = 0

    init(path: String) { self.path = path }

    /// The entries in the file, oldest first.
    mutating func load() -> [String] {
        guard let text = Self.contents(of: path) else { return [] }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        let entries: [String]
        if lines.first == "_HiStOrY_V2_" {
            entries = lines.dropFirst().map(Self.unescapedLibedit)
            try? Paths.writeFile(entries.map(Self.encoded).joined(), to: path, replacing: true)
        } else {
            var decoded: [String] = []
            for line in lines {
                if line.hasPrefix("\t"), !decoded.isEmpty { decoded[decoded.count - 1] += "\n" + line.dropFirst() } else { decoded.append(line) }
            }
            entries = decoded
        }
        count = entries.count
        return entries
    }

    /// Adds `entry` at the end of the file; false when it cannot be written.
    mutating func append(_ entry: String, keeping all: () -> [String]) -> Bool {
        count += 1
        if count > 2 * Self.limit {
            let newest = all().suffix(Self.limit)
            count = newest.count
            return (try? Paths.writeFile(newest.map(Self.encoded).joined(), to: path, replacing: true)) != nil
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let bytes = Array(Self.encoded(entry).utf8)
        return bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count
    }

    /// One entry as lines of the file: its own first line (leading blanks dropped, so it
    /// never reads as a continuation), then each further line after a tab.
    static func encoded(_ entry: String) -> String {
        let lines = entry.split(separator: "\n", omittingEmptySubsequences: false)
        let first = lines.first.map { String($0.drop { $0 == " " || $0 == "\t" }) } ?? ""
        return ([first] + lines.dropFirst().map { "\t" + $0 }).joined(separator: "\n") + "\n"
    }

    /// libedit's `strvis` form: `\ooo` octal bytes and `\\`.
    static func unescapedLibedit(_ line: String) -> String {
        var bytes: [UInt8] = [], input = Array(line.utf8)[...]
        while let byte = input.popFirst() {
            guard byte == UInt8(ascii: "\\"), let next = input.first else { bytes.append(byte); continue }
            let digits = input.prefix(3)
            if digits.count == 3, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "7")).contains($0) }) {
                bytes.append(digits.reduce(0) { $0 &* 8 &+ ($1 - UInt8(ascii: "0")) })
                input = input.dropFirst(3)
            } else {
                bytes.append(next)
                input = input.dropFirst()
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func contents(of path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var data: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 65536)
        while data.count < 16 << 20 {
            let count = read(descriptor, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            data += buffer.prefix(count)
        }
        return String(decoding: data, as: UTF8.self)
    }
}
