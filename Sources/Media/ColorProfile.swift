#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import CMoonFFmpeg

/// A picture's embedded ICC colour profile, when it is a matrix/TRC one — what cameras,
/// phones and image editors embed for RGB (Display P3 on every iPhone photo and screenshot,
/// Adobe RGB, ProPhoto, sRGB): a tone curve per channel to linear light, then a 3×3 matrix
/// to the profile connection space (CIE XYZ under D50; ICC.1:2022 §F.3); or a grey one (a
/// tone curve alone). Moonreel composes in sRGB, so such a picture is converted to sRGB
/// (`toSRGB`), as a colour-managed viewer shows it; colours outside sRGB are clipped to it.
/// Profiles built on lookup tables (printers, CMYK, Lab) are not read: `init` says why.
package struct ColorProfile: Sendable, Equatable {
    /// Channel values (0…1) to linear light, red, green and blue.
    let curves: [ToneCurve]
    /// Linear RGB to XYZ (D50), rows X, Y, Z; the columns are the rXYZ, gXYZ and bXYZ tags.
    let toXYZ: Matrix3
    /// The profile's description ("Display P3"), or empty.
    let name: String

    /// One channel's tone reproduction curve (`curv` or `para`).
    enum ToneCurve: Sendable, Equatable {
        /// A table sampled evenly over 0…1, read by linear interpolation.
        case table([Double])
        /// ICC's parametric curve of type 0…4, with its parameters g, a, b, c, d, e, f.
        case parametric(type: Int, parameters: [Double])

        func linear(_ x: Double) -> Double {
            switch self {
            case .table(let values):
                guard values.count > 1 else { return x }
                let position = min(max(x, 0), 1) * Double(values.count - 1)
                let index = min(Int(position), values.count - 2)
                return values[index] + (values[index + 1] - values[index]) * (position - Double(index))
            case .parametric(let type, let p):
                let power = { (base: Double) in base > 0 ? pow(base, p[0]) : 0 }
                switch type {
                case 1: return x >= -p[2] / p[1] ? power(p[1] * x + p[2]) : 0
                case 2: return x >= -p[2] / p[1] ? power(p[1] * x + p[2]) + p[3] : p[3]
                case 3: return x >= p[4] ? power(p[1] * x + p[2]) : p[3] * x
                case 4: return x >= p[4] ? power(p[1] * x + p[2]) + p[5] : p[3] * x + p[6]
                default: return power(x)
                }
            }
        }
    }

    /// Reads `data`, an ICC profile.
    /// - Throws: a `ColorProfile.Unreadable` naming what it is instead (a CMYK profile, one
    ///   without a matrix and curves, a damaged one).
    package init(_ data: [UInt8]) throws(Unreadable) {
        let reader = ICCReader(data)
        guard data.count >= 132, reader.signature(at: 36) == "acsp" else { throw Unreadable("damaged, or not an ICC profile") }
        let tags = try reader.tagTable()
        let space = reader.signature(at: 16).trimmingCharacters(in: " ")
        if space == "GRAY", let grey = tags["kTRC"] {
            // Grey is white's colour at every level: only the tone curve differs from sRGB's.
            let curve = try reader.curve(in: grey)
            (curves, toXYZ, name) = ([curve, curve, curve], ColorProfile.sRGBToXYZ, reader.name)
            return
        }
        guard space == "RGB" else {
            let named = space.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } && !space.isEmpty ? space : "unknown colour space's"
            throw Unreadable("a \(named) profile, for \(named) pictures")
        }
        guard reader.signature(at: 20) == "XYZ " else { throw Unreadable("a profile connecting through Lab, built on tables") }
        guard let red = tags["rXYZ"], let green = tags["gXYZ"], let blue = tags["bXYZ"],
              let redCurve = tags["rTRC"], let greenCurve = tags["gTRC"], let blueCurve = tags["bTRC"] else {
            throw Unreadable("a profile built on lookup tables (no matrix and tone curves)")
        }
        let columns = [try reader.xyz(in: red), try reader.xyz(in: green), try reader.xyz(in: blue)]
        toXYZ = Matrix3(rows: (0..<3).map { row in columns.map { $0[row] } })
        curves = [try reader.curve(in: redCurve), try reader.curve(in: greenCurve), try reader.curve(in: blueCurve)]
        name = reader.name
    }

    /// Why a profile is not read.
    package struct Unreadable: Error, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }

    /// Whether pictures in this profile are sRGB already (its primaries and curves within
    /// 0.2 % of sRGB's, as sRGB profiles differ in their rounding): nothing to convert.
    package var isSRGB: Bool {
        let sameCurves = curves.allSatisfy { curve in
            (0...64).allSatisfy { step in
                let x = Double(step) / 64
                return abs(curve.linear(x) - ColorProfile.sRGBLinear(x)) < 0.002
            }
        }
        return hasSRGBPrimaries && sameCurves
    }

    /// Whether the primaries are sRGB's (within 0.2 %), so that no colour falls outside sRGB.
    package var hasSRGBPrimaries: Bool {
        let sRGB = ColorProfile.sRGBToXYZ
        return (0..<3).allSatisfy { r in (0..<3).allSatisfy { c in abs(toXYZ[r, c] - sRGB[r, c]) < 0.002 } }
    }

    /// Converts straight-alpha pixels of 8 or 16 bits a channel (`channels` samples each, red,
    /// green and blue at `order`; rows `sourceStride` samples apart) from this profile into
    /// 8-bit sRGB pixels of the same layout (rows `stride` bytes apart; the same memory for
    /// 8-bit ones): each channel to linear light by its curve (a table of every code), the
    /// matrix to XYZ and from XYZ to linear sRGB, clipped to 0…1, then sRGB's curve (a table
    /// fine enough that codes round exactly). Alpha (the fourth sample of four) is left to
    /// the caller. Returns how many of the visible pixels had a colour sRGB cannot show.
    @discardableResult
    package func toSRGB<Sample: FixedWidthInteger & UnsignedInteger>(
        from source: UnsafePointer<Sample>, sourceStride: Int, into pixels: UnsafeMutablePointer<UInt8>, stride: Int,
        width: Int, height: Int, channels: Int, order: (red: Int, green: Int, blue: Int)
    ) -> GamutCount {
        let top = Double(Sample.max)
        let linear = curves.map { curve in (0...Int(Sample.max)).map { Float(curve.linear(Double($0) / top)) } }
        let matrix = ColorProfile.sRGBToXYZ.inverse * toXYZ
        let m = (0..<9).map { Float(matrix[$0 / 3, $0 % 3]) }
        let steps = ColorProfile.encodingSteps
        let encode = (0...steps).map { UInt8((ColorProfile.sRGBEncoded(Double($0) / Double(steps)) * 255).rounded()) }
        let scale = Float(steps)
        var count = GamutCount()
        for y in 0..<height {
            let (input, output) = (source + y * sourceStride, pixels + y * stride)
            for x in 0..<width {
                let (s, p) = (input + x * channels, output + x * channels)
                let (r, g, b) = (linear[0][Int(s[order.red])], linear[1][Int(s[order.green])], linear[2][Int(s[order.blue])])
                // Written so that a NaN (a stranger's profile can hold anything) is black.
                let encoded = { (value: Float) in encode[Int((value > 0 ? min(value, 1) : 0) * scale + 0.5)] }
                let (red, green, blue) = (m[0] * r + m[1] * g + m[2] * b, m[3] * r + m[4] * g + m[5] * b, m[6] * r + m[7] * g + m[8] * b)
                (p[order.red], p[order.green], p[order.blue]) = (encoded(red), encoded(green), encoded(blue))
                guard channels < 4 || s[3] > 0 else { continue }
                count.visible += 1
                if min(red, green, blue) < -ColorProfile.clippedBeyond || max(red, green, blue) > 1 + ColorProfile.clippedBeyond { count.clipped += 1 }
            }
        }
        return count
    }

    /// How many visible pixels a conversion saw, and how many of them lay outside sRGB.
    package struct GamutCount: Sendable {
        package var visible = 0, clipped = 0
        package init() {}
        /// The clipped share of the visible pixels (0 with none visible).
        package var clippedShare: Double { visible > 0 ? Double(clipped) / Double(visible) : 0 }
    }

    /// How far past sRGB (in linear light, of full light) a channel is counted as clipped:
    /// 1 %. The clipping itself is exact; this says when it changed a colour that matters
    /// (a near-sRGB profile's pure red lands 0.002 outside, unseen).
    static let clippedBeyond: Float = 0.01

    /// Linear-light steps of the encoding table: sRGB's curve rises at most 12.92 codes per
    /// unit near black, so 1/16 384 moves a code by under 0.2 of a step.
    static let encodingSteps = 16_384

    /// sRGB's curve (IEC 61966-2-1), code value 0…1 to linear light.
    static func sRGBLinear(_ x: Double) -> Double { x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4) }
    /// Its inverse.
    static func sRGBEncoded(_ light: Double) -> Double { light <= 0.0031308 ? light * 12.92 : 1.055 * pow(light, 1 / 2.4) - 0.055 }

    /// Linear sRGB to XYZ under ICC's D50, as an sRGB profile's colorants hold it: its
    /// primaries and D65 white (IEC 61966-2-1) adapted to D50 with the Bradford transform
    /// (ICC.1:2022 Annex E).
    static let sRGBToXYZ: Matrix3 = {
        let primaries = [(0.64, 0.33), (0.30, 0.60), (0.15, 0.06)]
        let white = (0.3127, 0.3290)
        let xyz = { (p: (Double, Double)) in [p.0 / p.1, 1, (1 - p.0 - p.1) / p.1] }
        let columns = Matrix3(rows: (0..<3).map { row in primaries.map { xyz($0)[row] } })
        let whiteXYZ = xyz(white)
        let gains = columns.inverse.apply(whiteXYZ)
        let d65 = Matrix3(rows: (0..<3).map { row in (0..<3).map { columns[row, $0] * gains[$0] } })
        let bradford = Matrix3(rows: [[0.8951, 0.2664, -0.1614], [-0.7502, 1.7135, 0.0367], [0.0389, -0.0685, 1.0296]])
        let d50 = [0.9642, 1.0, 0.8249]
        let (from, to) = (bradford.apply(whiteXYZ), bradford.apply(d50))
        let scale = Matrix3(rows: (0..<3).map { row in (0..<3).map { $0 == row ? to[row] / from[row] : 0 } })
        return bradford.inverse * scale * bradford * d65
    }()
}

/// A 3×3 matrix of doubles, row by row.
struct Matrix3: Sendable, Equatable {
    private var values: [Double]

    init(rows: [[Double]]) { values = rows.flatMap { $0 } }

    subscript(row: Int, column: Int) -> Double { values[3 * row + column] }

    static func * (a: Matrix3, b: Matrix3) -> Matrix3 {
        Matrix3(rows: (0..<3).map { r in (0..<3).map { c in (0..<3).reduce(0) { $0 + a[r, $1] * b[$1, c] } } })
    }

    func apply(_ vector: [Double]) -> [Double] {
        (0..<3).map { r in (0..<3).reduce(0) { $0 + self[r, $1] * vector[$1] } }
    }

    /// The inverse by cofactors (identity when singular, which no real profile's is).
    var inverse: Matrix3 {
        let m = { (r: Int, c: Int) in self[r % 3, c % 3] }
        let cofactor = { (r: Int, c: Int) in m(r + 1, c + 1) * m(r + 2, c + 2) - m(r + 1, c + 2) * m(r + 2, c + 1) }
        let determinant = (0..<3).reduce(0) { $0 + self[0, $1] * cofactor(0, $1) }
        guard abs(determinant) > 1e-12 else { return Matrix3(rows: [[1, 0, 0], [0, 1, 0], [0, 0, 1]]) }
        return Matrix3(rows: (0..<3).map { r in (0..<3).map { c in cofactor(c, r) / determinant } })
    }
}

/// Big-endian fields of an ICC profile.
struct ICCReader {
    let data: [UInt8]
    init(_ data: [UInt8]) { self.data = data }

    func uint32(at offset: Int) -> Int {
        guard offset >= 0, offset + 4 <= data.count else { return -1 }
        return data[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
    }

    func uint16(at offset: Int) -> Int {
        guard offset >= 0, offset + 2 <= data.count else { return 0 }
        return Int(data[offset]) << 8 | Int(data[offset + 1])
    }

    /// s15Fixed16Number.
    func fixed(at offset: Int) -> Double { Double(Int32(truncatingIfNeeded: uint32(at: offset))) / 65536 }

    /// Each tag's bytes, by signature.
    func tagTable() throws(ColorProfile.Unreadable) -> [String: Range<Int>] {
        var tags: [String: Range<Int>] = [:]
        for entry in 0..<min(max(uint32(at: 128), 0), 1000) {
            let at = 132 + 12 * entry
            let offset = uint32(at: at + 4), size = uint32(at: at + 8)
            guard at + 12 <= data.count, offset >= 0, size >= 0, offset + size <= data.count else { throw ColorProfile.Unreadable("a damaged profile") }
            tags[signature(at: at)] = offset..<offset + size
        }
        return tags
    }

    /// The profile's own name: its `desc` tag, "" without one.
    var name: String { ((try? tagTable())?["desc"]).map { text(in: $0) } ?? "" }

    func signature(at offset: Int) -> String {
        guard offset >= 0, offset + 4 <= data.count else { return "" }
        return String(decoding: data[offset..<offset + 4], as: UTF8.self)
    }

    /// An `XYZ ` tag's one value.
    func xyz(in range: Range<Int>) throws(ColorProfile.Unreadable) -> [Double] {
        guard range.count >= 20, signature(at: range.lowerBound) == "XYZ " else { throw ColorProfile.Unreadable("a damaged colorant tag") }
        return (0..<3).map { fixed(at: range.lowerBound + 8 + 4 * $0) }
    }

    /// A `curv` or `para` tag.
    func curve(in range: Range<Int>) throws(ColorProfile.Unreadable) -> ColorProfile.ToneCurve {
        let start = range.lowerBound
        switch signature(at: start) {
        case "curv":
            let count = uint32(at: start + 8)
            guard count >= 0, start + 12 + 2 * count <= range.upperBound else { throw ColorProfile.Unreadable("a damaged tone curve") }
            if count == 0 { return .parametric(type: 0, parameters: [1]) }
            if count == 1 { return .parametric(type: 0, parameters: [Double(uint16(at: start + 12)) / 256]) }
            return .table((0..<count).map { Double(uint16(at: start + 12 + 2 * $0)) / 65535 })
        case "para":
            let type = uint16(at: start + 8)
            let counts = [1, 3, 4, 5, 7]
            guard type < counts.count, start + 12 + 4 * counts[type] <= range.upperBound else { throw ColorProfile.Unreadable("a damaged tone curve") }
            let parameters = (0..<counts[type]).map { fixed(at: start + 12 + 4 * $0) }
            guard type == 0 || parameters[1] != 0 else { throw ColorProfile.Unreadable("a damaged tone curve") }
            return .parametric(type: type, parameters: parameters)
        default:
            throw ColorProfile.Unreadable("a tone curve of a kind ICC does not define")
        }
    }

    /// A `desc` tag's text: the first record of ICC v4's `mluc` (UTF-16), or v2's `desc` (ASCII).
    func text(in range: Range<Int>) -> String {
        let start = range.lowerBound
        switch signature(at: start) {
        case "mluc":
            guard uint32(at: start + 8) > 0 else { return "" }
            let length = uint32(at: start + 20), offset = uint32(at: start + 24)
            guard length > 0, offset > 0, start + offset + length <= range.upperBound else { return "" }
            let units = stride(from: 0, to: length - 1, by: 2).map { UInt16(uint16(at: start + offset + $0)) }
            return String(decoding: units, as: UTF16.self).trimmingCharacters(in: "\0 ")
        case "desc":
            let length = uint32(at: start + 8)
            guard length > 0, start + 12 + length <= range.upperBound else { return "" }
            return String(decoding: data[start + 12..<start + 12 + length], as: UTF8.self).trimmingCharacters(in: "\0 ")
        default:
            return ""
        }
    }
}

private extension String {
    func trimmingCharacters(in characters: String) -> String {
        let set = Set(characters)
        return String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}

extension ColorProfile {
    /// What a decoded picture's embedded profile asks of it.
    package enum Embedded: Sendable, Equatable {
        /// Nothing: no profile, or an sRGB one.
        case none
        /// Conversion to sRGB from this profile.
        case convert(ColorProfile)
        /// A profile Moonreel does not read (why, and its name): the picture is drawn as sRGB.
        case unreadable(reason: String, name: String)
    }

    /// The profile FFmpeg's PNG, JPEG and WebP decoders hand over with `frame`.
    package static func embedded(in frame: UnsafePointer<AVFrame>) -> Embedded {
        guard let side = av_frame_get_side_data(frame, AV_FRAME_DATA_ICC_PROFILE), let data = side.pointee.data, side.pointee.size > 0 else { return .none }
        return embedded([UInt8](UnsafeBufferPointer(start: data, count: Int(side.pointee.size))))
    }

    /// What the profile `bytes` asks of a picture.
    package static func embedded(_ bytes: [UInt8]) -> Embedded {
        do {
            let profile = try ColorProfile(bytes)
            return profile.isSRGB ? .none : .convert(profile)
        } catch {
            return .unreadable(reason: error.description, name: ICCReader(bytes).name)
        }
    }
}
