import CMoonLua
import CMoonLuaShim
import MoonreelEngine
import MoonreelScriptHost

/// Transitions in `av.join` and `av.cutToBeats`: the built-in kinds, and effects that say
/// `kind = "transition"` used by name beside them. Such an effect is called once per join with
/// the join's `renderSize`, `start` and `duration` (and the entry's own fields) and returns
/// where the incoming picture shows (a mask layer) or what each side does.
extension API {
    /// A join's transition as written: a built-in kind, or an effect that draws it (its name and
    /// a registry reference to the entry holding its parameters); a missing duration is the
    /// call's `duration`.
    struct PlannedTransition {
        var kind: Transition.Kind
        var effect: (name: String, entry: Int32?)? = nil
        var duration: MediaTime? = nil
        var direction: Transition.Direction? = nil
    }

    /// A transition: a name, or `{name, duration=, direction=, …}` whose other fields are a
    /// transition effect's parameters.
    func plannedTransition(_ call: LuaCall, _ index: Int32) throws -> PlannedTransition {
        guard call.type(index) == LUA_TTABLE else { return PlannedTransition(kind: try kind(call, index), effect: try effectName(call, index)) }
        call.pushElement(of: index, 1)
        defer { call.pop() }
        let name = call.absolute(-1)
        var planned = PlannedTransition(kind: try kind(call, name), effect: try effectName(call, name))
        let readers: [String: (Int32) throws -> Void] = [
            "duration": { planned.duration = try call.duration($0) },
            "direction": { planned.direction = try call.choice($0, Transition.Direction.self) },
        ]
        guard planned.effect != nil else {
            try call.options(index, readers, positional: 1)
            return planned
        }
        // The effect checks its own parameters: the entry goes to it whole.
        for (field, read) in readers {
            defer { call.pop() }
            guard call.pushField(of: index, field) != LUA_TNIL else { continue }
            do { try read(call.absolute(-1)) } catch let error as LuaArgumentError {
                throw call.argumentError(index, "field '\(field)': \(error.message.argumentReason)")
            }
        }
        call.pushValue(index)
        planned.effect?.entry = luaL_ref(call.L, MOON_LUA_REGISTRYINDEX)
        return planned
    }

    /// One transition per join.
    func transitionList(_ call: LuaCall, _ index: Int32) throws -> [PlannedTransition] {
        guard call.type(index) == LUA_TTABLE else { throw call.typeError(index, expected: "array of transitions") }
        let count = min(call.rawLength(index), 10_000)
        var planned: [PlannedTransition] = []
        for offset in 0..<count {
            call.pushElement(of: index, offset + 1)
            defer { call.pop() }
            do {
                planned.append(try plannedTransition(call, call.absolute(-1)))
            } catch {
                release(planned)   // the entries read so far hold references to their tables
                guard let error = error as? LuaArgumentError else { throw error }
                throw call.argumentError(index, "transition \(offset + 1): \(error.message.argumentReason)", cause: error)
            }
        }
        return planned
    }

    /// Frees the registry references the planned transitions hold.
    func release(_ planned: [PlannedTransition]) {
        for case let entry? in planned.map({ $0.effect?.entry }) { luaL_unref(lua.L, MOON_LUA_REGISTRYINDEX, entry) }
    }

    /// A built-in kind by name ("cut" is "none"); any other name is a transition effect's,
    /// whose pictures overlap and whose sound crossfades as a dissolve's.
    private func kind(_ call: LuaCall, _ index: Int32) throws -> Transition.Kind {
        let name = try call.string(index)
        if name == "cut" { return .none }
        return Transition.Kind(rawValue: name) ?? .dissolve
    }

    private func effectName(_ call: LuaCall, _ index: Int32) throws -> (name: String, entry: Int32?)? {
        let name = try call.string(index)
        return name == "cut" || Transition.Kind(rawValue: name) != nil ? nil : (name, nil)
    }

    /// What the transition effects among `planned` (the transition of join i) draw, or nil
    /// when no join has one. Each effect is called when its join's time range is known.
    func transitionDrawing(_ call: LuaCall, _ planned: @escaping (Int) -> PlannedTransition?) -> TransitionDrawing {
        { join, range, size in
            let api = try call.api()
            guard let transition = planned(join), let effect = transition.effect else { return nil }
            let L = call.L
            let base = lua_gettop(L)
            defer { lua_settop(L, base) }
            try api.lua.load(String(decoding: PackageResources.transition_lua, as: UTF8.self), chunkName: "=transition")
            call.push(effect.name)
            call.pushRecord {
                call.pushArray([size.width, size.height]) { call.push($0) }
                call.setField("renderSize")
                call.push(range.start.seconds); call.setField("start")
                call.push(range.duration.seconds); call.setField("duration")
                if let direction = transition.direction { call.push(direction.rawValue); call.setField("direction") }
            }
            if let entry = effect.entry { lua_rawgeti(L, MOON_LUA_REGISTRYINDEX, lua_Integer(entry)) } else { call.pushNil() }
            call.push(Transition.Kind.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))
            do {
                try api.lua.call(argumentCount: 4, resultCount: 1)
            } catch let error as ScriptError {
                throw LuaArgumentError("\(call.functionName): join \(join + 1): \(error.message)")
            }
            let sides = try api.drawnSides(call, lua_gettop(L), effect: "join \(join + 1): transition effect \"\(effect.name)\"", over: range)
            return (sides.outgoing, sides.incoming)
        }
    }

    /// An effect's drawing: a mask layer (where the incoming picture shows), or
    /// `{ incoming = side, outgoing = side }`, a side being `{ mask =, opacity = {from, to},
    /// scale = {from, to}, blur = {from, to}, offset = {{x, y}, {x, y}}, timing = "easeInEaseOut" }`
    /// (and, incoming, `onTop = true` to be drawn over the outgoing picture).
    /// `effect` names the join and the effect for messages.
    private func drawnSides(_ call: LuaCall, _ index: Int32, effect: String, over range: TimeRange) throws -> (outgoing: TransitionMotion, incoming: TransitionMotion) {
        let problem = { (what: String) in LuaArgumentError("\(call.functionName): \(effect) \(what)") }
        if let mask = try? call.object(index, Layer.self) {
            var incoming = TransitionMotion()
            incoming.mask = try checkedMask(mask, problem)
            return (TransitionMotion(), incoming)
        }
        guard call.type(index) == LUA_TTABLE else {
            throw problem("returned \(call.typeName(index)); a transition returns a mask layer or { incoming = {…}, outgoing = {…} }")
        }
        var sides = (outgoing: TransitionMotion(), incoming: TransitionMotion())
        func side(_ name: String, _ motion: inout TransitionMotion) throws {
            guard call.pushField(of: index, name) != LUA_TNIL else { return call.pop() }
            defer { call.pop() }
            let table = call.absolute(-1)
            guard call.type(table) == LUA_TTABLE else { throw problem("returned \(name) = \(call.typeName(table)); a side is a table") }
            try call.forEachField(of: table) { key in
                _ = call.pushField(of: table, key)
                defer { call.pop() }
                let value = call.absolute(-1)
                do {
                    switch key {
                    case "mask": motion.mask = try checkedMask(try call.object(value, Layer.self), problem)
                    case "opacity":
                        let (from, to) = try pair(call, value) { try call.unit($0) }
                        motion.opacity = [.init(from: from, to: to, range: range)]
                    case "scale": motion.scale = try pair(call, value) { try self.number(call, $0, in: 0.001...1000) }
                    case "blur": motion.blur = try pair(call, value) { try self.number(call, $0, in: 0...200) }
                    case "offset": motion.offset = try pair(call, value) { try call.point($0) }
                    case "timing": motion.timing = try call.curve(value)
                    case "onTop" where name == "incoming": motion.isOnTop = try call.boolean(value)
                    default: throw problem("returned \(name).\(key); a side has mask, opacity, scale, blur, offset and timing (and the incoming one onTop)")
                    }
                } catch let error as LuaArgumentError {
                    throw problem("returned \(name).\(key): \(error.message.argumentReason)")
                }
            }
        }
        try side("outgoing", &sides.outgoing)
        try side("incoming", &sides.incoming)
        return sides
    }

    /// `{from, to}`.
    private func pair<T>(_ call: LuaCall, _ index: Int32, _ read: (Int32) throws -> T) throws -> (from: T, to: T) {
        guard call.type(index) == LUA_TTABLE, call.rawLength(index) == 2 else { throw call.typeError(index, expected: "{from, to}") }
        call.pushElement(of: index, 1)
        call.pushElement(of: index, 2)
        defer { call.pop(2) }
        return (try read(call.absolute(-2)), try read(call.absolute(-1)))
    }

    private func number(_ call: LuaCall, _ index: Int32, in range: ClosedRange<Double>) throws -> Double {
        let value = try call.finite(index)
        guard range.contains(value) else {
            throw call.argumentError(index, "must be in \(shortNumber(range.lowerBound))…\(shortNumber(range.upperBound)), got \(shortNumber(value))")
        }
        return value
    }

    private func checkedMask(_ mask: Layer, _ problem: (String) -> LuaArgumentError) throws -> Layer {
        guard mask.superlayer == nil, mask.maskedLayer == nil else {
            throw problem("returned a mask that is a sublayer or another layer's mask; a mask is drawn only as the mask")
        }
        return mask
    }
}
