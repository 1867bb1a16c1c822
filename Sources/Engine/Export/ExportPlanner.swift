import CMoonFFmpeg
import MoonreelComposition
import MoonreelMedia
import MoonreelPlatform
import MoonreelRender

/// The encoders an export uses and the dynamic range it writes.
struct Encodings {
    /// nil: no encoded video (audio only, or an image sequence, which has its own writer).
    let video: VideoEncoding?
    let audio: AudioEncoding?
    let dynamicRange: DynamicRange
}

/// What an export will do, settled from its session's settings before any file is made.
/// Nothing in it changes afterwards, and making it changes nothing in the session.
struct ExportRequest {
    /// How the output is made.
    enum Strategy {
        /// Packets copied as they are (`Passthrough`).
        case passthrough
        /// Whole GOPs copied, the frames around the cuts re-encoded (`SmartCut`).
        case smartCut(SmartCutWriter)
        /// Every frame composed and encoded.
        case reencode
        /// A chunked render's piece without sound: the `encoded` output frames go through the
        /// encoder, and the file keeps those at `kept` (positions among them).
        case piece(encoded: Range<Int64>, kept: Range<Int64>)
        /// A chunked render's sound, alone, for the whole range.
        case sound
        /// A chunked render's last step: the pieces and the sound copied into the output.
        case join(ChunkLayout, hasSound: Bool)
        /// Nothing for this task of a chunked render (a piece already rendered, or past the last).
        case nothing
    }

    let output: any ExportOutput
    let container: OutputContainer
    let range: TimeRange
    /// The preset that encodes: the session's, or the one a smart cut falls back to.
    let preset: ExportPreset
    let encodings: Encodings
    let strategy: Strategy
    /// What planning settled that the user should hear (a smart cut that re-encodes).
    var notes: [Diagnostic]
    /// Tags the file carries besides the session's `metadata`: a chunk piece's identity.
    var tags: [String: String] = [:]
}

/// An export planned: its request, the pictures and sound its writer makes, and the file
/// settings every writer honours. Made once per export, before any frame is written.
struct ExportPlan {
    let request: ExportRequest
    let composition: Composition
    /// The pictures to compose (nil for the strategies that copy them, or without video).
    let video: VideoPlan?
    /// What planning the pictures settled that the user should hear (a size rounded, a rate chosen).
    let videoNotes: [Diagnostic]
    /// The sound to mix, its loudness not yet measured (`settledAudio` measures it).
    let audio: AudioPlan?
    /// The session's tags (a chunk piece adds its own, `request.tags`), with the output's
    /// start `timecode`.
    let metadata: [String: String]
    /// The source timecode the `timecode` tag carries over, for a writer whose output starts
    /// elsewhere than the range (Passthrough into Matroska starts at a keyframe).
    let carriedTimecode: Timecode?
    /// The index at the front of the file (`shouldOptimizeForNetworkUse`).
    let fastStart: Bool
    let fileLengthLimit: Int64?
    let memoryLimit: Int64?
}

/// An export session's settings as one value, taken when an export (or a dry run, or an
/// estimate) starts: what the planner reads, so planning depends on nothing that a script
/// can change while it runs and can be tried without a session.
struct ExportSettings {
    let composition: Composition
    let preset: ExportPreset
    var outputURL: String?
    var outputFileType: String?
    var videoComposition: VideoComposition?
    var audioMix: AudioMix?
    var timeRange: TimeRange?
    var shouldOptimizeForNetworkUse = false
    var metadata: [String: String] = [:]
    var overwrite = false
    var readFiles: InputRegistry?
    var hdr = ExportSession.HDRMode.auto
    var smartRendering: Bool?
    var audioSpliceFade = ExportSession.defaultAudioSpliceFade
    var loudness: LoudnessNormalization?
    var videoSettings: VideoSettings?
    var audioSettings: AudioSettings?
    var fileLengthLimit: Int64?
    var memoryLimit: Int64?
    var chunkTask: ChunkTask?
}

extension ExportSession {
    /// The settings as they are now, for the planner.
    var settings: ExportSettings {
        ExportSettings(composition: composition, preset: preset, outputURL: outputURL, outputFileType: outputFileType,
                       videoComposition: videoComposition, audioMix: audioMix, timeRange: timeRange,
                       shouldOptimizeForNetworkUse: shouldOptimizeForNetworkUse, metadata: metadata, overwrite: overwrite,
                       readFiles: readFiles, hdr: hdr, smartRendering: smartRendering, audioSpliceFade: audioSpliceFade,
                       loudness: loudness, videoSettings: videoSettings, audioSettings: audioSettings,
                       fileLengthLimit: fileLengthLimit, memoryLimit: memoryLimit, chunkTask: chunkTask)
    }
}

/// Turns an export's settings into an `ExportRequest` (and into the plans the render core
/// takes), reading the settings only: the one place an export's settings, preset and
/// container become encoders, with every combination that cannot work refused, saying what
/// would, before any file exists. Nothing here but `request` (which makes the output's
/// temporary file) touches the disk.
struct ExportPlanner {
    let settings: ExportSettings
    var composition: Composition { settings.composition }
    var preset: ExportPreset { settings.preset }

    /// Settings, combinations, output path and range, checked before any work. Without
    /// `makingOutput` (estimates) nothing is made or checked at the output path, an unset or
    /// unclear one counts as the preset's usual container, and no smart cut is looked for.
    func request(makingOutput: Bool = true) throws -> ExportRequest {
        try ExportError.Kind.invalidRequest.tag { () throws -> ExportRequest in
            let container: OutputContainer, outputPath: String
            if makingOutput {
                guard let path = settings.outputURL else { throw EngineError("set outputURL before exporting") }
                (outputPath, container) = (path, try self.container(for: path))
            } else {
                outputPath = settings.outputURL ?? ""
                container = (try? self.container(for: outputPath)) ?? settings.outputFileType.flatMap(OutputContainer.init(rawValue:))
                    ?? (preset.video == nil ? .m4a : .mp4)
            }
            if preset.isPassthrough, settings.loudness != nil {
                throw EngineError("loudness needs the audio mixed again, but Passthrough copies it as it is; use another preset (AppleM4A, HighestQuality…)", kind: .unsupported)
            }
            let range = try range()
            var notes: [Diagnostic] = []
            if let shared = sharedAudioTrack() { notes.append(shared) }
            if !preset.isPassthrough, preset.audioBitRate > 0, container.holdsAudio, let mixed = downmixNote() { notes.append(mixed) }
            // AppleM4A says sound only by its name, as AVFoundation's; another preset into .m4a may not mean it.
            if makingOutput, !container.holdsVideo, preset.name != "AppleM4A", composition.tracks(withMediaType: .video).contains(where: { $0.segments.contains { !$0.isEmpty } }) {
                notes.append(Diagnostic(.trackNotDrawn, .note, "\(outputPath): \(container.noun) holds no picture; the video was left out",
                                        remedy: "export to a container with video (mp4, mov) to keep it"))
            }
            if let requested = settings.timeRange, requested != range {
                let shown = shortSeconds
                notes.append(Diagnostic(.rangeClipped, .warning,
                                        "timeRange \(shown(requested.start))–\(shown(requested.end)) s reaches past the composition (0–\(shown(composition.duration)) s): "
                                        + "\(shown(range.start))–\(shown(range.end)) s is written, \(shown(range.duration)) s",
                                        remedy: "end timeRange within the composition"))
            }
            if !preset.isPassthrough { notes += rampsPastTheEnd() }
            var encodingPreset = preset
            var strategy = ExportRequest.Strategy.reencode
            if preset.isPassthrough {
                strategy = .passthrough
            } else if makingOutput, preset.isSmartCut || (settings.smartRendering == true && preset.video != nil) {
                let name = preset.isSmartCut ? "SmartCut" : "smartRendering"
                switch try smartCut(range: range, container: container, outputPath: outputPath) {
                case .success(let writer):
                    strategy = .smartCut(writer)
                    notes.append(Diagnostic(.encodingChanged, .note, "\(name) \(writer.summary)"))
                case .failure(let unavailable) where preset.isSmartCut:
                    let fallback = unavailable.isHEVC ? "HEVCHighestQuality" : "HighestQuality"
                    encodingPreset = ExportPreset.named(fallback) ?? preset
                    notes.append(Diagnostic(.encodingChanged, .warning, "SmartCut re-encodes everything with \(fallback) settings: \(unavailable)"))
                case .failure(let unavailable):
                    notes.append(Diagnostic(.encodingChanged, .note, "smartRendering encodes every frame: \(unavailable)"))
                }
            }
            let encodings = try encodings(for: container, preset: encodingPreset)
            if makingOutput, encodings.video != nil || container.holdsVideoCodecs, let dolbyVision = dolbyVisionNote(strategy) { notes.append(dolbyVision) }
            if makingOutput, let dynamic = hdr10PlusNote(encodings, strategy, range: range) { notes.append(dynamic) }
            if makingOutput, let deinterlaced = deinterlacingNote(strategy, range: range) { notes.append(deinterlaced) }
            if makingOutput { notes += sourceExtrasNotes() + composition.photoProfileDiagnostics() }
            if makingOutput, let toneMapped = toneMappingNote(encodings, strategy) { notes.append(toneMapped) }
            if makingOutput { notes += hdrMetadataNotes(encodings, strategy) }
            if makingOutput, let task = settings.chunkTask {
                let chunks = ChunkPlanner(planner: self, task: task)
                if let reason = chunks.refusal(strategy: strategy, container: container, encodings: encodings) {
                    guard task.role == .join else { return ExportRequest(nothing: outputPath, container: container, range: range, preset: preset, encodings: encodings) }
                    notes.append(Diagnostic(.encodingChanged, .note, "\(outputPath) is rendered whole by the join task, not in pieces: \(reason)"))
                } else {
                    var piece = try chunks.request(outputPath: outputPath, container: container, range: range, preset: encodingPreset, encodings: encodings)
                    piece.notes.insert(contentsOf: notes, at: 0)
                    return piece
                }
            }
            let output: any ExportOutput = !makingOutput ? PlannedOutput(path: outputPath) : try ExportError.Kind.outputUnavailable.tag {
                if let format = container.stillImageFormat {
                    return try ImageSequenceOutput(path: outputPath, format: format, overwrite: settings.overwrite,
                                                   inputs: composition.sourcePaths, readFiles: settings.readFiles)
                }
                return try SafeOutput(path: outputPath, overwrite: settings.overwrite, inputs: composition.sourcePaths, readFiles: settings.readFiles)
            }
            return ExportRequest(output: output, container: container, range: range, preset: encodingPreset,
                                 encodings: encodings, strategy: strategy, notes: notes)
        }
    }

    /// What the layers' text loses (cut to fit, past its box, or past the frame), told once per export
    /// that draws pictures or joins them (a chunked render's join says it for its pieces).
    func textNotes(_ request: ExportRequest) throws -> [Diagnostic] {
        switch request.strategy {
        case .reencode, .piece, .join: break
        case .passthrough, .smartCut, .sound, .nothing: return []
        }
        return try settings.videoComposition?.textDiagnostics(shownUntil: composition.duration) ?? []
    }

    /// What the request's writer needs: the pictures for the strategies that compose them
    /// (a chunked render's sound task plans them too, for their notes), the sound for those
    /// that mix it.
    func plan(_ request: ExportRequest) throws -> ExportPlan {
        var (video, videoNotes): (VideoPlan?, [Diagnostic]) = (nil, [])
        var audio: AudioPlan?
        switch request.strategy {
        case .reencode, .piece, .sound:
            (video, videoNotes) = try videoPlan(request)
            audio = try audioPlan(request)
        case .smartCut:
            audio = try audioPlan(request)
        case .passthrough, .join, .nothing:
            break
        }
        if let video, let encoding = request.encodings.video, let rounded = keyframeNote(encoding, frameDuration: video.frameDuration) {
            videoNotes.append(rounded)
        }
        if let audio, let encoding = request.encodings.audio { videoNotes += soundNotes(audio, encoding) }
        var metadata = settings.metadata
        var carriedTimecode: Timecode?
        switch try startTimecode(request, frameDuration: video?.frameDuration) {
        case .written(let label, let source): (metadata["timecode"], carriedTimecode) = (label, source)
        case .leftOut(let note): (metadata["timecode"], videoNotes) = (nil, videoNotes + [note])
        case .none: break
        }
        return ExportPlan(request: request, composition: composition, video: video, videoNotes: videoNotes, audio: audio,
                          metadata: metadata, carriedTimecode: carriedTimecode, fastStart: settings.shouldOptimizeForNetworkUse,
                          fileLengthLimit: settings.fileLengthLimit, memoryLimit: settings.memoryLimit)
    }

    /// What becomes of the sources' start timecodes (`Asset.startTimecode`) and of one the
    /// session's `metadata` asks for.
    enum StartTimecode {
        /// The label of the output's first frame, which the muxer writes (QuickTime's `tmcd`
        /// track, a Matroska tag), and the source timecode it comes from (nil: asked).
        case written(String, from: Timecode?)
        /// A timecode the output cannot carry, and why.
        case leftOut(Diagnostic)
    }

    /// The output's start timecode: the label of its first frame when it shows one stretch of
    /// one stamped file straight throughout (a trim, with layers over it or not) at the
    /// timecode's rate, as an editor's trimmed render keeps it; otherwise a note naming the
    /// timecode left out. Nil when no source has one or the output holds none. A timecode the
    /// session's `metadata` asks for is written instead, once it labels a frame at the
    /// output's rate.
    private func startTimecode(_ request: ExportRequest, frameDuration: MediaTime?) throws -> StartTimecode? {
        guard request.container.holdsMetadata else { return nil }
        let shown = videoSegments(in: request.range).filter { $0.source != nil }
        let rate = frameDuration ?? shown.first?.source?.nominalFrameDuration
        if let asked = settings.metadata["timecode"] {
            guard let rate, request.container.holdsVideo else {
                return .leftOut(Diagnostic(.optionIgnored, .note, "metadata timecode \(asked.quotedForMessage(limit: 40)) is not written: it labels video frames, and the output has none"))
            }
            guard Timecode(asked, frameDuration: rate, origin: .zero) != nil else {
                throw EngineError("metadata timecode \(asked.quotedForMessage(limit: 40)) labels no frame at \(framesPerSecond(rate)) fps: write HH:MM:SS:FF, or HH:MM:SS;FF for drop-frame at 29.97 or 59.94 fps (hours under 24)", kind: .invalidArgument)
            }
            return .written(asked, from: nil)
        }
        guard request.container.holdsVideo, let stamped = shown.lazy.compactMap(\.source).first(where: { $0.startTimecode != nil }),
              let timecode = stamped.startTimecode else { return nil }
        let leftOut = { (reason: String) in
            StartTimecode.leftOut(Diagnostic(.optionIgnored, .note, "\(Paths.name(of: stamped.path).quotedForMessage(limit: 60))'s timecode (\(timecode)) is not written: \(reason)",
                                             remedy: "set session.metadata.timecode to stamp one"))
        }
        guard Set(shown.compactMap(\.source?.path)).count == 1 else { return leftOut("the output shows more than one file") }
        guard shown.allSatisfy({ $0.sourceRange.duration == $0.targetRange.duration }) else { return leftOut("the output plays it faster or slower") }
        guard Set(shown.map { $0.sourceRange.start - $0.targetRange.start }).count == 1 else { return leftOut("the output shows several stretches of it") }
        var covered = request.range.start
        for segment in shown.sorted(by: { $0.targetRange.start < $1.targetRange.start }) where segment.targetRange.start <= covered {
            covered = MediaTime.max(covered, segment.targetRange.end)
        }
        guard covered >= request.range.end, let first = shown.first(where: { $0.targetRange.contains(request.range.start) }) else {
            return leftOut("part of the output shows none of it")
        }
        // Copied frames (Passthrough, SmartCut, a chunked render's join) keep their own timing.
        if let frameDuration, frameDuration != timecode.frameDuration {
            return leftOut("the output runs at \(framesPerSecond(frameDuration)) fps, and the timecode counts \(framesPerSecond(timecode.frameDuration))")
        }
        return .written(timecode.label(at: first.sourceTime(at: request.range.start)), from: timecode)
    }

    /// A note when `keyframeInterval` is not a whole number of the output's frames: keyframes
    /// fall on frames, so it is rounded to the nearest (0.05 s at 30 fps: every 2 frames, 0.067 s).
    private func keyframeNote(_ encoding: VideoEncoding, frameDuration: MediaTime) -> Diagnostic? {
        guard let asked = encoding.keyframeInterval, let frames = encoding.keyframeFrames(frameDuration: frameDuration),
              abs(asked / frameDuration.seconds - Double(frames)) > 1e-6 else { return nil }
        return Diagnostic(.timeRounded, .note, "videoSettings keyframeInterval \(shortNumber(asked)) s is not a whole number of frames at \(framesPerSecond(frameDuration)) fps: "
                          + "a keyframe is written every \(frames) frame\(frames == 1 ? "" : "s"), \(shortSeconds(frameDuration * Int64(frames))) s")
    }

    /// What the sound's encoding changes of what was asked or held: a bit rate outside those
    /// the codec writes at the rate and channels written (AAC's 6144 bits a channel per 1024
    /// samples, MP3's per sample-rate family, Opus's 256 kb/s a channel; the nearest is written,
    /// a warning), a sample rate under the sources' highest (a codec that takes no more, or
    /// sources of several rates mixed: a note), lossless sound of fewer bits than a source's
    /// (32-bit masters written as 24-bit FLAC or PCM: a note).
    private func soundNotes(_ plan: AudioPlan, _ encoding: AudioEncoding) -> [Diagnostic] {
        var notes: [Diagnostic] = []
        let (rate, channels) = (Int(plan.format.sampleRate), plan.format.channels)
        let kilohertz = { (rate: Int) in shortNumber(Double(rate) / 1000) + " kHz" }
        if let asked = settings.audioSettings?.bitRate, let written = encoding.codec.writtenBitRates(sampleRate: rate, channels: channels),
           !written.contains(asked) {
            let more = asked > written.upperBound
            let bound = more ? written.upperBound : written.lowerBound
            let remedy = more ? "ask for \(bound) or less, or \(encoding.codec == .opus ? "stereo" : "a higher sampleRate")" : "ask for \(bound) or more, or a lower sampleRate"
            notes.append(Diagnostic(.optionIgnored, .warning, "audioSettings bitRate \(asked) is \(more ? "more" : "less") than \(encoding.codec.displayName) carries at \(kilohertz(rate)) with \(channels) channel\(channels == 1 ? "" : "s"): \(more ? "at most" : "at least") \(bound) b/s is written",
                                    remedy: remedy))
        }
        let highest = composition.tracks(withMediaType: .audio).flatMap(\.segments).compactMap { $0.source?.sampleRate }.max() ?? 0
        if settings.audioSettings?.sampleRate == nil, rate < highest {
            notes.append(Diagnostic(.encodingChanged, .note, "the sound is resampled from \(kilohertz(highest)) to \(kilohertz(rate)) (what \(encoding.codec.rawValue) takes, or the sources' rates mixed)"))
        }
        if encoding.bits > 0, deepestLosslessBits > encoding.bits {
            notes.append(Diagnostic(.encodingChanged, .note, "the \(deepestLosslessBits)-bit sound is written as \(encoding.bits)-bit \(encoding.codec.rawValue.uppercased()), the deepest Moonreel writes"))
        }
        return notes
    }

    /// The bits per sample of the deepest lossless audio source (0: none).
    private var deepestLosslessBits: Int {
        composition.tracks(withMediaType: .audio).flatMap(\.segments).compactMap { $0.source?.losslessBits }.max() ?? 0
    }

    /// A warning for each video track with media, within `range`, where no layer instruction
    /// of `videoComposition` draws it.
    func undrawnTracks(_ videoComposition: VideoComposition, range: TimeRange) -> [Diagnostic] {
        composition.tracks(withMediaType: .video).compactMap { track -> Diagnostic? in
            for (number, instruction) in videoComposition.instructions.enumerated() {
                let drawn = instruction.layerInstructions.contains {
                    composition.resolvedTrackID($0.trackID, source: $0.source, mediaType: .video) == track.trackID
                }
                guard !drawn, let span = instruction.timeRange.intersection(range),
                      let hidden = track.segments.lazy.filter({ !$0.isEmpty }).compactMap({ $0.targetRange.intersection(span) }).first else { continue }
                return Diagnostic(.trackNotDrawn, .warning,
                                  "video track \(track.trackID) has media at \(hidden) that no layer instruction draws (videoComposition.instructions[\(number + 1)]): it is not shown",
                                  remedy: "add a layer instruction for it, or make the video composition after adding the track", time: hidden.start.seconds)
            }
            return nil
        }
    }

    /// A warning when several of the audio mix's input parameters name one track: only the
    /// last counts (as AVFoundation has it), so the others' volume and ducking are lost.
    func sharedAudioTrack() -> Diagnostic? {
        let parameters = settings.audioMix?.inputParameters ?? []
        let tracks = parameters.map { composition.resolvedTrackID($0.trackID, source: $0.source, mediaType: .audio) }
        guard let track = tracks.first(where: { id in tracks.filter { $0 == id }.count > 1 }) else { return nil }
        let places = tracks.indices.filter { tracks[$0] == track }.map { String($0 + 1) }
        return Diagnostic(.optionIgnored, .warning,
                          "audioMix's input parameters \(places.joined(separator: ", ")) all name audio track \(track): only \(places.last ?? "") is used, the others' volume and ducking are not",
                          remedy: "give each track one av.audioMixInputParameters with all its changes")
    }

    /// A note when a source has more channels than the output's two (5.1 mixed down to
    /// stereo: Moonreel writes mono or stereo), unless `audioSettings` chose the channels.
    func downmixNote() -> Diagnostic? {
        guard settings.audioSettings?.channels == nil else { return nil }
        let sources = composition.tracks(withMediaType: .audio).flatMap(\.segments).compactMap(\.source)
        guard let widest = sources.max(by: { $0.channelCount < $1.channelCount }), widest.channelCount > 2 else { return nil }
        let name = widest.path.split(separator: "/").last.map(String.init) ?? widest.path
        return Diagnostic(.soundLeftOut, .note,
                          "\(name.quotedForMessage(limit: 200)) has \(widest.channelCount) audio channels; the output is stereo (Moonreel writes mono or stereo), so they are mixed down to two")
    }

    /// `timeRange` clipped to the composition, or all of it.
    func range() throws -> TimeRange {
        let duration = composition.duration
        guard duration.value > 0 else { throw EngineError("the composition is empty: insert media before exporting") }
        let whole = TimeRange(start: .zero, duration: duration)
        return try settings.timeRange.map { requested -> TimeRange in
            guard requested.duration > .zero else { throw EngineError("timeRange \(requested) is empty: give it a duration over 0") }
            guard let clipped = requested.intersection(whole) else {
                throw EngineError("timeRange \(requested) is outside the composition (0…\(duration.seconds) s)")
            }
            return clipped
        } ?? whole
    }

    /// `outputFileType`, else the output name's extension (AppleM4A: m4a without one).
    func container(for path: String) throws -> OutputContainer {
        let known = ExportSession.fileTypes.joined(separator: ", ")
        if let type = settings.outputFileType {
            guard let container = OutputContainer(rawValue: type) else {
                throw EngineError("outputFileType must be one of \(known), got \"\(type)\"")
            }
            return container
        }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let ext = name.contains(".") ? name.split(separator: ".").last.map(String.init) : nil
        if let container = ext.flatMap(OutputContainer.init(extension:)) { return container }
        if preset.name == "AppleM4A" { return .m4a }
        throw EngineError("cannot tell the file type from \"\(path)\": end the name in one of \(known) (images: frames/%05d.png), or set outputFileType")
    }

    /// The smart cut of the range (smart rendering with a video composition), or why the
    /// composition cannot be copied.
    private func smartCut(range: TimeRange, container: OutputContainer, outputPath: String) throws -> Result<SmartCutWriter, SmartCutUnavailable> {
        if preset.isSmartCut, settings.videoSettings != nil || settings.fileLengthLimit != nil {
            throw EngineError("SmartCut copies the source's video: videoSettings and fileLengthLimit need a re-encoding preset such as HighestQuality", kind: .unsupported)
        }
        do {
            guard settings.videoSettings == nil, settings.fileLengthLimit == nil else {
                throw SmartCutUnavailable("videoSettings and fileLengthLimit need every frame encoded")
            }
            try SmartCutWriter.checkCopyable(into: container)
            let pictures = try smartRenderedPictures(range: range, container: container, outputPath: outputPath)
            let writer = try SmartCutWriter(composition: composition, range: range, container: container, rendering: pictures)
            if !preset.isSmartCut, let presetCodec = preset.video.flatMap({ VideoSettings.Codec(rawValue: $0.rawValue) }),
               presetCodec != writer.codec.videoCodec {
                throw SmartCutUnavailable("the source is \(writer.codec.videoCodec.rawValue), but \(preset.name) writes \(presetCodec.rawValue)")
            }
            return .success(writer)
        } catch let unavailable as SmartCutUnavailable {
            return .failure(unavailable)
        }
    }

    /// What smart rendering composes the encoded frames from: nil for a plain smart cut (the
    /// SmartCut preset without a video composition). The SmartCut preset keeps the sources'
    /// HDR (its encoded frames match the source); other presets render as they always do.
    private func smartRenderedPictures(range: TimeRange, container: OutputContainer, outputPath: String) throws -> VideoPlan? {
        guard !preset.isSmartCut || settings.videoComposition != nil else { return nil }
        guard settings.smartRendering != false else { throw SmartCutUnavailable("a video composition redraws every frame (smartRendering is off)") }
        var encodings = try encodings(for: container, preset: preset)
        if preset.isSmartCut {
            let ranges = Set(composition.tracks(withMediaType: .video).flatMap { $0.segments.compactMap { $0.source?.dynamicRange } })
            let kept = ranges.count == 1 && settings.hdr != .toneMap ? ranges.first ?? .sdr : .sdr
            encodings = Encodings(video: encodings.video, audio: nil, dynamicRange: kept)
        }
        let planned = ExportRequest(nothing: outputPath, container: container, range: range, preset: preset, encodings: encodings)
        guard var pictures = try videoPlan(planned).0 else { throw SmartCutUnavailable("the composition has no video to copy") }
        if preset.isSmartCut { pictures.encoderFormat = nil } // frames as composed, in the source's format
        return pictures
    }

    /// Settles codecs, quality, formats and the dynamic range, and refuses every
    /// combination that cannot work, saying what would, before any file exists.
    func encodings(for container: OutputContainer, preset encodingPreset: ExportPreset) throws -> Encodings {
        let videoSettings = settings.videoSettings, audioSettings = settings.audioSettings
        if preset.isPassthrough {
            guard videoSettings == nil, audioSettings == nil else {
                throw EngineError("Passthrough copies packets as they are: videoSettings and audioSettings need a re-encoding preset such as HighestQuality", kind: .unsupported)
            }
            guard settings.fileLengthLimit == nil else { throw EngineError("fileLengthLimit needs a re-encoding preset: Passthrough copies whole packets as they are", kind: .unsupported) }
            guard container.holdsVideoCodecs || container == .m4a else {
                throw EngineError("Passthrough copies packets: it writes mov, mp4, m4v, m4a, mkv or webm, not \(container.rawValue) (use a re-encoding preset)", kind: .unsupported)
            }
            return Encodings(video: nil, audio: nil, dynamicRange: .sdr)
        }
        let video = videoSettings ?? VideoSettings(), audio = audioSettings ?? AudioSettings()
        var videoEncoding: VideoEncoding? = nil
        var dynamicRange = DynamicRange.sdr
        if let presetVideo = encodingPreset.video, container.holdsVideo {
            if container.holdsVideoCodecs, let codec = videoCodec(video, presetVideo: presetVideo, container: container) {
                try container.check(codec)
                try tagged("videoSettings") { try video.check(for: codec) }
                dynamicRange = try outputDynamicRange(codec: codec, chosenFormat: video.chosenPixelFormat(for: codec))
                videoEncoding = try tagged("videoSettings") {
                    try VideoEncoding.make(codec, settings: video, preset: encodingPreset, container: container, keepsHDR: dynamicRange.isHDR)
                }
                if dynamicRange == .pq { videoEncoding?.hdrMetadata = HDRStaticMetadata.combined(pqSourceMetadata()).metadata }
            } else {
                guard videoSettings == nil else {
                    throw EngineError("videoSettings do not apply to \(container.noun) (its pictures have no codec settings): remove them, or write a video file")
                }
                dynamicRange = try outputDynamicRange(codec: nil, chosenFormat: nil)
                videoEncoding = container == .gif ? .gif : nil
            }
        } else if videoSettings != nil {
            throw EngineError(encodingPreset.video == nil ? "\(encodingPreset.name) writes audio only: remove videoSettings or choose a video preset"
                                                  : "m4a holds audio only: remove videoSettings, or write mp4, mov or mkv")
        }
        var audioEncoding: AudioEncoding? = nil
        if container.holdsAudio {
            let codec = audioCodec(audio, container: container)
            try container.check(codec)
            audioEncoding = try tagged("audioSettings") { try AudioEncoding.make(codec, settings: audio, preset: encodingPreset, sourceBits: deepestLosslessBits) }
        } else if audioSettings != nil {
            throw EngineError("\(container.noun) holds no sound: remove audioSettings (the audio is left out)")
        }
        return Encodings(video: videoEncoding, audio: audioEncoding, dynamicRange: dynamicRange)
    }

    /// The settings' own codec, else the preset's where the container takes it, else the
    /// container's first (webm: VP9).
    func videoCodec(_ settings: VideoSettings, presetVideo: ExportPreset.Video, container: OutputContainer?) -> VideoSettings.Codec? {
        let presetCodec = VideoSettings.Codec(rawValue: presetVideo.rawValue) ?? .h264
        guard let container, !container.videoCodecs.contains(presetCodec) else { return settings.codec ?? presetCodec }
        return settings.codec ?? container.videoCodecs.first
    }

    /// The settings' own codec, else AAC where the container takes it, else Opus (webm).
    func audioCodec(_ settings: AudioSettings, container: OutputContainer?) -> AudioSettings.Codec {
        settings.codec ?? (container.map { $0.audioCodecs.contains(.aac) } != false ? .aac : .opus)
    }

    /// Settings errors at export name the table they come from.
    private func tagged<T>(_ table: String, _ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as EngineError {
            throw EngineError("\(table): \(error.message)", kind: error.kind, subject: error.subject ?? table)
        }
    }

    /// SDR, or the HDR of the sources when it is kept (HLG unless every HDR source is PQ).
    /// HDR needs 10-bit video other than H.264: `auto` keeps it for HEVC and ProRes unless
    /// an 8-bit format is chosen, and for VP9 and AV1 when a 10-bit one is.
    func outputDynamicRange(codec: VideoSettings.Codec?, chosenFormat: VideoSettings.PixelFormat?) throws -> DynamicRange {
        let sources = Set(composition.tracks(withMediaType: .video).flatMap { $0.segments.compactMap { $0.source?.dynamicRange } })
        let kept: DynamicRange = sources == [.pq] || sources == [.pq, .sdr] ? .pq : .hlg
        let tenBit = chosenFormat.map { $0 != .yuv420p } ?? (codec == .hevc || codec == .prores)
        let canKeep = tenBit && codec != nil && codec != .h264
        switch settings.hdr {
        case .toneMap:
            return .sdr
        case .keep:
            guard canKeep else {
                let writes = codec.map { "8-bit \($0.rawValue)" } ?? "8-bit pictures"
                throw EngineError("keeping HDR (hdr \"keep\") needs an HEVC preset or 10-bit videoSettings (codec hevc, prores, vp9 or av1 with a 10-bit pixelFormat); this export writes \(writes)", kind: .unsupported)
            }
            return sources.contains(where: \.isHDR) ? kept : .sdr
        case .auto:
            return canKeep && sources.contains(where: \.isHDR) ? kept : .sdr
        }
    }

    /// Why an export finds nothing to write into `container`: a sound-only composition into a
    /// GIF was "no video or audio media".
    static func nothingToWrite(in container: OutputContainer) -> String {
        if !container.holdsVideo { return "the composition has no audio to export" }
        if !container.holdsAudio { return "the composition has no video to export, and \(container.noun) holds no sound" }
        return "the composition has no video or audio media"
    }

    /// What the export would write, for `plan()` and the estimates, and the notes that
    /// planning the pictures gives.
    func summary(of request: ExportRequest) throws -> (summary: ExportSummary, notes: [Diagnostic]) {
        let fileType = request.container.rawValue, output = request.output.path
        if case .passthrough = request.strategy {
            return (ExportSummary(output: output, fileType: fileType, duration: request.range.duration, preset: request.preset,
                                  video: nil, audio: nil, videoEncoding: nil, audioEncoding: nil, imageFormat: nil), [])
        }
        let (pictures, notes): (VideoPlan?, [Diagnostic]) = try ExportError.Kind.invalidRequest.tag { try videoPlan(request) }
        let sound = try ExportError.Kind.invalidRequest.tag { try audioPlan(request) }
        guard pictures != nil || sound != nil else {
            throw ExportError(.invalidRequest, Self.nothingToWrite(in: request.container))
        }
        let summary = ExportSummary(
            output: output, fileType: fileType, duration: request.range.duration, preset: request.preset,
            video: pictures.map { .init(width: $0.outputWidth, height: $0.outputHeight, frameDuration: $0.frameDuration,
                                         hdr: $0.outputColor.dynamicRange.isHDR ? $0.outputColor.dynamicRange.rawValue.uppercased() : nil,
                                         frameCount: $0.frameCount) },
            audio: sound.map { .init(sampleRate: Int($0.format.sampleRate), channels: $0.format.channels) },
            videoEncoding: request.encodings.video, audioEncoding: sound == nil ? nil : request.encodings.audio,
            imageFormat: request.container.stillImageFormat)
        return (summary, notes)
    }

    /// The video to render, or nil for none, and a note when the size had to change. A
    /// video composition of the user's own is rendered even over no video media (layers
    /// over a song, a title card over empty time); without one, only video media makes video.
    func videoPlan(_ request: ExportRequest) throws -> (VideoPlan?, notes: [Diagnostic]) {
        let hasVideoMedia = composition.tracks(withMediaType: .video).contains { $0.segments.contains { !$0.isEmpty } }
        let rendersVideo = request.encodings.video != nil || request.container.isImageSequence
        guard !preset.isPassthrough, rendersVideo, hasVideoMedia || settings.videoComposition != nil else { return (nil, []) }
        let videoComposition = settings.videoComposition ?? VideoComposition.properties(of: composition)
        let scaled = try videoComposition.scaledRenderSize()
        // As the pixel format's colour samples need: 4:2:0 even sides, 4:2:2 an even width;
        // 4:4:4 (ProRes 4444), a GIF's and an image's pixels are whole, at any size.
        let sides = request.encodings.video?.pixelSides ?? .whole
        let (width, height) = request.preset.outputSize(for: scaled, sides: sides)
        // Without a video composition of the script's, the size is the sources' (an odd-sized
        // VP9 file, a composition's naturalSize).
        // The default composition's own notes (a clip of another shape drawn at its own size):
        // a script's video composition said them when it was made.
        var notes: [Diagnostic] = settings.videoComposition == nil ? videoComposition.notes : []
        if let rounded = scaled.roundingNote(to: (width, height), sides: sides,
                                             name: settings.videoComposition == nil ? "the video's size" : "renderSize",
                                             fitting: request.preset.box(for: scaled), boxIsAsked: request.preset.namesItsSize) {
            notes.append(rounded)
        }
        let rendered = videoComposition.renderFrameDuration
        if let chosen = rendered.note { notes.append(chosen) }
        if request.container == .gif, let delays = Self.gifDelayNote(rendered.duration) { notes.append(delays) }
        if let gap = trackGap(request, frameDuration: rendered.duration) { notes.append(gap) }
        if let repeated = repeatedFrames(rendered.duration, range: request.range) { notes.append(repeated) }
        if let skipped = skippedFrames(rendered.duration, range: request.range) { notes.append(skipped) }
        if let squeezed = nonSquarePixels(videoComposition) { notes.append(squeezed) }
        notes += undrawnTracks(videoComposition, range: request.range)
        var plan = try VideoPlan.make(composition: composition, videoComposition: videoComposition, range: request.range,
                                      outputWidth: width, outputHeight: height, dynamicRange: request.encodings.dynamicRange)
        plan.encoderFormat = request.encodings.video?.renderedFormat
        plan.pace = request.encodings.video?.pace(for: plan) ?? .renderer
        return (plan, notes)
    }

    /// An `encodingChanged` note when HDR sources are written as SDR without being asked
    /// (`hdr = "auto"` with an 8-bit or H.264 output): the tone-mapped picture is what the
    /// sources were, in other colours. Asked (`hdr = "toneMap"`), nothing is said. Also
    /// when PQ sources are written as HLG, beside HLG ones.
    /// Copies (SmartCut, Passthrough) keep the sources' pictures, HDR included.
    private func toneMappingNote(_ encodings: Encodings, _ strategy: ExportRequest.Strategy) -> Diagnostic? {
        switch strategy {
        case .reencode, .piece, .join: break
        case .passthrough, .smartCut, .sound, .nothing: return nil
        }
        let hdr = Set(composition.tracks(withMediaType: .video).flatMap { $0.segments.compactMap { $0.source?.dynamicRange } }).filter { $0 != .sdr }
        if encodings.dynamicRange == .hlg, hdr.contains(.pq) {
            // One stream has one transfer: PQ clips beside HLG ones are converted to HLG.
            return Diagnostic(.encodingChanged, .note, "the PQ sources are converted to HLG, the transfer of the others: one video has one HDR transfer")
        }
        guard settings.hdr == .auto, let video = encodings.video, encodings.dynamicRange == .sdr, !hdr.isEmpty else { return nil }
        let kinds = hdr.map { $0 == .pq ? "PQ" : "HLG" }.sorted().joined(separator: " and ")
        let why = video.codec == .h264 ? "H.264 carries no HDR here" : "this export writes 8-bit video"
        return Diagnostic(.encodingChanged, .note, "the HDR (\(kinds)) sources are tone-mapped to SDR: \(why)",
                          remedy: "use HEVCHighestQuality (or 10-bit HEVC, ProRes, VP9 or AV1 videoSettings) to keep HDR, or set hdr = \"toneMap\" to ask for SDR")
    }

    /// The HDR10 metadata of each PQ video source (nil: it gives none), once per file and stream.
    private func pqSourceMetadata() -> [HDRStaticMetadata?] {
        var seen: [String: HDRStaticMetadata?] = [:]
        for source in composition.tracks(withMediaType: .video).flatMap({ $0.segments.compactMap(\.source) }) where source.dynamicRange == .pq {
            seen["\(source.streamIndex) \(source.path)"] = source.hdrMetadata
        }
        return seen.keys.sorted().compactMap { seen[$0] }
    }

    /// What a PQ output made of PQ sources cannot state of their HDR10 metadata as they do:
    /// they were mastered on different displays (the brightest is stated), a source gives no
    /// display (the others' is stated for it), or a source gives no light levels (they are
    /// left unknown). Copies keep the sources' own.
    private func hdrMetadataNotes(_ encodings: Encodings, _ strategy: ExportRequest.Strategy) -> [Diagnostic] {
        switch strategy {
        case .reencode, .piece, .join: break
        case .passthrough, .smartCut, .sound, .nothing: return []
        }
        guard encodings.dynamicRange == .pq, encodings.video != nil else { return [] }
        let sources = pqSourceMetadata()
        let combined = HDRStaticMetadata.combined(sources)
        let of = { (count: Int) in "\(count) of the \(sources.count) PQ sources \(count == 1 ? "gives" : "give")" }
        var notes: [Diagnostic] = []
        if let display = combined.metadata?.masteringDisplay {
            let stated = HDRStaticMetadata(masteringDisplay: display, contentLightLevel: nil).summary
            if combined.displaysDiffer {
                notes.append(Diagnostic(.encodingChanged, .note, "the PQ sources were mastered on different displays: the output states the brightest, \(stated)"))
            }
            if combined.withoutDisplay > 0 {
                notes.append(Diagnostic(.encodingChanged, .note, "\(of(combined.withoutDisplay)) no mastering display: the output states the others', \(stated), for them too"))
            }
        }
        if combined.withoutLightLevel > 0 {
            notes.append(Diagnostic(.optionIgnored, .note, "the output's MaxCLL and MaxFALL are left unknown (0): \(of(combined.withoutLightLevel)) none, and may be the brightest"))
        }
        return notes
    }

    /// What the sources hold besides the picture and sound an export writes, which no way of
    /// writing carries over (`SourceExtras`): chapters and subtitle tracks (an `optionIgnored`
    /// warning: a viewer misses them), cover art and tags a person wrote, such as a title (a
    /// note). Tags the session's own `metadata` writes are not counted.
    private func sourceExtrasNotes() -> [Diagnostic] {
        var byPath: [String: SourceExtras] = [:]
        for source in composition.tracks.flatMap({ $0.segments.compactMap(\.source) }) { byPath[source.path] = source.extras }
        guard let first = byPath.keys.sorted().first(where: { byPath[$0] != SourceExtras() }) else { return [] }
        let all = byPath.values
        let count = { (n: Int, one: String, many: String) in n == 0 ? nil : n == 1 ? one : "\(n) \(many)" }
        let content = [count(all.reduce(0) { $0 + $1.chapters }, "a chapter", "chapters"),
                       count(all.reduce(0) { $0 + $1.subtitleTracks }, "a subtitle track", "subtitle tracks")].compactMap { $0 }
        let written = Set((settings.metadata ?? [:]).keys.compactMap { SourceExtras.meaning(of: $0) })
        let tags = all.reduce(Set<String>()) { $0.union($1.tags) }.subtracting(written).sorted()
        let details = [count(all.reduce(0) { $0 + $1.coverPictures }, "cover art", "cover pictures"),
                       tags.isEmpty ? nil : "tags (\(tags.joined(separator: ", ")))"].compactMap { $0 }
        let others = byPath.values.count { $0 != SourceExtras() } > 1 ? " (and other sources)" : ""
        let name = Paths.name(of: first).quotedForMessage(limit: 60) + others
        var notes: [Diagnostic] = []
        if !content.isEmpty {
            notes.append(Diagnostic(.optionIgnored, .warning, "\(name) has \(content.joined(separator: " and ")), which the output does not keep",
                                    remedy: "copy them back with ffmpeg -i OUTPUT -i SOURCE -map 0 -map 1:s? -map_chapters 1 -c copy"))
        }
        if !details.isEmpty {
            notes.append(Diagnostic(.optionIgnored, .note, "\(name) has \(details.joined(separator: " and ")), which the output does not keep",
                                    remedy: "set session.metadata to write the tags"))
        }
        return notes
    }

    /// An `optionIgnored` warning when a source carries Dolby Vision, which no way of writing
    /// keeps: a copy (Passthrough, SmartCut) drops its configuration record, an encoder works
    /// from the base layer. Either way the output plays the base layer (HDR10 or HLG), as
    /// players without Dolby Vision show it; nil without Dolby Vision or video.
    private func dolbyVisionNote(_ strategy: ExportRequest.Strategy) -> Diagnostic? {
        let profiles = Set(composition.tracks(withMediaType: .video).flatMap { $0.segments.compactMap { $0.source?.dolbyVision } })
        guard let profile = profiles.sorted().first else { return nil }
        let how: String
        switch strategy {
        case .passthrough: how = "Passthrough"
        case .smartCut: how = preset.isSmartCut ? "SmartCut" : "smartRendering"
        case .reencode, .piece, .join: how = "the export"
        case .sound, .nothing: return nil
        }
        return Diagnostic(.optionIgnored, .warning, "\(how) does not keep the source's Dolby Vision (profile \(profile)): the output plays its base layer (HDR10 or HLG), as players without Dolby Vision show it")
    }

    /// The video tracks' segments that show within `range` of the composition.
    private func videoSegments(in range: TimeRange) -> [TrackSegment] {
        composition.tracks(withMediaType: .video).flatMap(\.segments).filter { $0.targetRange.intersection(range) != nil }
    }

    /// An `encodingChanged` note when interlaced sources (a camcorder's 1080i, DV) are drawn:
    /// their fields are made whole frames (bwdif, a frame for each frame, as players show
    /// them) and the output is progressive. Passthrough keeps the fields (SmartCut refuses
    /// sources whose container says they are interlaced). Only the sources within `range` count.
    private func deinterlacingNote(_ strategy: ExportRequest.Strategy, range: TimeRange) -> Diagnostic? {
        switch strategy {
        case .reencode, .piece, .join: break
        case .passthrough, .smartCut, .sound, .nothing: return nil
        }
        let interlaced = Set(videoSegments(in: range).compactMap { $0.source?.fieldOrder.isInterlaced == true ? $0.source?.path : nil })
        guard let first = interlaced.sorted().first else { return nil }
        let others = interlaced.count > 1 ? " (and \(interlaced.count - 1) more)" : ""
        return Diagnostic(.encodingChanged, .note, "\(Paths.name(of: first).quotedForMessage(limit: 60))\(others) is interlaced: its fields are made whole frames (bwdif, a frame for each frame), and the output is progressive")
    }

    /// An `optionIgnored` warning when a source's HDR10+ dynamic metadata (a tone-mapping curve
    /// per scene) is lost: a re-encode that keeps PQ states HDR10's static metadata only (the
    /// encoder writes no HDR10+), and SmartCut's re-encoded frames lose it where its copied
    /// ones keep it. Passthrough keeps it; an output tone-mapped to SDR or converted to HLG
    /// says so already. Only the sources within `range` count.
    private func hdr10PlusNote(_ encodings: Encodings, _ strategy: ExportRequest.Strategy, range: TimeRange) -> Diagnostic? {
        guard videoSegments(in: range).contains(where: { $0.source?.hdr10Plus == true }) else { return nil }
        let what = "HDR10+ dynamic metadata (SMPTE ST 2094-40, a tone-mapping curve per scene)"
        switch strategy {
        case .passthrough, .sound, .nothing:
            return nil
        case .smartCut(let writer):
            let name = preset.isSmartCut ? "SmartCut" : "smartRendering"
            if writer.copiedFrameCount == 0 {
                return Diagnostic(.optionIgnored, .warning, "\(name) encodes every frame here (no whole GOP lies inside the cut), losing the source's \(what)",
                                  remedy: "use Passthrough to keep it")
            }
            return Diagnostic(.optionIgnored, .warning, "\(name)'s re-encoded frames around the cuts lose the source's \(what); the \(writer.copiedFrameCount) copied ones keep it",
                              remedy: "cut on keyframes, or use Passthrough, to keep it throughout")
        case .reencode, .piece, .join:
            guard encodings.dynamicRange == .pq, encodings.video != nil else { return nil }
            return Diagnostic(.optionIgnored, .warning, "the export does not keep the source's \(what): the output is HDR10, with its static metadata, which HDR10+ screens tone-map as a whole",
                              remedy: "use Passthrough (or SmartCut, which keeps it in the frames it copies)")
        }
    }

    /// A GIF holds each frame for whole hundredths of a second, and players show 1 (or 0) as
    /// 10: a `timeRounded` note when the frame duration is not a whole number of hundredths
    /// (30 fps: frames of 3 and 4 alternate), a warning when it is under 2 (60 fps plays
    /// about three times too slowly in browsers and ffmpeg).
    static func gifDelayNote(_ frameDuration: MediaTime) -> Diagnostic? {
        let hundredths = frameDuration.seconds * 100
        let rate = shortNumber((100 / hundredths * 100).rounded() / 100)
        if hundredths < 1.995 {
            return Diagnostic(.timeRounded, .warning, "a GIF at \(rate) fps holds frames for \(shortNumber((hundredths * 100).rounded() / 100)) hundredths of a second, written as 1 or 2; players show a frame of 1 hundredth for 10, so it plays slower than the video",
                              remedy: "set the video composition's frameDuration to 1/50 or longer (1/25 and 1/20 are even)")
        }
        guard abs(hundredths - hundredths.rounded()) > 0.005 else { return nil }
        return Diagnostic(.timeRounded, .note, "a GIF holds frames for whole hundredths of a second: at \(rate) fps (\(shortNumber((hundredths * 100).rounded() / 100)) hundredths) frames of \(Int(hundredths.rounded(.down))) and \(Int(hundredths.rounded(.up))) alternate",
                          remedy: "set frameDuration to 1/25, 1/20 or 1/10 for even frames")
    }

    /// An `optionIgnored` warning naming the clips stored with non-square pixels (anamorphic
    /// DV or HDV: 720×576 shown 16:9): they are drawn with square ones, so squeezed. Phones
    /// record square pixels; a file that says nothing is taken as square.
    /// A clip drawn stretched by its pixels' shape (its layer instruction's transform scales
    /// the stored x that much more than y, as the remedy says) is not squeezed.
    private func nonSquarePixels(_ videoComposition: VideoComposition) -> Diagnostic? {
        var found: [String: SegmentSource] = [:]
        for track in composition.tracks(withMediaType: .video) {
            for segment in track.segments {
                guard let source = segment.source, !source.isStillImage, abs(source.pixelAspectRatio - 1) > 0.01 else { continue }
                let start = segment.targetRange.start
                let layer = videoComposition.instructions.first { $0.timeRange.contains(start) }?.layerInstructions.first {
                    composition.resolvedTrackID($0.trackID, source: $0.source, mediaType: .video) == track.trackID
                }
                let drawn = layer.map { $0.transform.value(at: start) }.map { hypot($0.a, $0.b) / max(hypot($0.c, $0.d), 1e-9) } ?? 1
                guard abs(drawn / source.pixelAspectRatio - 1) > 0.01 else { continue }
                found[source.path] = source
            }
        }
        guard let (path, source) = found.min(by: { $0.key < $1.key }) else { return nil }
        let ratio = source.pixelAspectRatio, width = source.naturalSize.width
        let more = found.count > 1 ? " (and \(found.count - 1) more)" : ""
        return Diagnostic(.optionIgnored, .warning,
                          "\(Paths.name(of: path).quotedForMessage(limit: 60))\(more) stores pixels \(shortNumber((ratio * 100).rounded() / 100)) times as wide as high: it is drawn with square pixels, \(shortNumber(width)) px wide where it shows \(shortNumber((width * ratio).rounded())), squeezed",
                          remedy: "stretch it with its layer instruction's transform (x scaled by \(shortNumber((ratio * 1000).rounded() / 1000))), or convert it first (ffmpeg -vf scale=iw*sar:ih,setsar=1)")
    }

    /// A `frameRepeated` note naming the clips whose own rate is under the output's (by more
    /// than 5 %): each of their pictures is shown in several output frames (a 10.5 fps phone
    /// clip in a 30 fps render: about three times). Slow motion made with scaleTimeRange is not
    /// counted here: its rate is the script's choice.
    private func repeatedFrames(_ frameDuration: MediaTime, range: TimeRange) -> Diagnostic? {
        let output = 1 / frameDuration.seconds
        var slower: [String: Double] = [:]
        for segment in videoSegments(in: range) {
            guard let source = segment.source, !source.isStillImage, source.nominalFrameRate > 0,
                  segment.sourceRange.duration == segment.targetRange.duration, source.nominalFrameRate < output * 0.95 else { continue }
            slower[source.path] = source.nominalFrameRate
        }
        guard !slower.isEmpty else { return nil }
        let rate = { (value: Double) in shortNumber((value * 10).rounded() / 10) }
        let named = slower.sorted { $0.key < $1.key }.prefix(3).map { "\(Paths.name(of: $0.key).quotedForMessage(limit: 60)) (\(rate($0.value)) fps)" }
            .joined(separator: ", ") + (slower.count > 3 ? " and \(slower.count - 3) more" : "")
        let most = slower.values.min() ?? output
        let (shows, their) = slower.count == 1 ? ("shows each of its", "its") : ("show each of their", "their")
        return Diagnostic(.frameRepeated, .note, "rendered at \(framesPerSecond(frameDuration)) fps, \(named) \(shows) pictures in several frames (up to \(rate(output / most)) times)",
                          remedy: "set the video composition's frameDuration to \(their) rate to keep one picture a frame")
    }

    /// A `framesDropped` note when pictures of a clip fall between the output's frames and are
    /// never shown: a 25 fps clip at 24 fps left one in 25 out, at 10 fps three in five, and a
    /// screen recording written in bursts 42 of its 63 at its own average rate, without a word.
    /// Counted exactly where the file lists when each frame shows (`AssetTrack.frameTimes`),
    /// else estimated from the rates when the clip's (times its speed) is over the output's by
    /// more than 1 % (under 1 % is a rate and its NTSC twin, or a phone's average). A clip sped
    /// up with scaleTimeRange counts too, its speed named: the script asked for the speed, not
    /// for the pictures to go (at 30 fps, 2× shows 90 of 180). Slow motion is not counted.
    private func skippedFrames(_ frameDuration: MediaTime, range: TimeRange) -> Diagnostic? {
        let output = 1 / frameDuration.seconds
        var leftOut: [String: (count: Int, of: Int, exact: Bool, speed: Double)] = [:]
        for segment in videoSegments(in: range).map({ $0.clipped(to: range) }) {
            // Slow motion is left out: counting walks every output frame, and 9.9e8 s of it took minutes.
            guard let source = segment.source, !source.isStillImage, segment.targetRange.duration.value > 0,
                  segment.sourceRange.duration >= segment.targetRange.duration else { continue }
            let speed = segment.sourceRange.duration.seconds / segment.targetRange.duration.seconds
            let found: (count: Int, of: Int, exact: Bool)
            if let times = AssetTrack.frameTimes(path: source.path, streamIndex: source.streamIndex) {
                let (count, of) = Self.picturesLeftOut(times, segment: segment, frameDuration: frameDuration, firstFrame: range.start)
                found = (count, of, true)
            } else if source.nominalFrameRate * speed > output * 1.01 {
                let pictures = segment.sourceRange.duration.seconds * source.nominalFrameRate
                found = (Int((pictures - segment.targetRange.duration.seconds * output).rounded()), Int(pictures.rounded()), false)
            } else {
                continue
            }
            guard found.count > 0 else { continue }
            let sum = leftOut[source.path] ?? (0, 0, true, 1)
            leftOut[source.path] = (sum.count + found.count, sum.of + found.of, sum.exact && found.exact, max(sum.speed, speed))
        }
        guard let (path, most) = leftOut.max(by: { ($0.value.count, $1.key) < ($1.value.count, $0.key) }) else { return nil }
        let others = leftOut.count > 1 ? " (and \(leftOut.count - 1) more)" : ""
        let fps = shortNumber((output * 100).rounded() / 100)
        // Rounded to a hundredth, a speed of 1 is a clip at its own pace.
        let speed = (most.speed * 100).rounded() / 100
        let shown = speed > 1 ? " shown at \(shortNumber(speed))×" : ""
        return Diagnostic(.framesDropped, .note, "rendered at \(fps) fps, \(Paths.name(of: path).quotedForMessage(limit: 60))\(others)\(shown) leaves out "
                          + "\(most.exact ? "" : "about ")\(most.count) of its \(most.of) pictures: they fall between frames",
                          remedy: speed > 1 ? "set the video composition's frameDuration to a shorter one to show more of them, or speed the clip up less"
                                            : "set the video composition's frameDuration to a shorter one to show them")
    }

    /// Of a segment's pictures (their times, in order), how many no output frame shows, and
    /// how many it holds. Output frames start at `firstFrame`, one each `frameDuration`, and
    /// each shows the picture `TrackSegment.sourceTimeShown` chooses.
    static func picturesLeftOut(_ times: [MediaTime], segment: TrackSegment, frameDuration: MediaTime, firstFrame: MediaTime) -> (count: Int, of: Int) {
        let source = segment.sourceRange, target = segment.targetRange
        /// The first picture at or after `time` (the times are in order).
        func firstIndex(from time: MediaTime) -> Int {
            var (low, high) = (0, times.count)
            while low < high {
                let middle = (low + high) / 2
                if times[middle] < time { low = middle + 1 } else { high = middle }
            }
            return low
        }
        let (first, end) = (firstIndex(from: source.start), firstIndex(from: source.end))
        guard end > first, frameDuration > .zero else { return (0, 0) }
        // The first output frame in the segment, then each after it; the pictures they show
        // only move forward, so each new one is counted once.
        let estimate = ((target.start - firstFrame).seconds / frameDuration.seconds).rounded(.down)
        guard estimate.isFinite, abs(estimate) < 1e15 else { return (0, 0) }
        var frame = Int64(estimate), index = first, shown = 0, lastShown = -1
        let time = { (frame: Int64) in firstFrame + frameDuration * frame }
        while time(frame) < target.start { frame += 1 }
        while time(frame) < target.end {
            let at = segment.sourceTimeShown(at: time(frame), frameDuration: frameDuration)
            while index + 1 < end, times[index + 1] <= at { index += 1 }
            // Before its first picture, a frame shows the one before the segment (or, at the
            // start of the file, this first one).
            if index != lastShown, times[index] <= at || index == 0 { (shown, lastShown) = (shown + 1, index) }
            frame += 1
        }
        return (end - first - shown, end - first)
    }

    /// A `trackShorter` note when the picture and the sound of an export end more than a
    /// frame apart: what fills the rest (the last picture held, black, or silence) was not in
    /// the sources. A whole asset inserted whose sound outlasts its picture by a second held
    /// the last frame that second, without a word; a take's sound 21 ms longer is within a frame.
    private func trackGap(_ request: ExportRequest, frameDuration: MediaTime) -> Diagnostic? {
        guard request.encodings.audio != nil, request.container.holdsAudio else { return nil }
        let ends = { (type: MediaType) -> (media: MediaTime, placed: MediaTime)? in
            let segments = composition.tracks(withMediaType: type).flatMap(\.segments).filter { !$0.isEmpty }
            // A segment asking for more than its source holds ends, as media, where the source does.
            let media = segments.map { segment -> MediaTime in
                guard let source = segment.source, !source.isStillImage, segment.sourceRange.duration == segment.targetRange.duration,
                      segment.sourceRange.end > source.mediaRange.end else { return segment.targetRange.end }
                return segment.targetRange.start + MediaTime.max(.zero, source.mediaRange.end - segment.sourceRange.start)
            }.max()
            guard let media, let placed = segments.map(\.targetRange.end).max() else { return nil }
            let inRange = { (time: MediaTime) in MediaTime.max(.zero, MediaTime.min(time, request.range.end) - request.range.start) }
            return (inRange(media), inRange(placed))
        }
        guard let pictures = ends(.video), let sound = ends(.audio), abs((pictures.media - sound.media).seconds) > frameDuration.seconds else { return nil }
        // A gap under a tenth of a second in milliseconds, the ends to match: at 1000 fps, sound
        // 4 ms short was "the sound ends at 3 s, 0 s before the picture".
        let isShort = abs((pictures.media - sound.media).seconds) < 0.1
        let seconds = { (time: MediaTime) in isShort ? shortNumber((time.seconds * 1000).rounded() / 1000) : shortNumber((time.seconds * 100).rounded() / 100) }
        let gap = { (time: MediaTime) in isShort ? "\(Int((time.seconds * 1000).rounded())) ms" : "\(seconds(time)) s" }
        let message = sound.media < pictures.media
            ? "the sound ends at \(seconds(sound.media)) s, \(gap(pictures.media - sound.media)) before the picture: silence from there"
            : "the picture ends at \(seconds(pictures.media)) s, \(gap(sound.media - pictures.media)) before the sound: "
                + (pictures.placed > pictures.media ? "its last frame stays on from there" : "black from there")
        return Diagnostic(.trackShorter, .note, message, remedy: "set timeRange, or trim the longer track, if that is not what you want",
                          time: MediaTime.min(pictures.media, sound.media).seconds)
    }

    /// The audio to mix, or nil for none.
    func audioPlan(_ request: ExportRequest) throws -> AudioPlan? {
        guard let encoding = request.encodings.audio else { return nil }
        var plan = try AudioPlan.make(composition: composition, audioMix: settings.audioMix, range: request.range,
                                      spliceFade: settings.audioSpliceFade, loudness: settings.loudness) {
            encoding.outputFormat(from: $0, settings: self.settings.audioSettings ?? AudioSettings())
        }
        // Lossless sound has no encoder overshoot to leave room for.
        if encoding.bits > 0 { plan?.ceiling = 1 }
        return plan
    }
}

extension ExportRequest {
    /// A request that writes nothing (planning, or a chunked render's task with nothing to do).
    init(nothing path: String, container: OutputContainer, range: TimeRange, preset: ExportPreset, encodings: Encodings, notes: [Diagnostic] = []) {
        self.init(output: PlannedOutput(path: path), container: container, range: range, preset: preset,
                  encodings: encodings, strategy: .nothing, notes: notes)
    }
}

extension ExportRequest.Strategy {
    var isSound: Bool {
        if case .sound = self { return true }
        return false
    }
}

/// A place holder for the output while only planning: nothing is written or moved.
private struct PlannedOutput: ExportOutput {
    let path: String
    var temporaryPath: String { path }
    func commit() throws {}
    func discard() {}
}

extension VideoPlan {
    /// The most source pixels decoded per second of output by the instructions' layers at
    /// once (each source at its own frame rate, sped-up segments faster; photos are decoded
    /// once and count nothing).
    func decodedPixelsPerSecond(outputRate: Double) -> Double {
        instructions.map { instruction in
            instruction.layers.map { layer in
                layer.segments.lazy.filter { $0.targetRange.intersection(instruction.timeRange) != nil }.map { segment -> Double in
                    guard let source = segment.source, !source.isStillImage, segment.targetRange.duration.value > 0 else { return 0 }
                    let rate = source.nominalFrameRate > 0 ? source.nominalFrameRate : outputRate
                    let speed = segment.sourceRange.duration.seconds / segment.targetRange.duration.seconds
                    return source.naturalSize.width * source.naturalSize.height * rate * speed
                }.max() ?? 0
            }.reduce(0, +)
        }.max() ?? 0
    }
}

extension VideoEncoding {
    /// The format frames are rendered in for this encoder (a GIF's palette stage takes BGRA).
    var renderedFormat: AVPixelFormat { codec == nil ? AV_PIX_FMT_BGRA : pixelFormat }

    /// What sets the pace when this encoder writes `plan`. x264 and x265 at "medium" or
    /// slower, encoding at least half the pixels decoded, are the work: decoding a 1080p H.264
    /// frame takes one thread about 4 ms, x264 at medium 47 ms of CPU on two cores, so one
    /// decoder thread, drawing each picture once the encoder is done with the last, keeps
    /// ahead of it (the lyrics job: 19 MiB less at its peak for the decoder, 3 MiB for the
    /// drawing, the same CPU and wall time). Where decoding is the work (LowQuality's veryfast
    /// 480×270 of a 1080p source took 1.26× (1.21–1.40) the wall time single-threaded; faster
    /// presets, smaller outputs, other encoders, GIFs) the renderer works ahead.
    func pace(for plan: VideoPlan) -> RenderPace {
        guard codec == .h264 || codec == .hevc,
              let speed = options.first(where: { $0.0 == "preset" })?.1,
              let rank = VideoSettings.speedNames.firstIndex(of: speed),
              let medium = VideoSettings.speedNames.firstIndex(of: "medium"), rank >= medium else { return .renderer }
        let outputRate = 1 / plan.frameDuration.seconds
        let encoded = Double(plan.outputWidth * plan.outputHeight) * outputRate
        return encoded * 2 >= plan.decodedPixelsPerSecond(outputRate: outputRate) ? .encoder : .renderer
    }

    /// The same encoding with headers that do not depend on the pictures (x264's
    /// `stitchable`), so pieces encoded apart share them and splice into one stream.
    var stitchable: VideoEncoding {
        guard codec == .h264 else { return self }
        let parameters = options.first { $0.0 == "x264-params" }.map { $0.1 + ":" } ?? ""
        return VideoEncoding(codec: codec, encoderName: encoderName, pixelFormat: pixelFormat, rateControl: rateControl, profile: profile,
                             options: options.filter { $0.0 != "x264-params" } + [("x264-params", parameters + "stitchable=1")],
                             keyframeInterval: keyframeInterval, codecTag: codecTag)
    }
}
