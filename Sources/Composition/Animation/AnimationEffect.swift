import MoonreelMedia

/// One end of a stretch of composition time; fills can last for ever.
package enum TimelineBound: Comparable, Sendable, Hashable {
    case negativeInfinity
    case at(MediaTime)
    case positiveInfinity
}

/// A stretch `[start, end)` of composition time in which an animation shows values drawn
/// from `values`. Used to find when a layer can be visible and when nothing changes.
struct EffectPiece: Sendable {
    var start: TimelineBound
    var end: TimelineBound
    /// The values the property takes in the piece: one value means constant; several mean
    /// interpolation between them (which stays constant only if they are all equal).
    /// Nil: unknown, because it depends on the property's value without this animation.
    var values: [AnimatableValue]?
}

/// A stretch `[from, to]` of one forward pass, in fractions of the duration.
struct PassPiece {
    var from: Double
    var to: Double
    var values: [AnimatableValue]?
}

extension AnimationTiming {
    /// Past this many pieces (keyframes × passes) an animation is summarised as one piece.
    static let maxExpandedPieces = 10_000

    /// The pieces of composition time in which the animation has an effect, in time order,
    /// from the pieces of one forward pass and the value shown at a fraction (for fills).
    func effectPieces(pass: [PassPiece], valueAtFraction: (Double) -> AnimatableValue?) -> [EffectPiece] {
        var pieces: [EffectPiece] = []
        let begin = TimelineBound.at(beginTime)
        if fillMode.fillsBackwards {
            pieces.append(EffectPiece(start: .negativeInfinity, end: begin,
                                      values: valueAtFraction(fraction(atLocal: .zero)).map { [$0] }))
        }
        let anyValue: [AnimatableValue]? = pass.contains { $0.values == nil } ? nil : pass.flatMap { $0.values ?? [] }
        guard let active = activeDuration, let end = activeEnd else {
            pieces.append(EffectPiece(start: begin, end: .positiveInfinity, values: anyValue))
            return pieces
        }
        let cycles = active.ceilDivided(by: cycle)
        let piecesPerCycle = Int64(pass.count * (autoreverses ? 2 : 1))
        // Piece boundaries follow passes only when a pass maps linearly onto time.
        let passIsLinear = timeOffset.value == 0 && (timingFunction?.isLinear ?? true)
        if passIsLinear, cycles * piecesPerCycle <= Self.maxExpandedPieces {
            for index in 0..<cycles {
                let cycleStart = cycle * index
                for piece in pass {
                    appendPiece(localFrom: cycleStart + duration.scaled(by: piece.from),
                                to: cycleStart + duration.scaled(by: piece.to), piece.values, active, into: &pieces)
                }
                guard autoreverses else { continue }
                for piece in pass.reversed() {
                    appendPiece(localFrom: cycleStart + duration + duration.scaled(by: 1 - piece.to),
                                to: cycleStart + duration + duration.scaled(by: 1 - piece.from), piece.values, active, into: &pieces)
                }
            }
        } else {
            pieces.append(EffectPiece(start: begin, end: .at(end), values: anyValue))
        }
        if holdsAfterEnd {
            pieces.append(EffectPiece(start: .at(end), end: .positiveInfinity,
                                      values: valueAtFraction(fraction(atLocal: active)).map { [$0] }))
        }
        return pieces
    }

    /// Adds the part of a local-time stretch that lies in the active time, in composition time.
    private func appendPiece(localFrom: MediaTime, to localTo: MediaTime, _ values: [AnimatableValue]?,
                             _ active: MediaTime, into pieces: inout [EffectPiece]) {
        let from = MediaTime.max(localFrom, .zero), to = MediaTime.min(localTo, active)
        guard from < to else { return }
        pieces.append(EffectPiece(start: .at(beginTime + from.scaled(by: 1 / speed)),
                                  end: .at(beginTime + to.scaled(by: 1 / speed)), values: values))
    }
}
