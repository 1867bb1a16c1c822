#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import CMoonPangoCairo
import MoonreelComposition
import MoonreelMedia

extension TextStyle {
    /// The colour of a karaoke line's sung part when it differs from the unsung one (the line
    /// is then drawn as a `KaraokeText`); nil otherwise.
    var karaokeColor: Color? {
        guard let highlightColor, highlightColor != foregroundColor else { return nil }
        return highlightColor
    }

    /// The style with no part sung: what a karaoke line's two drawings depend on.
    var withoutKaraokeProgress: TextStyle {
        var style = self
        (style.highlightedScalars, style.highlightFraction) = (0, 0)
        return style
    }
}

/// A karaoke line drawn twice on one canvas, all unsung and all sung, instead of once per
/// step of its fill (as libass draws a `\k` line once and clips it): each frame takes the
/// sung drawing left of the sung edge and the unsung one right of it, on each visual line
/// (right of it and left of it in right-to-left text). Both drawings have the line's
/// outline and shadow, so only the fill's colour changes at the edge; a pixel the edge
/// crosses is a mix of the two by how much of it is sung. A glyph whose ink reaches past its
/// neighbour's edge is cut there, where the step-by-step drawing coloured it whole.
package struct KaraokeText: Sendable {
    package let unsung: RGBAImage
    package let sung: RGBAImage
    /// Top-left corner of both drawings relative to the layer box (as `RasterizedText`).
    package let x: Int, y: Int
    let geometry: KaraokeGeometry
    /// The rows of the drawings that belong to each visual line: consecutive, from row 0 to
    /// the last. Where the layout leaves a gap between two lines, their boundary is a row the
    /// two drawings have alike (no fill in it), so the 4:2:0 blend may move it by one row.
    let bands: [Range<Int>]

    init(unsung: RGBAImage, sung: RGBAImage, x: Int, y: Int, geometry: KaraokeGeometry) throws {
        guard unsung.width == sung.width, unsung.height == sung.height else {
            throw EngineError("karaoke drawings differ in size (\(unsung.width)×\(unsung.height), \(sung.width)×\(sung.height))")
        }
        (self.unsung, self.sung, self.x, self.y, self.geometry) = (unsung, sung, x, y, geometry)
        bands = Self.bands(of: geometry.lines, unsung: unsung, sung: sung)
    }

    /// Memory of both drawings, for cache budgets.
    var byteCount: Int { unsung.byteCount + sung.byteCount }

    var width: Int { unsung.width }
    var height: Int { unsung.height }

    /// The line with `sung` scalars sung and `fraction` of the next one (see `TextStyle`),
    /// as one drawing: one of the two when the edge is at an end, else a new composite.
    func drawn(sung sungScalars: Int, fraction: Double) throws -> RasterizedText {
        let spans = geometry.sungSpans(sung: sungScalars, fraction: fraction)
        if spans.allSatisfy(\.isEmpty) { return RasterizedText(image: unsung, x: x, y: y) }
        if spans.allSatisfy(Self.coversLine) { return RasterizedText(image: sung, x: x, y: y) }
        let image = try composite(columns: 0..<width, rows: 0..<height, spans: spans)
        return RasterizedText(image: image, x: x, y: y)
    }

    /// The sprites that blend the line with `sung` scalars sung (and `fraction` of the next)
    /// onto a 4:2:0 frame when its drawings' top-left corner is at (`atX`, `y`) of the frame:
    /// parts of the two cached drawings, split on even columns and rows of the frame so
    /// that no chroma sample mixes two parts, and a few columns around each edge composed
    /// for this frame only. Together they blend exactly as the composite from `drawn` would.
    func sprites(sung sungScalars: Int, fraction: Double, atX originX: Int, y originY: Int, opacity: Double) throws -> [Sprite] {
        let spans = geometry.sungSpans(sung: sungScalars, fraction: fraction)
        var sprites: [Sprite] = []
        // Bands drawn whole from one drawing are merged with their neighbours of the same kind.
        var pending: (image: RGBAImage, rows: Range<Int>)?
        func flush() {
            guard let run = pending else { return }
            let part = PixelBox(x: 0, y: run.rows.lowerBound, width: width, height: run.rows.count)
            sprites.append(Sprite(image: run.image, x: originX, y: originY, opacity: opacity, part: part))
            pending = nil
        }
        for (line, band) in bands.enumerated() {
            // Moved down one row where its top falls on an odd row of the frame: that row
            // is alike in both drawings (see `bands`), and a chroma row then covers one band.
            let top = band.lowerBound == 0 ? 0 : band.lowerBound + ((originY + band.lowerBound) & 1)
            let bottom = band.upperBound == height ? height : band.upperBound + ((originY + band.upperBound) & 1)
            guard top < bottom else { continue }
            let rows = top..<bottom
            let whole: RGBAImage? = spans[line].isEmpty ? unsung : Self.coversLine(spans[line]) ? sung : nil
            if let whole {
                if let run = pending, run.image === whole, run.rows.upperBound == top {
                    pending = (whole, run.rows.lowerBound..<bottom)
                } else {
                    flush()
                    pending = (whole, rows)
                }
                continue
            }
            flush()
            for run in columnRuns(of: spans[line], originX: originX) {
                if let image = run.image {
                    let part = PixelBox(x: run.columns.lowerBound, y: top, width: run.columns.count, height: rows.count)
                    sprites.append(Sprite(image: image, x: originX, y: originY, opacity: opacity, part: part))
                } else {
                    let edge = try composite(columns: run.columns, rows: rows, spans: spans)
                    sprites.append(Sprite(image: edge, x: originX + run.columns.lowerBound, y: originY + top, opacity: opacity, isReused: false))
                }
            }
        }
        flush()
        return sprites
    }

    /// One visual line's columns as runs: taken whole from a drawing (`image`), or nil where
    /// they must be composed (the columns an edge crosses, widened to whole chroma pairs of
    /// the frame, and a pair an edge on an odd column splits).
    private func columnRuns(of spans: [KaraokeGeometry.Span], originX: Int) -> [(columns: Range<Int>, image: RGBAImage?)] {
        let weights = Self.weights(of: spans, columns: 0..<width)
        var composed = [Bool](repeating: false, count: width)
        func markPair(around column: Int) {
            // The chroma pair of the frame holding `column`.
            let first = column - ((originX + column) & 1)
            for c in first...(first + 1) where c >= 0 && c < width { composed[c] = true }
        }
        for column in 0..<width {
            if weights[column] != 0 && weights[column] != 255 {
                markPair(around: column)
            } else if column > 0, weights[column] != weights[column - 1], (originX + column) & 1 != 0 {
                markPair(around: column)
            }
        }
        var runs: [(columns: Range<Int>, image: RGBAImage?)] = []
        var start = 0
        for column in 1...width where column == width || composed[column] != composed[start]
            || (!composed[column] && weights[column] != weights[start]) {
            runs.append((start..<column, composed[start] ? nil : weights[start] == 255 ? sung : unsung))
            start = column
        }
        return runs
    }

    /// The two drawings mixed over `columns` × `rows`: each pixel is sung by the share of
    /// it the spans of its visual line cover.
    private func composite(columns: Range<Int>, rows: Range<Int>, spans: [[KaraokeGeometry.Span]]) throws -> RGBAImage {
        let image = try RGBAImage(width: columns.count, height: rows.count)
        for (line, band) in bands.enumerated() {
            let (first, end) = (max(band.lowerBound, rows.lowerBound), min(band.upperBound, rows.upperBound))
            guard first < end else { continue }
            let weights = Self.weights(of: spans[line], columns: columns)
            for row in first..<end {
                let target = image.row(row - rows.lowerBound)
                let (sungRow, unsungRow) = (sung.row(row) + columns.lowerBound * 4, unsung.row(row) + columns.lowerBound * 4)
                for (column, weight) in weights.enumerated() {
                    let at = column * 4
                    switch weight {
                    case 0: memcpy(target + at, unsungRow + at, 4)
                    case 255: memcpy(target + at, sungRow + at, 4)
                    default:
                        let w = UInt32(weight)
                        for byte in at..<(at + 4) {
                            target[byte] = UInt8(truncatingIfNeeded: divide255(UInt32(sungRow[byte]) * w + UInt32(unsungRow[byte]) * (255 - w)))
                        }
                    }
                }
            }
        }
        return image
    }

    /// How much of each column the spans cover, 0 (unsung) to 255 (sung).
    private static func weights(of spans: [KaraokeGeometry.Span], columns: Range<Int>) -> [UInt8] {
        var weights = [UInt8](repeating: 0, count: columns.count)
        for span in spans {
            let first = max(columns.lowerBound, span.start.isFinite ? Int(span.start.rounded(.down)) : columns.lowerBound)
            let last = min(columns.upperBound - 1, span.end.isFinite ? Int(span.end.rounded(.up)) - 1 : columns.upperBound - 1)
            guard first <= last else { continue }
            for column in first...last {
                let covered = min(span.end, Double(column + 1)) - max(span.start, Double(column))
                let index = column - columns.lowerBound
                weights[index] = UInt8(min(Int(weights[index]) + Int((covered * 255).rounded()), 255))
            }
        }
        return weights
    }

    /// Whether one visual line's spans cover it whole.
    private static func coversLine(_ spans: [KaraokeGeometry.Span]) -> Bool {
        spans.count == 1 && spans[0].start == -.infinity && spans[0].end == .infinity
    }

    /// Rows per visual line: each boundary is the row nearest the middle of the gap between
    /// two lines where the drawings agree, searched between the lines' middles (the middle
    /// of the gap itself when there is none: lines that touch).
    private static func bands(of lines: [KaraokeGeometry.Line], unsung: RGBAImage, sung: RGBAImage) -> [Range<Int>] {
        let height = unsung.height
        func alike(_ row: Int) -> Bool { memcmp(unsung.row(row), sung.row(row), unsung.width * 4) == 0 }
        var boundaries = [0]
        for (upper, lower) in zip(lines, lines.dropFirst()) {
            let gap = Int(((upper.bottom + lower.top) / 2).rounded())
            let (from, to) = (Int(((upper.top + upper.bottom) / 2).rounded(.up)), Int(((lower.top + lower.bottom) / 2).rounded(.down)))
            var chosen = gap
            for distance in 0...max(0, to - from) {
                if let row = [gap - distance, gap + distance].first(where: { $0 >= from && $0 <= to && $0 >= 0 && $0 < height && alike($0) }) {
                    chosen = row
                    break
                }
            }
            boundaries.append(min(max(chosen, boundaries[boundaries.count - 1]), height))
        }
        boundaries.append(height)
        return zip(boundaries, boundaries.dropFirst()).map { $0..<max($0, $1) }
    }
}

/// Where a laid-out text's scalars and visual lines lie, in pixels of its drawing.
struct KaraokeGeometry: Sendable {
    /// A stretch of a visual line, from x `start` to `end`; infinite where it reaches the
    /// line's end (so it covers ink past the line's first and last glyph boxes too).
    struct Span: Equatable {
        var start: Double, end: Double
    }

    /// A scalar's logical box across its line.
    struct Box {
        let line: Int
        let x0: Double, x1: Double
        /// Filled from its right edge.
        let rightToLeft: Bool
    }

    struct Line {
        let top: Double, bottom: Double
        /// Leftmost and rightmost edge of its scalars' boxes.
        var x0 = Double.infinity, x1 = -Double.infinity
    }

    /// By scalar index; nil for scalars not on a line (paragraph breaks, text cut off).
    let boxes: [Box?]
    let lines: [Line]
    /// Scalars up to the last one drawn: fewer than `boxes` when the text was cut to fit.
    let shownCount: Int

    /// Measures `layout` (of `style.string`), whose origin lies at `origin` in the drawing.
    init(measuring style: TextStyle, layout: OpaquePointer, origin: Point) throws {
        // Pango counts UTF-8 bytes; the karaoke progress counts scalars.
        let utf8Count = style.string.utf8.count
        var scalarAt = [Int32](repeating: -1, count: utf8Count + 1)
        var offset = 0
        for (index, scalar) in style.string.unicodeScalars.enumerated() {
            scalarAt[offset] = Int32(index)
            offset += UTF8.width(scalar)
        }
        var boxes = [Box?](repeating: nil, count: style.string.unicodeScalars.count)
        var lines: [Line] = []
        guard let iterator = pango_layout_get_iter(layout) else { throw EngineError("cannot walk a text layout") }
        defer { pango_layout_iter_free(iterator) }
        let scale = Double(PANGO_SCALE)
        var currentLine: UnsafeMutablePointer<PangoLayoutLine>?
        repeat {
            let line = pango_layout_iter_get_line_readonly(iterator)
            if lines.isEmpty || line != currentLine {
                currentLine = line
                var top: Int32 = 0, bottom: Int32 = 0
                pango_layout_iter_get_line_yrange(iterator, &top, &bottom)
                lines.append(Line(top: origin.y + Double(top) / scale, bottom: origin.y + Double(bottom) / scale))
            }
            // The position after a line's last character has no run.
            guard let run = pango_layout_iter_get_run_readonly(iterator) else { continue }
            // The "…" of a line cut to fit stands for the scalars it hides: they get no box.
            if Int32(run.pointee.item.pointee.analysis.flags) & PANGO_ANALYSIS_FLAG_IS_ELLIPSIS != 0 { continue }
            let byte = Int(pango_layout_iter_get_index(iterator))
            guard byte >= 0, byte < utf8Count, scalarAt[byte] >= 0 else { continue }
            var extents = PangoRectangle()
            pango_layout_iter_get_char_extents(iterator, &extents)
            let x0 = origin.x + Double(extents.x) / scale, x1 = origin.x + Double(extents.x + extents.width) / scale
            let index = lines.count - 1
            boxes[Int(scalarAt[byte])] = Box(line: index, x0: x0, x1: x1, rightToLeft: run.pointee.item.pointee.analysis.level & 1 == 1)
            if x1 > x0 { (lines[index].x0, lines[index].x1) = (min(lines[index].x0, x0), max(lines[index].x1, x1)) }
        } while pango_layout_iter_next_char(iterator) != 0
        (self.boxes, self.lines) = (boxes, lines)
        shownCount = (boxes.lastIndex { $0 != nil } ?? -1) + 1
    }

    /// The sung stretches of each visual line, sorted and merged, with `sung` scalars sung
    /// and `fraction` of the next one from its leading edge.
    /// A line cut to fit is sung over what is drawn, at the pace of the whole line, so the
    /// fill does not race to the cut and wait there.
    func sungSpans(sung: Int, fraction: Double) -> [[Span]] {
        var (sung, fraction) = (sung, fraction)
        if shownCount < boxes.count, boxes.count > 0 {
            let progress = (Double(max(sung, 0)) + min(max(fraction, 0), 1)) * Double(shownCount) / Double(boxes.count)
            (sung, fraction) = (Int(progress.rounded(.down)), progress - progress.rounded(.down))
        }
        var spans = [[Span]](repeating: [], count: lines.count)
        for box in boxes.prefix(max(sung, 0)) {
            guard let box, box.x1 > box.x0 else { continue }
            spans[box.line].append(Span(start: box.x0, end: box.x1))
        }
        if sung >= 0, sung < boxes.count, fraction > 0, let box = boxes[sung] {
            let width = (box.x1 - box.x0) * min(fraction, 1)
            if width > 0 { spans[box.line].append(box.rightToLeft ? Span(start: box.x1 - width, end: box.x1) : Span(start: box.x0, end: box.x0 + width)) }
        }
        let touching = 1e-6
        return spans.enumerated().map { line, stretches in
            var merged: [Span] = []
            for span in stretches.sorted(by: { $0.start < $1.start }) {
                if let last = merged.last, span.start <= last.end + touching {
                    merged[merged.count - 1].end = max(last.end, span.end)
                } else {
                    merged.append(span)
                }
            }
            // A span reaching a line's end covers whatever ink lies past it.
            for index in merged.indices {
                if merged[index].start <= lines[line].x0 + touching { merged[index].start = -.infinity }
                if merged[index].end >= lines[line].x1 - touching { merged[index].end = .infinity }
            }
            return merged
        }
    }
}
