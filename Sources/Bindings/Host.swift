import CMoonLua
import CMoonLuaShim
import MoonreelEngine
import MoonreelPlatform
import Synchronization
@_exported import MoonreelScriptHost

/// Runs user scripts in-process with Moonreel's `av` API: the way an app (a server that
/// renders lyric videos, an editor with a script console) hosts scripts.
///
/// Each host is one Lua world with its own limits; run one host per job, on any thread,
/// several at once. A host is used from one thread at a time; ``canceller`` is the one
/// part other threads may use.
///
/// ```swift
/// let host = try MoonreelHost(limits: ScriptLimits(memory: 512 << 20))
/// try host.register("notify") { (message: String) in print("script says:", message) }
/// host.onExport = { update in print(update.output, Int(update.fraction * 100), "%") }
/// try host.run(file: "lyrics.lua", arguments: ["song.mov", "lyrics.csv", "out.mp4"])
/// ```
///
/// Scripts are trusted like shell scripts (every standard library); the effects they
/// `require "effects.NAME"` run sandboxed (see `docs/effects.md`). Errors come as
/// ``ScriptError`` values naming the file and line.
public final class MoonreelHost {
    package let scripts: ScriptHost
    package let api: API
    private let callbacks = HostCallbacks()

    /// A host with `limits` that finds effects along `effectSearchPath` (then among the
    /// effects bundled with Moonreel).
    public init(limits: ScriptLimits = ScriptLimits(), effectSearchPath: EffectSearchPath = EffectSearchPath()) throws {
        FFmpegLog.capture()  // FFmpeg's messages become parts of errors, not lines on the app's stderr
        let policy = EffectPolicy(allowedGlobals: ["av": API.effectSafeNames.sorted()],
                                  modules: ["moonreel": "av"], colorChecker: GlobalFunction("av", "color"),
                                  objectTypes: ["image": ObjectType(metatables: ["moonreel.Image"], phrase: "an image (av.image(path))"),
                                                "asset": ObjectType(metatables: ["moonreel.Asset"], phrase: "an asset (av.asset(path))")])
        scripts = try ScriptHost(limits: limits, effectPolicy: policy, searchPath: effectSearchPath,
                                 bundledEffects: BundledEffects.sources)
        api = API(installingIn: scripts.lua)
        lua_getglobal(scripts.lua.L, "av")
        scripts.installScriptParameters(as: "parameters")
        moon_pop(scripts.lua.L, 1)
        api.policy.exportMemoryLimit = 2 * Int64(limits.memory)
        let readFiles = api.readFiles
        scripts.onFileRead = { readFiles.record($0) }
        // Each effect's state gets an `av` of its own; the policy shows effects the safe part.
        // Its layers come from the script's line that called the effect.
        scripts.prepareEffectState = { [api, unowned scripts] state in
            API(installingIn: state, cancellation: api.exportCancellation).scriptLine = { _ in api.scriptLine(scripts.lua.L) }
        }
        // At the script line that called the effect: the script's state is inside that call.
        scripts.onEffectReport = { [api, unowned scripts] effect, isWarning, message, remedy in
            try api.policy.report(Diagnostic(.effectAdjusted, isWarning ? .warning : .note, "effect \"\(effect)\": \(message)", remedy: remedy),
                                  at: scripts.lua.L)
        }
        try installPrint()
        let callbacks = callbacks
        api.policy.exportEvents = { event in callbacks.report(event) }
        api.policy.diagnostics = { diagnostic in callbacks.diagnostic?(diagnostic) }
    }

    package var lua: LuaState { scripts.lua }

    /// `effects install`'s trial: applies the effect at `path` once (its `example`, else its
    /// defaults; image parameters left out get a test picture, asset parameters a short test
    /// clip with a tone, made in a temporary folder removed afterwards) and, when it returns a layer,
    /// draws one small frame of it, 1 s in. Nil when it could not be applied (a parameter
    /// without a default, and no example).
    package func tryEffect(atPath path: String) throws -> (trial: ScriptHost.EffectTrial, drawn: Bool)? {
        var drawn = false
        var clipFolder: String?
        defer { if let clipFolder { Paths.removeFolder(clipFolder) } }
        let samples: [String: (LuaState) throws -> Void] = ["image": { [api] state in
            let picture = ImageBox(ImageSource(pixels: try TestPattern.picture(width: 320, height: 180), description: "the test pattern"))
            state.push(picture, as: api.classes.luaClass(of: picture))
        }, "asset": { [api] state in
            // 4 s of the test pattern with its 440 Hz tone, small: a sound to show and a length.
            let folder = try Paths.makeTemporaryFolder(prefix: "moonreel-trial")
            clipFolder = folder
            try TestPattern.write(to: folder + "/test-pattern.mp4", seconds: 4, width: 160, height: 90)
            let clip = try Asset(path: folder + "/test-pattern.mp4")
            state.push(clip, as: api.classes.luaClass(of: clip))
        }]
        let trial = try scripts.applyEffectOnce(atPath: path, samples: samples) { state in
            guard let layer = state.object(at: -1, of: api.classes[Layer.self]) as? Layer else { return }
            do {
                try LayerProof.draw(layer, at: MediaTime(value: 1, timescale: 1))
            } catch {
                throw ScriptError(kind: .runtime, message: "its layer cannot be drawn: \(error)")
            }
            drawn = true
        }
        return trial.map { ($0, drawn) }
    }

    // MARK: Running

    /// Runs the script file at `path` as the `lua` interpreter would: `arg[0]` is `path`,
    /// `arg[1...]` and `...` are `arguments`. Throws ``ScriptError``.
    /// - Returns: what the script's chunk returns (`return { files = outputs }`), as plain
    ///   values; a value that has no plain form (a function, an engine object, a table with
    ///   both array and string keys, or one holding such a value) comes back as `.nil`.
    @discardableResult
    public func run(file path: String, arguments: [String] = []) throws -> [ScriptValue] {
        try timed { try scripts.runScript(atPath: path, arguments: arguments) }
    }

    /// Runs script text as if it were the file `name` (which error messages name), and
    /// returns what it returns, as ``run(file:arguments:)`` does.
    @discardableResult
    public func run(source: String, name: String = "script", arguments: [String] = []) throws -> [ScriptValue] {
        try timed { try scripts.runScript(source: source, name: name, arguments: arguments) }
    }

    /// Whether the last run reached its time limit (``RunLimits/seconds``): Lua's own stop,
    /// or a running export cancelled at the limit (exports run no Lua, so no hook stops them).
    package var ranOutOfTime: Bool { runClock.ranOut(run: runClock.current) }

    private let runClock = RunClock()

    /// Runs `body` as one run: once the time limit has passed (a little after it, so Lua code
    /// meets its own hook first, which names the line) the run and its export are cancelled.
    private func timed<T>(_ body: () throws -> T) throws -> T {
        api.exportCancellation.reset()
        let run = runClock.start()
        defer { runClock.finish(run) }
        if let seconds = scripts.limits.script.seconds {
            let clock = runClock, canceller = canceller
            runAfter(seconds: seconds + 0.1) {
                // A timer whose run has ended does nothing (a cancel between runs would
                // stop the next run at once).
                if clock.markOutOfTime(run: run) { canceller.cancel() }
            }
        }
        return try body()
    }

    /// Stops this host's running script (at its next instruction) and its running export,
    /// from any thread; that run throws a ``ScriptError`` whose `stop` is `.interrupted`.
    public var canceller: ScriptCanceller { ScriptCanceller(script: scripts.interrupter, exports: api.exportCancellation) }

    /// Whether exports may replace existing files (never a file the run read). Off by
    /// default: an export to an existing path fails with a message saying so.
    public var overwriteOutputs: Bool {
        get { api.policy.overwriteOutputs }
        set { api.policy.overwriteOutputs = newValue }
    }

    // MARK: What scripts say

    /// Receives each line the script's `print` writes (its arguments through `tostring`,
    /// tab-separated, without the newline). Nil (the default) writes to standard output.
    public var onPrint: ((String) -> Void)? {
        get { callbacks.print }
        set { callbacks.print = newValue }
    }

    /// Told how each export the script runs goes: started, progress (a few times a
    /// second), then finished or failed. Called on the thread running the script.
    public var onExport: ((ExportUpdate) -> Void)? {
        get { callbacks.export }
        set { callbacks.export = newValue }
    }

    /// Receives each ``Diagnostic`` as it comes (each export's once): something the run did other than
    /// exactly as asked (text cut to fit, sound left out, a frame rate chosen, a preset that
    /// falls back), with its kind, level and the script line that caused it. Called on the
    /// thread running the script.
    public var onDiagnostic: ((Diagnostic) -> Void)? {
        get { callbacks.diagnostic }
        set { callbacks.diagnostic = newValue }
    }

    /// Whether a warning fails the work instead: one reported while the script runs is
    /// raised as an error at its line (kind `strict`), and an export with one fails before
    /// its output is committed. Off by default; `moonreel run --strict` turns it on.
    public var strict: Bool {
        get { api.policy.strict }
        set { api.policy.strict = newValue }
    }

    // MARK: App functions and values

    /// Makes `function` callable from scripts as the global `name`. Its parameters and
    /// result are ``ScriptConvertible`` types; a script passing something else gets a Lua
    /// error at its line (`bad argument #1 to 'notify' (string expected, got number)`), and
    /// an error `function` throws becomes a Lua error at the calling line, message
    /// included. Effects never see app functions.
    ///
    /// ```swift
    /// try host.register("slugify") { (title: String, limit: Int?) -> String in … }
    /// ```
    ///
    /// Throws ``RegistrationError`` when `name` is not a Lua identifier or is already a
    /// global (`print`, `av`).
    public func register<each Argument: ScriptConvertible, Result: ScriptConvertible>(
        _ name: String, _ function: @escaping (repeat each Argument) throws -> Result
    ) throws {
        try scripts.registerGlobal(name) { call in
            let arguments = ArgumentReader(call)
            try call.push(try function(repeat try arguments.next((each Argument).self)).scriptValue)
            return 1
        }
    }

    /// Makes `function`, which returns nothing, callable from scripts as the global `name`,
    /// as the `register` for functions with a result does.
    public func register<each Argument: ScriptConvertible>(
        _ name: String, _ function: @escaping (repeat each Argument) throws -> Void
    ) throws {
        try scripts.registerGlobal(name) { call in
            let arguments = ArgumentReader(call)
            try function(repeat try arguments.next((each Argument).self))
            return 0
        }
    }

    /// Sets the global `name` to `value` for scripts (a table for a dictionary).
    /// Throws ``RegistrationError`` when `name` is not a Lua identifier or is already a global.
    public func register(_ name: String, value: some ScriptConvertible) throws {
        try scripts.registerGlobal(name, value: value.scriptValue)
    }

    /// Sends `print` through `callbacks.print`, or to standard output when it is nil.
    private func installPrint() throws {
        let callbacks = callbacks
        try scripts.redirectPrint { line in
            if let print = callbacks.print { print(line) } else { Swift.print(line) }
        }
    }
}

/// Reads a call's arguments in order, as an app function's parameters ask for them.
private final class ArgumentReader {
    private let call: LuaCall
    private var position: Int32 = 0

    init(_ call: LuaCall) { self.call = call }

    func next<T: ScriptConvertible>(_ type: T.Type) throws -> T {
        position += 1
        return try call.argument(position, as: type)
    }
}

/// What the host's closures reach: a class of its own, so they hold no reference to the
/// host (which owns the Lua state that holds them).
private final class HostCallbacks {
    var print: ((String) -> Void)?
    var export: ((ExportUpdate) -> Void)?
    var diagnostic: ((Diagnostic) -> Void)?
    /// The running export's last progress (its frame count, for `finished`).
    private var lastProgress: ExportProgress?

    func report(_ event: ExportEvent) {
        if case .started(_, let progress, _) = event { lastProgress = progress }
        if case .progress(_, let progress) = event { lastProgress = progress }
        export?(ExportUpdate(event, lastProgress: lastProgress))
        switch event {
        case .finished, .failed: lastProgress = nil  // the next export's failure before its first frame has none
        case .started, .progress, .planned: break
        }
    }
}

/// Stops a host's running script and cancels its running export, from any thread; see
/// ``MoonreelHost/canceller``. Safe to keep and use after the host is gone (it then does
/// nothing).
public struct ScriptCanceller: Sendable {
    let script: LuaInterrupter
    let exports: CancellationFlag

    /// Stops the run: the script at its next instruction, an export at its next frame.
    /// A cancel that comes while no script runs stops the next run at once.
    public func cancel() {
        script.interrupt()
        exports.cancel()
    }
}

/// How one export a script runs is going, for ``MoonreelHost/onExport``.
public struct ExportUpdate: Sendable, Equatable {
    /// Where the export is in its life: `started` (once), `progress` (repeatedly), then
    /// `finished` or `failed`. A dry run gives `planned` only.
    public enum Phase: Sendable, Equatable {
        /// The first frame is planned; ``ExportUpdate/frameCount`` is known.
        case started
        /// More frames are written.
        case progress
        /// The file is verified and in place at ``ExportUpdate/output``.
        case finished
        /// The export failed; nothing was left at the output. The message says why.
        case failed(String)
        /// A dry run described the export without encoding.
        case planned
    }

    /// Where the export is in its life.
    public let phase: Phase
    /// The output file, as the script named it.
    public let output: String
    /// How much is written, 0...1.
    public let fraction: Double
    /// Video frames written so far.
    public let framesWritten: Int
    /// Video frames the export will write (0 before `started`, and for audio-only files).
    public let frameCount: Int

    init(_ event: ExportEvent, lastProgress: ExportProgress?) {
        output = event.session.outputURL ?? ""
        switch event {
        case .started: phase = .started
        case .progress: phase = .progress
        case .finished: phase = .finished
        case .failed(_, let error, let position): phase = .failed(position + error.description)
        case .planned: phase = .planned
        }
        let progress = phase == .planned ? nil : lastProgress
        let frames = Int(progress?.frameCount ?? 0)
        frameCount = frames
        framesWritten = phase == .finished ? frames : Int(progress?.framesWritten ?? 0)
        fraction = phase == .finished ? 1 : progress?.fraction ?? 0
    }
}

/// Numbers runs, so a time-limit timer acts only on the run that armed it, while it runs.
private final class RunClock: Sendable {
    private let state = Mutex((run: 0, running: false, outOfTime: -1))

    var current: Int { state.withLock { $0.run } }

    func start() -> Int { state.withLock { $0.run += 1; $0.running = true; return $0.run } }

    func finish(_ run: Int) { state.withLock { if $0.run == run { $0.running = false } } }

    /// Marks `run` out of time if it is still running; whether it was.
    func markOutOfTime(run: Int) -> Bool {
        state.withLock { state in
            guard state.run == run, state.running else { return false }
            state.outOfTime = run
            return true
        }
    }

    func ranOut(run: Int) -> Bool { state.withLock { $0.outOfTime == run } }
}

