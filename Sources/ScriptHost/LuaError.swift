/// An error from running Lua code, with the script position already parsed out.
public struct LuaError: Error, CustomStringConvertible, Sendable {
    public enum Kind: String, Sendable { case syntax, runtime, memory, handler, file }
    public let kind: Kind
    /// The message without the traceback, e.g. `cut.lua:12: bad argument #1 to 'asset' (...)`.
    public let message: String
    public let file: String?
    public let line: Int?
    public let traceback: String?

    public init(kind: Kind, message: String, traceback: String? = nil) {
        self.kind = kind
        self.message = message
        self.traceback = traceback
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
