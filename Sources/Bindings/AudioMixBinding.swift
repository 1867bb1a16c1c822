import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// `av.audioMixInputParameters` and `av.audioMix` (AVMutableAudioMix and its parameters).
extension API {
    func makeAudioMixInputParametersClass() -> LuaClass {
        let luaClass = LuaClass("AudioMixInputParameters", doc: "Volume over time for one audio track, and how it plays when time-scaled.")
        luaClass.describe = { ($0 as? AudioMixInputParameters).map { "AudioMixInputParameters(track \($0.trackID))" } ?? "AudioMixInputParameters" }
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
        luaClass.method("setVolume", of: AudioMixInputParameters.self, doc: "p:setVolume(v, atTime); 1 = unchanged") { [unowned self] call, p in
            p.setVolume(try volume(call, 2), at: try time(call, 3)); return 0
        }
        luaClass.method("setVolumeRamp", of: AudioMixInputParameters.self, doc: "p:setVolumeRamp(v0, v1, range [, timing])") { [unowned self] call, p in
            p.setVolumeRamp(from: try volume(call, 2), to: try volume(call, 3), over: try timeRange(call, 4), curve: try curve(call, 5))
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
        luaClass.property("inputParameters", of: AudioMix.self,
                          get: { [unowned self] call, m in call.pushArray(m.inputParameters) { push(call, $0) } },
                          set: { [unowned self] call, m, index in
                              m.inputParameters = try array(call, index, of: classes[AudioMixInputParameters.self], as: AudioMixInputParameters.self)
                          })
        luaClass.document([
            "inputParameters": "one av.audioMixInputParameters per track whose volume changes",
        ])
        luaClass.example = """
            session.audioMix = av.audioMix{ inputParameters = { voice, music } }
            """
        return luaClass
    }

    func volume(_ call: LuaCall, _ index: Int32) throws -> Double {
        let value = try finite(call, index)
        guard (0...16).contains(value) else { throw call.argumentError(index, "volume must be in 0…16, got \(format(value))") }
        return value
    }

    var audioMixFunctions: [AVFunction] {
        [
            ("audioMixInputParameters", "av.audioMixInputParameters(compositionTrack, assetTrack or trackID)", { [unowned self] call in
                let (id, source) = try trackReference(call, 1, mediaType: .audio)
                let made = AudioMixInputParameters(trackID: id)
                made.source = source
                push(call, made)
                return 1
            }),
            ("audioMix", "av.audioMix{inputParameters={...}}", { [unowned self] call in
                let made = AudioMix()
                try applyProperties(call, 1, to: made, of: classes[AudioMix.self])
                push(call, made)
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
