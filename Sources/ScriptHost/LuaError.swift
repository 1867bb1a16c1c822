/// Why a script run failed, with the script position already parsed out of the message.
///
/// ```swift
/// do { try host.run(file: "cut.lua") } catch let error as ScriptError {
///     print(error.file ?? "?", error.line ?? 0, error.message)
/// }
/// ```
public struct ScriptError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, as Lua reports it.
    public enum Kind: String, Sendable {
        /// The script does not compile (the message names the line).
        case syntax
        /// The script raised an error, or a function it called did (bad arguments, an
        /// export that failed, an app function that threw).
        case runtime
        /// The script ran out of memory (see ``ScriptLimits/memory``).
        case memory
        /// The error handler itself failed (an error object whose `__tostring` raises).
        case handler
        /// The script file could not be read.
        case file
    }

    /// What went wrong, as Lua reports it; see also ``stop``.
    public let kind: Kind
    /// The message without the traceback, e.g. `cut.lua:12: bad argument #1 to 'asset' (...)`.
    public let message: String
    /// The script (or effect) file the error points at, as the message names it.
    public let file: String?
    /// The line in ``file``.
    public let line: Int?
    /// Lua's stack traceback at the error, when there was a stack.
    public let traceback: String?
    /// Set when the script did not fail by itself but was stopped by a limit or by
    /// ``ScriptCanceller/cancel()`` (the CLI exits with 130 for `.interrupted`).
    public let stop: ScriptStop?
    /// When the error came from Moonreel (an engine or `av` function, in the script or in an
    /// effect it called) and was not caught: what kind of failure it was, as scripts read it
    /// in `err.kind` — `"invalidArgument"`, `"unsupported"`, `"notFound"`, `"io"`,
    /// `"decode"`, `"encode"`, `"limit"`, `"cancelled"` or `"internal"`. Nil for errors the
    /// script raised itself (`error("…")`), syntax errors and stops.
    public let failureKind: String?
    /// With ``failureKind``: the file path, input or device the failure names, if any
    /// (`err.subject`).
    public let subject: String?

    package init(kind: Kind, message: String, traceback: String? = nil, stop: ScriptStop? = nil,
                 failureKind: String? = nil, subject: String? = nil) {
        self.kind = kind
        self.message = ScriptError.sayingPositionOnce(message.oneLine)
        self.traceback = traceback
        self.stop = stop
        self.failureKind = failureKind
        self.subject = subject
        (file, line) = ScriptError.position(in: message)
    }

    /// The message, `file:line: what happened`.
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

/// Why an app function or value could not be registered under a name.
public struct RegistrationError: Error, CustomStringConvertible, Sendable {
    /// The name asked for.
    public let name: String
    /// Why it cannot be used: not a Lua identifier, a Lua keyword, a global scripts already
    /// have (`print`, `av`, an earlier registration), or a value nested too deep.
    public let reason: String

    /// `cannot register "NAME": REASON`.
    public var description: String { "cannot register \"\(name)\": \(reason)" }
}

/// Why a script was stopped from outside its own logic: read from the state's budget (or
/// its memory refusals), never from the message, which a script could imitate.
public enum ScriptStop: String, Sendable {
    /// The script (or an effect) reached its memory limit.
    case memoryLimit
    /// The script (or an effect) used up its instruction budget.
    case instructionLimit
    /// The script (or an effect) ran past its wall-clock limit.
    case timeLimit
    /// The run was cancelled (Ctrl-C in the CLI, ``ScriptCanceller/cancel()`` in an app).
    case interrupted
}

/// An error that says what kind of failure it was. When a Swift function called from Lua
/// throws one, the script still gets the one-line error string it always got, and that
/// string answers `err.kind`, `err.subject` and `err.message` (the state remembers them for
/// its recent errors: see `MOON_RAISE_KINDED`). The Engine's errors conform in Bindings.
package protocol KindedError: Error {
    /// The kind's name, one of the raw values of the Engine's `EngineError.Kind` ("notFound").
    var errorKindName: String { get }
    /// The file path, property or input concerned, if any.
    var errorSubject: String? { get }
    /// The message as scripts read it: remedies in Lua's terms (the description unless the
    /// error says otherwise).
    var scriptMessage: String { get }
}

extension KindedError {
    package var scriptMessage: String { "\(self)" }
}

/// Thrown by Swift functions called from Lua; the dispatcher turns it into a Lua error
/// positioned at the calling script line. Its kind is `invalidArgument` unless it reports
/// another error (an asset that cannot be opened is `bad argument #1` of kind `notFound`).
package struct LuaArgumentError: KindedError, CustomStringConvertible {
    package let message: String
    package let errorKindName: String
    package let errorSubject: String?
    package init(_ message: String, kind: String = "invalidArgument", subject: String? = nil) {
        self.message = message
        errorKindName = kind
        errorSubject = subject
    }
    package var description: String { message }
}

/// Re-raises a Lua error value unchanged (for errors that crossed a Swift frame, such as
/// an error inside a progress callback, or the interrupt that stops a script).
struct LuaPassthroughError: Error {}

package extension String {
    /// The longest message Moonreel prints about anything (an error, a note).
    static let messageLimit = 500

    /// This text as one printable line of at most `messageLimit` characters: a line break
    /// and the indentation after it become "; " (or a space after a colon), NULs and other
    /// control characters (C0, DEL, C1) are shown escaped (`\0`, `\x1b`), as are the
    /// bidirectional overrides that could make a terminal show text in another order
    /// (`\u{202e}`), and the middle of an over-long message is elided, keeping its start
    /// (where the culprit is named) and its end.
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
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\x" + (hex.count == 1 ? "0" : "") + hex
                } else if String.reordersText(scalar) {
                    out += "\\u{" + String(scalar.value, radix: 16) + "}"
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

    /// Bidirectional embeddings, overrides and isolates (U+202A…202E, U+2066…2069).
    private static func reordersText(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

}
