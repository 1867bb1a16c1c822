import Foundation
import MoonreelEngine
import MoonreelPlatform
import MoonreelBindings
import Synchronization

/// One export the script would run, as the studio previews it: its session (for the real
/// export), its outline (for the timeline) and the compositors that render it, one per lane.
final class StudioItem: @unchecked Sendable {
    let id: Int
    /// Used by one export at a time (`StudioSession.exportRunning`) and read-only otherwise.
    let session: ExportSession
    let outline: EditOutline
    let summary: [String: any Sendable]
    /// The moving pictures it shows (what preview proxies are made of).
    let videoSources: [ProxyFiles.Source]
    /// Proxies its pictures read in place of sources: then they are composed at the preview
    /// size (a 4K phone clip is not composed at 4K to be shown at 960×540).
    let proxies: ProxyFiles
    /// Its compositors were made when it was (an edit the REPL may change afterwards).
    let frozen: Bool
    /// Told apart from every other item of this process (what the frame cache keys by).
    let serial = StudioItem.serials.add(1, ordering: .relaxed).newValue
    private static let serials = Atomic<Int>(0)
    private let previewSize: (width: Int, height: Int)
    /// Each lane's compositor, made at first use; a compositor serves one thread at a time.
    private let lanes: [PreviewLane: CompositorSlot]

    /// `frozen`: every lane's compositor is made now (on the caller's thread), so nothing
    /// reads the edit's objects later; otherwise they are made at first use.
    init(id: Int, session: ExportSession, options: StudioSession.Options, frozen: Bool = false, proxies: ProxyFiles = ProxyFiles(),
         proxied: Bool = false) throws {
        self.id = id
        self.session = session
        self.frozen = frozen
        previewSize = options.previewSize
        outline = EditOutline(composition: session.composition, videoComposition: session.videoComposition, audioMix: session.audioMix)
        lanes = Dictionary(uniqueKeysWithValues: PreviewLane.allCases.map { ($0, CompositorSlot()) })
        let sources = Self.videoSources(of: session)
        videoSources = sources
        self.proxies = ProxyFiles(proxies.files.filter { sources.contains($0.key) })
        var summary: [String: any Sendable] = [
            "id": id, "output": session.outputURL ?? "", "preset": session.preset.name, "duration": outline.duration,
            "proxied": proxied && !self.proxies.files.isEmpty,
        ]
        // The picture size, rate and sound come from a compositor like those that render.
        if let probe = try? Compositor(composition: session.composition, videoComposition: session.videoComposition,
                                       audioMix: session.audioMix) {
            let frame = probe.frameDuration.seconds
            let shown = (try? Compositor.fitted(width: probe.width, height: probe.height, inside: options.previewSize)) ?? (width: 0, height: 0)
            summary.merge(["width": shown.width, "height": shown.height, "hasVideo": probe.hasVideo, "hasAudio": probe.hasAudio,
                           "frameDuration": frame, "frameRate": frame > 0 ? 1 / frame : 0,
                           "sampleRate": probe.audioSampleRate, "channels": probe.audioChannelCount]) { $1 }
            if self.proxies.files.isEmpty { _ = try? lanes[.scrub]?.use(making: { probe }) { _ in } }
        }
        let render = try? (session.videoComposition ?? VideoComposition.properties(of: session.composition)).scaledRenderSize()
        summary["renderWidth"] = Int(render?.width ?? 0)
        summary["renderHeight"] = Int(render?.height ?? 0)
        self.summary = summary
        if frozen {
            for lane in PreviewLane.allCases { try withCompositor(lane) { _ in } }
        }
    }

    /// The moving pictures an export shows, each once.
    static func videoSources(of session: ExportSession) -> [ProxyFiles.Source] {
        var sources: [ProxyFiles.Source] = []
        for track in session.composition.tracks(withMediaType: .video) {
            for case let source? in track.segments.map(\.source) where !source.isStillImage {
                let found = ProxyFiles.Source(path: source.path, streamIndex: source.streamIndex)
                if !sources.contains(found) { sources.append(found) }
            }
        }
        return sources
    }

    /// The same export reading `proxies` (its compositors made afresh); a frozen item stays as it is.
    func reading(_ proxies: ProxyFiles, proxied: Bool) throws -> StudioItem {
        guard !frozen else { return self }
        var options = StudioSession.Options()
        options.previewSize = previewSize
        return try StudioItem(id: id, session: session, options: options, proxies: proxies, proxied: proxied)
    }

    /// Runs `body` with the lane's compositor, making it first if needed.
    func withCompositor<T>(_ lane: PreviewLane, _ body: (Compositor) throws -> T) throws -> T {
        guard let slot = lanes[lane] else { throw StudioError("no \(lane) lane") }
        // At the render size, like the export, and scaled down once composed: the preview
        // shows the export's pixels, not a second rendering at another size. From proxies,
        // at twice the preview size at most: a 4K phone clip is not composed at 4K to be
        // shown at 960×540, yet colours are converted and layers drawn with the detail the
        // preview shows (at the preview size itself, 4:2:0 colour at half of it lost 4 dB
        // on the HLG iPhone fixture).
        let composedSize = (width: previewSize.width * 2, height: previewSize.height * 2)
        return try slot.use(making: {
            try Compositor(composition: session.composition, videoComposition: session.videoComposition, audioMix: session.audioMix,
                           maxSize: proxies.files.isEmpty ? nil : composedSize, proxies: proxies)
        }, body)
    }
}

/// One lane's compositor, made at first use, used by one thread at a time.
final class CompositorSlot: @unchecked Sendable {
    private let lock = NSLock()
    private var compositor: Compositor?

    func use<T>(making make: () throws -> Compositor, _ body: (Compositor) throws -> T) throws -> T {
        try lock.withLock {
            let current = try compositor ?? make()
            compositor = current
            return try body(current)
        }
    }
}

/// What the page is shown; guarded by `StudioSession.state`.
struct StudioState {
    var generation = 0
    var items: [StudioItem] = []
    var effects: [StudioEffectCall] = []
    var cues: [Cue] = []
    var prints: [String] = []
    var error: String?
    var scriptParameters: [StudioEffectCall.Parameter] = []
    /// What the run and its exports did other than asked (`Diagnostic`), each once.
    var diagnostics: [Diagnostic] = []
    /// Each file the last run read, as it was when read (nil: it was not there).
    var readFiles: [String: FileIdentity?] = [:]
    var export: [String: any Sendable] = ["state": "idle"]

    /// The diagnostics the page lists: the warnings, then the notes, each in the order
    /// reported, `PrintLog.maxLines` at most (a warning is not found at the end of a list of
    /// notes, and a run with thousands of notes still shows it).
    var shownDiagnostics: [Diagnostic] {
        Array((diagnostics.filter { $0.level == .warning } + diagnostics.filter { $0.level != .warning }).prefix(PrintLog.maxLines))
    }

    func json(title: String, exportRefusal: String?, proxies: [[String: Any]]) -> Data {
        var object: [String: Any] = [
            "proxies": proxies,
            "generation": generation, "script": title, "prints": prints, "export": export,
            "exportRefusal": exportRefusal ?? NSNull(),
            "error": error.map { ["message": $0] } ?? NSNull(),
            "effects": effects.map(\.json), "scriptParameters": scriptParameters.map(\.json),
            "diagnostics": shownDiagnostics.map { diagnostic -> [String: Any] in
                ["kind": diagnostic.kind.rawValue, "level": diagnostic.level.rawValue,
                 "message": String(diagnostic.description.prefix(PrintLog.maxLineLength)), "time": diagnostic.time ?? NSNull()]
            },
            // Counted over all of them: the page says how many the list leaves out.
            "diagnosticCounts": ["warning": diagnostics.count { $0.level == .warning }, "note": diagnostics.count { $0.level == .note }],
        ]
        let cueList = cues.prefix(EditOutline.maxLayerSpans).map { ["start": $0.start.seconds, "end": $0.end.seconds, "text": $0.text] }
        object["items"] = items.map { item -> [String: Any] in
            // The outline as its Codable form says it, with the item's summary and the cues.
            let outline = (try? JSONEncoder().encode(item.outline)).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
            return outline.merging(item.summary) { $1 }.merging(["cues": cueList]) { $1 }
        }
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
    }
}

/// One effect call of the script with the parameters the page can change.
struct StudioEffectCall: Sendable {
    struct Parameter: Sendable {
        let name, type, doc: String
        let minimum, maximum: Double?
        /// The values a string may take, shown as a list to pick from.
        let choices: [String]
        let value: ScriptValue
        let changed: Bool

        var json: [String: Any] {
            var entry: [String: Any] = ["name": name, "type": type, "doc": doc, "changed": changed, "value": StudioEffectCall.jsonValue(value)]
            if let minimum { entry["min"] = minimum }
            if let maximum { entry["max"] = maximum }
            if !choices.isEmpty { entry["choices"] = choices }
            return entry
        }
    }

    /// "e0", "e1"… in call order: what the page names it by.
    let id: String
    /// The call's place and occurrence: what overrides are kept under across runs.
    let key: String
    let module: String
    let location: String
    let parameters: [Parameter]
    /// The call as Lua, with the changed values.
    let lua: String

    static let editableTypes: Set<String> = ["number", "integer", "string", "boolean", "color"]

    init(number: Int, call: EffectCall, overrides: [String: ScriptValue]) {
        id = "e\(number)"
        key = "\(call.location)#\(call.occurrence)"
        module = call.module
        // The file's name and line: the folder is the user's own and takes the panel's width.
        let place = Paths.name(of: call.location)
        location = call.occurrence == 0 ? place : "\(place) (call \(call.occurrence + 1))"
        parameters = Self.controls(call.parameters, given: call.given, overrides: overrides)
        let given = call.given.merging(overrides) { $1 }
        let fields = given.keys.sorted().compactMap { name in given[name].map { "\(name) = \(Self.luaLiteral($0))" } }
        lua = "\(call.module){ \(fields.joined(separator: ", ")) }  -- other options as in \(place)"
    }

    /// The declared parameters the page can show a control for, with their values: changed
    /// from the page, else given by the script, else the default. A parameter with no plain
    /// value (a colour given as a table, a size computed by default) has none: the page
    /// could only show a guess.
    static func controls(_ declared: [EffectCall.Parameter], given: [String: ScriptValue], overrides: [String: ScriptValue]) -> [Parameter] {
        declared.filter { editableTypes.contains($0.type) }.compactMap { declared in
            guard var value = overrides[declared.name] ?? given[declared.name] ?? declared.defaultValue else { return nil }
            if declared.type == "color" {
                // The page's colour control speaks #rrggbb[aa]; a named colour is shown as its value.
                guard case .string(let text) = value, let color = Color(css: text) else { return nil }
                value = .string(color.hexString)
            }
            return Parameter(name: declared.name, type: declared.type, doc: declared.doc, minimum: declared.minimum,
                             maximum: declared.maximum, choices: declared.choices, value: value, changed: overrides[declared.name] != nil)
        }
    }

    var json: [String: Any] {
        ["id": id, "module": module, "location": location, "lua": lua, "parameters": parameters.map(\.json)]
    }

    static func luaLiteral(_ value: ScriptValue) -> String {
        switch value {
        case .bool(let flag): return flag ? "true" : "false"
        case .integer(let number): return "\(number)"
        case .number(let number): return number == number.rounded() && abs(number) < 1e15 ? "\(Int(number))" : "\(number)"
        case .string(let text): return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n") + "\""
        default: return "nil"
        }
    }

    static func jsonValue(_ value: ScriptValue) -> Any {
        switch value {
        case .bool(let flag): return flag
        case .integer(let number): return number
        case .number(let number): return number.isFinite ? number : 0
        case .string(let text): return text
        default: return NSNull()
        }
    }
}

/// One run of the script in a fresh host that writes no file: each export becomes an item.
final class ScriptRun {
    let options: StudioSession.Options
    let overrides: [String: [String: ScriptValue]]
    /// The page's values for the script's own parameters (`av.parameters`).
    let scriptOverrides: [String: ScriptValue]
    private(set) var scriptParameters: [StudioEffectCall.Parameter] = []
    private var printed = PrintLog()
    /// What the run printed, as the page shows it.
    var prints: [String] { printed.shown }
    /// What the run reported (`Diagnostic`), each once.
    let diagnostics = DiagnosticLog()
    private(set) var cues: [Cue] = []
    private(set) var effectCalls: [StudioEffectCall] = []
    /// Each file the run read, as it was when read: a change the run made itself before
    /// reading (a script that writes the cues it then reads) is not a change to run again for.
    private(set) var readFiles: [String: FileIdentity?] = [:]

    /// At most this many effect calls get controls (a loop over 500 cues calling an effect
    /// each time would make a panel nobody can use).
    static let maxEffectCalls = 50

    init(options: StudioSession.Options, overrides: [String: [String: ScriptValue]], scriptOverrides: [String: ScriptValue]) {
        self.options = options
        self.overrides = overrides
        self.scriptOverrides = scriptOverrides
    }

    func execute(_ source: StudioSession.Source) -> (items: [ExportSession], error: String?) {
        switch source {
        case .edit:
            return ([], nil)
        case .script(let path):
            return runScript(path)
        }
    }

    private func runScript(_ path: String) -> (items: [ExportSession], error: String?) {
        var sessions: [ExportSession] = []
        let host: MoonreelHost
        do {
            host = try MoonreelHost(limits: options.limits, effectSearchPath: options.effectSearchPath)
        } catch {
            return ([], "\(error)".oneLine)
        }
        let script = FileIdentity(path: path)
        defer { readFiles = host.api.readFiles.statesWhenRead.mapValues { $0 }.merging([path: script]) { read, _ in read } }
        host.strict = options.strict
        host.scripts.parameterValues = options.parameterValues
        host.scripts.lockedEffects = options.lockedEffects
        host.scripts.parameterOverrides = scriptOverrides
        defer {
            let declared = host.scripts.declaredParameters ?? []
            let given = Dictionary(uniqueKeysWithValues: declared.compactMap { parameter in
                options.parameterValues[parameter.name].map { (parameter.name, ScriptHost.typed($0, as: parameter.type)) }
            })
            scriptParameters = StudioEffectCall.controls(declared, given: given, overrides: scriptOverrides)
        }
        host.api.policy.previewExport = { sessions.append($0) }
        host.api.policy.cuesRead = { [unowned self] in cues += $0 }
        // Cues carried through an edit's time map are drawn where they moved: they take the
        // place of their file's cues on the lane.
        host.api.policy.cuesRemapped = { [unowned self] moved in
            let files = Set(moved.compactMap { $0.source?.file })
            cues = cues.filter { cue in cue.source.map { !files.contains($0.file) } ?? true } + moved
        }
        host.onPrint = { [unowned self] line in printed.append(line) }
        host.onDiagnostic = { [unowned self] diagnostic in diagnostics.report(diagnostic) }
        host.scripts.onEffectCall = { [unowned self] call in
            let changes = overrides["\(call.location)#\(call.occurrence)"] ?? [:]
            if effectCalls.count < Self.maxEffectCalls {
                effectCalls.append(StudioEffectCall(number: effectCalls.count, call: call, overrides: changes))
            }
            return changes
        }
        do {
            try host.run(file: path, arguments: options.arguments)
        } catch let error as ScriptError {
            return ([], error.message.oneLine)
        } catch {
            return ([], "\(error)".oneLine)
        }
        return (sessions, nil)
    }
}

/// What a run printed, as the page shows it: the first `maxLines` lines, each cut at
/// `maxLineLength` characters, and a last line counting what was left out. A script printing
/// 200 lines of 2 MiB made the studio hold half a gigabyte and send it at every refresh.
struct PrintLog {
    static let maxLines = 200
    static let maxLineLength = 2000

    private var lines: [String] = []
    private var dropped = 0

    mutating func append(_ line: String) {
        guard lines.count < Self.maxLines else {
            dropped += 1
            return
        }
        let head = line.prefix(Self.maxLineLength + 1)
        lines.append(head.count > Self.maxLineLength
                     ? String(head.prefix(Self.maxLineLength)) + "… (\(line.utf8.count - head.prefix(Self.maxLineLength).utf8.count) more bytes)" : line)
    }

    var shown: [String] { dropped == 0 ? lines : lines + ["… \(dropped) more line\(dropped == 1 ? "" : "s") dropped"] }
}
