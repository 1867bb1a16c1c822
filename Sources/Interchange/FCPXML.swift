import MoonreelEngine
import MoonreelPlatform

/// Final Cut Pro XML 1.10 (`.fcpxml`), which Final Cut Pro and DaVinci Resolve import: the
/// first video track is the primary storyline (clips, gaps and transitions in a spine); the
/// first audio track goes with it when it holds the same clips (a clip's own sound), and
/// every other track's clips are connected clips on lanes above (video) or below (audio).
/// Edit points lie on the sequence's frames, in its frame duration's denominator
/// ("31031/30000s"), as Final Cut Pro writes them (it snaps any other, "not on an edit frame
/// boundary"): times between frames are rounded, with one `timeRounded` warning.
enum FCPXML {
    /// Cross Dissolve's identifier in Final Cut Pro.
    private static let dissolveID = "FxPlug:4731E73A-8DAC-4113-9A30-AE85B1761265"

    static func encode(_ exact: Timeline, path: (String) -> String) -> (text: String, notes: [Diagnostic]) {
        var notes: [Diagnostic] = []
        var grid = FrameGrid(exact.frameDuration)
        let timeline = onFrames(exact, grid: &grid), scale = grid.frame.timescale
        func time(_ t: MediaTime) -> String { Self.time(t, over: scale) }
        let videoTracks = timeline.tracks.filter { $0.kind == .video }, audioTracks = timeline.tracks.filter { $0.kind == .audio }
        let spineTrack = videoTracks.first ?? audioTracks.first ?? Timeline.Track(kind: .video, name: "V1", items: [])
        let soundWithPictures = spineTrack.kind == .video && audioTracks.first.map { $0.mirrors(spineTrack) } == true
        let connected = timeline.tracks.filter { $0 != spineTrack && !(soundWithPictures && $0 == audioTracks.first) }

        // Resources: the format, the dissolve, one asset per file.
        var resources = [#"<format id="r1" frameDuration="\#(time(grid.frame))" width="\#(Int(timeline.renderSize.width))" height="\#(Int(timeline.renderSize.height))"/>"#,
                         #"<effect id="r2" name="Cross Dissolve" uid="\#(dissolveID)"/>"#]
        var assetIDs: [String: String] = [:]
        for track in timeline.tracks {
            for case .clip(let clip) in track.items where assetIDs[clip.path] == nil {
                let id = "r\(assetIDs.count + 3)"
                assetIDs[clip.path] = id
                let hasVideo = videoTracks.contains { $0.clips.contains { $0.path == clip.path } }
                let hasAudio = audioTracks.contains { $0.clips.contains { $0.path == clip.path } }
                let extent = clip.availableRange ?? clip.sourceRange
                resources.append(#"<asset id="\#(id)" name="\#(clip.name.markupEscaped)" start="\#(time(extent.start))" duration="\#(time(extent.duration))" hasVideo="\#(hasVideo ? 1 : 0)" hasAudio="\#(hasAudio ? 1 : 0)"\#(hasVideo ? " format=\"r1\"" : "")>"#
                                 + #"<media-rep kind="original-media" src="\#(path(clip.path).markupEscaped)"/></asset>"#)
            }
        }

        // The spine, each element with its place on the timeline, so connected clips and markers find their parent.
        struct Element { var xml: [String]; let range: TimeRange; let localStart: MediaTime; var anchored: [String] = [] }
        var elements: [Element] = []
        var transitions: [(index: Int, xml: String)] = []
        var cursor = MediaTime.zero
        for item in spineTrack.items {
            switch item {
            case .gap(let length):
                elements.append(Element(xml: [#"<gap name="Gap" offset="\#(time(cursor))" start="0s" duration="\#(time(length))">"#, "</gap>"],
                                        range: TimeRange(start: cursor, duration: length), localStart: .zero))
                cursor = cursor + length
            case .transition(let t):
                if t.kind == .wipe { notes.append(Diagnostic(.notInTimeline, .warning, "the wipe at \(shortNumber(cursor.seconds)) s is written as a Cross Dissolve (FCPXML names its wipes by Final Cut's own effects)", time: cursor.seconds)) }
                transitions.append((elements.count, #"<transition name="Cross Dissolve" offset="\#(time(cursor - t.inOffset))" duration="\#(time(t.duration))"><filter-video ref="r2" name="Cross Dissolve"/></transition>"#))
            case .clip(let clip):
                let (open, start) = assetClip(clip, ref: assetIDs[clip.path] ?? "", offset: cursor, lane: nil, scale: scale,
                                              audioOnly: spineTrack.kind == .audio, videoOnly: spineTrack.kind == .video && !soundWithPictures)
                elements.append(Element(xml: [open, "</asset-clip>"], range: TimeRange(start: cursor, duration: clip.duration), localStart: start))
                cursor = cursor + clip.duration
            }
        }
        func anchor(at t: MediaTime) -> Int? {
            elements.lastIndex { $0.range.start <= t } ?? (elements.isEmpty ? nil : 0)
        }
        func local(_ t: MediaTime, in element: Element) -> MediaTime { element.localStart + (t - element.range.start) }

        for (number, track) in connected.enumerated() {
            let lane = track.kind == .video ? videoTracks.firstIndex(of: track) ?? number + 1 : -((audioTracks.firstIndex(of: track) ?? number) + (soundWithPictures ? 0 : 1))
            var at = MediaTime.zero
            for item in track.items {
                switch item {
                case .gap(let length): at = at + length
                case .transition:
                    notes.append(Diagnostic(.notInTimeline, .warning, "the transition at \(shortNumber(at.seconds)) s on track \(track.name) is left out: FCPXML keeps transitions in the primary storyline (the first video track)", time: at.seconds))
                case .clip(let clip):
                    guard let index = anchor(at: at) else { continue }
                    let (open, _) = assetClip(clip, ref: assetIDs[clip.path] ?? "", offset: local(at, in: elements[index]), lane: lane, scale: scale,
                                              audioOnly: track.kind == .audio, videoOnly: track.kind == .video)
                    elements[index].anchored.append(open + "</asset-clip>")
                    at = at + clip.duration
                }
            }
        }
        // A mark after the storyline's end has no element to hang on (the last one's time would be past its media).
        let end = elements.last?.range.end ?? .zero
        let (places, leftOut) = timeline.markerPlaces(in: elements.map(\.range), lyingWhere: "after the picture's end at \(shortSeconds(end)) s",
                                                      rule: "FCPXML keeps marks on the clips and gaps of its storyline")
        if let leftOut { notes.append(leftOut) }
        for (marker, place) in zip(timeline.markers, places) {
            guard let index = place else { continue }
            elements[index].anchored.append(#"<marker start="\#(time(local(marker.range.start, in: elements[index])))" duration="\#(time(marker.range.duration))" value="\#(marker.name.markupEscaped)"/>"#)
        }
        for track in timeline.tracks {
            notes += track.rampsLeftOut(of: "FCPXML")
        }

        if let note = grid.note("FCPXML", rate: framesPerSecond(grid.frame), remedy: "write OTIO for exact times") { notes.append(note) }

        var spine: [String] = []
        for (index, element) in elements.enumerated() {
            spine += transitions.filter { $0.index == index }.map(\.xml)
            spine.append(element.xml[0])
            spine += element.anchored
            spine.append(element.xml[1])
        }
        spine += transitions.filter { $0.index == elements.count }.map(\.xml)
        let lines = [#"<?xml version="1.0" encoding="UTF-8"?>"#, "<!DOCTYPE fcpxml>", #"<fcpxml version="1.10">"#,
                     "<resources>"] + resources + ["</resources>", "<library>", #"<event name="Moonreel">"#,
                     #"<project name="\#(timeline.name.markupEscaped)">"#,
                     #"<sequence format="r1" duration="\#(time(spineTrack.duration))" tcStart="0s" tcFormat="\#(timeline.dropFrame ? "DF" : "NDF")" audioLayout="stereo" audioRate="48k">"#,
                     "<spine>"] + spine + ["</spine>", "</sequence>", "</project>", "</event>", "</library>", "</fcpxml>"]
        return (lines.joined(separator: "\n") + "\n", notes)
    }

    /// An asset-clip's opening tag (and its time map, for a clip that plays faster or
    /// slower), and the local time its first frame has.
    private static func assetClip(_ clip: Timeline.Clip, ref: String, offset: MediaTime, lane: Int?, scale: Int32, audioOnly: Bool, videoOnly: Bool) -> (String, MediaTime) {
        func time(_ t: MediaTime) -> String { Self.time(t, over: scale) }
        let retimed = clip.duration != clip.sourceRange.duration
        let start = retimed ? MediaTime.zero : clip.sourceRange.start
        var tag = #"<asset-clip ref="\#(ref)"\#(lane.map { " lane=\"\($0)\"" } ?? "") offset="\#(time(offset))" name="\#(clip.name.markupEscaped)" start="\#(time(start))" duration="\#(time(clip.duration))""#
        if audioOnly { tag += #" srcEnable="audio""# } else if videoOnly { tag += #" srcEnable="video""# }
        tag += ">"
        if retimed {
            tag += #"<timeMap><timept time="0s" value="\#(time(clip.sourceRange.start))" interp="linear"/><timept time="\#(time(clip.duration))" value="\#(time(clip.sourceRange.end))" interp="linear"/></timeMap>"#
        }
        return (tag, start)
    }

    /// "0s", "5s", or over `scale` when it is a whole number of its units ("31031/30000s" for
    /// 31 frames at 29.97), as Final Cut writes times on its frames; else the exact reduced fraction.
    static func time(_ t: MediaTime, over scale: Int32 = 1) -> String {
        let r = t.reduced()
        if r.value == 0 { return "0s" }
        if r.timescale == 1 { return "\(r.value)s" }
        if scale % r.timescale == 0 { return "\(r.value * Int64(scale / r.timescale))/\(scale)s" }
        return "\(r.value)/\(r.timescale)s"
    }

    /// `timeline` with its edit points on its frames: each track's items between its rounded
    /// positions, a clip's start on its media's frames (counted from the media's start), the
    /// markers. A retimed clip's media range stays exact: its time map's values need no frame.
    private static func onFrames(_ timeline: Timeline, grid: inout FrameGrid) -> Timeline {
        var result = timeline
        for (index, track) in timeline.tracks.enumerated() {
            var items: [Timeline.Item] = []
            var at = MediaTime.zero, snappedAt = MediaTime.zero
            for item in track.items {
                switch item {
                case .gap(let length):
                    let end = grid.snapped(at + length)
                    items.append(.gap(end - snappedAt))
                    (at, snappedAt) = (at + length, end)
                case .transition(let t):
                    let inOffset = snappedAt - grid.snapped(at - t.inOffset), outOffset = grid.snapped(at + t.outOffset) - snappedAt
                    items.append(.transition(TimelineTransition(kind: t.kind, inOffset: inOffset, outOffset: outOffset)))
                case .clip(var clip):
                    let end = grid.snapped(at + clip.duration), retimed = clip.duration != clip.sourceRange.duration
                    (at, snappedAt, clip.duration) = (at + clip.duration, end, end - snappedAt)
                    if !retimed {
                        let origin = clip.availableRange?.start ?? .zero
                        clip.sourceRange = TimeRange(start: origin + grid.snapped(clip.sourceRange.start - origin), duration: clip.duration)
                    }
                    items.append(.clip(clip))
                }
            }
            result.tracks[index].items = items
        }
        result.markers = timeline.markers.map { marker in
            let start = grid.snapped(marker.range.start)
            let end = marker.range.duration == .zero ? start : MediaTime.max(start, grid.snapped(marker.range.end))
            return Timeline.Marker(name: marker.name, range: TimeRange(from: start, to: end), comment: marker.comment)
        }
        return result
    }

    // MARK: Reading

    /// The primary storyline (and connected clips, as tracks of their own) of the first
    /// project in an FCPXML document.
    static func decode(_ text: String, resolve: (String) -> String) throws -> (Timeline, [Diagnostic]) {
        let root: XMLElementTree
        do { root = try XMLElementTree.parse(Array(text.utf8)) } catch {
            throw EngineError("not FCPXML: \(error)", kind: .decode)
        }
        guard root.name == "fcpxml" else { throw EngineError("not FCPXML (the root element is not <fcpxml>)", kind: .decode) }
        let resources = Dictionary(root.elements(named: "resources").flatMap(\.children).compactMap { element in
            element.attributes["id"].map { ($0, element) }
        }, uniquingKeysWith: { first, _ in first })
        func projects(in element: XMLElementTree) -> [XMLElementTree] {
            element.name == "project" ? [element] : element.children.flatMap(projects)
        }
        let allProjects = projects(in: root)
        guard let project = allProjects.first, let sequence = project.elements(named: "sequence").first,
              let spine = sequence.elements(named: "spine").first else {
            throw EngineError("the FCPXML holds no project with a sequence", kind: .notFound)
        }
        var notes: [Diagnostic] = []
        if allProjects.count > 1 {
            notes.append(Diagnostic(.notInTimeline, .warning, "the FCPXML holds \(allProjects.count) projects: the first, \((project.attributes["name"] ?? "").quotedForMessage(limit: 40)), is read"))
        }
        let format = resources[sequence.attributes["format"] ?? ""]
        let frame = try format?.attributes["frameDuration"].map(parseTime) ?? MediaTime(value: 1, timescale: 30)
        let size = Size(width: Double(format?.attributes["width"] ?? "") ?? 0, height: Double(format?.attributes["height"] ?? "") ?? 0)

        func attribute(_ element: XMLElementTree, _ name: String) throws -> MediaTime? {
            try element.attributes[name].map(parseTime)
        }
        /// The clip `element` plays: its picture's range, or with `sound` its sound's, which a
        /// split edit (a J or L cut) moves with `audioStart` and `audioDuration`.
        func clip(_ element: XMLElementTree, sound: Bool = false) throws -> Timeline.Clip {
            let name = element.attributes["name"] ?? ""
            guard let ref = element.attributes["ref"], let asset = resources[ref] else {
                throw EngineError("the FCPXML clip \(name.quotedForMessage(limit: 40)) names no asset", kind: .decode)
            }
            guard let rep = asset.elements(named: "media-rep").first?.attributes["src"] ?? asset.attributes["src"] else {
                throw EngineError("the FCPXML asset \(ref) has no media file", kind: .notFound)
            }
            var duration = try attribute(element, "duration") ?? .zero, start = try attribute(element, "start") ?? .zero
            if sound { (start, duration) = (try attribute(element, "audioStart") ?? start, try attribute(element, "audioDuration") ?? duration) }
            var source = TimeRange(start: start, duration: duration)
            let points = try (element.elements(named: "timeMap").first?.elements(named: "timept") ?? []).map { point in
                TimePoint(time: try attribute(point, "time") ?? .zero, value: try attribute(point, "value") ?? .zero, interpolation: point.attributes["interp"] ?? "linear")
            }
            if points.count >= 2 {
                let (range, departures) = retimed(TimeRange(start: start, duration: duration), by: points)
                source = range
                if !departures.isEmpty && !sound {
                    notes.append(Diagnostic(.notInTimeline, .warning, "clip \(name.quotedForMessage(limit: 40)) \(departures.joined(separator: " and ")) in its timeMap: read at one speed, \(shortSeconds(range.start))–\(shortSeconds(range.end)) s of its media over \(shortSeconds(duration)) s",
                                            remedy: "render the speed change in the editor, or make it constant"))
                }
            }
            let extent = try attribute(asset, "start").flatMap { start in try attribute(asset, "duration").map { TimeRange(start: start, duration: $0) } }
            return Timeline.Clip(name: name, path: resolve(rep), sourceRange: source, duration: duration, availableRange: extent)
        }

        var main = Timeline.Track(kind: .video, name: "V1", items: [])
        var lanes: [Int: [(offset: MediaTime, clip: Timeline.Clip)]] = [:]
        var markers: [Timeline.Marker] = []
        // Spine offsets count from the sequence's start timecode (01:00:00:00 in many editors'
        // exports); the timeline starts there.
        let origin = try attribute(sequence, "tcStart") ?? .zero
        var cursor = origin
        // Spine clips that play no sound (srcEnable="video", an asset without audio) or no
        // picture (srcEnable="audio"), by their index in the main track.
        var soundless = Set<Int>(), pictureless = Set<Int>()
        // Each spine clip's sound and where it starts on the timeline; whether one is split from its picture.
        var sounds: [(at: MediaTime, clip: Timeline.Clip)] = [], split = false
        for element in spine.children {
            let offset = try attribute(element, "offset") ?? cursor
            let localStart = try attribute(element, "start") ?? .zero
            switch element.name {
            case "asset-clip", "clip", "gap":
                if offset > cursor { main.items.append(.gap(offset - cursor)) }
                let duration = try attribute(element, "duration") ?? .zero
                if element.name == "gap" { main.items.append(.gap(duration)) } else if element.name == "asset-clip", element.attributes["enabled"] == "0" {
                    notes.append(Diagnostic(.notInTimeline, .warning, "the FCPXML clip \((element.attributes["name"] ?? "").quotedForMessage(limit: 40)) at \(shortNumber((offset - origin).seconds)) s is disabled: left out, a gap in its place",
                                            time: (offset - origin).seconds))
                    main.items.append(.gap(duration))
                } else if element.name == "asset-clip" {
                    let enabled = element.attributes["srcEnable"] ?? "all"
                    if enabled == "video" || resources[element.attributes["ref"] ?? ""]?.attributes["hasAudio"] != "1" { soundless.insert(main.items.count) }
                    if enabled == "audio" { pictureless.insert(main.items.count) }
                    let picture = try clip(element)
                    if !soundless.contains(main.items.count) {
                        let sound = try clip(element, sound: true)
                        split = split || sound != picture
                        sounds.append((offset - origin + (try attribute(element, "audioStart") ?? localStart) - localStart, sound))
                    }
                    main.items.append(.clip(picture))
                } else {
                    notes.append(Diagnostic(.notInTimeline, .warning, "the FCPXML <clip> at \(shortNumber((offset - origin).seconds)) s is read as a gap (Moonreel reads asset-clips)"))
                    main.items.append(.gap(duration))
                }
                cursor = offset + duration
                for child in element.children {
                    switch child.name {
                    case "asset-clip":
                        let lane = Int(child.attributes["lane"] ?? "") ?? 1
                        let at = offset + ((try attribute(child, "offset") ?? .zero) - localStart)
                        lanes[lane, default: []].append((at, try clip(child)))
                        let unread = Set(child.children.map(\.name)).subtracting(["timeMap"]).sorted()
                        if !unread.isEmpty {
                            notes.append(Diagnostic(.notInTimeline, .warning,
                                                    "the connected clip at \(shortNumber((at - origin).seconds)) s: its \(unread.map { "<\($0)>" }.joined(separator: ", ")) \(unread.count == 1 ? "is" : "are") not read",
                                                    time: (at - origin).seconds))
                        }
                    case "marker", "chapter-marker":
                        let start = offset + ((try attribute(child, "start") ?? .zero) - localStart)
                        markers.append(Timeline.Marker(name: child.attributes["value"] ?? "", range: TimeRange(start: start - origin, duration: try attribute(child, "duration") ?? .zero)))
                    case "timeMap":
                        continue
                    default:
                        notes.append(Diagnostic(.notInTimeline, .warning, "the <\(child.name)> of the clip at \(shortNumber((offset - origin).seconds)) s is not read"))
                    }
                }
            case "transition":
                let duration = try attribute(element, "duration") ?? .zero
                // The cut is where the next element starts; the transition lies around it.
                let inOffset = MediaTime.max(.zero, MediaTime.min(duration, cursor - offset))
                let effect = element.elements(named: "filter-video").first?.attributes["name"] ?? element.attributes["name"] ?? ""
                if !effect.lowercased().contains("dissolve") {
                    notes.append(Diagnostic(.notInTimeline, .warning, "the FCPXML transition at \(shortNumber((offset - origin).seconds)) s is \(effect.isEmpty ? "of no named kind" : effect.quotedForMessage(limit: 40)): read as a dissolve",
                                            time: (offset - origin).seconds))
                }
                main.items.append(.transition(TimelineTransition(kind: .dissolve, inOffset: inOffset, outOffset: duration - inOffset)))
            default:
                notes.append(Diagnostic(.notInTimeline, .warning, "the FCPXML <\(element.name)> at \(shortNumber((offset - origin).seconds)) s is not read"))
            }
        }
        // A spine clip plays its sound too unless it says srcEnable="video" (or has none), its
        // picture unless it says srcEnable="audio": the other track has a gap in its place.
        let leaving = { (left: Set<Int>) in
            main.items.enumerated().map { index, item -> Timeline.Item in
                if case .clip(let clip) = item, left.contains(index) { return .gap(clip.duration) }
                return item
            }
        }
        let sound = leaving(soundless)
        let anySound = main.items.indices.contains { index in
            if case .clip = main.items[index] { return !soundless.contains(index) }
            return false
        }
        main.items = leaving(pictureless)
        var tracks = [main]
        if split {
            tracks += splitSoundTracks(sounds, notes: &notes)
            if main.items.contains(where: { if case .transition = $0 { true } else { false } }) {
                notes.append(Diagnostic(.notInTimeline, .warning, "the FCPXML's clips play their sound apart from their pictures (audioStart, audioDuration): their sound is read as clips of its own, without the transitions' crossfades",
                                        remedy: "join the sound to its picture in the editor, or add the crossfades after reading"))
            }
        } else if anySound {
            tracks.append(Timeline.Track(kind: .audio, name: "A1", items: sound))
        }
        for lane in lanes.keys.sorted(by: { abs($0) < abs($1) || (abs($0) == abs($1) && $0 > $1) }) {
            var items: [Timeline.Item] = [], at = origin
            let kind: MediaType = lane < 0 ? .audio : .video
            for (offset, clip) in (lanes[lane] ?? []).sorted(by: { $0.offset < $1.offset }) {
                if offset > at { items.append(.gap(offset - at)) }
                if offset < at {
                    notes.append(Diagnostic(.notInTimeline, .warning,
                                            "connected clips in lane \(lane) overlap: the one at \(shortNumber((offset - origin).seconds)) s is placed after the one before, at \(shortNumber((at - origin).seconds)) s",
                                            remedy: "give overlapping clips lanes of their own", time: (offset - origin).seconds))
                }
                items.append(.clip(clip))
                at = MediaTime.max(at, offset + clip.duration)
            }
            tracks.append(Timeline.Track(kind: kind, name: lane < 0 ? "A\(-lane)" : "V\(lane + 1)", items: items))
        }
        return (Timeline(name: project.attributes["name"] ?? "", tracks: tracks, markers: markers, frameDuration: frame, renderSize: size), notes)
    }

    /// The sound of spine clips cut apart from their pictures (J and L cuts), each at its own
    /// time: on track A1, and where one overlaps the one before (a sound held under the next
    /// picture), on A2 and on.
    private static func splitSoundTracks(_ sounds: [(at: MediaTime, clip: Timeline.Clip)], notes: inout [Diagnostic]) -> [Timeline.Track] {
        var rows: [[(at: MediaTime, clip: Timeline.Clip)]] = []
        for var (at, clip) in sounds.sorted(by: { $0.at < $1.at }) {
            if at.isNegative {
                // A sound that starts before the timeline does loses what lies before 0.
                notes.append(Diagnostic(.notInTimeline, .warning, "the sound of clip \(clip.name.quotedForMessage(limit: 40)) starts \(shortSeconds(-at)) s before the timeline: that part is left out"))
                let cut = MediaTime.min(-at, clip.duration)
                clip.sourceRange = TimeRange(from: clip.sourceRange.start + cut.multiplied(by: clip.sourceRange.duration, dividedBy: clip.duration), to: clip.sourceRange.end)
                (at, clip.duration) = (.zero, clip.duration - cut)
            }
            if let row = rows.firstIndex(where: { ($0.last.map { $0.at + $0.clip.duration } ?? .zero) <= at }) {
                rows[row].append((at, clip))
            } else {
                rows.append([(at, clip)])
            }
        }
        return rows.enumerated().map { number, row in
            var items: [Timeline.Item] = [], end = MediaTime.zero
            for (at, clip) in row {
                if at > end { items.append(.gap(at - end)) }
                items.append(.clip(clip))
                end = at + clip.duration
            }
            return Timeline.Track(kind: .audio, name: "A\(number + 1)", items: items)
        }
    }

    /// A point of a clip's time map: at `time` of the clip's own (retimed) time it shows
    /// `value` of its media, moving to the next point as `interpolation` says.
    private struct TimePoint {
        let time: MediaTime
        let value: MediaTime
        let interpolation: String
    }

    /// The media a clip's `local` range (its start and duration, in retimed time) shows
    /// through its time map, a line between the points around each time (Final Cut's map
    /// covers the whole media; a clip uses part of it); and what the map does there that one
    /// constant speed does not (a second speed, easing, playing backwards).
    private static func retimed(_ local: TimeRange, by points: [TimePoint]) -> (TimeRange, [String]) {
        let segments = Array(zip(points, points.dropFirst())).filter { $0.1.time > $0.0.time }
        guard let firstSegment = segments.first, let lastSegment = segments.last else { return (local, []) }
        // Before the first point or after the last, the nearest segment goes on.
        func segment(at t: MediaTime) -> (TimePoint, TimePoint) { segments.first { t <= $0.1.time } ?? lastSegment }
        func media(at t: MediaTime) -> MediaTime {
            let (a, b) = t < firstSegment.0.time ? firstSegment : segment(at: t)
            return a.value + (t - a.time).multiplied(by: b.value - a.value, dividedBy: b.time - a.time)
        }
        let used = segments.filter { $0.1.time > local.start && $0.0.time < local.end }
        let slopes = Set((used.isEmpty ? [segment(at: local.start)] : used).map { a, b in (b.value - a.value).multiplied(by: MediaTime(value: 1, timescale: 1), dividedBy: b.time - a.time) })
        let first = media(at: local.start), last = media(at: local.end)
        var departures: [String] = []
        if slopes.count > 1 { departures.append("changes speed \(slopes.count - 1) time\(slopes.count == 2 ? "" : "s")") }
        if let eased = used.flatMap({ [$0.0.interpolation, $0.1.interpolation] }).first(where: { $0 != "linear" }) { departures.append("eases its speed (interp=\"\(eased)\")") }
        if last < first { departures.append("plays its media backwards (read forwards)") }
        return (TimeRange(from: MediaTime.min(first, last), to: MediaTime.max(first, last)), departures)
    }

    /// "0s", "5s", "1001/30000s" or "2.5s".
    static func parseTime(_ text: String) throws -> MediaTime {
        guard text.hasSuffix("s") else { throw EngineError("FCPXML: \(text.quotedForMessage(limit: 30)) is not a time (e.g. \"1001/30000s\")", kind: .decode) }
        let body = text.dropLast()
        let parts = body.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 2, let value = Int64(parts[0]), let scale = Int64(parts[1]), scale > 0,
           let time = MediaTime.checked(value: value, timescale: scale) {
            return time
        }
        if parts.count == 1, let value = Int64(body), let time = MediaTime.checked(value: value, timescale: 1) { return time }
        if parts.count == 1, let seconds = Double(body), let time = MediaTime(seconds: seconds) { return time }
        throw EngineError("FCPXML: \(text.quotedForMessage(limit: 30)) is not a time (e.g. \"1001/30000s\")", kind: .decode)
    }
}

extension Timeline {
    /// For each of the timeline's markers, the index of the place (of `places`, stretches of
    /// the timeline a format hangs marks on) its start lies in, or nil; and the warning that
    /// those in none, which lie `lyingWhere` and are left out by `rule`, are left out.
    func markerPlaces(in places: [TimeRange], lyingWhere: String, rule: String) -> (places: [Int?], note: Diagnostic?) {
        let found = markers.map { marker in places.firstIndex { $0.contains(marker.range.start) } }
        let missing = zip(markers, found).filter { $0.1 == nil }.map(\.0)
        guard let first = missing.first else { return (found, nil) }
        let named = missing.prefix(3).map { "\($0.name.quotedForMessage(limit: 30)) at \(shortSeconds($0.range.start)) s" }.joined(separator: ", ")
            + (missing.count > 3 ? " and \(missing.count - 3) more" : "")
        let one = missing.count == 1
        return (found, Diagnostic(.notInTimeline, .warning, "\(missing.count) marker\(one ? " lies" : "s lie") \(lyingWhere): \(rule), so \(one ? "it is" : "they are") left out: \(named)",
                                  remedy: "write OTIO to keep every marker", time: first.range.start.seconds))
    }
}

extension Timeline.Track {
    /// The track's clips, in order.
    var clips: [Timeline.Clip] { items.compactMap { if case .clip(let clip) = $0 { clip } else { nil } } }

    /// One warning for each clip whose ramps (volume, opacity) a format without effects leaves out.
    func rampsLeftOut(of format: String) -> [Diagnostic] {
        clips.filter { !$0.effects.isEmpty }.map { clip in
            var kinds: [String] = []
            for effect in clip.effects where !kinds.contains(effect.name.lowercased()) { kinds.append(effect.name.lowercased()) }
            return Diagnostic(.notInTimeline, .warning, "the \(kinds.joined(separator: " and ")) ramps of clip \"\(clip.name)\" on track \(name) are left out of the \(format)",
                              remedy: "write OTIO to keep them as effects")
        }
    }

    /// Whether this track holds the same clips and transitions at the same times as `other`
    /// (a clip's sound beside its pictures).
    func mirrors(_ other: Timeline.Track) -> Bool {
        // Clips compared by file, range and length only: a sound's extent and its volume ramps differ from its pictures'.
        func shape(_ track: Timeline.Track) -> [Timeline.Item] {
            track.items.map { item in
                guard case .clip(let clip) = item else { return item }
                return .clip(Timeline.Clip(name: "", path: clip.path, sourceRange: clip.sourceRange, duration: clip.duration))
            }
        }
        return shape(self) == shape(other)
    }
}
