import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// `av.composition()` and its tracks (AVMutableComposition, AVMutableCompositionTrack).
extension API {
    func makeCompositionClass() -> LuaClass {
        let luaClass = LuaClass("Composition", doc: "Tracks of segments cut from assets; usable like an asset.")
        luaClass.describe = { object in
            guard let c = object as? Composition else { return "Composition" }
            let size = c.uprightVideoSize
            let sizeText = size == .zero ? "" : ", \(size)"
            let count = c.tracks.count
            return "Composition(\(count) track\(count == 1 ? "" : "s"), \(String(format3: c.duration.seconds)) s\(sizeText))"
        }
        luaClass.property("duration", of: Composition.self) { [unowned self] call, c in push(call, seconds: c.duration) }
        luaClass.property("durationTime", of: Composition.self) { [unowned self] call, c in push(call, exact: c.duration) }
        luaClass.property("tracks", of: Composition.self) { [unowned self] call, c in
            call.pushArray(c.tracks) { push(call, $0) }
        }
        luaClass.property("naturalSize", of: Composition.self, doc: "as AVMutableComposition's: the size set, else the first video track's stored (unturned) size; av.videoComposition(comp) gives the upright render size",
                          get: { [unowned self] call, c in push(call, size: c.naturalSize) },
                          set: { [unowned self] call, c, index in c.naturalSize = try size(call, index) })
        luaClass.method("addMutableTrack", of: Composition.self, doc: "comp:addMutableTrack(\"video\" | \"audio\" [, trackID])") { [unowned self] call, c in
            let type = try mediaType(call, 2)
            let id = call.isNoneOrNil(3) ? nil : try call.integer(3)
            if let id, id < 0 || id > Int(Int32.max) {
                throw call.argumentError(3, "track ID must be 1…2147483647, or 0 for a new one (kCMPersistentTrackID_Invalid), got \(id)")
            }
            push(call, try engine(call) { try c.addMutableTrack(mediaType: type, preferredTrackID: id) })
            return 1
        }
        luaClass.alias("addMutableTrackWithMediaType", of: "addMutableTrack")
        luaClass.method("insertTimeRange", of: Composition.self, doc: "comp:insertTimeRange(range, asset, at): every track of the asset") { [unowned self] call, c in
            let r = try timeRange(call, 2)
            let source: Asset = try call.object(3, classes[Asset.self])
            let at = try time(call, 4, allowNegative: false)
            try engine(call) { try c.insertTimeRange(r, of: source, at: at) }
            for track in source.tracks { remember(track) }
            return 0
        }
        luaClass.method("removeTimeRange", of: Composition.self, doc: "comp:removeTimeRange(range)") { [unowned self] call, c in
            let r = try timeRange(call, 2)
            try engine(call) { try c.removeTimeRange(r) }
            return 0
        }
        luaClass.method("removeSilences", of: Composition.self, doc: "comp:removeSilences(ranges [, {margin=0.1}]) → removed, map: cuts each range (e.g. a:silences{…} of its sound), less `margin` seconds at each side that touches sound, out of every track, picture and sound together; returns the ranges removed (times before the cut) and a TimeMap to carry cues through (cues:remapped(map)). Build the video composition after (docs/analysis.md)") { [unowned self] call, c in
            let silences = try list(call, 2, limit: 1_000_000) { try timeRange(call, $0) }
            var margin = MediaTime(value: 1, timescale: 10)
            try options(call, 3, ["margin": { margin = try self.time(call, $0, allowNegative: false) }])
            let before = c.duration
            let removed = try engine(call) { try c.removeSilences(silences, margin: margin) }
            if removed.isEmpty {
                let why = silences.isEmpty ? "it was given no ranges" : "none of the \(silences.count) ranges given is longer than twice the margin (\(format(margin.seconds)) s) inside the composition"
                try policy.report(Diagnostic(.nothingRemoved, .warning, "removeSilences removed nothing: \(why); the composition is unchanged",
                                             remedy: "check the silences (a:silences{…} finds them from the recording's own levels) or a smaller margin"), at: call.L)
            }
            if !removed.isEmpty { c.timeMovedBy = "removeSilences" }
            call.pushArray(removed) { push(call, range: $0) }
            push(call, TimeMapBox(TimeMap.removing(removed, from: before)))
            return 2
        }
        luaClass.method("insertEmptyTimeRange", of: Composition.self, doc: "comp:insertEmptyTimeRange(range)") { [unowned self] call, c in
            let r = try timeRange(call, 2)
            try engine(call) { try c.insertEmptyTimeRange(r) }
            return 0
        }
        luaClass.method("scaleTimeRange", of: Composition.self, doc: "comp:scaleTimeRange(range, newDuration) → map: a TimeMap to carry cues through (cues:remapped(map))") { [unowned self] call, c in
            let r = try timeRange(call, 2)
            let d = try duration(call, 3)
            let before = c.duration
            try engine(call) { try c.scaleTimeRange(r, toDuration: d) }
            if d != r.duration { c.timeMovedBy = "scaleTimeRange" }
            push(call, TimeMapBox(TimeMap.scaling(r, to: d, in: before)))
            return 1
        }
        luaClass.method("mutableTrackCompatibleWithTrack", of: Composition.self, readOnly: true, doc: "comp:mutableTrackCompatibleWithTrack(assetTrack) or nil") { [unowned self] call, c in
            let track: AssetTrack = try call.object(2, classes[AssetTrack.self])
            if let found = c.mutableTrackCompatible(with: track) { push(call, found) } else { call.pushNil() }
            return 1
        }
        luaClass.method("tracksWithMediaType", of: Composition.self, readOnly: true, doc: "comp:tracksWithMediaType(\"video\")") { [unowned self] call, c in
            let type = try mediaType(call, 2)
            call.pushArray(c.tracks(withMediaType: type)) { push(call, $0) }
            return 1
        }
        luaClass.method("trackWithTrackID", of: Composition.self, readOnly: true, doc: "comp:trackWithTrackID(id) or nil") { [unowned self] call, c in
            if let track = c.track(withID: try call.integer(2)) { push(call, track) } else { call.pushNil() }
            return 1
        }
        luaClass.document([
            "duration": "seconds: the end of its longest track",
            "durationTime": "the exact duration",
            "tracks": "every composition track",
        ])
        luaClass.example = """
            local comp = av.composition()
            local clip = av.asset("clip.mov")
            comp:insertTimeRange(av.range(0, clip.duration), clip, 0)        -- every track of the clip
            comp:insertTimeRange(av.range(2, 3), av.asset("b.mov"), comp.duration)  -- 3 s of another after it
            """
        return luaClass
    }

    func makeCompositionTrackClass() -> LuaClass {
        let luaClass = LuaClass("CompositionTrack", doc: "A track of a composition: segments mapping source ranges to composition ranges.")
        luaClass.describe = { object in
            guard let t = object as? CompositionTrack else { return "CompositionTrack" }
            return "CompositionTrack(#\(t.trackID) \(t.mediaType.rawValue), \(t.segments.count) segment\(t.segments.count == 1 ? "" : "s"), \(String(format3: t.duration.seconds)) s)"
        }
        luaClass.property("trackID", of: CompositionTrack.self) { call, t in call.push(t.trackID) }
        luaClass.property("mediaType", of: CompositionTrack.self) { call, t in call.push(t.mediaType.rawValue) }
        luaClass.property("timeRange", of: CompositionTrack.self) { [unowned self] call, t in push(call, range: t.timeRange) }
        luaClass.property("naturalSize", of: CompositionTrack.self) { [unowned self] call, t in push(call, size: t.naturalSize) }
        luaClass.property("preferredTransform", of: CompositionTrack.self,
                          get: { [unowned self] call, t in push(call, transform: t.preferredTransform) },
                          set: { [unowned self] call, t, index in t.preferredTransform = try affineTransform(call, index) })
        luaClass.property("preferredVolume", of: CompositionTrack.self,
                          get: { call, t in call.push(t.preferredVolume) },
                          set: { [unowned self] call, t, index in
                              let volume = try finite(call, index)
                              guard (0...16).contains(volume) else { throw call.argumentError(index, "volume must be in 0…16, got \(format(volume))") }
                              t.preferredVolume = volume
                          })
        luaClass.property("segments", of: CompositionTrack.self, doc: "{ {track=, sourceRange=, targetRange=, empty=}, ... }") { [unowned self] call, t in
            call.pushArray(t.segments) { segment in
                call.pushRecord {
                    if let source = segment.source, let track = rememberedTracks[SourceKey(source)] {
                        push(call, track); call.setField("track")
                    }
                    push(call, range: segment.sourceRange); call.setField("sourceRange")
                    push(call, range: segment.targetRange); call.setField("targetRange")
                    call.push(segment.isEmpty); call.setField("empty")
                }
            }
        }
        luaClass.method("insertTimeRange", of: CompositionTrack.self, doc: "track:insertTimeRange(range, assetTrack, at)") { [unowned self] call, t in
            let r = try timeRange(call, 2)
            let source: AssetTrack = try call.object(3, classes[AssetTrack.self])
            let at = try time(call, 4, allowNegative: false)
            try engine(call) { try t.insertTimeRange(r, of: source, at: at) }
            remember(source)
            return 0
        }
        luaClass.method("setPreferredTransform", of: CompositionTrack.self, doc: "track:setPreferredTransform(t), as track.preferredTransform = t") { [unowned self] call, t in
            t.preferredTransform = try affineTransform(call, 2)
            return 0
        }
        luaClass.method("insertEmptyTimeRange", of: CompositionTrack.self, doc: "track:insertEmptyTimeRange(range)") { [unowned self] call, t in
            let r = try timeRange(call, 2)
            try engine(call) { try t.insertEmptyTimeRange(r) }
            return 0
        }
        luaClass.method("removeTimeRange", of: CompositionTrack.self, doc: "track:removeTimeRange(range)") { [unowned self] call, t in
            let r = try timeRange(call, 2)
            try engine(call) { try t.removeTimeRange(r) }
            return 0
        }
        luaClass.method("scaleTimeRange", of: CompositionTrack.self, doc: "track:scaleTimeRange(range, newDuration)") { [unowned self] call, t in
            let r = try timeRange(call, 2)
            let d = try duration(call, 3)
            try engine(call) { try t.scaleTimeRange(r, toDuration: d) }
            return 0
        }
        luaClass.document([
            "trackID": "the track's ID in the composition (layer instructions and mix parameters name it)",
            "mediaType": "\"video\" or \"audio\"",
            "timeRange": "0 to the end of its last segment",
            "naturalSize": "stored size of its first media (before any preferred transform)",
            "preferredTransform": "applied by av.videoComposition(comp); identity unless set",
            "preferredVolume": "0…16, the volume when no audio mix says otherwise",
        ])
        luaClass.example = """
            local v = comp:addMutableTrack("video")
            v:insertTimeRange(av.range(0, asset.duration), asset:tracksWithMediaType("video")[1], 0)
            v:scaleTimeRange(av.range(1, 1), 2)      -- the second second plays in slow motion
            """
        return luaClass
    }

    /// A composition, or an asset taken whole as a composition (AVFoundation accepts any
    /// AVAsset where a composition is expected).
    func compositionOrAsset(_ call: LuaCall, _ index: Int32) throws -> Composition {
        if let comp: Composition = try? call.object(index, classes[Composition.self]) { return comp }
        guard let file: Asset = try? call.object(index, classes[Asset.self]) else { throw call.typeError(index, expected: "Composition or Asset") }
        let whole = Composition()
        try engine(call) { try whole.insertTimeRange(TimeRange(start: .zero, duration: file.duration), of: file, at: .zero) }
        return whole
    }

    /// Runs an engine call, turning its errors into Lua errors that name the function.
    @discardableResult
    func engine<T>(_ call: LuaCall, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as EngineError {
            throw LuaArgumentError("\(call.functionName): \(error.scriptMessage)", kind: error.kind.rawValue, subject: error.subject)
        }
    }

    var compositionFunctions: [AVFunction] {
        [("composition", "av.composition(): an empty composition", { [unowned self] call in
            push(call, Composition())
            return 1
        })]
    }
}

/// Identifies a source stream, to give segments back their asset track in Lua.
struct SourceKey: Hashable {
    let path: String
    let stream: Int
    init(_ source: SegmentSource) { (path, stream) = (source.path, source.streamIndex) }
    init(_ track: AssetTrack) { (path, stream) = (track.path, track.streamIndex) }
}

package extension String {
    /// Seconds with three decimals ("12.000"), without Foundation's String(format:).
    init(format3 value: Double) {
        let thousandths = Int((abs(value) * 1000).rounded())
        let fraction = String(thousandths % 1000)
        self = (value < 0 ? "-" : "") + "\(thousandths / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}

extension Binding {
    static let composition = Binding(classes: [.init(CompositionTrack.self) { $0.makeCompositionTrackClass() },
                                             .init(Composition.self) { $0.makeCompositionClass() }],
                                   functions: { $0.compositionFunctions })
}
