import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// Timing functions (easing curves) read and pushed.
extension LuaCall {
    /// A timing function: a name or Bézier control points {x1, y1, x2, y2}.
    func timingFunction(_ index: Int32) throws -> TimingFunction {
        if type(index) == LUA_TSTRING {
            return try model { try TimingFunction(named: AppleNames.enumerationValue(try string(index))) }
        }
        guard type(index) == LUA_TTABLE else { throw typeError(index, expected: "timing function name or {x1, y1, x2, y2}") }
        let points = try list(index, limit: 4) { try finite($0) }
        guard points.count == 4 else { throw argumentError(index, "Bézier timing needs four numbers {x1, y1, x2, y2}") }
        return try model { try TimingFunction(controlPoints: points[0], points[1], points[2], points[3]) }
    }

    func pushTiming(_ function: TimingFunction) {
        if let named = TimingFunction.namedFunctions.first(where: { $0.function == function }) {
            push(named.name)
        } else {
            pushArray([function.x1, function.y1, function.x2, function.y2]) { push($0) }
        }
    }

    /// Optional ramp timing (linear by default): a name or Bézier points {x1, y1, x2, y2}.
    func curve(_ index: Int32) throws -> TimingFunction {
        isNoneOrNil(index) ? .linear : try timingFunction(index)
    }
}
