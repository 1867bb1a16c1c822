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
        luaClass.footprint = { object in
            guard let composition = object as? Composition else { return Footprint.record }
            return Footprint.record + composition.tracks.reduce(0) { $0 + Footprint.record + MemoryLayout<TrackSegment>.stride * $1.segments.count }
        }
        luaClass.property("duration", of: Composition.self) { call, c in call.push(seconds: c.duration) }
        luaClass.property("durationTime", of: Composition.self) { call, c in try call.push(exact: c.duration) }
        luaClass.property("tracks", of: Composition.self) { call, c in
            try call.pushArray(c.tracks) { try call.push($0) }
        }
        luaClass.property("naturalSize", of: Composition.self, doc: "as AVMutableComposition's: the size set, else the first video track's stored (unturned) size; av.videoComposition(comp) gives the upright render size",
                          get: { call, c in call.push(size: c.naturalSize) },
                          set: { call, c, index in c.naturalSize = try call.size(index) })
        luaClass.method("addMutableTrack", of: Composition.self, doc: "comp:addMutableTrack(\"video\" | \"audio\" [, trackID])") { call, c in
            let type = try call.mediaType(2)
            let id = call.isNoneOrNil(3) ? nil : try call.integer(3)
            if let id, id < 0 || id > Int(Int32.max) {
                throw call.argumentError(3, "track ID must be 1…2147483647, or 0 for a new one (kCMPersistentTrackID_Invalid), got \(id)")
            }
            try call.push(try call.engine { try c.addMutableTrack(mediaType: type, preferredTrackID: id) })
            return 1
        }
        luaClass.alias("addMutableTrackWithMediaType", of: "addMutableTrack")
        luaClass.method("insertTimeRange", of: Composition.self, doc: "comp:insertTimeRange(range, asset, at): every track of the asset") { call, c in
            let api = try call.api()
            let r = try call.timeRange(2)
            let source: Asset = try call.object(3, Asset.self)
            let at = try call.time(4, allowNegative: false)
            try call.engine { try c.insertTimeRange(r, of: source, at: at) }
            for track in source.tracks { api.remember(track) }
            return 0
        }
        luaClass.method("removeTimeRange", of: Composition.self, doc: "comp:removeTimeRange(range)") { call, c in
            let r = try call.timeRange(2)
            try call.api().reportRangePast(call, "removeTimeRange", r, end: c.duration)
            try call.engine { try c.removeTimeRange(r) }
            return 0
        }
        luaClass.method("removeSilences", of: Composition.self, doc: "comp:removeSilences(ranges [, {margin=0.1}]) → removed, map: cuts each range (e.g. a:silences{…} of its sound), less `margin` seconds at each side that touches sound, out of every track, picture and sound together; returns the ranges removed (times before the cut) and a TimeMap to carry cues through (cues:remapped(map)). Build the video composition after (docs/analysis.md)") { call, c in
            let api = try call.api()
            let silences = try call.list(2, limit: 1_000_000) { try call.timeRange($0) }
            var margin = MediaTime(value: 1, timescale: 10)
            try call.options(3, ["margin": { margin = try call.time($0, allowNegative: false) }])
            let before = c.duration
            let kept = silences.filter { c.cut(of: $0, margin: margin) == nil }.count
            let removed = try call.engine { try c.removeSilences(silences, margin: margin) }
            if kept > 0, !removed.isEmpty {
                try api.policy.report(Diagnostic(.nothingRemoved, .note, "removeSilences kept \(kept) of the \(silences.count) ranges given: each is no longer than twice the margin (\(format(margin.seconds)) s), or outside the composition",
                                             remedy: "give a smaller margin to cut shorter pauses"), at: call.L)
            }
            if removed.isEmpty {
                let why = silences.isEmpty ? "it was given no ranges" : "none of the \(silences.count) ranges given is longer than twice the margin (\(format(margin.seconds)) s) inside the composition"
                try api.policy.report(Diagnostic(.nothingRemoved, .warning, "removeSilences removed nothing: \(why); the composition is unchanged",
                                             remedy: "check the silences (a:silences{…} finds them from the recording's own levels) or a smaller margin"), at: call.L)
            }
            if !removed.isEmpty { c.timeMovedBy = "removeSilences" }
            try call.pushArray(removed) { try call.push(range: $0) }
            try call.push(TimeMapBox(TimeMap.removing(removed, from: before)))
            return 2
        }
        luaClass.method("insertEmptyTimeRange", of: Composition.self, doc: "comp:insertEmptyTimeRange(range)") { call, c in
            let r = try call.timeRange(2)
            try call.engine { try c.insertEmptyTimeRange(r) }
            return 0
        }
        luaClass.method("scaleTimeRange", of: Composition.self, doc: "comp:scaleTimeRange(range, newDuration) → map: a TimeMap to carry cues through (cues:remapped(map))") { call, c in
            let r = try call.timeRange(2)
            let d = try call.duration(3)
            let before = c.duration
            try call.api().reportRangePast(call, "scaleTimeRange", r, end: before)
            try call.engine { try c.scaleTimeRange(r, toDuration: d) }
            if d != r.duration, r.start < before { c.timeMovedBy = "scaleTimeRange" }
            try call.push(TimeMapBox(TimeMap.scaling(r, to: d, in: before)))
            return 1
        }
        luaClass.method("mutableTrackCompatibleWithTrack", of: Composition.self, readOnly: true, doc: "comp:mutableTrackCompatibleWithTrack(assetTrack) or nil") { call, c in
            let track: AssetTrack = try call.object(2, AssetTrack.self)
            if let found = c.mutableTrackCompatible(with: track) { try call.push(found) } else { call.pushNil() }
            return 1
        }
        luaClass.method("tracksWithMediaType", of: Composition.self, readOnly: true, doc: "comp:tracksWithMediaType(\"video\")") { call, c in
            let type = try call.mediaType(2)
            try call.pushArray(c.tracks(withMediaType: type)) { try call.push($0) }
            return 1
        }
        luaClass.method("trackWithTrackID", of: Composition.self, readOnly: true, doc: "comp:trackWithTrackID(id) or nil") { call, c in
            if let track = c.track(withID: try call.integer(2)) { try call.push(track) } else { call.pushNil() }
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
        luaClass.footprint = { object in
            Footprint.record + MemoryLayout<TrackSegment>.stride * ((object as? CompositionTrack)?.segments.count ?? 0)
        }
        luaClass.property("trackID", of: CompositionTrack.self) { call, t in call.push(t.trackID) }
        luaClass.property("mediaType", of: CompositionTrack.self) { call, t in call.push(t.mediaType.rawValue) }
        luaClass.property("timeRange", of: CompositionTrack.self) { call, t in try call.push(range: t.timeRange) }
        luaClass.property("naturalSize", of: CompositionTrack.self) { call, t in call.push(size: t.naturalSize) }
        luaClass.property("preferredTransform", of: CompositionTrack.self,
                          get: { call, t in try call.push(transform: t.preferredTransform) },
                          set: { call, t, index in t.preferredTransform = try call.affineTransform(index) })
        luaClass.property("preferredVolume", of: CompositionTrack.self,
                          get: { call, t in call.push(t.preferredVolume) },
                          set: { call, t, index in
                              let volume = try call.finite(index)
                              guard (0...16).contains(volume) else { throw call.argumentError(index, "volume must be in 0…16, got \(format(volume))") }
                              t.preferredVolume = volume
                          })
        luaClass.property("segments", of: CompositionTrack.self, doc: "{ {track=, sourceRange=, targetRange=, empty=}, ... }") { call, t in
            let api = try call.api()
            try call.pushArray(t.segments) { segment in
                try call.pushRecord {
                    if let source = segment.source, let track = api.rememberedTracks[SourceKey(source)] {
                        try call.push(track); call.setField("track")
                    }
                    try call.push(range: segment.sourceRange); call.setField("sourceRange")
                    try call.push(range: segment.targetRange); call.setField("targetRange")
                    call.push(segment.isEmpty); call.setField("empty")
                }
            }
        }
        luaClass.method("insertTimeRange", of: CompositionTrack.self, doc: "track:insertTimeRange(range, assetTrack, at)") { call, t in
            let api = try call.api()
            let r = try call.timeRange(2)
            let source: AssetTrack = try call.object(3, AssetTrack.self)
            let at = try call.time(4, allowNegative: false)
            try call.engine { try t.insertTimeRange(r, of: source, at: at) }
            api.remember(source)
            return 0
        }
        luaClass.method("setPreferredTransform", of: CompositionTrack.self, doc: "track:setPreferredTransform(t), as track.preferredTransform = t") { call, t in
            t.preferredTransform = try call.affineTransform(2)
            return 0
        }
        luaClass.method("insertEmptyTimeRange", of: CompositionTrack.self, doc: "track:insertEmptyTimeRange(range)") { call, t in
            let r = try call.timeRange(2)
            try call.engine { try t.insertEmptyTimeRange(r) }
            return 0
        }
        luaClass.method("removeTimeRange", of: CompositionTrack.self, doc: "track:removeTimeRange(range)") { call, t in
            let r = try call.timeRange(2)
            try call.api().reportRangePast(call, "removeTimeRange", r, end: t.duration)
            try call.engine { try t.removeTimeRange(r) }
            return 0
        }
        luaClass.method("scaleTimeRange", of: CompositionTrack.self, doc: "track:scaleTimeRange(range, newDuration)") { call, t in
            let r = try call.timeRange(2)
            let d = try call.duration(3)
            try call.api().reportRangePast(call, "scaleTimeRange", r, end: t.duration)
            try call.engine { try t.scaleTimeRange(r, toDuration: d) }
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

    var compositionFunctions: [AVFunction] {
        [("composition", "av.composition(): an empty composition", { call in
            try call.push(Composition())
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

extension LuaCall {
    /// A composition, or an asset taken whole as a composition (AVFoundation accepts any
    /// AVAsset where a composition is expected).
    func compositionOrAsset(_ index: Int32) throws -> Composition {
        if let comp: Composition = try? object(index, Composition.self) { return comp }
        guard let file: Asset = try? object(index, Asset.self) else { throw typeError(index, expected: "Composition or Asset") }
        let whole = Composition()
        try engine { try whole.insertTimeRange(TimeRange(start: .zero, duration: file.duration), of: file, at: .zero) }
        return whole
    }
}

extension Binding {
    static let composition = Binding(classes: [.init(CompositionTrack.self) { $0.makeCompositionTrackClass() },
                                             .init(Composition.self) { $0.makeCompositionClass() }],
                                   functions: { $0.compositionFunctions })
}

extension API {
    /// An edit's range reaching past the media's `end` acts on the part inside only: a
    /// `rangeClipped` warning at the call's line (`nothingRemoved` for a removal with none of
    /// it inside). A range starting before 0 is refused by the edit itself, so it is not said here.
    func reportRangePast(_ call: LuaCall, _ edit: String, _ range: TimeRange, end: MediaTime) throws {
        guard range.end > end, range.duration.value > 0, !range.start.isNegative else { return }
        let asked = "\(edit)'s range \(shortSeconds(range.start))–\(shortSeconds(range.end)) s"
        if range.start >= end {
            let removing = edit != "scaleTimeRange"
            try policy.report(Diagnostic(removing ? .nothingRemoved : .rangeClipped, .warning, "\(asked) lies past the end (\(shortSeconds(end)) s): nothing is \(removing ? "removed" : "scaled")"), at: call.L)
        } else {
            let done = edit == "scaleTimeRange" ? "scaled at the same rate" : "removed"
            try policy.report(Diagnostic(.rangeClipped, .warning, "\(asked) reaches past the end (\(shortSeconds(end)) s): \(shortSeconds(range.start))–\(shortSeconds(end)) s is \(done)"), at: call.L)
        }
    }
}
