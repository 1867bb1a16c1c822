#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// A point in pixels, like `CGPoint`.
///
/// Which way y grows depends on the space the point lives in: render space (video
/// compositions, snapshots, images) has its origin at the top-left with y down; layer
/// geometry (`LayerProperties`) follows Core Animation, origin bottom-left and y up, unless
/// an ancestor layer sets `isGeometryFlipped`.
public struct Point: Sendable, Hashable {
    /// Horizontal coordinate in pixels, growing to the right.
    public var x: Double
    /// Vertical coordinate in pixels; down or up as the enclosing space says (see the type).
    public var y: Double
    /// A point at (`x`, `y`) pixels.
    public init(x: Double, y: Double) { self.x = x; self.y = y }
    /// The origin, (0, 0).
    public static let zero = Point(x: 0, y: 0)
}

/// A width and height in pixels, like `CGSize`. Sizes are not checked here; the engine
/// rejects negative, non-finite or oversized ones where it uses them.
public struct Size: Sendable, Hashable, CustomStringConvertible {
    /// Horizontal extent in pixels.
    public var width: Double
    /// Vertical extent in pixels.
    public var height: Double
    /// A size of `width` × `height` pixels.
    public init(width: Double, height: Double) { self.width = width; self.height = height }
    /// No width and no height.
    public static let zero = Size(width: 0, height: 0)
    /// Whole pixels, for messages: "1920×1080".
    public var description: String { "\(Int(width.rounded()))×\(Int(height.rounded()))" }

    /// How a picture's sides are rounded to pixels.
    public enum PixelSides: Sendable {
        /// Even numbers, at least 2 (4:2:0 video stores colour for 2×2 pixels).
        case even
        /// An even width, at least 2, and any whole height (4:2:2 video stores colour for 2×1 pixels).
        case evenWidth
        /// Any whole number, at least 1 (GIFs, image files, stills).
        case whole
    }

    /// The pixels a picture of this size is drawn at: scaled down (aspect kept, never up) to
    /// fit inside `box` when given, then rounded down to `sides`. Exports, previews and stills
    /// all size their pictures by this one rule, so a frame grabbed for a thumbnail is the
    /// export's frame. A side a hair under a whole number from floating point (a billionth
    /// of a pixel short, after a scale) counts as that number.
    public func pixels(fitting box: Size? = nil, sides: PixelSides) -> (width: Int, height: Int) {
        var scale = 1.0
        if let box { scale = min(1, box.width / max(width, 1), box.height / max(height, 1)) }
        func side(_ length: Double, even: Bool) -> Int {
            let scaled = length * scale + 1e-9
            guard scaled.isFinite, scaled < Double(Int32.max) else { return even ? 2 : 1 }
            return even ? max(2, Int(scaled / 2) * 2) : max(1, Int(scaled))
        }
        return (side(width, even: sides != .whole), side(height, even: sides == .even))
    }

    /// What a picture of this size says when drawn at `pixels`, or nil when nothing was
    /// rounded: a warning when the size itself is not whole (or even, as `sides` asks) —
    /// `name` says whose size it is: the render size (times its scale) a script set, or the
    /// sources' — and a note when fitting it into `box` (a preset's) gave a fraction of a
    /// pixel, so the output's shape differs a little from the picture's, or when the picture
    /// is smaller than a box the user asked for (`boxIsAsked`: a preset named for its size) on
    /// both sides: it is not scaled up.
    public func roundingNote(to pixels: (width: Int, height: Int), sides: PixelSides, name: String = "renderSize", fitting box: Size? = nil,
                             boxIsAsked: Bool = false) -> Diagnostic? {
        guard width.isFinite, height.isFinite, abs(width) < Double(Int32.max), abs(height) < Double(Int32.max) else { return nil }
        let whole = width == width.rounded() && height == height.rounded()
        let shown = whole ? description : "\(width)×\(height)"
        switch sides {
        case .whole where !whole:
            return Diagnostic(.sizeRounded, .warning, "\(name) \(shown) is not made of whole pixels; the output is \(pixels.width)×\(pixels.height)")
        case .even where !whole || Int(width) % 2 != 0 || Int(height) % 2 != 0:
            return Diagnostic(.sizeRounded, .warning, "\(name) \(shown) is not made of even whole numbers, which 4:2:0 video needs; the output is \(pixels.width)×\(pixels.height)")
        case .evenWidth where !whole || Int(width) % 2 != 0:
            return Diagnostic(.sizeRounded, .warning, "\(name) \(shown) is not whole pixels with an even width, which 4:2:2 video needs; the output is \(pixels.width)×\(pixels.height)")
        default:
            break
        }
        guard let box, width > 0, height > 0 else { return nil }
        if boxIsAsked, width < box.width, height < box.height {
            // As AVFoundation's size presets: a box is a most, never a scale up.
            return Diagnostic(.sizeRounded, .note, "\(name) \(description) is smaller than the preset's \(box) box and is not scaled up: the output is \(pixels.width)×\(pixels.height)",
                              remedy: "set the video composition's renderSize (with fit) to draw it larger")
        }
        let scale = min(1, box.width / width, box.height / height)
        let fitted = (width: width * scale, height: height * scale)
        // Within a millionth of a pixel is exact (the scale is a quotient of whole sizes).
        guard abs(fitted.width - Double(pixels.width)) > 1e-6 || abs(fitted.height - Double(pixels.height)) > 1e-6 else { return nil }
        let fittedShape = fitted.width / fitted.height, outputShape = Double(pixels.width) / Double(pixels.height)
        let off = abs(outputShape / fittedShape - 1) * 100
        let sidesRule = [.even: "even whole pixels, as 4:2:0 video needs", .evenWidth: "whole pixels with an even width, as 4:2:2 video needs"][sides] ?? "whole pixels"
        return Diagnostic(.sizeRounded, .note, "\(name) \(description) fitted into the preset's \(box) box is \(shortPixels(fitted.width))×\(shortPixels(fitted.height)); "
                          + "the output is \(pixels.width)×\(pixels.height) (\(sidesRule)), its shape \(shortPixels(off)) % off the picture's")
    }

    /// A pixel count for a message: at most two decimals, none when whole (303.75, 540).
    private func shortPixels(_ value: Double) -> String {
        let hundredths = (value * 100).rounded()
        return hundredths.truncatingRemainder(dividingBy: 100) == 0 ? String(Int(hundredths / 100)) : String(hundredths / 100)
    }
}

/// A rectangle in pixels, like `CGRect`: an origin corner and a size. The origin is the
/// corner with the smallest coordinates (top-left in render space, bottom-left in Core
/// Animation's y-up layer space).
public struct Rect: Sendable, Hashable {
    /// The corner with the smallest x and y.
    public var origin: Point
    /// Width and height in pixels (not normalised: a negative size stays negative).
    public var size: Size
    /// A rectangle with its origin at (`x`, `y`) and the given size, all in pixels.
    public init(x: Double, y: Double, width: Double, height: Double) {
        origin = Point(x: x, y: y)
        size = Size(width: width, height: height)
    }
    /// `origin.x`, the left edge.
    public var x: Double { origin.x }
    /// `origin.y`, the edge with the smaller y.
    public var y: Double { origin.y }
    /// `size.width`.
    public var width: Double { size.width }
    /// `size.height`.
    public var height: Double { size.height }
    /// The right edge: `x + width`.
    public var maxX: Double { origin.x + size.width }
    /// The edge opposite the origin: `y + height`.
    public var maxY: Double { origin.y + size.height }
    /// An empty rectangle at the origin.
    public static let zero = Rect(x: 0, y: 0, width: 0, height: 0)

    /// This rect limited to `bounds`; a zero-size rect on the nearest edge when they do not meet.
    package func clamped(to bounds: Rect) -> Rect {
        let x0 = min(max(x, bounds.x), bounds.maxX), x1 = min(max(maxX, bounds.x), bounds.maxX)
        let y0 = min(max(y, bounds.y), bounds.maxY), y1 = min(max(maxY, bounds.y), bounds.maxY)
        return Rect(x: x0, y: y0, width: max(x1 - x0, 0), height: max(y1 - y0, 0))
    }
}

/// A 2-D affine transform in Core Graphics' convention: a point (x, y) maps to
/// (a·x + c·y + tx, b·x + d·y + ty).
///
/// Like `CGAffineTransform`. In layers a transform applies about the layer's anchor point;
/// in video composition layer instructions it maps the track's pixels into render space.
public struct AffineTransform: Sendable, Hashable, CustomStringConvertible {
    /// Scale and shear coefficient: x contributes `a·x` to the new x.
    public var a: Double
    /// Shear coefficient: x contributes `b·x` to the new y.
    public var b: Double
    /// Shear coefficient: y contributes `c·y` to the new x.
    public var c: Double
    /// Scale and shear coefficient: y contributes `d·y` to the new y.
    public var d: Double
    /// Horizontal translation in pixels, added last.
    public var tx: Double
    /// Vertical translation in pixels, added last.
    public var ty: Double

    /// A transform with the given coefficients (see the type for how they map a point).
    public init(a: Double, b: Double, c: Double, d: Double, tx: Double, ty: Double) {
        (self.a, self.b, self.c, self.d, self.tx, self.ty) = (a, b, c, d, tx, ty)
    }

    /// The transform that leaves every point where it is.
    public static let identity = AffineTransform(a: 1, b: 0, c: 0, d: 1, tx: 0, ty: 0)
    /// A move by `x`, `y` pixels (`CGAffineTransform(translationX:y:)`).
    public static func translation(_ x: Double, _ y: Double) -> AffineTransform {
        AffineTransform(a: 1, b: 0, c: 0, d: 1, tx: x, ty: y)
    }
    /// A scale by factors `sx`, `sy` about the origin (`CGAffineTransform(scaleX:y:)`);
    /// negative factors mirror.
    public static func scale(_ sx: Double, _ sy: Double) -> AffineTransform {
        AffineTransform(a: sx, b: 0, c: 0, d: sy, tx: 0, ty: 0)
    }

    /// A scale by `sx`, `sy` about `point`, which stays where it is.
    public static func scale(_ sx: Double, _ sy: Double, about point: Point) -> AffineTransform {
        AffineTransform.translation(-point.x, -point.y).concatenating(.scale(sx, sy)).concatenating(.translation(point.x, point.y))
    }
    /// Rotation by `radians`; positive turns clockwise on screen (y down), as in Core Graphics
    /// on iOS, where UIKit's flipped coordinates give the same picture.
    public static func rotation(_ radians: Double) -> AffineTransform {
        let (s, c) = (sin(radians), cos(radians))
        return AffineTransform(a: c, b: s, c: -s, d: c, tx: 0, ty: 0)
    }

    /// True when all six coefficients equal the identity's exactly.
    public var isIdentity: Bool { self == .identity }

    /// `self` then `other` (CGAffineTransformConcat order).
    public func concatenating(_ other: AffineTransform) -> AffineTransform {
        AffineTransform(a: a * other.a + b * other.c, b: a * other.b + b * other.d,
                        c: c * other.a + d * other.c, d: c * other.b + d * other.d,
                        tx: tx * other.a + ty * other.c + other.tx, ty: tx * other.b + ty * other.d + other.ty)
    }
    /// A translation by `x`, `y` pixels applied before this transform, as
    /// `CGAffineTransform.translatedBy(x:y:)`.
    public func translatedBy(_ x: Double, _ y: Double) -> AffineTransform { AffineTransform.translation(x, y).concatenating(self) }
    /// A scale by `sx`, `sy` applied before this transform, as `CGAffineTransform.scaledBy(x:y:)`.
    public func scaledBy(_ sx: Double, _ sy: Double) -> AffineTransform { AffineTransform.scale(sx, sy).concatenating(self) }
    /// A rotation by `radians` (positive clockwise on screen, see `rotation(_:)`) applied
    /// before this transform, as `CGAffineTransform.rotated(by:)`.
    public func rotatedBy(_ radians: Double) -> AffineTransform { AffineTransform.rotation(radians).concatenating(self) }

    /// `a·d − b·c`: the factor by which areas grow; 0 when the transform cannot be inverted,
    /// negative when it mirrors.
    public var determinant: Double { a * d - b * c }

    /// The transform that undoes this one, or nil when it has none (determinant zero or
    /// not finite).
    public func inverted() -> AffineTransform? {
        let det = determinant
        guard det != 0, det.isFinite else { return nil }
        return AffineTransform(a: d / det, b: -b / det, c: -c / det, d: a / det,
                               tx: (c * ty - d * tx) / det, ty: (b * tx - a * ty) / det)
    }

    /// Where the transform takes `p`: (a·x + c·y + tx, b·x + d·y + ty).
    public func apply(_ p: Point) -> Point { Point(x: a * p.x + c * p.y + tx, y: b * p.x + d * p.y + ty) }

    /// Bounding box of `rect` after the transform.
    public func apply(_ rect: Rect) -> Rect {
        let corners = [Point(x: rect.x, y: rect.y), Point(x: rect.maxX, y: rect.y),
                       Point(x: rect.x, y: rect.maxY), Point(x: rect.maxX, y: rect.maxY)].map(apply)
        let xs = corners.map(\.x), ys = corners.map(\.y)
        let minX = xs.min()!, minY = ys.min()!
        return Rect(x: minX, y: minY, width: xs.max()! - minX, height: ys.max()! - minY)
    }

    /// The six coefficients, for messages: "[a, b, c, d, tx, ty]".
    public var description: String { "[\(a), \(b), \(c), \(d), \(tx), \(ty)]" }
}

/// A straight-alpha (not premultiplied) RGBA color, like a `CGColor`, components
/// in 0…1.
public struct Color: Sendable, Hashable {
    /// Red component, 0…1.
    public var red: Double
    /// Green component, 0…1.
    public var green: Double
    /// Blue component, 0…1.
    public var blue: Double
    /// Opacity, 0 (transparent) … 1 (opaque); the color components are not multiplied by it.
    public var alpha: Double
    /// A color from components in 0…1; opaque unless `alpha` says otherwise.
    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        (self.red, self.green, self.blue, self.alpha) = (red, green, blue, alpha)
    }
    /// Fully transparent black.
    public static let clear = Color(red: 0, green: 0, blue: 0, alpha: 0)
    /// Opaque black.
    public static let black = Color(red: 0, green: 0, blue: 0)
    /// Opaque white.
    public static let white = Color(red: 1, green: 1, blue: 1)
}

/// A number for messages: whole numbers as integers, others (and huge ones) as Swift prints them.
package func shortNumber(_ value: Double) -> String {
    value.isFinite && value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))" : "\(value)"
}

/// A frame rate for messages, to the hundredth: "29.97", "25".
package func framesPerSecond(_ frameDuration: MediaTime) -> String {
    frameDuration.value > 0 ? shortNumber((100 / frameDuration.seconds).rounded() / 100) : "0"
}

/// Seconds for messages, to the millisecond: "2.202", not "2.2016666666666667".
package func shortSeconds(_ time: MediaTime) -> String {
    shortNumber((time.seconds * 1000).rounded() / 1000)
}

package extension String {
    /// A value quoted in a message: at most `limit` characters (elided with "…"), with line
    /// breaks and control characters shown escaped, so a message stays one short line.
    package func quotedForMessage(limit: Int = 60) -> String {
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

/// A video's stored picture, as a track or a composition's segment knows it: what it shows
/// once turned upright and, for non-square pixels, stretched to their shape.
public protocol StoredPicture {
    /// The stored size in pixels.
    var naturalSize: Size { get }
    /// The stored pixels' width over their height.
    var pixelAspectRatio: Double { get }
    /// A photo shown as video.
    var isStillImage: Bool { get }
}

extension StoredPicture {
    /// Maps the stored picture onto what it shows, given `preferredTransform` (the track's or
    /// the file's, which turns it upright): a video of non-square pixels (anamorphic DV and
    /// HDV) that is not turned is stretched across to the width it shows (`shownSize`); any
    /// other picture is turned as `preferredTransform` says (a turned anamorphic one keeps
    /// its stored shape, and the export warns).
    public func shownTransform(preferredTransform: AffineTransform) -> AffineTransform {
        guard let width = shownWidth(preferredTransform: preferredTransform) else { return preferredTransform }
        return .scale(width / naturalSize.width, 1)
    }

    /// The size the picture shows: upright, and an unturned video of non-square pixels at
    /// the width it shows, rounded to an even number of pixels as 4:2:0 video needs
    /// (720×576 at 64:45: 1024; 720×480 at 32:27: 854). Photos keep their stored shape (a
    /// JPEG's dots per inch are no pixel shape).
    public func shownSize(preferredTransform: AffineTransform) -> Size {
        if let width = shownWidth(preferredTransform: preferredTransform) { return Size(width: width, height: naturalSize.height) }
        return preferredTransform.apply(Rect(x: 0, y: 0, width: naturalSize.width, height: naturalSize.height)).size
    }

    private func shownWidth(preferredTransform: AffineTransform) -> Double? {
        guard preferredTransform.isIdentity, !isStillImage, abs(pixelAspectRatio - 1) > 0.01, naturalSize.width > 0 else { return nil }
        return max(2, (naturalSize.width * pixelAspectRatio / 2).rounded() * 2)
    }
}
