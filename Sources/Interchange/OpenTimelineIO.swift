import Foundation
import MoonreelEngine

/// OpenTimelineIO's JSON (`.otio`, schema of OpenTimelineIO 0.15 and later): the timeline
/// as a stack of tracks of clips, gaps and transitions. Times are written exactly: in
/// frames where a time is a whole number of frames at a whole-number rate, else as the
/// reduced fraction of a second (value over rate).
enum OpenTimelineIO {
    /// The JSON text of `timeline`; `path` turns a clip's media path into the reference written.
    static func encode(_ timeline: Timeline, path: (String) -> String) throws -> String {
        let rate = wholeFrameRate(timeline.frameDuration)
        func time(_ t: MediaTime) -> [String: Any] { rationalTime(t, frameRate: rate) }
        func range(_ r: TimeRange) -> [String: Any] {
            ["OTIO_SCHEMA": "TimeRange.1", "start_time": time(r.start), "duration": time(r.duration)]
        }
        func marker(_ m: Timeline.Marker) -> [String: Any] {
            ["OTIO_SCHEMA": "Marker.2", "metadata": [:] as [String: Any], "name": m.name, "color": "RED",
             "marked_range": range(m.range), "comment": m.comment]
        }
        func item(_ item: Timeline.Item) -> [String: Any] {
            switch item {
            case .gap(let length):
                return ["OTIO_SCHEMA": "Gap.1", "metadata": [:] as [String: Any], "name": "", "source_range": range(TimeRange(start: .zero, duration: length)),
                        "effects": [] as [Any], "markers": [] as [Any], "enabled": true]
            case .transition(let t):
                return ["OTIO_SCHEMA": "Transition.1", "metadata": [:] as [String: Any], "name": t.kind == .dissolve ? "Cross Dissolve" : "Wipe",
                        "transition_type": t.kind == .dissolve ? "SMPTE_Dissolve" : "SMPTE_Wipe",
                        "in_offset": time(t.inOffset), "out_offset": time(t.outOffset)]
            case .clip(let clip):
                var effects: [[String: Any]] = clip.effects.map { effect in
                    ["OTIO_SCHEMA": "Effect.1", "name": effect.name, "effect_name": effect.name, "enabled": true,
                     "metadata": ["moonreel": ["from": effect.from, "to": effect.to, "range": range(effect.range)] as [String: Any]]]
                }
                var metadata: [String: Any] = [:]
                if clip.duration != clip.sourceRange.duration {
                    // OpenTimelineIO keeps the track's duration in source_range and the speed as a factor; the
                    // media's exact duration goes beside it so a reader loses nothing to the double.
                    effects.insert(["OTIO_SCHEMA": "LinearTimeWarp.1", "name": "", "effect_name": "LinearTimeWarp", "enabled": true,
                                    "time_scalar": clip.speed, "metadata": [:] as [String: Any]], at: 0)
                    metadata["moonreel"] = ["source_duration": time(clip.sourceRange.duration)]
                }
                var reference: [String: Any] = ["OTIO_SCHEMA": "ExternalReference.1", "metadata": [:] as [String: Any], "name": "",
                                                "target_url": path(clip.path), "available_image_bounds": NSNull()]
                reference["available_range"] = clip.availableRange.map(range) ?? NSNull()
                return ["OTIO_SCHEMA": "Clip.2", "metadata": metadata, "name": clip.name,
                        "source_range": range(TimeRange(start: clip.sourceRange.start, duration: clip.duration)),
                        "effects": effects, "markers": clip.markers.map(marker), "enabled": true,
                        "media_references": ["DEFAULT_MEDIA": reference], "active_media_reference_key": "DEFAULT_MEDIA"]
            }
        }
        let tracks: [[String: Any]] = timeline.tracks.map { track in
            ["OTIO_SCHEMA": "Track.1", "metadata": [:] as [String: Any], "name": track.name, "source_range": NSNull(),
             "effects": [] as [Any], "markers": [] as [Any], "enabled": true,
             "kind": track.kind == .video ? "Video" : "Audio", "children": track.items.map(item)]
        }
        let document: [String: Any] = [
            "OTIO_SCHEMA": "Timeline.1", "name": timeline.name, "global_start_time": NSNull(),
            "metadata": ["moonreel": ["frame_duration": time(timeline.frameDuration),
                                      "render_size": [timeline.renderSize.width, timeline.renderSize.height]] as [String: Any]],
            "tracks": ["OTIO_SCHEMA": "Stack.1", "metadata": [:] as [String: Any], "name": "tracks", "source_range": NSNull(),
                       "effects": [] as [Any], "markers": timeline.markers.map(marker), "enabled": true, "children": tracks] as [String: Any],
        ]
        let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// The rate N when a frame lasts exactly 1/N s.
    static func wholeFrameRate(_ frame: MediaTime) -> Int64? {
        let reduced = frame.reduced()
        return reduced.value == 1 && reduced.timescale > 0 ? Int64(reduced.timescale) : nil
    }

    private static func rationalTime(_ t: MediaTime, frameRate: Int64?) -> [String: Any] {
        var value = t.reduced().value, rate = Int64(t.reduced().timescale)
        if let frameRate, frameRate % rate == 0 {
            value *= frameRate / rate
            rate = frameRate
        }
        return ["OTIO_SCHEMA": "RationalTime.1", "value": Double(value), "rate": Double(rate)]
    }

    // MARK: Reading

    /// The timeline in OpenTimelineIO JSON `text`; `resolve` turns a media reference into a path.
    /// What the model cannot hold (nested stacks, effects other than a linear time warp) is named in the notes.
    static func decode(_ text: String, resolve: @escaping (String) -> String) throws -> (Timeline, [Diagnostic]) {
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: Data(text.utf8)) } catch {
            throw EngineError("not OpenTimelineIO JSON: \(error.localizedDescription)", kind: .decode)
        }
        guard let root = object as? [String: Any], (root["OTIO_SCHEMA"] as? String)?.hasPrefix("Timeline.") == true else {
            throw EngineError("not an OpenTimelineIO timeline (the file's OTIO_SCHEMA is not Timeline.1)", kind: .decode)
        }
        var reader = OTIOReader(resolve: resolve)
        let stack = try reader.dictionary(root["tracks"], "tracks")
        var tracks: [Timeline.Track] = []
        for (index, child) in (stack["children"] as? [Any] ?? []).enumerated() {
            let track = try reader.dictionary(child, "track \(index + 1)")
            guard (track["OTIO_SCHEMA"] as? String)?.hasPrefix("Track.") == true else {
                reader.notes.append(Diagnostic(.notInTimeline, .warning, "the timeline's item \(index + 1) is a \(track["OTIO_SCHEMA"] as? String ?? "?"), not a track: left out"))
                continue
            }
            let name = track["name"] as? String ?? "track \(index + 1)"
            let kind: MediaType = (track["kind"] as? String) == "Audio" ? .audio : .video
            if track["enabled"] as? Bool == false {
                reader.notes.append(Diagnostic(.notInTimeline, .warning, "track \(name.quotedForMessage(limit: 40)) is disabled (muted or hidden in the editor): left out"))
                continue
            }
            let unread = ["effects", "markers"].filter { !((track[$0] as? [Any])?.isEmpty ?? true) } + (track["source_range"] is [String: Any] ? ["source_range"] : [])
            if !unread.isEmpty {
                reader.notes.append(Diagnostic(.notInTimeline, .warning, "track \(name.quotedForMessage(limit: 40)): its own \(unread.joined(separator: ", ")) \(unread.count == 1 ? "is" : "are") not read (its clips' are)"))
            }
            let items = try (track["children"] as? [Any] ?? []).enumerated().compactMap { try reader.item($1, in: name, number: $0 + 1) }
            tracks.append(Timeline.Track(kind: kind, name: name, items: items))
        }
        let meta = (root["metadata"] as? [String: Any])?["moonreel"] as? [String: Any]
        let frame = try reader.time(meta?["frame_duration"]) ?? MediaTime(value: 1, timescale: 30)
        let size = (meta?["render_size"] as? [Double]).flatMap { $0.count == 2 ? Size(width: $0[0], height: $0[1]) : nil } ?? .zero
        let markers = try (stack["markers"] as? [Any] ?? []).compactMap { try reader.marker($0) }
        return (Timeline(name: root["name"] as? String ?? "", tracks: tracks, markers: markers, frameDuration: frame, renderSize: size), reader.notes)
    }
}

/// Reads the parts of an OpenTimelineIO document, collecting what it leaves out.
private struct OTIOReader {
    let resolve: (String) -> String
    var notes: [Diagnostic] = []

    func dictionary(_ value: Any?, _ what: String) throws -> [String: Any] {
        guard let dictionary = value as? [String: Any] else { throw EngineError("OpenTimelineIO: \(what) is missing or not an object", kind: .decode) }
        return dictionary
    }

    /// A RationalTime, exact when its value and rate are whole numbers (or an NTSC rate, N×1000/1001).
    func time(_ value: Any?) throws -> MediaTime? {
        guard let object = value as? [String: Any] else { return nil }
        guard let v = (object["value"] as? NSNumber)?.doubleValue, let rate = (object["rate"] as? NSNumber)?.doubleValue,
              v.isFinite, rate.isFinite, rate > 0, abs(v) < 1e15 else {
            throw EngineError("OpenTimelineIO: a time is not a {value, rate} pair of numbers", kind: .decode)
        }
        let ntsc = (rate * 1001).rounded()
        if v == v.rounded(), rate == rate.rounded(), rate <= Double(Int32.max) { return MediaTime(value: Int64(v), timescale: Int32(rate)) }
        if v == v.rounded(), abs(rate * 1001 - ntsc) < 1e-6, ntsc <= Double(Int32.max), abs(v) < 1e12 {
            return MediaTime(value: Int64(v) * 1001, timescale: Int32(ntsc))
        }
        return MediaTime(seconds: v / rate)
    }

    func range(_ value: Any?) throws -> TimeRange? {
        guard let object = value as? [String: Any], let start = try time(object["start_time"]), let duration = try time(object["duration"]) else { return nil }
        guard !duration.isNegative else { throw EngineError("OpenTimelineIO: a time range has a negative duration", kind: .decode) }
        return TimeRange(start: start, duration: duration)
    }

    func marker(_ value: Any) throws -> Timeline.Marker? {
        guard let object = value as? [String: Any], let range = try range(object["marked_range"]) else { return nil }
        return Timeline.Marker(name: object["name"] as? String ?? "", range: range, comment: object["comment"] as? String ?? "")
    }

    mutating func item(_ value: Any, in track: String, number: Int) throws -> Timeline.Item? {
        let object = try dictionary(value, "item \(number) of track \(track)")
        let schema = object["OTIO_SCHEMA"] as? String ?? ""
        let name = object["name"] as? String ?? ""
        let place = "track \(track), item \(number)\(name.isEmpty ? "" : " (\(name.quotedForMessage(limit: 40)))")"
        if object["enabled"] as? Bool == false {
            notes.append(Diagnostic(.notInTimeline, .warning, "\(place) is disabled: left out, a gap in its place"))
        }
        switch schema.split(separator: ".").first.map(String.init) ?? "" {
        case "Gap":
            let length = try range(object["source_range"])?.duration ?? time(object["duration"]) ?? .zero
            return .gap(length)
        case "Transition":
            let type = object["transition_type"] as? String ?? ""
            let kind: TimelineTransition.Kind = type.lowercased().contains("wipe") ? .wipe : .dissolve
            if kind == .dissolve, type != "SMPTE_Dissolve" {
                notes.append(Diagnostic(.notInTimeline, .warning, "\(place) is a \(type.isEmpty ? "transition of no type" : "\"\(type)\" transition"): read as a dissolve"))
            }
            return .transition(TimelineTransition(kind: kind, inOffset: try time(object["in_offset"]) ?? .zero, outOffset: try time(object["out_offset"]) ?? .zero))
        case "Clip":
            var reference = object["media_reference"] as? [String: Any]
            if let references = object["media_references"] as? [String: Any] {
                reference = references[object["active_media_reference_key"] as? String ?? "DEFAULT_MEDIA"] as? [String: Any]
            }
            guard let reference, let url = reference["target_url"] as? String, !url.isEmpty else {
                throw EngineError("\(place) has no media file (its reference is \(reference?["OTIO_SCHEMA"] as? String ?? "missing"))", kind: .notFound)
            }
            let available = try range(reference["available_range"])
            guard let trimmed = try range(object["source_range"]) ?? available else {
                throw EngineError("\(place) has neither a source range nor an available range", kind: .decode)
            }
            var clip = Timeline.Clip(name: name, path: resolve(url), sourceRange: trimmed, duration: trimmed.duration, availableRange: available)
            for effect in object["effects"] as? [Any] ?? [] {
                guard let effect = effect as? [String: Any] else { continue }
                let effectName = effect["effect_name"] as? String ?? effect["OTIO_SCHEMA"] as? String ?? "effect"
                if (effect["OTIO_SCHEMA"] as? String)?.hasPrefix("LinearTimeWarp.") == true {
                    let scalar = (effect["time_scalar"] as? NSNumber)?.doubleValue ?? 1
                    guard scalar > 0, scalar.isFinite else {
                        notes.append(Diagnostic(.notInTimeline, .warning, "\(place) plays at speed \(shortNumber(scalar)) (still or backwards): read at normal speed"))
                        continue
                    }
                    let exact = try ((object["metadata"] as? [String: Any])?["moonreel"] as? [String: Any]).flatMap { try time($0["source_duration"]) }
                    let media = exact ?? MediaTime(seconds: trimmed.duration.seconds * scalar) ?? trimmed.duration
                    clip.sourceRange = TimeRange(start: trimmed.start, duration: media)
                } else if let ramp = (effect["metadata"] as? [String: Any])?["moonreel"] as? [String: Any], ["Opacity", "Volume"].contains(effectName),
                          let from = (ramp["from"] as? NSNumber)?.doubleValue, let to = (ramp["to"] as? NSNumber)?.doubleValue, let range = try range(ramp["range"]) {
                    clip.effects.append(Timeline.Effect(name: effectName, from: from, to: to, range: range))
                } else {
                    notes.append(Diagnostic(.notInTimeline, .warning, "\(place): the effect \(effectName.quotedForMessage(limit: 40)) is not read"))
                }
            }
            clip.markers = try (object["markers"] as? [Any] ?? []).compactMap(marker)
            return object["enabled"] as? Bool == false ? .gap(clip.duration) : .clip(clip)
        default:
            throw EngineError("\(place) is a \(schema.isEmpty ? "thing without OTIO_SCHEMA" : schema), which Moonreel does not read (it reads clips, gaps and transitions)", kind: .unsupported)
        }
    }
}
