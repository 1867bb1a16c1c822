@testable import MoonreelEngine
@testable import MoonreelComposition
import Testing

@Suite struct BasicAnimationTests {
    let halfway = seconds(1)
    let timing = AnimationTiming(duration: seconds(2))

    func middle(from: Double? = nil, to: Double? = nil, by: Double? = nil, current: Double) throws -> Double? {
        let animation = try BasicAnimation(keyPath: .opacity, fromValue: from.map { .number($0) }, toValue: to.map { .number($0) },
                                           byValue: by.map { .number($0) }, timing: timing)
        return number(animation.value(at: halfway, current: .number(current)))
    }

    @Test func fromToByCombinations() throws {
        #expect(try middle(from: 0, to: 10, current: 99) == 5)
        #expect(try middle(from: 2, by: 4, current: 99) == 4)      // 2 → 6
        #expect(try middle(to: 10, by: 4, current: 99) == 8)       // 6 → 10
        #expect(try middle(from: 0, current: 8) == 4)              // 0 → current
        #expect(try middle(to: 10, current: 5) == 7.5)             // current → 10
        #expect(try middle(by: 2, current: 5) == 6)                // 5 → 7
        #expect(throws: EngineError("set at most two of fromValue, toValue and byValue")) {
            try middle(from: 0, to: 1, by: 1, current: 0)
        }
    }

    @Test func transformsInterpolateDecomposed() throws {
        // Halfway between no turn and a quarter turn is an eighth turn, not a squashed matrix.
        let turn = try BasicAnimation(keyPath: .transform, fromValue: .transform(.identity),
                                      toValue: .transform(.rotation(Double.pi / 2)), timing: timing)
        guard case .transform(let t)? = turn.value(at: halfway, current: nil) else { Issue.record("no transform"); return }
        let expected = AffineTransform.rotation(Double.pi / 4)
        #expect(approximately(t.a, expected.a) && approximately(t.b, expected.b) && approximately(t.c, expected.c))
        // From +170° to −170° is a 20° step through 180°, the short way round.
        let degree = Double.pi / 180
        let short = try BasicAnimation(keyPath: .transform, fromValue: .transform(.rotation(170 * degree)),
                                       toValue: .transform(.rotation(-170 * degree)), timing: timing)
        guard case .transform(let u)? = short.value(at: halfway, current: nil) else { Issue.record("no transform"); return }
        #expect(approximately(u.a, -1) && approximately(u.b, 0, tolerance: 1e-9))
        // Scale 1 → 3 and translation 0 → 10: halfway scale 2, translation 5.
        let grow = try BasicAnimation(keyPath: .transform, fromValue: .transform(.identity),
                                      toValue: .transform(AffineTransform.scale(3, 3).concatenating(.translation(10, 0))), timing: timing)
        #expect(grow.value(at: halfway, current: nil) == .transform(AffineTransform(a: 2, b: 0, c: 0, d: 2, tx: 5, ty: 0)))
    }

    @Test func transformByMeansThen() throws {
        let move = try BasicAnimation(keyPath: .transform, fromValue: .transform(.scale(2, 2)),
                                      byValue: .transform(.translation(10, 0)), timing: AnimationTiming(duration: seconds(1), fillMode: .forwards, isRemovedOnCompletion: false))
        // scale 2 then move 10: (1, 0) → (2, 0) → (12, 0)
        guard case .transform(let end)? = move.value(at: seconds(1), current: nil) else { Issue.record("no transform"); return }
        #expect(end.apply(Point(x: 1, y: 0)) == Point(x: 12, y: 0))
    }

    @Test func discreteValuesSwitchAtHalfway() throws {
        let swap = try BasicAnimation(keyPath: .string, fromValue: .string("a"), toValue: .string("b"), timing: timing)
        #expect(swap.value(at: seconds(0.999), current: nil) == .string("a"))
        #expect(swap.value(at: seconds(1), current: nil) == .string("b"))
        #expect(throws: EngineError("byValue needs a value that can be added; keyPath string takes a string")) {
            try BasicAnimation(keyPath: .string, byValue: .string("x"))
        }
    }

    @Test func decompositionRoundTrips() {
        let samples = [AffineTransform.rotation(0.7).scaledBy(2, 0.5).translatedBy(3, -4),
                       AffineTransform(a: 1, b: 0.2, c: 0.5, d: 1.5, tx: 7, ty: 8),
                       AffineTransform.scale(1, -1), AffineTransform.scale(-2, 3).rotatedBy(2.5)]
        for original in samples {
            let back = original.decomposed.recomposed
            for (x, y) in [(back.a, original.a), (back.b, original.b), (back.c, original.c), (back.d, original.d), (back.tx, original.tx), (back.ty, original.ty)] {
                #expect(approximately(x, y), "\(original) → \(back)")
            }
        }
        // A mirror keeps x and flips y; a rotation shows as its angle.
        #expect(AffineTransform.scale(1, -1).decomposed.scaleY == -1)
        #expect(approximately(AffineTransform.rotation(0.7).decomposed.angle, 0.7))
    }
}
