import CMoonLua
import CMoonLuaShim
import MoonreelEngine
import MoonreelScriptHost

/// `av.mediaLibrary(folder)`: a folder that finished recordings are handed to, like exporting
/// to the photo library and deleting the source (docs/recording.md).
extension API {
    static let mediaLibraryOptions = ["preset", "deleteSource"]

    func makeMediaLibraryClass() -> LuaClass {
        let luaClass = LuaClass("MediaLibrary", doc: "A library folder that takes finished recordings: exported with a preset, verified, named by date, with a JSON sidecar (docs/recording.md).")
        luaClass.describe = { object in
            guard let library = object as? MediaLibrary else { return "MediaLibrary" }
            return "MediaLibrary(\(library.folder))"
        }
        luaClass.property("path", of: MediaLibrary.self, doc: "the library folder") { call, library in call.push(library.folder) }
        luaClass.property("recovered", of: MediaLibrary.self,
                          doc: "items that opening the library finished for a run that was killed during the hand-off") { call, library in
            call.pushArray(library.recovered) { call.push(libraryItem: $0) }
        }
        luaClass.property("warnings", of: MediaLibrary.self,
                          doc: "hand-offs of killed runs that opening could not finish (their files are kept and tried again next time)") { call, library in
            call.pushArray(library.warnings) { call.push($0) }
        }
        luaClass.method("add", of: MediaLibrary.self,
                        doc: "library:add(pathOrSummary, {preset=, deleteSource=}): exports the recording with the preset (default HighestQuality), verifies the copy, moves it in under a date-based name with a JSON sidecar and, with deleteSource = true, deletes the recording once both are synced; the item, or nil and a message (the recording is kept)") { call, library in
            let api = try call.api()
            let source = try api.recordingPath(call, 2)
            var presetName = "HighestQuality", deleteSource = false
            if !call.isNoneOrNil(3) {
                guard call.type(3) == LUA_TTABLE else { throw call.typeError(3, expected: "table {preset=, deleteSource=}") }
                try call.forEachField(of: 3) { key in
                    guard API.mediaLibraryOptions.contains(key) else {
                        throw call.argumentError(3, "unknown library option \(key.quotedForMessage()) (known: \(API.mediaLibraryOptions.joined(separator: ", ")))")
                    }
                }
                presetName = try call.field(3, "preset", 0) { try call.string(-1) } ?? presetName
                deleteSource = try call.field(3, "deleteSource", 0) { try call.boolean(-1) } ?? false
            }
            guard let preset = ExportPreset.named(AppleNames.presetName(presetName)) else {
                throw call.argumentError(3, "unknown preset \(presetName.quotedForMessage()) (known: \(ExportPreset.names.joined(separator: ", ")))")
            }
            // A dry run writes nothing: no export, no move, and above all no deleted source.
            if api.policy.dryRun {
                call.pushNil()
                call.push(LuaState.scriptPosition(call.L) + "library:add does nothing in a dry run (\(source.quotedForMessage()) was not handed off)")
                return 2
            }
            do {
                var found: [Diagnostic] = []
                let item = try library.add(recording: source, preset: preset, deleteSource: deleteSource, strict: api.policy.strict,
                                           diagnostics: { found.append($0) }, cancellation: api.exportCancellation)
                for diagnostic in found { try api.policy.report(diagnostic, at: call.L) }
                if api.exportCancellation.isCancelled {
                    // Past its commit point a hand-off finishes whatever comes: say what it did.
                    try api.policy.report(Diagnostic(.fileNotAsExpected, .note, "the run was interrupted after the hand-off of \(source.quotedForMessage(limit: 200)) was committed; it was finished: the movie is at \(item.path.quotedForMessage(limit: 200))"
                                                 + (item.sourceDeleted ? " and the recording was deleted" : " and the recording was kept")), at: call.L)
                }
                if let reason = item.sourceDeletionError {
                    try api.policy.report(Diagnostic(.fileNotAsExpected, .warning, "added \(item.path.quotedForMessage(limit: 200)); the source \(source.quotedForMessage(limit: 200)) could not be deleted: \(reason)"), at: call.L)
                }
                call.push(libraryItem: item)
                return 1
            } catch {
                call.pushNil()
                call.pushError(error, at: LuaState.scriptPosition(call.L))
                return 2
            }
        }
        luaClass.example = """
            local library = av.mediaLibrary("Library")
            local item = assert(library:add("take.mp4", { preset = "HighestQuality", deleteSource = true }))
            print(item.path, item.sidecar, item.duration)
            """
        return luaClass
    }

    /// A recording argument: a path, or a capture summary (its `path`).
    private func recordingPath(_ call: LuaCall, _ index: Int32) throws -> String {
        guard call.type(index) == LUA_TTABLE else { return try call.filePath(index) }
        guard call.pushField(of: index, "path") == LUA_TSTRING else {
            call.pop()
            throw call.typeError(index, expected: "path or recording summary {path=}")
        }
        defer { call.pop() }
        return try call.filePath(-1)
    }

    var mediaLibraryFunctions: [AVFunction] {
        [("mediaLibrary", "av.mediaLibrary(folder): opens (or makes) a library folder for finished recordings, finishing hand-offs a killed run left", { call in
            let folder = try call.filePath(1)
            let library = try call.engine { try MediaLibrary(folder: folder) }
            try call.push(library)
            return 1
        })]
    }
}

private extension LuaCall {
    func push(libraryItem item: LibraryItem) {
        pushRecord {
            push(item.path); setField("path")
            push(item.sidecarPath); setField("sidecar")
            push(item.sourcePath); setField("source")
            push(item.presetName); setField("preset")
            push(item.duration); setField("duration")
            push(item.recordingStarted); setField("recordingStarted")
            push(item.recordingEnded); setField("recordingEnded")
            push(item.exported); setField("exported")
            pushArray(item.streams) { push($0) }; setField("streams")
            push(item.sourceDeleted); setField("sourceDeleted")
            if let reason = item.sourceDeletionError { push(reason); setField("sourceDeletionError") }
            push(item.recovered); setField("recovered")
        }
    }
}

extension Binding {
    static let mediaLibrary = Binding(classes: [.init(MediaLibrary.self) { $0.makeMediaLibraryClass() }],
                                    functions: { $0.mediaLibraryFunctions })
}
