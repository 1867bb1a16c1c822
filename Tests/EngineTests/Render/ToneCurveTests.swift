import Testing
@testable import MoonreelEngine
@testable import MoonreelMedia

/// The HDR → SDR tone curve alone: its pieces, their joins, and the pixel loop that applies it.
@Suite struct ToneCurveTests {
    let curve = ToneCurve()

    @Test func midTonesPassUnchanged() {
        for light in stride(from: 0.0, through: ToneCurve.knee, by: 0.01) { #expect(curve(light) == light) }
    }

    @Test func referenceWhiteAndPeakLandWhereDocumented() {
        #expect(abs(curve(1) - ToneCurve.referenceWhiteLevel) < 1e-9)
        #expect(abs(curve(ToneCurve.peak * (1 - 1e-12)) - 1) < 1e-9)
        #expect(curve(ToneCurve.peak) == 1 && curve(40) == 1)
    }

    /// Strictly increasing up to the peak and smooth at both joins: no step, no kink, so no
    /// band or contour where a gradient crosses the knee or reference white.
    @Test func risesSmoothlyToThePeak() {
        var previous = curve(0)
        for light in stride(from: 0.001, to: ToneCurve.peak, by: 0.001) {
            let value = curve(light)
            #expect(value > previous, "not rising at \(light)")
            previous = value
        }
        func slopes(at light: Double) -> (below: Double, above: Double) {
            let h = 1e-6
            return ((curve(light) - curve(light - h)) / h, (curve(light + h) - curve(light)) / h)
        }
        for join in [ToneCurve.knee, 1] {
            let (below, above) = slopes(at: join)
            #expect(abs(below - above) < 1e-3 * below, "slope \(below) below \(join), \(above) above")
        }
    }

    @Test func gainTableFollowsTheCurve() {
        let gains = ToneCurve.gains
        for index in stride(from: 0, to: ToneCurve.gainCount - 1, by: 7) {
            // Halfway between two entries, where linear interpolation strays most.
            let step = (ToneCurve.peak - ToneCurve.knee) / Double(ToneCurve.gainCount - 1)
            let light = ToneCurve.knee + step * (Double(index) + 0.5)
            let interpolated = Double(gains[index] + gains[index + 1]) / 2
            #expect(abs(interpolated * light - curve(light)) < 1e-5, "at \(light)")
        }
    }

    /// One frame through the pixel loop: below the knee untouched, above it scaled by the
    /// gain of max(R, G, B) so the colour's ratios stay, beyond the peak brought to SDR white.
    @Test func pixelsKeepTheirHue() throws {
        let frame = try Frame(width: 4, height: 1, format: ToneCurve.pixelFormat)
        let pixels: [(r: Float, g: Float, b: Float)] = [(0.5, 0.2, 0.7), (2, 1, 0.5), (0.1, 3, 0.3), (20, 10, 5)]
        func plane(_ index: Int) -> UnsafeMutablePointer<Float> {
            UnsafeMutableRawPointer(frame.plane(index).0).assumingMemoryBound(to: Float.self)
        }
        let (green, blue, red) = (plane(0), plane(1), plane(2))
        for (x, pixel) in pixels.enumerated() { (red[x], green[x], blue[x]) = (pixel.r, pixel.g, pixel.b) }
        ToneCurve.apply(toLinear: frame)
        for (x, pixel) in pixels.enumerated() {
            let brightest = Double(max(pixel.r, pixel.g, pixel.b))
            let gain = curve(brightest) / brightest
            for (out, original) in [(red[x], pixel.r), (green[x], pixel.g), (blue[x], pixel.b)] {
                #expect(abs(Double(out) - Double(original) * gain) < 1e-5, "pixel \(x): \(out) for \(original)")
            }
        }
        #expect(red[3] == 1 && green[3] == 0.5 && blue[3] == 0.25)
    }
}
