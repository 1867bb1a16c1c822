import MoonreelComposition
import MoonreelMedia

/// Frames of a video side by side, as people print them: tiles of one size in rows, a gap
/// between them on a dark ground, each tile's time written in its corner.
public enum ContactSheet {
    /// `tiles` (opaque pictures of one size) `columns` to a row; `labels[i]` is drawn in
    /// the lower-left corner of tile i, white with a dark outline (readable on any picture).
    /// `width`: the sheet's exact width (the tiles are made to fit it; what rounding leaves
    /// goes to the margins), else what the tiles and gaps take.
    public static func make(_ tiles: [RGBAImage], labels: [String], columns: Int, gap: Int = 8, width: Int? = nil) throws -> RGBAImage {
        guard !tiles.isEmpty, columns > 0 else { throw EngineError("a contact sheet needs pictures and at least one column") }
        let cellWidth = tiles.map(\.width).max() ?? 1, cellHeight = tiles.map(\.height).max() ?? 1
        let (across, rows) = (min(columns, tiles.count), (tiles.count + columns - 1) / columns)
        let natural = across * cellWidth + (across + 1) * gap
        let sheet = try RGBAImage(width: max(width ?? natural, natural), height: rows * cellHeight + (rows + 1) * gap)
        let margin = (sheet.width - natural) / 2
        for y in 0..<sheet.height {
            let row = sheet.row(y)
            for x in 0..<sheet.width { (row[x * 4], row[x * 4 + 1], row[x * 4 + 2], row[x * 4 + 3]) = (24, 24, 24, 255) }
        }
        let text = try TextRasterizer()
        for (index, tile) in tiles.enumerated() {
            let left = margin + gap + (index % columns) * (cellWidth + gap), top = gap + (index / columns) * (cellHeight + gap)
            for y in 0..<tile.height {
                (sheet.row(top + y) + left * 4).update(from: tile.row(y), count: tile.width * 4)
            }
            guard index < labels.count else { continue }
            var style = TextStyle(string: labels[index])
            style.fontSize = max(10, Double(min(cellWidth, cellHeight)) / 9).rounded()
            style.strokeWidth = max(1, style.fontSize / 8)
            let inset = Int(style.fontSize / 3)
            let label = try text.rasterize(style, in: Size(width: Double(tile.width - 2 * inset), height: style.fontSize * 1.5))
            guard let ink = label.image else { continue }
            let labelTop = top + tile.height - inset - Int(style.fontSize * 1.3)
            blend(ink, onto: sheet, x: left + inset + label.x, y: labelTop + label.y, within: (left, top, tile.width, tile.height))
        }
        return sheet
    }

    /// Premultiplied `image` over `target` at (x, y), clipped to the tile.
    private static func blend(_ image: RGBAImage, onto target: RGBAImage, x: Int, y: Int, within tile: (x: Int, y: Int, width: Int, height: Int)) {
        for row in 0..<image.height {
            let ty = y + row
            guard ty >= tile.y, ty < tile.y + tile.height else { continue }
            let source = image.row(row), destination = target.row(ty)
            for column in 0..<image.width {
                let tx = x + column
                guard tx >= tile.x, tx < tile.x + tile.width else { continue }
                let alpha = Int(source[column * 4 + 3])
                for channel in 0..<3 {
                    let under = Int(destination[tx * 4 + channel])
                    destination[tx * 4 + channel] = UInt8(min(255, Int(source[column * 4 + channel]) + under * (255 - alpha) / 255))
                }
            }
        }
    }
}
