import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// `av.keyframeAnimation` and `av.basicAnimation` (CAKeyframeAnimation, CABasicAnimation).
/// The script's settings are kept so every property stays readable and assignable in any
/// order, as iOS code sets them one by one; the engine animation is built (and checked)
/// when the animation is added to a layer, which takes a copy as Core Animation does.
final class AnimationBox {
    struct Spec {
        var isKeyframe: Bool
        var keyPath: AnimatableKeyPath
        var values: [AnimatableValue] = []
        var keyTimes: [Double]? = nil
        var calculationMode: CalculationMode = .linear
        var timingFunctions: [TimingFunction] = []
        var tensionValues: [Double] = [], continuityValues: [Double] = [], biasValues: [Double] = []
        var fromValue: AnimatableValue? = nil, toValue: AnimatableValue? = nil, byValue: AnimatableValue? = nil
        var timing = AnimationTiming()
        /// Whether enough is set to build: keyframes need values (an empty animation is
        /// allowed while a script fills it in).
        var isComplete: Bool { !isKeyframe || !values.isEmpty }

        func build() throws -> LayerAnimation {
            if isKeyframe {
                return .keyframe(try KeyframeAnimation(keyPath: keyPath, values: values, keyTimes: keyTimes, calculationMode: calculationMode,
                                                       timingFunctions: timingFunctions, tensionValues: tensionValues,
                                                       continuityValues: continuityValues, biasValues: biasValues, timing: timing))
            }
            return .basic(try BasicAnimation(keyPath: keyPath, fromValue: fromValue, toValue: toValue, byValue: byValue, timing: timing))
        }
    }
    private(set) var spec: Spec
    /// Whether a layer took a copy (`addAnimation`), and whether it was changed since: the
    /// change is in no layer unless the animation is added again, as a loop that reuses one
    /// animation does.
    var isCopied = false, changedAfterCopy = false

    init(_ spec: Spec) { self.spec = spec }

    /// An engine-made keyframe animation, open to the script's changes like any other.
    convenience init(_ made: KeyframeAnimation) {
        self.init(Spec(isKeyframe: true, keyPath: made.keyPath, values: made.values, keyTimes: made.keyTimes,
                       calculationMode: made.calculationMode, timing: made.timing))
    }

    func update(_ change: (inout Spec) -> Void) { change(&spec) }

    /// The engine animation for the current settings, checked.
    func built() throws -> LayerAnimation { try spec.build() }
}

extension API {
    func makeAnimationClass() -> LuaClass {
        let luaClass = LuaClass("Animation", doc: "A keyframe or basic animation of one layer property, added with layer:addAnimation(a, key).")
        luaClass.describe = { object in
            guard let box = object as? AnimationBox else { return "Animation" }
            let s = box.spec
            let kind = s.isKeyframe ? "KeyframeAnimation(\(s.values.count) values, \(s.calculationMode.rawValue)" : "BasicAnimation("
            return "\(kind)\(s.isKeyframe ? ", " : "")\(s.keyPath.rawValue), \(format(s.timing.beginTime.seconds))+\(format(s.timing.duration.seconds)) s)"
        }
        luaClass.footprint = { object in
            guard let spec = (object as? AnimationBox)?.spec else { return Footprint.record }
            return Footprint.record + spec.values.reduce(0) { $0 + $1.footprint }
                + 8 * ((spec.keyTimes?.count ?? 0) + spec.tensionValues.count + spec.continuityValues.count + spec.biasValues.count)
                + MemoryLayout<TimingFunction>.stride * spec.timingFunctions.count
        }
        for name in Self.animationProperties {
            luaClass.property(name, of: AnimationBox.self, doc: Self.animationPropertyDocs[name] ?? "",
                              get: { call, box in try call.api().pushAnimationProperty(call, box.spec, name) },
                              set: { call, box, index in
                                  let api = try call.api()
                                  let value = try api.readAnimationProperty(call, index, name, keyPath: box.spec.keyPath)
                                  box.update { value(&$0) }
                                  if box.isCopied { box.changedAfterCopy = true; api.changedAnimations[ObjectIdentifier(box)] = box }
                              })
        }
        luaClass.document([
            "values": "keyframe values, of the kind keyPath animates (numbers, points, colours, transforms…)",
            "fromValue": "basic animations: the start value (default: the layer's current value)",
            "toValue": "basic animations: the end value",
            "byValue": "basic animations: added to the start value",
            "duration": "seconds of one pass (Core Animation's default 0.25)",
            "speed": "how fast local time runs against composition time (1: the same)",
            "timeOffset": "seconds into the pass at which it starts",
            "repeatDuration": "seconds to repeat for (instead of repeatCount)",
            "autoreverses": "each pass runs forwards then backwards",
            "timingFunction": "eases each pass as a whole: a name or {x1, y1, x2, y2}",
            "tensionValues": "cubic mode: Kochanek–Bartels tension per key (default 0)",
            "continuityValues": "cubic mode: continuity per key (default 0)",
            "biasValues": "cubic mode: bias per key (default 0)",
        ])
        luaClass.example = """
            local fade = av.keyframeAnimation{ keyPath = "opacity", values = {0, 1, 1, 0},
                                               keyTimes = {0, 0.1, 0.9, 1}, beginTime = 2, duration = 5 }
            title:addAnimation(fade, "fade")
            local slide = av.basicAnimation{ keyPath = "position", fromValue = {0, 100}, toValue = {640, 100}, duration = 2 }
            slide.fillMode = "forwards"; slide.isRemovedOnCompletion = false   -- hold the end
            title:addAnimation(slide, "slide")
            """
        return luaClass
    }

    static let animationProperties = ["keyPath", "values", "keyTimes", "calculationMode", "timingFunctions", "tensionValues",
                                      "continuityValues", "biasValues", "fromValue", "toValue", "byValue", "beginTime", "duration",
                                      "speed", "timeOffset", "repeatCount", "repeatDuration", "autoreverses", "fillMode", "timingFunction",
                                      "isRemovedOnCompletion", "removedOnCompletion"]
    static let animationPropertyDocs: [String: String] = [
        "keyPath": "the animated property: " + AnimatableKeyPath.allCases.map(\.rawValue).joined(separator: ", ")
            + ", filters.NAME.PARAMETER (a number parameter of the layer's filter called NAME)",
        "keyTimes": "fractions 0…1 of duration, one per value (or one more in discrete mode)",
        "calculationMode": CalculationMode.allCases.map(\.rawValue).joined(separator: ", "),
        "timingFunctions": "one per segment: names (linear, easeIn, easeOut, easeInEaseOut, default) or {x1, y1, x2, y2}",
        "beginTime": "composition time in seconds (0 is the start; no AVFoundation epsilon)",
        "fillMode": FillMode.allCases.map(\.rawValue).joined(separator: ", "),
        "repeatCount": "number of passes (math.huge: forever)",
        "isRemovedOnCompletion": "true (default, as Core Animation): taken off the layer when done, so a forwards fill does not hold; set false to hold the last value",
        "removedOnCompletion": "the same as isRemovedOnCompletion (Objective-C's name)",
    ]

    private func pushAnimationProperty(_ call: LuaCall, _ s: AnimationBox.Spec, _ name: String) throws {
        switch name {
        case "keyPath": call.push(s.keyPath.rawValue)
        case "values": try call.pushArray(s.values) { try pushAnimatable(call, $0) }
        case "keyTimes": if let times = s.keyTimes { call.pushArray(times) { call.push($0) } } else { call.pushNil() }
        case "calculationMode": call.push(s.calculationMode.rawValue)
        case "timingFunctions": call.pushArray(s.timingFunctions) { call.pushTiming($0) }
        case "tensionValues": call.pushArray(s.tensionValues) { call.push($0) }
        case "continuityValues": call.pushArray(s.continuityValues) { call.push($0) }
        case "biasValues": call.pushArray(s.biasValues) { call.push($0) }
        case "fromValue": if let v = s.fromValue { try pushAnimatable(call, v) } else { call.pushNil() }
        case "toValue": if let v = s.toValue { try pushAnimatable(call, v) } else { call.pushNil() }
        case "byValue": if let v = s.byValue { try pushAnimatable(call, v) } else { call.pushNil() }
        case "beginTime": call.push(s.timing.beginTime.seconds)
        case "duration": call.push(s.timing.duration.seconds)
        case "speed": call.push(s.timing.speed)
        case "timeOffset": call.push(s.timing.timeOffset.seconds)
        case "repeatCount": call.push(s.timing.repeatCount)
        case "repeatDuration": if let d = s.timing.repeatDuration { call.push(d.seconds) } else { call.pushNil() }
        case "autoreverses": call.push(s.timing.autoreverses)
        case "fillMode": call.push(s.timing.fillMode.rawValue)
        case "timingFunction": if let f = s.timing.timingFunction { call.pushTiming(f) } else { call.pushNil() }
        case "isRemovedOnCompletion", "removedOnCompletion": call.push(s.timing.isRemovedOnCompletion)
        default: call.pushNil()
        }
    }

    /// Reads one animation setting; returns the change to apply to a spec.
    private func readAnimationProperty(_ call: LuaCall, _ index: Int32, _ name: String,
                                       keyPath: AnimatableKeyPath) throws -> (inout AnimationBox.Spec) -> Void {
        switch name {
        case "keyPath":
            let path = try call.model { try AnimatableKeyPath(named: try call.string(index)) }
            return { $0.keyPath = path }
        case "values":
            let values = try call.list(index, limit: KeyframeAnimation.maxKeyframes) { try animatable(call, $0, keyPath) }
            return { $0.values = values }
        case "keyTimes":
            let times = call.isNoneOrNil(index) ? nil : try call.list(index, limit: KeyframeAnimation.maxKeyframes + 1) { try call.finite($0) }
            return { $0.keyTimes = times }
        case "calculationMode":
            let mode = try call.choice(index, CalculationMode.self)
            return { $0.calculationMode = mode }
        case "timingFunctions":
            let functions = try call.list(index, limit: KeyframeAnimation.maxKeyframes) { try call.timingFunction($0) }
            return { $0.timingFunctions = functions }
        case "tensionValues", "continuityValues", "biasValues":
            let numbers = try call.list(index, limit: KeyframeAnimation.maxKeyframes) { try call.finite($0) }
            return { spec in
                switch name {
                case "tensionValues": spec.tensionValues = numbers
                case "continuityValues": spec.continuityValues = numbers
                default: spec.biasValues = numbers
                }
            }
        case "fromValue", "toValue", "byValue":
            let value = call.isNoneOrNil(index) ? nil : try animatable(call, index, keyPath)
            return { spec in
                switch name {
                case "fromValue": spec.fromValue = value
                case "toValue": spec.toValue = value
                default: spec.byValue = value
                }
            }
        case "beginTime":
            let t = try call.time(index)
            return { $0.timing.beginTime = t }
        case "duration":
            let d = try call.duration(index)
            return { $0.timing.duration = d }
        case "speed":
            let v = try call.finite(index)
            return { $0.timing.speed = v }
        case "timeOffset":
            let t = try call.time(index)
            return { $0.timing.timeOffset = t }
        case "repeatCount":
            let count = try call.number(index)
            guard !count.isNaN else { throw call.argumentError(index, "repeatCount must be a number, got nan") }
            return { $0.timing.repeatCount = count }
        case "repeatDuration":
            let d = call.isNoneOrNil(index) ? nil : try call.duration(index)
            return { $0.timing.repeatDuration = d }
        case "autoreverses":
            let flag = try call.boolean(index)
            return { $0.timing.autoreverses = flag }
        case "fillMode":
            let mode = try call.choice(index, FillMode.self)
            return { $0.timing.fillMode = mode }
        case "isRemovedOnCompletion", "removedOnCompletion":
            let flag = try call.boolean(index)
            return { $0.timing.isRemovedOnCompletion = flag }
        default: // "timingFunction"
            let function = call.isNoneOrNil(index) ? nil : try call.timingFunction(index)
            return { $0.timing.timingFunction = function }
        }
    }

    /// A Lua value as the kind of value `keyPath` animates.
    func animatable(_ call: LuaCall, _ index: Int32, _ keyPath: AnimatableKeyPath) throws -> AnimatableValue {
        switch keyPath.valueKind {
        case .number: return .number(try call.finite(index))
        case .point: return .point(try call.point(index))
        case .size: return .size(try call.size(index, positive: false))
        case .rect: return .rect(try call.rect(index))
        case .color: return .color(try call.color(index))
        case .transform: return .transform(try call.affineTransform(index))
        case .string: return .string(try call.text(index))
        case .bool: return .bool(try call.boolean(index))
        case .image: return .image((try call.object(index, ImageBox.self)).source)
        }
    }

    func pushAnimatable(_ call: LuaCall, _ value: AnimatableValue) throws {
        switch value {
        case .number(let v): call.push(v)
        case .point(let p): call.push(point: p)
        case .size(let s): call.push(size: s)
        case .rect(let r): call.push(rect: r)
        case .color(let c): call.push(color: c)
        case .transform(let t): try call.push(transform: t)
        case .string(let s): call.push(s)
        case .bool(let b): call.push(b)
        case .image(let source): try call.push(ImageBox(source))
        }
    }

    /// Builds an animation from a constructor table: keyPath first (it decides how values
    /// are read), then every other setting; unknown names are errors.
    private func animation(_ call: LuaCall, keyframe: Bool) throws -> AnimationBox {
        guard call.type(1) == LUA_TTABLE else { throw call.typeError(1, expected: "table of animation properties") }
        guard call.pushField(of: 1, "keyPath") == LUA_TSTRING else {
            throw call.argumentError(1, "keyPath is required (e.g. keyPath = \"opacity\")")
        }
        let keyPath = try call.model { try AnimatableKeyPath(named: try call.string(-1)) }
        call.pop()
        var spec = AnimationBox.Spec(isKeyframe: keyframe, keyPath: keyPath)
        let allowed = Set(Self.animationProperties).subtracting(keyframe ? ["fromValue", "toValue", "byValue"]
            : ["values", "keyTimes", "calculationMode", "timingFunctions", "tensionValues", "continuityValues", "biasValues"])
        try call.forEachField(of: 1) { key in
            guard allowed.contains(key) else {
                throw call.argumentError(1, "unknown \(keyframe ? "keyframeAnimation" : "basicAnimation") property \(key.quotedForMessage())\(NameSuggestion.hint(for: key, among: allowed))")
            }
            guard key != "keyPath" else { return }
            do {
                try readAnimationProperty(call, call.absolute(-1), key, keyPath: keyPath)(&spec)
            } catch let error as LuaArgumentError {
                throw call.argumentError(1, "property '\(key)': \(error.message.argumentReason)", cause: error)
            }
        }
        // A complete table is checked now, so its mistakes point at this line.
        if spec.isComplete {
            do { _ = try spec.build() } catch let error as EngineError { throw call.argumentError(1, error.message, cause: error) }
        }
        return AnimationBox(spec)
    }

    /// Builds the animation a layer takes, with notes on settings Core Animation would
    /// quietly ignore: key times past the end, key times and easing under a paced mode, a
    /// forwards fill that is removed on completion.
    func layerAnimation(_ call: LuaCall, _ box: AnimationBox, argument index: Int32) throws -> LayerAnimation {
        guard box.spec.isComplete else {
            throw call.argumentError(index, "the \(box.spec.keyPath.rawValue) keyframe animation has no values yet")
        }
        let built: LayerAnimation
        do {
            built = try box.built()
            try built.checkRange()
        } catch let error as EngineError { throw call.argumentError(index, error.message, cause: error) }
        if case .keyframe(let keyframes) = built, let last = keyframes.unreachedKeyTimes.last {
            try policy.report(Diagnostic(.animationIgnored, .warning, "keyTimes of the \(built.keyPath.rawValue) animation run to \(format(last)); the \(keyframes.unreachedKeyTimes.count) key(s) past 1 are never reached within its duration of \(format(keyframes.timing.duration.seconds)) s"), at: call.L)
        }
        if case .keyframe(let keyframes) = built, !keyframes.unusedByPacing.isEmpty {
            try policy.report(Diagnostic(.animationIgnored, .warning, "the \(built.keyPath.rawValue) animation's calculationMode \"\(keyframes.calculationMode.rawValue)\" places its keys by the distance between the values: the \(keyframes.unusedByPacing.joined(separator: " and ")) given \(keyframes.unusedByPacing.count == 1 ? "is" : "are") not used",
                                         remedy: "use calculationMode \"linear\" (or \"cubic\") to keep them"), at: call.L)
        }
        (box.isCopied, box.changedAfterCopy) = (true, false)
        changedAnimations[ObjectIdentifier(box)] = nil
        if built.timing.fillMode.fillsForwards, built.timing.isRemovedOnCompletion {
            try policy.report(Diagnostic(.animationIgnored, .warning, "the \(built.keyPath.rawValue) animation has fillMode \"\(built.timing.fillMode.rawValue)\" but is removed on completion, so its last value does not hold",
                                         remedy: "set isRemovedOnCompletion = false to keep it"), at: call.L)
        }
        return built
    }

    /// A warning when `animation`, now on `layer`, goes past what its property takes between
    /// its keys (a "back" ease, a cubic curve bulging past a key): the drawing holds the bound
    /// there, so the motion the numbers describe is not what is seen.
    func reportOvershoot(_ call: LuaCall, _ animation: LayerAnimation, on layer: Layer) throws {
        guard let range = layer.numberRange(of: animation.keyPath), let reached = animation.numbersReached(within: range) else { return }
        // Rounding in the curve is not an overshoot.
        let slack = 1e-9 * max(1, abs(reached.lowerBound), abs(reached.upperBound))
        let past: (value: Double, bound: Double)
        if reached.upperBound > range.upperBound + slack { past = (reached.upperBound, range.upperBound) }
        else if reached.lowerBound < range.lowerBound - slack { past = (reached.lowerBound, range.lowerBound) }
        else { return }
        let name = animation.keyPath.rawValue
        let isCurve: Bool
        if case .keyframe(let keyframes) = animation, keyframes.calculationMode.isCubic { isCurve = true } else { isCurve = false }
        let cause = isCurve ? "cubic curve through its values" : "easing"
        try policy.report(Diagnostic(.animationIgnored, .warning, "the \(name) animation's \(cause) overshoots to \(shortNumber((past.value * 1000).rounded() / 1000)), past what \(name) takes (\(AnimatableKeyPath.describe(range))): it is drawn at \(shortNumber(past.bound)) there",
                                     remedy: isCurve ? "use calculationMode \"linear\", or tension = 1 at the keys beside the bulge" : "use an easing whose control points' y lie in 0…1, or values far enough inside the range"), at: call.L)
    }

    /// A warning for each animation changed after a layer took its copy and not added again
    /// since: the export does not have the change (an iOS port changing `duration` after
    /// `addAnimation`). Said once each.
    func reportAnimationsChangedAfterCopy(_ call: LuaCall) throws {
        let changed = changedAnimations.values.sorted { $0.spec.keyPath.rawValue < $1.spec.keyPath.rawValue }
        changedAnimations = [:]
        for box in changed where box.changedAfterCopy {
            try policy.report(Diagnostic(.optionIgnored, .warning, "the \(box.spec.keyPath.rawValue) animation was changed after a layer took a copy of it (addAnimation); the copy is unchanged",
                                         remedy: "set it before addAnimation, or add it again to use the change"), at: call.L)
        }
    }

    var animationFunctions: [AVFunction] {
        [
            ("keyframeAnimation", "av.keyframeAnimation{keyPath=, values=, keyTimes=, calculationMode=, timingFunctions=, beginTime=, duration=, repeatCount=, autoreverses=, fillMode=}", { call in
                let api = try call.api()
                try call.push(try api.animation(call, keyframe: true))
                return 1
            }),
            ("basicAnimation", "av.basicAnimation{keyPath=, fromValue=, toValue=, byValue=, beginTime=, duration=, ...}", { call in
                let api = try call.api()
                try call.push(try api.animation(call, keyframe: false))
                return 1
            }),
        ]
    }
}

extension Binding {
    static let animation = Binding(classes: [.init(AnimationBox.self) { $0.makeAnimationClass() }], functions: { $0.animationFunctions })
}
