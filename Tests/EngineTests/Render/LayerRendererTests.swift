import Testing
@testable import MoonreelEngine
// FFmpeg's headers are in CMoonAVShim's module too, and Clang may list an enum under
// either: import both so its constants are always visible here.
import CMoonAVShim
import CMoonFFmpeg

@Suite struct LayerRendererTests {
    let size = Size(width: 64, height: 48)
    let renderer: LayerRenderer
    init() throws {
        renderer = try LayerRenderer(renderSize: size)
        makeScratchDirectory()
    }

    func layer(_ x: Double, _ y: Double, _ w: Double, _ h: Double, background: Color = .clear) -> LayerSnapshot {
        var l = LayerSnapshot(frame: Rect(x: x, y: y, width: w, height: h))
        l.backgroundColor = background
        return l
    }

    /// The tree drawn by the general path onto a fresh canvas.
    func draw(_ root: LayerSnapshot, video: RGBAImage? = nil, png: String? = nil) throws -> RGBAImage {
        let canvas = try RGBAImage(width: 64, height: 48)
        try renderer.render(root, video: video?.view, into: canvas.view)
        if let png { try canvas.writePNG(to: scratchPath(png)) }
        return canvas
    }

    func root(_ sublayers: [LayerSnapshot]) -> LayerSnapshot {
        var r = layer(0, 0, 64, 48)
        r.sublayers = sublayers
        return r
    }

    @Test func contentsGravityPlacesContentLikeCoreAnimation() {
        let content = Size(width: 100, height: 50), bounds = Size(width: 200, height: 200)
        let expected: [ContentsGravity: Rect] = [
            .resize: Rect(x: 0, y: 0, width: 200, height: 200),
            .resizeAspect: Rect(x: 0, y: 50, width: 200, height: 100),
            .resizeAspectFill: Rect(x: -100, y: 0, width: 400, height: 200),
            .center: Rect(x: 50, y: 75, width: 100, height: 50),
            .top: Rect(x: 50, y: 0, width: 100, height: 50),
            .bottom: Rect(x: 50, y: 150, width: 100, height: 50),
            .left: Rect(x: 0, y: 75, width: 100, height: 50),
            .right: Rect(x: 100, y: 75, width: 100, height: 50),
            .topLeft: Rect(x: 0, y: 0, width: 100, height: 50),
            .topRight: Rect(x: 100, y: 0, width: 100, height: 50),
            .bottomLeft: Rect(x: 0, y: 150, width: 100, height: 50),
            .bottomRight: Rect(x: 100, y: 150, width: 100, height: 50),
        ]
        for gravity in ContentsGravity.allCases {
            #expect(LayerRenderer.contentsRect(gravity, content: content, bounds: bounds) == expected[gravity], "\(gravity)")
        }
    }

    @Test func imageContentsAreDrawnWhereGravitySays() throws {
        let red = try solidImage(width: 20, height: 10, red: 255, green: 0, blue: 0, alpha: 255)
        try red.writePNG(to: scratchPath("red-20x10.png"))
        var logo = layer(10, 4, 40, 40)
        logo.contents = ImageSource(path: scratchPath("red-20x10.png"), width: 20, height: 10)
        logo.contentsGravity = .bottomRight
        let canvas = try draw(root([logo]))
        #expect(canvas.pixel(x: 10 + 30, y: 4 + 35) == (0, 0, 255, 255))
        #expect(canvas.pixel(x: 10 + 19, y: 4 + 35) == (0, 0, 0, 255)) // left of the image
        #expect(canvas.pixel(x: 10 + 30, y: 4 + 29) == (0, 0, 0, 255)) // above it
    }

    @Test func cornerRadiusLeavesCornersAndBorderIsInside() throws {
        var box = layer(10, 4, 40, 40, background: .white)
        box.cornerRadius = 10
        box.borderWidth = 4
        box.borderColor = Color(red: 1, green: 0, blue: 0)
        let canvas = try draw(root([box]), png: "rounded-border.png")
        #expect(canvas.pixel(x: 10, y: 4) == (0, 0, 0, 255))          // corner: nothing drawn
        #expect(canvas.pixel(x: 11, y: 5) == (0, 0, 0, 255))
        #expect(canvas.pixel(x: 30, y: 24) == (255, 255, 255, 255))   // centre: background
        #expect(canvas.pixel(x: 11, y: 24) == (0, 0, 255, 255))       // left edge: border
        #expect(canvas.pixel(x: 13, y: 24) == (0, 0, 255, 255))
        #expect(canvas.pixel(x: 15, y: 24) == (255, 255, 255, 255))   // just inside the border
    }

    @Test func opacityFadesASubtreeAsOneGroup() throws {
        var group = layer(0, 0, 64, 48)
        group.opacity = 0.5
        group.sublayers = [layer(10, 10, 20, 20, background: .white), layer(20, 20, 20, 20, background: .white)]
        let canvas = try draw(root([group]))
        // Overlap is 50% white, as a flattened group; per-layer fading would give 75%.
        #expect(abs(Int(canvas.pixel(x: 25, y: 25).red) - 128) <= 1)
        #expect(abs(Int(canvas.pixel(x: 15, y: 15).red) - 128) <= 1)
    }

    @Test func transformTurnsAboutTheAnchorPointAndMasksClip() throws {
        var bar = layer(10, 10, 20, 10, background: .white)
        bar.transform = .rotation(Double.pi / 2) // about the centre (20, 15): now x 15…25, y 5…25
        var clipper = layer(40, 0, 10, 10)
        clipper.masksToBounds = true
        clipper.sublayers = [layer(5, 5, 20, 20, background: .white)]
        let canvas = try draw(root([bar, clipper]))
        #expect(canvas.pixel(x: 20, y: 6).red == 255 && canvas.pixel(x: 20, y: 24).red == 255)
        #expect(canvas.pixel(x: 12, y: 15).red == 0 && canvas.pixel(x: 27, y: 15).red == 0)
        #expect(canvas.pixel(x: 47, y: 7).red == 255 && canvas.pixel(x: 47, y: 12).red == 0 && canvas.pixel(x: 52, y: 7).red == 0)
    }

    @Test func videoFillsTheVideoLayer() throws {
        let green = try solidImage(width: 8, height: 6, red: 0, green: 255, blue: 0, alpha: 255)
        var video = layer(0, 0, 32, 24)
        video.isVideoLayer = true
        let canvas = try draw(root([video]), video: green)
        #expect(canvas.pixel(x: 0, y: 0) == (0, 255, 0, 255) && canvas.pixel(x: 31, y: 23) == (0, 255, 0, 255))
        #expect(canvas.pixel(x: 32, y: 10) == (0, 0, 0, 255) && canvas.pixel(x: 10, y: 24) == (0, 0, 0, 255))
    }

    @Test func fastPathBlendsCachedOverlaySpritesOntoTheFrame() throws {
        var video = layer(0, 0, 64, 48)
        video.isVideoLayer = true
        var box = layer(5, 7, 10, 10, background: .white)
        box.opacity = 0.5
        let hidden = layer(0, 0, 64, 48, background: Color(red: 1, green: 0, blue: 0)) // under the video
        let sprites = try #require(try renderer.overlaySprites(for: root([hidden, video, box])))
        #expect(sprites.count == 1)
        let frame = TestYUVFrame(width: 64, height: 48, y: 128, u: 128, v: 128)
        frame.withImage { renderer.blend(sprites, onto: $0) }
        #expect(abs(Double(frame.luma[8 * 64 + 6]) - 181.5) <= 1 && abs(Double(frame.luma[16 * 64 + 14]) - 181.5) <= 1)
        #expect(frame.luma[6 * 64 + 6] == 128 && frame.luma[8 * 64 + 4] == 128 && frame.luma[17 * 64 + 15] == 128)

        // Moving and fading reuse the same drawing.
        box.frame.origin = Point(x: 30, y: 3)
        box.opacity = 0.25
        let moved = try #require(try renderer.overlaySprites(for: root([video, box])))
        #expect(moved[0].image === sprites[0].image && moved[0].x == sprites[0].x + 25 && moved[0].opacity == 0.25)
    }

    @Test func drawingsOffScreenForASecondAreDroppedAndOnesBackSoonerAreReused() throws {
        var video = layer(0, 0, 64, 48)
        video.isVideoLayer = true
        let frame = TestYUVFrame(width: 64, height: 48, y: 128, u: 128, v: 128)
        func show(_ overlay: LayerSnapshot) throws -> Sprite {
            renderer.beginFrame()
            let sprites = try #require(try renderer.overlaySprites(for: root([video, overlay])))
            frame.withImage { renderer.blend(sprites, onto: $0) }
            return try #require(sprites.first)
        }
        // A new look every frame, as lyric lines and karaoke steps are: the caches keep the
        // last second's drawings (30 frames), not the whole budget's worth.
        func step(_ index: Int) -> LayerSnapshot { layer(4, 4, 20, 20, background: Color(red: Double(index % 256) / 255, green: 0.5, blue: Double(index / 256) / 255)) }
        _ = try show(step(0))
        let oneFrame = renderer.cachedBytes
        #expect(oneFrame > 0)
        for index in 1..<300 { _ = try show(step(index)) }
        #expect(renderer.cachedBytes <= 31 * oneFrame, "\(renderer.cachedBytes) bytes cached, \(oneFrame) a frame")

        // A logo hidden for 20 frames comes back as the same drawing; after 40 it is drawn anew.
        let logo = layer(30, 4, 10, 10, background: .white)
        let first = try show(logo)
        for index in 0..<20 { _ = try show(step(index)) }
        #expect(try show(logo).image === first.image)
        for index in 0..<40 { _ = try show(step(index)) }
        #expect(try show(logo).image !== first.image)
    }

    @Test func fastPathRefusesTreesWhereSomethingShowsUnderTheVideo() throws {
        var video = layer(0, 0, 64, 48)
        video.isVideoLayer = true
        var small = video
        small.frame = Rect(x: 0, y: 0, width: 32, height: 48)
        #expect(try renderer.overlaySprites(for: root([small])) == nil)
        var faded = video
        faded.opacity = 0.5
        #expect(try renderer.overlaySprites(for: root([faded])) == nil)
        var turnedParent = root([video])
        turnedParent.transform = .rotation(0.1)
        #expect(try renderer.overlaySprites(for: turnedParent) == nil)
        #expect(try renderer.overlaySprites(for: root([layer(0, 0, 10, 10, background: .white)])) == nil)
        // A rotated overlay is fine: it is flattened into its sprite.
        var turned = layer(20, 20, 10, 4, background: .white)
        turned.transform = .rotation(0.5)
        #expect(try renderer.overlaySprites(for: root([video, turned]))?.count == 1)
    }

    /// Core Animation's mask: the layer shows through the mask's alpha (a circle, a half
    /// transparent strip), placed in the layer's own bounds, with the layer's opacity on top.
    @Test func aMaskShowsTheLayerOnlyThroughItsAlpha() throws {
        var picture = layer(20, 8, 40, 40, background: .white)
        var circle = layer(0, 0, 20, 20, background: .white)
        circle.cornerRadius = 10
        let strip = layer(20, 0, 20, 40, background: Color(red: 0, green: 0, blue: 0, alpha: 0.5))
        var shape = layer(0, 0, 40, 40)
        shape.sublayers = [circle, strip]
        picture.mask = LayerMask(shape)
        let canvas = try draw(root([picture]), png: "mask.png")
        #expect(canvas.pixel(x: 30, y: 18).red == 255)                 // inside the circle (in the layer's bounds)
        #expect(canvas.pixel(x: 21, y: 9).red == 0)                    // the circle's corner
        #expect(canvas.pixel(x: 30, y: 38).red == 0)                   // below the circle, left of the strip
        #expect(abs(Int(canvas.pixel(x: 50, y: 38).red) - 128) <= 1)   // half through the strip, whatever its colour
        #expect(canvas.pixel(x: 10, y: 18).red == 0)                   // outside the layer

        picture.opacity = 0.5
        let faded = try draw(root([picture]))
        #expect(abs(Int(faded.pixel(x: 30, y: 18).red) - 128) <= 1 && abs(Int(faded.pixel(x: 50, y: 38).red) - 64) <= 1)

        // A mask that draws nothing hides the layer, and the sprites say so.
        var empty = picture
        empty.mask = LayerMask(layer(0, 0, 40, 40))
        #expect(empty.drawsNothing)
    }

    @Test func aMaskedOverlayAsASpriteMatchesTheGeneralPath() throws {
        var video = layer(0, 0, 64, 48)
        video.isVideoLayer = true
        var badge = layer(10, 10, 30, 20, background: .white)
        var half = layer(0, 0, 15, 20, background: .white)
        half.cornerRadius = 4
        badge.mask = LayerMask(half)
        let tree = root([video, badge])
        let sprites = try #require(try renderer.overlaySprites(for: tree))
        let frame = TestYUVFrame(width: 64, height: 48, y: 16, u: 128, v: 128)
        frame.withImage { renderer.blend(sprites, onto: $0) }
        #expect(frame.luma[20 * 64 + 17] > 200 && frame.luma[20 * 64 + 30] == 16) // left half shows, right half not
        let canvas = try draw(tree)
        #expect(canvas.pixel(x: 17, y: 20).red == 255 && canvas.pixel(x: 30, y: 20).red == 0)
        #expect(canvas.pixel(x: 10, y: 10).red == 0) // the mask's rounded corner

        // A masked video layer is never the fast path's full-frame video.
        var maskedVideo = video
        maskedVideo.mask = LayerMask(layer(0, 0, 32, 48, background: .white))
        #expect(try renderer.overlaySprites(for: root([maskedVideo, badge])) == nil)
    }
}

@Suite struct FastPathAgreementTests {
    @Test func spritesMatchWhatTheGeneralPathDraws() throws {
        let renderer = try LayerRenderer(renderSize: Size(width: 320, height: 120))
        var root = LayerSnapshot(frame: Rect(x: 0, y: 0, width: 320, height: 120))
        var video = root
        video.isVideoLayer = true
        var lyric = LayerSnapshot(frame: Rect(x: 10.4, y: 30, width: 300, height: 60))
        var style = TextStyle(string: "光る星 star")
        (style.fontSize, style.alignment, style.strokeWidth) = (40, .center, 2)
        (style.shadowOpacity, style.shadowOffset) = (0.7, Size(width: 2, height: 2))
        lyric.text = style
        var badge = LayerSnapshot(frame: Rect(x: 280, y: 4, width: 30, height: 20))
        (badge.backgroundColor, badge.cornerRadius, badge.transform) = (Color(red: 0, green: 0.5, blue: 1), 6, .rotation(0.3))
        root.sublayers = [video, lyric, badge]

        let sprites = try #require(try renderer.overlaySprites(for: root))
        #expect(sprites.count == 2)
        // Sprites sit on whole pixels: compare with the tree drawn where the sprite went.
        root.sublayers[1].frame.origin.x = 10
        let canvas = try RGBAImage(width: 320, height: 120) // the video is black
        try renderer.render(root, video: nil, into: canvas.view)
        for sprite in sprites {
            var worst = 0
            for y in 0..<sprite.image.height {
                for x in 0..<sprite.image.width {
                    let s = sprite.image.pixel(x: x, y: y), c = canvas.pixel(x: sprite.x + x, y: sprite.y + y)
                    worst = max(worst, abs(Int(s.red) - Int(c.red)), abs(Int(s.green) - Int(c.green)), abs(Int(s.blue) - Int(c.blue)))
                }
            }
            #expect(worst <= 1, "sprite at (\(sprite.x), \(sprite.y)) differs by \(worst)")
        }
    }

    /// A group that only holds its sublayers gives their sprites (a line and a badge are
    /// cached apart; an empty group gives none); a sublayer a fraction of a pixel off keeps
    /// that fraction in its drawing. Blended, the pixels of the group drawn whole.
    @Test func groupsThatOnlyHoldTheirSublayersGiveTheirSprites() throws {
        var root = LayerSnapshot(frame: Rect(x: 0, y: 0, width: 320, height: 120))
        var video = root
        video.isVideoLayer = true
        var group = LayerSnapshot(frame: Rect(x: 3, y: 5, width: 300, height: 100))
        var badge = LayerSnapshot(frame: Rect(x: 200, y: 6.4, width: 40, height: 20))
        (badge.backgroundColor, badge.opacity) = (Color(red: 0, green: 0.5, blue: 1), 0.7)
        var line = LayerSnapshot(frame: Rect(x: 10, y: 30, width: 280, height: 60))
        var style = TextStyle(string: "光る星 star")
        (style.fontSize, style.strokeWidth, style.shadowOpacity) = (40, 2, 0.7)
        line.text = style
        group.sublayers = [line, badge]
        root.sublayers = [video, group]
        var framed = root
        (framed.sublayers[1].borderWidth, framed.sublayers[1].borderColor) = (1, .clear) // drawn whole
        let renderer = try LayerRenderer(renderSize: Size(width: 320, height: 120))
        let parts = try #require(try renderer.overlaySprites(for: root))
        let one = try #require(try renderer.overlaySprites(for: framed))
        #expect(parts.count == 2 && one.count == 1)
        let (flat, whole) = (TestYUVFrame(width: 320, height: 120, y: 60, u: 128, v: 128), TestYUVFrame(width: 320, height: 120, y: 60, u: 128, v: 128))
        flat.withImage { renderer.blend(parts, onto: $0) }
        whole.withImage { renderer.blend(one, onto: $0) }
        var worst = 0
        for (a, b) in [(flat.luma, whole.luma), (flat.cb, whole.cb), (flat.cr, whole.cr)] {
            for (p, q) in zip(a, b) { worst = max(worst, abs(Int(p) - Int(q))) }
        }
        #expect(worst <= 2, "flattened and whole differ by \(worst)")
        group.sublayers = []
        root.sublayers = [video, group]
        #expect(try renderer.overlaySprites(for: root)?.isEmpty == true)
    }

    @Test func planarViewOfADecodedFrameReadsItsTags() throws {
        let frame = try #require(av_frame_alloc())
        defer {
            var owned: UnsafeMutablePointer<AVFrame>? = frame
            av_frame_free(&owned)
        }
        (frame.pointee.width, frame.pointee.height, frame.pointee.format) = (64, 32, AV_PIX_FMT_YUVJ420P.rawValue)
        #expect(av_frame_get_buffer(frame, 0) == 0)
        let planes = try #require(PlanarYUVImage(frame: frame))
        #expect(planes.range == .full && planes.matrix == .bt601 && planes.width == 64 && planes.cbStride >= 32)
        frame.pointee.colorspace = AVCOL_SPC_BT709
        frame.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        #expect(PlanarYUVImage(frame: frame)?.matrix == .bt709 && PlanarYUVImage(frame: frame)?.range == .limited)
        frame.pointee.format = AV_PIX_FMT_NV12.rawValue
        #expect(PlanarYUVImage(frame: frame) == nil)
    }
}

@Suite struct OutputScaleTests {
    @Test func textIsLaidOutAtTheOutputScaleNotResampled() throws {
        let half = try LayerRenderer(renderSize: Size(width: 640, height: 360), outputWidth: 320, outputHeight: 180)
        var root = LayerSnapshot(frame: Rect(x: 0, y: 0, width: 640, height: 360))
        var video = root
        video.isVideoLayer = true
        var lyric = LayerSnapshot(frame: Rect(x: 0, y: 240, width: 640, height: 100))
        var style = TextStyle(string: "きらきら光る")
        (style.fontSize, style.alignment) = (48, .center)
        lyric.text = style
        root.sublayers = [video, lyric]
        let sprite = try #require(try half.overlaySprites(for: root)?.first)

        // The same as laying out 24 px text in a 320 px box, placed at half the coordinates.
        var small = style
        small.fontSize = 24
        let direct = try TextRasterizer().rasterize(small, in: Size(width: 320, height: 50))
        let image = try #require(direct.image)
        #expect(sprite.image.width == image.width && sprite.image.height == image.height)
        #expect(sprite.x == direct.x && sprite.y == 120 + direct.y)

        // The general path draws the same pixels.
        let canvas = try RGBAImage(width: 320, height: 180)
        try half.render(root, video: nil, into: canvas.view)
        var xs: [Int] = [], ys: [Int] = []
        for y in 0..<180 {
            for x in 0..<320 where canvas.pixel(x: x, y: y).red > 0 {
                xs.append(x)
                ys.append(y)
            }
        }
        #expect(xs.min() == sprite.x && ys.min() == sprite.y && xs.max() == sprite.x + sprite.image.width - 1)
    }

}
