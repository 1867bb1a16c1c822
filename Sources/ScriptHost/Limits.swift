import CMoonLuaShim

/// An instruction budget and a wall-clock limit for one run (nil: none).
public struct RunLimits: Sendable, Equatable {
    /// Lua VM instructions (string-pattern matching steps count too).
    public var instructions: Int?
    public var seconds: Double?

    public init(instructions: Int? = nil, seconds: Double? = nil) {
        self.instructions = instructions
        self.seconds = seconds
    }

    public static let unlimited = RunLimits()
}

/// Every limit a `ScriptHost` enforces, as the CLI fills them from its flags.
public struct ScriptLimits: Sendable, Equatable {
    /// Bytes the Lua heap of the whole state (user script and the effects it loads) may hold.
    public var memory: Int
    /// For the user script's run. None by default: an export may rightly take an hour,
    /// and Ctrl-C stops a runaway script.
    public var script: RunLimits
    /// For each effect call (loading an effect, or calling it), nested inside the script's:
    /// effects come from strangers and only build descriptions, which takes milliseconds.
    public var effect: RunLimits

    public init(memory: Int = 1 << 30, script: RunLimits = .unlimited,
                effect: RunLimits = RunLimits(instructions: 1_000_000_000, seconds: 5)) {
        self.memory = memory
        self.script = script
        self.effect = effect
    }
}

/// Owns the interrupt flag a state's count hook reads. A class, so a `LuaInterrupter` held
/// by another thread keeps the flag alive even after the state is gone.
final class InterruptFlag: @unchecked Sendable {
    // Sendable: the pointee is only touched through C atomics (moon_interrupt, the hook).
    let pointer: UnsafeMutablePointer<Int32>

    init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: 0)
    }

    deinit { pointer.deallocate() }
}

/// Stops a state's running script from any thread: the count hook (and the pattern
/// matcher) raise "interrupted" at the next check. `LuaState.withRunLimits` clears it
/// when the run ends.
public struct LuaInterrupter: Sendable {
    let flag: InterruptFlag

    public func interrupt() { moon_store_flag(flag.pointer, 1) }
    public func reset() { moon_store_flag(flag.pointer, 0) }
}
