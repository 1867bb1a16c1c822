import CMoonFFmpeg
import MoonreelMedia

/// libavfilter's `gblur` for pictures of one size and format, built once and retuned by
/// command (`sigma`, `sigmaV`) when the radius changes, so a ramp costs no rebuilding.
/// On 4:2:0 frames the chroma planes, half as wide and high, get half the radius, so colour
/// and brightness blur alike; BGRA is blurred as planar RGBA (a lossless reorder).
final class BlurGraph {
    /// What a graph is built for.
    struct Key: Hashable {
        let width: Int, height: Int
        let format: AVPixelFormat
        /// Only the luma plane (sharpening works on brightness alone).
        let lumaOnly: Bool
    }

    private let chain: FilterChain
    private let key: Key
    private var sigma: Double

    /// gblur's recursive approximation: three passes come close to a true Gaussian (one
    /// leaves a visible box shape) at three times the cost.
    private static let steps = 3

    init(_ key: Key, sigma: Double) throws {
        let description: String
        if key.format == AV_PIX_FMT_BGRA {
            description = "gblur@main=sigma=\(sigma):steps=\(Self.steps):planes=15,format=bgra"
        } else if key.lumaOnly {
            description = "gblur@main=sigma=\(sigma):steps=\(Self.steps):planes=1"
        } else {
            description = "gblur@main=sigma=\(sigma):steps=\(Self.steps):planes=1,gblur@chroma=sigma=\(sigma / 2):steps=\(Self.steps):planes=6"
        }
        chain = try FilterChain(videoFilters: description, width: key.width, height: key.height, pixelFormat: key.format, threads: 2)
        self.key = key
        self.sigma = sigma
    }

    /// A blurred copy of `frame` (which is left as it is).
    func blur(_ frame: Frame, sigma: Double) throws -> Frame {
        if sigma != self.sigma {
            let chroma = key.format != AV_PIX_FMT_BGRA && !key.lumaOnly
            for (instance, value) in [("gblur@main", sigma)] + (chroma ? [("gblur@chroma", sigma / 2)] : []) {
                // sigmaV too: gblur fixes it to the first sigma when it is left unset.
                for option in ["sigma", "sigmaV"] { try chain.send(option, "\(value)", to: instance) }
            }
            self.sigma = sigma
        }
        try chain.push(try frame.reference())
        guard let output = try chain.next() else { throw EngineError("the blur produced no frame", kind: .internal) }
        output.pointer.pointee.pts = frame.pointer.pointee.pts
        return output
    }
}

/// Premultiplied BGRA drawings as frames for libavfilter, and back.
extension Frame {
    convenience init(copying pixels: BGRAPixels) throws {
        try self.init(width: pixels.width, height: pixels.height, format: AV_PIX_FMT_BGRA)
        let (base, stride) = plane(0)
        for y in 0..<pixels.height {
            (base + y * stride).update(from: pixels.base + y * pixels.stride, count: pixels.width * 4)
        }
    }

    /// Copies this BGRA frame's pixels into `pixels` (of the same size).
    func copy(into pixels: BGRAPixels) {
        let (base, stride) = plane(0)
        for y in 0..<pixels.height {
            (pixels.base + y * pixels.stride).update(from: base + y * stride, count: pixels.width * 4)
        }
    }
}

/// `sharpenLuminance`: an unsharp mask on brightness, `luma + sharpness · (luma − blurred)`,
/// with the Gaussian of `radius` from a `BlurGraph`. Y'CbCr frames change in luma only; on
/// premultiplied BGRA the same luma difference is added to R', G' and B'.
enum Sharpen {
    /// `blurred` (luma blurred, chroma as in `original`) becomes the sharpened picture.
    static func combine(original: PlanarYUVImage, into blurred: PlanarYUVImage, sharpness: Float) {
        if original.dynamicRange.isHDR {
            combine(original, blurred, sharpness, UInt16.self, maximum: 1023)
        } else {
            combine(original, blurred, sharpness, UInt8.self, maximum: 255)
        }
    }

    private static func combine<Sample: FixedWidthInteger & UnsignedInteger>(_ original: PlanarYUVImage, _ blurred: PlanarYUVImage,
                                                                             _ sharpness: Float, _: Sample.Type, maximum: Float) {
        for y in 0..<original.height {
            let source = UnsafeMutableRawPointer(original.luma + y * original.lumaStride).assumingMemoryBound(to: Sample.self)
            let target = UnsafeMutableRawPointer(blurred.luma + y * blurred.lumaStride).assumingMemoryBound(to: Sample.self)
            for x in 0..<original.width {
                let value = Float(source[x]), soft = Float(target[x])
                target[x] = Sample(min(max(value + sharpness * (value - soft), 0), maximum) + 0.5) // + ½ and truncation: rounding, as it is ≥ 0
            }
        }
    }

    /// `pixels` sharpened in place, given a blurred copy.
    static func combine(_ pixels: BGRAPixels, blurred: Frame, sharpness: Float) {
        let (soft, softStride) = blurred.plane(0)
        let weights = SIMD3<Float>(0.2126, 0.7152, 0.0722)
        pixels.forEachColor { x, y, rgb, alpha, p in
            // The detail is taken on premultiplied values (0…255), as the blur saw them.
            let q = soft + y * softStride + 4 * x
            let detail = (rgb * alpha * weights).sum() - (SIMD3(Float(q[2]), Float(q[1]), Float(q[0])) * weights).sum()
            storePremultiplied(rgb + SIMD3(repeating: sharpness * detail / alpha), alpha: alpha, at: p)
        }
    }
}
