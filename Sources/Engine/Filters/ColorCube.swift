/// A 3D colour lookup table: `size`³ output colours on a regular grid over the input cube
/// `domainMin…domainMax`, red varying fastest, then green, then blue (the .cube order), read
/// by tetrahedral interpolation. Made from a .cube file (`read`) or by sampling a colour
/// function (`init(size:sampling:)`, how runs of colour filters become one lookup).
///
/// Immutable once made, hence `Sendable`; compared by identity (one file read is one table),
/// so a filter holding one hashes cheaply however large the table is.
public final class ColorCube: Sendable, Hashable {
    /// The file it was read from, or a description of a generated table.
    public let path: String
    public let size: Int
    let domainMin: SIMD3<Float>
    let domainMax: SIMD3<Float>
    /// Three floats (red, green, blue) per grid point.
    let table: [Float]

    /// The largest LUT_3D_SIZE accepted: 129³ points are 26 MB of table (common LUTs are 17,
    /// 33 or 65 a side).
    public static let maxSize = 129

    public var byteCount: Int { table.count * MemoryLayout<Float>.stride }

    init(path: String, size: Int, domainMin: SIMD3<Float> = .zero, domainMax: SIMD3<Float> = .one, table: [Float]) {
        (self.path, self.size, self.domainMin, self.domainMax, self.table) = (path, size, domainMin, domainMax, table)
    }

    /// A table of `transform` sampled on a `size`³ grid over 0…1.
    convenience init(size: Int, description: String, sampling transform: (SIMD3<Float>) -> SIMD3<Float>) {
        var table: [Float] = []
        table.reserveCapacity(size * size * size * 3)
        let step = 1 / Float(size - 1)
        for b in 0..<size {
            for g in 0..<size {
                for r in 0..<size {
                    let out = transform(SIMD3(Float(r), Float(g), Float(b)) * step)
                    table += [out.x, out.y, out.z]
                }
            }
        }
        self.init(path: description, size: size, table: table)
    }

    public static func == (a: ColorCube, b: ColorCube) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The colour `rgb` (clamped to the domain) maps to. For one colour; pixel loops take a
    /// `Sampler` once instead.
    func lookup(_ rgb: SIMD3<Float>) -> SIMD3<Float> {
        withSampler { $0(rgb) }
    }

    /// Runs `body` with a sampler reading this cube's table in place.
    func withSampler<T>(_ body: (Sampler) throws -> T) rethrows -> T {
        try table.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { preconditionFailure("a cube always has a table") }
            let scale = SIMD3<Float>(repeating: Float(size - 1)) / (domainMax - domainMin)
            return try body(Sampler(table: base, last: size - 1, scale: scale, offset: -domainMin * scale))
        }
    }

    /// Tetrahedral interpolation in the grid (four grid points a colour, as ffmpeg's lut3d
    /// does by default; exact for colours on the grid and for linear maps).
    struct Sampler {
        let table: UnsafePointer<Float>
        let last: Int
        /// Grid coordinates are `rgb · scale + offset`.
        let scale: SIMD3<Float>, offset: SIMD3<Float>

        @inline(__always)
        func callAsFunction(_ rgb: SIMD3<Float>) -> SIMD3<Float> {
            let grid = (rgb * scale + offset).clamped(lowerBound: .zero, upperBound: SIMD3(repeating: Float(last)))
            // The lower corner of the cell, kept one short of the end so the upper one exists.
            let (i, j, k) = (min(Int(grid.x), last - 1), min(Int(grid.y), last - 1), min(Int(grid.z), last - 1))
            let (fx, fy, fz) = (grid.x - Float(i), grid.y - Float(j), grid.z - Float(k))
            let (dx, dy, dz) = (3, 3 * (last + 1), 3 * (last + 1) * (last + 1))
            let base = i * dx + j * dy + k * dz
            @inline(__always) func at(_ offset: Int) -> SIMD3<Float> {
                let p = table + base + offset
                return SIMD3(p[0], p[1], p[2])
            }
            // The tetrahedron holding the point: walk from the low corner along the axes in
            // order of their fractions, largest first.
            let (first, second, third, w0, w1, w2, w3): (Int, Int, Int, Float, Float, Float, Float)
            if fx >= fy {
                if fy >= fz { (first, second, third, w0, w1, w2, w3) = (dx, dy, dz, 1 - fx, fx - fy, fy - fz, fz) }
                else if fx >= fz { (first, second, third, w0, w1, w2, w3) = (dx, dz, dy, 1 - fx, fx - fz, fz - fy, fy) }
                else { (first, second, third, w0, w1, w2, w3) = (dz, dx, dy, 1 - fz, fz - fx, fx - fy, fy) }
            } else {
                if fz >= fy { (first, second, third, w0, w1, w2, w3) = (dz, dy, dx, 1 - fz, fz - fy, fy - fx, fx) }
                else if fz >= fx { (first, second, third, w0, w1, w2, w3) = (dy, dz, dx, 1 - fy, fy - fz, fz - fx, fx) }
                else { (first, second, third, w0, w1, w2, w3) = (dy, dx, dz, 1 - fy, fy - fx, fx - fz, fz) }
            }
            return at(0) * w0 + at(first) * w1 + at(first + second) * w2 + at(first + second + third) * w3
        }
    }

    // MARK: .cube files

    /// Reads a .cube file (Adobe's Cube LUT specification, also written by Resolve): TITLE,
    /// DOMAIN_MIN/MAX (or Resolve's LUT_3D_INPUT_RANGE), LUT_3D_SIZE, then size³ lines of
    /// three numbers; # starts a comment. Errors name the file and line.
    public static func read(path: String) throws -> ColorCube {
        let text: String
        do { text = try TextFile.read(path, kind: "LUT") } catch let error as TimedTextError {
            throw FilterError(error.description)
        }
        return try parse(text, fileName: path)
    }

    static func parse(_ text: String, fileName: String) throws -> ColorCube {
        func failure(_ line: Int?, _ message: String) -> FilterError {
            FilterError(TimedTextError(file: fileName, line: line, message).description)
        }
        var size: Int?
        var domainMin = SIMD3<Float>.zero, domainMax = SIMD3<Float>.one
        var table: [Float] = []
        for (number, line) in TextFile.lines(text) {
            let words = line.trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let first = words.first, !first.hasPrefix("#") else { continue }
            if let firstCharacter = first.unicodeScalars.first, firstCharacter.properties.isAlphabetic {
                guard table.isEmpty else { throw failure(number, "\(first) after the table's first line; keywords come first") }
                switch first {
                case "TITLE": continue
                case "LUT_3D_SIZE":
                    guard words.count == 2, let value = Int(words[1]), (2...maxSize).contains(value) else {
                        throw failure(number, "LUT_3D_SIZE must be a whole number 2…\(maxSize), got \(String(line.trimmed).quotedForMessage())")
                    }
                    size = value
                case "DOMAIN_MIN", "DOMAIN_MAX":
                    let bound = try triple(words.dropFirst(), line: number, what: String(first), failure)
                    if first == "DOMAIN_MIN" { domainMin = bound } else { domainMax = bound }
                case "LUT_3D_INPUT_RANGE":
                    guard words.count == 3, let low = Float(words[1]), let high = Float(words[2]), low.isFinite, high.isFinite else {
                        throw failure(number, "LUT_3D_INPUT_RANGE needs two numbers, got \(String(line.trimmed).quotedForMessage())")
                    }
                    (domainMin, domainMax) = (SIMD3(repeating: low), SIMD3(repeating: high))
                case "LUT_1D_SIZE", "LUT_1D_INPUT_RANGE":
                    throw failure(number, "a 1D LUT (\(first)); colorCube needs a 3D LUT (LUT_3D_SIZE)")
                default:
                    throw failure(number, "unknown keyword \(String(first).quotedForMessage()) (TITLE, LUT_3D_SIZE, DOMAIN_MIN, DOMAIN_MAX, LUT_3D_INPUT_RANGE)")
                }
                continue
            }
            guard let size else { throw failure(number, "table line before LUT_3D_SIZE") }
            guard table.count < size * size * size * 3 else {
                throw failure(number, "more than the \(size * size * size) table lines LUT_3D_SIZE \(size) needs")
            }
            let entry = try triple(words[...], line: number, what: "a table line", failure)
            table += [entry.x, entry.y, entry.z]
        }
        guard let size else { throw failure(nil, "no LUT_3D_SIZE line: not a 3D .cube LUT") }
        guard table.count == size * size * size * 3 else {
            throw failure(nil, "has \(table.count / 3) table lines; LUT_3D_SIZE \(size) needs \(size * size * size)")
        }
        guard all(domainMax .> domainMin) else { throw failure(nil, "DOMAIN_MAX must be above DOMAIN_MIN in every channel") }
        return ColorCube(path: fileName, size: size, domainMin: domainMin, domainMax: domainMax, table: table)
    }

    private static func triple(_ words: ArraySlice<Substring>, line: Int, what: String,
                               _ failure: (Int?, String) -> FilterError) throws -> SIMD3<Float> {
        let numbers = words.compactMap { Float($0) }.filter(\.isFinite)
        guard words.count == 3, numbers.count == 3 else {
            throw failure(line, "\(what) needs three numbers (red green blue), got \(words.joined(separator: " ").quotedForMessage())")
        }
        return SIMD3(numbers[0], numbers[1], numbers[2])
    }
}
