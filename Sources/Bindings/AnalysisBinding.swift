import CMoonLua
import CMoonLuaShim
import MoonreelEngine
import MoonreelScriptHost
import MoonreelPlatform

/// `av.analyze`: the facts of a piece of media as plain Lua data (tempo, beats, onsets,
/// levels, loudness, scene cuts), cached per file content (docs/analysis.md).
extension API {
    static let analysisMetatable = "moonreel.Analysis"

    var analysisFunctions: [AVFunction] {
        [
            ("analyze", "av.analyze(assetOrTrack [, {audio=, video=, sceneThreshold=, tempoRange={min, max}}]): what the media holds, as plain data: tempo (BPM; within the tempoRange option's BPM when given), tempoRange ({slowest, fastest} local BPM), steady (false for a rubato or an accelerando), tempoCandidates ({bpm=, score=}: the tempo and the next strongest pulses), tempoConfidence, beatConfidence (0…1: how far independent trackers agree with the beats, with the pulse's regularity), beats, downbeats (seconds), meter (3 or 4 beats to a bar) and meterConfidence (0…1), onsets ({time=, strength=}), levels (dBFS every 10 ms), loudness (momentary LUFS every 100 ms), sceneCuts ({time=, score=}: the first frame of each new shot), transitions ({time=, duration=, kind=}: each dissolve, kind = \"dissolve\", and fade out of a shot into a flat picture and/or out of one into a shot, kind = \"fade\", one item when at most 1 s of flat picture lies between; time is the last frame before it), and a:silences{threshold=, minDuration=0.3} (ranges; the threshold from the recording's own pauses and speech unless given); cached per file content, so a second run decodes nothing (docs/analysis.md)", { call in
                let api = try call.api()
                let (audioTrack, videoTrack) = try api.analysedTracks(call)
                var wantsAudio = audioTrack != nil, wantsVideo = videoTrack != nil
                var sceneThreshold = SceneAnalysis.defaultThreshold
                var tempos: ClosedRange<Double>?
                try call.options(2, [
                    "tempoRange": { index in tempos = try Self.tempoRange(call, index) },
                    "audio": { wantsAudio = try call.boolean($0) && audioTrack != nil },
                    "video": { wantsVideo = try call.boolean($0) && videoTrack != nil },
                    "sceneThreshold": { sceneThreshold = try call.percentage($0) },
                ])
                // Without a cache folder (no HOME), each run analyses afresh.
                let audio = try wantsAudio ? audioTrack.map { track in
                    try api.policy.analysisCache?.audio(of: track, tempos: tempos, cancellation: api.exportCancellation)
                        ?? AudioAnalysis.analyze(track, tempos: tempos, cancellation: api.exportCancellation)
                } : nil
                let scenes = try wantsVideo ? videoTrack.map { track in
                    try api.policy.analysisCache?.scenes(of: track, cancellation: api.exportCancellation) ?? SceneAnalysis.analyze(track, cancellation: api.exportCancellation)
                } : nil
                if let audio, audio.tempo == nil {
                    // Asked for a range: a warning (the range may be wrong). Over every tempo
                    // considered: a note (speech, room tone, music without a steady beat), so a
                    // job that cuts to beats sees why it had none.
                    let range = tempos ?? AudioAnalysis.defaultTempos
                    try api.policy.report(Diagnostic(.pulseNotFound, tempos == nil ? .note : .warning,
                                                     "no pulse between \(format(range.lowerBound)) and \(format(range.upperBound)) BPM, so no tempo and no beats",
                                                     remedy: tempos == nil ? "check the result's tempo before using its beats" : "widen tempoRange, or leave it out"), at: call.L)
                }
                api.push(call, audio: audio, scenes: scenes, sceneThreshold: sceneThreshold)
                return 1
            }),
            ("pulse", "av.pulse(layer, beats [, {keyPath=\"transform.scale\", from=1, amount=0.06, rise=0.05, fall=0.2, key=\"pulse\"}]) → animation: the layer's number property peaks at from + amount exactly on each beat (seconds), rising over `rise` and falling back over `fall` seconds; added to the layer under `key`", { call in
                let api = try call.api()
                let target: Layer = try call.object(1, Layer.self)
                let beats = try api.beatTimes(call, 2)
                var keyPath = AnimatableKeyPath.transformScale, from = 1.0, amount = 0.06, key = "pulse"
                var rise = MediaTime(value: 1, timescale: 20), fall = MediaTime(value: 1, timescale: 5)
                try call.options(3, [
                    "keyPath": { index in keyPath = try call.model { try AnimatableKeyPath(named: try call.string(index)) } },
                    "from": { from = try call.finite($0) },
                    "amount": { amount = try call.finite($0) },
                    "rise": { rise = try call.duration($0) },
                    "fall": { fall = try call.duration($0) },
                    "key": { key = try call.string($0) },
                ])
                let made = try call.model {
                    try KeyframeAnimation.pulse(keyPath: keyPath, beats: beats, from: from, amount: amount, rise: rise, fall: fall)
                }
                try call.model { try target.addAnimation(.keyframe(made), forKey: key) }
                try call.push(AnimationBox(made))
                return 1
            }),
            ("envelopeAnimation", "av.envelopeAnimation(levels [, {keyPath=\"opacity\", interval=0.1, start=0, floor=-60, ceiling=0, from=0, to=1}]) → animation: a number property following levels (dB or LUFS, one every `interval` seconds from `start`, e.g. av.analyze(song).loudness): `floor` and below give `from`, `ceiling` and above `to`; add it with layer:addAnimation", { call in
                let levels = try call.list(1, limit: KeyframeAnimation.maxKeyframes) { try call.finite($0) }
                var keyPath = AnimatableKeyPath.opacity, interval = MediaTime(value: 1, timescale: 10), start = MediaTime.zero
                var floor = -60.0, ceiling = 0.0, from = 0.0, to = 1.0
                try call.options(2, [
                    "keyPath": { index in keyPath = try call.model { try AnimatableKeyPath(named: try call.string(index)) } },
                    "interval": { interval = try call.duration($0) },
                    "start": { start = try call.time($0, allowNegative: false) },
                    "floor": { floor = try call.finite($0) },
                    "ceiling": { ceiling = try call.finite($0) },
                    "from": { from = try call.finite($0) },
                    "to": { to = try call.finite($0) },
                ])
                let made = try call.model {
                    try KeyframeAnimation.envelope(keyPath: keyPath, levels: levels, interval: interval, start: start,
                                                   floor: floor, ceiling: ceiling, from: from, to: to)
                }
                try call.push(AnimationBox(made))
                return 1
            }),
            ("audioSpectrumLayer", "av.audioSpectrumLayer{track=, audioMix=, bars=32, frequencyRange={40, 16000}, smoothing=0.5, colors=, frame=, …}: a layer of bars, one per frequency band (spaced in pitch), as loud as the band in the sound playing at each frame; track: a composition (its mix, with audioMix), an asset or an audio track (laid from 0) (docs/analysis.md)", { call in
                try call.api().soundLayer(call, spectrum: true)
            }),
            ("audioWaveformLayer", "av.audioWaveformLayer{track=, audioMix=, style=\"line\"|\"bars\"|\"mirror\", window=, bars=64, colors=, frame=, …}: a layer showing the waveform: a line of the sound playing during the frame (or `window` seconds from its start), or peak bars over window seconds (2 s) centred on it; track as for audioSpectrumLayer (docs/analysis.md)", { call in
                try call.api().soundLayer(call, spectrum: false)
            }),
        ]
    }

    /// `av.audioSpectrumLayer` and `av.audioWaveformLayer`: the sound's own options are read
    /// here, the rest are the layer's properties.
    private func soundLayer(_ call: LuaCall, spectrum: Bool) throws -> Int32 {
        guard call.type(1) == LUA_TTABLE else { throw call.typeError(1, expected: "table {track=, …}") }
        var source: SoundVisual.Source?, mix: AudioMix?
        var bars = spectrum ? 32 : 64, low = 40.0, high = 16000.0, smoothing = 0.5, colors: [Color] = [.white]
        var style = SoundVisual.Style.line, window: Double?
        var readers: [String: (Int32) throws -> Void] = [
            "track": { source = try self.soundSource(call, $0) },
            "audioMix": { mix = try call.object($0, self.classes[AudioMix.self]) },
            "bars": { value in
                bars = try call.integer(value)
                guard (1...512).contains(bars) else { throw call.argumentError(value, "must be 1 to 512, got \(bars)") }
            },
            "colors": { colors = try self.colorList(call, $0) },
        ]
        if spectrum {
            readers["frequencyRange"] = { value in
                guard call.type(value) == LUA_TTABLE, call.rawLength(value) == 2 else { throw call.typeError(value, expected: "{low, high} in Hz") }
                let ends = try (1...2).map { entry -> Double in
                    call.pushElement(of: value, entry)
                    defer { call.pop() }
                    return try call.finite(-1)
                }
                guard ends[0] > 0, ends[0] < ends[1], ends[1] <= 24000 else { throw call.argumentError(value, "must be {low, high} with 0 < low < high ≤ 24000 Hz") }
                (low, high) = (ends[0], ends[1])
            }
            readers["smoothing"] = { value in
                smoothing = try call.number(value)
                guard (0...0.95).contains(smoothing) else { throw call.argumentError(value, "must be 0…0.95, got \(format(smoothing))") }
            }
        } else {
            readers["style"] = { value in
                style = try call.choice(value, SoundVisual.Style.self)
                guard style != .spectrum else { throw call.argumentError(value, "a spectrum is av.audioSpectrumLayer; a waveform's style is \"line\", \"bars\" or \"mirror\"") }
            }
            readers["window"] = { value in
                let seconds = try call.duration(value).seconds
                guard seconds <= 60 else { throw call.argumentError(value, "must be at most 60 s, got \(format(seconds))") }
                window = seconds
            }
        }
        // The layer's own properties go on to av.layer's reader, in a table of their own.
        let L = call.L
        lua_createtable(L, 0, 8)
        let properties = call.absolute(-1)
        try call.forEachField(of: 1) { key in
            if let read = readers[key] {
                do { try read(call.absolute(-1)) } catch let error as LuaArgumentError {
                    throw call.argumentError(1, "field '\(key)': \(error.message.argumentReason)", cause: error)
                }
            } else {
                call.pushValue(-1)
                lua_setfield(L, properties, key)
            }
        }
        guard var source else { throw call.argumentError(1, "track is required: a composition, an asset or an audio track") }
        if case .mix(let composition, _) = source { source = .mix(composition, mix) }
        // Decoding the sound runs no Lua, so no count hook: the run's cancel (and time limit)
        // stops it, and in an effect so does the deadline of the call it runs in (5 s); the
        // hook then stops the effect at its next instruction.
        let deadline = lua.isSandboxed ? lua.secondsLeft.map { seconds in
            let flag = CancellationFlag(parent: exportCancellation)
            runAfter(seconds: seconds) { flag.cancel() }
            return flag
        } : nil
        let visual: SoundVisual
        do {
            visual = try call.engine {
                try SoundVisual.measure(source, style: spectrum ? .spectrum : style,
                                        spectrum: SoundVisual.Spectrum(bars: bars, frequencies: low...high, smoothing: smoothing),
                                        window: window, waveformBars: bars, colors: colors, cancellation: deadline ?? exportCancellation)
            }
        } catch where deadline?.isCancelled == true && !exportCancellation.isCancelled {
            throw LuaArgumentError("\(call.functionName): measuring the sound took longer than this effect call may run "
                                   + "(\(format(lua.budget.pointee.time_limit)) s); give it a shorter clip (minutes of sound, not hours)")
        }
        let made = SoundLayer(visual: visual)
        made.origin = scriptLine(call.L)
        do { try call.applyProperties(properties, to: made, of: Layer.self) } catch let error as LuaArgumentError {
            throw call.argumentError(1, error.message.argumentReason, cause: error)   // the script's table, not the copy
        }
        try call.push(made)
        return 1
    }

    /// A composition (its mix), an asset (its first audio track) or an audio track.
    private func soundSource(_ call: LuaCall, _ index: Int32) throws -> SoundVisual.Source {
        if let whole: Composition = try? call.object(index, Composition.self) { return .mix(whole, nil) }
        if let track: AssetTrack = try? call.object(index, AssetTrack.self) {
            guard track.mediaType == .audio else { throw call.argumentError(index, "track \(track.trackID) is \(track.mediaType.rawValue), not audio") }
            return .track(track)
        }
        guard let media: Asset = try? call.object(index, Asset.self) else { throw call.typeError(index, expected: "Composition, Asset or audio AssetTrack") }
        guard let track = media.tracks(withMediaType: .audio).first else { throw call.argumentError(index, "\(media.path.quotedForMessage()) has no audio track") }
        return .track(track)
    }

    /// One colour or an array of them (a colour's own {r, g, b} array starts with a number).
    private func colorList(_ call: LuaCall, _ index: Int32) throws -> [Color] {
        guard call.type(index) == LUA_TTABLE, call.rawLength(index) > 0 else { return [try call.color(index)] }
        let firstIsNumber = call.pushElement(of: index, 1) == LUA_TNUMBER
        call.pop()
        guard !firstIsNumber else { return [try call.color(index)] }
        return try call.list(index, limit: 64) { try call.color($0) }
    }

    /// The audio and video track `av.analyze` looks at: a track itself, or an asset's first of each.
    private func analysedTracks(_ call: LuaCall) throws -> (audio: AssetTrack?, video: AssetTrack?) {
        if let track: AssetTrack = try? call.object(1, AssetTrack.self) {
            if track.mediaType == .audio { return (track, nil) }
            if track.mediaType == .video, !track.isStillImage { return (nil, track) }
            throw call.argumentError(1, "track \(track.trackID) is a \(track.isStillImage ? "still image" : track.mediaType.rawValue) track; only audio and video tracks can be analysed")
        }
        guard let media: Asset = try? call.object(1, Asset.self) else { throw call.typeError(1, expected: "Asset or AssetTrack") }
        let found = (media.tracks(withMediaType: .audio).first, media.tracks(withMediaType: .video).first { !$0.isStillImage })
        guard found.0 != nil || found.1 != nil else {
            throw call.argumentError(1, "\(media.path.quotedForMessage()) has no audio track or moving picture to analyse")
        }
        return found
    }

    /// `tempoRange = {min, max}`: the tempos the beats may be at (`AudioAnalysis.temposProblem`).
    private static func tempoRange(_ call: LuaCall, _ index: Int32) throws -> ClosedRange<Double> {
        let bounds = try call.list(index, limit: 2) { try call.finite($0) }
        guard bounds.count == 2 else { throw call.argumentError(index, "must be {min, max} in BPM, got \(bounds.count) number\(bounds.count == 1 ? "" : "s")") }
        if let problem = AudioAnalysis.temposProblem(bounds[0], bounds[1]) { throw call.argumentError(index, problem) }
        return bounds[0]...bounds[1]
    }

    private func push(_ call: LuaCall, audio: AudioAnalysis?, scenes: SceneAnalysis?, sceneThreshold: Double) {
        call.pushRecord {
            if let audio {
                if let tempo = audio.tempo { call.push(tempo); call.setField("tempo") }
                if let range = audio.tempoRange {
                    call.pushArray([range.lowerBound, range.upperBound]) { call.push($0) }; call.setField("tempoRange")
                }
                if let steady = audio.steady { call.push(steady); call.setField("steady") }
                call.pushArray(audio.tempoCandidates) { candidate in
                    call.pushRecord {
                        call.push(candidate.bpm); call.setField("bpm")
                        call.push(candidate.score); call.setField("score")
                    }
                }
                call.setField("tempoCandidates")
                call.push(audio.tempoConfidence); call.setField("tempoConfidence")
                call.push(audio.beatConfidence); call.setField("beatConfidence")
                call.pushArray(audio.beats) { call.push($0) }; call.setField("beats")
                call.pushArray(audio.downbeats) { call.push($0) }; call.setField("downbeats")
                if let meter = audio.meter { call.push(meter); call.setField("meter") }
                call.push(audio.meterConfidence); call.setField("meterConfidence")
                call.pushArray(audio.onsets) { onset in
                    call.pushRecord {
                        call.push(onset.time); call.setField("time")
                        call.push(onset.strength); call.setField("strength")
                    }
                }
                call.setField("onsets")
                call.pushArray(audio.levels) { call.push(Double($0)) }; call.setField("levels")
                call.push(1 / Double(AudioAnalysis.levelsPerSecond)); call.setField("levelInterval")
                call.pushArray(audio.loudness) { call.push($0) }; call.setField("loudness")
                call.push(AudioAnalysis.loudnessInterval); call.setField("loudnessInterval")
                call.push(audio.duration); call.setField("duration")
            }
            if let scenes {
                call.pushArray(scenes.cuts(threshold: sceneThreshold)) { cut in
                    call.pushRecord {
                        call.push(cut.time); call.setField("time")
                        call.push(cut.score); call.setField("score")
                    }
                }
                call.setField("sceneCuts")
                call.pushArray(scenes.transitions) { transition in
                    call.pushRecord {
                        call.push(transition.time); call.setField("time")
                        call.push(transition.duration); call.setField("duration")
                        call.push(transition.kind.rawValue); call.setField("kind")
                    }
                }
                call.setField("transitions")
            }
        }
        _ = moon_getmetatable_named(call.L, API.analysisMetatable)
        lua_setmetatable(call.L, -2)
    }

    /// The methods of `av.analyze`'s results (their data stays plain fields).
    func installAnalysisMetatable() {
        installMethods(API.analysisMetatable, [("silences", "analysis:silences", { call in try call.api().silences(call) })])
    }

    /// A metatable `name` whose `__index` holds `methods` (name, name in errors, body): the
    /// methods of results that are otherwise plain tables (`av.analyze`'s, `av.readCues`'s).
    func installMethods(_ name: String, _ methods: [(name: String, qualifiedName: String, body: (LuaCall) throws -> Int32)]) {
        let L = lua.L
        _ = luaL_newmetatable(L, name)                           // mt
        lua_createtable(L, 0, Int32(methods.count))              // mt methods
        for method in methods { lua.setFunction(method.name, qualifiedName: method.qualifiedName, method.body) }
        lua_setfield(L, -2, "__index")                           // mt
        moon_pop(L, 1)
    }

    /// `a:silences{threshold=, minDuration=}`: the ranges of `a.levels` under the threshold.
    private func silences(_ call: LuaCall) throws -> Int32 {
        guard call.type(1) == LUA_TTABLE else {
            throw call.typeError(1, expected: "the result of av.analyze (call it as a:silences{…})")
        }
        guard call.pushField(of: 1, "levels") == LUA_TTABLE else {
            call.pop()
            throw call.argumentError(1, "this analysis has no audio levels (the media has no audio track, or it was analysed with audio = false)")
        }
        let levels = try call.list(call.absolute(-1), limit: Int.max) { Float(try call.number($0)) }
        call.pop()
        var threshold: Double?, shortest = 0.3
        try call.options(2, [
            "threshold": { value in
                let level = try call.number(value)
                guard level.isFinite, level <= 0 else { throw call.argumentError(value, "must be a level in dBFS, 0 or below, got \(level)") }
                threshold = level
            },
            "minDuration": { value in
                shortest = try call.number(value)
                guard shortest.isFinite, shortest >= 0 else { throw call.argumentError(value, "must be seconds, 0 or more, got \(shortest)") }
            },
        ])
        if threshold == nil {
            if let chosen = AudioAnalysis.SilenceThreshold.of(levels) {
                threshold = chosen.level
                try policy.report(Diagnostic(.thresholdChosen, .note, "silences: below \(format(chosen.level)) dBFS, a third of the way from the pauses' level (\(format(chosen.floor))) to the loud parts' (\(format(chosen.speech)))",
                                             remedy: "give threshold to choose it yourself"), at: call.L)
            } else {
                try policy.report(Diagnostic(.nothingRemoved, .warning, "silences: the quiet and the loud parts are within \(format(AudioAnalysis.SilenceThreshold.smallestGap)) dB of each other (or there is no sound), so no pause can be told from the rest",
                                             remedy: "give threshold (dBFS) if there are pauses"), at: call.L)
            }
        }
        let found = threshold.map { AudioAnalysis.silences(in: levels, threshold: $0, minimumDuration: shortest) } ?? []
        try call.pushArray(found) { try call.push(range: $0) }
        if let threshold {
            call.push(threshold)
            call.setField("threshold")
        }
        return 1
    }
}

private extension LuaCall {
    func percentage(_ index: Int32) throws -> Double {
        let value = try number(index)
        guard value.isFinite, (0...100).contains(value) else { throw argumentError(index, "must be between 0 and 100, got \(value)") }
        return value
    }
}

extension Binding {
    static let analysis = Binding(functions: { $0.analysisFunctions }, install: { $0.installAnalysisMetatable() })
}
