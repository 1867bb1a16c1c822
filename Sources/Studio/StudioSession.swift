import Foundation
import MoonreelEngine
import MoonreelPlatform
import MoonreelBindings
import MoonreelScriptHost
import Synchronization

/// What the studio shows of one script: the exports its last good run would have written,
/// the effect calls it made, what it printed, and the error of the last run if it failed.
/// The script runs in a fresh host each time (`reload`), on one thread; pictures and sound
/// are rendered by the same `Compositor` exports use, at the preview size.
public final class StudioSession: Sendable {
    /// How a script is run: as `moonreel run` would, with these limits and effects.
    public struct Options: Sendable {
        /// The script's `arg` (as `moonreel run SCRIPT ARGS…` gives it).
        public var arguments: [String] = []
        /// Each run's limits (memory, time, instructions).
        public var limits = ScriptLimits()
        /// Where effects are found.
        public var effectSearchPath = EffectSearchPath()
        /// The preview pictures fit inside this box (aspect kept).
        public var previewSize = (width: 960, height: 540)
        /// Whether the Export button may replace an existing output (the CLI's --overwrite).
        public var overwriteOutputs = false
        /// Warnings are errors, in each run of the script and in the Export button's export (`--strict`).
        public var strict = false
        /// The script's own parameters as text (`--set NAME=VALUE`).
        public var parameterValues: [String: String] = [:]
        /// Where preview proxies are kept: sources larger than the preview or with keyframes
        /// far apart are copied small in the background, and previewed from the copy once it
        /// is made (nil: the sources always).
        public var proxies: ProxyCache?
        /// The effect versions a script's folder locks (its effects.lock), as `moonreel run`
        /// reads them; nil: none. Throws for a lock that cannot be read.
        public var lockedEffects: @Sendable (_ folder: String) throws -> [String: String]? = { _ in nil }
        /// The defaults: no arguments, default limits and search path, a 960×540 preview.
        public init() {}
    }

    /// What is previewed: a script file (run by `reload`), or an edit handed over with
    /// `show` (the REPL's current composition).
    public enum Source: Sendable {
        /// A Lua script, run by `reload()` and again on every save.
        case script(path: String)
        /// An edit handed over with `show(composition:videoComposition:)`; `name` titles the page.
        case edit(name: String)
    }

    /// What is previewed.
    public let source: Source
    /// How scripts run and how large the preview is.
    public let options: Options
    /// Told after each run (with the new generation), and of export progress.
    public let events = StudioEvents()

    private let state = Mutex(StudioState())
    /// Runs, renders of the current generation and overrides, one at a time each.
    private let runLock = Mutex(())
    private let overrides = Mutex<[String: [String: ScriptValue]]>([:])
    private let scriptOverrides = Mutex<[String: ScriptValue]>([:])
    private let exportRunning = Atomic<Bool>(false)
    private let proxies: StudioProxies?
    /// Pictures sent lately, so stepping and short scrubs do not render them again.
    private let frameCache: FrameCache
    /// The effects panel: what the script could require, drawn.
    let effects: StudioEffects

    /// A session showing nothing until `reload()` (a script) or `show` (an edit).
    public init(source: Source, options: Options) {
        self.source = source
        self.options = options
        // An eighth of the memory limit, at most 256 MiB: 1,600 pictures of 960×540.
        frameCache = FrameCache(budget: min(options.limits.memory / 8, 256 << 20))
        var searchPath = options.effectSearchPath
        if case .script(let path) = source { searchPath.scriptDirectory = Paths.parent(of: Paths.absolute(path)) }
        effects = StudioEffects(limits: options.limits, searchPath: searchPath)
        let events = self.events
        proxies = options.proxies.map { StudioProxies(cache: $0, events: events) }
        proxies?.onChange = { [weak self] in self?.proxiesChanged() }
    }

    deinit { proxies?.stop() }

    /// Stops making proxies (the studio stops).
    public func stop() { proxies?.stop() }

    /// The name shown in the page's title bar.
    public var title: String {
        switch source {
        case .script(let path): Paths.name(of: path)
        case .edit(let name): name
        }
    }

    /// The state as the page reads it (`GET state`).
    public func stateJSON() -> Data {
        let proxyList = proxies?.json ?? []
        return state.withLock { $0.json(title: title, exportRefusal: exportRefusal, proxies: proxyList) }
    }

    /// Why the page cannot export, when it cannot: an edit the REPL handed over may change
    /// while it would be written.
    private var exportRefusal: String? {
        guard case .edit = source else { return nil }
        return "export from the prompt (session:export()): the edit may change while it would be written"
    }

    /// The files the last run read (the script, effects, cues, images, media): what to watch.
    package var watchedFiles: [String: FileIdentity?] { state.withLock { $0.readFiles } }

    // MARK: Running the script

    /// Runs the script again in a fresh host; on success its exports become the items shown,
    /// on failure the last good items stay and the error is shown beside them.
    public func reload() {
        runLock.withLock { _ in
            let run = ScriptRun(options: options, overrides: overrides.withLock { $0 }, scriptOverrides: scriptOverrides.withLock { $0 })
            let result = run.execute(source)
            var error = result.error
            var items: [StudioItem] = []
            if error == nil {
                do {
                    // The sources' proxies are checked first: a changed source's is not used.
                    proxies?.show(result.items.flatMap(StudioItem.videoSources(of:)))
                    let files = proxies?.files ?? ProxyFiles()
                    items = try result.items.enumerated().map { index, session in
                        try StudioItem(id: index, session: session, options: options, proxies: files,
                                       proxied: proxies?.allProxied(StudioItem.videoSources(of: session)) ?? false)
                    }
                    // What each export would say of its pictures, as a render would.
                    for item in result.items { for found in try item.pictureDiagnostics() { run.diagnostics.report(found) } }
                } catch let failure {
                    error = "\(failure)".oneLine
                }
            }
            let generation = state.withLock { state -> Int in
                state.generation += 1
                state.readFiles = run.readFiles.merging(error != nil ? state.readFiles : [:]) { this, _ in this }
                state.prints = run.prints
                state.error = error
                if error == nil {
                    state.items = items
                    state.cues = run.cues
                    state.effects = run.effectCalls
                    state.scriptParameters = run.scriptParameters
                    state.diagnostics = run.diagnostics.all
                }
                return state.generation
            }
            frameCache.removeAll()
            events.onReload?()
            events.send(["type": "state", "generation": generation])
        }
    }

    /// A proxy was made or lost: the items read the proxies there are now, as a new generation
    /// (the page asks for its picture again; the frame and time stay).
    private func proxiesChanged() {
        guard let proxies else { return }
        runLock.withLock { _ in
            let files = proxies.files
            let shown = state.withLock { $0.items }
            // Made outside the state lock (each opens its sources): the page's requests go on meanwhile.
            let reading = shown.map { item in (try? item.reading(files, proxied: proxies.allProxied(item.videoSources))) ?? item }
            let generation = state.withLock { state -> Int in
                // The REPL may have shown another edit meanwhile: that one stays.
                if state.items.map(ObjectIdentifier.init) == shown.map(ObjectIdentifier.init) { state.items = reading }
                state.generation += 1
                return state.generation
            }
            frameCache.removeAll()
            events.send(["type": "state", "generation": generation])
        }
    }

    /// Shows `composition` through `videoComposition` as the one item, at once: on the
    /// caller's thread the render core freezes what it needs, so the caller may go on
    /// changing the objects (the REPL's next statement) while the page renders.
    public func show(composition: Composition, videoComposition: VideoComposition?) throws {
        let session = ExportSession(composition: composition, preset: ExportPreset.named("HighestQuality") ?? ExportPreset.all[0])
        session.videoComposition = videoComposition
        // Proxies ready now are used; one made later is, from the next edit shown.
        let sources = StudioItem.videoSources(of: session)
        proxies?.show(sources)
        let item = try StudioItem(id: 0, session: session, options: options, frozen: true, proxies: proxies?.files ?? ProxyFiles(),
                                  proxied: proxies?.allProxied(sources) ?? false)
        let generation = state.withLock { state -> Int in
            state.generation += 1
            state.items = [item]
            state.error = nil
            return state.generation
        }
        events.send(["type": "state", "generation": generation])
    }

    /// Changes one of the script's own parameters (`av.parameters`) and runs it again; nil
    /// puts back the script's own value.
    public func setScriptParameter(name: String, value: ScriptValue?) throws {
        try state.withLock { state in
            guard state.scriptParameters.contains(where: { $0.name == name }) else {
                throw StudioError("the script has no parameter \"\(name)\" the studio can change")
            }
        }
        let before = scriptOverrides.withLock { $0[name] }
        try change(name, to: value) { value in scriptOverrides.withLock { $0[name] = value } } undo: {
            scriptOverrides.withLock { $0[name] = before }
        }
    }

    /// Changes one parameter of one effect call and runs the script again; nil puts back
    /// the value the script gives.
    public func setParameter(effect id: String, name: String, value: ScriptValue?) throws {
        let (key, module) = try state.withLock { state -> (String, String) in
            guard let call = state.effects.first(where: { $0.id == id }) else { throw StudioError("no effect call \(id) in the current run") }
            guard call.parameters.contains(where: { $0.name == name }) else {
                throw StudioError("effect \"\(call.module)\" has no parameter \"\(name)\" the studio can change")
            }
            return (call.key, call.module)
        }
        let before = overrides.withLock { $0[key]?[name] }
        try change("\(module) \(name)", to: value) { value in overrides.withLock { $0[key, default: [:]][name] = value } } undo: {
            overrides.withLock { $0[key, default: [:]][name] = before }
        }
    }

    /// Puts back every value the script gives, and runs it again.
    public func resetParameters() {
        overrides.withLock { $0 = [:] }
        scriptOverrides.withLock { $0 = [:] }
        reload()
    }

    /// Sets a value and runs the script again. A value that makes a run that worked fail is
    /// taken back at once, and its failure is the error: the controls always show what the
    /// next run uses (a `position` of "Bottom" once stuck, failing every run after it).
    private func change(_ name: String, to value: ScriptValue?, set: (ScriptValue?) -> Void, undo: () -> Void) throws {
        let workedBefore = state.withLock { $0.error == nil }
        set(value)
        reload()
        guard workedBefore, let failure = state.withLock({ $0.error }) else { return }
        undo()
        reload()
        throw StudioError("\(name): \(failure) (the value was not kept)")
    }

    // MARK: Pictures and sound

    /// The JPEG (or `format`) of item `index`'s frame at `seconds`, with its number and exact start.
    /// `lane` keeps playback and scrubbing on decoders of their own, so one does not make
    /// the other seek.
    public func frame(item index: Int, at seconds: Double, lane: PreviewLane, format: StillImageFormat = .jpeg) throws -> (bytes: [UInt8], number: Int64, seconds: Double, cached: Bool) {
        let item = try self.item(index)
        guard let time = MediaTime(seconds: max(0, seconds)) else { throw StudioError("time \(seconds) s cannot be shown") }
        let (picture, cached) = try item.withCompositor(lane) { compositor in
            let key = FrameCache.Key(item: item.serial, number: compositor.frameNumber(containing: time), format: format)
            if let kept = frameCache.picture(key) { return (kept, true) }
            let rendered = try compositor.encodedFrame(containing: time, as: format, fitting: options.previewSize, jpegQuality: 2)
            let picture = FrameCache.Picture(bytes: rendered.bytes, number: rendered.number, seconds: rendered.time.seconds)
            frameCache.keep(picture, as: key)
            return (picture, false)
        }
        return (picture.bytes, picture.number, picture.seconds, cached)
    }

    /// Item `index`'s mixed sound from sample `start` on, `count` samples per channel at
    /// most, interleaved float.
    public func audio(item index: Int, startSample start: Int64, count: Int64) throws -> (samples: [Float], sampleRate: Int, channels: Int) {
        let item = try self.item(index)
        return try item.withCompositor(.audio) { compositor in
            guard compositor.hasAudio else { throw StudioError("item \(index) has no sound") }
            let rate = Int32(compositor.audioSampleRate)
            let duration = item.summary["duration"] as? Double ?? 0
            guard start >= 0, count >= 0, Double(start) / Double(rate) <= duration else {
                throw StudioError("item \(index)'s sound ends at \(duration) s; sample \(start) is past it")
            }
            let range = TimeRange(start: MediaTime(value: start, timescale: rate), duration: MediaTime(value: count, timescale: rate))
            let sound = try compositor.audio(in: range)
            let channels = sound.channels.count
            let frames = sound.channels.first?.count ?? 0
            var interleaved = [Float](repeating: 0, count: frames * channels)
            for (channel, samples) in sound.channels.enumerated() {
                for (index, sample) in samples.enumerated() { interleaved[index * channels + channel] = sample }
            }
            return (interleaved, sound.sampleRate, channels)
        }
    }

    /// Samples per second of item `index`'s sound (the page asks for sound in seconds).
    public func audioSampleRate(item index: Int) throws -> Int {
        let rate = try self.item(index).summary["sampleRate"] as? Int ?? 0
        guard rate > 0 else { throw StudioError("item \(index) has no sound") }
        return rate
    }

    private func item(_ index: Int) throws -> StudioItem {
        try state.withLock { state in
            guard state.items.indices.contains(index) else { throw StudioError("no item \(index) (the script ran \(state.items.count) exports)") }
            return state.items[index]
        }
    }

    // MARK: Exporting

    /// Runs item `index`'s real export (the normal output rules: temp file, verify, rename,
    /// never over an input, over an existing file only with --overwrite) on a thread of its
    /// own; progress goes to `events`.
    public func startExport(item index: Int) throws {
        let item = try self.item(index)
        guard case .script = source else {
            throw StudioError("export from the prompt (session:export()): the edit may change while it would be written")
        }
        guard exportRunning.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged else {
            throw StudioError("an export is already running")
        }
        let session = UncheckedBox(item.session.copy())
        let output = session.value.outputURL ?? "(no outputURL)"
        session.value.overwrite = session.value.overwrite || options.overwriteOutputs
        session.value.strict = session.value.strict || options.strict
        setExport(["state": "running", "item": index, "fraction": 0.0, "message": "exporting \(output)"])
        let thread = Thread { [self] in
            defer { exportRunning.store(false, ordering: .sequentiallyConsistent) }
            let start = ContinuousClock.now
            var lastSent = ContinuousClock.now
            do {
                try session.value.export { progress in
                    guard ContinuousClock.now - lastSent > .milliseconds(100) else { return }
                    lastSent = .now
                    setExport(["state": "running", "item": index, "fraction": progress.fraction, "message": "exporting \(output)"])
                }
                let seconds = Double((ContinuousClock.now - start).components.attoseconds) * 1e-18 + Double((ContinuousClock.now - start).components.seconds)
                setExport(["state": "finished", "item": index, "fraction": 1.0,
                           "message": String(format: "wrote %@ in %.1f s", output, seconds)])
            } catch {
                setExport(["state": "failed", "item": index, "fraction": 0.0, "message": ((error as? KindedError)?.scriptMessage ?? "\(error)").oneLine])
            }
        }
        thread.start()
    }

    private func setExport(_ export: [String: any Sendable]) {
        state.withLock { $0.export = export }
        events.send(export.merging(["type": "export"]) { $1 })
    }
}

/// Hands a value to one other thread that alone uses it from then on.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Which decoders a preview request uses.
public enum PreviewLane: Sendable, CaseIterable {
    /// Frames in order while playing.
    case playback
    /// Single frames anywhere (paused, dragging).
    case scrub
    /// Sound.
    case audio
}

/// A studio failure the page shows as one line.
public struct StudioError: Error, CustomStringConvertible, Sendable {
    /// The message, one line.
    public let description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// Where the session's changes go: the page's event sockets.
public final class StudioEvents: Sendable {
    private let listeners = Mutex<[Int: @Sendable (String) -> Void]>([:])
    private let nextID = Atomic<Int>(0)
    private let reloaded = Mutex<(@Sendable () -> Void)?>(nil)

    /// Told after each run, before the page is (the watcher follows the files it read).
    var onReload: (@Sendable () -> Void)? {
        get { reloaded.withLock { $0 } }
        set { reloaded.withLock { $0 = newValue } }
    }

    /// Adds a listener of JSON texts; returns the id to remove it with.
    public func listen(_ listener: @escaping @Sendable (String) -> Void) -> Int {
        let id = nextID.add(1, ordering: .relaxed).newValue
        listeners.withLock { $0[id] = listener }
        return id
    }

    /// Stops telling the listener `id` (what `listen` returned).
    public func remove(_ id: Int) { _ = listeners.withLock { $0.removeValue(forKey: id) } }

    func send(_ message: [String: any Sendable]) {
        guard let data = try? JSONSerialization.data(withJSONObject: message, options: [.sortedKeys]) else { return }
        let text = String(decoding: data, as: UTF8.self)
        for listener in listeners.withLock({ Array($0.values) }) { listener(text) }
    }
}
