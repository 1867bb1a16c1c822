import MoonreelComposition
import MoonreelMedia

/// Text laid out past the frame's edges: a text layer whose words, placed in its box as its
/// alignment puts them, reach outside the render size (an effect made for another
/// `renderSize`, a landscape lyrics layer over a portrait video, a frame typed wrong). The
/// words there are not in the video, and nothing else says so: the text fits its own box.
/// Checked once before an export renders, on model values; a layer whose place changes over
/// time (an animated position, bounds or transform, its own or an ancestor's) is not judged.
package enum TextPlacement {
    /// How far text may reach past an edge, in pixels, before it counts: anti-aliasing and
    /// rounding put a pixel's fringe there.
    static let tolerance = 1.0

    /// A `layerOffFrame` warning for each text layer under `root` (the animation tool's parent
    /// layer, over the whole `renderSize`, y up) whose text reaches past the frame.
    package static func diagnostics(under root: Layer, renderSize: Size, layouts: TextLayout? = nil) throws -> [Diagnostic] {
        let layouts = try layouts ?? TextLayout()
        var found: [Diagnostic] = []
        // Each layer with its parent's box in the root's coordinates.
        var pending: [(layer: Layer, parent: Layer, parentBox: Rect)] = root.sublayers.reversed().map { ($0, root, Rect(x: 0, y: 0, width: renderSize.width, height: renderSize.height)) }
        while let (layer, parent, parentBox) = pending.popLast() {
            guard !layer.properties.isHidden, !moves(layer) else { continue }
            let box = place(layer.properties.frame, of: parent, in: parentBox)
            pending += layer.sublayers.reversed().map { ($0, layer, box) }
            guard let style = layer.textStyle, !style.string.isEmpty, style.fontSize.isFinite, style.fontSize > 0, style.fontSize <= 4096,
                  box.width >= 1, box.height >= 1, box.width <= Double(PixelLimits.maxSide), box.height <= Double(PixelLimits.maxSide) else { continue }
            let text = try layouts.measuredSize(style, wrapWidth: style.isWrapped ? box.width : nil)
            let (width, height) = (min(text.width, box.width), min(text.height, box.height))
            let left: Double
            switch style.alignment {
            case .left, .justified, .natural: left = box.x
            case .center: left = box.x + (box.width - width) / 2
            case .right: left = box.x + box.width - width
            }
            // Text starts at the top of its box (y up: the box's upper edge).
            let drawn = Rect(x: left, y: box.y + box.height - height, width: width, height: height)
            var edges: [String] = []
            if drawn.x < -tolerance { edges.append("left") }
            if drawn.x + drawn.width > renderSize.width + tolerance { edges.append("right") }
            if drawn.y < -tolerance { edges.append("bottom") }
            if drawn.y + drawn.height > renderSize.height + tolerance { edges.append("top") }
            guard !edges.isEmpty else { continue }
            let name = layer.properties.name.map { "text layer \($0.quotedForMessage(limit: 200))" } ?? "a text layer"
            found.append(Diagnostic(.layerOffFrame, .warning,
                                    "\(name) lays out \(style.string.quotedForMessage(limit: 60)) over x \(shortNumber(drawn.x.rounded()))…\(shortNumber((drawn.x + drawn.width).rounded())), y \(shortNumber(drawn.y.rounded()))…\(shortNumber((drawn.y + drawn.height).rounded())), past the \(edges.joined(separator: " and ")) edge\(edges.count == 1 ? "" : "s") of the \(shortNumber(renderSize.width))×\(shortNumber(renderSize.height)) frame: what lies there is not in the video",
                                    remedy: "place it inside the frame (an effect takes the video composition's renderSize)",
                                    time: layer.animations.map(\.animation.timing.beginTime.seconds).min()))
        }
        return found
    }

    /// `frame` (in `parent`'s coordinates) in the root's, given the parent's box there: a
    /// geometry-flipped parent measures its sublayers' y from its top.
    private static func place(_ frame: Rect, of parent: Layer, in parentBox: Rect) -> Rect {
        let bounds = parent.properties.bounds
        let x = parentBox.x + frame.x - bounds.x
        let y = parent.properties.isGeometryFlipped
            ? parentBox.y + bounds.height - (frame.y - bounds.y) - frame.height
            : parentBox.y + frame.y - bounds.y
        return Rect(x: x, y: y, width: frame.width, height: frame.height)
    }

    /// Whether an animation changes where the layer is.
    private static func moves(_ layer: Layer) -> Bool {
        layer.animations.contains { entry in
            switch entry.animation.keyPath {
            case .position, .bounds, .transform, .transformScale, .transformScaleX, .transformScaleY, .transformRotation,
                 .transformTranslationX, .transformTranslationY: return true
            default: return false
            }
        }
    }
}

package extension VideoComposition {
    /// What its layers' text loses: cut or shrunk to fit its box (`TextFit`), or laid out
    /// past the frame (`TextPlacement`); none without an animation tool.
    func textDiagnostics() throws -> [Diagnostic] {
        guard let tool = animationTool else { return [] }
        let layouts = try TextLayout()
        return try TextFit.diagnostics(under: tool.parentLayer, layouts: layouts)
            + TextPlacement.diagnostics(under: tool.parentLayer, renderSize: renderSize, layouts: layouts)
    }
}
