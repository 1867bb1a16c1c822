/// A description that cannot be built: a keyframe animation with mismatched keyTimes, a
/// layer tree with a cycle, a limit exceeded. The message names the problem and the
/// offending value, so front ends (scripting bindings, a Swift app) can show it unchanged.
public struct AnimationError: Error, CustomStringConvertible, Hashable, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A layer tree operation that was refused (cycle, index out of range, size limit).
public struct LayerError: Error, CustomStringConvertible, Hashable, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
