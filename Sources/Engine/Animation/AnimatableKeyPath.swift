/// The layer properties an animation can drive, named as in Core Animation.
public enum AnimatableKeyPath: String, Sendable, CaseIterable {
    case opacity, position, bounds, transform
    case transformScale = "transform.scale"
    case transformScaleX = "transform.scale.x"
    case transformScaleY = "transform.scale.y"
    /// Rotation about z in radians (also accepted as "transform.rotation.z").
    case transformRotation = "transform.rotation"
    case transformTranslationX = "transform.translation.x"
    case transformTranslationY = "transform.translation.y"
    case backgroundColor, borderColor, borderWidth, cornerRadius
    /// Also accepted as "hidden", Core Animation's name.
    case isHidden
    case contents
    // Text layers only.
    case string, foregroundColor, shadowOpacity
    /// Karaoke: how many leading scalars of the string are highlighted (see `TextStyle`).
    case highlightedScalars

    private static let aliases: [String: AnimatableKeyPath] = [
        "transform.rotation.z": .transformRotation, "hidden": .isHidden,
    ]

    /// The key path named `name`; the error lists the animatable ones.
    public init(named name: String) throws {
        guard let path = AnimatableKeyPath(rawValue: name) ?? Self.aliases[name] else {
            let names = AnimatableKeyPath.allCases.map(\.rawValue).joined(separator: ", ")
            throw AnimationError("unknown keyPath \(name.quotedForMessage()) (animatable: \(names))")
        }
        self = path
    }

    public var valueKind: AnimatableValue.Kind {
        switch self {
        case .opacity, .transformScale, .transformScaleX, .transformScaleY, .transformRotation,
             .transformTranslationX, .transformTranslationY, .borderWidth, .cornerRadius,
             .shadowOpacity, .highlightedScalars: .number
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
