import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// Helpers for the common jobs, each building the ordinary objects a script goes on
/// editing: `av.join` (clips, stills and title cards with transitions), `av.titleCard`,
/// `av.pictureInPicture`, `av.loudness`; ducking on audio mix parameters and a loudness
/// target on export sessions are added to those classes from here.
extension API {
    func makeTitleCardClass() -> LuaClass {
        let luaClass = LuaClass("TitleCard", doc: "Text on a colour, for a given time: a piece of av.join, made of ordinary layers in the video composition's animation tool.")
        luaClass.describe = { ($0 as? TitleCard).map { "TitleCard(\($0.title.quotedForMessage(limit: 30)), \(format($0.duration.seconds)) s)" } ?? "TitleCard" }
        luaClass.property("title", of: TitleCard.self, doc: "the main line (\"\\n\" starts another)",
                          get: { call, card in call.push(card.title) },
                          set: { [unowned self] call, card, index in card.title = try text(call, index) })
        luaClass.property("subtitle", of: TitleCard.self, doc: "a smaller line under the title, or nil",
                          get: { call, card in if let subtitle = card.subtitle { call.push(subtitle) } else { call.pushNil() } },
                          set: { [unowned self] call, card, index in card.subtitle = call.isNoneOrNil(index) ? nil : try text(call, index) })
        luaClass.property("duration", of: TitleCard.self, doc: "seconds on screen, transitions included (3 by default)",
                          get: { call, card in call.push(card.duration.seconds) },
                          set: { [unowned self] call, card, index in card.duration = try duration(call, index) })
        luaClass.property("backgroundColor", of: TitleCard.self, doc: "the card's colour (black by default)",
                          get: { [unowned self] call, card in push(call, color: card.backgroundColor) },
                          set: { [unowned self] call, card, index in card.backgroundColor = try color(call, index) })
        luaClass.property("textColor", of: TitleCard.self, doc: "white by default",
                          get: { [unowned self] call, card in push(call, color: card.textColor) },
                          set: { [unowned self] call, card, index in card.textColor = try color(call, index) })
        luaClass.property("font", of: TitleCard.self, doc: "font family (Noto Sans CJK JP by default)",
                          get: { call, card in call.push(card.font) },
                          set: { call, card, index in card.font = try call.string(index) })
        luaClass.property("fontSize", of: TitleCard.self, doc: "the title's size in pixels; nil: a tenth of the frame's shorter side (the subtitle is half)",
                          get: { call, card in if let size = card.fontSize { call.push(size) } else { call.pushNil() } },
                          set: { [unowned self] call, card, index in card.fontSize = call.isNoneOrNil(index) ? nil : try bounded(call, index, 1...1000) })
        luaClass.example = """
            local card = av.titleCard{ title = "Day one", subtitle = "Lisbon", duration = 3, backgroundColor = "navy" }
            local comp, vc, mix = av.join({ card, av.asset("walk.mov") }, { transition = "fadeThroughBlack" })
            """
        return luaClass
    }

    var editHelperFunctions: [AVFunction] {
        [
            ("join", "av.join(items [, {transition=, duration=, direction=, transitions=, renderSize=, fit=\"fit\"|\"fill\", focus={x, y}}]) → comp, vc, mix, parts: clips ({asset, start=, duration=}), stills and title cards one after another with transitions (\"none\", \"dissolve\", \"slide\", \"wipe\", \"fadeThroughBlack\", or a transition effect's name: clockWipe, irisWipe, push… with its options as {name, option=}) and the sound crossfaded (docs/edit-helpers.md)", { [unowned self] call in
                try join(call)
            }),
            ("cutToBeats", "av.cutToBeats(clips, beats [, {every=1, transition=, transitionDuration=0.25, music=, duration=, renderSize=, fit=, focus=}]) → comp, vc, mix, parts: a montage cut on every `every`-th beat (seconds, e.g. av.analyze(song).beats), the clips taken in turn (each going on where it last stopped), over `music` (an asset or audio track, in place of the clips' sound); lasts `duration` (default: the music, else up to the last beat) (docs/analysis.md)", { [unowned self] call in
                try cutToBeats(call)
            }),
            ("titleCard", "av.titleCard{title=, subtitle=, duration=, backgroundColor=, textColor=, font=, fontSize=}: text on a colour, a piece for av.join", { [unowned self] call in
                let made = TitleCard(title: "")
                try applyProperties(call, 1, to: made, of: classes[TitleCard.self])
                push(call, made)
                return 1
            }),
            ("pictureInPicture", "av.pictureInPicture(comp, vc, clip [, {at=, corner=, scale=, margin=, borderWidth=, borderColor=}]) → layerInstruction, videoTrack, audioTrack: the clip small in a corner, on top of every instruction it overlaps", { [unowned self] call in
                try pictureInPicture(call)
            }),
            ("loudness", "av.loudness(asset or comp [, {audioMix=, timeRange=}]) → {integrated=, truePeak=, range=} (LUFS, dBTP, LU) or nil without audio: EBU R128, as libavfilter's ebur128 measures", { [unowned self] call in
                try loudness(call)
            }),
        ]
    }

    /// Examples for the reference, by function name.
    var editHelperExamples: [String: String] {
        [
            "join": """
                local comp, vc, mix, parts = av.join({ av.asset("a.mov"), { av.asset("b.mov"), start = 2, duration = 3 },
                                                       { av.asset("photo.jpg"), duration = 4 }, av.titleCard{ title = "The end" } },
                                                     { transition = "dissolve", duration = 1 })
                -- per join: av.join(items, { transitions = { "slide", { "wipe", duration = 0.5, direction = "up" }, "none" } })
                local session = av.exportSession(comp, "HighestQuality")
                session.outputURL, session.videoComposition, session.audioMix = "out.mp4", vc, mix
                """,
            "pictureInPicture": """
                local comp, vc, mix = av.join({ av.asset("talk.mov") })
                local inset, video, audio = av.pictureInPicture(comp, vc, { av.asset("screen.mov"), duration = 10 },
                    { at = 2, corner = "topRight", scale = 0.3, margin = 0.04, borderWidth = 4 })
                """,
            "loudness": """
                local measured = av.loudness(av.asset("episode.m4a"))
                print(measured.integrated, measured.truePeak)   -- e.g. -21.3  -2.1
                session.loudness = -16                          -- bring the export there
                """,
        ]
    }

    // MARK: av.join

    private func join(_ call: LuaCall) throws -> Int32 {
        let items = try sequenceItems(call, 1)
        var common = PlannedTransition(kind: .none), length = MediaTime(value: 1, timescale: 1)
        var direction: Transition.Direction? = nil, perJoin: [PlannedTransition]? = nil, renderSize: Size? = nil
        var fit = FitChoice(default: .fit)
        defer { release([common] + (perJoin ?? [])) }
        try options(call, 2, [
            "transition": { common = try self.plannedTransition(call, $0) },
            "duration": { length = try self.duration(call, $0) },
            "direction": { direction = try self.choice(call, $0, Transition.Direction.self) },
            "transitions": { perJoin = try self.transitionList(call, $0) },
            "renderSize": { renderSize = try self.size(call, $0) },
            "fit": { try fit.readFit(call, $0) },
            "focus": { fit.focus = try self.focus(call, $0) },
        ])
        let placement = try fit.placement(call, 2)
        // Entries without their own duration or direction take the call's, whatever order the table's fields are read in.
        common.direction = common.direction ?? direction
        let planned = (perJoin ?? Array(repeating: common, count: items.count - 1)).map { entry in
            var entry = entry
            entry.duration = entry.duration ?? (perJoin == nil ? common.duration : nil) ?? length
            return entry
        }
        guard planned.count == items.count - 1 else {
            throw call.argumentError(2, "field 'transitions': \(items.count) items need \(items.count - 1) transitions, one per join; got \(planned.count)")
        }
        let transitions = planned.map { Transition($0.kind, duration: $0.duration ?? length, direction: $0.direction) }
        let drawing = transitionDrawing(call) { planned[$0] }
        let joined = try engine(call) {
            try JoinedSequence.make(items, transitions: transitions, renderSize: renderSize, placement: placement, drawing: drawing)
        }
        for note in joined.notes { try policy.report(note, at: call.L) }
        for case .clip(let asset, _) in items { asset.tracks.forEach(remember) }
        return push(call, joined)
    }

    /// `av.cutToBeats(clips, beats, options)`.
    private func cutToBeats(_ call: LuaCall) throws -> Int32 {
        let clips = try sequenceItems(call, 1).enumerated().map { index, item -> (asset: Asset, range: TimeRange?) in
            guard case .clip(let asset, let range) = item else {
                throw call.argumentError(1, "item \(index + 1): a title card has its own length; cutToBeats takes clips and stills")
            }
            return (asset, range)
        }
        let beats = try beatTimes(call, 2)
        var every = 1, planned = PlannedTransition(kind: .none), length = MediaTime(value: 1, timescale: 4)
        var music: AssetTrack? = nil, total: MediaTime? = nil, renderSize: Size? = nil
        var fit = FitChoice(default: .fit)
        try options(call, 3, [
            "every": { value in
                every = try call.integer(value)
                guard (1...1000).contains(every) else { throw call.argumentError(value, "must be a whole number of beats from 1 to 1000, got \(every)") }
            },
            "transition": { planned = try self.plannedTransition(call, $0) },
            "transitionDuration": { length = try self.duration(call, $0) },
            "music": { music = try self.musicTrack(call, $0) },
            "duration": { total = try self.duration(call, $0) },
            "renderSize": { renderSize = try self.size(call, $0) },
            "fit": { try fit.readFit(call, $0) },
            "focus": { fit.focus = try self.focus(call, $0) },
        ])
        defer { release([planned]) }
        let placement = try fit.placement(call, 3)
        guard !beats.isEmpty else {
            throw call.argumentError(2, "the beat list is empty, so there is nothing to cut on (downbeats are empty when no bar was found); give beat times in seconds, e.g. av.analyze(song).beats")
        }
        let cuts = beats.enumerated().filter { $0.offset % every == 0 }.map(\.element)
        let duration = total ?? music.map(\.timeRange.duration) ?? beats[beats.count - 1]
        let transition = planned.kind == .none ? Transition.cut : Transition(planned.kind, duration: planned.duration ?? length, direction: planned.direction)
        let made = try engine(call) {
            try BeatMontage.make(clips: clips, cuts: cuts, duration: duration, transition: transition, music: music,
                                 renderSize: renderSize, placement: placement, drawing: transitionDrawing(call) { _ in planned })
        }
        for note in made.notes { try policy.report(note, at: call.L) }
        clips.forEach { $0.asset.tracks.forEach(remember) }
        music.map(remember)
        return push(call, made.sequence)
    }

    /// An array of increasing times in seconds at `index`.
    func beatTimes(_ call: LuaCall, _ index: Int32) throws -> [MediaTime] {
        let times = try list(call, index, limit: 1_000_000) { try time(call, $0, allowNegative: false) }
        for (entry, (earlier, later)) in zip(times, times.dropFirst()).enumerated() where later <= earlier {
            throw call.argumentError(index, "beat \(entry + 2) (\(format(later.seconds)) s) is not after beat \(entry + 1) (\(format(earlier.seconds)) s); beats go in order")
        }
        return times
    }

    /// An audio track, or an asset's first.
    private func musicTrack(_ call: LuaCall, _ index: Int32) throws -> AssetTrack {
        if let track: AssetTrack = try? call.object(index, classes[AssetTrack.self]), track.mediaType == .audio { return track }
        guard let song: Asset = try? call.object(index, classes[Asset.self]) else { throw call.typeError(index, expected: "Asset or audio AssetTrack") }
        guard let track = song.tracks(withMediaType: .audio).first else {
            throw call.argumentError(index, "\(song.path.quotedForMessage()) has no audio track")
        }
        return track
    }

    /// Pushes a joined sequence as comp, vc, mix and parts.
    private func push(_ call: LuaCall, _ joined: JoinedSequence) -> Int32 {
        push(call, joined.composition)
        push(call, joined.videoComposition)
        push(call, joined.audioMix)
        call.pushArray(joined.parts) { part in
            call.pushRecord {
                push(call, range: part.timeRange); call.setField("timeRange")
                if let track = part.videoTrack { push(call, track); call.setField("videoTrack") }
                if let track = part.audioTrack { push(call, track); call.setField("audioTrack") }
                if let layer = part.layer { push(call, layer); call.setField("layer") }
                if let map = part.timeMap { push(call, TimeMapBox(map)); call.setField("map") }
            }
        }
        return 4
    }

    /// The array of pieces at `index`.
    private func sequenceItems(_ call: LuaCall, _ index: Int32) throws -> [SequenceItem] {
        guard call.type(index) == LUA_TTABLE else { throw call.typeError(index, expected: "array of clips, stills and title cards") }
        let count = call.rawLength(index)
        guard count > 0 else { throw call.argumentError(index, "nothing to join: the array is empty") }
        guard count <= 10_000 else { throw call.argumentError(index, "too many items (\(count)); at most 10000") }
        return try (1...count).map { entry in
            call.pushElement(of: index, entry)
            defer { call.pop() }
            do {
                return try sequenceItem(call, call.absolute(-1))
            } catch let error as LuaArgumentError {
                throw call.argumentError(index, "item \(entry): \(error.message.argumentReason)", cause: error)
            }
        }
    }

    /// An asset, a title card, or `{asset, start=, duration=}` / `{asset, range=}`.
    private func sequenceItem(_ call: LuaCall, _ index: Int32) throws -> SequenceItem {
        if let card: TitleCard = try? call.object(index, classes[TitleCard.self]) { return .titleCard(card) }
        if let file: Asset = try? call.object(index, classes[Asset.self]) { return .clip(file, nil) }
        guard call.type(index) == LUA_TTABLE else { throw call.typeError(index, expected: "Asset, TitleCard or {asset, start=, duration=}") }
        call.pushElement(of: index, 1)
        let first: Asset? = try? call.object(-1, classes[Asset.self])
        call.pop()
        guard let file = first else { throw call.argumentError(index, "a clip table starts with its asset: {asset, start=, duration=}") }
        var start = MediaTime.zero, length: MediaTime? = nil, range: TimeRange? = nil
        try options(call, index, [
            "start": { start = try self.time(call, $0, allowNegative: false) },
            "duration": { length = try self.duration(call, $0) },
            "range": { range = try self.timeRange(call, $0) },
        ], positional: 1)
        if range != nil, length != nil || start != .zero {
            throw call.argumentError(index, "give range, or start and duration, not both")
        }
        return .clip(file, range ?? TimeRange(start: start, duration: length ?? file.duration - start))
    }

    // MARK: av.pictureInPicture

    private func pictureInPicture(_ call: LuaCall) throws -> Int32 {
        let comp: Composition = try call.object(1, classes[Composition.self])
        let vc: VideoComposition = try call.object(2, classes[VideoComposition.self])
        guard case .clip(let file, let range) = try sequenceItem(call, 3) else {
            throw call.argumentError(3, "a title card cannot be an inset; give a clip")
        }
        var inset = PictureInPicture(), at = MediaTime.zero
        try options(call, 4, [
            "at": { at = try self.time(call, $0, allowNegative: false) },
            "corner": { inset.corner = try self.choice(call, $0, PictureInPicture.Corner.self) },
            "scale": { inset.scale = try self.bounded(call, $0, PictureInPicture.scaleRange) },
            "margin": { inset.margin = try self.bounded(call, $0, PictureInPicture.marginRange) },
            "borderWidth": { inset.borderWidth = try self.bounded(call, $0, 0...100) },
            "borderColor": { inset.borderColor = try self.color(call, $0) },
        ])
        let added = try engine(call) { try inset.add(file, range: range, at: at, to: comp, videoComposition: vc) }
        file.tracks.forEach(remember)
        push(call, added.layerInstruction)
        push(call, added.videoTrack)
        if let audio = added.audioTrack { push(call, audio) } else { call.pushNil() }
        return 3
    }

    // MARK: Loudness

    private func loudness(_ call: LuaCall) throws -> Int32 {
        let source = try compositionOrAsset(call, 1)
        var mix: AudioMix? = nil, range: TimeRange? = nil
        try options(call, 2, [
            "audioMix": { mix = try call.object($0, self.classes[AudioMix.self]) },
            "timeRange": { range = try self.timeRange(call, $0) },
        ])
        guard let measured = try engine(call, { try source.loudness(audioMix: mix, range: range) }) else {
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
                          set: { [unowned self] call, e, index in
                              guard !call.isNoneOrNil(index) else { e.loudness = nil; return }
                              let target = try bounded(call, index, LoudnessNormalization.integratedRange)
                              e.loudness = LoudnessNormalization(integrated: target, truePeak: e.loudness?.truePeak ?? -1)
                          })
        luaClass.property("truePeakLimit", of: ExportSession.self,
                          doc: "with loudness: the ceiling for peaks in dBTP (-1 by default; -20…0)",
                          get: { call, e in call.push(e.loudness?.truePeak ?? -1) },
                          set: { [unowned self] call, e, index in
                              let ceiling = try bounded(call, index, LoudnessNormalization.truePeakRange)
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
                          get: { [unowned self] call, p in pushDucking(call, p.ducking) },
                          set: { [unowned self] call, p, index in p.ducking = try ducking(call, index) })
        luaClass.method("setDucking", of: AudioMixInputParameters.self,
                        doc: "p:setDucking{under=, amount=, threshold=, attack=, hold=, release=}: while the level of the `under` tracks is at or above threshold, this track goes down by amount dB over attack seconds (a straight line in dB); after hold seconds below it, back up over release; nil removes it") { [unowned self] call, p in
            p.ducking = try ducking(call, 2)
            return 0
        }
    }

    private func ducking(_ call: LuaCall, _ index: Int32) throws -> Ducking? {
        guard !call.isNoneOrNil(index) else { return nil }
        guard call.type(index) == LUA_TTABLE else { throw call.typeError(index, expected: "ducking table {under=, amount=, …} or nil") }
        var settings = Ducking(under: [])
        let seconds = { (value: Int32) in
            let t = try self.time(call, value, allowNegative: false)
            guard t <= Ducking.maximumTime else { throw call.argumentError(value, "at most \(Ducking.maximumTime.seconds) s, got \(t.seconds)") }
            return t
        }
        try options(call, index, [
            "under": { settings.under = try self.sidechains(call, $0) },
            "amount": { settings.amount = try self.bounded(call, $0, Ducking.amountRange) },
            "threshold": { settings.threshold = try self.bounded(call, $0, Ducking.thresholdRange) },
            "attack": { settings.attack = try seconds($0) },
            "hold": { settings.hold = try seconds($0) },
            "release": { settings.release = try seconds($0) },
            "window": {
                settings.window = try self.time(call, $0)
                guard Ducking.windowRange.contains(settings.window) else { throw call.argumentError($0, "window must be 0.001…1 s, got \(settings.window.seconds)") }
            },
        ])
        guard !settings.under.isEmpty else { throw call.argumentError(index, "ducking needs under = the track (or tracks) whose sound lowers this one") }
        return settings
    }

    /// A track reference or an array of them.
    private func sidechains(_ call: LuaCall, _ index: Int32) throws -> [Ducking.Sidechain] {
        let reference = { (at: Int32) in
            let (id, source) = try self.trackReference(call, at, mediaType: .audio)
            return Ducking.Sidechain(trackID: id, source: source)
        }
        guard call.type(index) == LUA_TTABLE else { return [try reference(index)] }
        let count = min(call.rawLength(index), 1000)
        return try (0..<count).map { offset in
            call.pushElement(of: index, offset + 1)
            defer { call.pop() }
            return try reference(call.absolute(-1))
        }
    }

    private func pushDucking(_ call: LuaCall, _ ducking: Ducking?) {
        guard let ducking else { call.pushNil(); return }
        call.pushRecord {
            call.pushArray(ducking.under) { call.push($0.trackID) }; call.setField("under")
            call.push(ducking.amount); call.setField("amount")
            call.push(ducking.threshold); call.setField("threshold")
            for (name, value) in [("attack", ducking.attack), ("hold", ducking.hold), ("release", ducking.release), ("window", ducking.window)] {
                call.push(value.seconds); call.setField(name)
            }
        }
    }

    // MARK: Shared

    /// Reads the fields of the options table at `index` (nil or absent: none) through
    /// `readers`, each given the value's stack index; a name not among them is an error
    /// naming those that are. Entries 1…`positional` are left to the caller.
    func options(_ call: LuaCall, _ index: Int32, _ readers: [String: (Int32) throws -> Void], positional: Int = 0) throws {
        guard !call.isNoneOrNil(index) else { return }
        guard call.type(index) == LUA_TTABLE else { throw call.typeError(index, expected: "table of options") }
        let table = call.absolute(index)
        let L = call.L
        let names = readers.keys.sorted().joined(separator: ", ")
        lua_pushnil(L)                                              // key
        while lua_next(L, table) != 0 {                             // key value
            if positional > 0, lua_type(L, -2) == LUA_TNUMBER, lua_isinteger(L, -2) != 0,
               (1...positional).contains(Int(lua_tointegerx(L, -2, nil))) {
                call.pop()                                          // key
                continue
            }
            guard lua_type(L, -2) == LUA_TSTRING else {
                let problem = "unexpected \(call.typeName(-1)) entry; options are named (\(names))"
                call.pop(2)
                throw call.argumentError(index, problem)
            }
            let name = LuaState.string(L, at: -2)
            guard let read = readers[name] else {
                call.pop(2)
                throw call.argumentError(index, "unknown option \(name.quotedForMessage()) (options: \(names))")
            }
            do {
                try read(call.absolute(-1))
            } catch {
                call.pop(2)
                guard let problem = error as? LuaArgumentError else { throw error }
                throw call.argumentError(index, "field '\(name)': \(problem.message.argumentReason)")
            }
            call.pop()                                              // key
        }
    }
}

extension Binding {
    static let editHelpers = Binding(classes: [.init(TitleCard.self) { $0.makeTitleCardClass() }], functions: { $0.editHelperFunctions })
}
