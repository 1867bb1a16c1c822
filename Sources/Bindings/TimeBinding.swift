import CMoonLua
import CMoonLuaShim
import MoonreelEngine
import MoonreelScriptHost

/// `av.time`, `av.range`, `av.rangeFromTo`: exact times and ranges (CMTime, CMTimeRange).
extension API {
    func makeTimeClass() -> LuaClass {
        let luaClass = LuaClass("Time", doc: "An exact rational time (value/timescale seconds); accepted wherever a time is.")
        luaClass.describe = { ($0 as? TimeBox).map { "Time(\($0.time.value)/\($0.time.timescale) = \($0.time.seconds) s)" } ?? "Time" }
        luaClass.property("seconds", of: TimeBox.self, doc: "the time in seconds") { call, box in call.push(box.time.seconds) }
        luaClass.property("value", of: TimeBox.self) { call, box in call.push(Int(box.time.value)) }
        luaClass.property("timescale", of: TimeBox.self) { call, box in call.push(Int(box.time.timescale)) }
        luaClass.document([
            "value": "the numerator: value / timescale seconds",
            "timescale": "units per second",
        ])
        luaClass.example = """
            local frame = av.time(1, 30)            -- exactly 1/30 s (CMTimeMake)
            local t = frame * 90                    -- exactly 3 s; arithmetic stays exact
            print(t.seconds, av.time(2.5, 600).value)   -- 3.0   1500 (CMTimeMakeWithSeconds)
            """
        return luaClass
    }

    func makeTimeMapClass() -> LuaClass {
        let luaClass = LuaClass("TimeMap", doc: "Where the times of a composition went in an edit that moved them (comp:removeSilences, comp:scaleTimeRange): cues:remapped(map) carries cues through it.")
        luaClass.describe = { ($0 as? TimeMapBox).map { "TimeMap(\($0.map.pieces.count) kept stretches)" } ?? "TimeMap" }
        luaClass.method("time", of: TimeMapBox.self, readOnly: true, doc: "map:time(t) → where time t (seconds, before the edit) is now, or nil when it was removed") { call, box in
            if let moved = box.map.map(try call.time(2, allowNegative: false)) { call.push(seconds: moved) } else { call.pushNil() }
            return 1
        }
        luaClass.method("range", of: TimeMapBox.self, readOnly: true, doc: "map:range(start, finish) → start, finish now (the part that was kept), or nil when all of it was removed") { call, box in
            let (start, finish) = (try call.time(2, allowNegative: false), try call.time(3, allowNegative: false))
            guard finish >= start else { throw call.argumentError(3, "finish (\(format(finish.seconds)) s) is before start (\(format(start.seconds)) s)") }
            guard let moved = box.map.map(TimeRange(from: start, to: finish)) else {
                call.pushNil()
                return 1
            }
            call.push(seconds: moved.start)
            call.push(seconds: moved.end)
            return 2
        }
        luaClass.example = """
            local removed, map = comp:removeSilences(pauses)
            print(map:time(12.0))                       -- where 12 s of the talk is now
            local captions = av.readCues("episode.srt"):remapped(map)
            """
        return luaClass
    }

    func makeRangeClass() -> LuaClass {
        let luaClass = LuaClass("TimeRange", doc: "A time range: start, duration and finish in seconds.")
        luaClass.describe = { ($0 as? RangeBox).map { "TimeRange(\(format($0.range.start.seconds))…\(format($0.range.end.seconds)) s)" } ?? "TimeRange" }
        luaClass.property("start", of: RangeBox.self) { call, box in call.push(seconds: box.range.start) }
        luaClass.property("duration", of: RangeBox.self) { call, box in call.push(seconds: box.range.duration) }
        luaClass.property("finish", of: RangeBox.self) { call, box in call.push(seconds: box.range.end) }
        luaClass.property("startTime", of: RangeBox.self) { call, box in try call.push(exact: box.range.start) }
        luaClass.property("durationTime", of: RangeBox.self) { call, box in try call.push(exact: box.range.duration) }
        luaClass.property("finishTime", of: RangeBox.self) { call, box in try call.push(exact: box.range.end) }
        luaClass.method("containsTime", of: RangeBox.self, readOnly: true, doc: "r:containsTime(t)") { call, box in
            call.push(box.range.contains(try call.time(2)))
            return 1
        }
        luaClass.document([
            "start": "seconds", "duration": "seconds", "finish": "seconds: start + duration",
            "startTime": "exact start", "durationTime": "exact duration", "finishTime": "exact finish",
        ])
        luaClass.example = """
            local r = av.range(2, 3)                                  -- 2 s to 5 s
            print(r.finish, av.range{ start = 2, finish = 5 }.duration, r:containsTime(4.9))
            """
        return luaClass
    }

    /// Arithmetic and comparison on times, mixing exact times and seconds.
    func installMetamethods() {
        let L = lua.L
        _ = moon_getmetatable_named(L, "moonreel.Time")
        lua.setFunction("__add", qualifiedName: "+") { call in
            try call.push(exact: try call.time(1) + call.time(2)); return 1
        }
        lua.setFunction("__sub", qualifiedName: "-") { call in
            try call.push(exact: try call.time(1) - call.time(2)); return 1
        }
        lua.setFunction("__unm", qualifiedName: "-") { call in
            try call.push(exact: -(try call.time(1))); return 1
        }
        lua.setFunction("__mul", qualifiedName: "*") { call in
            let (timeIndex, countIndex): (Int32, Int32) = call.type(1) == LUA_TNUMBER ? (2, 1) : (1, 2)
            let t = try call.time(timeIndex)
            let count = try call.integer(countIndex)
            let (product, overflow) = t.value.multipliedReportingOverflow(by: Int64(count))
            guard !overflow, abs(Double(product) / Double(t.timescale)) < 1e9 else {
                throw call.argumentError(countIndex, "time × \(count) is too large")
            }
            try call.push(exact: MediaTime(value: product, timescale: t.timescale)); return 1
        }
        lua.setFunction("__eq", qualifiedName: "==") { call in
            call.push(try call.time(1) == call.time(2)); return 1
        }
        lua.setFunction("__lt", qualifiedName: "<") { call in
            call.push(try call.time(1) < call.time(2)); return 1
        }
        lua.setFunction("__le", qualifiedName: "<=") { call in
            call.push(try call.time(1) <= call.time(2)); return 1
        }
        moon_pop(L, 1)
    }



    /// Values `av` carries for ports: kCMTimeZero and AVCoreAnimationBeginTimeAtZero (Apple's
    /// tiny positive number meaning "time 0" to Core Animation; here beginTime 0 already is).
    func installTimeConstants() {
        for name in ["zero", "kCMTimeZero"] {
            lua.push(TimeBox(.zero), as: classes[TimeBox.self])
            lua_setfield(lua.L, -2, name)
        }
        for name in ["beginTimeAtZero", "AVCoreAnimationBeginTimeAtZero"] {
            lua_pushnumber(lua.L, 1e-100)
            lua_setfield(lua.L, -2, name)
        }
    }

    var timeFunctions: [AVFunction] {
        [
            ("time", "av.time(value, timescale): the exact time value/timescale seconds (CMTimeMake); a fractional value is seconds rounded to the timescale (CMTimeMakeWithSeconds)", { call in
                let scale = try call.timescale(2)
                if call.type(1) == LUA_TNUMBER, let seconds = try? call.number(1), seconds.isFinite, seconds != seconds.rounded() {
                    try call.push(exact: try call.time(1, seconds: seconds, timescale: scale))
                    return 1
                }
                let value = try call.integer(1)
                let exact = MediaTime(value: Int64(value), timescale: scale)
                guard abs(exact.seconds) < 1e9 else { throw call.argumentError(1, "time \(exact.seconds) s is too large") }
                try call.push(exact: exact)
                return 1
            }),
            ("timeWithSeconds", "av.timeWithSeconds(seconds, timescale): seconds rounded to the timescale (CMTimeMakeWithSeconds)", { call in
                try call.push(exact: try call.time(1, seconds: try call.finite(1), timescale: try call.timescale(2)))
                return 1
            }),
            ("range", "av.range(start, duration), av.range{start=, duration=} or av.range{start=, finish=}: a time range", { call in
                if call.type(1) == LUA_TTABLE, call.isNoneOrNil(2) {
                    try call.push(range: try call.rangeTable(1))
                    return 1
                }
                let start = try call.time(1)
                let length = try call.time(2)
                guard !length.isNegative else { throw call.argumentError(2, "duration must not be negative, got \(length.seconds)") }
                try call.push(range: TimeRange(start: start, duration: length))
                return 1
            }),
            ("rangeFromTo", "av.rangeFromTo(start, finish): the range between two times", { call in
                let start = try call.time(1)
                let finish = try call.time(2)
                guard finish >= start else { throw call.argumentError(2, "finish \(finish.seconds) is before start \(start.seconds)") }
                try call.push(range: TimeRange(from: start, to: finish))
                return 1
            }),
        ]
    }
}

/// Times and ranges as `av.time` and `av.range` read them.
private extension LuaCall {
    /// A CMTime timescale: a positive 32-bit integer.
    func timescale(_ index: Int32) throws -> Int32 {
        let scale = try integer(index)
        guard scale > 0, scale <= Int(Int32.max) else {
            throw argumentError(index, "timescale must be a positive 32-bit integer, got \(scale)")
        }
        return Int32(scale)
    }

    func time(_ index: Int32, seconds: Double, timescale: Int32) throws -> MediaTime {
        // Kept in the timescale asked for, as CMTimeMakeWithSeconds does (not reduced).
        guard abs(seconds) < 1e9 else { throw argumentError(index, "time \(format(seconds)) s is too large") }
        return MediaTime(value: Int64((seconds * Double(timescale)).rounded()), timescale: timescale)
    }

    /// `{start=, duration=}` or `{start=, finish=}` (CMTimeRangeMake, CMTimeRangeFromTimeToTime).
    func rangeTable(_ index: Int32) throws -> TimeRange {
        var start: MediaTime?, duration: MediaTime?, finish: MediaTime?
        try forEachField(of: index) { key in
            switch key {
            case "start": start = try time(-1)
            case "duration": duration = try time(-1)
            case "finish": finish = try time(-1)
            default: throw argumentError(index, "unknown range field \(key.quotedForMessage()) (use start with duration or finish)")
            }
        }
        guard let start, (duration == nil) != (finish == nil) else {
            throw argumentError(index, "a range table needs start and either duration or finish")
        }
        let range = duration.map { TimeRange(start: start, duration: $0) } ?? TimeRange(from: start, to: finish ?? start)
        guard !range.duration.isNegative else { throw argumentError(index, "the range ends before it starts") }
        return range
    }
}

extension Binding {
    static let time = Binding(classes: [.init(TimeBox.self) { $0.makeTimeClass() }, .init(RangeBox.self) { $0.makeRangeClass() },
                                        .init(TimeMapBox.self) { $0.makeTimeMapClass() }],
                            functions: { $0.timeFunctions }, install: { $0.installMetamethods() }, addToAV: { $0.installTimeConstants() })
}
