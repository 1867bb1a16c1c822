import Foundation
import Testing
import TestSupport

/// The overlay effects (progressBar, callToAction, border, pipFrame) and the looks
/// (vignette, look, filmGrain, glitch), each rendered as `moonreel effects preview` renders it and read back by
/// pixel. Figures in the comments are what the frozen binary drew for the same options.
@Suite struct OverlayEffectTests {
    /// Within `tolerance` of each channel of `expected`.
    func near(_ colour: (r: Double, g: Double, b: Double), _ expected: (Double, Double, Double), _ tolerance: Double = 12) -> Bool {
        abs(colour.r - expected.0) <= tolerance && abs(colour.g - expected.1) <= tolerance && abs(colour.b - expected.2) <= tolerance
    }

    func near(_ pixel: (r: Int, g: Int, b: Int), _ expected: (Double, Double, Double), _ tolerance: Double = 12) -> Bool {
        near((Double(pixel.r), Double(pixel.g), Double(pixel.b)), expected, tolerance)
    }

    /// How many pixels of row `y`, from the left edge, are the bar's red (#FF3B30).
    func filledLength(_ image: Image, row y: Int) -> Int {
        var length = 0
        while length < image.width {
            let p = image.pixel(length, y)
            guard p.r > 200, p.g < 120 else { break }
            length += 1
        }
        return length
    }

    // MARK: progressBar

    @Test func progressBarFillsInProportionToTime() throws {
        let grey = try EffectPreview.grey()
        // duration 4 s from 0: a quarter at 1 s, three quarters at 3 s, of a 1280 px bar
        // 9 px thick (round(720 × 0.012)) at the bottom edge, rows 711…719.
        let quarter = try EffectPreview.still("progressBar", at: 1, with: "{ duration = 4 }", over: grey)
        let threeQuarters = try EffectPreview.still("progressBar", at: 3, with: "{ duration = 4 }", over: grey)
        let early = filledLength(quarter, row: 715), late = filledLength(threeQuarters, row: 715)
        #expect(abs(early - 320) <= 4, "filled \(early) px at 25 %")        // measured 320
        #expect(abs(late - 960) <= 4, "filled \(late) px at 75 %")          // measured 960
        #expect(abs(Double(late) / Double(max(early, 1)) - 3) < 0.05)
        // The filled part is the bar colour, the rest the translucent white track, above it the picture.
        #expect(near(quarter.mean(x: 0, y: 711, width: 320, height: 9), (247, 61, 49)))      // measured (247.1, 60.9, 49.4)
        #expect(near(quarter.mean(x: 320, y: 711, width: 960, height: 9), (167, 167, 167)))  // measured (166.7, 166.8, 166.7)
        #expect(near(quarter.mean(x: 0, y: 690, width: 1280, height: 15), (128, 128, 128), 3)) // measured (128, 128, 128)
    }

    // MARK: callToAction

    @Test func callToActionShowsItsButtonOnlyWhileOn() throws {
        let grey = try EffectPreview.grey()
        // Example: "Subscribe" from 0.5 s for 6 s, bottom right: a 215×70 pill at (1022, 607)
        // (the text's measured 157 px and 29 px of padding each side).
        let shown = try EffectPreview.still("callToAction", at: 2, over: grey)
        #expect(near(shown.mean(x: 1030, y: 630, width: 16, height: 24), (230, 33, 24)))   // measured (230, 33, 24): #E62117
        #expect(near(shown.mean(x: 1210, y: 630, width: 16, height: 24), (230, 33, 24)))   // measured (230.1, 33, 24)
        #expect(near(shown.mean(x: 1022, y: 560, width: 215, height: 40), (128, 128, 128), 3)) // above it: measured 128
        // White text in the middle of the button (measured bounding box 1052…1205 × 629…654).
        var ink = 0
        for y in 620..<665 { for x in 1030..<1210 where min(shown.pixel(x, y).r, shown.pixel(x, y).g, shown.pixel(x, y).b) > 200 { ink += 1 } }
        #expect(ink > 300, "text pixels \(ink)")
        // Before its start and after start + duration (here 0.5 + 3 s): the untouched grey.
        let before = try EffectPreview.still("callToAction", at: 0.3, over: grey)
        #expect(near(before.mean(x: 1030, y: 630, width: 16, height: 24), (128, 128, 128), 3))  // measured 128
        let after = try EffectPreview.still("callToAction", at: 4.5, with: "{ duration = 3 }", over: grey)
        #expect(near(after.mean(x: 1030, y: 630, width: 16, height: 24), (128, 128, 128), 3))   // measured 128
    }

    @Test func callToActionOvershootsWhenItPopsIn() throws {
        let grey = try EffectPreview.grey()
        func span(_ image: Image) -> Int {
            let red = (0..<image.width).filter { (x: Int) -> Bool in
                let p = image.pixel(x, 642)
                return p.r > 180 && p.g < 90
            }
            return red.isEmpty ? 0 : red.last! - red.first! + 1
        }
        // 0.75 s: 0.25 s into the pop-in, at its 1.15× peak; 2.15 s: at rest between pulses.
        let popping = span(try EffectPreview.still("callToAction", at: 0.75, over: grey))
        let resting = span(try EffectPreview.still("callToAction", at: 2.15, over: grey))
        #expect(abs(resting - 214) <= 6, "width at rest \(resting)")      // measured 214
        #expect(popping > resting + 20, "width popping \(popping)")      // measured 246
    }

    @Test func callToActionKeepsOutOfTheShortsOverlaysInPortrait() throws {
        let grey = try EffectPreview.grey(width: 1080, height: 1920)
        let image = try EffectPreview.still("callToAction", at: 2, over: grey, width: 1080, height: 1920)
        // Measured button 552…879 × 1363…1470: above the bottom fifth (1536), left of the right eighth (945).
        #expect(near(image.mean(x: 700, y: 1380, width: 20, height: 20), (230, 33, 24)))     // measured (230, 33, 24)
        #expect(near(image.mean(x: 700, y: 1700, width: 300, height: 100), (128, 128, 128), 3)) // measured 128
        #expect(near(image.mean(x: 1000, y: 1380, width: 60, height: 60), (128, 128, 128), 3))  // measured 128
    }

    // MARK: border

    @Test func borderColoursTheEdgesAndLeavesTheMiddle() throws {
        let grey = try EffectPreview.grey()
        // 3 % of 720: a 22 px band.
        let image = try EffectPreview.still("border", at: 1, with: "{ style = \"solid\", cornerRadius = 0, color = \"#1E90FF\" }", over: grey)
        for (x, y) in [(10, 360), (640, 10), (640, 710), (1270, 360), (0, 0), (1279, 719)] {
            #expect(near(image.pixel(x, y), (30, 144, 255)), "edge \(x), \(y): \(image.pixel(x, y))")  // measured (29, 145, 255)
        }
        #expect(near(image.mean(x: 0, y: 0, width: 1280, height: 22), (30, 145, 254)))        // measured (29.5, 144.9, 253.8)
        #expect(near(image.mean(x: 400, y: 200, width: 480, height: 320), (128, 128, 128), 3)) // measured 128
        #expect(near(image.pixel(640, 360), (128, 128, 128), 3))
    }

    @Test func borderDoubleAndPolaroidStyles() throws {
        let grey = try EffectPreview.grey()
        // double: a 3 px line (round(720 × 0.004)) 9 px (round(720 × 0.012)) inside the 22 px band, x 31…33.
        let double = try EffectPreview.still("border", at: 1,
                                             with: "{ style = \"double\", cornerRadius = 0, color = \"#1E90FF\", innerColor = \"#FF0000\" }", over: grey)
        #expect(near(double.pixel(32, 360), (255, 0, 0), 16))       // measured (254, 1, 0)
        #expect(near(double.pixel(40, 360), (128, 128, 128), 4))    // measured 128
        #expect(near(double.pixel(10, 360), (30, 144, 255)))        // measured (29, 145, 255)
        // polaroid: the bottom edge is 101 px (round(720 × 0.14)): rows 619…719.
        let polaroid = try EffectPreview.still("border", at: 1,
                                               with: "{ style = \"polaroid\", cornerRadius = 0, color = \"#1E90FF\" }", over: grey)
        #expect(near(polaroid.mean(x: 0, y: 625, width: 1280, height: 95), (30, 145, 255)))   // measured (29, 145, 255)
        #expect(near(polaroid.mean(x: 400, y: 200, width: 480, height: 320), (128, 128, 128), 3)) // measured 128
        #expect(near(polaroid.pixel(640, 600), (128, 128, 128), 4))  // above the band: measured 128
    }

    @Test func borderRefusesACaptionOutsideAPolaroid() throws {
        let output = Fixtures.scratchPath("border-caption.png")
        let result = try Moonreel.run(["effects", "preview", "border", "--with", "{ caption = \"Hi\" }", "-o", output])
        #expect(result.status != 0)
        #expect(result.err.contains("effect \"border\": caption is written in the polaroid's bottom edge: set style = \"polaroid\""), "\(result.err)")
    }

    // MARK: pipFrame

    @Test func pipFrameDrawsBorderAndShadowAroundTheRectOnly() throws {
        let grey = try EffectPreview.grey()
        // rect (0.5, 0.25, 0.3, 0.3) of 1280×720: x 640…1023, y 180…395; a 4 px white border
        // outside it (round(720 × 0.006)); the shadow from 9 px outside, blurred.
        let image = try EffectPreview.still("pipFrame", at: 1, with: "{ rect = { 0.5, 0.25, 0.3, 0.3 }, label = \"\" }", over: grey)
        #expect(near(image.pixel(637, 300), (255, 255, 255)))   // left border: measured 255
        #expect(near(image.pixel(1025, 300), (255, 255, 255)))  // right border: measured 255
        #expect(near(image.pixel(800, 177), (255, 255, 255)))   // top border: measured 255
        // Shadow right of and under the rect: darker than the grey.
        let right = image.mean(x: 1036, y: 250, width: 10, height: 100)
        let below = image.mean(x: 800, y: 408, width: 100, height: 10)
        #expect(right.r < 90 && right.g < 90 && right.b < 90, "right shadow \(right)")  // measured (64.5, 65.1, 64.5)
        #expect(below.r < 90 && below.g < 90 && below.b < 90, "under shadow \(below)")  // measured (64.5, 65.1, 64.5)
        // Inside the rect (where the inset video goes) and above-left of it: untouched.
        #expect(near(image.mean(x: 660, y: 200, width: 340, height: 170), (128, 128, 128), 3)) // measured 128
        #expect(near(image.mean(x: 642, y: 182, width: 10, height: 10), (128, 128, 128), 3))   // measured 128
        #expect(near(image.mean(x: 600, y: 150, width: 20, height: 20), (128, 128, 128), 3))   // measured 128
    }

    @Test func pipFrameRefusesARectOutsideTheFrame() throws {
        let output = Fixtures.scratchPath("pip-rect.png")
        let result = try Moonreel.run(["effects", "preview", "pipFrame", "--with", "{ rect = { 0.5, 0.5, 2, 0.2 } }", "-o", output])
        #expect(result.status != 0)
        #expect(result.err.contains("effect \"pipFrame\": rect must be {x, y, width, height}, fractions 0…1 of the frame, got {0.5, 0.5, 2, 0.2}"), "\(result.err)")
    }

    // MARK: vignette

    @Test func vignetteDarkensTheCornersOnly() throws {
        let grey = try EffectPreview.grey()
        // Example: strength 0.8, radius 0.8.
        let image = try EffectPreview.still("vignette", at: 1, over: grey)
        let topLeft = image.mean(x: 0, y: 0, width: 20, height: 20)
        let bottomRight = image.mean(x: 1260, y: 700, width: 20, height: 20)
        #expect(topLeft.r < 60 && bottomRight.r < 60, "corners \(topLeft) \(bottomRight)")  // measured 32.8 both
        #expect(near(image.mean(x: 600, y: 340, width: 80, height: 40), (128, 128, 128), 3)) // measured 128
    }

    // MARK: look

    @Test func monoLookMakesTheColourBarsGrey() throws {
        // Over the generated colour bars (no --over), at y 300, the six bars' middles.
        let mono = try EffectPreview.still("look", at: 1, with: "{ preset = \"mono\" }")
        let untouched = try EffectPreview.still("look", at: 1, with: "{ preset = \"mono\", amount = 0 }")
        for x in [107, 321, 535, 747, 961, 1175] {
            let grey = mono.mean(x: x, y: 300, width: 20, height: 20)
            #expect(abs(grey.r - grey.g) < 6 && abs(grey.g - grey.b) < 6, "bar at \(x): \(grey)")  // measured r = g = b
            // measured untouched red (255, 24, 0), green (0, 216, 0), yellow (255, 240, 0) …
            let colour = untouched.mean(x: x, y: 300, width: 20, height: 20)
            #expect(max(colour.r, colour.g, colour.b) - min(colour.r, colour.g, colour.b) > 150, "untouched bar at \(x): \(colour)")
        }
        // Distinct greys by luma: red 71, green 153, yellow 235, blue 20 (measured).
        #expect(abs(mono.mean(x: 107, y: 300, width: 20, height: 20).r - 71) < 12)
        #expect(abs(mono.mean(x: 747, y: 300, width: 20, height: 20).r - 20) < 12)
    }

    @Test func warmAndCoolLooksShiftRedAgainstBlueAsTheirWhitePointSays() throws {
        let grey = try EffectPreview.grey()
        func graded(_ preset: String) throws -> (r: Double, g: Double, b: Double) {
            try EffectPreview.still("look", at: 1, with: "{ preset = \"\(preset)\" }", over: grey).mean(x: 600, y: 340, width: 80, height: 40)
        }
        // Grey 128 is 0.216 of linear light; warm's white point (1, 0.93, 0.82) gives
        // (128, 118, 104) before colorControls' saturation 1.1 and contrast 1.05 move it away
        // from mid grey: (130, 119, 102) measured.
        let warm = try graded("warm")
        #expect(near(warm, (130, 119, 102), 4), "warm \(warm)")
        let cool = try graded("cool")
        #expect(near(cool, (110, 120, 128), 4), "cool \(cool)")          // measured (110, 120, 128)
        #expect(warm.r - warm.b > 20 && cool.b - cool.r > 12)
        let mono = try graded("mono")
        #expect(near(mono, (128, 128, 128), 3), "mono \(mono)")          // measured 128
    }

    // MARK: filmGrain

    /// Mean and standard deviation of the green channel over a box.
    func spread(_ image: Image, x: Int, y: Int, width: Int, height: Int) -> (mean: Double, deviation: Double) {
        let values = (y..<y + height).flatMap { yy in (x..<x + width).map { Double(image.pixel($0, yy).g) } }
        let mean = values.reduce(0, +) / Double(values.count)
        return (mean, (values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count)).squareRoot())
    }

    @Test func filmGrainGrowsWithAmountKeepsTheMeanAndChangesEveryFrame() throws {
        let grey = try EffectPreview.grey()
        let box = (x: 400, y: 200, width: 480, height: 320)
        let plain = try EffectPreview.still("filmGrain", at: 1, with: "{ amount = 0 }", over: grey)
        let light = try EffectPreview.still("filmGrain", at: 1, with: "{ amount = 0.2 }", over: grey)
        let heavy = try EffectPreview.still("filmGrain", at: 1, with: "{ amount = 0.6 }", over: grey)
        let base = spread(plain, x: box.x, y: box.y, width: box.width, height: box.height)
        let (lightSpread, heavySpread) = (spread(light, x: box.x, y: box.y, width: box.width, height: box.height),
                                          spread(heavy, x: box.x, y: box.y, width: box.width, height: box.height))
        #expect(base.deviation < 1, "amount 0 is the picture as it was: σ \(base.deviation)")
        // σ = amount · 0.12 of black to white: about 6 levels at 0.2 and 18 at 0.6 (full-range RGB).
        #expect(lightSpread.deviation > 4 && lightSpread.deviation < 9, "amount 0.2: σ \(lightSpread.deviation)")
        #expect(heavySpread.deviation > 2.5 * lightSpread.deviation, "amount 0.6: σ \(heavySpread.deviation)")
        #expect(abs(lightSpread.mean - base.mean) <= 2 && abs(heavySpread.mean - base.mean) <= 2,
                "mean \(base.mean) → \(lightSpread.mean), \(heavySpread.mean)")
        // The next frame has other grain; the same frame again the same grain.
        let next = try EffectPreview.still("filmGrain", at: 1 + 1.0 / 30, with: "{ amount = 0.2 }", over: grey)
        let again = try EffectPreview.still("filmGrain", at: 1, with: "{ amount = 0.2 }", over: grey)
        #expect(light.meanDifference(next) > 2, "two frames differ: \(light.meanDifference(next))")
        #expect(light.pixels == again.pixels, "the same seed and time give the same pixels")
    }

    // MARK: glitch

    /// A clip black left of x 640 and white from it.
    func edgeClip() throws -> String {
        let path = Fixtures.scratchPath("edge.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=black:size=1280x720:rate=30:duration=3,drawbox=x=640:y=0:w=640:h=720:c=white:t=fill",
                         "-pix_fmt", "yuv420p", "-crf", "0", path])
        return path
    }

    /// The first x of row `y` where a channel passes 128.
    func rise(_ image: Image, row y: Int, _ channel: KeyPath<(r: Int, g: Int, b: Int), Int>) -> Int {
        (0..<image.width).first { image.pixel($0, y)[keyPath: channel] > 128 } ?? -1
    }

    @Test func glitchSplitsRedAndBlueByTheShiftAndSlidesBands() throws {
        let edge = try edgeClip()
        let split = try EffectPreview.still("glitch", at: 1, with: "{ mode = \"continuous\", intensity = 1, shift = 20, bands = 0 }", over: edge)
        for y in [100, 360, 600] {
            let (red, green, blue) = (rise(split, row: y, \.r), rise(split, row: y, \.g), rise(split, row: y, \.b))
            #expect(abs(red - 660) <= 2 && abs(green - 640) <= 2 && abs(blue - 620) <= 2, "row \(y): red \(red), green \(green), blue \(blue)")
        }
        let options = "{ mode = \"continuous\", intensity = 1, shift = 0, bands = 8, bandOffset = 100, seed = 4 }"
        let banded = try EffectPreview.still("glitch", at: 1, with: options, over: edge)
        let edges = (0..<720).map { rise(banded, row: $0, \.g) }
        let moved = edges.filter { abs($0 - 640) > 2 }.count
        #expect(moved > 10 && moved < 600, "some bands of rows slid, not the whole picture: \(moved) rows")
        #expect(try EffectPreview.still("glitch", at: 1, with: options, over: edge).pixels == banded.pixels, "the same seed: the same pixels")
        #expect(try EffectPreview.still("glitch", at: 1, with: "{ mode = \"continuous\", intensity = 1, shift = 0, bands = 8, bandOffset = 100, seed = 5 }",
                                        over: edge).pixels != banded.pixels, "another seed: other bands")
        // Intensity 0 is the untouched picture (as grain with amount 0 is).
        let off = try EffectPreview.still("glitch", at: 1, with: "{ mode = \"continuous\", intensity = 0 }", over: edge)
        #expect(off.pixels == (try EffectPreview.still("filmGrain", at: 1, with: "{ amount = 0 }", over: edge)).pixels)
        #expect(rise(off, row: 360, \.r) == rise(off, row: 360, \.b))
    }

    @Test func glitchBurstsStrikeOnlyAtTheirSeededMoments() throws {
        let edge = try edgeClip()
        // 2 strikes a second, 0.1 s each: a fifth of the frames are struck, and they repeat.
        let options = "{ mode = \"bursts\", intensity = 1, rate = 2, burst = 0.1, shift = 20, bands = 0, seed = 9 }"
        var struck = 0
        for frame in 0..<20 {
            let still = try EffectPreview.still("glitch", at: Double(frame) / 10, with: options, over: edge, width: 320, height: 180)
            // Small: render pixels are the preview's, so the split is 40 px apart at any size.
            if rise(still, row: 90, \.r) - rise(still, row: 90, \.b) > 20 { struck += 1 }
        }
        #expect(struck >= 2 && struck <= 8, "\(struck) of 20 samples struck")
    }
}
