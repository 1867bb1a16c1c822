// FFmpeg's headers are in CMoonAVShim's module too, and Clang may list an enum under
// either: import both so its constants are always visible here.
import CMoonAVShim
import CMoonFFmpeg
import Testing
@testable import MoonreelEngine
@testable import MoonreelComposition
@testable import MoonreelMedia

/// The filters that change with every frame, on planes and on BGRA without Lua or export:
/// grain's strength, mean and reproducibility; glitch's channel split, bands and strikes.
@Suite struct GrainAndGlitchTests {
    static func filter(_ kind: FilterKind, _ settings: [String: Double], at seconds: Double = 0.5) throws -> Filter {
        var made = Filter(kind)
        for (name, value) in settings { try made.set(name, .number(value)) }
        return made.drawn(at: MediaTime(value: Int64((seconds * 3000).rounded()), timescale: 3000))
    }

    static func statistics(_ samples: [UInt8]) -> (mean: Double, deviation: Double) {
        let mean = samples.reduce(0.0) { $0 + Double($1) } / Double(samples.count)
        let variance = samples.reduce(0.0) { $0 + (Double($1) - mean) * (Double($1) - mean) } / Double(samples.count)
        return (mean, variance.squareRoot())
    }

    // MARK: grain

    @Test func grainGrowsWithAmountAndKeepsTheMeanBrightness() throws {
        var deviations: [Double] = []
        for amount in [0.1, 0.3, 0.6] {
            let frame = TestYUVFrame(width: 160, height: 120, y: 126, u: 128, v: 128)
            let grain = Grain(try Self.filter(.grain, ["amount": amount, "size": 1.5]), pixelScale: 1)
            frame.withImage { grain.apply(to: $0) }
            let (mean, deviation) = Self.statistics(frame.luma)
            // Limited range: black to white is 219 codes, so σ = amount · 0.12 · 219.
            let expected = amount * 0.12 * 219
            #expect(abs(mean - 126) <= 2, "amount \(amount): mean \(mean)")
            #expect(abs(deviation - expected) < expected * 0.2, "amount \(amount): σ \(deviation), expected about \(expected)")
            #expect(frame.cb.allSatisfy { $0 == 128 } && frame.cr.allSatisfy { $0 == 128 }, "grain leaves the colour alone")
            deviations.append(deviation)
        }
        #expect(deviations == deviations.sorted() && deviations[0] < deviations[2] / 4, "\(deviations)")
    }

    @Test func grainIsNewEveryFrameAndTheSameForTheSameSeedAndTime() throws {
        func grained(seed: Double, at seconds: Double) throws -> [UInt8] {
            let frame = TestYUVFrame(width: 64, height: 48, y: 126, u: 128, v: 128)
            let grain = Grain(try Self.filter(.grain, ["amount": 0.5, "seed": seed], at: seconds), pixelScale: 1)
            frame.withImage { grain.apply(to: $0) }
            return frame.luma
        }
        let first = try grained(seed: 7, at: 1.0 / 30), second = try grained(seed: 7, at: 2.0 / 30)
        let differing = zip(first, second).filter { $0 != $1 }.count
        #expect(differing > first.count / 2, "two frames differ: \(differing) of \(first.count) pixels")
        #expect(try grained(seed: 7, at: 1.0 / 30) == first, "the same seed and time: the same pixels")
        #expect(try grained(seed: 8, at: 1.0 / 30) != first, "another seed: another pattern")
    }

    @Test func grainSizeMakesCoarserGrain() throws {
        // Neighbours correlate more when grains are larger: compare |difference| of adjacent pixels.
        func roughness(size: Double) throws -> Double {
            let frame = TestYUVFrame(width: 128, height: 64, y: 126, u: 128, v: 128)
            Grain(try Self.filter(.grain, ["amount": 0.5, "size": size]), pixelScale: 1).apply(to: frame)
            var total = 0.0
            for y in 0..<64 { for x in 0..<127 { total += abs(Double(frame.luma[y * 128 + x]) - Double(frame.luma[y * 128 + x + 1])) } }
            return total / Double(64 * 127)
        }
        let fine = try roughness(size: 1), coarse = try roughness(size: 6)
        #expect(coarse < fine / 2, "size 6 is smoother between neighbours than size 1: \(coarse) vs \(fine)")
    }

    @Test func grainAtAmountZeroChangesNothing() throws {
        let filter = try Self.filter(.grain, ["amount": 0])
        #expect(filter.isIdentity)
        let frame = TestYUVFrame(width: 32, height: 32, y: 90, u: 100, v: 160)
        Grain(filter, pixelScale: 1).apply(to: frame)
        #expect(frame.luma.allSatisfy { $0 == 90 } && frame.cb.allSatisfy { $0 == 100 } && frame.cr.allSatisfy { $0 == 160 })
        let image = try solidImage(width: 8, height: 8, red: 200, green: 100, blue: 50, alpha: 255)
        Grain(filter, pixelScale: 1).apply(to: image.view)
        #expect(image.pixel(x: 3, y: 3) == (50, 100, 200, 255))
    }

    @Test func filtersTakenAtATimeCarryItOnlyWhenTheyChangeOverTime() throws {
        let stack = FilterStack([Filter(.grain), Filter(.vignette)])
        let later = stack.filters(at: MediaTime(value: 3, timescale: 2))
        #expect(later[0].clock == 1.5 && later[1].clock == 0 && later[1] == Filter(.vignette))
        // The amount ramps like any number parameter, and the ramped filter keeps its clock.
        var ramped = FilterStack([Filter(.grain)])
        try ramped.setRamp(from: 0, to: 0.8, parameter: "amount", filter: "grain", over: TimeRange(start: .zero, duration: MediaTime(value: 2, timescale: 1)))
        let halfway = ramped.filters(at: MediaTime(value: 1, timescale: 1))[0]
        #expect(abs(halfway.number("amount") - 0.4) < 1e-9 && halfway.clock == 1)
        #expect(ramped.filters(at: .zero)[0].isIdentity, "amount 0 at the start: skipped")
    }

    @Test func aLayerWithGrainIsNeverStaticAndItsSnapshotsCarryTheirTime() throws {
        var properties = LayerProperties()
        properties.frame = Rect(x: 0, y: 0, width: 100, height: 50)
        properties.filters = [Filter(.grain)]
        let root = Layer(properties: LayerProperties())
        try root.addSublayer(Layer(properties: properties))
        let timeline = LayerTimeline(root: root)
        #expect(!timeline.isStatic(over: TimeRange(start: .zero, duration: MediaTime(value: 1, timescale: 1))))
        let (early, late) = (timeline.snapshot(at: MediaTime(value: 1, timescale: 2)), timeline.snapshot(at: MediaTime(value: 2, timescale: 3)))
        #expect(early?.sublayers.first?.filters.first?.clock == 0.5 && late?.sublayers.first?.filters.first?.clock == 2.0 / 3)
        properties.filters = [Filter(.vignette)]
        let still = Layer(properties: LayerProperties())
        try still.addSublayer(Layer(properties: properties))
        #expect(LayerTimeline(root: still).isStatic(over: TimeRange(start: .zero, duration: MediaTime(value: 1, timescale: 1))))
    }

    // MARK: glitch

    /// BGRA, black left of `edge` and white from it.
    static func edgeImage(width: Int = 64, height: Int = 32, edge: Int = 32) throws -> RGBAImage {
        let image = try solidImage(width: width, height: height, red: 0, green: 0, blue: 0, alpha: 255)
        for y in 0..<height { for x in edge..<width { let p = image.pixels + y * image.stride + 4 * x; (p[0], p[1], p[2]) = (255, 255, 255) } }
        return image
    }

    /// The first x in row `y` where a channel (0 blue, 1 green, 2 red) turns bright.
    static func rise(_ image: RGBAImage, row y: Int, channel: Int) -> Int? {
        (0..<image.width).first { (image.pixels + y * image.stride + 4 * $0)[channel] > 128 }
    }

    @Test func theChannelSplitMovesRedRightAndBlueLeftByTheShift() throws {
        let filter = try Self.filter(.glitch, ["intensity": 1, "shift": 6, "bands": 0, "rate": 0])
        let image = try Self.edgeImage()
        #expect(Glitch(filter, width: 64, height: 32, pixelScale: 1) != nil)
        Glitch(filter, width: 64, height: 32, pixelScale: 1)?.apply(to: image.view)
        for y in [0, 15, 31] {
            #expect(Self.rise(image, row: y, channel: 2) == 38 && Self.rise(image, row: y, channel: 1) == 32 && Self.rise(image, row: y, channel: 0) == 26)
        }
        // Half the intensity, half the shift; the render scale multiplies it.
        let half = try Self.edgeImage()
        Glitch(try Self.filter(.glitch, ["intensity": 0.5, "shift": 6, "bands": 0, "rate": 0]), width: 64, height: 32, pixelScale: 2)?.apply(to: half.view)
        #expect(Self.rise(half, row: 4, channel: 2) == 38 && Self.rise(half, row: 4, channel: 0) == 26)

        // On Y'CbCr planes: red = Y' + 1.5748 Cr and blue = Y' + 1.8556 Cb move apart alike
        // (within a pixel: chroma is shared by 2×2 blocks).
        let frame = TestYUVFrame(width: 64, height: 16, y: 16, u: 128, v: 128)
        for y in 0..<16 { for x in 32..<64 { frame.luma[y * 64 + x] = 235 } }
        frame.withImage { Glitch(filter, width: 64, height: 16, pixelScale: 1)?.apply(to: $0) }
        func channel(_ x: Int, _ y: Int, chroma: [UInt8], gain: Double) -> Double {
            (Double(frame.luma[y * 64 + x]) - 16) / 219 + gain * (Double(chroma[(y / 2) * 32 + x / 2]) - 128) / 224
        }
        let red = (0..<64).first { channel($0, 5, chroma: frame.cr, gain: 1.5748) > 0.5 } ?? -1
        let blue = (0..<64).first { channel($0, 5, chroma: frame.cb, gain: 1.8556) > 0.5 } ?? -1
        #expect(abs(red - 38) <= 1 && abs(blue - 26) <= 1, "red rises at \(red), blue at \(blue)")
    }

    @Test func bandsSlideRowsSideways() throws {
        let filter = try Self.filter(.glitch, ["intensity": 1, "shift": 0, "bands": 4, "bandOffset": 20, "rate": 0, "seed": 5])
        let glitch = try #require(Glitch(filter, width: 64, height: 120, pixelScale: 1))
        let image = try Self.edgeImage(height: 120)
        glitch.apply(to: image.view)
        let edges = (0..<120).map { Self.rise(image, row: $0, channel: 1) ?? 0 }
        let moved = edges.filter { $0 != 32 }
        #expect(moved.count >= 2 && moved.count < 120, "some rows moved, not all: \(edges)")
        for (y, edge) in edges.enumerated() {
            // A slide left by o puts the edge at 32 − o; a slide right wraps white round to x 0.
            let offset = glitch.rowOffsets[y]
            #expect(abs(offset) <= 20 && edge == (offset > 0 ? 0 : 32 + offset), "row \(y): offset \(offset), edge \(edge)")
        }
        // Each band is a run of rows with one offset: at most 4 runs of non-zero offsets.
        let runs = zip(glitch.rowOffsets, [0] + glitch.rowOffsets).filter { $0 != $1 && $0 != 0 }.count
        #expect(runs >= 1 && runs <= 4, "\(glitch.rowOffsets)")
    }

    @Test func glitchAtIntensityZeroChangesNothingAndASeedRepeats() throws {
        let off = try Self.filter(.glitch, ["intensity": 0, "rate": 0])
        #expect(off.isIdentity && Glitch(off, width: 64, height: 32, pixelScale: 1) == nil)
        func glitched(seed: Double, at seconds: Double) throws -> [UInt8] {
            let image = try Self.edgeImage(height: 64)
            Glitch(try Self.filter(.glitch, ["intensity": 1, "bands": 6, "rate": 0, "seed": seed], at: seconds), width: 64, height: 64, pixelScale: 1)?
                .apply(to: image.view)
            return (0..<64 * image.stride).map { image.pixels[$0] }
        }
        let first = try glitched(seed: 3, at: 1)
        #expect(try glitched(seed: 3, at: 1) == first, "the same seed and time: the same pixels")
        #expect(try glitched(seed: 3, at: 1.5) != first, "another moment: other bands")
        #expect(try glitched(seed: 4, at: 1) != first, "another seed: other bands")
    }

    @Test func strikesComeAtTheirRateForTheirLength() {
        // 2 a second, 0.1 s each: a fifth of the time, in 20 separate strikes over 10 s.
        let times = (0..<3000).map { Double($0) / 300 }
        let on = times.map { Glitch.isStriking(at: $0, rate: 2, burst: 0.1, seed: 9) }
        let fraction = Double(on.filter { $0 }.count) / Double(on.count)
        let strikes = zip(on, [false] + on).filter { $0 && !$1 }.count
        #expect(abs(fraction - 0.2) < 0.01 && strikes == 20, "on \(fraction) of the time in \(strikes) strikes")
        #expect(on == times.map { Glitch.isStriking(at: $0, rate: 2, burst: 0.1, seed: 9) }, "seeded: the same times again")
        #expect(on != times.map { Glitch.isStriking(at: $0, rate: 2, burst: 0.1, seed: 10) }, "another seed, other times")
        #expect(times.allSatisfy { Glitch.isStriking(at: $0, rate: 0, burst: 0.1, seed: 9) }, "rate 0: always")
    }
}

private extension Grain {
    func apply(to frame: TestYUVFrame) { frame.withImage { apply(to: $0) } }
}
