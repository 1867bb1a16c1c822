/// An error from running Lua code, with the script position already parsed out.
public struct LuaError: Error, CustomStringConvertible, Sendable {
    public enum Kind: String, Sendable { case syntax, runtime, memory, handler, file }
    public let kind: Kind
    /// The message without the traceback, e.g. `cut.lua:12: bad argument #1 to 'asset' (...)`.
    public let message: String
    public let file: String?
    public let line: Int?
    public let traceback: String?
    /// Set when the script did not fail by itself but was stopped by a limit or an
    /// interrupt (the CLI exits with 130 for `.interrupted`).
    public let stop: ScriptStop?

    public init(kind: Kind, message: String, traceback: String? = nil, stop: ScriptStop? = nil) {
        self.kind = kind
        self.message = LuaError.sayingPositionOnce(message.oneLine)
        self.traceback = traceback
        self.stop = stop
        (file, line) = LuaError.position(in: message)
    }

    public var description: String { message }

    /// `assert(session:export())` puts Lua's position for the assert in front of a message
    /// that already starts with the same position: "cut.lua:7: cut.lua:7: …" says it once.
    static func sayingPositionOnce(_ message: String) -> String {
        guard case (let file?, let line?) = position(in: message) else { return message }
        let prefix = "\(file):\(line): "
        guard message.hasPrefix(prefix + prefix) else { return message }
        return String(message.dropFirst(prefix.count))
    }

    /// Parses `chunk:LINE: rest` at the start of a message.
    static func position(in message: String) -> (String?, Int?) {
        guard let firstColon = message.firstIndex(of: ":") else { return (nil, nil) }
        let afterFirst = message.index(after: firstColon)
        guard let secondColon = message[afterFirst...].firstIndex(of: ":"),
              let line = Int(message[afterFirst..<secondColon]) else { return (nil, nil) }
        return (String(message[..<firstColon]), line)
    }
}

/// Why a script was stopped from outside its own logic: read from the state's budget (or
/// its memory refusals), never from the message, which a script could imitate.
public enum ScriptStop: String, Sendable {
    case memoryLimit, instructionLimit, timeLimit, interrupted
}

/// Thrown by Swift functions called from Lua; the dispatcher turns it into a Lua error
/// positioned at the calling script line.
public struct LuaArgumentError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Re-raises a Lua error value unchanged (for errors that crossed a Swift frame, such as
/// an error inside a progress callback, or the interrupt that stops a script).
struct LuaPassthroughError: Error {}

public extension String {
    /// The longest message Moonreel prints about anything (an error, a note).
    static let messageLimit = 500

    /// This text as one printable line of at most `messageLimit` characters: a line break
    /// and the indentation after it become "; " (or a space after a colon), NULs and other
    /// control characters are shown escaped (`\0`, `\x1b`), and the middle of an over-long
    /// message is elided, keeping its start (where the culprit is named) and its end.
    var oneLine: String {
        var out = ""
        out.reserveCapacity(Swift.min(utf8.count, 2 * String.messageLimit))
        var count = 0, elided = false, afterBreak = false
        for scalar in unicodeScalars {
            if count >= String.messageLimit * 4 { elided = true; break }
            if afterBreak, scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" { continue }
            afterBreak = false
            switch scalar {
            case "\n", "\r":
                while out.last == " " { out.removeLast() }
                out += out.isEmpty || out.last == ":" ? " " : "; "
                afterBreak = true
            case "\t": out += " "
            case "\0": out += "\\0"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\x" + (hex.count == 1 ? "0" : "") + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
            count += 1
        }
        let characters = Array(out)
        guard characters.count > String.messageLimit || elided else { return out }
        let head = String.messageLimit * 3 / 4, tail = String.messageLimit - head - 1
        return String(characters.prefix(head)) + "…" + (elided ? "" : String(characters.suffix(tail)))
    }

}
