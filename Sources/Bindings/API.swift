import CMoonLua
import CMoonLuaShim
import MoonreelEngine
import MoonreelScriptHost
import MoonreelPlatform

/// The `av` API of one Lua state: every Lua-visible class and the `av` table. Each binding
/// file (`…Binding.swift`) declares its part as a `Binding` value (its classes with the Swift
/// type of their objects, its `av` functions); `API.bindings` lists them all, and classes are
/// found by their objects' type (`classes[Asset.self]`, `call.push(asset)`). How exports run
/// and whom they tell is the host's `RunPolicy`.
package final class API {
    unowned let lua: LuaState
    /// How this host runs exports and whom it tells: set by the host (CLI flags, the
    /// studio, the REPL, an embedder), read by the bindings.
    package var policy = RunPolicy()
    /// Every file the run has read (media, images, cue and CSV files, and what the host
    /// adds: the script, effects); no output may replace one of them.
    package let readFiles = InputRegistry()
    /// Cancels every export of this host from now on (Ctrl-C in `moonreel run`); the REPL
    /// cancels single statements' exports itself instead. Effects' states share the script's,
    /// so a run's cancel or time limit also stops their long calls (measuring a sound).
    package let exportCancellation: CancellationFlag
    /// How many exports the script has started (names each one's chunk folder).
    var exportsStarted = 0
    /// The proxies `av.makeProxy` handed out: the cache's limit never removes them in this run.
    var proxiesUsed: Set<String> = []
    /// Animations changed after a layer took a copy of them (`reportAnimationsChangedAfterCopy`);
    /// held, so no other object takes one's identifier.
    var changedAnimations: [ObjectIdentifier: AnimationBox] = [:]
    /// The script line a layer made now comes from: the running line of this state (`L`); in
    /// an effect's state, the host makes it the script's line that called the effect.
    package var scriptLine: (_ L: OpaquePointer?) -> SourceLine? = { L in
        L.flatMap { LuaState.scriptLine($0) }.map { SourceLine(file: $0.file, line: $0.line) }
    }

    /// Every class of this state, found by the Swift type of its objects.
    package internal(set) var classes = LuaClassTable()
    /// The class of each filter kind (all share `FilterBox` objects).
    var filterKinds: [FilterKind: LuaClass] = [:]
    /// The `av` functions, in the order of `API.bindings`.
    private(set) var avFunctions: [AVFunction] = []
    /// Asset tracks seen by insertTimeRange, so `track.segments` can name them.
    var rememberedTracks: [SourceKey: AssetTrack] = [:]
    /// Text laid out for measuring (`preferredFrameSize`), made once: a Pango font map per
    /// call cost more than the measuring. The API lives on its state's one thread.
    lazy var textLayout: TextLayout? = try? TextLayout()
    func remember(_ track: AssetTrack) { rememberedTracks[SourceKey(track)] = track }

    /// What of `av` an untrusted effect script may use: functions that build values and
    /// layers but open no files and write nothing, and the constants ported code names
    /// (`AVCoreAnimationBeginTimeAtZero`).
    package static let effectSafeNames: Set<String> = [
        "time", "range", "rangeFromTo", "transform", "videoCompositionInstruction", "layerInstruction",
        "audioMixInputParameters", "audioMix", "layer", "textLayer", "keyframeAnimation", "basicAnimation",
        "animationTool", "color", "filter", "image", "audioWaveformLayer", "audioSpectrumLayer",
        "version", "zero", "kCMTimeZero", "beginTimeAtZero", "AVCoreAnimationBeginTimeAtZero",
    ]

    /// Creates every class and leaves the `av` table as global `av` (and `package.loaded.moonreel`);
    /// the state keeps the API alive.
    package init(installingIn lua: LuaState, cancellation: CancellationFlag = CancellationFlag()) {
        self.lua = lua
        exportCancellation = cancellation
        for binding in API.bindings {
            for declared in binding.classes { classes.add(declared.make(self), for: declared.objects) }
        }
        for binding in API.bindings { binding.completeClasses?(self) }
        for luaClass in classes.all { lua.register(luaClass) }
        for binding in API.bindings { binding.install?(self) }
        avFunctions = API.bindings.flatMap { $0.functions(self) }
        installAVTable()
        // Every binding finds this API from its call (`call.api()`), and it lives as long as
        // the state (which it reaches unowned), whatever the embedder keeps.
        lua.setContext(self)
    }

    /// Every binding, in dependency order (a parent class before its children): a new type
    /// is its binding file and one entry here.
    static let bindings: [Binding] = [
        .time, .transform, .asset, .composition, .videoComposition, .audioMix, .exportSession, .imageGenerator,
        .layer, .animation, .cues, .filter, .editHelpers, .capture, .mediaLibrary, .analysis, .proxy, .timeline,
    ]

    private func installAVTable() {
        let L = lua.L
        lua_createtable(L, 0, Int32(avFunctions.count))
        for (name, _, body) in avFunctions {
            lua.setFunction(name, body)
        }
        lua_pushstring(L, moonreelVersion)
        lua_setfield(L, -2, "version")
        for binding in API.bindings { binding.addToAV?(self) }
        // A near miss (`av.exportsession`) says what was meant; other absent names are nil.
        let names = avFunctions.map(\.name)
        lua_createtable(L, 0, 1)
        lua.setFunction("__index", qualifiedName: "av") { call in
            let api = try call.api()
            // `av.dryRun`: whether exports only check and describe (the host sets it after
            // installing this table, so it is read when asked).
            if call.type(2) == LUA_TSTRING, try call.string(2) == "dryRun" {
                call.push(api.policy.dryRun)
                return 1
            }
            guard call.type(2) == LUA_TSTRING, let near = NameSuggestion.closest(to: try call.string(2), among: names) else {
                call.pushNil()
                return 1
            }
            throw LuaArgumentError("av has no function '\(try call.string(2).prefix(60))'; did you mean av.\(near)?")
        }
        lua_setmetatable(L, -2)
        lua_pushvalue(L, -1)
        lua_setglobal(L, "av")
        // require "moonreel" returns the same table.
        lua_getglobal(L, "package")
        if lua_type(L, -1) == LUA_TTABLE {
            lua_getfield(L, -1, "loaded")
            lua_pushvalue(L, -3)
            lua_setfield(L, -2, "moonreel")
            moon_pop(L, 2)
        } else {
            moon_pop(L, 1)
        }
        moon_pop(L, 1)
    }

    /// Examples of `av` functions for the reference, by name (most functions' classes carry theirs).
    package var functionExamples: [String: String] { editHelperExamples }

    /// Help text for `help()`: the function or class and its one-line description.
    package var functionHelp: [(name: String, doc: String)] {
        avFunctions.map { ("av.\($0.name)", $0.doc) } + [("av.parameters", API.parametersHelp)]
    }

    /// `av.parameters` is Lua (the effect host's parameter checks; MoonreelHost installs it).
    static let parametersHelp = "av.parameters{ { name=, type=, default=, min=, max=, required=, doc= }, … }: the script's own parameters, declared and checked as an effect's (number, integer, string, boolean, color); returns their values, filled from --set NAME=VALUE (moonreel run, studio) or the defaults (docs/scripting.md)"
}

extension LuaCall {
    /// The `av` API of the state this call runs in: how a binding reaches the classes, the
    /// host's policy and what the run has read, without capturing the API.
    func api() throws -> API { try context(API.self) }

    /// Pushes `object` as its class (the one of its type, or its nearest ancestor's).
    func push(_ object: AnyObject) throws { push(object, as: try api().classes.luaClass(of: object)) }
}

/// An `av` function: its name, one line of help and its body.
typealias AVFunction = (name: String, doc: String, body: LuaFunction)

/// One binding file's part of the `av` API, as a value: the classes it defines, its `av`
/// functions, and what it adds once the classes exist. `API.bindings` lists them all.
struct Binding: Sendable {
    /// A class and the Swift type of its objects (found by that type: `api.classes[Asset.self]`).
    struct Class: Sendable {
        let objects: AnyObject.Type
        let make: @Sendable (API) -> LuaClass
        init(_ objects: AnyObject.Type, _ make: @escaping @Sendable (API) -> LuaClass) {
            self.objects = objects
            self.make = make
        }
    }

    /// Its classes, a parent before its children.
    var classes: [Class] = []
    /// Its `av` functions.
    var functions: @Sendable (API) -> [AVFunction] = { _ in [] }
    /// Runs once every binding's classes are made, before they are registered: classes
    /// with no type of their own, properties added to another binding's classes.
    var completeClasses: (@Sendable (API) -> Void)?
    /// Runs once the classes are registered in the state: metatables of plain values.
    var install: (@Sendable (API) -> Void)?
    /// Sets fields of the `av` table (on top of the stack): constants.
    var addToAV: (@Sendable (API) -> Void)?
}

/// How a host runs its scripts' exports and what it is told: a value the host owns and sets
/// (the CLI from its flags, the studio, the REPL, an embedder), read by every export.
package struct RunPolicy {
    /// Every export may replace its output (the CLI's --overwrite).
    package var overwriteOutputs = false
    /// Bounds each export's working memory: as much again as the script's memory limit
    /// (the limit is one allowance for the script's heap and objects, one for an export's
    /// pictures and encoders); nil: none.
    package var exportMemoryLimit: Int64?
    /// Exports are checked and described (a `planned` event) but nothing is encoded;
    /// `export()` then returns true (the CLI's --dry-run).
    package var dryRun = false
    /// When set, each export writes its timeline to this path (the second to "NAME-2.otio",
    /// and so on) instead of rendering, and returns true, "timeline" (the CLI's --timeline).
    package var timelineOutput: String?
    /// With `dryRun`: constant-quality sizes are measured on a sample of the pictures
    /// (`ExportSession.plan(samplingSize:)`) instead of guessed from the settings alone.
    package var dryRunSamplesSize = true
    /// This process's task in a chunked render (`moonreel run --chunks`): each export of the
    /// script is split alike (its pieces in `folder/export-K`, K counting exports).
    package var chunkTask: ChunkTask?
    /// Where `av.analyze` keeps what it found (the user's cache folder unless the host sets
    /// another; nil: nowhere, every run analyses afresh).
    package var analysisCache: AnalysisCache? = .standard
    /// Where `av.makeProxy` keeps the studio's preview proxies (the user's cache folder, for
    /// the default 960×540 preview).
    package var proxyCache: ProxyCache? = .standard()
    /// Told how each export goes: started, progress, finished or failed (the CLI draws its
    /// bar and writes its JSON lines from these).
    package var exportEvents: ((ExportEvent) -> Void)?
    /// Set by a previewing host (the studio): each export the script runs is handed over
    /// here instead of writing its file, and `export()` returns true.
    package var previewExport: ((ExportSession) -> Void)?
    /// Told each `av.event{…}` the script sends (the CLI writes them as JSON lines).
    package var scriptEvents: ((ScriptEvent) -> Void)?
    /// Told the cues of each `av.readCues` (the studio draws them on its timeline).
    package var cuesRead: (([Cue]) -> Void)?
    /// Told the cues of each `cues:remapped(map)`, where they now are (the studio's cue lane
    /// shows them there, in place of the same file's cues at their file times).
    package var cuesRemapped: (([Cue]) -> Void)?
    /// Cue lists `av.readCues` gave and `cues:remapped(map)` carried through a time map, for
    /// the `cuesNotRemapped` check at export.
    package var cueListsRead = 0, cueListsRemapped = 0
    /// Told each diagnostic as it comes: something a binding or an export did other than
    /// exactly as asked (see `report(_:at:)`).
    package var diagnostics: (Diagnostic) -> Void = { _ in }
    /// Warnings are errors: one a binding reports is raised at the script line that caused
    /// it, and an export with one fails before its output is committed (`--strict`).
    package var strict = false

    /// Passes `diagnostic` on as caused by the script line running in `L` (unless it names
    /// its own origin); under `strict`, a warning is raised there as an error instead.
    package func report(_ diagnostic: Diagnostic, at L: OpaquePointer?) throws {
        var diagnostic = diagnostic
        if diagnostic.origin == nil, let L, let (file, line) = LuaState.scriptLine(L) { diagnostic.origin = SourceLine(file: file, line: line) }
        diagnostics(diagnostic)
        if strict, diagnostic.level == .warning { throw EngineError("strict: \(diagnostic.text)", kind: .strict) }
    }

    package init() {}
}

package let moonreelVersion = "0.1.0"

/// What happens to one export run by a script, in order: `started` (once the first frame is
/// planned), `progress` (repeatedly), then `finished` or `failed`. A failure before the
/// first frame has no `started`.
/// What a script tells the program running it (`av.event{ name = "row", id = 3 }`): a name
/// and plain values, for `--progress json` readers.
package struct ScriptEvent {
    package enum Value {
        case string(String)
        case integer(Int64)
        case number(Double)
        case boolean(Bool)
    }
    package let name: String
    /// By field name, sorted.
    package let fields: [(String, Value)]
}

package enum ExportEvent {
    case started(ExportSession, ExportProgress, duration: Double)
    case progress(ExportSession, ExportProgress)
    case finished(ExportSession, seconds: Double)
    /// `position` is "script.lua:12: " of the export call, or "".
    case failed(ExportSession, ExportError, position: String)
    /// A dry run: what the export would write.
    case planned(ExportSession, ExportSummary)

    package var session: ExportSession {
        switch self {
        case .started(let session, _, _), .progress(let session, _), .finished(let session, _), .failed(let session, _, _),
             .planned(let session, _): session
        }
    }
}

extension LuaClass {
    /// A property whose getter and setter receive the Swift object already typed.
    func property<T: AnyObject>(_ name: String, of type: T.Type, doc: String = "",
                                get: @escaping (LuaCall, T) throws -> Void,
                                set: ((LuaCall, T, Int32) throws -> Void)? = nil) {
        property(name, doc: doc, get: { call, object in
            guard let typed = object as? T else { throw LuaArgumentError("\(name): wrong object type") }
            try get(call, typed)
        }, set: set.map { setter in
            { call, object, index in
                guard let typed = object as? T else { throw LuaArgumentError("\(name): wrong object type") }
                try setter(call, typed, index)
            }
        })
    }

    /// A method whose body receives `self` already typed (argument 1).
    func method<T: AnyObject>(_ name: String, of type: T.Type, readOnly: Bool = false, doc: String = "",
                              _ body: @escaping (LuaCall, T) throws -> Int32) {
        // The class, not the API: each method checks its `self` against its own class.
        method(name, doc: doc, readOnly: readOnly) { [unowned self] call in
            let object: T = try call.object(1, self)
            return try body(call, object)
        }
    }
}
