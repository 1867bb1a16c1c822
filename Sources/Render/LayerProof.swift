import MoonreelComposition
import MoonreelMedia

/// One small frame of a layer tree drawn for real, before a shared effect is installed: a
/// layer that only fails when drawn (an image that cannot be read, a font size no text takes)
/// fails here, not in the first render of someone's batch.
package enum LayerProof {
    /// The longest side the proof is drawn at: small, since only failures matter.
    static let longestSide = 320.0

    /// Draws `layer` as it is `time` into its animations, on a canvas of its own frame's
    /// size (a 1920×1080 overlay is drawn at 320×180; an empty or huge frame, 1280×720);
    /// throws what drawing throws.
    package static func draw(_ layer: Layer, at time: MediaTime) throws {
        let frame = layer.frame
        let usable = frame.width >= 1 && frame.height >= 1 && frame.width <= Double(PixelLimits.maxSide) && frame.height <= Double(PixelLimits.maxSide)
        let size = usable ? Size(width: frame.width, height: frame.height) : Size(width: 1280, height: 720)
        let scale = min(1, longestSide / max(size.width, size.height))
        let (width, height) = (max(1, Int(size.width * scale)), max(1, Int(size.height * scale)))
        let renderer = try LayerRenderer(renderSize: size, outputWidth: width, outputHeight: height, cacheBytes: 16 << 20)
        let canvas = try RGBAImage(width: width, height: height)
        guard let snapshot = LayerTimeline(root: layer, canvasHeight: size.height).snapshot(at: time) else { return }
        renderer.beginFrame()
        try renderer.render(snapshot, video: nil, into: canvas.view)
    }
}
