/// A description that cannot be built: a keyframe animation with mismatched keyTimes, a
/// layer tree with a cycle, a limit exceeded. The message names the problem and the
/// offending value, so front ends (scripting bindings, a Swift app) can show it unchanged.
public struct AnimationError: Error, CustomStringConvertible, Hashable, Sendable {
    /// What is wrong, one line, ready to show: "values must not be empty".
    public let message: String
    /// An error with the given message.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}

/// A layer tree operation that was refused (cycle, index out of range, size limit).
public struct LayerError: Error, CustomStringConvertible, Hashable, Sendable {
    /// What was refused and why, one line: "sublayer index 5 is out of range 0…2".
    public let message: String
    /// An error with the given message.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
