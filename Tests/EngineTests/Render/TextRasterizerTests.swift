import Testing
@testable import Engine

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
