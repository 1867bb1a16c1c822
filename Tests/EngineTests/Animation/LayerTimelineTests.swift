@testable import MoonreelEngine
@testable import MoonreelComposition
import Testing

@Suite struct LayerTimelineTests {
    /// A lyric video as the seed builds it: one text layer per line, all with a discrete
    /// opacity animation over the whole song (line i shows from 2i s to 2i + 1.5 s).
    func lyrics(lines: Int, song: Double) throws -> (root: Layer, lines: [TextLayer]) {
        let root = Layer()
        root.frame = Rect(x: 0, y: 0, width: 1920, height: 1080)
        let video = Layer()
        video.isVideoLayer = true
        try root.addSublayer(video)
        var texts: [TextLayer] = []
        for i in 0..<lines {
            let line = TextLayer(style: TextStyle(string: "line \(i)"))
            line.frame = Rect(x: 0, y: 720, width: 1920, height: 360)
            line.opacity = 0
            let start = 2 * Double(i), end = start + 1.5
            let show = try KeyframeAnimation(keyPath: .opacity, values: numbers([0, 1, 0]), keyTimes: [0, start / song, end / song],
                                             calculationMode: .discrete, timing: AnimationTiming(duration: seconds(song)))
            try line.addAnimation(.keyframe(show), forKey: "show")
            try root.addSublayer(line)
            texts.append(line)
        }
        return (root, texts)
    }

    @Test func onlyLayersActiveNowAreTouched() throws {
        let (root, _) = try lyrics(lines: 500, song: 1000)
        let timeline = LayerTimeline(root: root)
        #expect(timeline.layerCount == 502)
        // Root, video layer and line 100 (200 s … 201.5 s); nothing else is even looked at.
        #expect(timeline.candidateLayers(at: seconds(200.7)).count == 3)
        let shot = try #require(timeline.snapshot(at: seconds(200.7)))
        #expect(shot.sublayers.map { $0.text?.string } == [nil, "line 100"])
        // At the boundaries: shown from its start, gone at its end.
        #expect(timeline.snapshot(at: seconds(200))?.sublayers.last?.text?.string == "line 100")
        #expect(timeline.snapshot(at: seconds(199.999))?.sublayers.count == 1)
        #expect(timeline.snapshot(at: seconds(201.5))?.sublayers.count == 1)
        #expect(timeline.candidateLayers(at: seconds(201.7)).count == 2)
        // After the song the animations are removed and the model opacity 0 hides every line.
        #expect(timeline.candidateLayers(at: seconds(2000)).count == 2)
    }

    @Test func snapshotsMatchTheUnfrozenTree() throws {
        let (root, lines) = try lyrics(lines: 20, song: 60)
        let blink = try KeyframeAnimation(keyPath: .isHidden, values: [.bool(false), .bool(true)], calculationMode: .discrete,
                                          timing: AnimationTiming(beginTime: seconds(10), duration: seconds(1), repeatCount: .infinity))
        try lines[5].addAnimation(.keyframe(blink), forKey: "blink")
        let timeline = LayerTimeline(root: root)
        for step in 0..<1300 {
            let t = MediaTime(value: Int64(step), timescale: 20)
            #expect(timeline.snapshot(at: t) == slowSnapshot(root, at: t), "at \(t)")
        }
    }

    /// Every layer resolved and filtered, without the visibility index; each layer placed
    /// in its superlayer's bounds, y up unless a layer above flips it.
    func slowSnapshot(_ layer: Layer, at t: MediaTime, container: LayerContainer? = nil) -> LayerSnapshot? {
        let frozen = LayerTimeline.FrozenLayer(model: ResolvedLayer(properties: layer.properties, text: layer.textStyle),
                                               animations: layer.animations.map(\.animation), parent: -1, subtreeEnd: 1,
                                               livesInYUpSpace: container?.isYUp ?? true)
        let resolved = frozen.resolved(at: t)
        guard resolved.isVisible else { return nil }
        let space = container ?? LayerContainer(boundsOrigin: .zero, height: resolved.properties.untransformedFrame.maxY, isYUp: true)
        var shot = resolved.snapshot(in: space)
        let bounds = resolved.properties.bounds
        let inner = LayerContainer(boundsOrigin: bounds.origin, height: bounds.height,
                                   isYUp: space.isYUp != resolved.properties.isGeometryFlipped)
        shot.sublayers = layer.sublayers.compactMap { slowSnapshot($0, at: t, container: inner) }
        return shot
    }

    /// A mask is placed in its layer's bounds (y up there unless the layer is flipped), its
    /// animations play, its changes count, and a transparent mask leaves its layer out.
    @Test func aMaskIsFrozenInItsLayersBounds() throws {
        let root = Layer(), picture = Layer(), shape = Layer()
        root.frame = Rect(x: 0, y: 0, width: 200, height: 100)
        picture.frame = Rect(x: 50, y: 0, width: 100, height: 100)
        shape.frame = Rect(x: 0, y: 0, width: 100, height: 40)   // at the bottom in y-up space
        shape.backgroundColor = .white
        try root.addSublayer(picture)
        try picture.setMask(shape)
        let fade = try KeyframeAnimation(keyPath: .opacity, values: numbers([1, 0]), keyTimes: [0, 1],
                                         timing: AnimationTiming(beginTime: seconds(1), duration: seconds(1), fillMode: .forwards, isRemovedOnCompletion: false))
        try shape.addAnimation(.keyframe(fade), forKey: nil)
        let timeline = LayerTimeline(root: root, canvasHeight: 100)
        let mask = try #require(timeline.snapshot(at: .zero)?.sublayers.first?.mask?.layer)
        #expect(mask.frame == Rect(x: 0, y: 60, width: 100, height: 40))
        #expect(abs((timeline.snapshot(at: seconds(1.5))?.sublayers.first?.mask?.layer.opacity ?? 0) - 0.5) < 1e-9)
        #expect(timeline.snapshot(at: seconds(2))?.sublayers.isEmpty == true)   // the mask is gone, and so is its layer
        #expect(!timeline.isStatic(over: TimeRange(start: seconds(1.2), duration: seconds(0.2))))
        #expect(timeline.isStatic(over: TimeRange(start: seconds(0.2), duration: seconds(0.5))))

        picture.isGeometryFlipped = true
        let flipped = LayerTimeline(root: root, canvasHeight: 100)
        #expect(flipped.snapshot(at: .zero)?.sublayers.first?.mask?.layer.frame == Rect(x: 0, y: 0, width: 100, height: 40))
    }

    @Test func hiddenParentHidesItsSubtreeInTheIndex() throws {
        let root = Layer(), group = Layer(), child = Layer()
        try root.addSublayer(group)
        try group.addSublayer(child)
        let hide = try KeyframeAnimation(keyPath: .isHidden, values: [.bool(true)], timing: AnimationTiming(beginTime: seconds(5), duration: seconds(5)))
        try group.addAnimation(.keyframe(hide), forKey: nil)
        let timeline = LayerTimeline(root: root)
        #expect(timeline.candidateLayers(at: seconds(7)) == [0])
        #expect(timeline.candidateLayers(at: seconds(2)) == [0, 1, 2])
        #expect(timeline.snapshot(at: seconds(7))?.sublayers.isEmpty == true)
    }

    @Test func staticStretches() throws {
        let (root, _) = try lyrics(lines: 3, song: 10)   // switches at 0, 1.5, 2, 3.5, 4, 5.5 s
        let timeline = LayerTimeline(root: root)
        let frame = MediaTime(value: 1, timescale: 30)
        #expect(timeline.isStatic(over: TimeRange(start: seconds(0.5), duration: seconds(0.9))))
        #expect(!timeline.isStatic(over: TimeRange(start: seconds(1.4), duration: frame * 4)))
        #expect(timeline.isStatic(over: TimeRange(start: seconds(6), duration: seconds(3.9))))
        #expect(!timeline.isStatic(over: TimeRange(start: seconds(3.9), duration: seconds(0.2))))
        let fade = try BasicAnimation(keyPath: .opacity, fromValue: .number(1), toValue: .number(0.5),
                                      timing: AnimationTiming(beginTime: seconds(7), duration: seconds(1)))
        try root.addAnimation(.basic(fade), forKey: nil)
        let fading = LayerTimeline(root: root)
        #expect(!fading.isStatic(over: TimeRange(start: seconds(7.5), duration: frame)))
        #expect(fading.isStatic(over: TimeRange(start: seconds(8.1), duration: seconds(1))))
        #expect(fading.isStatic(over: TimeRange(start: seconds(6), duration: seconds(0.9))))
    }

    @Test func timelineIsSendable() async throws {
        let (root, _) = try lyrics(lines: 5, song: 20)
        let timeline = LayerTimeline(root: root)
        let count = await Task.detached { timeline.snapshot(at: seconds(4.5))?.sublayers.count }.value
        #expect(count == 2)
    }

    @Test func intervalIndexFindsExactlyTheContainingSpans() {
        // Nested, disjoint and unbounded spans; checked against a linear scan.
        var entries: [IntervalIndex.Entry] = []
        for i in 0..<200 {
            let start = TimelineBound.at(seconds(Double(i % 37))), end = TimelineBound.at(seconds(Double(i % 37 + 1 + i % 11)))
            entries.append(IntervalIndex.Entry(start: start, end: end, payload: i))
        }
        entries.append(IntervalIndex.Entry(start: .negativeInfinity, end: .at(seconds(3)), payload: 200))
        entries.append(IntervalIndex.Entry(start: .at(seconds(40)), end: .positiveInfinity, payload: 201))
        let index = IntervalIndex(entries)
        for step in -10..<120 {
            let t = seconds(Double(step) / 2)
            let expected = entries.filter { $0.start <= .at(t) && .at(t) < $0.end }.map(\.payload).sorted()
            #expect(index.payloads(containing: t).sorted() == expected, "at \(t)")
        }
    }

    // MARK: Core Animation geometry

    /// A 640×360 canvas (the animation tool's render size) with `child` in the root.
    func canvas(_ child: Layer, flipped: Bool = false) throws -> LayerSnapshot {
        let root = Layer()
        root.frame = Rect(x: 0, y: 0, width: 640, height: 360)
        root.isGeometryFlipped = flipped
        try root.addSublayer(child)
        return try #require(LayerTimeline(root: root, canvasHeight: 360).snapshot(at: .zero)?.sublayers.first)
    }

    func box(_ frame: Rect) -> Layer {
        let layer = Layer()
        layer.frame = frame
        return layer
    }

    @Test func originIsBottomLeftUnlessTheParentIsFlipped() throws {
        // A logo 25 px above the bottom (iOS code: CGRect(x: 5, y: 25, width: 57, height: 57)).
        #expect(try canvas(box(Rect(x: 5, y: 25, width: 57, height: 57))).frame == Rect(x: 5, y: 360 - 25 - 57, width: 57, height: 57))
        // isGeometryFlipped = true on the parent: 25 px below the top, as UIKit code means it.
        #expect(try canvas(box(Rect(x: 5, y: 25, width: 57, height: 57)), flipped: true).frame == Rect(x: 5, y: 25, width: 57, height: 57))
    }

    @Test func flipsNestAndBoundsOriginsShiftSublayers() throws {
        // y up → a flipped group → y down inside it → a group flipped again inside that → y up.
        let group = box(Rect(x: 100, y: 60, width: 200, height: 100))
        group.isGeometryFlipped = true
        let inner = box(Rect(x: 10, y: 10, width: 80, height: 40))
        inner.isGeometryFlipped = true
        inner.bounds.origin = Point(x: 0, y: 5)
        let leaf = box(Rect(x: 0, y: 0, width: 20, height: 10))
        try group.addSublayer(inner)
        try inner.addSublayer(leaf)
        let shot = try canvas(group)
        #expect(shot.frame == Rect(x: 100, y: 360 - 60 - 100, width: 200, height: 100))
        let innerShot = try #require(shot.sublayers.first)
        #expect(innerShot.frame == Rect(x: 10, y: 10, width: 80, height: 40), "the flipped group places from its top")
        // Inside `inner` y is up again, counted from its bounds origin (y 5): the leaf at y 0
        // has its bottom 5 px below inner's bottom edge: top at 40 − (0 − 5) − 10 = 35.
        #expect(innerShot.sublayers.first?.frame == Rect(x: 0, y: 35, width: 20, height: 10))
        inner.isGeometryFlipped = false // flips are inherited: still y down, from bounds y 5
        #expect(try canvas(group).sublayers.first?.sublayers.first?.frame == Rect(x: 0, y: -5, width: 20, height: 10))
    }

    @Test func aLayerWithOnlyBoundsIsCentredOnTheOrigin() throws {
        let only = Layer()
        only.bounds = Rect(x: 0, y: 0, width: 100, height: 60)
        // Centred on (0, 0), Core Animation's bottom-left corner of the canvas.
        #expect(try canvas(only).frame == Rect(x: -50, y: 360 - 30, width: 100, height: 60))
    }

    @Test func transformsAnchorsAndShadowsKeepTheirLookWhenMirrored() throws {
        let turned = box(Rect(x: 0, y: 0, width: 100, height: 50))
        turned.transform = AffineTransform.rotation(0.3).translatedBy(0, 10)
        turned.anchorPoint = Point(x: 0, y: 0)          // the bottom-left corner in Core Animation
        let shot = try canvas(turned)
        // A rotation by θ in y-up space looks like one by −θ in y-down; translations up are negative y.
        let expected = AffineTransform.rotation(-0.3).translatedBy(0, -10)
        for (a, b) in zip([shot.transform.a, shot.transform.b, shot.transform.c, shot.transform.d, shot.transform.tx, shot.transform.ty],
                          [expected.a, expected.b, expected.c, expected.d, expected.tx, expected.ty]) {
            #expect(abs(a - b) < 1e-12, "\(shot.transform) vs \(expected)")
        }
        #expect(shot.anchorPoint == Point(x: 0, y: 1), "the anchor is still the bottom-left corner")
        let text = TextLayer(style: TextStyle(string: "shadow"))
        text.frame = Rect(x: 0, y: 0, width: 100, height: 50)
        text.style.shadowOffset = Size(width: 2, height: -3)  // Core Animation's default: 3 px down
        #expect(try canvas(text).text?.shadowOffset == Size(width: 2, height: 3))
        #expect(try canvas(text, flipped: true).text?.shadowOffset == Size(width: 2, height: -3), "UIKit's: 3 px up")
    }
}
