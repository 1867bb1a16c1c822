import Testing
@testable import MoonreelEngine
@testable import MoonreelMedia
@testable import MoonreelRender

/// A yuv420p frame in test-owned memory.
final class TestYUVFrame {
    let width: Int, height: Int
    var luma: [UInt8], cb: [UInt8], cr: [UInt8]

    init(width: Int, height: Int, y: UInt8, u: UInt8, v: UInt8) {
        (self.width, self.height) = (width, height)
        luma = [UInt8](repeating: y, count: width * height)
        cb = [UInt8](repeating: u, count: ((width + 1) / 2) * ((height + 1) / 2))
        cr = [UInt8](repeating: v, count: cb.count)
    }

    func withImage(matrix: YUVMatrix = .bt709, range: YUVRange = .limited, _ body: (PlanarYUVImage) -> Void) {
        luma.withUnsafeMutableBufferPointer { l in
            cb.withUnsafeMutableBufferPointer { u in
                cr.withUnsafeMutableBufferPointer { v in
                    body(PlanarYUVImage(luma: l.baseAddress!, lumaStride: width, cb: u.baseAddress!, cbStride: (width + 1) / 2,
                                        cr: v.baseAddress!, crStride: (width + 1) / 2, width: width, height: height,
                                        matrix: matrix, range: range))
                }
            }
        }
    }
}

func solidImage(width: Int, height: Int, red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8) throws -> RGBAImage {
    let image = try RGBAImage(width: width, height: height)
    for y in 0..<height {
        for x in 0..<width {
            let p = image.pixels + y * image.stride + x * 4
            (p[0], p[1], p[2], p[3]) = (blue, green, red, alpha)
        }
    }
    return image
}

@Suite struct SpriteBlenderTests {
    @Test func halfWhiteOverGreyGivesTheMidpoint() throws {
        // Limited range: white is Y 235, grey 128; half of each is 181.5. Chroma stays neutral.
        let opaqueWhite = try solidImage(width: 4, height: 4, red: 255, green: 255, blue: 255, alpha: 255)
        let halfWhite = try solidImage(width: 4, height: 4, red: 128, green: 128, blue: 128, alpha: 128)
        for (image, opacity) in [(opaqueWhite, 0.5), (halfWhite, 1.0)] {
            for matrix in [YUVMatrix.bt601, .bt709] {
                let frame = TestYUVFrame(width: 8, height: 8, y: 128, u: 128, v: 128)
                frame.withImage(matrix: matrix) { SpriteBlender().blend(image, atX: 2, y: 2, opacity: opacity, onto: $0) }
                #expect(abs(Double(frame.luma[3 * 8 + 3]) - 181.5) <= 1)
                #expect(abs(Int(frame.cb[1 * 4 + 1]) - 128) <= 1 && abs(Int(frame.cr[1 * 4 + 1]) - 128) <= 1)
                #expect(frame.luma[0] == 128 && frame.luma[7 * 8 + 7] == 128)
            }
        }
    }

    @Test func fullRangeWhiteIs255AndRedMatchesTheMatrix() throws {
        let white = try solidImage(width: 2, height: 2, red: 255, green: 255, blue: 255, alpha: 255)
        let frame = TestYUVFrame(width: 4, height: 4, y: 0, u: 128, v: 128)
        frame.withImage(range: .full) { SpriteBlender().blend(white, atX: 0, y: 0, opacity: 1, onto: $0) }
        #expect(frame.luma[0] == 255 && frame.luma[5] == 255 && frame.cb[0] == 128)

        // BT.601 limited red: Y = 16 + 219·0.299 = 81.5, Cb = 128 − 112·0.299/0.886 = 90.2, Cr = 240.
        let red = try solidImage(width: 2, height: 2, red: 255, green: 0, blue: 0, alpha: 255)
        let other = TestYUVFrame(width: 4, height: 4, y: 0, u: 128, v: 128)
        other.withImage(matrix: .bt601) { SpriteBlender().blend(red, atX: 2, y: 2, opacity: 1, onto: $0) }
        #expect(abs(Double(other.luma[2 * 4 + 2]) - 81.5) <= 1 && abs(Int(other.cb[3]) - 90) <= 1 && other.cr[3] == 240)
    }

    @Test func spritesAreClippedAtEveryEdgeWithChromaFromTheirCoverage() throws {
        // Opaque red (BT.709 limited: Y 63, Cr 240) over Y 50 / Cr 128, at positions crossing each edge.
        let red = try solidImage(width: 7, height: 5, red: 255, green: 0, blue: 0, alpha: 255)
        let (width, height) = (16, 12)
        let positions = [(-3, -2), (12, 3), (5, -4), (6, 10), (-7, 0), (16, 3), (3, 12), (-4, 9), (11, -1), (1, 1), (-100, -100)]
        let blender = SpriteBlender()
        for (x, y) in positions {
            let frame = TestYUVFrame(width: width, height: height, y: 50, u: 128, v: 128)
            frame.withImage { blender.blend(red, atX: x, y: y, opacity: 1, onto: $0) }
            let inside = { (px: Int, py: Int) in px >= x && px < x + 7 && py >= y && py < y + 5 }
            for py in 0..<height {
                for px in 0..<width {
                    #expect(frame.luma[py * width + px] == (inside(px, py) ? 63 : 50), "luma (\(px), \(py)) with the sprite at (\(x), \(y))")
                }
            }
            for j in 0..<height / 2 {
                for i in 0..<width / 2 {
                    let covered = [(0, 0), (1, 0), (0, 1), (1, 1)].filter { inside(2 * i + $0.0, 2 * j + $0.1) }.count
                    let expected = 128 + 112 * Double(covered) / 4
                    #expect(abs(Double(frame.cr[j * (width / 2) + i]) - expected) <= 1,
                            "Cr (\(i), \(j)) with the sprite at (\(x), \(y)): \(frame.cr[j * (width / 2) + i]), expected \(expected)")
                }
            }
        }
    }
}

@Suite struct LRUCacheTests {
    /// A sprite blended as parts whose inner edges fall on even frame columns and rows (a
    /// karaoke line cut at its edge) gives exactly the frame the whole sprite gives, at odd
    /// and even positions and across the frame's edges; a part blends nothing outside itself.
    @Test func partsOnEvenEdgesBlendAsTheWholeSprite() throws {
        let image = try RGBAImage(width: 13, height: 9)
        for y in 0..<9 {
            for x in 0..<13 {
                let p = image.pixels + y * image.stride + x * 4
                let alpha = UInt8((x * 37 + y * 11) % 256)
                (p[0], p[1], p[2], p[3]) = (alpha / 3, alpha / 2, alpha, alpha) // premultiplied
            }
        }
        let blender = SpriteBlender()
        for (x, y) in [(3, 2), (4, 5), (-3, -1), (10, 8)] {
            let whole = TestYUVFrame(width: 16, height: 12, y: 90, u: 110, v: 150)
            let parts = TestYUVFrame(width: 16, height: 12, y: 90, u: 110, v: 150)
            whole.withImage { blender.blend(image, atX: x, y: y, opacity: 0.8, onto: $0) }
            // Columns split where x + column is even, rows where y + row is even.
            let columnCut = 6 - ((x + 6) & 1), rowCut = 4 - ((y + 4) & 1)
            let pieces = [PixelBox(x: 0, y: 0, width: columnCut, height: rowCut), PixelBox(x: columnCut, y: 0, width: 13 - columnCut, height: rowCut),
                          PixelBox(x: 0, y: rowCut, width: 13, height: 9 - rowCut)]
            parts.withImage { frame in
                for (index, piece) in pieces.enumerated() {
                    blender.blend(image, atX: x, y: y, opacity: 0.8, part: piece, keep: index == 0, onto: frame)
                }
            }
            #expect(whole.luma == parts.luma && whole.cb == parts.cb && whole.cr == parts.cr, "at (\(x), \(y))")
        }
        let alone = TestYUVFrame(width: 16, height: 12, y: 90, u: 110, v: 150)
        alone.withImage { blender.blend(image, atX: 2, y: 2, opacity: 1, part: PixelBox(x: 2, y: 0, width: 4, height: 2), onto: $0) }
        for row in 0..<12 {
            for column in 0..<16 where !(4..<8).contains(column) || !(2..<4).contains(row) {
                #expect(alone.luma[row * 16 + column] == 90, "(\(column), \(row)) is outside the part")
            }
        }
    }

    @Test func evictsTheLeastRecentlyUsedToStayWithinItsBudget() {
        let cache = LRUCache<String, Int>(budget: 100)
        cache.insert(1, bytes: 40, for: "a")
        cache.insert(2, bytes: 40, for: "b")
        #expect(cache.value(for: "a") == 1) // "b" is now the oldest
        cache.insert(3, bytes: 40, for: "c")
        #expect(cache.value(for: "b") == nil && cache.value(for: "a") == 1 && cache.value(for: "c") == 3)
        #expect(cache.totalBytes == 80)
        cache.insert(4, bytes: 101, for: "huge") // larger than the budget: not kept
        #expect(cache.value(for: "huge") == nil && cache.count == 2)
    }

    @Test func dropsWhatTheLastRoundsDidNotUse() {
        let cache = LRUCache<String, Int>(budget: 1000)
        cache.insert(1, bytes: 10, for: "used")
        cache.insert(2, bytes: 20, for: "idle")
        for _ in 1...3 {
            cache.startRound(droppingUnusedFor: 3)
            _ = cache.value(for: "used")
        }
        #expect(cache.count == 2) // "idle" was last used three rounds ago: still kept
        cache.startRound(droppingUnusedFor: 3)
        #expect(cache.value(for: "idle") == nil && cache.value(for: "used") == 1 && cache.totalBytes == 10)
    }
}
