import MoonreelMedia

/// `vignette`: every colour is scaled by `1 − intensity · t²`, where t grows from 0 at
/// `radius / 2` of the way from the centre to a corner up to 1 at the corners. On Y'CbCr
/// that scales luma above black and chroma about neutral, as scaling R'G'B' would.
struct Vignette {
    let intensity: Float
    let start: Float

    init(_ filter: Filter) {
        intensity = Float(filter.number("intensity"))
        start = Float(filter.number("radius")) / 2
    }

    /// The factor at a point of a `width`×`height` picture (pixel units, corner at 0, 0).
    @inline(__always)
    func factor(x: Float, y: Float, width: Float, height: Float) -> Float {
        let (dx, dy) = (x / width - 0.5, y / height - 0.5)
        // Distance in fractions of the half-diagonal, so the corners are at 1 whatever the shape.
        let distance = ((dx * dx + dy * dy) * 2).squareRoot()
        let t = min(max((distance - start) / (1 - start), 0), 1)
        return max(1 - intensity * t * t, 0)
    }

    /// The factors of every luma and every chroma sample of a `width`×`height` 4:2:0
    /// picture: worked out once, then each frame is a multiply per sample.
    final class Mask {
        let luma: [Float], chroma: [Float]
        let width: Int, height: Int

        init(_ vignette: Vignette, width: Int, height: Int) {
            let (w, h) = (Float(width), Float(height))
            let (chromaWidth, chromaHeight) = ((width + 1) / 2, (height + 1) / 2)
            luma = (0..<width * height).map { i in vignette.factor(x: Float(i % width) + 0.5, y: Float(i / width) + 0.5, width: w, height: h) }
            // A chroma sample stands for the 2×2 block whose centre is here.
            chroma = (0..<chromaWidth * chromaHeight).map { i in
                vignette.factor(x: Float(2 * (i % chromaWidth) + 1), y: Float(2 * (i / chromaWidth) + 1), width: w, height: h)
            }
            (self.width, self.height) = (width, height)
        }

        func apply(to image: PlanarYUVImage) {
            if image.dynamicRange.isHDR { apply(to: image, UInt16.self) } else { apply(to: image, UInt8.self) }
        }

        private func apply<Sample: FixedWidthInteger & UnsignedInteger>(to image: PlanarYUVImage, _: Sample.Type) {
            let coding = YUVCoding(image)
            let (lumaOf, chromaOf) = (coding.lumaTable, coding.chromaTable)
            let chromaWidth = image.chromaWidth
            RowBands.run(rows: image.chromaHeight, pixels: width * height) { band in
                for cy in band {
                    for y in 2 * cy..<min(2 * cy + 2, height) {
                        let row = UnsafeMutableRawPointer(image.luma + y * image.lumaStride).assumingMemoryBound(to: Sample.self)
                        for x in 0..<width { row[x] = Sample(coding.lumaCode(lumaOf[Int(row[x])] * luma[y * width + x])) }
                    }
                    for plane in [(image.cb, image.cbStride), (image.cr, image.crStride)] {
                        let row = UnsafeMutableRawPointer(plane.0 + cy * plane.1).assumingMemoryBound(to: Sample.self)
                        for x in 0..<chromaWidth { row[x] = Sample(coding.chromaCode(chromaOf[Int(row[x])] * chroma[cy * chromaWidth + x])) }
                    }
                }
            }
        }
    }

    /// Premultiplied BGRA, in place (alpha kept).
    func apply(to pixels: BGRAPixels) {
        let (width, height) = (Float(pixels.width), Float(pixels.height))
        pixels.forEachColor { x, y, rgb, alpha, p in
            storePremultiplied(rgb * factor(x: Float(x) + 0.5, y: Float(y) + 0.5, width: width, height: height), alpha: alpha, at: p)
        }
    }
}

/// `lumaThreshold`: each pixel stays as far as its luma (BT.709 of R'G'B', or 1 − that with
/// `invert`) lies below `threshold`, fading over `softness`. On premultiplied BGRA, in place.
struct LumaThreshold {
    let threshold: Float
    let softness: Float
    let inverted: Bool

    init(_ filter: Filter) {
        threshold = Float(filter.number("threshold"))
        softness = Float(filter.number("softness"))
        inverted = filter.number("invert") >= 0.5
    }

    /// How opaque a colour stays (0…1).
    @inline(__always)
    func opacity(_ rgb: SIMD3<Float>) -> Float {
        let luma = (rgb * SIMD3(0.2126, 0.7152, 0.0722)).sum()
        let level = inverted ? 1 - luma : luma
        guard softness > 0.0001 else { return level < threshold ? 1 : 0 }
        return min(max((threshold - level) / softness + 0.5, 0), 1)
    }

    func apply(to pixels: BGRAPixels) { pixels.fade(by: opacity) }
}

/// `chromaKey`: pixels whose chroma (Cb, Cr in BT.709, −½…½) lies within `similarity` of
/// the key colour's become transparent, fading back to opaque over `blend`; the distance is
/// ffmpeg chromakey's, √((ΔCb² + ΔCr²) / 2). On premultiplied BGRA, in place.
struct ChromaKey {
    let key: SIMD2<Float>
    let similarity: Float
    let blend: Float

    init(_ filter: Filter) {
        let color = filter.color
        key = ChromaKey.chroma(SIMD3(Float(color.red), Float(color.green), Float(color.blue)))
        similarity = Float(filter.number("similarity"))
        blend = Float(filter.number("blend"))
    }

    /// (Cb, Cr) of an R'G'B' colour, BT.709.
    @inline(__always)
    static func chroma(_ rgb: SIMD3<Float>) -> SIMD2<Float> {
        let luma = (rgb * SIMD3(0.2126, 0.7152, 0.0722)).sum()
        return SIMD2((rgb.z - luma) / 1.8556, (rgb.x - luma) / 1.5748)
    }

    /// How opaque a colour stays (0…1).
    @inline(__always)
    func opacity(_ rgb: SIMD3<Float>) -> Float {
        let d = ChromaKey.chroma(rgb) - key
        let distance = ((d * d).sum() / 2).squareRoot()
        guard blend > 0.0001 else { return distance > similarity ? 1 : 0 }
        return min(max((distance - similarity) / blend, 0), 1)
    }

    func apply(to pixels: BGRAPixels) { pixels.fade(by: opacity) }
}

extension BGRAPixels {
    /// Fades each pixel to the opacity `kept` gives its colour (R'G'B' 0…1); premultiplied,
    /// so colour and alpha fade together.
    func fade(by kept: (SIMD3<Float>) -> Float) {
        forEachColor { _, _, rgb, _, p in
            let opacity = kept(rgb)
            guard opacity < 1 else { return }
            for channel in 0..<4 { p[channel] = UInt8(Float(p[channel]) * opacity + 0.5) }
        }
    }
}
