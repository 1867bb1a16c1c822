import CMoonLua
import CMoonLuaShim
import MoonreelEngine
import MoonreelScriptHost

/// `av.analyze`: the facts of a piece of media as plain Lua data (tempo, beats, onsets,
/// levels, loudness, scene cuts), cached per file content (docs/analysis.md).
extension API {
    static let analysisMetatable = "moonreel.Analysis"

    var analysisFunctions: [(String, String, LuaFunction)] {
        [
            ("analyze", "av.analyze(assetOrTrack [, {audio=, video=, sceneThreshold=}]): what the media holds, as plain data: tempo (BPM), tempoConfidence, beats, downbeats (seconds), onsets ({time=, strength=}), levels (dBFS every 10 ms), loudness (momentary LUFS every 100 ms), sceneCuts ({time=, score=}), and a:silences{threshold=-40, minDuration=0.3} (ranges); cached per file content, so a second run decodes nothing (docs/analysis.md)", { [unowned self] call in
                let (audioTrack, videoTrack) = try analysedTracks(call)
                var wantsAudio = audioTrack != nil, wantsVideo = videoTrack != nil
                var sceneThreshold = SceneAnalysis.defaultThreshold
                try options(call, 2, [
                    "audio": { wantsAudio = try call.boolean($0) && audioTrack != nil },
                    "video": { wantsVideo = try call.boolean($0) && videoTrack != nil },
                    "sceneThreshold": { sceneThreshold = try self.percentage(call, $0) },
                ])
                let audio = try wantsAudio ? audioTrack.map { try analysisCache(call).audio(of: $0, cancellation: exportCancellation) } : nil
                let scenes = try wantsVideo ? videoTrack.map { try analysisCache(call).scenes(of: $0, cancellation: exportCancellation) } : nil
                push(call, audio: audio, scenes: scenes, sceneThreshold: sceneThreshold)
                return 1
            }),
        ]
    }

    /// The audio and video track `av.analyze` looks at: a track itself, or an asset's first of each.
    private func analysedTracks(_ call: LuaCall) throws -> (audio: AssetTrack?, video: AssetTrack?) {
        if let track: AssetTrack = try? call.object(1, assetTrack) {
            if track.mediaType == .audio { return (track, nil) }
            if track.mediaType == .video, !track.isStillImage { return (nil, track) }
            throw call.argumentError(1, "track \(track.trackID) is a \(track.isStillImage ? "still image" : track.mediaType.rawValue) track; only audio and video tracks can be analysed")
        }
        guard let media: Asset = try? call.object(1, asset) else { throw call.typeError(1, expected: "Asset or AssetTrack") }
        let found = (media.tracks(withMediaType: .audio).first, media.tracks(withMediaType: .video).first { !$0.isStillImage })
        guard found.0 != nil || found.1 != nil else {
            throw call.argumentError(1, "\(media.path.quotedForMessage()) has no audio track or moving picture to analyse")
        }
        return found
    }

    /// Where analyses are kept: the host's cache, or a throwaway one when it has none.
    private func analysisCache(_ call: LuaCall) throws -> AnalysisCache {
        guard let analysisCache else {
            throw LuaArgumentError("\(call.functionName): no cache folder for analyses (set XDG_CACHE_HOME or HOME)")
        }
        return analysisCache
    }

    private func percentage(_ call: LuaCall, _ index: Int32) throws -> Double {
        let value = try call.number(index)
        guard value.isFinite, (0...100).contains(value) else { throw call.argumentError(index, "must be between 0 and 100, got \(value)") }
        return value
    }

    private func push(_ call: LuaCall, audio: AudioAnalysis?, scenes: SceneAnalysis?, sceneThreshold: Double) {
        call.pushRecord {
            if let audio {
                if let tempo = audio.tempo { call.push(tempo); call.setField("tempo") }
                call.push(audio.tempoConfidence); call.setField("tempoConfidence")
                call.pushArray(audio.beats) { call.push($0) }; call.setField("beats")
                call.pushArray(audio.downbeats) { call.push($0) }; call.setField("downbeats")
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
            }
        }
        _ = moon_getmetatable_named(call.L, API.analysisMetatable)
        lua_setmetatable(call.L, -2)
    }

    /// The methods of `av.analyze`'s results (their data stays plain fields).
    func installAnalysisMetatable() {
        let L = lua.L
        _ = luaL_newmetatable(L, API.analysisMetatable)          // mt
        lua_createtable(L, 0, 1)                                 // mt methods
        lua.setFunction("silences", qualifiedName: "analysis:silences") { [unowned self] call in
            try silences(call)
        }
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
        let count = call.rawLength(-1)
        var levels = [Float](repeating: 0, count: count)
        for i in 0..<count {
            defer { call.pop() }
            guard call.pushElement(of: -1, i + 1) == LUA_TNUMBER else { throw call.argumentError(1, "levels[\(i + 1)] is not a number") }
            levels[i] = Float(try call.number(-1))
        }
        call.pop()
        var threshold = -40.0, shortest = 0.3
        try options(call, 2, [
            "threshold": { value in
                threshold = try call.number(value)
                guard threshold.isFinite, threshold <= 0 else { throw call.argumentError(value, "must be a level in dBFS, 0 or below, got \(threshold)") }
            },
            "minDuration": { value in
                shortest = try call.number(value)
                guard shortest.isFinite, shortest >= 0 else { throw call.argumentError(value, "must be seconds, 0 or more, got \(shortest)") }
            },
        ])
        call.pushArray(AudioAnalysis.silences(in: levels, threshold: threshold, minimumDuration: shortest)) { push(call, range: $0) }
        return 1
    }
}
