@testable import MoonreelEngine
@testable import MoonreelComposition
import Testing

@Suite struct LayerTests {
    func layer(_ frame: Rect) -> Layer {
        let layer = Layer()
        layer.frame = frame
        return layer
    }

    @Test func frameBoundsPositionAnchorStayConsistent() {
        let box = layer(Rect(x: 10, y: 20, width: 100, height: 50))
        #expect(box.position == Point(x: 60, y: 45))
        #expect(box.bounds == Rect(x: 0, y: 0, width: 100, height: 50))
        box.anchorPoint = Point(x: 0, y: 0)
        // Moving the anchor keeps the position, so the frame moves (as in CALayer).
        #expect(box.frame == Rect(x: 60, y: 45, width: 100, height: 50))
        box.frame = Rect(x: 0, y: 0, width: 10, height: 10)
        #expect(box.position == .zero)
        box.anchorPoint = Point(x: 0.5, y: 0.5)
        box.transform = .scale(2, 3)
        // Transformed about the anchor: the 10×10 box at centre (0, 0) becomes 20×30.
        #expect(box.frame == Rect(x: -10, y: -15, width: 20, height: 30))
    }

    @Test func treeEditingAndCycles() throws {
        let root = Layer(), a = Layer(), b = Layer()
        try root.addSublayer(a)
        try a.addSublayer(b)
        #expect(throws: EngineError("cannot add a layer inside itself: that would make a cycle")) { try b.addSublayer(root) }
        #expect(throws: EngineError.self) { try a.addSublayer(a) }
        try root.addSublayer(b)             // moves b from a to root
        #expect(a.sublayers.isEmpty && root.sublayers.map { $0 === b } == [false, true])
        #expect(b.superlayer === root && root.subtreeCount == 3)
        try root.insertSublayer(b, at: 0)
        #expect(root.sublayers.first === b)
        #expect(throws: EngineError("sublayer index 5 is out of range 0…2")) { try root.insertSublayer(Layer(), at: 5) }
        b.removeFromSuperlayer()
        #expect(root.sublayers.count == 1 && root.subtreeCount == 2 && b.superlayer == nil)
    }

    /// `CALayer.mask`: a mask belongs to one layer and to no tree of sublayers; no cycle
    /// through masks.
    @Test func aMaskIsNobodysSublayerAndMakesNoCycle() throws {
        let root = Layer(), picture = Layer(), shape = Layer(), inner = Layer()
        try root.addSublayer(picture)
        try shape.addSublayer(inner)
        try picture.setMask(shape)
        #expect(picture.mask === shape && shape.maskedLayer === picture && shape.superlayer == nil)
        #expect(throws: EngineError("the layer is another layer's mask, and a mask cannot be a sublayer: set that layer's mask to nil first")) {
            try root.addSublayer(shape)
        }
        #expect(throws: EngineError("the layer is already another layer's mask; a layer masks one layer")) { try root.setMask(shape) }
        #expect(throws: EngineError("a mask cannot be a sublayer: remove it from its superlayer first (it is drawn only as the mask)")) {
            try picture.setMask(inner)
        }
        #expect(throws: EngineError("cannot make a layer the mask of itself or of a layer inside it: that would make a cycle")) {
            try inner.setMask(root)   // root → picture → (mask) shape → inner → (mask) root
        }
        #expect(throws: EngineError("cannot add a layer inside itself: that would make a cycle")) { try inner.addSublayer(root) }
        try picture.setMask(nil)
        #expect(picture.mask == nil && shape.maskedLayer == nil)
        try root.addSublayer(shape)   // free again
    }

    @Test func treeSizeIsCapped() throws {
        let root = Layer()
        let big = Layer()
        for _ in 0..<(Layer.maxLayersPerTree - 2) { try big.addSublayer(Layer()) }
        try root.addSublayer(big)            // exactly at the limit
        #expect(root.subtreeCount == Layer.maxLayersPerTree)
        #expect(throws: EngineError("a layer tree may hold at most 100000 layers", kind: .limit)) { try root.addSublayer(Layer()) }
    }

    @Test func animationsByKey() throws {
        let box = Layer()
        let fade = try BasicAnimation(keyPath: .opacity, fromValue: .number(0), toValue: .number(1))
        try box.addAnimation(.basic(fade), forKey: "fade")
        try box.addAnimation(.basic(fade), forKey: "other")
        try box.addAnimation(.basic(fade), forKey: "fade")   // replaced, and now last
        #expect(box.animationKeys == ["other", "fade"])
        #expect(box.animation(forKey: "fade")?.keyPath == .opacity)
        box.removeAnimation(forKey: "other")
        #expect(box.animationKeys == ["fade"])
        box.removeAllAnimations()
        #expect(box.animations.isEmpty)
        let text = try KeyframeAnimation(keyPath: .string, values: [.string("x")])
        #expect(throws: EngineError("keyPath string applies to text layers only")) { try box.addAnimation(.keyframe(text), forKey: nil) }
        try TextLayer().addAnimation(.keyframe(text), forKey: nil)
    }

    @Test func snapshotAppliesAnimationsInOrder() throws {
        let root = layer(Rect(x: 0, y: 0, width: 1920, height: 1080))
        root.isGeometryFlipped = true                // UIKit's top-left geometry, as the numbers below
        root.bounds.origin = Point(x: 100, y: 0)     // shifts what is inside
        let box = layer(Rect(x: 200, y: 50, width: 100, height: 100))
        box.backgroundColor = .white
        try root.addSublayer(box)
        let slide = try BasicAnimation(keyPath: .position, fromValue: .point(Point(x: 250, y: 100)), toValue: .point(Point(x: 450, y: 100)),
                                       timing: AnimationTiming(duration: seconds(2)))
        let lift = try KeyframeAnimation(keyPath: .transformTranslationY, values: numbers([0, -40]), timing: AnimationTiming(duration: seconds(2)))
        let half = try BasicAnimation(keyPath: .opacity, toValue: .number(0.5), timing: AnimationTiming(duration: seconds(1), fillMode: .forwards, isRemovedOnCompletion: false))
        try box.addAnimation(.basic(slide), forKey: "slide")
        try box.addAnimation(.keyframe(lift), forKey: "lift")
        try box.addAnimation(.basic(half), forKey: "half")
        let shot = try #require(root.snapshot(at: seconds(1)))
        let inner = try #require(shot.sublayers.first)
        // Position 350 − 50 (half width) − 100 (the root's bounds origin) = 200.
        #expect(inner.frame == Rect(x: 200, y: 50, width: 100, height: 100))
        #expect(inner.transform == .translation(0, -20))
        #expect(inner.opacity == 0.5)
        #expect(inner.backgroundColor == .white)
        // Before the slide, the model position shows: 250 − 50 − 100.
        #expect(root.snapshot(at: seconds(3))?.sublayers.first?.frame.x == 100)
    }

    @Test func zPositionOrdersSiblingsStably() throws {
        let root = Layer()
        let names = ["a", "b", "c", "d"]
        let children = names.map { name -> TextLayer in
            let text = TextLayer()
            text.string = name
            return text
        }
        children[0].zPosition = 1
        children[2].zPosition = -1
        for child in children { try root.addSublayer(child) }
        let order = try #require(root.snapshot(at: .zero)).sublayers.map { $0.text?.string }
        #expect(order == ["c", "b", "d", "a"])
    }

    @Test func hiddenAndTransparentLayersAreLeftOutWithTheirSublayers() throws {
        let root = Layer(), hidden = Layer(), clear = Layer(), shown = Layer(), video = Layer()
        hidden.isHidden = true
        clear.opacity = 0
        video.isVideoLayer = true
        try hidden.addSublayer(Layer())
        for child in [hidden, clear, shown, video] { try root.addSublayer(child) }
        let shot = try #require(root.snapshot(at: .zero))
        #expect(shot.sublayers.count == 2)
        #expect(shot.sublayers.map(\.isVideoLayer) == [false, true])
        root.isHidden = true
        #expect(root.snapshot(at: .zero) == nil)
    }

    @Test func karaokeThroughADiscreteAnimation() throws {
        let line = TextLayer(style: TextStyle(string: "君の名は"))
        line.highlightColor = Color(red: 1, green: 0.8, blue: 0)
        let sung = try KeyframeAnimation(keyPath: .highlightedScalars, values: numbers([0, 1, 2, 4]), keyTimes: [0, 0.25, 0.5, 0.75],
                                         calculationMode: .discrete, timing: AnimationTiming(beginTime: seconds(10), duration: seconds(4), fillMode: .both, isRemovedOnCompletion: false))
        try line.addAnimation(.keyframe(sung), forKey: "karaoke")
        #expect(line.snapshot(at: seconds(9))?.text?.highlightedScalars == 0)
        #expect(line.snapshot(at: seconds(11))?.text?.highlightedScalars == 1)
        #expect(line.snapshot(at: seconds(13))?.text?.highlightedScalars == 4)
        #expect(line.snapshot(at: seconds(13))?.text?.string == "君の名は")
    }

    @Test func transformSubPathsSetOneComponent() throws {
        let root = layer(Rect(x: 0, y: 0, width: 10, height: 10))
        root.isGeometryFlipped = true                // the snapshot keeps the model's matrix
        let box = layer(Rect(x: 0, y: 0, width: 10, height: 10))
        try root.addSublayer(box)
        box.transform = AffineTransform.rotation(0.5).translatedBy(3, 4)
        let grow = try KeyframeAnimation(keyPath: .transformScale, values: numbers([2]), timing: AnimationTiming(duration: seconds(1)))
        try box.addAnimation(.keyframe(grow), forKey: nil)
        let t = try #require(root.snapshot(at: .zero)?.sublayers.first).transform
        let parts = t.decomposed
        #expect(approximately(parts.scaleX, 2) && approximately(parts.scaleY, 2) && approximately(parts.angle, 0.5))
        #expect(approximately(t.tx, box.transform.tx) && approximately(t.ty, box.transform.ty))
    }
}
