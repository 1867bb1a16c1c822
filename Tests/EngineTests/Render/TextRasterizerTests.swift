import Testing
@testable import MoonreelEngine
@testable import MoonreelMedia

@Suite struct TextRasterizerTests {
    let rasterizer: TextRasterizer
    init() throws {
        rasterizer = try TextRasterizer()
        makeScratchDirectory()
    }

    /// Draws the text onto a box-sized image so its placement in the box can be checked.
    func boxImage(_ style: TextStyle, _ box: Size, png: String? = nil) throws -> RGBAImage {
        let text = try rasterizer.rasterize(style, in: box)
        let image = try RGBAImage(width: Int(box.width), height: Int(box.height))
        if let glyphs = text.image {
            for y in 0..<glyphs.height {
                for x in 0..<glyphs.width {
                    let (bx, by) = (x + text.x, y + text.y)
                    guard bx >= 0, by >= 0, bx < image.width, by < image.height else { continue }
                    for c in 0..<4 { image.pixels[by * image.stride + bx * 4 + c] = glyphs.pixels[y * glyphs.stride + x * 4 + c] }
                }
            }
        }
        if let png { try image.writePNG(to: scratchPath(png)) }
        return image
    }

    @Test func japaneseAndLatinHaveRealGlyphsInsideTheBox() throws {
        var style = TextStyle(string: "きらきら光る")
        style.fontSize = 64
        style.alignment = .center
        let japanese = try boxImage(style, Size(width: 640, height: 120), png: "kirakira.png")
        style.string = "Twinkle twinkle"
        style.fontFamily = "DejaVu Sans"
        _ = try boxImage(style, Size(width: 640, height: 120), png: "twinkle.png")
        let ink = try #require(inkBounds(japanese, threshold: 8))
        #expect(ink.x0 > 0 && ink.x1 < 639 && ink.y0 >= 0 && ink.y1 < 120)
        let centre = Double(ink.x0 + ink.x1) / 2
        #expect(abs(centre - 320) <= 3, "ink centre \(centre)")
    }

    @Test func differentCJKStringsDrawDifferentInk() throws {
        var a = TextStyle(string: "光る星"), b = TextStyle(string: "夜の空")
        a.fontSize = 48
        b.fontSize = 48
        let first = try #require(try rasterizer.rasterize(a, in: Size(width: 400, height: 80)).image)
        let second = try #require(try rasterizer.rasterize(b, in: Size(width: 400, height: 80)).image)
        var differing = 0
        for y in 0..<min(first.height, second.height) {
            for x in 0..<min(first.width, second.width) where first.pixel(x: x, y: y).alpha != second.pixel(x: x, y: y).alpha {
                differing += 1
            }
        }
        // Tofu boxes would be near-identical rectangles; real glyphs differ over much of the area.
        #expect(differing > min(first.width * first.height, second.width * second.height) / 10)
    }
}

@Suite struct TextLayoutTests {
    let rasterizer: TextRasterizer
    init() throws {
        rasterizer = try TextRasterizer()
        makeScratchDirectory()
    }

    func lyric(_ string: String) -> TextStyle {
        var style = TextStyle(string: string)
        style.fontSize = 32
        style.isWrapped = true
        return style
    }

    let long = "Twinkle twinkle little star, how I wonder what you are. 上の世界はとても高く、空のダイヤモンドのように"

    @Test func wrappedTextStaysInsideTheBoxWidth() throws {
        for alignment in TextAlignment.allCases {
            var style = lyric(long)
            style.alignment = alignment
            let text = try rasterizer.rasterize(style, in: Size(width: 300, height: 400))
            let image = try #require(text.image)
            #expect(text.x >= 0 && text.x + image.width <= 300, "\(alignment): x \(text.x)…\(text.x + image.width)")
            #expect(image.height > 4 * 32, "\(alignment) wraps onto several lines")
        }
    }

    @Test func maxLinesLimitsTheLinesWithOrWithoutEllipsis() throws {
        let box = Size(width: 300, height: 400)
        let all = try #require(try rasterizer.rasterize(lyric(long), in: box).image)
        for mode in TruncationMode.allCases {
            var style = lyric(long)
            style.maxLines = 2
            style.truncationMode = mode
            let two = try #require(try rasterizer.rasterize(style, in: box).image)
            #expect(two.height > 40 && two.height < 2 * 32 * 3 / 2 + 10, "\(mode): \(two.height) px high")
            #expect(two.height < all.height / 2)
        }
        var style = lyric(long)
        (style.maxLines, style.truncationMode) = (2, .end)
        try #require(try rasterizer.rasterize(style, in: box).image).writePNG(to: scratchPath("two-lines-ellipsis.png"))
    }

    @Test func shadowFallsInTheDirectionOfItsOffset() throws {
        var style = lyric("Shadow")
        let plain = try rasterizer.rasterize(style, in: Size(width: 300, height: 60))
        (style.shadowOpacity, style.shadowRadius, style.shadowColor) = (1, 0, .black)
        style.shadowOffset = Size(width: 0, height: 10)
        let down = try rasterizer.rasterize(style, in: Size(width: 300, height: 60))
        style.shadowOffset = Size(width: -10, height: 0)
        let left = try rasterizer.rasterize(style, in: Size(width: 300, height: 60))
        let p = try #require(plain.image), d = try #require(down.image), l = try #require(left.image)
        #expect(abs(down.y - plain.y) <= 1 && abs((down.y + d.height) - (plain.y + p.height) - 10) <= 1)
        #expect(abs((plain.x - left.x) - 10) <= 1 && abs((left.x + l.width) - (plain.x + p.width)) <= 1)
        // Under the text's own bottom edge the shadow is opaque black.
        let below = d.pixel(x: d.width / 2, y: d.height - 3)
        #expect(below.alpha > 200 && below.red < 40)
    }

    @Test func outlineAndKaraokeColourTheRightPixels() throws {
        var style = lyric("きらきら光る")
        style.fontSize = 64
        (style.strokeWidth, style.strokeColor) = (3, .black)
        (style.highlightedScalars, style.highlightColor) = (3, Color(red: 1, green: 0.8, blue: 0))
        (style.shadowOpacity, style.shadowRadius, style.shadowOffset) = (0.6, 6, Size(width: 3, height: 3))
        let text = try rasterizer.rasterize(style, in: Size(width: 600, height: 100))
        let image = try #require(text.image)
        try image.writePNG(to: scratchPath("karaoke-outline.png"))
        var (highlighted, white) = (0, 0)
        for y in 0..<image.height {
            for x in 0..<image.width {
                let p = image.pixel(x: x, y: y)
                guard p.alpha == 255 else { continue }
                if p.red > 240, p.green > 180, p.green < 225, p.blue < 20 {
                    highlighted += 1
                    #expect(x < image.width / 2 + 20, "highlight at x \(x) of \(image.width)")
                } else if p.red > 240, p.green > 240, p.blue > 240 {
                    white += 1
                    #expect(x > image.width / 2 - 20, "unsung white at x \(x) of \(image.width)")
                }
            }
        }
        #expect(highlighted > 300 && white > 300)
        // The outline is the outermost ink: the leftmost opaque pixels are black.
        let row = image.height / 2
        let opaque: [Int] = (0..<image.width).filter { image.pixel(x: $0, y: row).alpha == 255 }
        let leftmost = try #require(opaque.first)
        #expect(image.pixel(x: leftmost, y: row).red < 60)
    }

    /// A karaoke line reuses its blurred shadow from frame to frame: each step is drawn
    /// exactly as a fresh rasteriser draws it.
    @Test func karaokeStepsReuseTheShadowAndDrawTheSame() throws {
        var style = lyric("Twinkle, twinkle, little star")
        style.fontSize = 48
        (style.shadowOpacity, style.shadowRadius, style.shadowOffset) = (0.8, 5, Size(width: 2, height: 3))
        style.highlightColor = Color(red: 1, green: 0.8, blue: 0)
        let box = Size(width: 900, height: 80)
        let reusing = try TextRasterizer()
        for step in [0, 4, 9, 17, 28] {
            style.highlightedScalars = step
            let cached = try #require(try reusing.rasterize(style, in: box).image)
            let fresh = try #require(try TextRasterizer().rasterize(style, in: box).image)
            #expect(cached.width == fresh.width && cached.height == fresh.height)
            let same = (0..<fresh.height).allSatisfy { y in (0..<fresh.width).allSatisfy { x in cached.pixel(x: x, y: y) == fresh.pixel(x: x, y: y) } }
            #expect(same, "step \(step)")
        }
    }
}
