@testable import MoonreelEngine
import Testing

@Suite struct TimingFunctionTests {
    // At curve parameter s = 0.5 a cubic Bézier from (0,0) to (1,1) is at
    // x = 3/8·(x1 + x2) + 1/8 and y = 3/8·(y1 + y2) + 1/8; solving must find that point.
    @Test func easeInAtItsMidParameter() {
        // x = 3/8·1.42 + 1/8 = 0.6575, y = 3/8·1 + 1/8 = 0.5
        #expect(abs(TimingFunction.easeIn(0.6575) - 0.5) < 1e-12)
    }

    @Test func defaultAtItsMidParameter() {
        // x = 3/8·0.5 + 1/8 = 0.3125, y = 3/8·1.1 + 1/8 = 0.5375
        #expect(abs(TimingFunction.default(0.3125) - 0.5375) < 1e-12)
    }

    @Test func customCurveAtItsMidParameter() throws {
        // (0.1, 0.9, 0.3, -0.5): x = 3/8·0.4 + 1/8 = 0.275, y = 3/8·0.4 + 1/8 = 0.275.
        let curve = try TimingFunction(controlPoints: 0.1, 0.9, 0.3, -0.5)
        #expect(abs(curve(0.275) - 0.275) < 1e-12)
    }

    @Test func symmetricAndLinearCurves() {
        #expect(abs(TimingFunction.easeInEaseOut(0.5) - 0.5) < 1e-12)
        #expect(abs(TimingFunction.easeInEaseOut(0.2) + TimingFunction.easeInEaseOut(0.8) - 1) < 1e-12)
        #expect(TimingFunction.linear(0.3) == 0.3)
        #expect(TimingFunction.easeOut(0) == 0 && TimingFunction.easeOut(1) == 1)
        #expect(TimingFunction.easeIn(0.5) < 0.5 && TimingFunction.easeOut(0.5) > 0.5)
    }

    @Test func flatSlopeStillSolves() throws {
        // x1 = x2 = 1 makes dx/ds = 0 at s = 1: Newton stalls there, bisection finishes.
        let curve = try TimingFunction(controlPoints: 1, 0, 1, 1)
        // Here x(s) = 1 − (1−s)³; at s = 0.9, x = 0.999 and y = 3·0.1·0.81 + 0.729 = 0.972.
        #expect(abs(curve(0.999) - 0.972) < 1e-9)
    }

    @Test func namesAndErrors() throws {
        #expect(try TimingFunction(named: "easeOut") == .easeOut)
        #expect(throws: EngineError("unknown timing function \"bounce\" (known: linear, easeIn, easeOut, easeInEaseOut, default)")) {
            try TimingFunction(named: "bounce")
        }
        #expect(throws: EngineError.self) { try TimingFunction(controlPoints: 1.5, 0, 0.5, 1) }
    }
}
