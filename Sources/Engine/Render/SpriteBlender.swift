import CMoonFFmpeg

/// Y'CbCr matrix of a video frame.
public enum YUVMatrix: Sendable, Hashable {
    case bt601, bt709

    /// Luma weights of red and blue (green is the rest).
    var weights: (red: Double, blue: Double) {
        switch self {
        case .bt601: return (0.299, 0.114)
        case .bt709: return (0.2126, 0.0722)
        }
    }
}

/// Limited ("tv": Y 16…235, chroma 16…240) or full ("pc": 0…255) range.
public enum YUVRange: Sendable, Hashable { case limited, full }

/// A borrowed view of an 8-bit planar 4:2:0 picture (yuv420p), such as a decoded
/// `AVFrame`'s data[0…2] and linesize[0…2]. Chroma planes are ⌈width/2⌉×⌈height/2⌉.
/// Valid only while the frame that owns the planes is alive and not used elsewhere.
/// Sizes are expected even (the export refuses odd 4:2:0 sizes): on an odd edge, the last
/// chroma sample also takes in sprite pixels just past the frame.
public struct PlanarYUVImage {
    public var luma: UnsafeMutablePointer<UInt8>
    public var lumaStride: Int
    public var cb: UnsafeMutablePointer<UInt8>
    public var cbStride: Int
    public var cr: UnsafeMutablePointer<UInt8>
    public var crStride: Int
    public var width: Int
    public var height: Int
    public var matrix: YUVMatrix
    public var range: YUVRange

    public init(luma: UnsafeMutablePointer<UInt8>, lumaStride: Int, cb: UnsafeMutablePointer<UInt8>, cbStride: Int,
                cr: UnsafeMutablePointer<UInt8>, crStride: Int, width: Int, height: Int,
                matrix: YUVMatrix, range: YUVRange) {
        (self.luma, self.lumaStride, self.cb, self.cbStride, self.cr, self.crStride) = (luma, lumaStride, cb, cbStride, cr, crStride)
        (self.width, self.height, self.matrix, self.range) = (width, height, matrix, range)
    }

    /// The planes of a decoded 8-bit 4:2:0 frame (yuv420p, or yuvj420p as full range), with
    /// the matrix it is tagged with (BT.709 when tagged so or, untagged, at 720 lines and
    /// more; BT.601 otherwise); nil for other pixel formats.
    init?(frame: UnsafeMutablePointer<AVFrame>) {
        let f = frame.pointee
        let format = AVPixelFormat(f.format)
        guard format == AV_PIX_FMT_YUV420P || format == AV_PIX_FMT_YUVJ420P else { return nil }
        let planes = withUnsafeBytes(of: f.data) { Array($0.bindMemory(to: UnsafeMutablePointer<UInt8>?.self).prefix(3)) }
        let strides = withUnsafeBytes(of: f.linesize) { Array($0.bindMemory(to: Int32.self).prefix(3)) }
        guard let luma = planes[0], let cb = planes[1], let cr = planes[2] else { return nil }
        let tagged709 = f.colorspace == AVCOL_SPC_BT709
        let untagged = f.colorspace == AVCOL_SPC_UNSPECIFIED || f.colorspace == AVCOL_SPC_RGB
        self.init(luma: luma, lumaStride: Int(strides[0]), cb: cb, cbStride: Int(strides[1]), cr: cr, crStride: Int(strides[2]),
                  width: Int(f.width), height: Int(f.height),
                  matrix: tagged709 || (untagged && f.height >= 720) ? .bt709 : .bt601,
                  range: format == AV_PIX_FMT_YUVJ420P || f.color_range == AVCOL_RANGE_JPEG ? .full : .limited)
    }

    var chromaWidth: Int { (width + 1) / 2 }
    var chromaHeight: Int { (height + 1) / 2 }
}

/// A cached overlay image placed on whole pixels of the output, with the opacity of its
/// layer subtree (applied as group opacity while blending).
public struct Sprite: Sendable {
    public let image: RGBAImage
    public let x: Int
    public let y: Int
    public let opacity: Double

    public init(image: RGBAImage, x: Int, y: Int, opacity: Double) {
        (self.image, self.x, self.y, self.opacity) = (image, x, y, opacity)
    }
}

/// Blends premultiplied BGRA sprites straight onto yuv420p frames, touching only the
/// sprites' rectangles. Each sprite is converted once to premultiplied Y'CbCr (per
/// matrix, range and chroma parity of its position) and kept in an LRU cache; chroma
/// takes the average of the sprite's 2×2 coverage of each chroma sample.
/// Pixels off the frame are clipped. One owner thread (the cache is not locked).
public final class SpriteBlender {
    private struct Key: Hashable {
        let image: ObjectIdentifier
        let oddX: Bool, oddY: Bool
        let matrix: YUVMatrix, range: YUVRange
    }
    private let prepared: LRUCache<Key, PreparedSprite>

    public init(cacheBytes: Int = 64 << 20) { prepared = LRUCache(budget: cacheBytes) }

    public func blend(_ sprite: Sprite, onto frame: PlanarYUVImage) {
        blend(sprite.image, atX: sprite.x, y: sprite.y, opacity: sprite.opacity, onto: frame)
    }

    /// `frame = image · opacity + frame · (1 − alpha · opacity)`, in the frame's Y'CbCr.
    public func blend(_ image: RGBAImage, atX x: Int, y: Int, opacity: Double, onto frame: PlanarYUVImage) {
        let weight = UInt32((min(max(opacity.isNaN ? 0 : opacity, 0), 1) * 255).rounded())
        guard weight > 0, x < frame.width, y < frame.height, x + image.width > 0, y + image.height > 0 else { return }
        let key = Key(image: ObjectIdentifier(image), oddX: x & 1 != 0, oddY: y & 1 != 0, matrix: frame.matrix, range: frame.range)
        // The prepared sprite holds `image`, so its identifier cannot be reused while cached.
        let sprite = prepared.value(for: key) {
            let made = PreparedSprite(image, oddX: key.oddX, oddY: key.oddY, matrix: frame.matrix, range: frame.range)
            return (made, made.byteCount)
        }
        blendPlane(sprite.luma, sprite.alpha, width: image.width, height: image.height, atX: x, y: y, weight: weight,
                   onto: frame.luma, stride: frame.lumaStride, planeWidth: frame.width, planeHeight: frame.height)
        let (cx, cy) = (x >> 1, y >> 1) // floor, also for negative positions
        for (plane, stride, values) in [(frame.cb, frame.cbStride, sprite.cb), (frame.cr, frame.crStride, sprite.cr)] {
            blendPlane(values, sprite.chromaAlpha, width: sprite.chromaWidth, height: sprite.chromaHeight, atX: cx, y: cy,
                       weight: weight, onto: plane, stride: stride, planeWidth: frame.chromaWidth, planeHeight: frame.chromaHeight)
        }
    }

    /// One plane: `dst = div255(src · w) + div255(dst · (255 − div255(alpha · w)))`.
    private func blendPlane(_ source: [UInt8], _ alpha: [UInt8], width: Int, height: Int, atX x: Int, y: Int, weight: UInt32,
                            onto plane: UnsafeMutablePointer<UInt8>, stride: Int, planeWidth: Int, planeHeight: Int) {
        let (x0, x1) = (max(x, 0), min(x + width, planeWidth))
        let (y0, y1) = (max(y, 0), min(y + height, planeHeight))
        guard x0 < x1, y0 < y1 else { return }
        // Full opacity (the common case) skips a multiply per value; the test is loop-invariant.
        let opaque = weight == 255
        @inline(__always) func scaled(_ value: UInt32) -> UInt32 { opaque ? value : div255(value &* weight) }
        source.withUnsafeBufferPointer { source in
            alpha.withUnsafeBufferPointer { alpha in
                for row in y0..<y1 {
                    let destination = plane + row * stride
                    let offset = (row - y) * width - x
                    for column in x0..<x1 {
                        let a = UInt32(alpha[offset + column])
                        if a == 0 { continue }
                        let value = scaled(UInt32(source[offset + column])) &+ div255(UInt32(destination[column]) &* (255 &- scaled(a)))
                        destination[column] = UInt8(truncatingIfNeeded: min(value, 255))
                    }
                }
            }
        }
    }
}

/// x / 255 rounded to nearest, exact for 0 ≤ x ≤ 255·255.
@inline(__always)
func div255(_ x: UInt32) -> UInt32 {
    let t = x &+ 128
    return (t &+ (t >> 8)) >> 8
}

/// A sprite in premultiplied Y'CbCr: each plane value is the colour's code value times
/// alpha (offsets included), so blending is `src·w + dst·(1 − alpha·w)` on every plane.
final class PreparedSprite {
    let source: RGBAImage
    let luma: [UInt8], alpha: [UInt8]
    let cb: [UInt8], cr: [UInt8], chromaAlpha: [UInt8]
    let chromaWidth: Int, chromaHeight: Int

    var byteCount: Int { luma.count * 2 + cb.count * 3 }

    init(_ image: RGBAImage, oddX: Bool, oddY: Bool, matrix: YUVMatrix, range: YUVRange) {
        source = image
        let (w, h) = (image.width, image.height)
        let (kr, kb) = matrix.weights
        let kg = 1 - kr - kb
        // Code values per unit of premultiplied colour, and the offset per unit of alpha.
        let (lumaScale, chromaScale, lumaOffset) = range == .limited ? (219.0 / 255, 224.0 / 255, 16.0) : (1.0, 1.0, 0.0)
        let toByte = { (v: Double) in UInt8(min(max(v.rounded(), 0), 255)) }
        func components(_ x: Int, _ y: Int) -> (r: Double, g: Double, b: Double, a: Double) {
            let p = image.pixel(x: x, y: y)
            return (Double(p.red), Double(p.green), Double(p.blue), Double(p.alpha))
        }

        var luma = [UInt8](repeating: 0, count: w * h), alpha = luma
        for y in 0..<h {
            for x in 0..<w {
                let c = components(x, y)
                if c.a == 0 { continue } // most of a text sprite; the arrays start at zero
                luma[y * w + x] = toByte(lumaOffset * c.a / 255 + lumaScale * (kr * c.r + kg * c.g + kb * c.b))
                alpha[y * w + x] = UInt8(c.a)
            }
        }

        // Chroma sample (i, j) covers sprite pixels (2i − px … 2i − px + 1, 2j − py …).
        let (px, py) = (oddX ? 1 : 0, oddY ? 1 : 0)
        let (cw, ch) = ((px + w + 1) / 2, (py + h + 1) / 2)
        var cb = [UInt8](repeating: 0, count: cw * ch), cr = cb, chromaAlpha = cb
        for j in 0..<ch {
            for i in 0..<cw {
                var sum = (r: 0.0, g: 0.0, b: 0.0, a: 0.0)
                for y in (2 * j - py)...(2 * j - py + 1) where y >= 0 && y < h {
                    for x in (2 * i - px)...(2 * i - px + 1) where x >= 0 && x < w {
                        let c = components(x, y)
                        sum = (sum.r + c.r, sum.g + c.g, sum.b + c.b, sum.a + c.a)
                    }
                }
                if sum.a == 0 { continue }
                let (r, g, b, a) = (sum.r / 4, sum.g / 4, sum.b / 4, sum.a / 4)
                let y = kr * r + kg * g + kb * b
                cb[j * cw + i] = toByte(128 * a / 255 + chromaScale * (b - y) / (2 * (1 - kb)))
                cr[j * cw + i] = toByte(128 * a / 255 + chromaScale * (r - y) / (2 * (1 - kr)))
                chromaAlpha[j * cw + i] = toByte(a)
            }
        }
        (self.luma, self.alpha, self.cb, self.cr, self.chromaAlpha) = (luma, alpha, cb, cr, chromaAlpha)
        (chromaWidth, chromaHeight) = (cw, ch)
    }
}
