import CMoonLua
import CMoonLuaShim
import MoonreelEngine
import MoonreelInterchange
import MoonreelScriptHost

/// `av.exportSession(comp, preset)` (AVAssetExportSession).
extension API {
    func makeExportSessionClass() -> LuaClass {
        let luaClass = LuaClass("ExportSession", doc: "Exports a composition to a file with a preset.")
        luaClass.describe = { object in
            guard let e = object as? ExportSession else { return "ExportSession" }
            return "ExportSession(\(e.preset.name) → \(e.outputURL.map { "\"\($0)\"" } ?? "no outputURL"), \(e.status.rawValue))"
        }
        luaClass.property("presetName", of: ExportSession.self) { call, e in call.push(e.preset.name) }
        luaClass.property("outputURL", of: ExportSession.self, doc: "output file path",
                          get: { call, e in if let url = e.outputURL { call.push(url) } else { call.pushNil() } },
                          set: { call, e, index in e.outputURL = try call.filePath(index) })
        luaClass.property("outputFileType", of: ExportSession.self,
                          doc: "\"mov\", \"mp4\", \"m4v\", \"m4a\", \"mkv\", \"webm\", \"gif\", or \"png\", \"jpg\", \"webp\" image sequences (default: the outputURL's extension)",
                          get: { call, e in if let type = e.outputFileType { call.push(type) } else { call.pushNil() } },
                          set: { call, e, index in
                              let type = AppleNames.fileType(try call.string(index))
                              guard ExportSession.fileTypes.contains(type) else {
                                  throw call.argumentError(index, "file type must be one of \(ExportSession.fileTypes.joined(separator: ", ")), got \"\(type)\"")
                              }
                              e.outputFileType = type
                          })
        luaClass.property("videoComposition", of: ExportSession.self,
                          get: { call, e in if let v = e.videoComposition { try call.push(v) } else { call.pushNil() } },
                          set: { call, e, index in e.videoComposition = try call.optionalObject(index, VideoComposition.self) })
        luaClass.property("audioMix", of: ExportSession.self,
                          get: { call, e in if let m = e.audioMix { try call.push(m) } else { call.pushNil() } },
                          set: { call, e, index in e.audioMix = try call.optionalObject(index, AudioMix.self) })
        luaClass.property("timeRange", of: ExportSession.self, doc: "part of the composition to export (default: all); a range past its end writes the part inside, with a rangeClipped warning",
                          get: { call, e in if let r = e.timeRange { try call.push(range: r) } else { call.pushNil() } },
                          set: { call, e, index in e.timeRange = call.isNoneOrNil(index) ? nil : try call.timeRange(index) })
        luaClass.property("shouldOptimizeForNetworkUse", of: ExportSession.self, doc: "put the index (moov) first",
                          get: { call, e in call.push(e.shouldOptimizeForNetworkUse) },
                          set: { call, e, index in e.shouldOptimizeForNetworkUse = try call.boolean(index) })
        luaClass.property("smartRendering", of: ExportSession.self,
                          doc: "copy the source's GOPs the video composition leaves untouched, encode the rest (default: on for SmartCut)",
                          get: { call, e in call.push(e.smartRendering ?? e.preset.isSmartCut) },
                          set: { call, e, index in e.smartRendering = call.isNoneOrNil(index) ? nil : try call.boolean(index) })
        luaClass.property("overwrite", of: ExportSession.self, doc: "replace an existing output (only once the new file is complete)",
                          get: { call, e in call.push(e.overwrite) },
                          set: { call, e, index in e.overwrite = try call.boolean(index) })
        luaClass.property("metadata", of: ExportSession.self,
                          doc: "{title=, artist=, ...}; timecode = \"01:00:00:00\" labels the first frame (a timecode track); other keys (letters, digits, . _ - :) are written as QuickTime mdta metadata",
                          get: { call, e in call.pushRecord { for (key, value) in e.metadata { call.push(value); call.setField(key) } } },
                          set: { call, e, index in
                              guard call.type(index) == LUA_TTABLE else { throw call.typeError(index, expected: "table of strings") }
                              var tags: [String: String] = [:]
                              try call.forEachField(of: index) { key in
                                  let isName = { (c: Character) in c.isASCII && (c.isLetter || c.isNumber || "._-:".contains(c)) }
                                  guard !key.isEmpty, key.utf8.count <= 128, key.allSatisfy(isName) else {
                                      throw call.argumentError(index, "metadata keys are 1–128 letters, digits, '.', '_', '-' or ':'")
                                  }
                                  guard call.type(-1) == LUA_TSTRING || call.type(-1) == LUA_TNUMBER else {
                                      throw call.argumentError(index, "metadata.\(key) must be a string or a number, got \(call.typeName(-1))")
                                  }
                                  let value = LuaState.string(call.L, at: -1)
                                  guard !value.contains("\0"), value.utf8.count <= 65_536 else {
                                      throw call.argumentError(index, "metadata.\(key) must be text without NUL characters, at most 64 KiB")
                                  }
                                  tags[key] = value
                              }
                              e.metadata = tags
                          })
        luaClass.property("hdr", of: ExportSession.self,
                          doc: "HDR (HLG, PQ) sources: \"auto\" (default) keeps HDR with HEVC presets and tone-maps to SDR with H.264 ones, \"keep\" (10-bit HEVC, ProRes, VP9 or AV1), \"toneMap\" (docs/color-and-hdr.md)",
                          get: { call, e in call.push(e.hdr.rawValue) },
                          set: { call, e, index in e.hdr = try call.choice(index, ExportSession.HDRMode.self) })
        luaClass.property("audioSpliceFade", of: ExportSession.self, doc: "seconds of fade at each side of an audio cut against clicks (0: off)",
                          get: { call, e in call.push(e.audioSpliceFade.seconds) },
                          set: { call, e, index in
                              let seconds = try call.bounded(index, 0...0.1)
                              e.audioSpliceFade = MediaTime(seconds: seconds) ?? .zero
                          })
        addLoudnessProperties(to: luaClass)
        addWriterSettings(to: luaClass)
        luaClass.property("status", of: ExportSession.self, doc: "waiting, exporting, completed, failed or cancelled") { call, e in call.push(e.status.rawValue) }
        luaClass.property("error", of: ExportSession.self) { call, e in if let error = e.error { call.push(error.scriptMessage) } else { call.pushNil() } }
        luaClass.property("errorKind", of: ExportSession.self) { call, e in if let error = e.error { call.push(error.kind.rawValue) } else { call.pushNil() } }
        luaClass.property("progress", of: ExportSession.self, doc: "0…1") { call, e in call.push(e.progress) }
        luaClass.property("strict", of: ExportSession.self, doc: "true: any warning fails the export before its file is written (errorKind \"strict\"); --strict sets it for every export",
                          get: { call, e in call.push(e.strict) },
                          set: { call, e, index in e.strict = try call.boolean(index) })
        luaClass.property("diagnostics", of: ExportSession.self,
                          doc: "what the last export (or dry run) did other than as asked, each once: {kind=, level=\"note\"|\"warning\", message=, remedy=, dataFile=, dataLine=, time=} (docs/diagnostics.md)") { call, e in
            let api = try call.api()
            call.pushArray(e.diagnostics) { api.pushDiagnostic(call, $0) }
        }
        luaClass.method("export", of: ExportSession.self, doc: "ex:export{progress=function(fraction) end}: true, or nil and a message") { call, e in
            try call.api().export(call, e, options: 2)
        }
        luaClass.method("exportAsynchronously", of: ExportSession.self, doc: "ex:exportAsynchronously(function(session) end): exports, then calls back with the finished session (check session.status); Lua runs one thing at a time, so this returns after the callback") { call, e in
            let api = try call.api()
            guard call.type(2) == LUA_TFUNCTION else { throw call.typeError(2, expected: "completion function") }
            call.pop(call.count - 2)                              // session, callback
            _ = try api.export(call, e, options: nil)
            call.pop(call.count - 2)                              // session, callback
            call.pushValue(2)
            call.pushValue(1)
            try api.lua.call(argumentCount: 1, resultCount: 0)
            return 0
        }
        luaClass.alias("exportAsynchronouslyWithCompletionHandler", of: "exportAsynchronously")
        luaClass.method("cancel", of: ExportSession.self, doc: "ex:cancel(), e.g. from a progress callback") { call, e in
            e.cancel(); return 0
        }
        luaClass.document([
            "presetName": "the preset it was made with",
            "videoComposition": "how frames are composed (nil: each clip upright at its own size)",
            "audioMix": "volumes over time (nil: every track at its preferred volume)",
            "error": "why the export failed (one line), or nil",
            "errorKind": "what kind of failure, or nil: " + ExportError.Kind.allCases.map(\.rawValue).joined(separator: ", "),
        ])
        luaClass.example = """
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL = "out.mp4"
            session.videoComposition = vc
            local ok, err = session:export{ progress = function(fraction) end }
            if not ok then error(err, 0) end
            """
        return luaClass
    }

    /// Runs the export; `options` is the index of `{progress=}`, if the call takes one.
    /// A diagnostic as a plain table (`session.diagnostics`).
    private func pushDiagnostic(_ call: LuaCall, _ diagnostic: Diagnostic) {
        call.pushRecord {
            call.push(diagnostic.kind.rawValue); call.setField("kind")
            call.push(diagnostic.level.rawValue); call.setField("level")
            call.push(diagnostic.message); call.setField("message")
            if let remedy = diagnostic.remedy { call.push(remedy); call.setField("remedy") }
            if let origin = diagnostic.origin { call.push(origin.file); call.setField("file"); call.push(origin.line); call.setField("line") }
            if let data = diagnostic.dataLine { call.push(data.file); call.setField("dataFile"); call.push(data.line); call.setField("dataLine") }
            if let time = diagnostic.time { call.push(time); call.setField("time") }
        }
    }

    /// Passes an export's diagnostics on, each as caused by the export call's line unless it
    /// names its own (the session itself fails under `strict`, before committing).
    private func reportDiagnostics(of session: ExportSession, _ call: LuaCall) {
        let origin = LuaState.scriptLine(call.L).map { SourceLine(file: $0.file, line: $0.line) }
        for var diagnostic in session.diagnostics {
            diagnostic.origin = diagnostic.origin ?? origin
            policy.diagnostics(diagnostic)
        }
    }

    private func export(_ call: LuaCall, _ session: ExportSession, options: Int32?) throws -> Int32 {
        guard !lua.isSandboxed else { throw LuaArgumentError("\(call.functionName): effects cannot read or write files") }
        var callbackIndex: Int32? = nil
        if let options, !call.isNoneOrNil(options) {
            guard call.type(options) == LUA_TTABLE else { throw call.typeError(options, expected: "table {progress=function}") }
            try call.forEachField(of: options) { key in
                guard key == "progress" else { throw call.argumentError(options, "unknown export option \(key.quotedForMessage()) (known: progress)") }
            }
            if call.pushField(of: options, "progress") == LUA_TFUNCTION {
                callbackIndex = call.absolute(-1)
            } else if call.type(-1) != LUA_TNIL {
                throw call.argumentError(2, "progress must be a function, got \(call.typeName(-1))")
            } else {
                call.pop()
            }
        }
        if policy.overwriteOutputs { session.overwrite = true }
        if policy.strict { session.strict = true }
        if session.videoComposition?.animationTool != nil { try reportAnimationsChangedAfterCopy(call) }
        if let edit = session.composition.timeMovedBy, policy.cueListsRead > policy.cueListsRemapped, session.videoComposition?.animationTool != nil {
            try policy.report(Diagnostic(.cuesNotRemapped, .warning, "cues read with av.readCues are drawn over a composition whose time \(edit) moved, and were not carried through its map: they show at the file's times",
                                         remedy: "take the map the edit returns and draw cues:remapped(map) (docs/timed-text.md)"), at: call.L)
        }
        session.memoryLimit = session.memoryLimit ?? policy.exportMemoryLimit
        session.parentCancellation = exportCancellation
        exportsStarted += 1
        if let chunkTask = policy.chunkTask {
            session.chunkTask = ChunkTask(role: chunkTask.role, pieces: chunkTask.pieces,
                                          folder: chunkTask.folder + "/export-\(exportsStarted)", runKey: chunkTask.runKey)
        }
        if let previewExport = policy.previewExport {
            previewExport(session)
            call.push(true)
            return 1
        }
        if let timeline = policy.timelineOutput {
            let path = exportsStarted == 1 ? timeline : TimelineFile.numbered(timeline, exportsStarted)
            try call.engine {
                let name = TimelineFile.stem(of: session.outputURL ?? path)
                var (made, notes) = try Timeline.make(name: name, composition: session.composition,
                                                      videoComposition: session.videoComposition, audioMix: session.audioMix)
                // The session's own settings that change the edit: a timeline holds the whole composition as mixed.
                if let range = session.timeRange, range != TimeRange(start: .zero, duration: session.composition.duration) {
                    notes.append(Diagnostic(.notInTimeline, .warning, "the session's timeRange \(shortSeconds(range.start))–\(shortSeconds(range.end)) s is not in the timeline: it holds the whole composition (\(shortSeconds(session.composition.duration)) s)",
                                            remedy: "trim the composition itself (comp:removeTimeRange) to hand over a part"))
                }
                if let target = session.loudness {
                    notes.append(Diagnostic(.notInTimeline, .warning, "the session's loudness target (\(shortNumber(target.integrated)) LUFS) is not in the timeline: the editor gets the mix as it is"))
                }
                try TimelineFile.write(made, to: path, overwrite: policy.overwriteOutputs, readFiles: readFiles) { written in
                    for note in notes + written { try policy.report(note, at: call.L) }
                }
            }
            call.push(true)
            call.push("timeline")
            return 2
        }
        if policy.dryRun {
            do {
                let summary = try session.plan(samplingSize: policy.dryRunSamplesSize)
                reportDiagnostics(of: session, call) // what the export would say: a SmartCut's copy, a fallback
                if policy.strict, let first = session.diagnostics.first(where: { $0.level == .warning }) {
                    throw ExportError(.strict, "strict: \(first.text)")
                }
                policy.exportEvents?(.planned(session, summary))
            } catch {
                let failure = ExportError.wrapping(error, as: .invalidRequest)
                call.pushNil()
                call.pushError(failure, at: LuaState.scriptPosition(call.L))
                return 2
            }
            // Scripts that print "made out.mp4" can tell: nothing was made (see av.dryRun).
            call.push(true)
            call.push("dry run")
            return 2
        }
        var callbackError: ScriptError? = nil
        var started = false
        let startTime = ContinuousClock.now
        do {
            try session.export { progress in
                if !started {
                    started = true
                    let duration = (session.timeRange ?? TimeRange(start: .zero, duration: session.composition.duration)).duration
                    policy.exportEvents?(.started(session, progress, duration: duration.seconds))
                }
                policy.exportEvents?(.progress(session, progress))
                guard let callbackIndex else { return }
                call.pushValue(callbackIndex)
                call.push(progress.fraction)
                do {
                    try lua.call(argumentCount: 1, resultCount: 0)
                } catch let error as ScriptError {
                    callbackError = error
                    throw error
                }
            }
        } catch {
            let position = LuaState.scriptPosition(call.L)
            let failure = ExportError.wrapping(error, as: .renderFailed)
            policy.exportEvents?(.failed(session, failure, position: position))
            reportDiagnostics(of: session, call)
            if let callbackError { throw callbackError }
            // Positioned at the export call, so error(err, 0) and assert still name the line.
            call.pushNil()
            call.pushError(failure, at: position)
            return 2
        }
        let elapsed = ContinuousClock.now - startTime
        reportDiagnostics(of: session, call) // before "done": they are about this export
        policy.exportEvents?(.finished(session, seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18))
        call.push(true)
        return 1
    }

    /// `av.event{ name =, … }`: the fields must be strings, numbers or booleans; `schema`
    /// and `event` are the JSON line's own.
    private func sendEvent(_ call: LuaCall) throws -> Int32 {
        guard !lua.isSandboxed else { throw LuaArgumentError("\(call.functionName): effects cannot send events; the script that calls them can") }
        guard call.type(1) == LUA_TTABLE else { throw call.typeError(1, expected: "table {name=, …}") }
        var name: String? = nil
        var fields: [(String, ScriptEvent.Value)] = []
        try call.forEachField(of: 1) { key in
            guard !["schema", "event"].contains(key) else {
                throw call.argumentError(1, "field \(key.quotedForMessage()) is the event line's own; name yours otherwise")
            }
            guard key.count <= 100, fields.count < 100 else { throw call.argumentError(1, "an event holds at most 100 fields of names up to 100 characters") }
            switch call.type(-1) {
            case LUA_TSTRING:
                let text = try call.string(-1)
                guard text.utf8.count <= 10_000 else { throw call.argumentError(1, "field \(key.quotedForMessage()) is longer than 10000 bytes") }
                if key == "name" { name = text } else { fields.append((key, .string(text))) }
            case LUA_TNUMBER:
                fields.append((key, lua_isinteger(call.L, -1) != 0 ? .integer(Int64(lua_tointegerx(call.L, -1, nil))) : .number(try call.number(-1))))
            case LUA_TBOOLEAN:
                fields.append((key, .boolean(try call.boolean(-1))))
            default:
                throw call.argumentError(1, "field \(key.quotedForMessage()) is a \(call.typeName(-1)); event fields are strings, numbers or booleans")
            }
        }
        guard let name, !name.isEmpty else { throw call.argumentError(1, "an event needs a name: av.event{ name = \"chapter\", … }") }
        policy.scriptEvents?(ScriptEvent(name: name, fields: fields.sorted { $0.0 < $1.0 }))
        return 0
    }

    var exportFunctions: [AVFunction] {
        [("event", "av.event{name=, …}: tells the program running the script something (a JSON line {\"event\":\"script\",\"name\":…} under --progress json; nothing otherwise)", { call in
            try call.api().sendEvent(call)
        }),
        ("exportSession", "av.exportSession(compositionOrAsset, preset): presets \(ExportPreset.names.joined(separator: ", "))", { call in
            let api = try call.api()
            let source = try call.compositionOrAsset(1)
            let name = call.isNoneOrNil(2) ? "HighestQuality" : try call.string(2)
            guard let preset = ExportPreset.named(AppleNames.presetName(name)) else {
                throw call.argumentError(2, "unknown preset \(name.quotedForMessage())\(NameSuggestion.hint(for: name, among: ExportPreset.names)) (known: \(ExportPreset.names.joined(separator: ", ")))")
            }
            let session = ExportSession(composition: source, preset: preset)
            session.readFiles = api.readFiles
            try call.push(session)
            return 1
        })]
    }
}

extension Binding {
    static let exportSession = Binding(classes: [.init(ExportSession.self) { $0.makeExportSessionClass() }],
                                     functions: { $0.exportFunctions })
}
