import Testing
@testable import MoonreelEngine

/// `TimeMap`: where times go when pauses are cut out or a range is played faster.
@Suite struct TimeMapTests {
    func seconds(_ value: Double) -> MediaTime { MediaTime(seconds: value, timescale: 1000)! }
    func range(_ start: Double, _ end: Double) -> TimeRange { TimeRange(from: seconds(start), to: seconds(end)) }

    @Test func cutsMoveLaterTimesEarlierAndRemovedTimeIsGone() {
        let map = TimeMap.removing([range(0, 0.4), range(2.3, 2.9), range(11.1, 12)], from: seconds(12))
        #expect(map.map(seconds(0.6)) == seconds(0.2))
        #expect(map.map(seconds(6.5)) == seconds(5.5))
        #expect(map.map(seconds(2.5)) == nil, "inside a cut")
        #expect(map.map(seconds(11.5)) == nil, "inside the last cut, which reaches the end")
        #expect(map.map(seconds(13)) == seconds(11.1), "past the end moves with it (12 → 10.1)")
        // A range is what was kept of it: a cue across a cut ends where its speech ends.
        #expect(map.map(range(2.0, 3.5)) == range(1.6, 2.5))
        #expect(map.map(range(2.4, 2.8)) == nil)
    }

    @Test func aScaledRangeStretchesTimesInsideAndShiftsThoseAfter() {
        let map = TimeMap.scaling(range(2, 4), to: seconds(4), in: seconds(10))
        #expect(map.map(seconds(1)) == seconds(1))
        #expect(map.map(seconds(3)) == seconds(4), "half way through 2…4 s is half way through 2…6 s")
        #expect(map.map(seconds(5)) == seconds(7))
        #expect(map.map(range(3, 5)) == range(4, 7))
    }
}
