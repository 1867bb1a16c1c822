import MoonreelMedia

/// The two filters that change with every frame: `grain` (film grain) and `glitch` (channel
/// split and offset bands). Each is a pure function of the picture, the filter's settings and
/// the time it is drawn at (`Filter.clock`, set by whoever takes the filters at a time), so
/// a seed and a time always give the same pixels: exports are reproducible, and two frames
/// differ.

/// Counter-based random numbers: SplitMix64's finaliser (Steele, Lea and Flood, "Fast
/// splittable pseudorandom number generators", 2014) over a key, so any cell of any frame
/// is drawn directly, in any order, on any thread, with no state carried between frames.
enum FilterNoise {
    @inline(__always)
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15     // the golden ratio in 64 bits: SplitMix64's increment
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The key of (seed, step): a different stream for every seed and every step of time.
    static func key(seed: Double, step: Int64) -> UInt64 {
        mix(UInt64(seed.isFinite ? min(max(seed, 0), 4_294_967_295) : 0) &+ mix(UInt64(bitPattern: step)))
    }

    /// A uniform number in 0..<1 from a key (53 bits, a Double's precision).
    @inline(__always)
    static func unit(_ key: UInt64) -> Double { Double(mix(key) >> 11) / 9_007_199_254_740_992 }

    /// Microseconds: the step of time a frame at `seconds` draws with. Frames are at least
    /// 1 ms apart at any real rate, so each gets its own step, and the same time always the same.
    static func microseconds(_ seconds: Double) -> Int64 {
        guard seconds.isFinite else { return 0 }
        return Int64(min(max(seconds * 1_000_000, -9e15), 9e15).rounded())
    }
}

/// `grain`: luma noise like film grain, `amount` strong and `size` render-size pixels across,
/// a new pattern every frame. Each cell of a grid `size` apart gets a number of mean 0 and
/// standard deviation 1 (the sum of four uniform bytes, Irwin–Hall, near Gaussian);
/// pixels between cell centres take the bilinear mix of the four nearest, divided by the
/// mix's own standard deviation so the grain is as strong between centres as on them.
/// Y' += amount · 0.12 · that (0.12 of the luma range at amount 1: a heavy, 16 mm look);
/// the colour (chroma) is left as it is. The noise has mean 0, so the picture's mean
/// brightness stays where it was except where it clips at black or white.
struct Grain {
    /// The standard deviation of the added luma at amount 1, as a fraction of black to white.
    static let deviationAtFullAmount: Float = 0.12
    let deviation: Float
    /// Grid spacing in the picture's pixels (at least 1: no grain finer than a pixel).
    let cell: Double
    let key: UInt64

    init(_ filter: Filter, pixelScale: Double) {
        deviation = Float(filter.number("amount")) * Grain.deviationAtFullAmount
        cell = max(filter.number("size") * pixelScale, 1)
        key = FilterNoise.key(seed: filter.number("seed"), step: FilterNoise.microseconds(filter.clock))
    }

    /// One cell's number: mean 0, standard deviation 1.
    @inline(__always)
    func cellValue(_ column: Int, _ row: Int) -> Float {
        let bits = FilterNoise.mix(key ^ (UInt64(UInt32(truncatingIfNeeded: row)) << 32 | UInt64(UInt32(truncatingIfNeeded: column))))
        // Four bytes: each uniform on 0…255 (mean 127.5, variance (256² − 1) / 12), so their
        // sum has mean 510 and standard deviation √(4 · 5461.25) = 147.80.
        let sum = (bits & 0xFF) + (bits >> 8 & 0xFF) + (bits >> 16 & 0xFF) + (bits >> 24 & 0xFF)
        return (Float(sum) - 510) / 147.80
    }

    /// The noise of every pixel of a `width`×`height` picture, row by row (mean 0, standard
    /// deviation `deviation`), worked out in bands of rows at once on a large picture.
    func field(width: Int, height: Int) -> [Float] {
        // Grid coordinate of each pixel centre along one axis: the cell before it, the weight
        // of the cell after it, and 1 / the standard deviation that mix leaves along it.
        func axis(_ count: Int) -> (first: [Int], weight: [Float], gain: [Float]) {
            var first = [Int](repeating: 0, count: count), weight = [Float](repeating: 0, count: count)
            var gain = [Float](repeating: 1, count: count)
            for i in 0..<count {
                let u = (Double(i) + 0.5) / cell - 0.5
                let below = u.rounded(.down)
                first[i] = Int(below)
                let w = Float(u - below)
                weight[i] = w
                gain[i] = 1 / (w * w + (1 - w) * (1 - w)).squareRoot()
            }
            return (first, weight, gain)
        }
        let (xs, ys) = (axis(width), axis(height))
        // The cells the picture touches: from −1 (a pixel before the first centre) on.
        let columns = (xs.first.last ?? 0) + 3, rows = (ys.first.last ?? 0) + 3
        var cells = [Float](repeating: 0, count: columns * rows)
        cells.withUnsafeMutableBufferPointer { cells in
            RowBands.run(rows: rows, pixels: columns * rows) { band in
                for row in band { for column in 0..<columns { cells[row * columns + column] = cellValue(column - 1, row - 1) } }
            }
        }
        var noise = [Float](repeating: 0, count: width * height)
        noise.withUnsafeMutableBufferPointer { noise in
            RowBands.run(rows: height, pixels: width * height) { band in
                for y in band {
                    let (r, wy) = (ys.first[y] + 1, ys.weight[y])
                    let gainY = ys.gain[y] * deviation
                    for x in 0..<width {
                        let (c, wx) = (xs.first[x] + 1, xs.weight[x])
                        let top = cells[r * columns + c] * (1 - wx) + cells[r * columns + c + 1] * wx
                        let bottom = cells[(r + 1) * columns + c] * (1 - wx) + cells[(r + 1) * columns + c + 1] * wx
                        noise[y * width + x] = (top * (1 - wy) + bottom * wy) * xs.gain[x] * gainY
                    }
                }
            }
        }
        return noise
    }

    /// A 4:2:0 picture, in place: luma only.
    func apply(to image: PlanarYUVImage) {
        if image.dynamicRange.isHDR { apply(to: image, UInt16.self) } else { apply(to: image, UInt8.self) }
    }

    private func apply<Sample: FixedWidthInteger & UnsignedInteger>(to image: PlanarYUVImage, _: Sample.Type) {
        let coding = YUVCoding(image)
        let lumaOf = coding.lumaTable
        let noise = field(width: image.width, height: image.height)
        RowBands.run(rows: image.height, pixels: image.width * image.height) { band in
            for y in band {
                let row = UnsafeMutableRawPointer(image.luma + y * image.lumaStride).assumingMemoryBound(to: Sample.self)
                for x in 0..<image.width { row[x] = Sample(coding.lumaCode(lumaOf[Int(row[x])] + noise[y * image.width + x])) }
            }
        }
    }

    /// Premultiplied BGRA, in place: the same amount added to R', G' and B' (a change of luma
    /// alone), alpha kept.
    func apply(to pixels: BGRAPixels) {
        let noise = field(width: pixels.width, height: pixels.height)
        pixels.forEachColor { x, y, rgb, alpha, p in
            storePremultiplied(rgb + SIMD3(repeating: noise[y * pixels.width + x]), alpha: alpha, at: p)
        }
    }
}

/// `glitch`: during strikes (`rate` a second at seeded times, each `burst` seconds long; rate
/// 0: always), the red channel moves `shift` render-size pixels right and blue as far left
/// (times `intensity`), and `bands` horizontal bands of rows slide sideways by up to
/// `bandOffset` pixels (times `intensity`), wrapping round; the bands change 12 times a second
/// (about every second frame at 24–30 fps: the stutter of a stream losing packets).
/// Pixels beyond the picture's edge repeat the edge for the channel split.
struct Glitch {
    /// How many new band patterns a strike shows a second.
    static let patternsPerSecond = 12.0
    /// A band's height, as a fraction of the picture's: from a thin tear to a chunk.
    static let bandHeights = (1.0 / 60)...(1.0 / 10)

    /// Picture pixels red moves right (blue moves as far left).
    let channelShift: Int
    /// Each row's sideways shift in picture pixels (empty: none).
    let rowOffsets: [Int]

    /// The glitch of `filter` on a `width`×`height` picture; nil when it changes nothing then.
    init?(_ filter: Filter, width: Int, height: Int, pixelScale: Double) {
        let intensity = filter.number("intensity")
        let seed = filter.number("seed"), time = filter.clock
        guard intensity > 0, width > 0, height > 0, Glitch.isStriking(at: time, rate: filter.number("rate"), burst: filter.number("burst"), seed: seed) else {
            return nil
        }
        // Clamped in Double first: a picture is never shifted further than it is wide.
        channelShift = Int(min(max(filter.number("shift") * intensity * pixelScale, 0), Double(width)).rounded())
        let bandCount = Int(filter.number("bands").rounded())
        let reach = min(max(filter.number("bandOffset") * intensity * pixelScale, 0), Double(width))
        var offsets: [Int] = []
        if bandCount > 0, reach >= 0.5 {
            offsets = [Int](repeating: 0, count: height)
            let key = FilterNoise.key(seed: seed, step: Int64((time * Glitch.patternsPerSecond).rounded(.down)))
            for band in 0..<bandCount {
                let draw = { (field: UInt64) in FilterNoise.unit(key ^ (UInt64(band) << 8 | field)) }
                let bandHeight = max(1, Int((Double(height) * (Glitch.bandHeights.lowerBound
                    + draw(1) * (Glitch.bandHeights.upperBound - Glitch.bandHeights.lowerBound))).rounded()))
                let top = Int(draw(2) * Double(height))
                let offset = Int(((draw(3) * 2 - 1) * reach).rounded()) % width
                for y in top..<min(top + bandHeight, height) { offsets[y] = offset }
            }
        }
        guard channelShift != 0 || offsets.contains(where: { $0 != 0 }) else { return nil }
        rowOffsets = offsets
    }

    /// Whether a strike is on at `time`: time is cut in slots of 1 / rate seconds, and each
    /// slot has one strike `burst` long starting at a seeded moment inside it.
    static func isStriking(at time: Double, rate: Double, burst: Double, seed: Double) -> Bool {
        guard rate > 0 else { return true }
        let slot = 1 / rate
        guard burst < slot, time.isFinite else { return true }
        let index = (time / slot).rounded(.down)
        let start = FilterNoise.unit(FilterNoise.key(seed: seed, step: Int64(max(min(index, 9e15), -9e15)))) * (slot - burst)
        let into = time - index * slot
        return into >= start && into < start + burst
    }

    /// Where output pixel x of a row reads each channel from: (red, green, blue) source x.
    @inline(__always)
    func sources(_ x: Int, row offset: Int, width: Int) -> (Int, Int, Int) {
        // The row's band shift wraps round; the channel split repeats the edge.
        var shifted = (x - offset) % width
        if shifted < 0 { shifted += width }
        return (max(shifted - channelShift, 0), shifted, min(shifted + channelShift, width - 1))
    }

    /// Premultiplied BGRA, in place. A pixel's alpha becomes the largest of the three it
    /// reads colour from, so a split edge of a drawing shows its fringes.
    func apply(to pixels: BGRAPixels) {
        var source = [UInt8](repeating: 0, count: pixels.width * 4)
        for y in 0..<pixels.height {
            let row = pixels.base + y * pixels.stride
            for i in 0..<source.count { source[i] = row[i] }
            let offset = rowOffsets.isEmpty ? 0 : rowOffsets[y]
            for x in 0..<pixels.width {
                let (r, g, b) = sources(x, row: offset, width: pixels.width)
                let p = row + 4 * x
                (p[0], p[1], p[2]) = (source[4 * b], source[4 * g + 1], source[4 * r + 2])
                p[3] = max(source[4 * r + 3], source[4 * g + 3], source[4 * b + 3])
            }
        }
    }

    /// A 4:2:0 picture, in place: each pair of rows goes to R'G'B' (a block's chroma shared by
    /// its four pixels), the channels are moved, and each pixel's luma and each block's
    /// average chroma are written back.
    func apply(to image: PlanarYUVImage) {
        if image.dynamicRange.isHDR { apply(to: image, UInt16.self) } else { apply(to: image, UInt8.self) }
    }

    private func apply<Sample: FixedWidthInteger & UnsignedInteger>(to image: PlanarYUVImage, _: Sample.Type) {
        let coding = YUVCoding(image)
        let (lumaOf, chromaOf) = (coding.lumaTable, coding.chromaTable)
        let width = image.width
        // Each band of row pairs at once on a large picture, with scratch rows of its own.
        RowBands.run(rows: image.chromaHeight, pixels: width * image.height) { band in
            var rgb = [SIMD3<Float>](repeating: .zero, count: 2 * width)
            var out = [SIMD3<Float>](repeating: .zero, count: 2 * width)
            for cy in band {
                let cbRow = UnsafeMutableRawPointer(image.cb + cy * image.cbStride).assumingMemoryBound(to: Sample.self)
                let crRow = UnsafeMutableRawPointer(image.cr + cy * image.crStride).assumingMemoryBound(to: Sample.self)
                let rows = 2 * cy + 1 < image.height ? 2 : 1
                let lumaRows = (0..<rows).map { UnsafeMutableRawPointer(image.luma + (2 * cy + $0) * image.lumaStride).assumingMemoryBound(to: Sample.self) }
                for (r, luma) in lumaRows.enumerated() {
                    for x in 0..<width {
                        rgb[r * width + x] = SIMD3(repeating: lumaOf[Int(luma[x])])
                            + coding.rgbOffset(cb: chromaOf[Int(cbRow[x / 2])], cr: chromaOf[Int(crRow[x / 2])])
                    }
                    let offset = rowOffsets.isEmpty ? 0 : rowOffsets[2 * cy + r]
                    for x in 0..<width {
                        let (sr, sg, sb) = sources(x, row: offset, width: width)
                        let value = SIMD3(rgb[r * width + sr].x, rgb[r * width + sg].y, rgb[r * width + sb].z)
                        out[r * width + x] = value
                        luma[x] = Sample(coding.lumaCode(coding.luma(of: value)))
                    }
                }
                for cx in 0..<image.chromaWidth {
                    var sum = SIMD2<Float>.zero, count: Float = 0
                    for r in 0..<rows {
                        for x in 2 * cx..<min(2 * cx + 2, width) {
                            let value = out[r * width + x]
                            let outLuma = coding.luma(of: value)
                            sum += SIMD2(value.z - outLuma, value.x - outLuma)
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
