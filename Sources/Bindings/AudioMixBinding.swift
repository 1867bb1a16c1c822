import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// `av.audioMixInputParameters` and `av.audioMix` (AVMutableAudioMix and its parameters).
extension API {
    func makeAudioMixInputParametersClass() -> LuaClass {
        let luaClass = LuaClass("AudioMixInputParameters", doc: "Volume over time for one audio track, and how it plays when time-scaled.")
        luaClass.describe = { ($0 as? AudioMixInputParameters).map { "AudioMixInputParameters(track \($0.trackID))" } ?? "AudioMixInputParameters" }
        luaClass.footprint = { object in
            Footprint.record + 64 * ((object as? AudioMixInputParameters)?.volume.changeCount ?? 0)
        }
        luaClass.property("trackID", of: AudioMixInputParameters.self) { call, p in call.push(p.trackID) }
        luaClass.property("audioTimePitchAlgorithm", of: AudioMixInputParameters.self,
                          doc: "how time-scaled audio plays: \"spectral\" or \"timeDomain\" keep the pitch (default), \"varispeed\" lets it follow the speed",
                          get: { call, p in call.push(p.audioTimePitchAlgorithm.rawValue) },
                          set: { call, p, index in
                              let name = try call.string(index)
                              guard let algorithm = AudioTimePitchAlgorithm(rawValue: name) else {
                                  let names = AudioTimePitchAlgorithm.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                                  throw call.argumentError(index, "expected one of \(names), got \"\(name)\"")
                              }
                              p.audioTimePitchAlgorithm = algorithm
                          })
        luaClass.method("setVolume", of: AudioMixInputParameters.self, doc: "p:setVolume(v, atTime); 1 = unchanged") { call, p in
            let (value, time) = (try call.volume(2), try call.time(3))
            let cut = p.setVolume(value, at: time)
            try call.api().reportRampCut(call, "volume", cut: cut, by: TimeRange(start: time, duration: .zero))
            return 0
        }
        luaClass.method("setVolumeRamp", of: AudioMixInputParameters.self, doc: "p:setVolumeRamp(v0, v1, range [, timing])") { call, p in
            let (from, to, range, curve) = (try call.volume(2), try call.volume(3), try call.timeRange(4), try call.curve(5))
            try call.api().reportRampCut(call, "volume", cut: p.setVolumeRamp(from: from, to: to, over: range, curve: curve), by: range)
            return 0
        }
        luaClass.alias("setVolumeRampFromStartVolume", of: "setVolumeRamp")
        addDucking(to: luaClass)
        luaClass.document([
            "trackID": "the composition audio track it applies to",
        ])
        luaClass.example = """
            local music = av.audioMixInputParameters(musicTrack)
            music:setVolume(0.3, 0)
            music:setVolumeRamp(0.3, 0, av.range(comp.duration - 3, 3))   -- fade out
            music:setDucking{ under = voiceTrack, amount = -12, attack = 0.05, release = 0.4 }  -- down under speech
            session.audioMix = av.audioMix{ inputParameters = { music } }
            """
        return luaClass
    }

    func makeAudioMixClass() -> LuaClass {
        let luaClass = LuaClass("AudioMix", doc: "How the audio tracks are mixed.")
        luaClass.describe = { ($0 as? AudioMix).map { "AudioMix(\($0.inputParameters.count) input parameters)" } ?? "AudioMix" }
        luaClass.footprint = { object in
            Footprint.record + 8 * ((object as? AudioMix)?.inputParameters.count ?? 0)
        }
        luaClass.property("inputParameters", of: AudioMix.self,
                          get: { call, m in try call.pushArray(m.inputParameters) { try call.push($0) } },
                          set: { call, m, index in
                              m.inputParameters = try call.array(index, of: AudioMixInputParameters.self)
                          })
        luaClass.document([
            "inputParameters": "one av.audioMixInputParameters per track whose volume changes",
        ])
        luaClass.example = """
            session.audioMix = av.audioMix{ inputParameters = { voice, music } }
            """
        return luaClass
    }

    var audioMixFunctions: [AVFunction] {
        [
            ("audioMixInputParameters", "av.audioMixInputParameters(compositionTrack, assetTrack or trackID)", { call in
                let (id, source) = try call.trackReference(1, mediaType: .audio)
                let made = AudioMixInputParameters(trackID: id)
                made.source = source
                try call.push(made)
                return 1
            }),
            ("audioMix", "av.audioMix{inputParameters={...}}", { call in
                let made = AudioMix()
                try call.applyProperties(1, to: made, of: AudioMix.self)
                try call.push(made)
                return 1
            }),
        ]
    }
}

extension Binding {
    static let audioMix = Binding(classes: [.init(AudioMixInputParameters.self) { $0.makeAudioMixInputParametersClass() },
                                          .init(AudioMix.self) { $0.makeAudioMixClass() }],
                                functions: { $0.audioMixFunctions })
}
