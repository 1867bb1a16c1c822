#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Pixel geometry. Origin top-left, y grows down (unlike Core Animation on macOS).
public struct Point: Sendable, Hashable {
    public var x: Double, y: Double
    public init(x: Double, y: Double) { self.x = x; self.y = y }
    public static let zero = Point(x: 0, y: 0)
}

public struct Size: Sendable, Hashable, CustomStringConvertible {
    public var width: Double, height: Double
    public init(width: Double, height: Double) { self.width = width; self.height = height }
    public static let zero = Size(width: 0, height: 0)
    public var description: String { "\(Int(width.rounded()))×\(Int(height.rounded()))" }
}

public struct Rect: Sendable, Hashable {
    public var origin: Point
    public var size: Size
    public init(x: Double, y: Double, width: Double, height: Double) {
        origin = Point(x: x, y: y)
        size = Size(width: width, height: height)
    }
    public var x: Double { origin.x }
    public var y: Double { origin.y }
    public var width: Double { size.width }
    public var height: Double { size.height }
    public var maxX: Double { origin.x + size.width }
    public var maxY: Double { origin.y + size.height }
    public static let zero = Rect(x: 0, y: 0, width: 0, height: 0)
}

/// A 2-D affine transform in Core Graphics' convention: a point (x, y) maps to
/// (a·x + c·y + tx, b·x + d·y + ty).
public struct AffineTransform: Sendable, Hashable, CustomStringConvertible {
    public var a, b, c, d, tx, ty: Double

    public init(a: Double, b: Double, c: Double, d: Double, tx: Double, ty: Double) {
        (self.a, self.b, self.c, self.d, self.tx, self.ty) = (a, b, c, d, tx, ty)
    }

    public static let identity = AffineTransform(a: 1, b: 0, c: 0, d: 1, tx: 0, ty: 0)
    public static func translation(_ x: Double, _ y: Double) -> AffineTransform {
        AffineTransform(a: 1, b: 0, c: 0, d: 1, tx: x, ty: y)
    }
    public static func scale(_ sx: Double, _ sy: Double) -> AffineTransform {
        AffineTransform(a: sx, b: 0, c: 0, d: sy, tx: 0, ty: 0)
    }
    /// Rotation by `radians`; positive turns clockwise on screen (y down), as in Core Graphics
    /// on iOS, where UIKit's flipped coordinates give the same picture.
    public static func rotation(_ radians: Double) -> AffineTransform {
        let (s, c) = (sin(radians), cos(radians))
        return AffineTransform(a: c, b: s, c: -s, d: c, tx: 0, ty: 0)
    }

    public var isIdentity: Bool { self == .identity }

    /// `self` then `other` (CGAffineTransformConcat order).
    public func concatenating(_ other: AffineTransform) -> AffineTransform {
        AffineTransform(a: a * other.a + b * other.c, b: a * other.b + b * other.d,
                        c: c * other.a + d * other.c, d: c * other.b + d * other.d,
                        tx: tx * other.a + ty * other.c + other.tx, ty: tx * other.b + ty * other.d + other.ty)
    }
    public func translatedBy(_ x: Double, _ y: Double) -> AffineTransform { AffineTransform.translation(x, y).concatenating(self) }
    public func scaledBy(_ sx: Double, _ sy: Double) -> AffineTransform { AffineTransform.scale(sx, sy).concatenating(self) }
    public func rotatedBy(_ radians: Double) -> AffineTransform { AffineTransform.rotation(radians).concatenating(self) }

    public var determinant: Double { a * d - b * c }

    public func inverted() -> AffineTransform? {
        let det = determinant
        guard det != 0, det.isFinite else { return nil }
        return AffineTransform(a: d / det, b: -b / det, c: -c / det, d: a / det,
                               tx: (c * ty - d * tx) / det, ty: (b * tx - a * ty) / det)
    }

    public func apply(_ p: Point) -> Point { Point(x: a * p.x + c * p.y + tx, y: b * p.x + d * p.y + ty) }

    /// Bounding box of `rect` after the transform.
    public func apply(_ rect: Rect) -> Rect {
        let corners = [Point(x: rect.x, y: rect.y), Point(x: rect.maxX, y: rect.y),
                       Point(x: rect.x, y: rect.maxY), Point(x: rect.maxX, y: rect.maxY)].map(apply)
        let xs = corners.map(\.x), ys = corners.map(\.y)
        let minX = xs.min()!, minY = ys.min()!
        return Rect(x: minX, y: minY, width: xs.max()! - minX, height: ys.max()! - minY)
    }

    public var description: String { "[\(a), \(b), \(c), \(d), \(tx), \(ty)]" }
}

/// A straight-alpha RGBA color, components in 0…1.
public struct Color: Sendable, Hashable {
    public var red, green, blue, alpha: Double
    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        (self.red, self.green, self.blue, self.alpha) = (red, green, blue, alpha)
    }
    public static let clear = Color(red: 0, green: 0, blue: 0, alpha: 0)
    public static let black = Color(red: 0, green: 0, blue: 0)
    public static let white = Color(red: 1, green: 1, blue: 1)
}

/// A number for messages: whole numbers as integers, others (and huge ones) as Swift prints them.
func shortNumber(_ value: Double) -> String {
    value.isFinite && value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))" : "\(value)"
}

public extension String {
    /// A value quoted in a message: at most `limit` characters (elided with "…"), with line
    /// breaks and control characters shown escaped, so a message stays one short line.
    func quotedForMessage(limit: Int = 60) -> String {
        var shown = ""
        for (count, scalar) in unicodeScalars.enumerated() {
            if count == limit - 1, unicodeScalars.count > limit { shown += "…"; break }
            if scalar.value < 0x20 || scalar.value == 0x7F {
                shown += scalar == "\n" ? "\\n" : scalar == "\t" ? "\\t" : scalar == "\0" ? "\\0" : "\\x" + String(scalar.value, radix: 16)
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return "\"" + shown + "\""
    }
}
