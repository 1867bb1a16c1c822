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
        self.message = message
        self.traceback = traceback
        self.stop = stop ?? ScriptStop(message: message)
        (file, line) = LuaError.position(in: message)
    }

    public var description: String { message }

    /// Parses `chunk:LINE: rest` at the start of a message.
    static func position(in message: String) -> (String?, Int?) {
        guard let firstColon = message.firstIndex(of: ":") else { return (nil, nil) }
        let afterFirst = message.index(after: firstColon)
        guard let secondColon = message[afterFirst...].firstIndex(of: ":"),
              let line = Int(message[afterFirst..<secondColon]) else { return (nil, nil) }
        return (String(message[..<firstColon]), line)
    }
}

/// Why a script was stopped from outside its own logic.
public enum ScriptStop: String, Sendable {
    case memoryLimit, instructionLimit, timeLimit, interrupted

    /// Recognizes the messages the count hook and the pattern matcher raise (shim.c).
    init?(message: String) {
        if message.hasSuffix(": interrupted") || message == "interrupted" {
            self = .interrupted
        } else if message.contains("script exceeded its time limit (") {
            self = .timeLimit
        } else if message.contains("script exceeded its instruction limit (") {
            self = .instructionLimit
        } else {
            return nil
        }
    }
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
