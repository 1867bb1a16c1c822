import MoonreelMedia

/// The layer properties an animation can drive, named as in Core Animation (the `keyPath`
/// of a `CABasicAnimation` or `CAKeyframeAnimation`). `rawValue` and `init(named:)` convert
/// to and from Core Animation's names; `valueKind` says which `AnimatableValue` each takes.
public enum AnimatableKeyPath: Sendable, Hashable {
    /// "opacity": `LayerProperties.opacity`, a number (0 transparent … 1 opaque).
    case opacity
    /// "position": `LayerProperties.position`, a point in the superlayer's coordinates.
    case position
    /// "bounds": `LayerProperties.bounds`, a rect.
    case bounds
    /// "transform": the whole `LayerProperties.transform`, interpolated as scale, shear,
    /// rotation and translation (so halfway between two rotations is a rotation).
    case transform
    /// "transform.scale": both scale factors of the transform, a number (1 = natural size).
    case transformScale
    /// "transform.scale.x": the horizontal scale factor of the transform, a number.
    case transformScaleX
    /// "transform.scale.y": the vertical scale factor of the transform, a number.
    case transformScaleY
    /// Rotation about z in radians (also accepted as "transform.rotation.z").
    case transformRotation
    /// "transform.translation.x": the transform's horizontal translation in pixels.
    case transformTranslationX
    /// "transform.translation.y": the transform's vertical translation in pixels.
    case transformTranslationY
    /// "backgroundColor": the colour filling the layer's bounds.
    case backgroundColor
    /// "borderColor": the colour of the border drawn inside the bounds.
    case borderColor
    /// "borderWidth": the border's width in pixels, a number.
    case borderWidth
    /// "cornerRadius": the radius in pixels that rounds the background, border and (with
    /// `masksToBounds`) the contents, a number.
    case cornerRadius
    /// Also accepted as "hidden", Core Animation's name.
    case isHidden
    /// "contents": the layer's image (`ImageSource`); switches at key times, never blends.
    case contents
    /// "string": a text layer's text; switches at key times. Text layers only.
    case string
    /// "foregroundColor": a text layer's text colour. Text layers only.
    case foregroundColor
    /// "shadowOpacity": a text layer's shadow opacity, 0…1. Text layers only.
    case shadowOpacity
    /// Karaoke: how many leading scalars of the string are highlighted (see `TextStyle`).
    case highlightedScalars
    /// `filters.NAME.PARAMETER`: a number parameter of the layer's filter called NAME (its
    /// `name`), as Core Animation addresses the parameters of a layer's filters.
    case filterParameter(filter: String, parameter: String)

    /// The fixed key paths with their names, in the order the reference lists them.
    private static let named: [(path: AnimatableKeyPath, name: String)] = [
        (.opacity, "opacity"), (.position, "position"), (.bounds, "bounds"), (.transform, "transform"),
        (.transformScale, "transform.scale"), (.transformScaleX, "transform.scale.x"), (.transformScaleY, "transform.scale.y"),
        (.transformRotation, "transform.rotation"), (.transformTranslationX, "transform.translation.x"),
        (.transformTranslationY, "transform.translation.y"), (.backgroundColor, "backgroundColor"), (.borderColor, "borderColor"),
        (.borderWidth, "borderWidth"), (.cornerRadius, "cornerRadius"), (.isHidden, "isHidden"), (.contents, "contents"),
        (.string, "string"), (.foregroundColor, "foregroundColor"), (.shadowOpacity, "shadowOpacity"),
        (.highlightedScalars, "highlightedScalars"),
    ]
    private static let byName: [String: AnimatableKeyPath] = Dictionary(uniqueKeysWithValues: named.map { ($0.name, $0.path) })
        .merging(["transform.rotation.z": .transformRotation, "hidden": .isHidden]) { own, _ in own }

    /// Every key path but the filter parameters (which are named after each layer's filters).
    public static var allCases: [AnimatableKeyPath] { named.map(\.path) }

    /// Core Animation's name: "opacity", "transform.scale", "filters.blur.radius".
    public var rawValue: String {
        if case .filterParameter(let filter, let parameter) = self { return "filters.\(filter).\(parameter)" }
        return Self.named.first { $0.path == self }?.name ?? ""
    }

    /// The key path named `name`; the error lists the animatable ones.
    public init(named name: String) throws {
        if let path = Self.byName[name] {
            self = path
            return
        }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        if parts.first == "filters" {
            guard parts.count == 3, !parts[1].isEmpty, !parts[2].isEmpty else {
                throw EngineError("keyPath \(name.quotedForMessage()) must be filters.NAME.PARAMETER (e.g. \"filters.gaussianBlur.radius\")")
            }
            self = .filterParameter(filter: String(parts[1]), parameter: String(parts[2]))
            return
        }
        let names = Self.named.map(\.name).joined(separator: ", ")
        throw EngineError("unknown keyPath \(name.quotedForMessage()) (animatable: \(names), filters.NAME.PARAMETER)")
    }

    /// The kind of value the property takes; animation values must be of this kind
    /// (animations check it when built and throw `EngineError` otherwise).
    public var valueKind: AnimatableValue.Kind {
        switch self {
        case .opacity, .transformScale, .transformScaleX, .transformScaleY, .transformRotation,
             .transformTranslationX, .transformTranslationY, .borderWidth, .cornerRadius,
             .shadowOpacity, .highlightedScalars, .filterParameter: .number
        case .position: .point
        case .bounds: .rect
        case .transform: .transform
        case .backgroundColor, .borderColor, .foregroundColor: .color
        case .isHidden: .bool
        case .contents: .image
        case .string: .string
        }
    }

    /// True for the properties only `TextLayer`s have (`string`, `foregroundColor`,
    /// `shadowOpacity`, `highlightedScalars`); `Layer.addAnimation(_:forKey:)` refuses them
    /// on other layers.
    public var isTextOnly: Bool {
        self == .string || self == .foregroundColor || self == .shadowOpacity || self == .highlightedScalars
    }

    /// The values a number property takes, as its setter checks them (`layer.opacity = 2` is
    /// refused); nil for those without bounds. An animation past them was drawn clamped.
    var numberRange: ClosedRange<Double>? {
        switch self {
        case .opacity, .shadowOpacity: 0...1
        case .borderWidth, .cornerRadius: 0...Double.greatestFiniteMagnitude
        default: nil
        }
    }

    /// A property's range as messages say it: "0…1", or "0 or more" for one without a top.
    public static func describe(_ range: ClosedRange<Double>) -> String {
        range.upperBound == .greatestFiniteMagnitude ? "\(shortNumber(range.lowerBound)) or more" : "\(shortNumber(range.lowerBound))…\(shortNumber(range.upperBound))"
    }

    /// Checks that `value` suits this key path (its kind, and with `ranged` a number's
    /// range); `what` names the value in the message.
    func check(_ value: AnimatableValue, _ what: String, ranged: Bool = false) throws {
        guard value.kind == valueKind else {
            throw EngineError("\(what) is a \(value.kind.rawValue), but keyPath \(rawValue) takes a \(valueKind.rawValue)")
        }
        if ranged, let range = numberRange, let number = value.number, !range.contains(number) {
            throw EngineError("\(what) is \(shortNumber(number)), but \(rawValue) takes \(Self.describe(range))")
        }
    }
}
