import MoonreelEngine

/// A timeline read from a file, made into the objects a script edits and exports: the first
/// video track through `JoinedSequence` (its clips upright and fitted, its transitions as
/// the video composition's ramps, a clip's own sound beside it when the first audio track
/// holds the same clips), every other audio track laid in the composition with its
/// crossfades and volume ramps. What is not read (a second video track) is in `notes`.
public struct TimelineAssembly {
    /// The tracks.
    public let composition: Composition
    /// Upright, fitted pictures and the transitions.
    public let videoComposition: VideoComposition
    /// Crossfades and volume ramps.
    public let audioMix: AudioMix
    /// The timeline's and its clips' markers, in the timeline's time.
    public let markers: [Timeline.Marker]
    /// What was not read or was read in another form.
    public let notes: [Diagnostic]

    /// Builds the edit `timeline` describes, opening each media file once.
    public static func make(_ timeline: Timeline) throws -> TimelineAssembly {
        var notes: [Diagnostic] = []
        var assets: [String: Asset] = [:]
        // A file with a second microphone plays its first audio track: said once per file
        // (kept apart from `notes`, which the audio tracks' laying holds while it opens files).
        var soundNoted = Set<String>(), soundNotes: [Diagnostic] = []
        func noteUnplayedSound(_ clip: Timeline.Clip, of opened: Asset, track: Timeline.Track) {
            guard soundNoted.insert(clip.path).inserted, let note = opened.unplayedSoundNote(as: "clip \(clip.name.quotedForMessage(limit: 40)) of track \(track.name)") else { return }
            soundNotes.append(note)
        }
        func asset(_ clip: Timeline.Clip, track: Timeline.Track) throws -> Asset {
            if let opened = assets[clip.path] { return opened }
            do {
                let opened = try Asset(path: clip.path)
                assets[clip.path] = opened
                return opened
            } catch {
                throw EngineError("clip \(clip.name.quotedForMessage(limit: 40)) of track \(track.name): \(error)", kind: (error as? EngineError)?.kind ?? .notFound)
            }
        }
        let timeline = try inFileTime(timeline, notes: &notes, asset: asset)
        let videoTracks = timeline.tracks.filter { $0.kind == .video && !$0.clips.isEmpty }
        var audioTracks = timeline.tracks.filter { $0.kind == .audio && !$0.clips.isEmpty }
        for extra in videoTracks.dropFirst() {
            notes.append(Diagnostic(.notInTimeline, .warning, "video track \(extra.name) is left out: Moonreel reads the first video track (with its transitions) and every audio track"))
        }
        guard let main = videoTracks.first ?? audioTracks.first else {
            throw EngineError("the timeline \(timeline.name.quotedForMessage(limit: 40)) has no clips", kind: .notFound)
        }

        let composition: Composition, videoComposition: VideoComposition, mix: AudioMix
        var markers = timeline.markers
        if main.kind == .video {
            markers += Self.clipMarkers(of: main)
            let withSound = audioTracks.first.map { $0.mirrors(main) } == true
            // The clips' own sound is played with the picture; its volume ramps are on the mirror's clips.
            let soundEffects = withSound ? audioTracks.removeFirst().clips.map(\.effects) : []
            if withSound { for clip in main.clips { noteUnplayedSound(clip, of: try asset(clip, track: main), track: main) } }
            let plan = try Self.pieces(of: main, notes: &notes)
            let items = try plan.pieces.map { piece -> SequenceItem in
                guard let clip = piece.clip else { return .gap(piece.played) }
                return .retimedClip(try asset(clip, track: main), piece.sourceRange, duration: piece.played)
            }
            let joined = try JoinedSequence.make(items, transitions: plan.transitions,
                                                 renderSize: timeline.renderSize.width >= 1 && timeline.renderSize.height >= 1 ? timeline.renderSize : nil,
                                                 placement: .fit, withSound: withSound)
            (composition, videoComposition, mix) = (joined.composition, joined.videoComposition, joined.audioMix)
            var clipNumber = 0
            for (piece, part) in zip(plan.pieces, joined.parts) {
                guard let clip = piece.clip else { continue }
                let sound = soundEffects.indices.contains(clipNumber) ? soundEffects[clipNumber] : []
                clipNumber += 1
                for effect in clip.effects + sound {
                    if effect.name == "Opacity", let track = part.videoTrack {
                        for layer in videoComposition.instructions.flatMap(\.layerInstructions) where layer.trackID == track.trackID {
                            layer.opacity.ramp(from: effect.from, to: effect.to, over: effect.range)
                        }
                    } else if effect.name == "Volume", let track = part.audioTrack {
                        mix.inputParameters.first { $0.trackID == track.trackID }?.setVolumeRamp(from: effect.from, to: effect.to, over: effect.range)
                    }
                }
            }
        } else {
            composition = Composition()
            videoComposition = VideoComposition(renderSize: timeline.renderSize, frameDuration: timeline.frameDuration)
            mix = AudioMix()
        }
        for track in audioTracks {
            markers += Self.clipMarkers(of: track)
            try lay(track, in: composition, mix: mix, notes: &notes) { clip in
                let opened = try asset(clip, track: track)
                noteUnplayedSound(clip, of: opened, track: track)
                return opened
            }
        }
        return TimelineAssembly(composition: composition, videoComposition: videoComposition, audioMix: mix, markers: markers, notes: notes + soundNotes)
    }

    /// `timeline` with each clip's source times (and marks) in its file's own time, where
    /// editors count them from the file's start timecode. A clip whose times lie before its
    /// file's timecode counts from the file's start (a hand-written or older timeline): read
    /// so, with a note.
    private static func inFileTime(_ timeline: Timeline, notes: inout [Diagnostic],
                                   asset: (Timeline.Clip, Timeline.Track) throws -> Asset) throws -> Timeline {
        var result = timeline, noted = Set<String>()
        for (index, track) in timeline.tracks.enumerated() {
            result.tracks[index].items = try track.items.map { item in
                guard case .clip(var clip) = item else { return item }
                let file = try asset(clip, track)
                guard let timecode = file.startTimecode else { return item }
                // The file's earliest media (sound may start before the picture) in the timecode's count.
                let earliest = timecode.editorTime(of: file.tracks.map(\.timeRange.start).min().map { MediaTime.min($0, .zero) } ?? .zero)
                guard clip.sourceRange.start >= earliest - timecode.frameDuration else {
                    if noted.insert(clip.path).inserted {
                        notes.append(Diagnostic(.notInTimeline, .note, "clip \(clip.name.quotedForMessage(limit: 40)) of track \(track.name) starts at \(shortSeconds(clip.sourceRange.start)) s, before its file's start timecode \(timecode) (\(shortSeconds(timecode.time)) s), so its times are read as times into the file",
                                                remedy: "count source times from the file's timecode, as editors write them"))
                    }
                    return item
                }
                let shift = timecode.time - timecode.origin
                clip.sourceRange.start = clip.sourceRange.start - shift
                clip.markers = clip.markers.map { Timeline.Marker(name: $0.name, range: TimeRange(start: $0.range.start - shift, duration: $0.range.duration), comment: $0.comment) }
                return .clip(clip)
            }
        }
        return result
    }

    /// The marks on a track's clips, which lie in each clip's media time (as OpenTimelineIO
    /// has them), moved to where the clip plays on the timeline.
    private static func clipMarkers(of track: Timeline.Track) -> [Timeline.Marker] {
        var at = MediaTime.zero, found: [Timeline.Marker] = []
        for item in track.items {
            switch item {
            case .gap(let length): at = at + length
            case .transition: break
            case .clip(let clip):
                let media = clip.sourceRange.duration
                let onTimeline = { (time: MediaTime) -> MediaTime in
                    let offset = time - clip.sourceRange.start
                    guard media != clip.duration, media.value > 0 else { return at + offset }
                    return at + (MediaTime(seconds: offset.seconds * clip.duration.seconds / media.seconds) ?? offset)
                }
                found += clip.markers.map { marker in
                    let start = onTimeline(marker.range.start)
                    return Timeline.Marker(name: marker.name, range: TimeRange(from: start, to: MediaTime.max(start, onTimeline(marker.range.end))), comment: marker.comment)
                }
                at = at + clip.duration
            }
        }
        return found
    }

    /// A track's items as pieces that overlap by their transitions: each clip's media
    /// reaches into its neighbours' time by the transition's part on their side.
    private struct Piece {
        let clip: Timeline.Clip?
        let sourceRange: TimeRange
        let played: MediaTime
        let start: MediaTime
    }

    private static func pieces(of track: Timeline.Track, notes: inout [Diagnostic]) throws -> (pieces: [Piece], transitions: [Transition]) {
        var raw: [(item: Timeline.Item, start: MediaTime)] = []
        var joins: [Int: TimelineTransition] = [:]
        var at = MediaTime.zero
        for item in track.items {
            switch item {
            case .transition(let t):
                if raw.isEmpty || joins[raw.count] != nil {
                    notes.append(Diagnostic(.notInTimeline, .warning, "the transition at \(shortNumber(at.seconds)) s of track \(track.name) has no item before it: left out", time: at.seconds))
                } else {
                    joins[raw.count] = t
                }
            case .clip(let clip):
                raw.append((item, at)); at = at + clip.duration
            case .gap(let length):
                if length.value > 0 { raw.append((item, at)); at = at + length }
            }
        }
        if let last = joins[raw.count] {
            notes.append(Diagnostic(.notInTimeline, .warning, "the \(last.kind.rawValue) at the end of track \(track.name) has no item after it: left out", time: at.seconds))
            joins[raw.count] = nil
        }
        var pieces: [Piece] = [], transitions: [Transition] = []
        for (index, entry) in raw.enumerated() {
            let into = joins[index]?.inOffset ?? .zero          // the transition before this item: its part before the cut is this item's lead
            let out = joins[index + 1]?.outOffset ?? .zero       // the transition after: its part after the cut
            switch entry.item {
            case .clip(let clip):
                let scale = { (t: MediaTime) in clip.sourceRange.duration == clip.duration ? t : t.multiplied(by: clip.sourceRange.duration, dividedBy: clip.duration) }
                let source = TimeRange(from: clip.sourceRange.start - scale(into), to: clip.sourceRange.end + scale(out))
                if source.start.isNegative {
                    throw EngineError("clip \(clip.name.quotedForMessage(limit: 40)) of track \(track.name) starts \(shortNumber(clip.sourceRange.start.seconds)) s into its media, too early for the \(shortNumber(into.seconds)) s of the transition before it", kind: .invalidArgument)
                }
                pieces.append(Piece(clip: clip, sourceRange: source, played: clip.duration + into + out, start: entry.start - into))
            case .gap(let length):
                pieces.append(Piece(clip: nil, sourceRange: TimeRange(start: .zero, duration: length + into + out), played: length + into + out, start: entry.start - into))
            case .transition:
                continue
            }
            if index > 0 {
                let t = joins[index]
                transitions.append(t.map { Transition($0.kind == .wipe ? .wipe : .dissolve, duration: $0.duration) } ?? .cut)
            }
        }
        // A transition's parts come from the two items around it: in the file, the part before the cut
        // belongs to the outgoing item's time and the part after to the incoming one's.
        return (pieces, transitions)
    }

    /// Lays an audio track's clips in the composition: on one track, or alternately on two
    /// when it has transitions (crossfaded by the mix), with its volume ramps.
    private static func lay(_ track: Timeline.Track, in composition: Composition, mix: AudioMix, notes: inout [Diagnostic],
                            asset: (Timeline.Clip) throws -> Asset) throws {
        var ignored: [Diagnostic] = []
        let plan = try pieces(of: track, notes: &ignored)
        notes += ignored
        let rolls = plan.transitions.contains { $0.duration.value > 0 } ? 2 : 1
        let tracks = try (0..<rolls).map { _ in try composition.addMutableTrack(mediaType: .audio) }
        let parameters = tracks.map { AudioMixInputParameters(trackID: $0.trackID) }
        mix.inputParameters += parameters
        var clipNumber = 0
        for (index, piece) in plan.pieces.enumerated() {
            guard let clip = piece.clip else { continue }
            let roll = clipNumber % rolls
            clipNumber += 1
            guard let sound = try asset(clip).tracks(withMediaType: .audio).first else {
                throw EngineError("clip \(clip.name.quotedForMessage(limit: 40)) of audio track \(track.name) has no sound", kind: .notFound)
            }
            try tracks[roll].insertTimeRange(piece.sourceRange, of: sound, at: piece.start)
            if piece.played != piece.sourceRange.duration {
                try tracks[roll].scaleTimeRange(TimeRange(start: piece.start, duration: piece.sourceRange.duration), toDuration: piece.played)
            }
            let volume = parameters[roll]
            if index > 0, plan.transitions[index - 1].duration.value > 0 {
                let fade = TimeRange(start: piece.start, duration: plan.transitions[index - 1].duration)
                volume.setVolume(0, at: piece.start)
                volume.setVolumeRamp(from: 0, to: 1, over: fade)
            } else {
                volume.setVolume(1, at: piece.start)
            }
            if index < plan.transitions.count, plan.transitions[index].duration.value > 0 {
                let end = piece.start + piece.played
                volume.setVolumeRamp(from: 1, to: 0, over: TimeRange(from: end - plan.transitions[index].duration, to: end))
            }
            for effect in clip.effects where effect.name == "Volume" {
                volume.setVolumeRamp(from: effect.from, to: effect.to, over: effect.range)
            }
        }
    }
}
