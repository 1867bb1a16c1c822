import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// `av.videoComposition`, instructions and layer instructions (AVMutableVideoComposition,
/// AVMutableVideoCompositionInstruction, AVMutableVideoCompositionLayerInstruction).
extension API {
    func makeVideoCompositionClass() -> LuaClass {
        let luaClass = LuaClass("VideoComposition", doc: "How each output frame is composed: render size, frame rate, instructions.")
        luaClass.describe = { object in
            guard let v = object as? VideoComposition else { return "VideoComposition" }
            return "VideoComposition(\(v.renderSize), \(format((1 / v.frameDuration.seconds * 1000).rounded() / 1000)) fps, \(v.instructions.count) instruction\(v.instructions.count == 1 ? "" : "s"))"
        }
        luaClass.footprint = { object in
            guard let videoComposition = object as? VideoComposition else { return Footprint.record }
            return Footprint.record + Footprint.record * videoComposition.instructions.count + videoComposition.filters.footprint
        }
        luaClass.property("renderSize", of: VideoComposition.self,
                          get: { call, v in call.push(size: v.renderSize) },
                          set: { call, v, index in v.renderSize = try call.size(index) })
        luaClass.property("frameDuration", of: VideoComposition.self, doc: "seconds per frame (av.time(1, 30) for 30 fps)",
                          get: { call, v in try call.push(exact: v.frameDuration) },
                          set: { call, v, index in
                              let d = try call.duration(index)
                              guard d >= MediaTime(value: 1, timescale: 1000), d <= MediaTime(value: 10, timescale: 1) else {
                                  throw call.argumentError(index, "frameDuration must be between 1/1000 s and 10 s, got \(d.seconds)")
                              }
                              v.frameDuration = d
                          })
        luaClass.property("renderScale", of: VideoComposition.self,
                          get: { call, v in call.push(v.renderScale) },
                          set: { call, v, index in
                              let scale = try call.finite(index)
                              guard scale > 0, scale <= 4 else { throw call.argumentError(index, "renderScale must be in (0, 4], got \(format(scale))") }
                              v.renderScale = scale
                          })
        luaClass.property("animationTool", of: VideoComposition.self, doc: "av.animationTool{videoLayer=, parentLayer=}: layers around the video",
                          get: { call, v in if let tool = v.animationTool { try call.push(tool) } else { call.pushNil() } },
                          set: { call, v, index in v.animationTool = try call.optionalObject(index, AnimationTool.self) })
        luaClass.property("instructions", of: VideoComposition.self,
                          get: { call, v in try call.pushArray(v.instructions) { try call.push($0) } },
                          set: { call, v, index in
                              v.instructions = try call.array(index, of: VideoCompositionInstruction.self)
                          })
        luaClass.document([
            "renderSize": "{width, height} of the frames (required; av.videoComposition(comp) sets it)",
            "renderScale": "scales the output size (0 < s ≤ 4; 1 by default)",
            "instructions": "the instructions, covering the composition without gaps or overlaps",
        ])
        luaClass.example = """
            local vc = av.videoComposition(comp)        -- size, rate and upright transforms from the clips
            local custom = av.videoComposition{ renderSize = {1280, 720}, frameDuration = av.time(1, 30) }
            custom.instructions = { av.videoCompositionInstruction{ timeRange = av.range(0, comp.duration),
                                                                    layerInstructions = { li } } }
            """
        return luaClass
    }

    func makeInstructionClass() -> LuaClass {
        let luaClass = LuaClass("VideoCompositionInstruction", doc: "One time range of a video composition: tracks drawn (first on top) over a background.")
        luaClass.describe = { object in
            guard let i = object as? VideoCompositionInstruction else { return "VideoCompositionInstruction" }
            return "VideoCompositionInstruction(\(format(i.timeRange.start.seconds))…\(format(i.timeRange.end.seconds)) s, \(i.layerInstructions.count) layer\(i.layerInstructions.count == 1 ? "" : "s"))"
        }
        luaClass.footprint = { object in
            Footprint.record + 8 * ((object as? VideoCompositionInstruction)?.layerInstructions.count ?? 0)
        }
        luaClass.property("timeRange", of: VideoCompositionInstruction.self,
                          get: { call, i in try call.push(range: i.timeRange) },
                          set: { call, i, index in i.timeRange = try call.timeRange(index) })
        luaClass.property("backgroundColor", of: VideoCompositionInstruction.self,
                          get: { call, i in call.push(color: i.backgroundColor) },
                          set: { call, i, index in i.backgroundColor = try call.color(index) })
        luaClass.property("layerInstructions", of: VideoCompositionInstruction.self, doc: "first is drawn on top",
                          get: { call, i in try call.pushArray(i.layerInstructions) { try call.push($0) } },
                          set: { call, i, index in
                              i.layerInstructions = try call.array(index, of: LayerInstruction.self)
                          })
        luaClass.document([
            "timeRange": "the part of the composition it covers",
            "backgroundColor": "shown where no track covers the frame (black by default)",
        ])
        luaClass.example = """
            local dissolve = av.videoCompositionInstruction{ timeRange = av.range(4, 1), layerInstructions = { fadingOut, underneath } }
            """
        return luaClass
    }

    func makeLayerInstructionClass() -> LuaClass {
        let luaClass = LuaClass("LayerInstruction", doc: "Transform, opacity and crop of one composition track over time.")
        luaClass.describe = { ($0 as? LayerInstruction).map { "LayerInstruction(track \($0.trackID))" } ?? "LayerInstruction" }
        luaClass.footprint = { object in
            guard let instruction = object as? LayerInstruction else { return Footprint.record }
            let changes = instruction.transform.changeCount + instruction.opacity.changeCount + (instruction.crop?.changeCount ?? 0)
            return Footprint.record + 2 * MemoryLayout<AffineTransform>.stride * changes + instruction.filters.footprint
        }
        luaClass.property("trackID", of: LayerInstruction.self) { call, l in call.push(l.trackID) }
        luaClass.method("setTransform", of: LayerInstruction.self, doc: "li:setTransform(t, atTime)") { call, l in
            let (value, time) = (try call.affineTransform(2), try call.time(3))
            let cut = l.transform.set(value, at: time)
            try call.api().reportRampCut(call, "transform", cut: cut, by: TimeRange(start: time, duration: .zero))
            return 0
        }
        luaClass.method("setTransformRamp", of: LayerInstruction.self, doc: "li:setTransformRamp(t0, t1, range [, timing])") { call, l in
            let (from, to, range, curve) = (try call.affineTransform(2), try call.affineTransform(3), try call.timeRange(4), try call.curve(5))
            try call.api().reportRampCut(call, "transform", cut: l.transform.ramp(from: from, to: to, over: range, curve: curve), by: range)
            return 0
        }
        luaClass.method("setOpacity", of: LayerInstruction.self, doc: "li:setOpacity(o, atTime)") { call, l in
            let (value, time) = (try call.unit(2), try call.time(3))
            let cut = l.opacity.set(value, at: time)
            try call.api().reportRampCut(call, "opacity", cut: cut, by: TimeRange(start: time, duration: .zero))
            return 0
        }
        luaClass.method("setOpacityRamp", of: LayerInstruction.self, doc: "li:setOpacityRamp(o0, o1, range [, timing])") { call, l in
            let (from, to, range, curve) = (try call.unit(2), try call.unit(3), try call.timeRange(4), try call.curve(5))
            try call.api().reportRampCut(call, "opacity", cut: l.opacity.ramp(from: from, to: to, over: range, curve: curve), by: range)
            return 0
        }
        luaClass.method("setCropRectangle", of: LayerInstruction.self, doc: "li:setCropRectangle(rect, atTime), in stored pixels, cut to the picture; before the first time set, the whole picture shows") { call, l in
            let (rect, time) = (try call.rect(2), try call.time(3))
            let cut = l.setCropRectangle(rect, at: time)
            try call.api().reportRampCut(call, "crop", cut: cut, by: TimeRange(start: time, duration: .zero))
            return 0
        }
        luaClass.method("setCropRectangleRamp", of: LayerInstruction.self, doc: "li:setCropRectangleRamp(r0, r1, range [, timing])") { call, l in
            let (from, to, range, curve) = (try call.rect(2), try call.rect(3), try call.timeRange(4), try call.curve(5))
            try call.api().reportRampCut(call, "crop", cut: l.setCropRectangleRamp(from: from, to: to, over: range, curve: curve), by: range)
            return 0
        }
        luaClass.property("mask", of: LayerInstruction.self, doc: "a layer over the whole frame (render-size coordinates, y up unless flipped, animations at composition times) whose alpha the track is drawn through, as layer.mask; nil (default): all of it. A Moonreel addition: it is how wipes are drawn",
                          get: { call, l in
                              if let mask = l.mask { try call.push(mask) } else { call.pushNil() }
                          },
                          set: { call, l, index in
                              guard !call.isNoneOrNil(index) else { l.mask = nil; return }
                              let mask: Layer = try call.changedObject(index, Layer.self)
                              guard mask.superlayer == nil, mask.maskedLayer == nil else {
                                  throw call.argumentError(index, "a mask must not be a sublayer or another layer's mask: it is drawn only as the mask")
                              }
                              l.mask = mask
                          })
        luaClass.alias("setTransformRampFromStartTransform", of: "setTransformRamp")
        luaClass.alias("setOpacityRampFromStartOpacity", of: "setOpacityRamp")
        luaClass.alias("setCropRectangleRampFromStartCropRectangle", of: "setCropRectangleRamp")
        luaClass.document([
            "trackID": "the composition track it applies to",
        ])
        luaClass.example = """
            local li = av.layerInstruction(comp:tracksWithMediaType("video")[1])
            li:setTransform(track.preferredTransform, 0)            -- upright
            li:setOpacityRamp(1, 0, av.range(comp.duration - 1, 1)) -- fade out over the last second
            """
        return luaClass
    }

    /// The `fit` and `focus` options of av.videoComposition and av.join, read in any order.
    struct FitChoice {
        var fit: VideoComposition.Placement
        var focus: Point?

        init(default fit: VideoComposition.Placement) { self.fit = fit }

        /// "fit", "fill" or "none" (true and false: "fit" and "none", as before).
        mutating func readFit(_ call: LuaCall, _ index: Int32) throws {
            if call.type(index) == LUA_TBOOLEAN {
                fit = try call.boolean(index) ? .fit : .natural
                return
            }
            let choices: [String: VideoComposition.Placement] = ["fit": .fit, "fill": .fill, "none": .natural]
            let name = try call.string(index)
            guard let choice = choices[name] else {
                throw call.argumentError(index, "fit must be \"fit\" (inside the frame), \"fill\" (cover it, cropped) or \"none\" (own size), got \(name.quotedForMessage())")
            }
            fit = choice
        }

        func placement(_ call: LuaCall, _ options: Int32) throws -> VideoComposition.Placement {
            guard let focus else { return fit }
            guard case .fill = fit else { throw call.argumentError(options, "focus needs fit = \"fill\" (it says which part of a cropped picture stays in view)") }
            return .fill(focus: focus)
        }
    }

    var videoCompositionFunctions: [AVFunction] {
        [
            ("videoComposition", "av.videoComposition{renderSize=, frameDuration=} or av.videoComposition(comp [, {renderSize=, fit=\"fit\"|\"fill\"|\"none\", focus={x, y}, filters=}])", { call in
                let api = try call.api()
                if let source: Composition = try? call.object(1, Composition.self) {
                    var render: Size? = nil
                    var fit = FitChoice(default: .natural)
                    var filters: [Filter] = []
                    if !call.isNoneOrNil(2) {
                        guard call.type(2) == LUA_TTABLE else { throw call.typeError(2, expected: "table {renderSize=, fit=, focus=, filters=}") }
                        let known = ["renderSize", "fit", "focus", "filters"]
                        try call.forEachField(of: 2) { key in
                            guard known.contains(key) else {
                                throw call.argumentError(2, "unknown option \(key.quotedForMessage())\(NameSuggestion.hint(for: key, among: known)) (\(known.joined(separator: ", ")))")
                            }
                        }
                        if call.pushField(of: 2, "renderSize") != LUA_TNIL { render = try call.size(-1) }
                        call.pop()
                        if call.pushField(of: 2, "fit") != LUA_TNIL { try fit.readFit(call, -1) }
                        call.pop()
                        if call.pushField(of: 2, "focus") != LUA_TNIL { fit.focus = try call.focus(-1) }
                        call.pop()
                        call.pushField(of: 2, "filters")
                        defer { call.pop() }
                        do { filters = try call.filterList(call.absolute(-1)) } catch let error as LuaArgumentError {
                            throw call.argumentError(2, "field 'filters': \(error.message.argumentReason)", cause: error)
                        }
                    }
                    guard render != nil || source.uprightVideoSize != .zero else {
                        throw call.argumentError(1, "the composition has no video to take a render size from")
                    }
                    let made = VideoComposition.properties(of: source, renderSize: render, placement: try fit.placement(call, 2))
                    made.filters.filters = filters
                    for note in made.notes { try api.policy.report(note, at: call.L) }
                    try call.push(made)
                    return 1
                }
                // Unset until the script sets them; exporting without them fails as in AVFoundation.
                let made = VideoComposition(renderSize: .zero, frameDuration: .zero)
                try call.applyProperties(1, to: made, of: VideoComposition.self)
                try call.push(made)
                return 1
            }),
            ("videoCompositionInstruction", "av.videoCompositionInstruction{timeRange=, backgroundColor=, layerInstructions=}", { call in
                let made = VideoCompositionInstruction(timeRange: TimeRange(start: .zero, duration: .zero))
                try call.applyProperties(1, to: made, of: VideoCompositionInstruction.self)
                try call.push(made)
                return 1
            }),
            ("layerInstruction", "av.layerInstruction(compositionTrack, assetTrack or trackID)", { call in
                let (id, source) = try call.trackReference(1, mediaType: .video)
                let made = LayerInstruction(trackID: id)
                made.source = source
                try call.push(made)
                return 1
            }),
        ]
    }
}

extension MediaType {
    /// "a video", "an audio": for messages.
    var withArticle: String { (rawValue.first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + rawValue }
}

extension LuaCall {
    /// `{x, y}`: the point of a picture (0…1 across and down) kept in view when it fills the frame.
    func focus(_ index: Int32) throws -> Point {
        let focus = try point(index)
        guard (0...1).contains(focus.x), (0...1).contains(focus.y) else {
            throw argumentError(index, "focus must be {x, y} with each in 0…1 (a point of the picture: {0.5, 0.5} is its centre), got {\(format(focus.x)), \(format(focus.y))}")
        }
        return focus
    }

    /// The track a layer instruction or audio mix parameters apply to: a composition track,
    /// an asset track (as AVFoundation takes; matched to the composition track holding its
    /// media when exported) or a track ID.
    func trackReference(_ index: Int32, mediaType: MediaType) throws -> (Int, SourceReference?) {
        if let track: CompositionTrack = try? object(index, CompositionTrack.self) {
            guard track.mediaType == mediaType else {
                throw argumentError(index, "track \(track.trackID) is \(track.mediaType.withArticle) track, not \(mediaType.withArticle) track")
            }
            return (track.trackID, nil)
        }
        if let track: AssetTrack = try? object(index, AssetTrack.self) {
            guard track.mediaType == mediaType else {
                throw argumentError(index, "asset track \(track.trackID) is \(track.mediaType.withArticle) track, not \(mediaType.withArticle) track")
            }
            return (track.trackID, SourceReference(track))
        }
        guard type(index) == LUA_TNUMBER else { throw typeError(index, expected: "CompositionTrack, AssetTrack or track ID") }
        return (try integer(index), nil)
    }
}

extension Binding {
    static let videoComposition = Binding(classes: [
        .init(LayerInstruction.self) { $0.makeLayerInstructionClass() },
        .init(VideoCompositionInstruction.self) { $0.makeInstructionClass() },
        .init(VideoComposition.self) { $0.makeVideoCompositionClass() },
    ], functions: { $0.videoCompositionFunctions })
}

extension API {
    /// A warning when a change of `property` over `range` (a value set: an empty range) and
    /// the change over `cut` overlap, as `PropertyTimeline.set` and `ramp` return it: the one
    /// that starts later takes over at its start, so the other stops short and the value jumps
    /// (AVFoundation asks for ramps that do not overlap).
    func reportRampCut(_ call: LuaCall, _ property: String, cut: TimeRange?, by range: TimeRange) throws {
        guard let other = cut else { return }
        let span = { (r: TimeRange) in r.duration.value > 0 ? "the \(property) ramp over \(shortSeconds(r.start))–\(shortSeconds(r.end)) s" : "the \(property) set at \(shortSeconds(r.start)) s" }
        let (first, second) = other.start < range.start ? (other, range) : (range, other)
        try policy.report(Diagnostic(.animationIgnored, .warning, "\(span(range)) overlaps \(span(other)): from \(shortSeconds(second.start)) s the later one holds, so \(span(first)) stops short and the \(property) jumps there",
                                     remedy: "end a ramp before the next change starts", time: second.start.seconds), at: call.L)
    }
}
