import CMoonLuaShim

/// An instruction budget and a wall-clock limit for one run (nil: none).
public struct RunLimits: Sendable, Equatable {
    /// Lua VM instructions (string-pattern matching steps count too).
    public var instructions: Int?
    /// Wall-clock seconds, exports included.
    public var seconds: Double?

    /// Limits of `instructions` and `seconds`; nil leaves that one unlimited.
    public init(instructions: Int? = nil, seconds: Double? = nil) {
        self.instructions = instructions
        self.seconds = seconds
    }

    /// No limit at all (user scripts, by default).
    public static let unlimited = RunLimits()
}

/// Every limit a script host enforces, as the CLI fills them from its flags.
public struct ScriptLimits: Sendable, Equatable {
    /// Bytes the user script's Lua heap and the engine objects it made may hold. A
    /// `MoonreelHost` lets each export grow the process by as much again (its pictures,
    /// render caches and encoders; `ExportSession.memoryLimit`).
    public var memory: Int
    /// The same for each effect module, which runs in a state of its own.
    public var effectMemory: Int
    /// For the user script's run. None by default: an export may rightly take an hour,
    /// and a cancel stops a runaway script.
    public var script: RunLimits
    /// For each call into an effect (loading it, calling it or a function it returned),
    /// bounded by what is left of the caller's: effects come from strangers and only build
    /// descriptions, which takes milliseconds.
    public var effect: RunLimits

    /// Limits with these values; `effectMemory` defaults to `memory`, at most 256 MiB.
    public init(memory: Int = 1 << 30, effectMemory: Int? = nil, script: RunLimits = .unlimited,
                effect: RunLimits = RunLimits(instructions: 1_000_000_000, seconds: 5)) {
        self.memory = memory
        self.effectMemory = effectMemory ?? min(memory, 256 << 20)
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
package struct LuaInterrupter: Sendable {
    let flag: InterruptFlag

    package func interrupt() { moon_store_flag(flag.pointer, 1) }
    package func reset() { moon_store_flag(flag.pointer, 0) }
}
