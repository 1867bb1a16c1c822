import Foundation
import Testing
import TestSupport

/// The text effects (lowerThird, captions, title, ticker, countdown, callout), each rendered
/// as `moonreel effects preview` renders it over a grey clip and read back by pixel. Figures
/// in the comments are what the frozen binary drew for the same options, times and sizes.
@Suite struct TextEffectTests {
    /// Within `tolerance` of each channel of `expected`.
    func near(_ colour: (r: Double, g: Double, b: Double), _ expected: (Double, Double, Double), _ tolerance: Double = 12) -> Bool {
        abs(colour.r - expected.0) <= tolerance && abs(colour.g - expected.1) <= tolerance && abs(colour.b - expected.2) <= tolerance
    }

    /// Pixels of a rectangle that pass `test`.
    func count(_ image: Image, x: Int, y: Int, width: Int, height: Int, _ test: ((r: Int, g: Int, b: Int)) -> Bool) -> Int {
        var found = 0
        for yy in y..<(y + height) { for xx in x..<(x + width) where test(image.pixel(xx, yy)) { found += 1 } }
        return found
    }

    /// Not the grey background: a channel more than 12 away from 128.
    func drawn(_ p: (r: Int, g: Int, b: Int)) -> Bool { max(abs(p.r - 128), abs(p.g - 128), abs(p.b - 128)) > 12 }
    func white(_ p: (r: Int, g: Int, b: Int)) -> Bool { min(p.r, p.g, p.b) > 220 }
    /// The captions' default activeColor, #FFE600.
    func yellow(_ p: (r: Int, g: Int, b: Int)) -> Bool { p.r > 200 && p.g > 180 && p.b < 80 }

    // MARK: lowerThird

    @Test func lowerThirdSlidesInToTheBottomThirdAndOut() throws {
        let grey = try EffectPreview.grey()
        // Example: start 0.5, slide 0.6, hold 4: fully in from 1.1 to 5.1 s, gone at 5.7 s.
        let shown = try EffectPreview.still("lowerThird", at: 2, over: grey)
        // The bar (#102A5C at 0.92 over grey) spans x 62…391, y 562…662; the accent strip x 58…61.
        #expect(near(shown.mean(x: 340, y: 566, width: 45, height: 14), (26, 49, 96)))   // measured (26, 49, 96)
        #expect(near(shown.mean(x: 58, y: 600, width: 4, height: 20), (244, 166, 39)))   // measured (244, 166.5, 38.8): #F5A623
        #expect(count(shown, x: 62, y: 562, width: 330, height: 101, white) > 2000)      // name and role: measured 3301 px
        // Nothing above the bottom third (y < 480), nor left of the margin.
        #expect(count(shown, x: 0, y: 0, width: 1280, height: 480, drawn) == 0)          // measured 0
        #expect(near(shown.mean(x: 100, y: 540, width: 200, height: 15), (128, 128, 128), 3))
        // Before it starts, and after it has slid out: the untouched grey.
        for time in [0.4, 5.9] {
            let absent = try EffectPreview.still("lowerThird", at: time, over: grey)
            #expect(count(absent, x: 40, y: 540, width: 400, height: 140, drawn) == 0, "at \(time) s")  // measured 0 at both
        }
    }

    @Test func lowerThirdStaysAboveTheAppsBottomFifthInPortrait() throws {
        let grey = try EffectPreview.grey(width: 1080, height: 1920)
        let shown = try EffectPreview.still("lowerThird", at: 2, over: grey, width: 1080, height: 1920)
        // The bar spans y 1300…1449: below two thirds (1280), above the bottom fifth (1536).
        #expect(near(shown.mean(x: 500, y: 1305, width: 80, height: 15), (26, 49, 96)))  // measured (26, 49, 96)
        #expect(count(shown, x: 0, y: 0, width: 1080, height: 1280, drawn) == 0)         // measured 0
        #expect(count(shown, x: 0, y: 1536, width: 1080, height: 384, drawn) == 0)       // measured 0
    }

    // MARK: captions

    static let oneTwoThree = "{ cues = { { text = \"ONE TWO THREE\", start = 0.5, finish = 3.5 } } }"

    @Test func captionsColourTheSpokenWordOnly() throws {
        let grey = try EffectPreview.grey()
        // No word times: each word gets a third of the cue, ONE 0.5…1.5 s, THREE 2.5…3.5 s.
        // Upper case already; centred in the bottom third: ink y 569…635.
        let first = try EffectPreview.still("captions", at: 1, with: Self.oneTwoThree, over: grey)
        #expect(count(first, x: 380, y: 560, width: 155, height: 80, yellow) > 1500)     // ONE: measured 2802 px, x 394…520
        #expect(count(first, x: 540, y: 560, width: 360, height: 80, yellow) == 0)       // TWO, THREE not yet: measured 0
        #expect(count(first, x: 540, y: 560, width: 360, height: 80, white) > 3000)      // ...but shown white: measured 5210 px
        let last = try EffectPreview.still("captions", at: 3, with: Self.oneTwoThree, over: grey)
        #expect(count(last, x: 670, y: 560, width: 230, height: 80, yellow) > 2500)      // THREE: measured 4006 px, x 682…883
        #expect(count(last, x: 380, y: 560, width: 290, height: 80, yellow) == 0)        // ONE, TWO no longer: measured 0
        let before = try EffectPreview.still("captions", at: 0.25, with: Self.oneTwoThree, over: grey)
        #expect(count(before, x: 0, y: 400, width: 1280, height: 320, drawn) == 0)       // measured 0
    }

    @Test func captionsKeepInsideTheFreeAreaOfAVerticalVideo() throws {
        let grey = try EffectPreview.grey(width: 1080, height: 1920)
        let frame = try EffectPreview.still("captions", at: 1, with: Self.oneTwoThree, over: grey, width: 1080, height: 1920)
        // Ink x 88…835, y 1260…1359: above the bottom fifth (1536), left of the right eighth (945).
        #expect(count(frame, x: 0, y: 1150, width: 945, height: 300, yellow) > 3000)     // ONE: measured 6264 px
        #expect(count(frame, x: 0, y: 1536, width: 1080, height: 384, drawn) == 0)       // measured 0
        #expect(count(frame, x: 945, y: 0, width: 135, height: 1920, drawn) == 0)        // measured 0
        #expect(count(frame, x: 0, y: 0, width: 1080, height: 160, drawn) == 0)          // measured 0
    }

    // MARK: title

    @Test func titleShowsBetweenItsInAndOut() throws {
        let grey = try EffectPreview.grey()
        // Example: "Moonreel" / "Effects that move" from 0.5 s for 4 s, letters in, rise out.
        let shown = try EffectPreview.still("title", at: 2, over: grey)
        var (ink, sumX, sumY) = (0, 0, 0)
        for y in 0..<720 { for x in 0..<1280 where white(shown.pixel(x, y)) { ink += 1; sumX += x; sumY += y } }
        #expect(ink > 8000, "title ink \(ink)")                                          // measured 11836 px, x 449…837, y 293…421
        if ink > 0 {
            #expect(abs(Double(sumX) / Double(ink) - 640) < 15)                          // centred: measured x 634.6
            #expect(abs(Double(sumY) / Double(ink) - 360) < 25)                          // middle: measured y 344.2
        }
        for time in [0.4, 4.6] {
            let absent = try EffectPreview.still("title", at: time, over: grey)
            #expect(count(absent, x: 0, y: 150, width: 1280, height: 420, drawn) == 0, "at \(time) s")  // measured 0 at both
        }
    }

    @Test func titleTypewriterTypesCharacterByCharacter() throws {
        let grey = try EffectPreview.grey()
        // 0.06 s a character: 0.2 s in, "Moon" (ink x 449…670); at 2 s all of it (x 449…837).
        let typing = try EffectPreview.still("title", at: 0.7, with: "{ inStyle = \"typewriter\" }", over: grey)
        let typed = try EffectPreview.still("title", at: 2, with: "{ inStyle = \"typewriter\" }", over: grey)
        let part = count(typing, x: 0, y: 250, width: 1280, height: 220, white)
        let whole = count(typed, x: 0, y: 250, width: 1280, height: 220, white)
        #expect(part > 3000 && part < whole * 2 / 3, "\(part) of \(whole)")            // measured 6084 of 11906
        #expect(count(typing, x: 690, y: 250, width: 300, height: 220, white) == 0)      // "reel" not typed yet: measured 0
        #expect(count(typed, x: 690, y: 250, width: 300, height: 220, white) > 1000)
    }

    // MARK: ticker

    @Test func tickerCrawlsAtItsSpeed() throws {
        let grey = try EffectPreview.grey()
        // Example: "BREAKING" and a text crawling at 0.12 of the width a second: 153.6 px/s.
        let early = try EffectPreview.still("ticker", at: 2, over: grey)
        let later = try EffectPreview.still("ticker", at: 2.5, over: grey)
        // The band (#0E1B33 at 0.9) y 664…719, the red label box at its left.
        #expect(near(early.mean(x: 600, y: 668, width: 100, height: 4), (24, 36, 58)))   // measured (24, 36, 58.3)
        #expect(near(early.mean(x: 5, y: 700, width: 7, height: 12), (214, 20, 26)))     // measured (214, 20, 26): #D7141A
        #expect(count(early, x: 0, y: 0, width: 1280, height: 663, drawn) == 0)          // above the band: measured 0
        // The text right of the label moved left by 76.8 px: the shift that matches best.
        var best = (shift: -1, difference: Double.infinity)
        for shift in 0..<200 {
            var total = 0.0, n = 0
            for y in stride(from: 670, to: 715, by: 3) { for x in 200..<(1280 - shift) {
                let a = early.pixel(x + shift, y), b = later.pixel(x, y)
                total += Double(abs(a.r - b.r) + abs(a.g - b.g) + abs(a.b - b.b)); n += 1
            } }
            if total / Double(n) < best.difference { best = (shift, total / Double(n)) }
        }
        #expect(abs(best.shift - 77) <= 3, "moved \(best.shift) px in 0.5 s")            // measured 77
        // Unshifted, the two frames differ: the text is not standing still.
        #expect(early.crop(x: 200, y: 670, width: 1080, height: 45).meanDifference(later.crop(x: 200, y: 670, width: 1080, height: 45)) > 10)  // measured 43.6
    }

    // MARK: countdown

    @Test func countdownShowsAnotherNumberEachSecond() throws {
        let grey = try EffectPreview.grey()
        // Example: 3, 2, 1 from 0.5 s, one a second, then "GO!"; a 360 px disc at the centre.
        let three = try EffectPreview.still("countdown", at: 1, over: grey)
        let two = try EffectPreview.still("countdown", at: 2, over: grey)
        var (inThree, inTwo, differ) = (0, 0, 0)
        for y in 240..<480 { for x in 520..<760 {
            let a = white(three.pixel(x, y)), b = white(two.pixel(x, y))
            if a { inThree += 1 }
            if b { inTwo += 1 }
            if a != b { differ += 1 }
        } }
        #expect(inThree > 5000 && inTwo > 5000, "\(inThree) \(inTwo)")                  // measured 8547, 8392
        #expect(differ > 3000, "digits share most of their ink: \(differ) differ")       // measured 4751
        // The disc (black at 0.45 over grey) and its white ring, x 460…468 on the middle row.
        #expect(near(three.mean(x: 620, y: 195, width: 40, height: 10), (70, 70, 70)))   // measured (70, 70, 70)
        #expect(near(three.mean(x: 461, y: 355, width: 6, height: 10), (255, 255, 255))) // measured (254.9, 255, 254.9)
        #expect(near(three.mean(x: 620, y: 100, width: 40, height: 20), (128, 128, 128), 3))
        let before = try EffectPreview.still("countdown", at: 0.3, over: grey)
        #expect(count(before, x: 400, y: 150, width: 480, height: 420, drawn) == 0)      // measured 0
    }

    // MARK: callout

    func isDot(_ image: Image, _ x: Int, _ y: Int) -> Bool {
        near(image.mean(x: x - 3, y: y - 3, width: 6, height: 6), (255, 59, 47))         // #FF3B30
    }

    @Test func calloutMarksItsTarget() throws {
        let grey = try EffectPreview.grey()
        // Example: target {0.62, 0.42}: the dot's middle at (793.6, 302.4).
        let shown = try EffectPreview.still("callout", at: 1.5, over: grey)
        #expect(near(shown.mean(x: 791, y: 300, width: 6, height: 5), (255, 59, 47)))    // measured (255, 59, 47)
        var label = 0
        for y in 292...473 { for x in 348...803 where white(shown.pixel(x, y)) { label += 1 } }
        #expect(label > 5000, "box and line: \(label) px")                               // measured 9903 px (box 348…803 × 292…473)
        let before = try EffectPreview.still("callout", at: 0.3, over: grey)
        #expect(count(before, x: 300, y: 250, width: 550, height: 250, drawn) == 0)      // measured 0
    }

    @Test func calloutFollowsItsPath() throws {
        let grey = try EffectPreview.grey()
        let path = "{ start = 0.5, duration = 5, path = { { time = 1, x = 0.3, y = 0.3 }, { time = 3, x = 0.7, y = 0.6 }, { time = 4, x = 0.2, y = 0.8 } } }"
        // Measured dot middles: (383.5, 215.5) at 1 s, (639.5, 323.5) at 2 s, (895.5, 431.5) at 3 s.
        let atFirst = try EffectPreview.still("callout", at: 1, with: path, over: grey)
        #expect(isDot(atFirst, 384, 216))
        #expect(!isDot(atFirst, 896, 432))
        let halfway = try EffectPreview.still("callout", at: 2, with: path, over: grey)
        #expect(isDot(halfway, 640, 324))
        let atSecond = try EffectPreview.still("callout", at: 3, with: path, over: grey)
        #expect(isDot(atSecond, 896, 432))
        #expect(near(atSecond.mean(x: 381, y: 213, width: 6, height: 6), (128, 128, 128), 3))  // left the first point: measured 128
    }

    // MARK: errors

    @Test func textEffectErrorsNameTheEffectAndTheParameter() throws {
        let path = try Moonreel.runScript("""
            local callout = require "effects.callout"
            callout{ renderSize = {640, 360}, path = { { time = 2, x = 0.1, y = 0.1 }, { time = 1, x = 0.5, y = 0.5 } } }
            """, name: "main.lua")
        #expect(path.status == 1)
        #expect(path.err.contains("main.lua:2: effect \"callout\": parameter path must have increasing times; keyframe 2 (1 s) is not after keyframe 1 (2 s)"), "\(path.err)")
        let target = try Moonreel.runScript("""
            local callout = require "effects.callout"
            callout{ renderSize = {640, 360}, target = { 1.5, 0.2 } }
            """, name: "main.lua")
        #expect(target.status == 1 && target.err.contains("main.lua:2: effect \"callout\": parameter target must be {x, y} with fractions of the frame in 0…1, got {1.5, 0.2}"), "\(target.err)")
        let cue = try Moonreel.runScript("""
            local captions = require "effects.captions"
            captions{ renderSize = {640, 360}, cues = { { text = "hi", start = 1 } } }
            """, name: "main.lua")
        #expect(cue.status == 1 && cue.err.contains("main.lua:2: effect \"captions\": parameter cues: cue 1 has no finish"), "\(cue.err)")
        let empty = try Moonreel.runScript("""
            local ticker = require "effects.ticker"
            ticker{ renderSize = {640, 360}, text = "   " }
            """, name: "main.lua")
        #expect(empty.status == 1 && empty.err.contains("main.lua:2: effect \"ticker\": parameter text must have something to show"), "\(empty.err)")
    }
}
