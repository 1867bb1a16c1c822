import Testing
@testable import MoonreelEngine

@Suite struct RGBAImageTrimTests {
    /// Ink at every edge case of the pair-at-a-time scan: odd and even columns, the last
    /// column of an odd width, a lone pixel, a pixel whose only non-zero byte is alpha.
    @Test func trimKeepsExactlyTheInk() throws {
        for width in [1, 2, 7, 8, 33] {
            for inkColumns in [[0], [width - 1], [width / 2], [1 % width, width - 1], [0, width - 1]] {
                let image = try RGBAImage(width: width, height: 5)
                for (row, x) in inkColumns.enumerated() {
                    let pixel = image.row(row + 1) + x * 4
                    pixel[3] = 9 // alpha only: premultiplied black at a low opacity
                }
                let trimmed = try #require(try image.trimmedToInk())
                let (left, right) = (inkColumns.min() ?? 0, inkColumns.max() ?? 0)
                #expect(trimmed.x == left && trimmed.y == 1, "width \(width), ink at \(inkColumns)")
                #expect(trimmed.image.width == right - left + 1 && trimmed.image.height == inkColumns.count,
                        "width \(width), ink at \(inkColumns)")
                #expect(trimmed.image.pixel(x: inkColumns[0] - left, y: 0).alpha == 9)
            }
        }
        #expect(try RGBAImage(width: 9, height: 3).trimmedToInk() == nil)
    }
}
