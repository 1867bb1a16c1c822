import CMoonLua
import CMoonLuaShim
import Engine
import ScriptHost

/// `av.time`, `av.range`, `av.rangeFromTo`: exact times and ranges (CMTime, CMTimeRange).
extension API {
    func makeTimeClass() -> LuaClass {
        let luaClass = LuaClass("Time", doc: "An exact rational time (value/timescale seconds); accepted wherever a time is.")
        luaClass.describe = { ($0 as? TimeBox).map { "Time(\($0.time.value)/\($0.time.timescale) = \($0.time.seconds) s)" } ?? "Time" }
        luaClass.property("seconds", of: TimeBox.self, doc: "the time in seconds") { call, box in call.push(box.time.seconds) }
        luaClass.property("value", of: TimeBox.self) { call, box in call.push(Int(box.time.value)) }
        luaClass.property("timescale", of: TimeBox.self) { call, box in call.push(Int(box.time.timescale)) }
        return luaClass
    }

    func makeRangeClass() -> LuaClass {
        let luaClass = LuaClass("TimeRange", doc: "A time range: start, duration and finish in seconds.")
        luaClass.describe = { ($0 as? RangeBox).map { "TimeRange(\(format($0.range.start.seconds))…\(format($0.range.end.seconds)) s)" } ?? "TimeRange" }
        luaClass.property("start", of: RangeBox.self) { [unowned self] call, box in push(call, seconds: box.range.start) }
        luaClass.property("duration", of: RangeBox.self) { [unowned self] call, box in push(call, seconds: box.range.duration) }
        luaClass.property("finish", of: RangeBox.self) { [unowned self] call, box in push(call, seconds: box.range.end) }
        luaClass.property("startTime", of: RangeBox.self) { [unowned self] call, box in push(call, exact: box.range.start) }
        luaClass.property("durationTime", of: RangeBox.self) { [unowned self] call, box in push(call, exact: box.range.duration) }
        luaClass.property("finishTime", of: RangeBox.self) { [unowned self] call, box in push(call, exact: box.range.end) }
        luaClass.method("containsTime", of: RangeBox.self, doc: "r:containsTime(t)") { [unowned self] call, box in
            call.push(box.range.contains(try time(call, 2)))
            return 1
        }
        return luaClass
    }

    /// Arithmetic and comparison on times, mixing exact times and seconds.
    func installMetamethods() {
        let L = lua.L
        _ = moon_getmetatable_named(L, "moonreel.Time")
        lua.setFunction("__add", qualifiedName: "+") { [unowned self] call in
            push(call, exact: try time(call, 1) + time(call, 2)); return 1
        }
        lua.setFunction("__sub", qualifiedName: "-") { [unowned self] call in
            push(call, exact: try time(call, 1) - time(call, 2)); return 1
        }
        lua.setFunction("__unm", qualifiedName: "-") { [unowned self] call in
            push(call, exact: -(try time(call, 1))); return 1
        }
        lua.setFunction("__mul", qualifiedName: "*") { [unowned self] call in
            let (timeIndex, countIndex): (Int32, Int32) = call.type(1) == LUA_TNUMBER ? (2, 1) : (1, 2)
            let t = try time(call, timeIndex)
            let count = try call.integer(countIndex)
            let (product, overflow) = t.value.multipliedReportingOverflow(by: Int64(count))
            guard !overflow, abs(Double(product) / Double(t.timescale)) < 1e9 else {
                throw call.argumentError(countIndex, "time × \(count) is too large")
            }
            push(call, exact: MediaTime(value: product, timescale: t.timescale)); return 1
        }
        lua.setFunction("__eq", qualifiedName: "==") { [unowned self] call in
            call.push(try time(call, 1) == time(call, 2)); return 1
        }
        lua.setFunction("__lt", qualifiedName: "<") { [unowned self] call in
            call.push(try time(call, 1) < time(call, 2)); return 1
        }
        lua.setFunction("__le", qualifiedName: "<=") { [unowned self] call in
            call.push(try time(call, 1) <= time(call, 2)); return 1
        }
        moon_pop(L, 1)
    }

    var timeFunctions: [(String, String, LuaFunction)] {
        [
            ("time", "av.time(value, timescale): the exact time value/timescale seconds", { [unowned self] call in
                let value = try call.integer(1)
                let scale = try call.integer(2)
                guard let exact = MediaTime.checked(value: Int64(value), timescale: Int64(scale)) else {
                    throw call.argumentError(2, "timescale must be a positive 32-bit integer, got \(scale)")
                }
                guard abs(exact.seconds) < 1e9 else { throw call.argumentError(1, "time \(exact.seconds) s is too large") }
                push(call, exact: exact)
                return 1
            }),
            ("range", "av.range(start, duration): a time range", { [unowned self] call in
                let start = try time(call, 1)
                let length = try time(call, 2)
                guard !length.isNegative else { throw call.argumentError(2, "duration must not be negative, got \(length.seconds)") }
                push(call, range: TimeRange(start: start, duration: length))
                return 1
            }),
            ("rangeFromTo", "av.rangeFromTo(start, finish): the range between two times", { [unowned self] call in
                let start = try time(call, 1)
                let finish = try time(call, 2)
                guard finish >= start else { throw call.argumentError(2, "finish \(finish.seconds) is before start \(start.seconds)") }
                push(call, range: TimeRange(from: start, to: finish))
                return 1
            }),
        ]
    }
}
