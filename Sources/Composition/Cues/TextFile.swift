#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import MoonreelPlatform
import MoonreelMedia

/// A problem in a timed-text or CSV file, with the file and line it is on:
/// `lyrics.csv:7: start_at "1:2x" is not a time`.
public struct TimedTextError: Error, CustomStringConvertible, Hashable, Sendable {
    /// The file's path, or the name given for text parsed from memory.
    public let file: String
    /// The 1-based line the problem is on; nil when it concerns the whole file.
    public let line: Int?
    /// What is wrong, without the file and line.
    public let message: String
    /// `decode` for a malformed file (the usual case), `notFound` or `io` when it cannot be
    /// read, `limit` when it is too large.
    public let kind: EngineError.Kind

    /// An error about `file` at `line` (nil: the whole file), of `kind`.
    public init(file: String, line: Int?, _ message: String, kind: EngineError.Kind = .decode) {
        self.file = file
        self.line = line
        self.message = message
        self.kind = kind
    }

    /// "file:line: message", or "file: message" without a line.
    public var description: String { line.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)" }

    /// Errors that say the same thing about the same place are equal; the kind is how the
    /// message is classed, not part of what it says.
    public static func == (lhs: TimedTextError, rhs: TimedTextError) -> Bool {
        (lhs.file, lhs.line, lhs.message) == (rhs.file, rhs.line, rhs.message)
    }

    /// Hashes what `==` compares: the file, the line and the message.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(file)
        hasher.combine(line)
        hasher.combine(message)
    }
}

/// Reads small text files with the C library: Foundation would cost startup time (which
/// is why CSV parsing is not done with SwiftCSV either, as it needs Foundation).
package enum TextFile {
    static let maxBytes = 64 << 20

    /// The file's text as UTF-8, without a byte-order mark; `kind` names the file in messages.
    package static func read(_ path: String, kind: String = "timed-text") throws -> String {
        guard let file = fopen(path, "rb") else {
            let code = errno
            throw TimedTextError(file: path, line: nil, "cannot open: \(systemMessage(code))", kind: code == ENOENT ? .notFound : .io)
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            bytes += chunk[0..<count]
            guard bytes.count <= maxBytes else {
                throw TimedTextError(file: path, line: nil, "is larger than \(maxBytes >> 20) MB, too large for a \(kind) file", kind: .limit)
            }
            if count < chunk.count {
                if ferror(file) != 0 { throw TimedTextError(file: path, line: nil, "cannot read: \(systemMessage(errno))", kind: .io) }
                break
            }
        }
        return try decode(bytes, fileName: path)
    }

    static func decode(_ bytes: [UInt8], fileName: String) throws -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let line = bytes.prefix { $0 < 0x80 }.filter { $0 == 10 }.count + 1
            throw TimedTextError(file: fileName, line: line, "is not valid UTF-8 text")
        }
        return text // the parser drops one byte-order mark (a second is content: WebVTT refuses it)
    }

    static func withoutByteOrderMark(_ text: String) -> String {
        text.unicodeScalars.first == "\u{FEFF}" ? String(text.unicodeScalars.dropFirst()) : text
    }

    /// Lines without their terminators (LF, CRLF or CR), numbered from 1.
    static func lines(_ text: String) -> [(number: Int, text: Substring)] {
        var result: [(Int, Substring)] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            let end = rest.firstIndex { $0 == "\n" || $0 == "\r" || $0 == "\r\n" } ?? rest.endIndex
            result.append((result.count + 1, rest[..<end]))
            rest = end < rest.endIndex ? rest[rest.index(after: end)...] : rest[end...]
        }
        return result
    }
}

extension StringProtocol {
    package var trimmed: Substring {
        let scalars = Substring(self)
        guard let first = scalars.firstIndex(where: { !$0.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.isWhitespace }) else { return scalars[scalars.endIndex...] }
        return scalars[first...last]
    }
}
