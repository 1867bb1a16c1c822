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
/// Checked once before an export renders, on model values; a layer whose place changes over
/// time (an animated position, bounds or transform, its own or an ancestor's) is not judged,
/// nor text or sublayers under a turned or scaled layer.
package enum LayerPlacement {
    /// How far text or a picture may reach past an edge, in pixels, before it counts:
    /// anti-aliasing and rounding put a pixel's fringe there.
    static let tolerance = 1.0

    /// A `layerOffFrame` warning for each text or picture layer under `root` (the animation
    /// tool's parent layer, over the whole `renderSize`, y up) that reaches past the frame.
    package static func diagnostics(under root: Layer, renderSize: Size, layouts: TextLayout? = nil) throws -> [Diagnostic] {
        let layouts = try layouts ?? TextLayout()
        var found: [Diagnostic] = []
        // Each layer with its parent's box in the root's coordinates.
        var pending: [(layer: Layer, parent: Layer, parentBox: Rect)] = root.sublayers.reversed().map { ($0, root, Rect(x: 0, y: 0, width: renderSize.width, height: renderSize.height)) }
        while let (layer, parent, parentBox) = pending.popLast() {
            guard !layer.properties.isHidden, !moves(layer) else { continue }
            let box = place(layer.properties.frame, of: parent, in: parentBox)
            if let picture = layer.properties.contents, let offFrame = pictureDiagnostic(layer, picture, box: box, renderSize: renderSize) {
                found.append(offFrame)
            }
            // A turned or scaled layer's frame is the box around it: its sublayers' places and
            // its text's lines are not measured in that box, so they are not judged.
            guard layer.properties.transform.isIdentity else { continue }
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
            let edges = edgesPassed(by: drawn, renderSize: renderSize)
            guard !edges.isEmpty else { continue }
            let name = layer.properties.name.map { "text layer \($0.quotedForMessage(limit: 200))" } ?? "a text layer"
            found.append(Diagnostic(.layerOffFrame, .warning,
                                    "\(name) lays out \(style.string.quotedForMessage(limit: 60)) over \(span(drawn, edges: edges, renderSize: renderSize)): what lies there is not in the video",
                                    remedy: "place it inside the frame (an effect takes the video composition's renderSize)",
                                    origin: layer.origin, time: layer.animations.map(\.animation.timing.beginTime.seconds).min()))
        }
        return found
    }

    /// A warning for a picture that would fit in the frame but reaches past it; nil when it
    /// is inside, larger than the frame on a side, or drawn at no size.
    private static func pictureDiagnostic(_ layer: Layer, _ picture: ImageSource, box: Rect, renderSize: Size) -> Diagnostic? {
        guard box.width >= 1, box.height >= 1, box.width <= renderSize.width, box.height <= renderSize.height else { return nil }
        let edges = edgesPassed(by: box, renderSize: renderSize)
        guard !edges.isEmpty else { return nil }
        let shownWidth = max(0, min(box.x + box.width, renderSize.width) - max(box.x, 0))
        let shownHeight = max(0, min(box.y + box.height, renderSize.height) - max(box.y, 0))
        let outside = 1 - shownWidth * shownHeight / (box.width * box.height)
        let name = layer.properties.name.map { "picture layer \($0.quotedForMessage(limit: 200))" } ?? "a picture layer"
        let file = (picture.path as NSString).lastPathComponent.quotedForMessage(limit: 80)
        let lost = outside >= 1 ? "none of it is in the video" : "\(shortNumber((outside * 100).rounded())) % of it is not in the video"
        return Diagnostic(.layerOffFrame, .warning, "\(name) (\(file)) lies over \(span(box, edges: edges, renderSize: renderSize)): \(lost)",
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
        "x \(shortNumber(drawn.x.rounded()))…\(shortNumber((drawn.x + drawn.width).rounded())), y \(shortNumber(drawn.y.rounded()))…\(shortNumber((drawn.y + drawn.height).rounded())), "
            + "past the \(edges.joined(separator: " and ")) edge\(edges.count == 1 ? "" : "s") of the \(shortNumber(renderSize.width))×\(shortNumber(renderSize.height)) frame"
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
    /// What its layers lose: text cut or shrunk to fit its box (`TextFit`), text or a
    /// picture placed past the frame (`LayerPlacement`); none without an animation tool.
    func textDiagnostics() throws -> [Diagnostic] {
        guard let tool = animationTool else { return [] }
        let layouts = try TextLayout()
        return try TextFit.diagnostics(under: tool.parentLayer, layouts: layouts)
            + LayerPlacement.diagnostics(under: tool.parentLayer, renderSize: renderSize, layouts: layouts)
    }
}
