#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import MoonreelMedia

/// A value an animation can give a layer property: what Core Animation's `fromValue`,
/// `toValue` and `values` hold as `id`, typed. Its kind must match the key path's
/// `AnimatableKeyPath.valueKind`. Numbers, points, sizes, rects, colours and transforms
/// are interpolated; strings, booleans and images switch from one value to the next.
public enum AnimatableValue: Sendable, Hashable {
    /// A number: opacity, a scale factor, an angle in radians, a length in pixels.
    case number(Double)
    /// A point in pixels (a layer's `position`).
    case point(Point)
    /// A size in pixels.
    case size(Size)
    /// A rectangle in pixels (a layer's `bounds`).
    case rect(Rect)
    /// A colour, interpolated component by component (straight alpha).
    case color(Color)
    /// An affine transform, interpolated as scale, shear, rotation and translation.
    case transform(AffineTransform)
    /// A text layer's text.
    case string(String)
    /// A flag (`isHidden`).
    case bool(Bool)
    /// A layer's contents image.
    case image(ImageSource)

    /// The kind of an `AnimatableValue`, without its payload: what a key path accepts.
    /// The raw value is the lower-case name used in messages ("number", "point", …).
    public enum Kind: String, Sendable, CaseIterable {
        /// A `Double`.
        case number
        /// A `Point`.
        case point
        /// A `Size`.
        case size
        /// A `Rect`.
        case rect
        /// A `Color`.
        case color
        /// An `AffineTransform`.
        case transform
        /// A `String` (discrete).
        case string
        /// A `Bool` (discrete).
        case bool
        /// An `ImageSource` (discrete).
        case image
        /// Strings, booleans and images jump from one value to the next.
        public var isDiscrete: Bool { self == .string || self == .bool || self == .image }
    }

    /// Which case this value is.
    public var kind: Kind {
        switch self {
        case .number: .number
        case .point: .point
        case .size: .size
        case .rect: .rect
        case .color: .color
        case .transform: .transform
        case .string: .string
        case .bool: .bool
        case .image: .image
        }
    }

    /// Coordinates in which interpolation is componentwise; nil for discrete kinds.
    /// A transform is decomposed (scale, shear, rotation, translation), as Core Animation
    /// does for matrices, so that halfway between two rotations is a rotation, not a squash.
    var components: [Double]? {
        switch self {
        case .number(let n): [n]
        case .point(let p): [p.x, p.y]
        case .size(let s): [s.width, s.height]
        case .rect(let r): [r.x, r.y, r.width, r.height]
        case .color(let c): [c.red, c.green, c.blue, c.alpha]
        case .transform(let t): t.decomposed.components
        case .string, .bool, .image: nil
        }
    }

    /// A value of the same kind as `self` from interpolation coordinates.
    func withComponents(_ c: [Double]) -> AnimatableValue {
        switch self {
        case .number: .number(c[0])
        case .point: .point(Point(x: c[0], y: c[1]))
        case .size: .size(Size(width: c[0], height: c[1]))
        case .rect: .rect(Rect(x: c[0], y: c[1], width: c[2], height: c[3]))
        case .color: .color(Color(red: c[0], green: c[1], blue: c[2], alpha: c[3]))
        case .transform: .transform(DecomposedTransform(components: c).recomposed)
        case .string, .bool, .image: self
        }
    }

    /// Interpolation coordinates of a sequence of values of one interpolable kind, with
    /// rotations unwrapped so that each step turns the short way (less than half a turn),
    /// as Core Animation does when it interpolates matrices.
    static func interpolationComponents(of values: [AnimatableValue]) -> [[Double]] {
        var result = values.map { $0.components ?? [] }
        guard values.first?.kind == .transform else { return result }
        for i in result.indices.dropFirst() {
            let previous = result[i - 1][DecomposedTransform.angleIndex]
            var angle = result[i][DecomposedTransform.angleIndex]
            while angle - previous > Double.pi { angle -= 2 * Double.pi }
            while angle - previous < -Double.pi { angle += 2 * Double.pi }
            result[i][DecomposedTransform.angleIndex] = angle
        }
        return result
    }

    /// `self + other` for `byValue`: componentwise, and for transforms `self` then `other`.
    func adding(_ other: AnimatableValue) -> AnimatableValue? {
        if case .transform(let t) = self, case .transform(let by) = other { return .transform(t.concatenating(by)) }
        guard kind == other.kind, let a = components, let b = other.components else { return nil }
        return withComponents(zip(a, b).map { $0 + $1 })
    }

    /// The value that `adding(other)` turns into `self`.
    func subtracting(_ other: AnimatableValue) -> AnimatableValue? {
        if case .transform(let t) = self, case .transform(let by) = other {
            return by.inverted().map { .transform(t.concatenating($0)) }
        }
        guard kind == other.kind, let a = components, let b = other.components else { return nil }
        return withComponents(zip(a, b).map { $0 - $1 })
    }
}

/// A 2-D affine transform as scale, shear, rotation and translation, applied in that order.
struct DecomposedTransform: Hashable {
    var scaleX: Double, scaleY: Double, shear: Double, angle: Double, tx: Double, ty: Double

    static let angleIndex = 3
    var components: [Double] { [scaleX, scaleY, shear, angle, tx, ty] }

    init(components c: [Double]) {
        (scaleX, scaleY, shear, angle, tx, ty) = (c[0], c[1], c[2], c[3], c[4], c[5])
    }

    init(scaleX: Double, scaleY: Double, shear: Double, angle: Double, tx: Double, ty: Double) {
        (self.scaleX, self.scaleY, self.shear, self.angle, self.tx, self.ty) = (scaleX, scaleY, shear, angle, tx, ty)
    }

    var recomposed: AffineTransform {
        AffineTransform.scale(scaleX, scaleY)
            .concatenating(AffineTransform(a: 1, b: 0, c: shear, d: 1, tx: 0, ty: 0))
            .concatenating(.rotation(angle))
            .concatenating(.translation(tx, ty))
    }
}

extension AffineTransform {
    /// Gram–Schmidt on the rows (a, b) and (c, d), as the CSS "unmatrix" does. A mirror
    /// shows as a negative y scale; a degenerate matrix decomposes to zero scales.
    var decomposed: DecomposedTransform {
        let scaleX = (a * a + b * b).squareRoot()
        let (row0x, row0y) = scaleX > 0 ? (a / scaleX, b / scaleX) : (1.0, 0.0)
        var shear = row0x * c + row0y * d
        var (row1x, row1y) = (c - row0x * shear, d - row0y * shear)
        var scaleY = (row1x * row1x + row1y * row1y).squareRoot()
        if scaleY > 0 { (row1x, row1y) = (row1x / scaleY, row1y / scaleY) }
        if row0x * row1y - row0y * row1x < 0 { scaleY = -scaleY }
        shear = scaleY != 0 ? shear / scaleY : 0
        return DecomposedTransform(scaleX: scaleX, scaleY: scaleY, shear: shear,
                                   angle: atan2(row0y, row0x), tx: tx, ty: ty)
    }
}
