/// The layer properties an animation can drive, named as in Core Animation.
public enum AnimatableKeyPath: Sendable, Hashable {
    case opacity, position, bounds, transform
    case transformScale
    case transformScaleX
    case transformScaleY
    /// Rotation about z in radians (also accepted as "transform.rotation.z").
    case transformRotation
    case transformTranslationX
    case transformTranslationY
    case backgroundColor, borderColor, borderWidth, cornerRadius
    /// Also accepted as "hidden", Core Animation's name.
    case isHidden
    case contents
    // Text layers only.
    case string, foregroundColor, shadowOpacity
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
                throw AnimationError("keyPath \(name.quotedForMessage()) must be filters.NAME.PARAMETER (e.g. \"filters.gaussianBlur.radius\")")
            }
            self = .filterParameter(filter: String(parts[1]), parameter: String(parts[2]))
            return
        }
        let names = Self.named.map(\.name).joined(separator: ", ")
        throw AnimationError("unknown keyPath \(name.quotedForMessage()) (animatable: \(names), filters.NAME.PARAMETER)")
    }

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

    public var isTextOnly: Bool {
        self == .string || self == .foregroundColor || self == .shadowOpacity || self == .highlightedScalars
    }

    /// Checks that `value` suits this key path; `what` names the value in the message.
    func check(_ value: AnimatableValue, _ what: String) throws {
        guard value.kind == valueKind else {
            throw AnimationError("\(what) is a \(value.kind.rawValue), but keyPath \(rawValue) takes a \(valueKind.rawValue)")
        }
    }
}
