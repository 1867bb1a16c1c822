import MoonreelMedia

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
    /// Grid points per side (LUT_3D_SIZE): 2…`maxSize`.
    public let size: Int
    let domainMin: SIMD3<Float>
    let domainMax: SIMD3<Float>
    /// One colour (red, green, blue and an unused 0) per grid point: a point is one aligned
    /// 16-byte load, and its colour a vector for the interpolation's arithmetic.
    let table: [SIMD4<Float>]

    /// The largest LUT_3D_SIZE accepted: 129³ points are 34 MB of table (common LUTs are 17,
    /// 33 or 65 a side).
    public static let maxSize = 129

    package var byteCount: Int { table.count * MemoryLayout<SIMD4<Float>>.stride }

    init(path: String, size: Int, domainMin: SIMD3<Float> = .zero, domainMax: SIMD3<Float> = .one, table: [SIMD4<Float>]) {
        (self.path, self.size, self.domainMin, self.domainMax, self.table) = (path, size, domainMin, domainMax, table)
    }

    /// A table of `transform` sampled on a `size`³ grid over 0…1.
    convenience init(size: Int, description: String, sampling transform: (SIMD3<Float>) -> SIMD3<Float>) {
        var table: [SIMD4<Float>] = []
        table.reserveCapacity(size * size * size)
        let step = 1 / Float(size - 1)
        for b in 0..<size {
            for g in 0..<size {
                for r in 0..<size {
                    let out = transform(SIMD3(Float(r), Float(g), Float(b)) * step)
                    table.append(SIMD4(out, 0))
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
    /// does by default; exact for colours on the grid and for linear maps), without branches:
    /// which tetrahedron holds a colour changes from pixel to pixel, which a branch predictor
    /// cannot follow.
    struct Sampler {
        let table: UnsafePointer<SIMD4<Float>>
        let last: Int
        /// Grid coordinates are `rgb · scale + offset`.
        let scale: SIMD3<Float>, offset: SIMD3<Float>

        @inline(__always)
        func callAsFunction(_ rgb: SIMD3<Float>) -> SIMD3<Float> {
            // Scalar clamps and two-argument min/max: SIMD clamping and the variadic max are
            // calls (the latter with an array) in this innermost loop.
            let top = Float(last)
            let grid = rgb * scale + offset
            let (x, y, z) = (min(max(grid.x, 0), top), min(max(grid.y, 0), top), min(max(grid.z, 0), top))
            // The lower corner of the cell, kept one short of the end so the upper one exists.
            let (i, j, k) = (min(Int(x), last - 1), min(Int(y), last - 1), min(Int(z), last - 1))
            let (fx, fy, fz) = (x - Float(i), y - Float(j), z - Float(k))
            let (dx, dy, dz) = (1, last + 1, (last + 1) * (last + 1))
            let corner = table + (i * dx + j * dy + k * dz)
            // From the low corner, one step along each axis, largest fraction first (ties in a
            // fixed order, so the three steps are three different axes).
            let firstStep = fx >= fy && fx >= fz ? dx : fy >= fz ? dy : dz
            let lastStep = fx < fy && fx < fz ? dx : fy < fz ? dy : dz
            let largest = max(max(fx, fy), fz), smallest = min(min(fx, fy), fz)
            let middle = fx + fy + fz - largest - smallest
            let all = dx + dy + dz
            let mixed = corner[0] * (1 - largest) + corner[firstStep] * (largest - middle)
                + corner[all - lastStep] * (middle - smallest) + corner[all] * smallest
            return SIMD3(mixed.x, mixed.y, mixed.z)
        }
    }

    // MARK: .cube files

    /// Reads a .cube file (Adobe's Cube LUT specification, also written by Resolve): TITLE,
    /// DOMAIN_MIN/MAX (or Resolve's LUT_3D_INPUT_RANGE), LUT_3D_SIZE, then size³ lines of
    /// three numbers; # starts a comment. Errors name the file and line.
    public static func read(path: String) throws -> ColorCube {
        let text: String
        do { text = TextFile.withoutByteOrderMark(try TextFile.read(path, kind: "LUT")) } catch let error as TimedTextError {
            throw EngineError(error.description, kind: error.kind, subject: error.file)
        }
        return try parse(text, fileName: path)
    }

    static func parse(_ text: String, fileName: String) throws -> ColorCube {
        func failure(_ line: Int?, _ message: String) -> EngineError {
            EngineError(TimedTextError(file: fileName, line: line, message).description, kind: .decode, subject: fileName)
        }
        var size: Int?
        var domainMin = SIMD3<Float>.zero, domainMax = SIMD3<Float>.one
        var table: [SIMD4<Float>] = []
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
            guard table.count < size * size * size else {
                throw failure(number, "more than the \(size * size * size) table lines LUT_3D_SIZE \(size) needs")
            }
            let entry = try triple(words[...], line: number, what: "a table line", failure)
            table.append(SIMD4(entry, 0))
        }
        guard let size else { throw failure(nil, "no LUT_3D_SIZE line: not a 3D .cube LUT") }
        guard table.count == size * size * size else {
            throw failure(nil, "has \(table.count) table lines; LUT_3D_SIZE \(size) needs \(size * size * size)")
        }
        guard all(domainMax .> domainMin) else { throw failure(nil, "DOMAIN_MAX must be above DOMAIN_MIN in every channel") }
        return ColorCube(path: fileName, size: size, domainMin: domainMin, domainMax: domainMax, table: table)
    }

    private static func triple(_ words: ArraySlice<Substring>, line: Int, what: String,
                               _ failure: (Int?, String) -> EngineError) throws -> SIMD3<Float> {
        let numbers = words.compactMap { Float($0) }.filter(\.isFinite)
        guard words.count == 3, numbers.count == 3 else {
            throw failure(line, "\(what) needs three numbers (red green blue), got \(words.joined(separator: " ").quotedForMessage())")
        }
        return SIMD3(numbers[0], numbers[1], numbers[2])
    }
}
