import MoonreelEngine

/// Turns a composition, its video composition and its audio mix into the tracks an editor
/// shows. A/B rolls (a clip on each of two tracks, overlapping where the video composition
/// ramps one into the other, as `av.join` builds them) become one track with a transition
/// at each overlap; tracks whose clips overlap otherwise stay tracks of their own. What
/// the model cannot hold (layers, filters, a slide) is named in `notes`, one each.
extension Timeline {
    /// The timeline of an edit, and what it leaves out or writes in another form.
    /// - Parameters:
    ///   - videoComposition: How the tracks are drawn; nil: the composition's default (no transitions).
    ///   - audioMix: The volume of each track over time; nil: every track as it is.
    ///   - cues: Written as the timeline's markers (lyric lines, captions).
    public static func make(name: String, composition: Composition, videoComposition: VideoComposition?,
                            audioMix: AudioMix?, cues: [Cue] = []) throws -> (timeline: Timeline, notes: [Diagnostic]) {
        guard composition.duration.value > 0 else { throw EngineError("the composition is empty: there is no timeline to write", kind: .invalidArgument) }
        var builder = TimelineBuilder(composition: composition, videoComposition: videoComposition, audioMix: audioMix)
        let video = builder.lanes(of: .video), audio = builder.lanes(of: .audio)
        let tracks = video.enumerated().map { Track(kind: .video, name: "V\($0 + 1)", items: $1) }
            + audio.enumerated().map { Track(kind: .audio, name: "A\($0 + 1)", items: $1) }
        builder.noteWhatHasNoPlace()
        let size = videoComposition?.renderSize ?? composition.uprightVideoSize
        let frame = videoComposition?.renderFrameDuration.duration ?? VideoComposition.properties(of: composition).renderFrameDuration.duration
        let markers = cues.map { Marker(name: $0.text, range: TimeRange(from: $0.start, to: MediaTime.max($0.start, $0.end))) }
        var timeline = Timeline(name: name, tracks: tracks, markers: markers, frameDuration: frame, renderSize: size)
        for case let source? in composition.tracks.flatMap(\.segments).map(\.source) {
            timeline.sourceTimecodes[source.path] = source.startTimecode
        }
        let stamps = timeline.sourceTimecodes.values
        timeline.dropFrame = Timecode.allowsDropFrame(frame) && !stamps.isEmpty && stamps.allSatisfy(\.dropFrame)
        return (timeline, builder.notes)
    }
}

/// The work of `Timeline.make`: the clips of each track, joined into lanes, with the
/// effects and notes found on the way.
private struct TimelineBuilder {
    /// A non-empty segment of a composition track.
    struct Placed {
        let trackID: Int
        let segment: TrackSegment
        var range: TimeRange { segment.targetRange }
    }
    /// A cut between two placed clips of a lane, with the overlap the transition takes.
    struct Join {
        let overlap: TimeRange
        let kind: TimelineTransition.Kind
    }

    let composition: Composition
    let videoComposition: VideoComposition?
    let audioMix: AudioMix?
    var notes: [Diagnostic] = []
    /// Ramps already written as effects or transitions, so none is noted twice.
    private var explained = Set<String>()

    init(composition: Composition, videoComposition: VideoComposition?, audioMix: AudioMix?) {
        (self.composition, self.videoComposition, self.audioMix) = (composition, videoComposition, audioMix)
    }

    /// The lanes of one media type, each as timeline items.
    mutating func lanes(of type: MediaType) -> [[Timeline.Item]] {
        var lanes: [[Placed]] = []
        for track in composition.tracks(withMediaType: type) {
            let clips = track.segments.filter { !$0.isEmpty }.map { Placed(trackID: track.trackID, segment: $0) }
            guard !clips.isEmpty else { continue }
            if let index = lanes.indices.first(where: { joins(of: (lanes[$0] + clips).sorted(by: Self.order), type: type) != nil }) {
                lanes[index] = (lanes[index] + clips).sorted(by: Self.order)
            } else {
                lanes.append(clips)
            }
        }
        return lanes.map { lane in items(of: lane, joins: joins(of: lane, type: type) ?? [], type: type) }
    }

    private static func order(_ a: Placed, _ b: Placed) -> Bool { a.range.start < b.range.start }

    /// The joins between consecutive clips of a would-be lane (nil at each cut), or nil when
    /// the clips cannot share a track: two overlap without a transition, one lies inside
    /// another, or three overlap at once.
    private mutating func joins(of clips: [Placed], type: MediaType) -> [Join?]? {
        var joins: [Join?] = []
        var previousCut = clips.first?.range.start ?? .zero
        for (a, b) in zip(clips, clips.dropFirst()) {
            guard b.range.start < a.range.end else {
                joins.append(nil)
                previousCut = b.range.start
                continue
            }
            let overlap = TimeRange(from: b.range.start, to: a.range.end)
            guard b.range.end > a.range.end, overlap.start > previousCut, let kind = transition(between: a, b, over: overlap, type: type) else { return nil }
            joins.append(Join(overlap: overlap, kind: kind))
            previousCut = overlap.end
        }
        return joins
    }

    /// What the video composition or the mix does over an overlap: a dissolve, a wipe, or
    /// nil when neither track ramps there (both simply play).
    private func transition(between a: Placed, _ b: Placed, over overlap: TimeRange, type: MediaType) -> TimelineTransition.Kind? {
        let ramps = { (changes: [RampSpan]) in changes.contains { $0.duration > .zero && overlap.contains($0.start) } }
        if type == .audio {
            return [a.trackID, b.trackID].contains { ramps(volumeChanges(of: $0)) } ? .dissolve : nil
        }
        let layers = [a.trackID, b.trackID].flatMap { layerInstructions(of: $0, over: overlap) }
        if layers.contains(where: { $0.crop.map { ramps($0.timing) } ?? false }) { return .wipe }
        // A transition effect's mask or blur has no place in a timeline: the nearest is a dissolve.
        if layers.contains(where: { ramps($0.opacity.timing) || ramps($0.transform.timing) || $0.mask != nil || !$0.filters.isEmpty }) { return .dissolve }
        return nil
    }

    /// The lane's items: gaps, clips trimmed to the cut in the middle of each overlap, and
    /// a transition around each such cut.
    private mutating func items(of lane: [Placed], joins: [Join?], type: MediaType) -> [Timeline.Item] {
        var items: [Timeline.Item] = []
        var cursor = MediaTime.zero
        for (index, placed) in lane.enumerated() {
            let into = index > 0 ? joins[index - 1] : nil, out = index < joins.count ? joins[index] : nil
            let cutIn = into.map { $0.overlap.halves.0.end } ?? placed.range.start
            let cutOut = out.map { $0.overlap.halves.0.end } ?? placed.range.end
            if let into {
                items.append(.transition(TimelineTransition(kind: into.kind, inOffset: cutIn - into.overlap.start, outOffset: into.overlap.end - cutIn)))
                noteTransitionForm(into, between: lane[index - 1], placed)
            } else if cutIn > cursor {
                items.append(.gap(cutIn - cursor))
            }
            items.append(.clip(clip(placed, from: cutIn, to: cutOut, type: type, transitions: [into, out].compactMap { $0?.overlap })))
            cursor = cutOut
        }
        return items
    }

    /// A clip of `placed` from `start` to `end` of the composition's time, with the ramps
    /// that are not part of a transition as effects.
    private mutating func clip(_ placed: Placed, from start: MediaTime, to end: MediaTime, type: MediaType,
                               transitions: [TimeRange]) -> Timeline.Clip {
        let segment = placed.segment
        let source = segment.source.map { $0.path } ?? ""
        // Source times as editors count them: from the file's start timecode.
        let counted = { (time: MediaTime) in segment.source?.startTimecode?.editorTime(of: time) ?? time }
        var clip = Timeline.Clip(name: Self.fileName(source), path: source,
                                 sourceRange: TimeRange(from: counted(segment.sourceTime(at: start)), to: counted(segment.sourceTime(at: end))),
                                 duration: end - start,
                                 availableRange: segment.source.map { TimeRange(start: counted($0.mediaRange.start), duration: $0.mediaRange.duration) })
        let own = { (span: RampSpan) in
            placed.range.contains(span.start) && !transitions.contains { $0.contains(span.start) }
        }
        if type == .audio {
            noteLaterSoundTrack(placed)
            for span in volumeChanges(of: placed.trackID) where own(span) && !(span.duration == .zero && span.from == span.before) {
                clip.effects.append(Timeline.Effect(name: "Volume", from: span.from, to: span.to, range: span.range(endingBy: end)))
            }
            if let track = composition.track(withID: placed.trackID), track.preferredVolume != 1, mixParameters(of: placed.trackID) == nil {
                clip.effects.append(Timeline.Effect(name: "Volume", from: track.preferredVolume, to: track.preferredVolume, range: TimeRange(from: start, to: end)))
            }
        } else {
            for layer in layerInstructions(of: placed.trackID, over: placed.range) {
                for span in layer.opacity.spans where own(span) && !(span.duration == .zero && span.from == span.before) {
                    clip.effects.append(Timeline.Effect(name: "Opacity", from: span.from, to: span.to, range: span.range(endingBy: end)))
                }
                notePlacement(of: layer, clip: placed, transitions: transitions)
            }
            noteMask(clip: placed, transitions: transitions)
        }
        return clip
    }

    // MARK: What the timeline has no place for

    /// A transition the model holds in another form (a slide as a dissolve).
    private mutating func noteTransitionForm(_ join: Join, between a: Placed, _ b: Placed) {
        guard a.segment.source?.mediaType == .video else { return }
        let layers = [a.trackID, b.trackID].flatMap { layerInstructions(of: $0, over: join.overlap) }
        let inside = { (spans: [RampSpan]) in spans.contains { $0.duration > .zero && join.overlap.contains($0.start) } }
        let fades = layers.filter { inside($0.opacity.timing) }.count
        let what = layers.contains(where: { $0.mask != nil }) ? "drawn through a mask (a transition effect such as a clock or luma wipe)"
            : layers.contains(where: { !$0.filters.isEmpty }) ? "filtered (a transition effect's blur)"
            : layers.contains(where: { inside($0.transform.timing) }) ? "a slide or zoom (the pictures move)"
            : fades > 1 && join.kind == .dissolve ? "a fade through black" : nil
        guard let what else { return }
        notes.append(Diagnostic(.notInTimeline, .warning, "the transition at \(shortSeconds(join.overlap.start)) s is \(what); timelines hold dissolves and wipes, so it is written as a \(join.kind.rawValue)",
                                time: join.overlap.start.seconds))
    }

    /// A clip drawn otherwise than upright and fitted (moved, scaled, cropped, filtered):
    /// editors fit the picture themselves, so the placement is named once per track.
    private mutating func notePlacement(of layer: LayerInstruction, clip placed: Placed, transitions: [TimeRange]) {
        guard let source = placed.segment.source, let track = composition.track(withID: placed.trackID) else { return }
        let size = videoComposition?.renderSize ?? composition.uprightVideoSize
        let upright = source.shownTransform(preferredTransform: track.preferredTransform(of: source))
        let fitted: [AffineTransform] = [VideoComposition.Placement.natural, .fit].map { upright.concatenating($0.transform(for: source.naturalSize, upright, in: size)) }
        let own = { (start: MediaTime) in placed.range.contains(start) && !transitions.contains { $0.contains(start) } }
        let transforms = layer.transform.transformChanges.filter { own($0.start) }.map(\.to) + [layer.transform.value(at: placed.range.start)]
        let moved = transforms.contains { transform in !fitted.contains { $0.isClose(to: transform) } }
        let cropped = layer.crop.map { $0.changes.contains { own($0.start) && $0.to != LayerInstruction.uncropped } } ?? false
        var what: [String] = []
        if moved { what.append("placed, scaled or turned otherwise than upright and fitted") }
        if cropped { what.append("cropped") }
        what += layer.filters.filters.map { "filtered (\($0.name))" }
        for item in what {
            let key = "placement \(placed.trackID) \(item)"
            guard explained.insert(key).inserted else { continue }
            notes.append(Diagnostic(.notInTimeline, .warning, "clip \"\(Self.fileName(source.path))\" of video track \(placed.trackID) is \(item); the timeline leaves that out (editors show it upright and fitted)",
                                    time: placed.range.start.seconds))
        }
    }

    /// A clip of a file's second (or later) audio track, a second microphone: the timeline
    /// names the file only, and an editor (or Moonreel reading it back) plays its first.
    /// Named once per file and track; a file that cannot be opened now is not judged.
    private mutating func noteLaterSoundTrack(_ placed: Placed) {
        guard let source = placed.segment.source, explained.insert("sound \(source.path) \(source.trackID)").inserted,
              let first = (try? Asset(path: source.path))?.tracks(withMediaType: .audio).first, first.trackID != source.trackID else { return }
        notes.append(Diagnostic(.notInTimeline, .warning,
                                "clip \"\(Self.fileName(source.path))\" of audio track \(placed.trackID) plays the file's audio track \(source.trackID); the timeline names the file only, so an editor plays its first audio track (\(first.trackID))",
                                remedy: "mix the microphones into one track first, or export that track to a file of its own", time: placed.range.start.seconds))
    }

    /// A clip drawn through a mask outside its transitions (an inset's rounded corners, a
    /// window): the timeline shows it whole. Named once per track.
    private mutating func noteMask(clip placed: Placed, transitions: [TimeRange]) {
        guard let source = placed.segment.source else { return }
        let masked = (videoComposition?.instructions ?? []).contains { instruction in
            instruction.timeRange.intersection(placed.range) != nil && !transitions.contains { $0.contains(instruction.timeRange) }
                && instruction.layerInstructions.contains { layer in
                    layer.mask != nil && composition.resolvedTrackID(layer.trackID, source: layer.source, mediaType: .video) == placed.trackID
                }
        }
        guard masked, explained.insert("mask \(placed.trackID)").inserted else { return }
        notes.append(Diagnostic(.notInTimeline, .warning, "clip \"\(Self.fileName(source.path))\" of video track \(placed.trackID) is drawn through a mask; the timeline leaves that out (editors show it whole)",
                                time: placed.range.start.seconds))
    }

    /// Layers, filters of the whole picture and ducking: one note each.
    mutating func noteWhatHasNoPlace() {
        if let videoComposition {
            for filter in videoComposition.filters.filters {
                notes.append(Diagnostic(.notInTimeline, .warning, "the video composition's filter \"\(filter.name)\" is left out of the timeline"))
            }
            if let tool = videoComposition.animationTool {
                for layer in Self.drawnLayers(under: tool.parentLayer, except: tool.videoLayer) {
                    notes.append(Diagnostic(.notInTimeline, .warning, "\(Self.describe(layer)) of the animation tool is left out of the timeline",
                                            remedy: "render it (export) or add it in the editor"))
                }
            }
        }
        for parameters in audioMix?.inputParameters ?? [] where parameters.ducking != nil {
            notes.append(Diagnostic(.notInTimeline, .warning, "the ducking of audio track \(parameters.trackID) is left out of the timeline"))
        }
    }

    private static func drawnLayers(under root: Layer, except video: Layer) -> [Layer] {
        root.sublayers.flatMap { layer -> [Layer] in
            if layer === video { return [] }
            let below = drawnLayers(under: layer, except: video)
            return below.isEmpty || layer is TextLayer || layer is SoundLayer ? [layer] : below
        }
    }

    private static func describe(_ layer: Layer) -> String {
        if let text = layer as? TextLayer { return "the text layer \(text.style.string.quotedForMessage(limit: 40))" }
        if layer is SoundLayer { return "a sound layer (waveform or spectrum)" }
        return layer.properties.name.map { "the layer \($0.quotedForMessage(limit: 40))" } ?? "a layer (\(layer.properties.contents == nil ? "shape or colour" : "image"))"
    }

    // MARK: Reading the video composition and the mix

    private func layerInstructions(of trackID: Int, over range: TimeRange) -> [LayerInstruction] {
        var seen = Set<ObjectIdentifier>()
        return (videoComposition?.instructions ?? []).filter { $0.timeRange.intersection(range).map { !$0.isEmpty } ?? false }
            .flatMap(\.layerInstructions)
            .filter { composition.resolvedTrackID($0.trackID, source: $0.source, mediaType: .video) == trackID }
            .filter { seen.insert(ObjectIdentifier($0)).inserted }
    }

    private func mixParameters(of trackID: Int) -> AudioMixInputParameters? {
        audioMix?.inputParameters.last { composition.resolvedTrackID($0.trackID, source: $0.source, mediaType: .audio) == trackID }
    }

    private func volumeChanges(of trackID: Int) -> [RampSpan] { mixParameters(of: trackID)?.volume.spans ?? [] }

    static func fileName(_ path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }
}

/// One change of a property timeline, with the value it starts from.
struct RampSpan {
    let start: MediaTime
    let duration: MediaTime
    let from: Double
    let to: Double
    /// The value in effect just before.
    let before: Double

    /// The ramp's range; a value set (no ramp) holds until `end`.
    func range(endingBy end: MediaTime) -> TimeRange {
        duration > .zero ? TimeRange(start: start, duration: duration) : TimeRange(from: start, to: MediaTime.max(start, end))
    }
}

extension PropertyTimeline where Value == Double {
    var spans: [RampSpan] {
        changes.map { RampSpan(start: $0.start, duration: $0.duration, from: $0.from, to: $0.to, before: value(at: $0.start - MediaTime(value: 1, timescale: MediaTime.defaultTimescale))) }
    }
}

extension PropertyTimeline {
    /// Where each change starts and how long it takes (values of any kind).
    fileprivate var timing: [RampSpan] {
        changes.map { RampSpan(start: $0.start, duration: $0.duration, from: 0, to: 0, before: 0) }
    }
}

extension PropertyTimeline where Value == AffineTransform {
    fileprivate var transformChanges: [(start: MediaTime, duration: MediaTime, to: AffineTransform)] {
        changes.map { ($0.start, $0.duration, $0.to) }
    }
}

extension AffineTransform {
    fileprivate func isClose(to other: AffineTransform) -> Bool {
        [a - other.a, b - other.b, c - other.c, d - other.d, (tx - other.tx) / 100, (ty - other.ty) / 100].allSatisfy { abs($0) < 1e-6 }
    }
}
