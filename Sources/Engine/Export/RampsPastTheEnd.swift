import MoonreelComposition
import MoonreelMedia

extension ExportPlanner {
    /// A `rangeClipped` warning for each volume, opacity, transform or crop ramp that runs on
    /// past the composition's end: the output stops partway through it, so a fade out
    /// ends the sound at 0.8 instead of 0, abruptly; one that starts at the end or later is
    /// never heard or seen. Layer instructions count in the instruction that reaches the end.
    func rampsPastTheEnd() -> [Diagnostic] {
        let end = composition.duration
        var notes: [Diagnostic] = []
        for parameters in settings.audioMix?.inputParameters ?? [] {
            let track = "audio track \(composition.resolvedTrackID(parameters.trackID, source: parameters.source, mediaType: .audio))"
            notes += parameters.volume.rampsPast(end).map { rampNote("volume", of: track, $0, end: end, shown: Self.level) }
        }
        for instruction in settings.videoComposition?.instructions ?? [] where instruction.timeRange.end >= end {
            for layer in instruction.layerInstructions {
                let track = "video track \(composition.resolvedTrackID(layer.trackID, source: layer.source, mediaType: .video))"
                notes += layer.opacity.rampsPast(end).map { rampNote("opacity", of: track, $0, end: end, shown: Self.level) }
                notes += layer.transform.rampsPast(end).map { rampNote("transform", of: track, $0, end: end) { _ in nil } }
                notes += (layer.crop?.rampsPast(end) ?? []).map { rampNote("crop", of: track, $0, end: end) { _ in nil } }
            }
        }
        return notes + layersShownAfterTheEnd(end)
    }

    /// A `rangeClipped` warning naming the layers of the animation tool that would first be
    /// seen at or after the composition's end (a fade in or an appearance timed past it): a
    /// logo bug with a 6 s delay over a 4 s clip never appeared, unsaid. One warning for all
    /// (a lyric file's lines past the end are many), at the line that made the first; a layer
    /// under one named is not named again.
    private func layersShownAfterTheEnd(_ end: MediaTime) -> [Diagnostic] {
        guard let tool = settings.videoComposition?.animationTool else { return [] }
        let timeline = LayerTimeline(root: tool.parentLayer)
        var late = Set<Int>(), named: [(name: String, start: MediaTime, origin: SourceLine?)] = []
        for (index, layer) in timeline.layers.enumerated() {
            guard let first = timeline.visibleSpans[index].first, case .at(let start) = first.start,
                  start + MediaTime(value: 1, timescale: 100) >= end else { continue }
            late.insert(index)
            guard layer.parent < 0 || !late.contains(layer.parent) else { continue }
            let properties = layer.model.properties
            let name = properties.name.map { "layer \($0.quotedForMessage(limit: 60))" }
                ?? layer.model.text.map { "text layer \($0.string.quotedForMessage(limit: 40))" } ?? (properties.contents != nil ? "a picture layer" : "a layer")
            named.append((name, start, layer.origin))
        }
        guard let first = named.first else { return [] }
        let at = { (time: MediaTime) in shortNumber((time.seconds * 100).rounded() / 100) }
        let list = named.prefix(3).map { "\($0.name) at \(at($0.start)) s" }.joined(separator: ", ") + (named.count > 3 ? " and \(named.count - 3) more" : "")
        return [Diagnostic(.rangeClipped, .warning,
                           "\(list) would first be seen at or after the end (\(shortSeconds(end)) s): \(named.count == 1 ? "it is" : "they are") never seen",
                           remedy: "show \(named.count == 1 ? "it" : "them") before \(shortSeconds(end)) s (an effect's delay or start)", origin: first.origin, time: end.seconds)]
    }

    /// A volume or an opacity to two decimals.
    private static func level(_ value: Double) -> String? { shortNumber((value * 100).rounded() / 100) }

    /// What a ramp past `end` does there; `shown` writes its value (nil: a transform or a
    /// crop, said as how far through the ramp the output ends).
    private func rampNote<Value>(_ property: String, of track: String, _ ramp: (range: TimeRange, to: Value, fraction: Double, valueAtEnd: Value?),
                                 end: MediaTime, shown: (Value) -> String?) -> Diagnostic {
        let asked = "the \(property) ramp over \(shortSeconds(ramp.range.start))–\(shortSeconds(ramp.range.end)) s of \(track)"
        let sense = property == "volume" ? "heard" : "seen"
        guard let reached = ramp.valueAtEnd else {
            return Diagnostic(.rangeClipped, .warning, "\(asked) lies past the end (\(shortSeconds(end)) s): it is never \(sense)",
                              remedy: "start it before \(shortSeconds(end)) s", time: end.seconds)
        }
        let through = "the output ends \(shortNumber((ramp.fraction * 100).rounded())) % of the way through it"
        let at = shown(reached).flatMap { value in shown(ramp.to).map { ", at \(property) \(value), not \($0)" } } ?? ", short of its last \(property)"
        return Diagnostic(.rangeClipped, .warning, "\(asked) reaches past the end (\(shortSeconds(end)) s): \(through)\(at)",
                          remedy: "end the ramp by \(shortSeconds(end)) s", time: end.seconds)
    }
}
