import MoonreelComposition
import MoonreelMedia

/// One piece of a joined sequence.
public enum SequenceItem {
    /// `range` of an asset; nil: all of it (a still image lasts `Asset.stillImageDuration`).
    case clip(Asset, TimeRange?)
    /// `range` of an asset played in `duration`: faster when shorter, slower when longer, as
    /// `scaleTimeRange` plays it (the sound keeps its pitch).
    case retimedClip(Asset, TimeRange, duration: MediaTime)
    /// A title card, shown for its `duration` over empty video time.
    case titleCard(TitleCard)
    /// Empty time, this long: the background and silence (a gap in an editor's timeline).
    case gap(MediaTime)
}

/// Clips, stills and title cards one after another with transitions between them, built as
/// ordinary objects a script can go on editing: a composition with the pieces on two
/// alternating video tracks and two audio tracks (A/B rolls, so a transition's two pieces
/// overlap in time), a video composition with one instruction for each piece alone and one
/// for each transition, and an audio mix that crossfades the sound under each transition.
/// Every picture is turned upright and fitted into the render size (aspect kept, centred), or
/// fills it (cropped) with `placement: .fill`.
public struct JoinedSequence {
    /// Where one item ended up.
    public struct Part {
        /// In composition time, transitions included.
        public let timeRange: TimeRange
        /// Tracks holding a clip's media (a title card has no video track of its own).
        public let videoTrack: CompositionTrack?
        /// The audio track holding a clip's sound; nil for a title card or a clip without sound.
        public let audioTrack: CompositionTrack?
        /// A title card's layer, in the animation tool's tree.
        public let layer: Layer?
        /// For a clip: where its own times are now (the part of the clip used, placed at
        /// `timeRange`); cues written for the clip go through it. Nil for a title card.
        public let timeMap: TimeMap?
    }

    /// The tracks: the pieces on two alternating video tracks, their sound on two audio tracks
    /// (A/B rolls).
    public let composition: Composition
    /// Upright, fitted pictures, one instruction per piece and per transition, and the title
    /// cards' layers in its animation tool.
    public let videoComposition: VideoComposition
    /// Volume ramps that crossfade the sound under each transition.
    public let audioMix: AudioMix
    /// Where each item ended up, in the order of the items.
    public let parts: [Part]
    /// What the joins do other than their transitions ask (a title card that cannot go
    /// under a clip an effect draws on top).
    public var notes: [Diagnostic] = []

    /// Joins `items`; `transitions[i]` goes between items i and i+1 (one per join).
    /// `renderSize`: nil takes the first clip's upright size (1920×1080 if there is none);
    /// `placement`: how pictures of another shape go into it (fitted by default);
    /// `withSound`: false leaves the clips' sound out (a montage laid over music).
    /// `drawing`: for a join (its number from 0, its time range and the frame's size), what a
    /// transition effect makes each side do, in place of the transition's own motions (the
    /// sound crossfades as under a dissolve); nil for a join it does not draw.
    public static func make(_ items: [SequenceItem], transitions: [Transition], renderSize: Size? = nil,
                            placement: VideoComposition.Placement = .fit, withSound: Bool = true,
                            drawing: TransitionDrawing? = nil) throws -> JoinedSequence {
        guard !items.isEmpty else { throw EngineError("nothing to join: give at least one clip, still or title card") }
        guard transitions.count == items.count - 1 else {
            throw EngineError("\(items.count) items need \(items.count - 1) transitions, got \(transitions.count)")
        }
        let pieces = try items.enumerated().map { try Piece($1, number: $0 + 1, withSound: withSound) }
        let starts = try startTimes(of: pieces, transitions: transitions)
        let size = renderSize ?? pieces.lazy.compactMap(\.shownSize).first ?? Size(width: 1920, height: 1080)

        let composition = Composition()
        var videoTracks: [CompositionTrack] = [], audioTracks: [CompositionTrack] = []
        func track(_ roll: Int, of type: MediaType, in tracks: inout [CompositionTrack]) throws -> CompositionTrack {
            while tracks.count <= roll { tracks.append(try composition.addMutableTrack(mediaType: type)) }
            return tracks[roll]
        }
        var placed: [(video: CompositionTrack, audio: CompositionTrack?)] = []
        for (index, piece) in pieces.enumerated() {
            let roll = index % 2, range = TimeRange(start: starts[index], duration: piece.duration)
            let video = try track(roll, of: .video, in: &videoTracks)
            var audio: CompositionTrack? = nil
            if let clip = piece.clip {
                try video.insertTimeRange(clip.range, of: clip.video, at: range.start)
                if let sound = clip.audio {
                    audio = try track(roll, of: .audio, in: &audioTracks)
                    try audio?.insertTimeRange(clip.range, of: sound, at: range.start)
                }
                if piece.duration != clip.range.duration {
                    for retimed in [video, audio].compactMap({ $0 }) {
                        try retimed.scaleTimeRange(TimeRange(start: range.start, duration: clip.range.duration), toDuration: piece.duration)
                    }
                }
            } else {
                try video.insertEmptyTimeRange(range)
            }
            placed.append((video, audio))
        }

        let frameRates = pieces.compactMap { $0.clip?.video.nominalFrameRate }.filter { $0 > 0 && $0 <= 240 }
        let videoComposition = VideoComposition(renderSize: size, sourceFrameRate: frameRates.max())
        var cardLayers: [Layer?] = Array(repeating: nil, count: pieces.count)
        if pieces.contains(where: { $0.card != nil }) {
            let overlay = try videoComposition.overlayContainer()
            for (index, piece) in pieces.enumerated() {
                guard let card = piece.card else { continue }
                let layer = try card.makeLayer(in: size)
                try layer.show(only: TimeRange(start: starts[index], duration: piece.duration))
                try overlay.addSublayer(layer)
                cardLayers[index] = layer
            }
        }

        // Instructions: each piece alone, then the transition into the next.
        let end = { (index: Int) in starts[index] + pieces[index].duration }
        /// A clip's layer instruction: upright and placed, cropped to the frame when it fills
        /// it (nil for a title card). The placement is set at the clip's start, whichever
        /// instruction it is in, so a script's own `setTransform` there replaces it everywhere.
        func layerInstruction(_ index: Int) -> (layer: LayerInstruction, placement: AffineTransform, shown: Rect)? {
            guard let clip = pieces[index].clip else { return nil }
            let start = starts[index]
            let stored = clip.video.naturalSize, upright = clip.video.shownTransform(preferredTransform: clip.video.preferredTransform)
            let transform = upright.concatenating(placement.transform(for: stored, upright, in: size))
            let layer = LayerInstruction(trackID: placed[index].video.trackID)
            layer.transform.set(transform, at: start)
            if let crop = placement.crop(for: stored, placed: transform, in: size) { layer.setCropRectangle(crop, at: start) }
            let shown = transform.apply(Rect(x: 0, y: 0, width: stored.width, height: stored.height))
                .clamped(to: Rect(x: 0, y: 0, width: size.width, height: size.height))
            return (layer, transform, shown)
        }
        var instructions: [VideoCompositionInstruction] = []
        var notes: [Diagnostic] = pieces.compactMap { $0.clip?.unplayedSound }
        let mix = AudioMix(inputParameters: audioTracks.map { AudioMixInputParameters(trackID: $0.trackID) })
        let volume = { (index: Int) in mix.inputParameters.first { $0.trackID == placed[index].audio?.trackID } }
        for index in pieces.indices {
            let alone = TimeRange(from: index > 0 ? end(index - 1) : starts[index],
                                  to: index + 1 < pieces.count ? starts[index + 1] : end(index))
            if alone.duration.value > 0 {
                let instruction = VideoCompositionInstruction(timeRange: alone)
                instruction.layerInstructions = [layerInstruction(index)?.layer].compactMap { $0 }
                instructions.append(instruction)
            }
            if index == 0 || transitions[index - 1].duration.value == 0 { volume(index)?.setVolume(1, at: starts[index]) }
            guard index + 1 < pieces.count else { continue }
            let transition = transitions[index], range = TimeRange(from: starts[index + 1], to: end(index))
            guard range.duration.value > 0 else { continue }
            let incomingOnTop = pieces[index + 1].card != nil
            let drawn = try drawing?(index, range, size)
            var (outgoing, incoming) = drawn ?? transition.motions(over: range, in: size, incomingOnTop: incomingOnTop)
            // The outgoing clip is drawn on top unless the incoming one asks to be or alone is
            // masked. A title card is above both, in the animation tool (a later card above an
            // earlier one); the built-in motions allow for that, an effect's are made to.
            let wantsIncomingOnTop = drawn != nil && TransitionMotion.incomingIsOnTop(outgoing, incoming)
            if drawn != nil, pieces[index + 1].card != nil, !wantsIncomingOnTop {
                incoming.goUnder(outgoing)
            } else if drawn != nil, pieces[index].card != nil, pieces[index + 1].card == nil, wantsIncomingOnTop {
                outgoing.goUnder(incoming)
                // A mask and fades have their inverse; a clip put on top to cover a moving card has not.
                if incoming.mask == nil, incoming.isOnTop {
                    notes.append(Diagnostic(.optionIgnored, .warning,
                        "join \(index + 1): the transition draws the incoming clip over the title card, but title cards are drawn over clips: where the two overlap the card shows",
                        remedy: "use a transition that masks or fades, or put the card after the clip", time: range.start.seconds))
                }
            }
            let instruction = VideoCompositionInstruction(timeRange: range)
            for (side, motion) in [(index, outgoing), (index + 1, incoming)] {
                if let clip = layerInstruction(side) {
                    try clip.layer.apply(motion, over: range, placement: clip.placement, shown: clip.shown, in: size)
                    instruction.layerInstructions.append(clip.layer)
                }
                try cardLayers[side]?.apply(motion, over: range, in: size)
            }
            if wantsIncomingOnTop { instruction.layerInstructions.reverse() }
            instructions.append(instruction)
            // The sound crossfades under the transition (dips through silence with the picture's fade through black).
            let (fadeOut, fadeIn) = transition.kind == .fadeThroughBlack ? range.halves : (range, range)
            volume(index)?.setVolumeRamp(from: 1, to: 0, over: fadeOut)
            volume(index + 1)?.setVolume(0, at: range.start)
            volume(index + 1)?.setVolumeRamp(from: 0, to: 1, over: fadeIn)
        }
        videoComposition.instructions = instructions
        let parts = pieces.indices.map { index in
            Part(timeRange: TimeRange(start: starts[index], duration: pieces[index].duration),
                 videoTrack: pieces[index].clip == nil ? nil : placed[index].video, audioTrack: placed[index].audio,
                 layer: cardLayers[index],
                 timeMap: pieces[index].clip.map { clip in
                     TimeMap(pieces: [.init(before: clip.range, after: TimeRange(start: starts[index], duration: pieces[index].duration))], end: nil)
                 })
        }
        var joined = JoinedSequence(composition: composition, videoComposition: videoComposition, audioMix: mix, parts: parts)
        joined.notes = notes
        return joined
    }

    /// Where each piece starts: where the previous one ends, less the transition between them.
    private static func startTimes(of pieces: [Piece], transitions: [Transition]) throws -> [MediaTime] {
        var starts: [MediaTime] = [.zero]
        for (index, piece) in pieces.enumerated() {
            let incoming = index > 0 ? transitions[index - 1].duration : .zero
            let outgoing = index < transitions.count ? transitions[index].duration : .zero
            guard incoming + outgoing <= piece.duration else {
                throw EngineError("item \(index + 1) (\(piece.name)) lasts \(shortNumber(piece.duration.seconds)) s, shorter than its transitions "
                                  + "(\(shortNumber(incoming.seconds)) s in + \(shortNumber(outgoing.seconds)) s out)")
            }
            if index + 1 < pieces.count { starts.append(starts[index] + piece.duration - outgoing) }
        }
        return starts
    }

    /// An item, checked, with what placing it needs.
    private struct Piece {
        struct Clip {
            let video: AssetTrack
            let audio: AssetTrack?
            let range: TimeRange
            /// Said when the asset has audio tracks past the first (a second microphone), which a join does not play.
            var unplayedSound: Diagnostic? = nil
        }
        let clip: Clip?
        let card: TitleCard?
        let duration: MediaTime
        let name: String

        init(_ item: SequenceItem, number: Int, withSound: Bool) throws {
            switch item {
            case .titleCard(let card):
                guard card.duration.value > 0 else { throw EngineError("item \(number) (title card) must last more than 0 s") }
                self.init(clip: nil, card: card, duration: card.duration, name: "title card \"\(card.title.prefix(30))\"")
            case .gap(let length):
                guard length.value > 0 else { throw EngineError("item \(number) (a gap) must last more than 0 s") }
                self.init(clip: nil, card: nil, duration: length, name: "gap")
            case .clip(let asset, let requested):
                try self.init(asset, requested ?? TimeRange(start: .zero, duration: asset.duration), playedIn: nil, number: number, withSound: withSound)
            case .retimedClip(let asset, let range, let played):
                guard played.value > 0 else { throw EngineError("item \(number) (\"\(asset.path)\") must play for more than 0 s") }
                try self.init(asset, range, playedIn: played, number: number, withSound: withSound)
            }
        }

        private init(_ asset: Asset, _ range: TimeRange, playedIn played: MediaTime?, number: Int, withSound: Bool) throws {
            guard let video = asset.tracks(withMediaType: .video).first else {
                throw EngineError("item \(number) (\"\(asset.path)\") has no video track; join takes video clips, still images and title cards", kind: .notFound)
            }
            guard range.duration.value > 0 else { throw EngineError("item \(number) (\"\(asset.path)\") must last more than 0 s") }
            try video.checkInsideAsset(range)
            self.init(clip: Clip(video: video, audio: withSound ? asset.tracks(withMediaType: .audio).first : nil, range: range,
                                 unplayedSound: withSound ? asset.unplayedSoundNote(as: "item \(number) (\"\(asset.path)\")") : nil),
                      card: nil, duration: played ?? range.duration, name: "\"\(asset.path)\"")
        }

        private init(clip: Clip?, card: TitleCard?, duration: MediaTime, name: String) {
            (self.clip, self.card, self.duration, self.name) = (clip, card, duration, name)
        }

        /// What the clip's picture shows (upright, its pixels' shape): nil for a title card.
        var shownSize: Size? { clip?.video.shownSize }
    }
}

extension Asset {
    /// A `soundLeftOut` warning naming the audio tracks past the first, which the edit
    /// helpers (`join`, `cutToBeats`, `pictureInPicture`) do not play: a second microphone of
    /// an OBS or camera recording. Nil for a file with one audio track or none.
    package func unplayedSoundNote(as name: String) -> Diagnostic? {
        let unplayed = tracks(withMediaType: .audio).dropFirst().map { String($0.trackID) }
        guard !unplayed.isEmpty else { return nil }
        let one = unplayed.count == 1
        return Diagnostic(.soundLeftOut, .warning,
                          "\(name) has \(unplayed.count + 1) audio tracks and only its first is played: track\(one ? "" : "s") \(unplayed.joined(separator: ", ")) \(one ? "is" : "are") not heard",
                          remedy: "mix them into one track first, or add the file with comp:insertTimeRange, which takes every track")
    }
}
