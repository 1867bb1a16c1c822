#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import MoonreelMedia

/// The pointwise colour filters (colorControls, exposureAdjust, whitePointAdjust, colorCube) as functions of
/// non-linear R'G'B' in 0…1, and how they reach pixels. A run of them becomes one colour
/// cube, applied in one pass: on Y'CbCr planes each pixel goes to R'G'B', through the cube
/// and straight back (no converted copy of the frame); on premultiplied BGRA the colour is
/// unpremultiplied around the lookup. A run of colorControls alone skips the cube: its maths
/// is affine in R'G'B', hence a curve per Y'CbCr plane.
enum ColorFilters {
    /// Grid points a side of a cube sampled from filters (interpolation error well under a
    /// code value for the smooth curves here).
    static let sampledCubeSize = 33

    /// The one cube a run of pointwise colour filters makes: a lone LUT as it is, anything
    /// else the filters' functions, one after the other, sampled.
    static func cube(for run: [Filter]) -> ColorCube {
        if run.count == 1, let only = run.first?.cube { return only }
        let transforms = run.map(transform)
        return ColorCube(size: sampledCubeSize, description: run.map(\.kind.rawValue).joined(separator: ", ")) { rgb in
            transforms.reduce(rgb) { value, transform in transform(value) }
        }
    }

    /// One pointwise filter as a function of R'G'B' in 0…1 (results clamped to 0…1).
    static func transform(_ filter: Filter) -> (SIMD3<Float>) -> SIMD3<Float> {
        switch filter.kind {
        case .colorControls:
            let saturation = Float(filter.number("saturation")), brightness = Float(filter.number("brightness"))
            let contrast = Float(filter.number("contrast"))
            return { rgb in
                // Core Image's luma weights (Rec. 709).
                let luma = (rgb * SIMD3(0.2126, 0.7152, 0.0722)).sum()
                let saturated = SIMD3(repeating: luma) + (rgb - SIMD3(repeating: luma)) * saturation
                return ((saturated + SIMD3(repeating: brightness) - 0.5) * contrast + 0.5).clamped(lowerBound: .zero, upperBound: .one)
            }
        case .exposureAdjust:
            let gain = Float(pow(2, filter.number("ev")))
            return { rgb in
                SIMD3(encodeSRGB(decodeSRGB(rgb.x) * gain), encodeSRGB(decodeSRGB(rgb.y) * gain), encodeSRGB(decodeSRGB(rgb.z) * gain))
            }
        case .whitePointAdjust:
            let white = filter.color
            let gain = SIMD3(decodeSRGB(Float(white.red)), decodeSRGB(Float(white.green)), decodeSRGB(Float(white.blue)))
            return { rgb in
                SIMD3(encodeSRGB(decodeSRGB(rgb.x) * gain.x), encodeSRGB(decodeSRGB(rgb.y) * gain.y), encodeSRGB(decodeSRGB(rgb.z) * gain.z))
            }
        case .colorCube:
            guard let cube = filter.cube else { return { $0 } }
            return { cube.lookup($0).clamped(lowerBound: .zero, upperBound: .one) }
        case .gaussianBlur, .sharpenLuminance, .vignette, .chromaKey, .lumaThreshold, .grain, .glitch:
            return { $0 }
        }
    }

    /// colorControls on the planes themselves: Y' = (Y' + brightness − ½) · contrast + ½ and
    /// C = C · saturation · contrast, exactly the R'G'B' maths (saturation mixes with luma,
    /// which leaves luma as it is), in one table look-up per sample.
    static func applyColorControls(_ filter: Filter, to image: PlanarYUVImage) {
        let coding = YUVCoding(image)
        let saturation = Float(filter.number("saturation")), brightness = Float(filter.number("brightness"))
        let contrast = Float(filter.number("contrast"))
        let luma = (0...Int(coding.maximum)).map { code in
            coding.lumaCode(((coding.luma(Float(code)) + brightness) - 0.5) * contrast + 0.5)
        }
        let chroma = (0...Int(coding.maximum)).map { code in coding.chromaCode(coding.chroma(Float(code)) * saturation * contrast) }
        if image.dynamicRange.isHDR {
            mapPlanes(image, UInt16.self, luma: luma.map(UInt16.init), chroma: chroma.map(UInt16.init))
        } else {
            mapPlanes(image, UInt8.self, luma: luma.map(UInt8.init), chroma: chroma.map(UInt8.init))
        }
    }

    private static func mapPlanes<Sample: FixedWidthInteger & UnsignedInteger>(_ image: PlanarYUVImage, _: Sample.Type,
                                                                                 luma: [Sample], chroma: [Sample]) {
        for (plane, stride, width, height, table) in [(image.luma, image.lumaStride, image.width, image.height, luma),
                                                      (image.cb, image.cbStride, image.chromaWidth, image.chromaHeight, chroma),
                                                      (image.cr, image.crStride, image.chromaWidth, image.chromaHeight, chroma)] {
            table.withUnsafeBufferPointer { table in
                for y in 0..<height {
                    let row = UnsafeMutableRawPointer(plane + y * stride).assumingMemoryBound(to: Sample.self)
                    for x in 0..<width { row[x] = table[Int(row[x])] }
                }
            }
        }
    }
}

extension ColorCube {
    /// Maps a 4:2:0 picture through the cube, in place. Each 2×2 block shares its chroma:
    /// its four pixels go through the cube one by one (each keeps its own luma) and the
    /// block's chroma becomes the average of theirs.
    func apply(to image: PlanarYUVImage) {
        if image.dynamicRange.isHDR { apply(to: image, UInt16.self) } else { apply(to: image, UInt8.self) }
    }

    private func apply<Sample: FixedWidthInteger & UnsignedInteger>(to image: PlanarYUVImage, _: Sample.Type) {
        let coding = YUVCoding(image)
        let (lumaOf, chromaOf) = (coding.lumaTable, coding.chromaTable)
        withSampler { sample in
            RowBands.run(rows: image.chromaHeight, pixels: image.width * image.height) { band in
                for cy in band {
                    let cbRow = UnsafeMutableRawPointer(image.cb + cy * image.cbStride).assumingMemoryBound(to: Sample.self)
                    let crRow = UnsafeMutableRawPointer(image.cr + cy * image.crStride).assumingMemoryBound(to: Sample.self)
                    let top = UnsafeMutableRawPointer(image.luma + 2 * cy * image.lumaStride).assumingMemoryBound(to: Sample.self)
                    // An odd last row has no second luma row.
                    let rows = 2 * cy + 1 < image.height ? 2 : 1
                    let bottom = UnsafeMutableRawPointer(image.luma + (2 * cy + rows - 1) * image.lumaStride).assumingMemoryBound(to: Sample.self)
                    for cx in 0..<image.chromaWidth {
                        // R'G'B' = Y' + this, for every pixel of the block.
                        let offset = coding.rgbOffset(cb: chromaOf[Int(cbRow[cx])], cr: chromaOf[Int(crRow[cx])])
                        var sum = SIMD2<Float>.zero, count: Float = 0
                        // Plain loops, no helper function: a closure here kept boxes alive per block.
                        for rowIndex in 0..<rows {
                            let row = rowIndex == 0 ? top : bottom
                            for x in 2 * cx..<min(2 * cx + 2, image.width) {
                                let out = sample(SIMD3(repeating: lumaOf[Int(row[x])]) + offset)
                                let outLuma = coding.luma(of: out)
                                row[x] = Sample(coding.lumaCode(outLuma))
                                sum += SIMD2(out.z - outLuma, out.x - outLuma)
                                count += 1
                            }
                        }
                        let codes = coding.chromaCodes(differences: sum, count: count)
                        (cbRow[cx], crRow[cx]) = (Sample(codes.cb), Sample(codes.cr))
                    }
                }
            }
        }
    }

    /// Maps premultiplied BGRA through the cube, in place (colour unpremultiplied around the
    /// lookup; alpha kept).
    func apply(to pixels: BGRAPixels) {
        withSampler { sample in
            pixels.forEachColor { _, _, rgb, alpha, p in storePremultiplied(sample(rgb), alpha: alpha, at: p) }
        }
    }
}

extension BGRAPixels {
    /// Calls `body` for each pixel that is not fully transparent with its position, its
    /// colour unpremultiplied (0…1), its alpha (0…255) and its bytes (B, G, R, A).
    @inline(__always)
    func forEachColor(_ body: (_ x: Int, _ y: Int, _ rgb: SIMD3<Float>, _ alpha: Float, _ pixel: UnsafeMutablePointer<UInt8>) -> Void) {
        for y in 0..<height {
            let row = base + y * stride
            for x in 0..<width {
                let p = row + 4 * x
                let alpha = Float(p[3])
                guard alpha > 0 else { continue }
                body(x, y, SIMD3(Float(p[2]), Float(p[1]), Float(p[0])) / alpha, alpha, p)
            }
        }
    }
}

/// Writes a colour (0…1) times alpha (0…255) as premultiplied BGR bytes.
@inline(__always)
func storePremultiplied(_ rgb: SIMD3<Float>, alpha: Float, at p: UnsafeMutablePointer<UInt8>) {
    // Scalar clamps (SIMD clamping is a call), then + ½ and truncation: rounding, as the
    // values are ≥ 0, without a call to roundf.
    @inline(__always) func byte(_ value: Float) -> UInt8 { UInt8(min(max(value * alpha, 0), alpha) + 0.5) }
    (p[0], p[1], p[2]) = (byte(rgb.z), byte(rgb.y), byte(rgb.x))
}

/// How a 4:2:0 picture's code values stand for Y' (0…1) and Cb, Cr (−½…½), and back
/// (rounded, clamped to the code range).
struct YUVCoding {
    let black: Float, lumaScale: Float, chromaMiddle: Float, chromaScale: Float, maximum: Float
    let kr: Float, kg: Float, kb: Float

    init(_ image: PlanarYUVImage) {
        let depth: Float = image.dynamicRange.isHDR ? 4 : 1
        (black, lumaScale, chromaScale) = image.range == .limited ? (16 * depth, 219 * depth, 224 * depth) : (0, 255 * depth, 255 * depth)
        chromaMiddle = 128 * depth
        maximum = image.dynamicRange.isHDR ? 1023 : 255
        let weights = image.matrix.weights
        (kr, kb) = (Float(weights.red), Float(weights.blue))
        kg = 1 - kr - kb
    }

    /// Code value → Y', and → chroma: looked up once per code instead of worked out per sample.
    var lumaTable: [Float] { (0...Int(maximum)).map { luma(Float($0)) } }
    var chromaTable: [Float] { (0...Int(maximum)).map { chroma(Float($0)) } }

    /// What R'G'B' adds to Y' for chroma (Cb, Cr): the same for every pixel of a 2×2 block.
    @inline(__always) func rgbOffset(cb: Float, cr: Float) -> SIMD3<Float> {
        let red = 2 * (1 - kr) * cr, blue = 2 * (1 - kb) * cb
        return SIMD3(red, -(kr * red + kb * blue) / kg, blue)
    }

    /// Y' of an R'G'B' colour.
    @inline(__always) func luma(of rgb: SIMD3<Float>) -> Float { kr * rgb.x + kg * rgb.y + kb * rgb.z }

    /// Cb and Cr code values of the average of (B' − Y', R' − Y') differences summed `count` times.
    @inline(__always) func chromaCodes(differences sum: SIMD2<Float>, count: Float) -> (cb: Int, cr: Int) {
        (chromaCode(sum.x / count / (2 * (1 - kb))), chromaCode(sum.y / count / (2 * (1 - kr))))
    }

    @inline(__always) func luma(_ code: Float) -> Float { (code - black) / lumaScale }
    @inline(__always) func chroma(_ code: Float) -> Float { (code - chromaMiddle) / chromaScale }
    @inline(__always) func lumaCode(_ value: Float) -> Int { clampedCode(black + value * lumaScale) }
    @inline(__always) func chromaCode(_ value: Float) -> Int { clampedCode(chromaMiddle + value * chromaScale) }
    @inline(__always) private func clampedCode(_ value: Float) -> Int {
        // + ½ then truncation rounds (the value is ≥ 0) without a call to roundf, in the hot loops.
        Int(min(max(value, 0), maximum) + 0.5)
    }
}

/// The sRGB transfer curve (what Core Image linearises with): signal 0…1 ↔ linear light.
@inline(__always)
func decodeSRGB(_ v: Float) -> Float { v <= 0.04045 ? v / 12.92 : powf((v + 0.055) / 1.055, 2.4) }

@inline(__always)
func encodeSRGB(_ l: Float) -> Float {
    let clamped = min(max(l, 0), 1)
    return clamped <= 0.0031308 ? clamped * 12.92 : 1.055 * powf(clamped, 1 / 2.4) - 0.055
}
