import MoonreelComposition
import Foundation
import MoonreelMedia

/// Layers placed past the frame's edges, whose words or picture are then not in the video and
/// nothing else says so (the text fits its own box; the picture is drawn):
/// - a text layer whose words, placed in its box as its alignment puts them, reach outside
///   the render size (an effect made for another `renderSize`, a landscape lyrics layer over
///   a portrait video, a frame typed wrong);
/// - a picture layer (`contents`) that would fit in the frame but reaches past an edge (a
///   logo placed for 1920×1080 on a 1280×720 export). A picture larger than the frame on a
///   side is not judged: a Ken Burns photo is meant to show only part of itself.
/// Checked once before an export renders. A layer that stays put is judged on its model
/// values; one that moves (an animated position, bounds or translation, its own or an
/// ancestor's: a lower third sliding in) where it comes to rest while shown (a lower third
/// made for a wider frame holds with its right end cut). Text and sublayers under a turned
/// or scaled layer are not judged (their places are in its own coordinates).
package enum LayerPlacement {
    /// How far text or a picture may reach past an edge, in pixels, before it counts:
    /// anti-aliasing and rounding put a pixel's fringe there.
    static let tolerance = 1.0
    /// Times a moving layer is looked at in each pass of an animation that moves it (a
    /// 2 s slide across 1920 px moves 60 px between looks); at most `maximumLooks` in all.
    static let looksPerPass = 32
    static let maximumLooks = 512
    /// How long a moving layer must stay in one place to count as resting there: half a
    /// second, time to read a name at a glance (about two words at a reading speed of 250 a
    /// minute); shorter stops are part of the motion.
    static let minimumRest = MediaTime(value: 1, timescale: 2)
    /// The cells a resting text or picture is divided into to find the part never shown.
    static let coverageColumns = 64, coverageRows = 16

    /// Where a layer is at one look: its box in the root's coordinates, whether it shows,
    /// and what its sublayers are placed by (its bounds, its flip; turned: not judged).
    private struct Place {
        var box: Rect
        var shows: Bool
        var turned: Bool
        var bounds: Rect
        var isGeometryFlipped: Bool
    }

    /// A `layerOffFrame` warning for each text or picture layer under `root` (the animation
    /// tool's parent layer, over the whole `renderSize`, y up) that reaches past the frame;
    /// a moving one is looked at until `shownUntil` (the composition's end), not after.
    package static func diagnostics(under root: Layer, renderSize: Size, layouts: TextLayout? = nil, shownUntil: MediaTime? = nil) throws -> [Diagnostic] {
        let layouts = try layouts ?? TextLayout()
        var found: [Diagnostic] = []
        let canvas = Rect(x: 0, y: 0, width: renderSize.width, height: renderSize.height)
        let rootPlace = Place(box: canvas, shows: true, turned: false, bounds: root.properties.bounds, isGeometryFlipped: root.properties.isGeometryFlipped)
        // Each layer with the layers above it (below the root), its parent's place on model
        // values, and the times the animations that move those layers are looked at.
        var pending: [(layer: Layer, ancestors: [Layer], parent: Place, chainLooks: [MediaTime], chainRunsOn: Bool)] =
            root.sublayers.reversed().map { ($0, [], rootPlace, [], false) }
        while let (layer, ancestors, parent, chainLooks, chainRunsOn) = pending.popLast() {
            // A hidden layer, with its sublayers, is not drawn unless an animation shows it.
            guard !layer.properties.isHidden || layer.animations.contains(where: { $0.animation.keyPath == .isHidden }) else { continue }
            let looks = merged(chainLooks, lookTimes(of: layer, until: shownUntil))
            // A crawl repeating for ever never holds its last look's place.
            let runsOn = chainRunsOn || layer.animations.contains { isPlacing($0.animation.keyPath) && $0.animation.timing.runsPastFirstCycle }
            let model = place(layer.modelValues, in: parent)
            // Only a layer that moves, or lies under one that does, is looked at over time:
            // each look places the chain from the root at that time.
            let chain = ancestors + [layer]
            let atLooks = looks.map { time in chain.reduce(rootPlace) { place($1.resolved(at: time), in: $0) } }
            if !looks.isEmpty {
                if let lost = try lostWhileMoving(layer, places: atLooks, at: looks, until: shownUntil, holdsLast: !runsOn,
                                                  renderSize: renderSize, layouts: layouts) { found.append(lost) }
            } else if !layer.properties.isHidden, !model.turned || layer.properties.contents != nil,
                      let lost = try lostInPlace(layer, box: model.box, renderSize: renderSize, layouts: layouts) {
                found.append(lost)
            }
            // A turned or scaled layer's frame is the box around it: its sublayers' places are
            // not measured in that box, so they are not judged.
            if looks.isEmpty ? !model.turned : atLooks.contains(where: { !$0.turned }) {
                pending += layer.sublayers.reversed().map { ($0, chain, model, looks, runsOn) }
            }
        }
        return found
    }

    /// The layer's place given its parent's, at one look (or on model values).
    private static func place(_ resolved: ResolvedLayer, in parent: Place) -> Place {
        let properties = resolved.properties
        let transform = properties.transform
        let turned = parent.turned || transform.a != 1 || transform.b != 0 || transform.c != 0 || transform.d != 1
        return Place(box: place(properties.frame, ofParentBounds: parent.bounds, flipped: parent.isGeometryFlipped, in: parent.box),
                     shows: parent.shows && resolved.isVisible, turned: turned,
                     bounds: properties.bounds, isGeometryFlipped: properties.isGeometryFlipped)
    }

    /// The times a layer's own placing animations are looked at (`AnimationTiming.lookTimes`),
    /// before `end`; empty when none moves it.
    private static func lookTimes(of layer: Layer, until end: MediaTime?) -> [MediaTime] {
        let times = layer.animations.filter { isPlacing($0.animation.keyPath) }.flatMap { $0.animation.timing.lookTimes(perPass: looksPerPass) }
        return times.filter { time in end.map { time < $0 } ?? true }
    }

    /// Two lists of look times as one, in order, thinned evenly to `maximumLooks`.
    private static func merged(_ first: [MediaTime], _ second: [MediaTime]) -> [MediaTime] {
        guard !second.isEmpty else { return first }
        let ordered = Set(first + second).sorted()
        guard ordered.count > maximumLooks else { return ordered }
        return (0..<maximumLooks).map { ordered[$0 * (ordered.count - 1) / (maximumLooks - 1)] }
    }

    /// The warning for a layer that stays put: its text or picture past an edge.
    private static func lostInPlace(_ layer: Layer, box: Rect, renderSize: Size, layouts: TextLayout) throws -> Diagnostic? {
        if let picture = layer.properties.contents, fits(box, in: renderSize) {
            let edges = edgesPassed(by: box, renderSize: renderSize)
            if !edges.isEmpty {
                let shownWidth = max(0, min(box.x + box.width, renderSize.width) - max(box.x, 0))
                let shownHeight = max(0, min(box.y + box.height, renderSize.height) - max(box.y, 0))
                return pictureWarning(layer, picture, lost: 1 - shownWidth * shownHeight / (box.width * box.height),
                                      where: "lies over \(span(box, edges: edges, renderSize: renderSize))")
            }
        }
        guard layer.properties.transform.isIdentity, let (style, drawn) = try textPlace(layer, box: box, layouts: layouts) else { return nil }
        let edges = edgesPassed(by: drawn, renderSize: renderSize)
        guard !edges.isEmpty else { return nil }
        return textWarning(layer, style, "lays out \(style.string.quotedForMessage(limit: 60)) over \(span(drawn, edges: edges, renderSize: renderSize)): what lies there is not in the video")
    }

    /// The warning for a layer that moves: where it comes to rest while shown (the same
    /// place for `minimumRest` or more: a lower third holding after its slide, a slide-in
    /// whose model place lies off the frame, so it jumps back there), what lies past an edge
    /// counts, as for a layer that stays put. Passing through the frame is not being shown:
    /// a slide sweeps every word past for an instant. One that never rests (a crawl, whose
    /// copies of a repeated text take turns) is not judged. `holdsLast`: whether the last look's
    /// place stays (until `end`): not for motion that runs on past its looks, a crawl
    /// repeating for ever (whose last look, held to the end, was taken for a rest past the
    /// frame's edge: the ticker's own example warned, and --strict wrote nothing).
    private static func lostWhileMoving(_ layer: Layer, places: [Place], at looks: [MediaTime], until end: MediaTime?, holdsLast: Bool,
                                        renderSize: Size, layouts: TextLayout) throws -> Diagnostic? {
        var resting: [Place] = []
        var runStart = 0
        for index in places.indices {
            let next = index + 1
            guard next == places.count || !(places[next].shows == places[runStart].shows && same(places[next].box, places[runStart].box)) else { continue }
            // A run of looks at one place ends here; it holds until the next look (the last, until
            // the end). One look alone between others is a moving layer caught in passing: a
            // slow crawl's looks lie half a second apart, each taken for a rest.
            let isLast = next == places.count
            let held = !isLast ? looks[next] - looks[runStart] : holdsLast ? end.map { $0 - looks[runStart] } : .zero
            if places[runStart].shows, !places[runStart].turned, next - runStart >= 2 || isLast, held.map({ $0 >= minimumRest }) ?? true {
                resting.append(places[runStart])
            }
            runStart = next
        }
        guard let last = resting.last else { return nil }
        if let picture = layer.properties.contents, resting.allSatisfy({ fits($0.box, in: renderSize) }) {
            let lost = neverInside(resting.map(\.box), renderSize: renderSize)
            if lost > 0 {
                return pictureWarning(layer, picture, lost: lost, where: "rests at \(span(last.box, edges: edgesPassed(by: last.box, renderSize: renderSize), renderSize: renderSize))")
            }
        }
        var drawn: [Rect] = []
        var shown: TextStyle?
        // The text's place in its box is laid out once per box size (a slide keeps the size).
        var laidOut: [Size: Rect?] = [:]
        for place in resting {
            let size = Size(width: place.box.width, height: place.box.height)
            if laidOut[size] == nil {
                let atOrigin = try textPlace(layer, box: Rect(x: 0, y: 0, width: size.width, height: size.height), layouts: layouts)
                laidOut[size] = .some(atOrigin?.1)
                shown = atOrigin?.0 ?? shown
            }
            guard let inBox = laidOut[size] ?? nil else { continue }
            drawn.append(Rect(x: place.box.x + inBox.x, y: place.box.y + inBox.y, width: inBox.width, height: inBox.height))
        }
        guard let style = shown, let lastDrawn = drawn.last, neverInside(drawn, renderSize: renderSize) > 0 else { return nil }
        return textWarning(layer, style, "rests with \(style.string.quotedForMessage(limit: 60)) over \(span(lastDrawn, edges: edgesPassed(by: lastDrawn, renderSize: renderSize), renderSize: renderSize)): what lies there is not in the video")
    }

    /// Two looks at the same place, to a tenth of a pixel.
    private static func same(_ a: Rect, _ b: Rect) -> Bool {
        abs(a.x - b.x) < 0.1 && abs(a.y - b.y) < 0.1 && abs(a.width - b.width) < 0.1 && abs(a.height - b.height) < 0.1
    }

    /// The layer's text and where its lines are drawn in `box`; nil without text to judge.
    private static func textPlace(_ layer: Layer, box: Rect, layouts: TextLayout) throws -> (TextStyle, Rect)? {
        guard let style = layer.textStyle, !style.string.isEmpty, style.fontSize.isFinite, style.fontSize > 0, style.fontSize <= 4096,
              box.width >= 1, box.height >= 1, box.width <= Double(PixelLimits.maxSide), box.height <= Double(PixelLimits.maxSide) else { return nil }
        let text = try layouts.measuredSize(style, wrapWidth: style.isWrapped ? box.width : nil)
        var (width, height) = (min(text.width, box.width), min(text.height, box.height))
        let left: Double
        switch style.alignment {
        case .left, .justified, .natural: left = box.x
        case .center: left = box.x + (box.width - width) / 2
        case .right: left = box.x + box.width - width
        }
        // Transparent text shows only its highlighted start (a title's letter drawn with its
        // line after it, to keep the line's baseline): that start is what is judged.
        if style.foregroundColor.alpha == 0, !style.isWrapped {
            guard style.highlightedScalars > 0, style.highlightColor.map({ $0.alpha > 0 }) ?? false else { return nil }
            var lit = style
            lit.string = String(String.UnicodeScalarView(style.string.unicodeScalars.prefix(style.highlightedScalars)))
            width = min(width, try layouts.measuredSize(lit, wrapWidth: nil).width)
        }
        // Text starts at the top of its box (y up: the box's upper edge).
        return (style, Rect(x: left, y: box.y + box.height - height, width: width, height: height))
    }

    /// The share of a rectangle resting at one or more places (the same size at each) never inside the
    /// frame: it is cut in cells, and a cell counts as shown when its centre is inside the
    /// frame (within the tolerance) at some look.
    private static func neverInside(_ looks: [Rect], renderSize: Size) -> Double {
        var shown = [Bool](repeating: false, count: coverageColumns * coverageRows)
        var remaining = shown.count
        for rect in looks where rect.width > 0 && rect.height > 0 {
            for row in 0..<coverageRows {
                let y = rect.y + (Double(row) + 0.5) / Double(coverageRows) * rect.height
                guard y >= -tolerance, y <= renderSize.height + tolerance else { continue }
                for column in 0..<coverageColumns where !shown[row * coverageColumns + column] {
                    let x = rect.x + (Double(column) + 0.5) / Double(coverageColumns) * rect.width
                    guard x >= -tolerance, x <= renderSize.width + tolerance else { continue }
                    shown[row * coverageColumns + column] = true
                    remaining -= 1
                }
            }
            if remaining == 0 { return 0 }
        }
        return Double(remaining) / Double(shown.count)
    }

    /// A picture that would fit in the frame (not larger on a side, not drawn at no size).
    private static func fits(_ box: Rect, in renderSize: Size) -> Bool {
        box.width >= 1 && box.height >= 1 && box.width <= renderSize.width && box.height <= renderSize.height
    }

    private static func pictureWarning(_ layer: Layer, _ picture: ImageSource, lost: Double, where place: String) -> Diagnostic {
        let name = layer.properties.name.map { "picture layer \($0.quotedForMessage(limit: 200))" } ?? "a picture layer"
        let file = (picture.path as NSString).lastPathComponent.quotedForMessage(limit: 80)
        let said = lost >= 1 ? "none of it is in the video" : "\(shortNumber(max(1, (lost * 100).rounded()))) % of it is not in the video"
        return Diagnostic(.layerOffFrame, .warning, "\(name) (\(file)) \(place): \(said)",
                          remedy: "place it inside the frame (an effect takes the video composition's renderSize)",
                          origin: layer.origin, time: layer.animations.map(\.animation.timing.beginTime.seconds).min())
    }

    private static func textWarning(_ layer: Layer, _ style: TextStyle, _ what: String) -> Diagnostic {
        let name = layer.properties.name.map { "text layer \($0.quotedForMessage(limit: 200))" } ?? "a text layer"
        return Diagnostic(.layerOffFrame, .warning, "\(name) \(what)",
                          remedy: "place it inside the frame (an effect takes the video composition's renderSize)",
                          origin: layer.origin, time: layer.animations.map(\.animation.timing.beginTime.seconds).min())
    }

    /// The edges of the frame `drawn` reaches past by more than the tolerance.
    private static func edgesPassed(by drawn: Rect, renderSize: Size) -> [String] {
        var edges: [String] = []
        if drawn.x < -tolerance { edges.append("left") }
        if drawn.x + drawn.width > renderSize.width + tolerance { edges.append("right") }
        if drawn.y < -tolerance { edges.append("bottom") }
        if drawn.y + drawn.height > renderSize.height + tolerance { edges.append("top") }
        return edges
    }

    /// "x 1240…1440, y 20…120, past the right edge of the 1280×720 frame".
    private static func span(_ drawn: Rect, edges: [String], renderSize: Size) -> String {
        let place = "x \(shortNumber(drawn.x.rounded()))…\(shortNumber((drawn.x + drawn.width).rounded())), y \(shortNumber(drawn.y.rounded()))…\(shortNumber((drawn.y + drawn.height).rounded()))"
        guard !edges.isEmpty else { return "\(place), inside the \(shortNumber(renderSize.width))×\(shortNumber(renderSize.height)) frame" }
        return "\(place), past the \(edges.joined(separator: " and ")) edge\(edges.count == 1 ? "" : "s") of the \(shortNumber(renderSize.width))×\(shortNumber(renderSize.height)) frame"
    }

    /// `frame` (in the parent's coordinates) in the root's, given the parent's box there: a
    /// geometry-flipped parent measures its sublayers' y from its top.
    private static func place(_ frame: Rect, ofParentBounds bounds: Rect, flipped: Bool, in parentBox: Rect) -> Rect {
        let x = parentBox.x + frame.x - bounds.x
        let y = flipped
            ? parentBox.y + bounds.height - (frame.y - bounds.y) - frame.height
            : parentBox.y + frame.y - bounds.y
        return Rect(x: x, y: y, width: frame.width, height: frame.height)
    }

    /// Whether an animation of `keyPath` changes where the layer is.
    private static func isPlacing(_ keyPath: AnimatableKeyPath) -> Bool {
        switch keyPath {
        case .position, .bounds, .transform, .transformScale, .transformScaleX, .transformScaleY, .transformRotation,
             .transformTranslationX, .transformTranslationY: return true
        default: return false
        }
    }
}

package extension VideoComposition {
    /// What its layers lose: text cut or shrunk to fit its box (`TextFit`), text or a
    /// picture placed past the frame (`LayerPlacement`, moving layers looked at until
    /// `shownUntil`); none without an animation tool.
    func textDiagnostics(shownUntil: MediaTime?) throws -> [Diagnostic] {
        guard let tool = animationTool else { return [] }
        let layouts = try TextLayout()
        return try TextFit.diagnostics(under: tool.parentLayer, layouts: layouts)
            + LayerPlacement.diagnostics(under: tool.parentLayer, renderSize: renderSize, layouts: layouts, shownUntil: shownUntil)
    }
}
