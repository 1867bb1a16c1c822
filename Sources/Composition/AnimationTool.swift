import MoonreelMedia

/// AVVideoCompositionCoreAnimationTool's "post-processing" form: the composed video is
/// drawn into `videoLayer`, which sits somewhere in `parentLayer`'s tree, and the rest of
/// the tree (logos, text, backgrounds) around it. As in AVFoundation, the tree has Core
/// Animation's geometry: origin at the bottom-left, y up, unless a layer sets
/// `isGeometryFlipped` (then its sublayers are placed from its top-left, y down).
public final class AnimationTool {
    /// The layer the composed video frames are drawn into: `parentLayer` or a layer in its tree
    /// (AVFoundation's `videoLayer`). Its frame says where the video goes.
    public let videoLayer: Layer
    /// The root of the layer tree, placed over the whole render size (AVFoundation's
    /// `parentLayer`). The tree is read when rendering starts, so it may be changed until then.
    public let parentLayer: Layer

    /// Makes the tool, like `AVVideoCompositionCoreAnimationTool(postProcessingAsVideoLayer:in:)`.
    /// - Throws: `EngineError` when `videoLayer` is neither `parentLayer` nor in its tree (add it
    ///   with `parentLayer.addSublayer(videoLayer)` first).
    public init(videoLayer: Layer, parentLayer: Layer) throws {
        var ancestor: Layer? = videoLayer
        while let layer = ancestor, layer !== parentLayer { ancestor = layer.superlayer }
        guard ancestor != nil else {
            throw EngineError("videoLayer must be parentLayer or one of its sublayers (add it to parentLayer's sublayers)")
        }
        self.videoLayer = videoLayer
        self.parentLayer = parentLayer
    }

    /// Freezes the tree for rendering frames of `frameDuration`, marking where the video goes.
    /// The parent layer is placed in the render size with Core Animation's geometry (origin bottom-left).
    package func timeline(renderSize: Size, frameDuration: MediaTime) -> LayerTimeline {
        videoLayer.isVideoLayer = true
        return LayerTimeline(root: parentLayer, canvasHeight: renderSize.height, frameDuration: frameDuration)
    }
}
