import MoonreelMedia

/// The filters of a video composition or a layer instruction, with changes of their number
/// parameters over time, set the way a layer instruction's opacity is: a parameter keeps its
/// filter's value until the first `set` or ramp, then follows the last one started.
public struct FilterStack: Sendable, Equatable {
    /// The filters, applied in order. Replacing them keeps the
    /// changes set, which must then still name exactly one filter each (checked at export).
    public var filters: [Filter]
    private var timelines: [ParameterKey: PropertyTimeline<Double>] = [:]

    /// A parameter of the filter with a given `name`.
    struct ParameterKey: Hashable, Sendable {
        let filter: String
        let parameter: String
    }

    /// A stack of `filters` (none by default), with no changes over time.
    public init(_ filters: [Filter] = []) { self.filters = filters }

    /// Whether there are no filters.
    public var isEmpty: Bool { filters.isEmpty }
    /// How many values and ramps are set (what the stack weighs).
    public var changeCount: Int { timelines.values.reduce(0) { $0 + $1.changeCount } }

    /// Holds `value` for a number parameter from `time` on, until its next change.
    /// - Parameters:
    ///   - value: Within the parameter's range.
    ///   - parameter: The parameter's name or Core Image key ("radius", "inputRadius").
    ///   - name: The `name` of the one filter changed.
    ///   - time: Composition time.
    /// - Throws: `EngineError` when no single filter has that name, the parameter is not a number
    ///   of it, or the value is out of range.
    /// - Returns: A ramp of the parameter this value cuts short (`PropertyTimeline.set(_:at:)`).
    @discardableResult
    public mutating func setValue(_ value: Double, parameter: String, filter name: String, at time: MediaTime) throws -> TimeRange? {
        let key = try checkedKey(parameter, of: name, values: [value])
        return timelines[key, default: PropertyTimeline(defaultValue: value)].set(value, at: time)
    }

    /// Moves a number parameter from `start` to `end` over `range` (eased by `curve`, linear by
    /// default), then holds `end`; before the ramp, the filter's own value or the previous change
    /// holds.
    /// - Throws: `EngineError` as `setValue(_:parameter:filter:at:)` does.
    /// - Returns: A change of the parameter that this ramp and it overlap (`PropertyTimeline.ramp(from:to:over:curve:)`).
    @discardableResult
    public mutating func setRamp(from start: Double, to end: Double, parameter: String, filter name: String,
                                 over range: TimeRange, curve: TimingFunction = .linear) throws -> TimeRange? {
        let key = try checkedKey(parameter, of: name, values: [start, end])
        return timelines[key, default: PropertyTimeline(defaultValue: start)].ramp(from: start, to: end, over: range, curve: curve)
    }

    /// The filters with their parameters at `time` (and the clock of those that change over
    /// time set to it).
    public func filters(at time: MediaTime) -> [Filter] {
        guard !timelines.isEmpty else { return filters.map { $0.drawn(at: time) } }
        return filters.map { filter in
            var changed = filter
            for parameter in filter.kind.parameters {
                guard let timeline = timelines[ParameterKey(filter: filter.name, parameter: parameter.name)] else { continue }
                changed.setClamped(parameter.name, timeline.value(at: time, before: filter.number(parameter.name)))
            }
            return changed.drawn(at: time)
        }
    }

    /// Refuses changes that no longer name exactly one filter (the filters were replaced
    /// after a ramp was set); `owner` names the stack in the message.
    package func check(_ owner: String) throws {
        for key in timelines.keys.sorted(by: { ($0.filter, $0.parameter) < ($1.filter, $1.parameter) }) {
            do { _ = try checkedKey(key.parameter, of: key.filter, values: []) } catch let error as EngineError {
                throw EngineError("\(owner): \(error.message)", kind: error.kind, subject: error.subject)
            }
        }
    }

    private func checkedKey(_ parameter: String, of name: String, values: [Double]) throws -> ParameterKey {
        ParameterKey(filter: name, parameter: try Filter.checkNumberParameter(parameter, of: name, among: filters, values: values))
    }
}

extension Filter {
    /// Checks that `filters` has exactly one filter called `name`, that it has the number
    /// parameter `parameter`, and that `values` are in its range; returns the parameter's
    /// own name (for a Core Image key).
    @discardableResult
    static func checkNumberParameter(_ parameter: String, of name: String, among filters: [Filter], values: [Double]) throws -> String {
        let named = filters.filter { $0.name == name }
        guard let filter = named.first else {
            let names = filters.map { $0.name.quotedForMessage() }
            throw EngineError("no filter named \(name.quotedForMessage()) (\(names.isEmpty ? "there are no filters" : "filters: " + names.joined(separator: ", ")))")
        }
        guard named.count == 1 else {
            throw EngineError("\(named.count) filters are named \(name.quotedForMessage()); give each its own name (filter.name = \"…\") to change one")
        }
        let found = try filter.parameterNamed(parameter)
        guard case .number = found.kind else { throw EngineError("\(filter.kind.rawValue) \(parameter) is not a number, so it cannot change over time") }
        var probe = filter
        for value in values { try probe.set(parameter, .number(value)) }
        return found.name
    }
}
