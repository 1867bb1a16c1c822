import Testing
@testable import MoonreelEngine

@Suite struct MediaTimeTests {
    @Test func addsAcrossTimescales() {
        let a = MediaTime(value: 1, timescale: 30)
        let b = MediaTime(value: 1, timescale: 25)
        #expect(a + b == MediaTime(value: 11, timescale: 150))
    }
}

@Suite struct MediaTimeScalingTests {
    @Test func scalingWholeSecondsKeepsFractions() {
        // 2 s of a segment slowed 2× (source 2 s shown over 4 s) maps to 1 s of source;
        // 1 s (timescale 1) scaled by 1/2 must give 0.5 s, not round to 0 or 1.
        let one = MediaTime(value: 1, timescale: 1)
        let half = one.multiplied(by: MediaTime(value: 2, timescale: 1), dividedBy: MediaTime(value: 4, timescale: 1))
        #expect(half == MediaTime(value: 1, timescale: 2))
        let ntsc = MediaTime(value: 1001, timescale: 30000).multiplied(by: one, dividedBy: MediaTime(value: 3, timescale: 1))
        #expect(ntsc == MediaTime(value: 1001, timescale: 90000))
    }

    @Test func comparisonIsExactAcrossTimescales() {
        #expect(MediaTime(value: 1001, timescale: 30000) < MediaTime(value: 1, timescale: 29))
        #expect(MediaTime(value: 2, timescale: 4) == MediaTime(value: 1, timescale: 2))
        #expect(MediaTime(seconds: 0.1)! + MediaTime(seconds: 0.2)! == MediaTime(seconds: 0.3)!)
        #expect(MediaTime(seconds: .nan) == nil && MediaTime(seconds: .infinity) == nil)
    }

    @Test func frameCountsOfACutAreExact() {
        let frame = MediaTime(value: 1, timescale: 30)
        #expect(MediaTime(value: 3, timescale: 1).ceilDivided(by: frame) == 90)
        #expect((MediaTime(seconds: 5)! - MediaTime(seconds: 2)!).floorDivided(by: frame) == 90)
    }

    @Test func hugeValuesClampOrApproximateInsteadOfTrapping() {
        // 9.9e8 s (a script scaling a millisecond to 31 years) in the fine default timescale.
        let long = MediaTime(seconds: 9.9e8)!
        let offset = MediaTime(seconds: 1000)!
        let mapped = offset.multiplied(by: MediaTime(seconds: 0.001)!, dividedBy: long)
        #expect(abs(mapped.seconds - 1000 * 0.001 / 9.9e8) < 1e-7, "within a tick of the timescale")
        #expect(offset.multiplied(by: long, dividedBy: .zero) == .zero)
        let damaged = MediaTime(value: MediaTime.limitValue, timescale: 1)
        #expect(damaged.converted(to: 90000).value == MediaTime.limitValue, "clamped, not trapped")
        #expect((damaged + damaged).value == MediaTime.limitValue && (-damaged - damaged).value == -MediaTime.limitValue)
        #expect((damaged * Int64.max).value == MediaTime.limitValue)
    }
}
