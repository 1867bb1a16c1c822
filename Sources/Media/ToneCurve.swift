import CMoonFFmpeg

/// The HDR → SDR tone curve (docs/color-and-hdr.md), a pure function of light in units of
/// BT.2408 reference white (1 = 203 cd/m², where SDR white is placed in HDR) that returns
/// SDR light (1 = SDR white). Three pieces, the last two drawn in PQ (ST 2084) values, whose
/// equal steps are equal steps of seen brightness:
///
/// 1. identity up to the knee, 0.8 of reference white: SDR content placed in HDR by
///    BT.2408 comes back as it was;
/// 2. from the knee to reference white, a cubic Hermite spline (as BT.2390's EETF) that
///    leaves the identity with its slope and lands reference white at 0.91 of SDR white;
/// 3. from reference white to 1000 cd/m² (the HLG display's peak), a straight line in PQ
///    that ends at SDR white: every step of highlight brightness keeps a share of the SDR
///    codes, so skies keep their gradation where a clip or a Möbius curve flattens them.
///
/// Light above 1000 cd/m² is SDR white.
struct ToneCurve {
    /// Where the identity ends (162 cd/m², 8-bit luma code 216).
    static let knee = 0.8
    /// Where reference white lands (luma code 227): the highest level at which each step of
    /// 1/32 of the HLG signal above reference white still moves the 8-bit luma by a code.
    static let referenceWhiteLevel = 0.91
    /// The brightest light still told apart from the one below: 1000 cd/m² (the HLG display's
    /// peak), 4.93 × reference white.
    static let peak = 1000 / HDRSignal.referenceWhite

    /// PQ values of the knee, of reference white and of where reference white lands.
    private let kneeSignal, whiteSignal, landedWhiteSignal: Double
    /// The highlight line's slope, in PQ per PQ: it reaches SDR white at the peak.
    private let highlightSlope: Double

    init() {
        (kneeSignal, whiteSignal, landedWhiteSignal) = (Self.pq(Self.knee), Self.pq(1), Self.pq(Self.referenceWhiteLevel))
        highlightSlope = (whiteSignal - landedWhiteSignal) / (Self.pq(Self.peak) - whiteSignal)
    }

    func callAsFunction(_ light: Double) -> Double {
        guard light > Self.knee else { return light }
        guard light < Self.peak else { return 1 }
        let signal = Self.pq(light)
        if signal >= whiteSignal { return Self.light(pq: landedWhiteSignal + highlightSlope * (signal - whiteSignal)) }
        let span = whiteSignal - kneeSignal, t = (signal - kneeSignal) / span
        let (t2, t3) = (t * t, t * t * t)
        let mapped = (2 * t3 - 3 * t2 + 1) * kneeSignal + (t3 - 2 * t2 + t) * span
            + (3 * t2 - 2 * t3) * landedWhiteSignal + (t3 - t2) * span * highlightSlope
        return Self.light(pq: mapped)
    }

    private static func pq(_ light: Double) -> Double { HDRSignal.pqEncode(light * HDRSignal.referenceWhite) }
    private static func light(pq signal: Double) -> Double { HDRSignal.pqDecode(signal) / HDRSignal.referenceWhite }

    /// What the curve is applied to: 32-bit float planar G, B, R.
    static let pixelFormat = AV_PIX_FMT_GBRPF32LE
    static let gainCount = 1024
    /// Gains `curve(m) / m` for `m` from the knee to the peak in equal steps, read with linear
    /// interpolation in the pixel loop (within 1e-5 of the curve: it is smooth there).
    static let gains: [Float] = {
        let curve = ToneCurve()
        return (0..<gainCount).map { i in
            let light = knee + (peak - knee) * Double(i) / Double(gainCount - 1)
            return Float(curve(light) / light)
        }
    }()

    /// Applies the curve to a linear-light BT.709 picture (`gbrpf32le`, 1 = reference white)
    /// in place: each pixel is scaled by the curve's gain for its max(R, G, B), so hue and
    /// saturation stay as they were (a curve per channel would bleach bright colours).
    static func apply(toLinear frame: Frame) {
        precondition(frame.pixelFormat == pixelFormat, "the tone curve works on linear gbrpf32le")
        let (green, greenStride) = frame.plane(0), (blue, blueStride) = frame.plane(1), (red, redStride) = frame.plane(2)
        let width = frame.width
        let (knee, peak) = (Float(Self.knee), Float(Self.peak))
        let stepsPerLight = Float(gainCount - 1) / (peak - knee)
        gains.withUnsafeBufferPointer { gains in
            RowBands.run(rows: frame.height, pixels: width * frame.height) { band in
                for y in band {
                    let g = UnsafeMutableRawPointer(green + y * greenStride).assumingMemoryBound(to: Float.self)
                    let b = UnsafeMutableRawPointer(blue + y * blueStride).assumingMemoryBound(to: Float.self)
                    let r = UnsafeMutableRawPointer(red + y * redStride).assumingMemoryBound(to: Float.self)
                    for x in 0..<width {
                        let brightest = max(max(r[x], g[x]), b[x])
                        // Below the knee the curve is the identity: nothing to write.
                        guard brightest > knee else { continue }
                        let gain: Float
                        if brightest >= peak {
                            gain = 1 / brightest
                        } else {
                            let position = (brightest - knee) * stepsPerLight
                            let i = min(Int(position), gainCount - 2)
                            let fraction = position - Float(i)
                            gain = gains[i] + (gains[i + 1] - gains[i]) * fraction
                        }
                        r[x] *= gain
                        g[x] *= gain
                        b[x] *= gain
                    }
                }
            }
        }
    }
}
