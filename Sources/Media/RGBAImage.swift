#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import CMoonPangoCairo

/// The one maximum picture size, checked before any pixel buffer is allocated (decoded
/// frames, render sizes, layer drawings, images, text), so a hostile size fails with a
/// clear error instead of exhausting memory or overflowing arithmetic.
package enum PixelLimits {
    package static let maxSide = 16384
    package static let maxPixels = 100_000_000
    /// "16384 pixels a side and 100 megapixels", for messages and documentation.
    package static let description = "\(maxSide) pixels a side and \(maxPixels / 1_000_000) megapixels"

    package static func check(width: Int, height: Int, what: @autoclosure () -> String) throws {
        guard width > 0, height > 0 else { throw EngineError("\(what()): empty size \(width)×\(height)") }
        guard width <= maxSide, height <= maxSide, width * height <= maxPixels else {
            throw EngineError("\(what()): \(width)×\(height) is larger than the limit (\(maxSide) per side, \(maxPixels / 1_000_000) MP)", kind: .limit)
        }
    }
}

/// A borrowed view of premultiplied BGRA8 pixels (cairo ARGB32 on little-endian), such as
/// a BGRA `AVFrame`'s plane 0. Valid only while the memory's owner keeps it alive.
package struct BGRAPixels {
    package let base: UnsafeMutablePointer<UInt8>
    package let width: Int
    package let height: Int
    /// Bytes from one row to the next; a multiple of 4.
    package let stride: Int

    package init(base: UnsafeMutablePointer<UInt8>, width: Int, height: Int, stride: Int) {
        (self.base, self.width, self.height, self.stride) = (base, width, height, stride)
    }

    /// (blue, green, red, alpha), premultiplied.
    package func pixel(x: Int, y: Int) -> (blue: UInt8, green: UInt8, red: UInt8, alpha: UInt8) {
        let p = base + y * stride + x * 4
        return (p[0], p[1], p[2], p[3])
    }

    /// Multiplies each colour by its alpha, in place: swscale writes straight alpha, and
    /// cairo, layers and filters take premultiplied.
    package func premultiply() {
        for y in 0..<height {
            let row = base + y * stride
            for x in 0..<width {
                let p = row + x * 4
                let alpha = UInt32(p[3])
                guard alpha < 255 else { continue }
                for c in 0..<3 { p[c] = UInt8((UInt32(p[c]) * alpha + 127) / 255) }
            }
        }
    }
}

/// A rectangle of whole pixels: columns x ..< x + width, rows y ..< y + height.
package struct PixelBox: Sendable, Hashable {
    package var x: Int, y: Int, width: Int, height: Int

    package init(x: Int, y: Int, width: Int, height: Int) { (self.x, self.y, self.width, self.height) = (x, y, width, height) }

    /// The smallest box holding both.
    package func union(_ other: PixelBox) -> PixelBox {
        let (x0, y0) = (min(x, other.x), min(y, other.y))
        return PixelBox(x: x0, y: y0, width: max(x + width, other.x + other.width) - x0, height: max(y + height, other.y + other.height) - y0)
    }
}

/// A picture in memory, as a `CGImage`: an owned premultiplied BGRA8 buffer, laid out as
/// cairo's ARGB32 on little-endian, rows from the top. Apps get one from
/// `ImageGenerator.image(at:)` or `ImageLoader.load(_:)` and show it in a layer through
/// `ImageSource(pixels:description:)`.
///
/// Sendable because it is immutable once published: only the code that creates an image
/// (rasteriser, loader, sprite renderer) writes its pixels, before handing it out; every
/// later user only reads. That is why the `@unchecked Sendable` is sound, and why shared
/// caches may hand the same image to several threads.
public final class RGBAImage: @unchecked Sendable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Bytes from one row to the next (cairo's stride for the width).
    package let stride: Int
    let pixels: UnsafeMutablePointer<UInt8>

    /// A transparent image; sizes are checked against `PixelLimits` before allocating.
    /// Fill it through `view` before sharing it (see the type's note on Sendable).
    package init(width: Int, height: Int) throws {
        try PixelLimits.check(width: width, height: height, what: "image buffer")
        let stride = Int(cairo_format_stride_for_width(CAIRO_FORMAT_ARGB32, Int32(width)))
        guard stride > 0, let memory = calloc(stride * height, 1) else {
            throw EngineError("out of memory allocating a \(width)×\(height) image", kind: .limit)
        }
        (self.width, self.height, self.stride) = (width, height, stride)
        pixels = memory.assumingMemoryBound(to: UInt8.self)
    }

    /// A copy of a BGRA frame's pixels, made opaque (FFmpeg's alpha byte of a converted
    /// video picture is not always 255).
    package convenience init(opaqueBGRA frame: Frame) throws {
        try self.init(width: frame.width, height: frame.height)
        let (source, sourceStride) = frame.plane(0)
        for y in 0..<height {
            row(y).update(from: source + y * sourceStride, count: width * 4)
            for x in 0..<width { row(y)[x * 4 + 3] = 255 }
        }
    }

    deinit { free(pixels) }

    /// The pixels as a borrowed view, valid while this image is alive.
    package var view: BGRAPixels { BGRAPixels(base: pixels, width: width, height: height, stride: stride) }

    /// The first byte of row `y`.
    package func row(_ y: Int) -> UnsafeMutablePointer<UInt8> { pixels + y * stride }
    /// Memory the pixels take, in bytes (stride × height), for cache budgets.
    public var byteCount: Int { stride * height }

    /// The pixel at column `x`, row `y` (from the top-left), premultiplied by alpha, each
    /// component 0…255. The coordinates are not checked: they must lie inside the image.
    public func pixel(x: Int, y: Int) -> (blue: UInt8, green: UInt8, red: UInt8, alpha: UInt8) {
        view.pixel(x: x, y: y)
    }

    /// Writes the image as PNG (`cairo_surface_write_to_png`), for debugging and tests.
    /// - Throws: `EngineError` naming the path when cairo cannot write the file.
    public func writePNG(to path: String) throws {
        let surface = try CairoSurface(drawingInto: view)
        let status = cairo_surface_write_to_png(surface.pointer, path)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw EngineError("cannot write \"\(path)\": \(String(cString: cairo_status_to_string(status)))", kind: .io, subject: path)
        }
    }

    /// The smallest part holding every non-transparent pixel, with its offset in this
    /// image; nil when nothing is visible. Overlays are trimmed so blending touches ink only.
    package func trimmedToInk() throws -> (image: RGBAImage, x: Int, y: Int)? {
        guard let ink = inkBox() else { return nil }
        return (try cropped(to: ink), ink.x, ink.y)
    }

    /// The smallest box holding every non-transparent pixel (this image's pixels); nil when
    /// nothing is visible.
    package func inkBox() -> PixelBox? {
        var (minX, minY, maxX, maxY) = (width, height, -1, -1)
        for y in 0..<height {
            let row = pixels + y * stride
            guard let first = firstInk(in: row) else { continue }
            let last = lastInk(in: row, from: first)
            (minX, maxX) = (min(minX, first), max(maxX, last))
            if minY == height { minY = y }
            maxY = y
        }
        guard maxY >= 0 else { return nil }
        return PixelBox(x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1)
    }

    /// The pixels of `box` (which must lie inside the image), or this image itself when the
    /// box covers it all.
    package func cropped(to box: PixelBox) throws -> RGBAImage {
        if box.x == 0, box.y == 0, box.width == width, box.height == height { return self }
        let part = try RGBAImage(width: box.width, height: box.height)
        for y in 0..<part.height {
            memcpy(part.pixels + y * part.stride, pixels + (y + box.y) * stride + box.x * 4, part.width * 4)
        }
        return part
    }

    /// The first pixel of `row` with ink. Whole pairs of pixels are tested at once:
    /// premultiplied pixels without alpha are all zero bytes.
    private func firstInk(in row: UnsafeMutablePointer<UInt8>) -> Int? {
        var x = 0
        while x + 2 <= width, UnsafeRawPointer(row).loadUnaligned(fromByteOffset: x * 4, as: UInt64.self) == 0 { x += 2 }
        return (x..<width).first { row[$0 * 4 + 3] != 0 }
    }

    /// The last pixel of `row` with ink, at or after `first`, which has ink; the inside of
    /// the row is not read.
    private func lastInk(in row: UnsafeMutablePointer<UInt8>, from first: Int) -> Int {
        var end = width
        while end - 2 > first, UnsafeRawPointer(row).loadUnaligned(fromByteOffset: (end - 2) * 4, as: UInt64.self) == 0 { end -= 2 }
        return (first..<end).last { row[$0 * 4 + 3] != 0 } ?? first
    }

    /// A copy shown the way `orientation` says (a quarter turn or a mirror: exact, no
    /// resampling).
    func turned(by orientation: ExifOrientation) throws -> RGBAImage {
        let (w, h) = orientation.swapsAxes ? (height, width) : (width, height)
        let result = try RGBAImage(width: w, height: h)
        var map = orientation.transform
        let box = map.apply(Rect(x: 0, y: 0, width: Double(width), height: Double(height)))
        (map.tx, map.ty) = (-box.x, -box.y)
        guard let back = map.inverted() else { return self }
        for y in 0..<h {
            let row = result.pixels + y * result.stride
            for x in 0..<w {
                // Pixel centres map onto pixel centres under a quarter turn.
                let source = back.apply(Point(x: Double(x) + 0.5, y: Double(y) + 0.5))
                let sx = min(max(Int(source.x.rounded(.down)), 0), width - 1)
                let sy = min(max(Int(source.y.rounded(.down)), 0), height - 1)
                memcpy(row + x * 4, pixels + sy * stride + sx * 4, 4)
            }
        }
        return result
    }
}
