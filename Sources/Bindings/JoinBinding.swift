import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// `av.join`, `av.cutToBeats` and `av.titleCard`: clips, stills and title cards one after
/// another with transitions, built of the ordinary objects a script goes on editing.
extension API {
    func makeTitleCardClass() -> LuaClass {
        let luaClass = LuaClass("TitleCard", doc: "Text on a colour, for a given time: a piece of av.join, made of ordinary layers in the video composition's animation tool.")
        luaClass.describe = { ($0 as? TitleCard).map { "TitleCard(\($0.title.quotedForMessage(limit: 30)), \(format($0.duration.seconds)) s)" } ?? "TitleCard" }
        luaClass.property("title", of: TitleCard.self, doc: "the main line (\"\\n\" starts another)",
                          get: { call, card in call.push(card.title) },
                          set: { call, card, index in card.title = try call.text(index) })
        luaClass.property("subtitle", of: TitleCard.self, doc: "a smaller line under the title, or nil",
                          get: { call, card in if let subtitle = card.subtitle { call.push(subtitle) } else { call.pushNil() } },
                          set: { call, card, index in card.subtitle = call.isNoneOrNil(index) ? nil : try call.text(index) })
        luaClass.property("duration", of: TitleCard.self, doc: "seconds on screen, transitions included (3 by default)",
                          get: { call, card in call.push(card.duration.seconds) },
                          set: { call, card, index in card.duration = try call.duration(index) })
        luaClass.property("backgroundColor", of: TitleCard.self, doc: "the card's colour (black by default)",
                          get: { call, card in call.push(color: card.backgroundColor) },
                          set: { call, card, index in card.backgroundColor = try call.color(index) })
        luaClass.property("textColor", of: TitleCard.self, doc: "white by default",
                          get: { call, card in call.push(color: card.textColor) },
                          set: { call, card, index in card.textColor = try call.color(index) })
        luaClass.property("font", of: TitleCard.self, doc: "font family (Noto Sans CJK JP by default)",
                          get: { call, card in call.push(card.font) },
                          set: { call, card, index in card.font = try call.string(index) })
        luaClass.property("fontSize", of: TitleCard.self, doc: "the title's size in pixels; nil: a tenth of the frame's shorter side (the subtitle is half)",
                          get: { call, card in if let size = card.fontSize { call.push(size) } else { call.pushNil() } },
                          set: { call, card, index in card.fontSize = call.isNoneOrNil(index) ? nil : try call.bounded(index, 1...1000) })
        luaClass.example = """
            local card = av.titleCard{ title = "Day one", subtitle = "Lisbon", duration = 3, backgroundColor = "navy" }
            local comp, vc, mix = av.join({ card, av.asset("walk.mov") }, { transition = "fadeThroughBlack" })
            """
        return luaClass
    }

    func join(_ call: LuaCall) throws -> Int32 {
        let items = try sequenceItems(call, 1)
        var common = PlannedTransition(kind: .none), length = MediaTime(value: 1, timescale: 1)
        var direction: Transition.Direction? = nil, perJoin: [PlannedTransition]? = nil, renderSize: Size? = nil
        var fit = FitChoice(default: .fit)
        defer { release([common] + (perJoin ?? [])) }
        try call.options(2, [
            "transition": { common = try self.plannedTransition(call, $0) },
            "duration": { length = try call.duration($0) },
            "direction": { direction = try call.choice($0, Transition.Direction.self) },
            "transitions": { perJoin = try self.transitionList(call, $0) },
            "renderSize": { renderSize = try call.size($0) },
            "fit": { try fit.readFit(call, $0) },
            "focus": { fit.focus = try call.focus($0) },
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
        let joined = try call.engine {
            try JoinedSequence.make(items, transitions: transitions, renderSize: renderSize, placement: placement, drawing: drawing)
        }
        for note in joined.notes { try policy.report(note, at: call.L) }
        for case .clip(let asset, _) in items { asset.tracks.forEach(remember) }
        return try push(call, joined: joined)
    }

    /// `av.cutToBeats(clips, beats, options)`.
    func cutToBeats(_ call: LuaCall) throws -> Int32 {
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
        try call.options(3, [
            "every": { value in
                every = try call.integer(value)
                guard (1...1000).contains(every) else { throw call.argumentError(value, "must be a whole number of beats from 1 to 1000, got \(every)") }
            },
            "transition": { planned = try self.plannedTransition(call, $0) },
            "transitionDuration": { length = try call.duration($0) },
            "music": { music = try self.musicTrack(call, $0) },
            "duration": { total = try call.duration($0) },
            "renderSize": { renderSize = try call.size($0) },
            "fit": { try fit.readFit(call, $0) },
            "focus": { fit.focus = try call.focus($0) },
        ])
        defer { release([planned]) }
        let placement = try fit.placement(call, 3)
        guard !beats.isEmpty else {
            throw call.argumentError(2, "the beat list is empty, so there is nothing to cut on (downbeats are empty when no bar was found); give beat times in seconds, e.g. av.analyze(song).beats")
        }
        let cuts = beats.enumerated().filter { $0.offset % every == 0 }.map(\.element)
        let duration = total ?? music.map(\.timeRange.duration) ?? beats[beats.count - 1]
        let transition = planned.kind == .none ? Transition.cut : Transition(planned.kind, duration: planned.duration ?? length, direction: planned.direction)
        let made = try call.engine {
            try BeatMontage.make(clips: clips, cuts: cuts, duration: duration, transition: transition, music: music,
                                 renderSize: renderSize, placement: placement, drawing: transitionDrawing(call) { _ in planned })
        }
        for note in made.notes { try policy.report(note, at: call.L) }
        clips.forEach { $0.asset.tracks.forEach(remember) }
        music.map(remember)
        return try push(call, joined: made.sequence)
    }

    /// An array of increasing times in seconds at `index`.
    func beatTimes(_ call: LuaCall, _ index: Int32) throws -> [MediaTime] {
        let times = try call.list(index, limit: 1_000_000) { try call.time($0, allowNegative: false) }
        for (entry, (earlier, later)) in zip(times, times.dropFirst()).enumerated() where later <= earlier {
            throw call.argumentError(index, "beat \(entry + 2) (\(format(later.seconds)) s) is not after beat \(entry + 1) (\(format(earlier.seconds)) s); beats go in order")
        }
        return times
    }

    /// An audio track, or an asset's first.
    func musicTrack(_ call: LuaCall, _ index: Int32) throws -> AssetTrack {
        if let track: AssetTrack = try? call.object(index, AssetTrack.self), track.mediaType == .audio { return track }
        guard let song: Asset = try? call.object(index, Asset.self) else { throw call.typeError(index, expected: "Asset or audio AssetTrack") }
        guard let track = song.tracks(withMediaType: .audio).first else {
            throw call.argumentError(index, "\(song.path.quotedForMessage()) has no audio track")
        }
        return track
    }

    /// Pushes a joined sequence as comp, vc, mix and parts.
    func push(_ call: LuaCall, joined: JoinedSequence) throws -> Int32 {
        try call.push(joined.composition)
        try call.push(joined.videoComposition)
        try call.push(joined.audioMix)
        try call.pushArray(joined.parts) { part in
            try call.pushRecord {
                try call.push(range: part.timeRange); call.setField("timeRange")
                if let track = part.videoTrack { try call.push(track); call.setField("videoTrack") }
                if let track = part.audioTrack { try call.push(track); call.setField("audioTrack") }
                if let layer = part.layer { try call.push(layer); call.setField("layer") }
                if let map = part.timeMap { try call.push(TimeMapBox(map)); call.setField("map") }
            }
        }
        return 4
    }

    /// The array of pieces at `index`.
    func sequenceItems(_ call: LuaCall, _ index: Int32) throws -> [SequenceItem] {
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
    func sequenceItem(_ call: LuaCall, _ index: Int32) throws -> SequenceItem {
        if let card: TitleCard = try? call.object(index, TitleCard.self) { return .titleCard(card) }
        if let file: Asset = try? call.object(index, Asset.self) { return .clip(file, nil) }
        guard call.type(index) == LUA_TTABLE else { throw call.typeError(index, expected: "Asset, TitleCard or {asset, start=, duration=}") }
        call.pushElement(of: index, 1)
        let first: Asset? = try? call.object(-1, Asset.self)
        call.pop()
        guard let file = first else { throw call.argumentError(index, "a clip table starts with its asset: {asset, start=, duration=}") }
        var start = MediaTime.zero, length: MediaTime? = nil, range: TimeRange? = nil
        try call.options(index, [
            "start": { start = try call.time($0, allowNegative: false) },
            "duration": { length = try call.duration($0) },
            "range": { range = try call.timeRange($0) },
        ], positional: 1)
        if range != nil, length != nil || start != .zero {
            throw call.argumentError(index, "give range, or start and duration, not both")
        }
        return .clip(file, range ?? TimeRange(start: start, duration: length ?? file.duration - start))
    }
}
