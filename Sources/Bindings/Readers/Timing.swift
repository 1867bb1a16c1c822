import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// Timing functions (easing curves) read and pushed.
extension API {
    /// A timing function: a name or Bézier control points {x1, y1, x2, y2}.
    func timingFunction(_ call: LuaCall, _ index: Int32) throws -> TimingFunction {
        if call.type(index) == LUA_TSTRING {
            return try model(call) { try TimingFunction(named: AppleNames.enumerationValue(try call.string(index))) }
        }
        guard call.type(index) == LUA_TTABLE else { throw call.typeError(index, expected: "timing function name or {x1, y1, x2, y2}") }
        let points = try list(call, index, limit: 4) { try finite(call, $0) }
        guard points.count == 4 else { throw call.argumentError(index, "Bézier timing needs four numbers {x1, y1, x2, y2}") }
        return try model(call) { try TimingFunction(controlPoints: points[0], points[1], points[2], points[3]) }
    }

    func pushTiming(_ call: LuaCall, _ function: TimingFunction) {
        if let named = TimingFunction.namedFunctions.first(where: { $0.function == function }) {
            call.push(named.name)
        } else {
            call.pushArray([function.x1, function.y1, function.x2, function.y2]) { call.push($0) }
        }
    }

    /// Optional ramp timing (linear by default): a name or Bézier points {x1, y1, x2, y2}.
    func curve(_ call: LuaCall, _ index: Int32) throws -> TimingFunction {
        call.isNoneOrNil(index) ? .linear : try timingFunction(call, index)
    }
}
