@testable import MoonreelEngine
import Testing

@Suite struct KeyframeAnimationTests {
    func opacity(_ values: [Double], keyTimes: [Double]? = nil, mode: CalculationMode = .linear,
                 timing: AnimationTiming) throws -> KeyframeAnimation {
        try KeyframeAnimation(keyPath: .opacity, values: numbers(values), keyTimes: keyTimes,
                              calculationMode: mode, timing: timing)
    }

    @Test func linearFadeInAndOut() throws {
        // The LUA-API example: 0 → 1 over the first 10 % of 5 s, 1 → 0 over the last 10 %.
        let fade = try opacity([0, 1, 1, 0], keyTimes: [0, 0.1, 0.9, 1], timing: AnimationTiming(duration: seconds(5)))
        #expect(number(fade.value(at: seconds(0))) == 0)
        #expect(approximately(number(fade.value(at: seconds(0.25))), 0.5))   // fraction 0.05: half of segment 1
        #expect(number(fade.value(at: seconds(0.5))) == 1)                    // exactly at keyTime 0.1
        #expect(number(fade.value(at: seconds(2.5))) == 1)
        #expect(approximately(number(fade.value(at: seconds(4.75))), 0.5))
        #expect(fade.value(at: seconds(5)) == nil)                            // removed at the end
        #expect(fade.value(at: seconds(-0.001)) == nil)
    }

    @Test func timingFunctionPerSegment() throws {
        let eased = try KeyframeAnimation(keyPath: .opacity, values: numbers([0, 10, 20]), keyTimes: [0, 0.5, 1],
                                          timingFunctions: [.easeIn, .linear], timing: AnimationTiming(duration: seconds(2)))
        // Segment 1 runs over 0…1 s; easeIn(0.6575) = 0.5 (its curve point at s = 0.5).
        #expect(approximately(number(eased.value(at: MediaTime(value: 263, timescale: 400))), 5))
        #expect(approximately(number(eased.value(at: seconds(1.5))), 15))      // linear segment
    }

    @Test func discreteWithOneKeyTimePerValue() throws {
        // The seed's lyric form: the last value holds to the end; keyTimes need not reach 1.
        let lyric = try opacity([0, 1, 0], keyTimes: [0, 12.5 / 180, 15.0 / 180], mode: .discrete,
                                timing: AnimationTiming(duration: seconds(180)))
        #expect(number(lyric.value(at: seconds(12.499))) == 0)
        #expect(number(lyric.value(at: seconds(12.5))) == 1)       // exactly at its key time
        #expect(number(lyric.value(at: seconds(14.999))) == 1)
        #expect(number(lyric.value(at: seconds(15))) == 0)
        #expect(number(lyric.value(at: seconds(179.9))) == 0)
    }

    @Test func discreteInApplesFormAndEvenlySpread() throws {
        let words = ["a", "b", "c"].map { AnimatableValue.string($0) }
        let apple = try KeyframeAnimation(keyPath: .string, values: words, keyTimes: [0, 0.25, 0.5, 1], calculationMode: .discrete,
                                          timing: AnimationTiming(duration: seconds(8), fillMode: .forwards, isRemovedOnCompletion: false))
        #expect(apple.value(at: seconds(1.999)) == .string("a"))
        #expect(apple.value(at: seconds(2)) == .string("b"))
        #expect(apple.value(at: seconds(4)) == .string("c"))
        #expect(apple.value(at: seconds(100)) == .string("c"))
        // Without keyTimes each of n values holds for 1/n of the duration.
        let even = try KeyframeAnimation(keyPath: .string, values: words, calculationMode: .discrete,
                                         timing: AnimationTiming(duration: seconds(3)))
        #expect(even.keyTimes == [0, 1.0 / 3, 2.0 / 3, 1])
        #expect(even.value(at: seconds(0.999)) == .string("a"))
        #expect(even.value(at: seconds(1)) == .string("b"))
        #expect(even.value(at: seconds(2.5)) == .string("c"))
    }

    @Test func discreteKindsNeverInterpolate() throws {
        let hidden = try KeyframeAnimation(keyPath: .isHidden, values: [.bool(true), .bool(false)], keyTimes: [0, 0.5],
                                           calculationMode: .linear, timing: AnimationTiming(duration: seconds(2)))
        #expect(hidden.calculationMode == .discrete)
        #expect(hidden.value(at: seconds(0.9)) == .bool(true))
        #expect(hidden.value(at: seconds(1)) == .bool(false))
    }

    @Test func pacedNumbersAndPoints() throws {
        // Steps 10 and 30 of 40: key times 0, 0.25, 1; halfway is 20 whatever the keyframes.
        let paced = try opacity([0, 10, 40], mode: .paced, timing: AnimationTiming(duration: seconds(4)))
        #expect(paced.keyTimes == [0, 0.25, 1])
        #expect(approximately(number(paced.value(at: seconds(1))), 10))
        #expect(approximately(number(paced.value(at: seconds(2))), 20))
        #expect(approximately(number(paced.value(at: seconds(3))), 30))
        // (0,0) → (3,4) → (3,10): lengths 5 and 6; at half of 11 we are 0.5 past (3,4).
        let path = try KeyframeAnimation(keyPath: .position, values: [.point(.zero), .point(Point(x: 3, y: 4)), .point(Point(x: 3, y: 10))],
                                         calculationMode: .paced, timing: AnimationTiming(duration: seconds(2)))
        guard case .point(let p)? = path.value(at: seconds(1)) else { Issue.record("no point"); return }
        #expect(approximately(p.x, 3) && approximately(p.y, 4.5))
    }

    // Catmull-Rom through 0, 1, 3, 4 at even key times (segments of 4 s in 12 s). In the middle
    // segment at u = 0.25 the Hermite weights are h00 = 0.84375, h10 = 0.140625,
    // h01 = 0.15625, h11 = −0.046875; the tangents are (3 − 0)/2 = 1.5 and (4 − 1)/2 = 1.5:
    // 0.84375 + 0.140625·1.5 + 0.15625·3 − 0.046875·1.5 = 1.453125.
    @Test func cubicCatmullRom() throws {
        let curve = try opacity([0, 1, 3, 4], mode: .cubic, timing: AnimationTiming(duration: seconds(12)))
        #expect(approximately(number(curve.value(at: seconds(5))), 1.453125))
        // First segment, u = 0.5: end tangent repeats the end value, (1 − 0)/2 = 0.5, and the
        // next is 1.5: 0.5·0 + 0.125·0.5 + 0.5·1 − 0.125·1.5 = 0.375.
        #expect(approximately(number(curve.value(at: seconds(2))), 0.375))
        #expect(number(curve.value(at: seconds(4))) == 1)
    }

    @Test func cubicTensionContinuityBias() throws {
        func middle(tension: [Double] = [], continuity: [Double] = [], bias: [Double] = []) throws -> Double? {
            let curve = try KeyframeAnimation(keyPath: .opacity, values: numbers([0, 1, 3, 4]), calculationMode: .cubic,
                                              tensionValues: tension, continuityValues: continuity, biasValues: bias,
                                              timing: AnimationTiming(duration: seconds(12)))
            return number(curve.value(at: seconds(5)))
        }
        // Tension 0.5 halves both tangents to 0.75: 0.84375 + 0.10546875 + 0.46875 − 0.03515625.
        #expect(approximately(try middle(tension: [0.5, 0.5, 0.5, 0.5]), 1.3828125))
        // Bias 1 takes the incoming step: tangents 1 − 0 = 1 and 3 − 1 = 2.
        #expect(approximately(try middle(bias: [1, 1, 1, 1]), 1.359375))
        // Continuity 1: outgoing uses the step before (1), incoming the step after (4 − 3 = 1).
        #expect(approximately(try middle(continuity: [1, 1, 1, 1]), 1.40625))
    }

    @Test func cubicPacedMovesAtConstantSpeed() throws {
        // On a line with uneven keyframes the paced spline still covers equal distances in
        // equal times (up to the arc-length sampling).
        let curve = try opacity([0, 10, 40], mode: .cubicPaced, timing: AnimationTiming(duration: seconds(4)))
        for (time, expected) in [(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)] {
            #expect(approximately(number(curve.value(at: seconds(time))), expected, tolerance: 0.05))
        }
        #expect(number(curve.value(at: seconds(3.999))).map { $0 > 39.9 } == true)
    }

    @Test func repeatAndAutoreverse() throws {
        let timing = AnimationTiming(duration: seconds(2), repeatCount: 2, autoreverses: true)
        let bounce = try opacity([0, 10], timing: timing)
        let expected: [(Double, Double)] = [(0, 0), (1, 5), (2, 10), (2.5, 7.5), (3, 5), (4, 0), (4.5, 2.5), (7.5, 2.5)]
        for (time, value) in expected {
            #expect(approximately(number(bounce.value(at: seconds(time))), value), "at \(time) s")
        }
        #expect(bounce.value(at: seconds(8)) == nil)
        var held = timing
        held.fillMode = .forwards
        held.isRemovedOnCompletion = false
        // The end of a whole number of reversed cycles is the start value.
        #expect(number(try opacity([0, 10], timing: held).value(at: seconds(8))) == 0)
    }

    @Test func fractionalInfiniteAndDurationRepeats() throws {
        let half = try opacity([0, 10], timing: AnimationTiming(duration: seconds(2), repeatCount: 1.5, fillMode: .forwards, isRemovedOnCompletion: false))
        #expect(approximately(number(half.value(at: seconds(2.5))), 2.5))
        #expect(number(half.value(at: seconds(3))) == 5)          // ends halfway through pass 2
        #expect(number(half.value(at: seconds(60))) == 5)
        let byDuration = try opacity([0, 10], timing: AnimationTiming(duration: seconds(2), repeatDuration: seconds(3)))
        #expect(approximately(number(byDuration.value(at: seconds(2.5))), 2.5))
        #expect(byDuration.value(at: seconds(3)) == nil)
        let forever = try opacity([0, 10], timing: AnimationTiming(duration: seconds(2), repeatCount: .infinity))
        #expect(number(forever.value(at: seconds(1001))) == 5)
        #expect(number(forever.value(at: seconds(1000))) == 0)   // a new pass starts
    }

    @Test func fillModesAroundALateBegin() throws {
        func value(_ fill: FillMode, at time: Double) throws -> Double? {
            number(try opacity([2, 10], timing: AnimationTiming(beginTime: seconds(10), duration: seconds(2), fillMode: fill, isRemovedOnCompletion: false)).value(at: seconds(time)))
        }
        #expect(try value(.removed, at: 9.999) == nil)
        #expect(try value(.backwards, at: 0) == 2)
        #expect(try value(.both, at: 9) == 2)
        #expect(try value(.forwards, at: 9) == nil)
        #expect(try value(.removed, at: 10) == 2)              // begin is inside
        #expect(try value(.removed, at: 11) == 6)
        #expect(try value(.removed, at: 12) == nil)            // end is outside
        #expect(try value(.forwards, at: 12) == 10)
        #expect(try value(.both, at: 500) == 10)
        #expect(try value(.backwards, at: 12) == nil)
        // Removed on completion (Core Animation's default): no forwards fill after the end.
        let removed = try opacity([2, 10], timing: AnimationTiming(beginTime: seconds(10), duration: seconds(2), fillMode: .forwards))
        #expect(removed.value(at: seconds(11)) != nil && removed.value(at: seconds(12)) == nil)
    }

    @Test func speedAndTimeOffset() throws {
        let fast = try opacity([0, 10], timing: AnimationTiming(beginTime: seconds(10), duration: seconds(2), speed: 2))
        #expect(approximately(number(fast.value(at: seconds(10.5))), 5))
        #expect(fast.value(at: seconds(11)) == nil)             // 2 s of local time took 1 s
        // Starting 0.5 s into the pass, the pass wraps round and ends where it began.
        let offset = try opacity([0, 10], timing: AnimationTiming(duration: seconds(2), timeOffset: seconds(0.5)))
        #expect(approximately(number(offset.value(at: .zero)), 2.5))
        #expect(approximately(number(offset.value(at: seconds(1.6))), 0.5))
    }

    @Test func passTimingFunction() throws {
        let eased = try opacity([0, 1], timing: AnimationTiming(duration: seconds(1), timingFunction: .easeIn))
        #expect(approximately(number(eased.value(at: MediaTime(value: 263, timescale: 400))), 0.5))
    }

    @Test func keyTimesOutsideZeroToOneActAsInCoreAnimation() throws {
        // A lyric list longer than the animation: keys past 1 are never reached; before the
        // first key the first value shows; after the last key below 1 the last value holds.
        let timing = AnimationTiming(duration: seconds(10))
        let long = try opacity([0, 10, 20], keyTimes: [0, 1, 2], timing: timing)
        #expect(approximately(number(long.value(at: seconds(5))), 5) && approximately(number(long.value(at: seconds(9.99))), 9.99))
        #expect(long.unreachedKeyTimes == [2])
        let late = try opacity([0, 10], keyTimes: [0.2, 0.6], timing: timing)
        #expect(number(late.value(at: seconds(1))) == 0 && approximately(number(late.value(at: seconds(4))), 5))
        #expect(number(late.value(at: seconds(8))) == 10)
        let steps = try opacity([1, 2, 3], keyTimes: [0, 0.5, 1.5], mode: .discrete, timing: timing)
        #expect(number(steps.value(at: seconds(7))) == 2 && number(steps.value(at: seconds(9.99))) == 2)
    }

    @Test func validationMessages() throws {
        let timing = AnimationTiming(duration: seconds(1))
        #expect(throws: EngineError("values has 3 entries but keyTimes has 5 (expected 3)")) {
            try opacity([0, 1, 0], keyTimes: [0, 0.2, 0.4, 0.6, 1], timing: timing)
        }
        #expect(throws: EngineError("values has 3 entries but keyTimes has 5 (expected 3 or 4)")) {
            try opacity([0, 1, 0], keyTimes: [0, 0.2, 0.4, 0.6, 1], mode: .discrete, timing: timing)
        }
        #expect(throws: EngineError("keyTimes must be non-decreasing numbers, got [0.0, 0.6, 0.4]")) {
            try opacity([0, 1, 0], keyTimes: [0, 0.6, 0.4], mode: .discrete, timing: timing)
        }
        #expect(throws: EngineError("keyTimes must be non-decreasing numbers, got [0.0, nan]")) {
            try opacity([0, 1], keyTimes: [0, .nan], timing: timing)
        }
        #expect(throws: EngineError("value 2 of 2 is a point, but keyPath opacity takes a number")) {
            try KeyframeAnimation(keyPath: .opacity, values: [.number(0), .point(.zero)], timing: timing)
        }
        #expect(throws: EngineError("timingFunctions has 1 entries but 3 values make 2 segments")) {
            try KeyframeAnimation(keyPath: .opacity, values: numbers([0, 1, 0]), timingFunctions: [.easeIn], timing: timing)
        }
        #expect(throws: EngineError("duration must be positive, got 0.0")) {
            try opacity([0, 1], timing: AnimationTiming(duration: .zero))
        }
        #expect(throws: EngineError("set repeatCount or repeatDuration, not both")) {
            try opacity([0, 1], timing: AnimationTiming(duration: seconds(1), repeatCount: 2, repeatDuration: seconds(3)))
        }
        #expect(throws: EngineError.self) {
            try opacity([0, 1], timing: AnimationTiming(duration: seconds(1), repeatCount: 1e12))
        }
        #expect(throws: EngineError("values must not be empty")) { try opacity([], timing: timing) }
        #expect(throws: EngineError.self) { try AnimatableKeyPath(named: "opacty") }
        #expect(try AnimatableKeyPath(named: "transform.rotation.z") == .transformRotation)
        #expect(try AnimatableKeyPath(named: "hidden") == .isHidden)
    }
}
