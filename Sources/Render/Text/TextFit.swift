import MoonreelComposition
import MoonreelMedia

/// Whether each text layer of a tree shows all of its text, checked once before an export
/// renders (so a dry run says it too): a line drawn smaller to fit is noted, one that does
/// not fit its layer even at its smallest allowed size is cut, and a text that runs past its
/// layer is drawn outside it.
/// Each string a layer shows is checked: its own and those its animations give it (a title
/// switching to "CONGRATULATIONS GRADUATES" ran off a portrait frame unsaid); its style and
/// bounds are the layer's own.
package enum TextFit {
    /// A `textTruncated` or `textOverflow` warning for each text layer under `root` (itself
    /// included) that is not hidden and does not show its text whole inside its bounds, and
    /// a `textShrunk` note for one drawn below its `fontSize` to fit.
    package static func diagnostics(under root: Layer, layouts: TextLayout? = nil) throws -> [Diagnostic] {
        let layouts = try layouts ?? TextLayout()
        var found: [Diagnostic] = []
        // Fonts and weights not installed, once each: the layers that ask for one (a lyric's
        // hundred lines).
        var unavailable: [Unavailable] = []
        func ask(_ face: Unavailable) {
            if let index = unavailable.firstIndex(where: { $0.asked == face.asked }) { unavailable[index].layers += face.layers }
            else { unavailable.append(face) }
        }
        var pending = [root]
        while let layer = pending.popLast() {
            guard !layer.properties.isHidden else { continue }
            pending += layer.sublayers.reversed()
            guard let model = layer.textStyle else { continue }
            let texts = shownTexts(layer, model: model)
            guard !texts.isEmpty else { continue }
            let family = model.fontFamily.quotedForMessage(limit: 100)
            if let used = try layouts.substitutedFamily(model) {
                ask(Unavailable(asked: "the font \(family)", drawn: "in \(used)", level: .warning,
                                remedy: "install the font, ship it with the effect (effect.asset(\"Font.ttf\")), or name an installed family (fc-list : family)", layers: [layer]))
            } else if let drawn = layouts.drawnWeight(model) {
                ask(Unavailable(asked: "\(family) at fontWeight \(model.fontWeight) (\(weightName(model.fontWeight)))", drawn: "at \(drawn) (\(weightName(drawn)))", level: .note,
                                remedy: "install the family's other weights (Noto Sans CJK: fonts-noto-cjk-extra), or ask for an installed one (fc-list \"\(model.fontFamily)\" style)", layers: [layer]))
            }
            for (style, box) in texts {
                let missing = try layouts.missingCharacters(style)
                if !missing.isEmpty { found.append(glyphsMissing(missing, layer: layer, style: style)) }
                let drawn = try layouts.fitted(style, box: box)
                let fit = try layouts.fit(drawn, box: box)
                guard fit != .whole || drawn.fontSize < style.fontSize else { continue }
                found.append(diagnostic(fit, layer: layer, asked: style, drawn: drawn, box: box))
            }
        }
        for face in unavailable {
            guard let first = face.layers.first else { continue }
            let (others, plural) = (face.layers.count > 1 ? " and \(face.layers.count - 1) more" : "", face.layers.count > 1)
            found.append(Diagnostic(.fontSubstituted, face.level,
                                    "\(name(of: first, box: first.properties.bounds.size))\(others) ask\(plural ? "" : "s") for \(face.asked), which is not installed: \(plural ? "they are" : "it is") drawn \(face.drawn)",
                                    remedy: face.remedy, origin: first.origin, time: first.animations.map(\.animation.timing.beginTime.seconds).min()))
        }
        return found
    }

    /// A font, or a weight of one, that text asks for and is not installed, with what it is
    /// drawn in instead and the layers asking.
    private struct Unavailable {
        /// "the font \"Helvetica Neue\"", or "\"Noto Sans CJK JP\" at fontWeight 100 (thin)".
        let asked: String
        /// "in DejaVu Sans", or "at 400 (regular)".
        let drawn: String
        let level: Diagnostic.Level
        let remedy: String
        var layers: [Layer]
    }

    /// The CSS name of a weight: 100 thin … 400 regular … 900 black.
    private static func weightName(_ weight: Int) -> String {
        let names = [100: "thin", 200: "extra light", 300: "light", 400: "regular", 500: "medium", 600: "semibold", 700: "bold", 800: "extra bold", 900: "black"]
        return names[min(max((weight + 50) / 100 * 100, 100), 900)] ?? "regular"
    }

    /// The layer's text as its own values give it, and as drawn at each value its `string`
    /// animations show, with the style and bounds it has then (an effect's word layer moves
    /// and resizes with each word); each once, empty ones and sizes no layout takes left out,
    /// at most 100 (a counter's thousand values are alike).
    private static func shownTexts(_ layer: Layer, model: TextStyle) -> [(style: TextStyle, box: Size)] {
        var times: [MediaTime] = []
        for attached in layer.animations {
            let timing: AnimationTiming, keyTimes: [Double]
            switch attached.animation {
            case .keyframe(let animation) where animation.keyPath == .string: (timing, keyTimes) = (animation.timing, animation.keyTimes)
            case .basic(let animation) where animation.keyPath == .string: (timing, keyTimes) = (animation.timing, [0, 1])
            default: continue
            }
            // Inside each key's stretch of the first pass, where its value shows.
            for (index, key) in keyTimes.enumerated() {
                let next = index + 1 < keyTimes.count ? keyTimes[index + 1] : 1
                guard let offset = MediaTime(seconds: timing.duration.seconds * min((key + next) / 2, 0.999)) else { continue }
                times.append(timing.beginTime + offset)
            }
        }
        struct Shown: Hashable {
            let style: TextStyle
            let box: Size
        }
        var seen: Set<Shown> = [], texts: [(style: TextStyle, box: Size)] = []
        for resolved in [layer.modelValues] + times.map({ layer.resolved(at: $0) }) {
            guard texts.count < 100, let style = resolved.text, !style.string.isEmpty, style.fontSize.isFinite, style.fontSize > 0, style.fontSize <= 4096 else { continue }
            let box = resolved.properties.bounds.size
            guard box.width >= 1, box.height >= 1, box.width <= Double(PixelLimits.maxSide), box.height <= Double(PixelLimits.maxSide) else { continue }
            if seen.insert(Shown(style: style, box: box)).inserted { texts.append((style, box)) }
        }
        return texts
    }

    private static func glyphsMissing(_ missing: [Unicode.Scalar], layer: Layer, style: TextStyle) -> Diagnostic {
        let codes = missing.prefix(5).map { "\(String($0)) U+\(String($0.value, radix: 16, uppercase: true))" }.joined(separator: ", ")
            + (missing.count > 5 ? " and \(missing.count - 5) more" : "")
        return Diagnostic(.glyphMissing, .warning, "\(name(of: layer, box: layer.properties.bounds.size)) draws \(style.string.quotedForMessage(limit: 80)) with \(codes) as boxes: no installed font has \(missing.count == 1 ? "it" : "them")",
                          remedy: "install a font that has \(missing.count == 1 ? "it" : "them") (emoji: fonts-noto-color-emoji) or set font to one", origin: layer.origin, time: layer.animations.map(\.animation.timing.beginTime.seconds).min())
    }

    /// "text layer \"cue 3 (lyrics.csv:4)\"", or where an unnamed one is.
    private static func name(of layer: Layer, box: Size) -> String {
        layer.properties.name.map { "text layer \($0.quotedForMessage(limit: 200))" }
            ?? "a text layer at \(shortNumber(layer.properties.frame.x)), \(shortNumber(layer.properties.frame.y)) (\(shortNumber(box.width))×\(shortNumber(box.height)))"
    }

    private static func diagnostic(_ fit: TextLayout.Fit, layer: Layer, asked: TextStyle, drawn: TextStyle, box: Size) -> Diagnostic {
        let name = name(of: layer, box: box)
        let size = drawn.fontSize < asked.fontSize
            ? "at \(shortNumber(drawn.fontSize)) px, the smallest its minimumScaleFactor allows (fontSize \(shortNumber(asked.fontSize)))"
            : "at \(shortNumber(drawn.fontSize)) px"
        // Where it first shows: its earliest animation (a lyric line's), else the start.
        let time = layer.animations.map(\.animation.timing.beginTime.seconds).min()
        switch fit {
        case .whole:
            return Diagnostic(.textShrunk, .note, "\(name) draws \(asked.string.quotedForMessage(limit: 80)) at \(shortNumber(drawn.fontSize)) px (fontSize \(shortNumber(asked.fontSize))) so that it fits",
                              origin: layer.origin, time: time)
        case .truncated:
            let limit = asked.maxLines > 0 ? "\(asked.maxLines) line\(asked.maxLines == 1 ? "" : "s")" : "its box"
            return Diagnostic(.textTruncated, .warning, "\(name) cuts \(asked.string.quotedForMessage(limit: 80)) to \(limit) \(size)",
                              remedy: "shorten the text, or give it more lines (maxLines), a wider frame, a smaller fontSize or minimumScaleFactor", origin: layer.origin, time: time)
        case .overflows:
            return Diagnostic(.textOverflow, .warning, "\(name) draws \(asked.string.quotedForMessage(limit: 80)) \(size) past its \(shortNumber(box.width))×\(shortNumber(box.height)) box",
                              remedy: "make its frame larger, or set isWrapped, maxLines and truncationMode to keep it inside", origin: layer.origin, time: time)
        }
    }
}
