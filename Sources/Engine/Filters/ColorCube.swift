/// A 3D colour lookup table: `size`³ output colours on a regular grid over the input cube
/// `domainMin…domainMax`, red varying fastest, then green, then blue (the .cube order), read
/// by trilinear interpolation. Made from a .cube file (`read`) or by sampling a colour
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

    /// The colour `rgb` (0…1, clamped to the domain) maps to.
    @inline(__always)
    func lookup(_ rgb: SIMD3<Float>) -> SIMD3<Float> {
        let last = Float(size - 1)
        let unit = (rgb - domainMin) / (domainMax - domainMin)
        let scaled = unit.clamped(lowerBound: .zero, upperBound: .one) * last
        // The lower corner of the cell, kept one short of the end so the upper one exists.
        let corner = SIMD3<Int>(min(Int(scaled.x), size - 2), min(Int(scaled.y), size - 2), min(Int(scaled.z), size - 2))
        let f = scaled - SIMD3<Float>(Float(corner.x), Float(corner.y), Float(corner.z))
        let (rowStride, planeStride) = (size * 3, size * size * 3)
        return table.withUnsafeBufferPointer { t in
            let base = corner.x * 3 + corner.y * rowStride + corner.z * planeStride
            @inline(__always) func at(_ offset: Int) -> SIMD3<Float> { SIMD3(t[offset], t[offset + 1], t[offset + 2]) }
            let c00 = mix(at(base), at(base + 3), f.x)
            let c10 = mix(at(base + rowStride), at(base + rowStride + 3), f.x)
            let c01 = mix(at(base + planeStride), at(base + planeStride + 3), f.x)
            let c11 = mix(at(base + planeStride + rowStride), at(base + planeStride + rowStride + 3), f.x)
            return mix(mix(c00, c10, f.y), mix(c01, c11, f.y), f.z)
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

@inline(__always)
func mix(_ a: SIMD3<Float>, _ b: SIMD3<Float>, _ t: Float) -> SIMD3<Float> { a + (b - a) * t }
