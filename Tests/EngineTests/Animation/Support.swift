@testable import MoonreelEngine

/// Exact test times: `seconds(2.5)` is 5/2 s.
func seconds(_ value: Double) -> MediaTime {
    MediaTime(value: Int64((value * 1000).rounded()), timescale: 1000).reduced()
}

func number(_ value: AnimatableValue?) -> Double? {
    if case .number(let n)? = value { return n }
    return nil
}

func approximately(_ a: Double?, _ b: Double, tolerance: Double = 1e-9) -> Bool {
    guard let a else { return false }
    return abs(a - b) <= tolerance
}

func numbers(_ list: [Double]) -> [AnimatableValue] { list.map { .number($0) } }
