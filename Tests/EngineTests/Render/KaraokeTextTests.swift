import Testing
@testable import MoonreelEngine

/// Issue 25 §3: a karaoke line is drawn twice, sung and unsung, and each frame is cut from
/// the two at its sung edge (on each visual line), instead of one drawing per step.
@Suite struct KaraokeTextTests {
    static let yellow = Color(red: 1, green: 0.8, blue: 0)

    init() { makeScratchDirectory() }

    /// Kana in a 40 px CJK font, left-aligned: each advances one em, so scalar i of a
    /// line spans x 40·i … 40·(i + 1) from the line's start, an edge known without Pango.
    func kana(_ string: String = "きらきら光る", progress: Double) -> TextStyle {
        var style = TextStyle(string: string)
        (style.fontSize, style.alignment, style.isWrapped, style.highlightColor) = (40, .left, true, Self.yellow)
        (style.strokeWidth, style.strokeColor) = (2, .black)
        (style.shadowOpacity, style.shadowRadius, style.shadowOffset) = (0.8, 3, Size(width: 0, height: 2))
        (style.highlightedScalars, style.highlightFraction) = (Int(progress), progress - progress.rounded(.down))
        return style
    }

    /// A root layer of `width` × `height` and a full-frame video layer for it (the fast path).
    func videoRoot(_ width: Double, _ height: Double) -> (root: LayerSnapshot, video: LayerSnapshot) {
        let root = LayerSnapshot(frame: Rect(x: 0, y: 0, width: width, height: height))
        var video = root
        video.isVideoLayer = true
        return (root, video)
    }

    enum Fill { case sung, unsung, neither }

    /// Opaque glyph fill in the sung colour (yellow) or the unsung one (white).
    static func fill(_ p: (blue: UInt8, green: UInt8, red: UInt8, alpha: UInt8)) -> Fill {
        guard p.alpha == 255, p.red > 240 else { return .neither }
        if p.green > 190, p.green < 220, p.blue < 20 { return .sung }
        if p.green > 240, p.blue > 240 { return .unsung }
        return .neither
    }

    /// The glyph fill of `text` on each side of `edge` (box x) in rows `rows` (box y):
    /// x ranges of sung and of unsung fill pixels.
    func fillColumns(_ text: RasterizedText, rows: Range<Int>) throws -> (sung: ClosedRange<Int>?, unsung: ClosedRange<Int>?) {
        let image = try #require(text.image)
        var sung: ClosedRange<Int>?, unsung: ClosedRange<Int>?
        for y in 0..<image.height where rows.contains(y + text.y) {
            for x in 0..<image.width {
                let column = x + text.x
                switch Self.fill(image.pixel(x: x, y: y)) {
                case .sung: sung = min(sung?.lowerBound ?? column, column)...max(sung?.upperBound ?? column, column)
                case .unsung: unsung = min(unsung?.lowerBound ?? column, column)...max(unsung?.upperBound ?? column, column)
                case .neither: break
                }
            }
        }
        return (sung, unsung)
    }

    /// Mid-character (a `\kf` sweep inside a word) and on character and word boundaries:
    /// sung fill only left of the edge, unsung only right of it; away from the edge every
    /// pixel is the all-sung or the all-unsung drawing's.
    @Test func fillIsCutAtTheSungEdgeInsideAndBetweenWords() throws {
        let rasterizer = try TextRasterizer()
        let box = Size(width: 400, height: 80)
        let allSung = try rasterizer.rasterize(kana(progress: 6), in: box)
        let noneSung = try rasterizer.rasterize(kana(progress: 0), in: box)
        let sungImage = try #require(allSung.image), unsungImage = try #require(noneSung.image)
        #expect(try fillColumns(allSung, rows: 0..<80).unsung == nil && fillColumns(noneSung, rows: 0..<80).sung == nil)
        for progress in [2, 2.5, 3.25, 0.75, 4, 5.59375] {
            let text = try rasterizer.rasterize(kana(progress: progress), in: box)
            if progress == 2.5 { try #require(text.image).writePNG(to: scratchPath("karaoke-cut-2.5.png")) }
            let edge = 40 * progress
            let (sung, unsung) = try fillColumns(text, rows: 0..<80)
            let (s, u) = (try #require(sung, "\(progress)"), try #require(unsung, "\(progress)"))
            #expect(Double(s.upperBound) < edge + 1 && Double(u.lowerBound) >= edge - 1, "edge \(edge): sung \(s), unsung \(u)")
            if progress != progress.rounded() { // inside a glyph, its fill reaches the edge from both sides
                #expect(Double(s.upperBound) > edge - 3 && Double(u.lowerBound) < edge + 3, "fill reaches the edge \(edge): \(s), \(u)")
            }
            let image = try #require(text.image)
            #expect(image.width == sungImage.width && image.height == sungImage.height && (text.x, text.y) == (allSung.x, allSung.y))
            var mismatched = 0
            for y in 0..<image.height {
                for x in 0..<image.width where abs(Double(x + text.x) + 0.5 - edge) > 1.5 {
                    let expected = Double(x + text.x) < edge ? sungImage.pixel(x: x, y: y) : unsungImage.pixel(x: x, y: y)
                    if image.pixel(x: x, y: y) != expected { mismatched += 1 }
                }
            }
            #expect(mismatched == 0, "\(mismatched) pixels away from the edge \(edge) are not the sung or unsung drawing's")
        }
    }

    /// A line wrapped onto two: the first is sung whole while the edge moves on the second,
    /// from that line's own start.
    @Test func wrappedLinesAreEachCutAtTheirOwnEdge() throws {
        let rasterizer = try TextRasterizer()
        let box = Size(width: 130, height: 200) // three kana a line
        let all = try rasterizer.rasterize(kana(progress: 0), in: box)
        let image = try #require(all.image)
        let middle = all.y + image.height / 2 // between the two lines
        for progress in [1.5, 3, 4.5, 5.25] {
            let text = try rasterizer.rasterize(kana(progress: progress), in: box)
            if progress == 4.5 { try #require(text.image).writePNG(to: scratchPath("karaoke-wrapped-4.5.png")) }
            let first = try fillColumns(text, rows: -100..<middle), second = try fillColumns(text, rows: middle..<400)
            let (edge1, edge2) = (40 * min(progress, 3), 40 * max(progress - 3, 0))
            if edge1 < 120 {
                #expect(first.sung.map { Double($0.upperBound) < edge1 + 1 } ?? true && first.unsung.map { Double($0.lowerBound) >= edge1 - 1 } == true,
                        "line 1 at \(progress): \(String(describing: first))")
            } else {
                #expect(first.unsung == nil && first.sung != nil, "line 1 sung whole at \(progress)")
            }
            if edge2 > 0 {
                #expect(second.sung.map { Double($0.upperBound) < edge2 + 1 } == true && second.unsung.map { Double($0.lowerBound) >= edge2 - 1 } == true,
                        "line 2 at \(progress): \(String(describing: second))")
            } else {
                #expect(second.sung == nil && second.unsung != nil, "line 2 unsung at \(progress)")
            }
        }
    }

    /// On the fast path the line is parts of its two cached drawings plus a few columns
    /// around each edge: blended, exactly the pixels of the cut drawing blended whole, at
    /// even and odd positions, inside and between characters, on one or two lines.
    @Test func spritesBlendExactlyAsTheCutDrawing() throws {
        let renderer = try LayerRenderer(renderSize: Size(width: 320, height: 200))
        let rasterizer = try TextRasterizer()
        let (start, video) = videoRoot(320, 200)
        var root = start
        var cached: Set<ObjectIdentifier> = []
        for (x, y) in [(10.0, 8.0), (11.0, 7.0)] {
            // Edges on whole pixels, and 1.25 and 23.75 px into a glyph (mixed columns).
            for progress in [0, 0.5, 1, 1.03125, 2.25, 3, 4.59375, 5.96875, 6] {
                var line = LayerSnapshot(frame: Rect(x: x, y: y, width: 130, height: 180))
                line.text = kana(progress: progress)
                root.sublayers = [video, line]
                let sprites = try #require(try renderer.overlaySprites(for: root))
                let cut = try rasterizer.rasterize(try #require(line.text), in: line.frame.size)
                let whole = Sprite(image: try #require(cut.image), x: Int(x) + cut.x, y: Int(y) + cut.y, opacity: 1)
                let (a, b) = (TestYUVFrame(width: 320, height: 200, y: 60, u: 120, v: 140), TestYUVFrame(width: 320, height: 200, y: 60, u: 120, v: 140))
                a.withImage { renderer.blend(sprites, onto: $0) }
                b.withImage { SpriteBlender().blend(whole, onto: $0) }
                #expect(a.luma == b.luma && a.cb == b.cb && a.cr == b.cr, "at (\(x), \(y)), progress \(progress): \(sprites.count) sprites")
                if progress != progress.rounded() { #expect(sprites.count > 1) }
                if [1.03125, 4.59375].contains(progress) { #expect(sprites.contains { !$0.isReused }, "columns composed for the edge") }
                cached.formUnion(sprites.filter(\.isReused).map { ObjectIdentifier($0.image) })
            }
        }
        #expect(cached.count == 2, "the sung and the unsung drawing, whatever the progress: \(cached.count) images")
    }

    /// A sweep across a line inside a lyrics-style group (which only holds its lines) keeps
    /// the line's two drawings and their prepared planes cached, not one per step: the
    /// caches hold no more after 60 steps than twice what the first frame left.
    @Test func aSweepKeepsTwoDrawingsCachedNotOnePerStep() throws {
        let renderer = try LayerRenderer(renderSize: Size(width: 640, height: 360))
        let (start, video) = videoRoot(640, 360)
        var root = start
        var group = root
        let frame = TestYUVFrame(width: 640, height: 360, y: 60, u: 128, v: 128)
        var first = 0, most = 0
        for step in 0..<60 {
            var line = LayerSnapshot(frame: Rect(x: 32, y: 240, width: 576, height: 100))
            var style = kana("きらきら光る　お空の星よ", progress: Double(step) / 59 * 12)
            style.alignment = .center
            line.text = style
            group.sublayers = [line]
            root.sublayers = [video, group]
            renderer.beginFrame()
            let sprites = try #require(try renderer.overlaySprites(for: root))
            frame.withImage { renderer.blend(sprites, onto: $0) }
            if step == 0 { first = renderer.cachedBytes }
            most = max(most, renderer.cachedBytes)
        }
        #expect(first > 0 && most <= 2 * first, "cached \(most) bytes at most, \(first) after the first frame")
    }
}
