import CMoonFFmpeg
import MoonreelMedia

/// A cached overlay image placed on whole pixels of the output, with the opacity of its
/// layer subtree (applied as group opacity while blending).
package struct Sprite: Sendable {
    package let image: RGBAImage
    package let x: Int
    package let y: Int
    package let opacity: Double
    /// The part of `image` blended (in its pixels); nil: all of it. Edges of the part inside
    /// the image fall on even columns and rows of the frame, so that no chroma sample mixes
    /// pixels inside and outside the part (a karaoke line cut at its sung edge).
    package let part: PixelBox?
    /// Whether the blender keeps the image prepared for later frames; false for a drawing
    /// made for one frame only (the columns around a karaoke edge).
    package let isReused: Bool

    package init(image: RGBAImage, x: Int, y: Int, opacity: Double, part: PixelBox? = nil, isReused: Bool = true) {
        (self.image, self.x, self.y, self.opacity, self.part, self.isReused) = (image, x, y, opacity, part, isReused)
    }
}

/// Blends premultiplied BGRA sprites straight onto 4:2:0 frames, touching only the sprites'
/// rectangles. Each sprite is converted once to premultiplied Y'CbCr (per matrix, range,
/// dynamic range and chroma parity of its position) and kept in an LRU cache; chroma takes
/// the average of the sprite's 2×2 coverage of each chroma sample. On an HDR frame the
/// sprite's SDR colours are mapped by BT.2408 (`HDRSignal`), so white is reference white.
/// Pixels off the frame are clipped. One owner thread (the caches are not locked).
package final class SpriteBlender {
    private struct Key: Hashable {
        let image: ObjectIdentifier
        let oddX: Bool, oddY: Bool
        let matrix: YUVMatrix, range: YUVRange, dynamicRange: DynamicRange
    }
    private let narrow: LRUCache<Key, PreparedSprite<UInt8>>
    private let wide: LRUCache<Key, PreparedSprite<UInt16>>

    package init(cacheBytes: Int = 64 << 20) {
        narrow = LRUCache(budget: cacheBytes)
        wide = LRUCache(budget: cacheBytes)
    }

    /// Bytes of the prepared sprites held.
    package var cachedBytes: Int { narrow.totalBytes + wide.totalBytes }

    /// Starts a new frame; sprites that no blend used in the last `frames` frames are dropped.
    package func startRound(droppingUnusedFor frames: UInt64) {
        narrow.startRound(droppingUnusedFor: frames)
        wide.startRound(droppingUnusedFor: frames)
    }

    package func blend(_ sprite: Sprite, onto frame: PlanarYUVImage) {
        blend(sprite.image, atX: sprite.x, y: sprite.y, opacity: sprite.opacity, part: sprite.part, keep: sprite.isReused, onto: frame)
    }

    /// `frame = image · opacity + frame · (1 − alpha · opacity)`, in the frame's Y'CbCr, over
    /// `part` of the image (nil: all of it); `keep`: the prepared image is cached for later frames.
    package func blend(_ image: RGBAImage, atX x: Int, y: Int, opacity: Double, part: PixelBox? = nil, keep: Bool = true,
                       onto frame: PlanarYUVImage) {
        let weight = UInt32((min(max(opacity.isNaN ? 0 : opacity, 0), 1) * 255).rounded())
        guard weight > 0, x < frame.width, y < frame.height, x + image.width > 0, y + image.height > 0 else { return }
        let part = part ?? PixelBox(x: 0, y: 0, width: image.width, height: image.height)
        let key = Key(image: ObjectIdentifier(image), oddX: x & 1 != 0, oddY: y & 1 != 0, matrix: frame.matrix,
                      range: frame.range, dynamicRange: frame.dynamicRange)
        // A prepared sprite holds `image`, so its identifier cannot be reused while cached.
        if frame.dynamicRange.isHDR {
            let make = { () -> (PreparedSprite<UInt16>, bytes: Int) in
                let made = PreparedSprite<UInt16>(image, oddX: key.oddX, oddY: key.oddY, matrix: frame.matrix,
                                                  range: frame.range, dynamicRange: frame.dynamicRange)
                return (made, made.byteCount)
            }
            let sprite = keep ? wide.value(for: key, orMake: make) : make().0
            sprite.blend(atX: x, y: y, part: part, weight: weight, onto: frame)
        } else {
            let make = { () -> (PreparedSprite<UInt8>, bytes: Int) in
                let made = PreparedSprite<UInt8>(image, oddX: key.oddX, oddY: key.oddY, matrix: frame.matrix,
                                                 range: frame.range, dynamicRange: .sdr)
                return (made, made.byteCount)
            }
            let sprite = keep ? narrow.value(for: key, orMake: make) : make().0
            sprite.blend(atX: x, y: y, part: part, weight: weight, onto: frame)
        }
    }
}

/// x / 255 rounded to nearest (a division by a constant: a multiply and a shift).
@inline(__always)
func divide255(_ x: UInt32) -> UInt32 { (x &+ 127) / 255 }

/// A sprite in premultiplied Y'CbCr code values (8-bit for SDR frames, 10-bit in 16-bit
/// words for HDR ones): each plane value is the colour's code value times alpha (offsets
/// included), so blending is `src·w + dst·(1 − alpha·w)` on every plane.
final class PreparedSprite<Sample: FixedWidthInteger & UnsignedInteger> {
    let source: RGBAImage
    let width: Int, height: Int
    let luma: [Sample], alpha: [UInt8]
    let cb: [Sample], cr: [Sample], chromaAlpha: [UInt8]
    let chromaWidth: Int, chromaHeight: Int

    /// The largest code value: 8 or 10 bits.
    static var codeMaximum: UInt32 { Sample.bitWidth == 8 ? 255 : 1023 }

    /// Its planes and the image it holds on to (a cache may have let go of that).
    var byteCount: Int { (luma.count + cb.count * 2) * MemoryLayout<Sample>.stride + alpha.count + chromaAlpha.count + source.byteCount }

    init(_ image: RGBAImage, oddX: Bool, oddY: Bool, matrix: YUVMatrix, range: YUVRange, dynamicRange: DynamicRange) {
        source = image
        let (w, h) = (image.width, image.height)
        (width, height) = (w, h)
        let (kr, kb) = matrix.weights
        let kg = 1 - kr - kb
        // Code values per unit of premultiplied signal, and the offsets per unit of alpha.
        let depthScale = Double(1 << (Sample.bitWidth == 8 ? 0 : 2))   // 8 or 10 bits
        let (lumaScale, chromaScale, lumaOffset) = range == .limited ? (219 * depthScale, 224 * depthScale, 16 * depthScale)
                                                                      : (255 * depthScale, 255 * depthScale, 0)
        let chromaOffset = 128 * depthScale
        // Through Int: the generic floating-point conversion to `Sample` is far slower.
        let toSample = { (v: Double) in Sample(truncatingIfNeeded: Int(min(max(v.rounded(), 0), Double(Self.codeMaximum)))) }

        // Premultiplied non-linear R'G'B' (0…1) of the frame's dynamic range, and alpha,
        // of the (at most) two sprite rows that one chroma row covers: a few kilobytes,
        // however large the sprite.
        typealias Signal = (r: Double, g: Double, b: Double, a: Double)
        var rows = [[Signal]](repeating: [Signal](repeating: (0, 0, 0, 0), count: w), count: 2)
        func read(row y: Int, into signal: inout [Signal]) {
            for x in 0..<w {
                let p = image.pixel(x: x, y: y)
                let a = Double(p.alpha) / 255
                if a == 0 {
                    signal[x] = (0, 0, 0, 0)
                } else if dynamicRange.isHDR {
                    let mapped = HDRSignal.signal(fromSDR: (Double(p.red) / 255 / a, Double(p.green) / 255 / a, Double(p.blue) / 255 / a), in: dynamicRange)
                    signal[x] = (mapped.0 * a, mapped.1 * a, mapped.2 * a, a)
                } else {
                    signal[x] = (Double(p.red) / 255, Double(p.green) / 255, Double(p.blue) / 255, a)
                }
            }
        }

        // Chroma sample (i, j) covers sprite pixels (2i − px … 2i − px + 1, 2j − py …).
        let (px, py) = (oddX ? 1 : 0, oddY ? 1 : 0)
        let (cw, ch) = ((px + w + 1) / 2, (py + h + 1) / 2)
        var luma = [Sample](repeating: 0, count: w * h), alpha = [UInt8](repeating: 0, count: w * h)
        var cb = [Sample](repeating: 0, count: cw * ch), cr = cb
        var chromaAlpha = [UInt8](repeating: 0, count: cw * ch)
        for j in 0..<ch {
            let covered = (2 * j - py)...(2 * j - py + 1)
            for y in covered where y >= 0 && y < h {
                read(row: y, into: &rows[y - covered.lowerBound])
                for (x, c) in rows[y - covered.lowerBound].enumerated() where c.a > 0 {
                    luma[y * w + x] = toSample(lumaOffset * c.a + lumaScale * (kr * c.r + kg * c.g + kb * c.b))
                    alpha[y * w + x] = UInt8(min(max((c.a * 255).rounded(), 0), 255))
                }
            }
            for i in 0..<cw {
                var sum = (r: 0.0, g: 0.0, b: 0.0, a: 0.0)
                for y in covered where y >= 0 && y < h {
                    for x in (2 * i - px)...(2 * i - px + 1) where x >= 0 && x < w {
                        let c = rows[y - covered.lowerBound][x]
                        sum = (sum.r + c.r, sum.g + c.g, sum.b + c.b, sum.a + c.a)
                    }
                }
                if sum.a == 0 { continue }
                let (r, g, b, a) = (sum.r / 4, sum.g / 4, sum.b / 4, sum.a / 4)
                let yValue = kr * r + kg * g + kb * b
                cb[j * cw + i] = toSample(chromaOffset * a + chromaScale * (b - yValue) / (2 * (1 - kb)))
                cr[j * cw + i] = toSample(chromaOffset * a + chromaScale * (r - yValue) / (2 * (1 - kr)))
                chromaAlpha[j * cw + i] = UInt8(min(max((a * 255).rounded(), 0), 255))
            }
        }
        (self.luma, self.alpha, self.cb, self.cr, self.chromaAlpha) = (luma, alpha, cb, cr, chromaAlpha)
        (chromaWidth, chromaHeight) = (cw, ch)
    }

    /// Blends `part` of the sprite (its pixels), its top-left corner at (`x`, `y`) of the frame.
    func blend(atX x: Int, y: Int, part: PixelBox, weight: UInt32, onto frame: PlanarYUVImage) {
        let (left, top) = (x + part.x, y + part.y)
        let (right, bottom) = (left + part.width, top + part.height)
        blendPlane(luma, alpha, width: width, height: height, atX: x, y: y, weight: weight,
                   onto: frame.luma, stride: frame.lumaStride, planeWidth: frame.width, planeHeight: frame.height,
                   window: (left, right, top, bottom))
        // Floor and ceiling halves, also for negative positions: every chroma sample the part touches.
        let (cx, cy) = (x >> 1, y >> 1)
        let window = (left >> 1, (right + 1) >> 1, top >> 1, (bottom + 1) >> 1)
        for (plane, stride, values) in [(frame.cb, frame.cbStride, cb), (frame.cr, frame.crStride, cr)] {
            blendPlane(values, chromaAlpha, width: chromaWidth, height: chromaHeight, atX: cx, y: cy,
                       weight: weight, onto: plane, stride: stride, planeWidth: frame.chromaWidth, planeHeight: frame.chromaHeight,
                       window: window)
        }
    }

    /// One plane: `dst = src · w / 255 + dst · (255 − alpha · w / 255) / 255` inside `window`
    /// (plane columns x0 ..< x1, rows y0 ..< y1); `stride` in bytes.
    private func blendPlane(_ source: [Sample], _ alpha: [UInt8], width: Int, height: Int, atX x: Int, y: Int, weight: UInt32,
                            onto plane: UnsafeMutablePointer<UInt8>, stride: Int, planeWidth: Int, planeHeight: Int,
                            window: (x0: Int, x1: Int, y0: Int, y1: Int)) {
        let (x0, x1) = (max(x, 0, window.x0), min(x + width, planeWidth, window.x1))
        let (y0, y1) = (max(y, 0, window.y0), min(y + height, planeHeight, window.y1))
        guard x0 < x1, y0 < y1 else { return }
        // Full opacity (the common case) skips a multiply per value; the test is loop-invariant.
        let opaque = weight == 255
        @inline(__always) func scaled(_ value: UInt32) -> UInt32 { opaque ? value : divide255(value &* weight) }
        let maximum = Self.codeMaximum
        source.withUnsafeBufferPointer { source in
            alpha.withUnsafeBufferPointer { alpha in
                for row in y0..<y1 {
                    let destination = UnsafeMutableRawPointer(plane + row * stride).assumingMemoryBound(to: Sample.self)
                    let offset = (row - y) * width - x
                    for column in x0..<x1 {
                        let a = UInt32(alpha[offset + column])
                        if a == 0 { continue }
                        let value = scaled(UInt32(source[offset + column])) &+ divide255(UInt32(destination[column]) &* (255 &- scaled(a)))
                        destination[column] = Sample(truncatingIfNeeded: min(value, maximum))
                    }
                }
            }
        }
    }
}
