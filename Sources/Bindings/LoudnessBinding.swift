import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// `av.loudness`, an export session's loudness target and an audio mix's ducking.
extension API {
    func loudness(_ call: LuaCall) throws -> Int32 {
        let source = try call.compositionOrAsset(1)
        var mix: AudioMix? = nil, range: TimeRange? = nil
        try call.options(2, [
            "audioMix": { mix = try call.object($0, self.classes[AudioMix.self]) },
            "timeRange": { range = try call.timeRange($0) },
        ])
        if let range, let inside = range.intersection(TimeRange(start: .zero, duration: source.duration)), inside != range {
            try policy.report(Diagnostic(.rangeClipped, .note, "timeRange \(shortSeconds(range.start))–\(shortSeconds(range.end)) s reaches past the audio (0–\(shortSeconds(source.duration)) s): \(shortSeconds(inside.start))–\(shortSeconds(inside.end)) s is measured"), at: call.L)
        }
        guard let measured = try call.engine({ try source.loudness(audioMix: mix, range: range) }) else {
            call.pushNil()
            return 1
        }
        call.pushRecord {
            call.push(measured.integrated); call.setField("integrated")
            call.push(measured.truePeak); call.setField("truePeak")
            call.push(measured.range); call.setField("range")
        }
        return 1
    }

    /// `session.loudness` and `session.truePeakLimit`.
    func addLoudnessProperties(to luaClass: LuaClass) {
        luaClass.property("loudness", of: ExportSession.self,
                          doc: "target integrated loudness in LUFS (EBU R128; e.g. -14, -16, -23), or nil (default) to leave the mix as it is; the mix is measured first, then one gain brings it there with its peaks held under truePeakLimit",
                          get: { call, e in if let target = e.loudness { call.push(target.integrated) } else { call.pushNil() } },
                          set: { call, e, index in
                              guard !call.isNoneOrNil(index) else { e.loudness = nil; return }
                              let target = try call.bounded(index, LoudnessNormalization.integratedRange)
                              e.loudness = LoudnessNormalization(integrated: target, truePeak: e.loudness?.truePeak ?? -1)
                          })
        luaClass.property("truePeakLimit", of: ExportSession.self,
                          doc: "with loudness: the ceiling for peaks in dBTP (-1 by default; -20…0)",
                          get: { call, e in call.push(e.loudness?.truePeak ?? -1) },
                          set: { call, e, index in
                              let ceiling = try call.bounded(index, LoudnessNormalization.truePeakRange)
                              guard var target = e.loudness else {
                                  throw call.argumentError(index, "set session.loudness (the target in LUFS) before truePeakLimit")
                              }
                              target.truePeak = ceiling
                              e.loudness = target
                          })
    }

    // MARK: Ducking

    /// `p.ducking` and `p:setDucking{...}`.
    func addDucking(to luaClass: LuaClass) {
        luaClass.property("ducking", of: AudioMixInputParameters.self,
                          doc: "sidechain ducking: {under=track or {tracks}, amount=-12 (dB), threshold=-35 (dBFS), attack=0.05, hold=0.3, release=0.4, window=0.01 (seconds)}, or nil; see p:setDucking",
                          get: { call, p in call.pushDucking(p.ducking) },
                          set: { call, p, index in p.ducking = try call.api().ducking(call, index) })
        luaClass.method("setDucking", of: AudioMixInputParameters.self,
                        doc: "p:setDucking{under=, amount=, threshold=, attack=, hold=, release=}: while the level of the `under` tracks is at or above threshold, this track goes down by amount dB over attack seconds (a straight line in dB); after hold seconds below it, back up over release; nil removes it") { call, p in
            let api = try call.api()
            p.ducking = try api.ducking(call, 2)
            return 0
        }
    }

    func ducking(_ call: LuaCall, _ index: Int32) throws -> Ducking? {
        guard !call.isNoneOrNil(index) else { return nil }
        guard call.type(index) == LUA_TTABLE else { throw call.typeError(index, expected: "ducking table {under=, amount=, …} or nil") }
        var settings = Ducking(under: [])
        let seconds = { (value: Int32) in
            let t = try call.time(value, allowNegative: false)
            guard t <= Ducking.maximumTime else { throw call.argumentError(value, "at most \(Ducking.maximumTime.seconds) s, got \(t.seconds)") }
            return t
        }
        try call.options(index, [
            "under": { settings.under = try self.sidechains(call, $0) },
            "amount": { settings.amount = try call.bounded($0, Ducking.amountRange) },
            "threshold": { settings.threshold = try call.bounded($0, Ducking.thresholdRange) },
            "attack": { settings.attack = try seconds($0) },
            "hold": { settings.hold = try seconds($0) },
            "release": { settings.release = try seconds($0) },
            "window": {
                settings.window = try call.time($0)
                guard Ducking.windowRange.contains(settings.window) else { throw call.argumentError($0, "window must be 0.001…1 s, got \(settings.window.seconds)") }
            },
        ])
        guard !settings.under.isEmpty else { throw call.argumentError(index, "ducking needs under = the track (or tracks) whose sound lowers this one") }
        return settings
    }

    /// A track reference or an array of them.
    /// The most tracks one track may be ducked under; a longer list is refused, not cut.
    static let mostDuckingKeys = 1000

    func sidechains(_ call: LuaCall, _ index: Int32) throws -> [Ducking.Sidechain] {
        let reference = { (at: Int32) in
            let (id, source) = try call.trackReference(at, mediaType: .audio)
            return Ducking.Sidechain(trackID: id, source: source)
        }
        guard call.type(index) == LUA_TTABLE else { return [try reference(index)] }
        let count = call.rawLength(index)
        guard count <= Self.mostDuckingKeys else {
            throw call.argumentError(index, "lists \(count) tracks to duck under; at most \(Self.mostDuckingKeys) are taken (a mix of more is a mistake)")
        }
        return try (0..<count).map { offset in
            call.pushElement(of: index, offset + 1)
            defer { call.pop() }
            return try reference(call.absolute(-1))
        }
    }

}

extension LuaCall {
    func pushDucking(_ ducking: Ducking?) {
        guard let ducking else { pushNil(); return }
        pushRecord {
            pushArray(ducking.under) { push($0.trackID) }; setField("under")
            push(ducking.amount); setField("amount")
            push(ducking.threshold); setField("threshold")
            for (name, value) in [("attack", ducking.attack), ("hold", ducking.hold), ("release", ducking.release), ("window", ducking.window)] {
                push(value.seconds); setField(name)
            }
        }
    }
}
