/// NAL units, as H.264 and HEVC both cut their streams: found in an Annex B stream (x264's
/// and x265's output) or an MP4 sample (each unit after its length), and written as one.
enum NALUnits {
    /// The NAL units of an Annex B stream (each after a 00 00 01 or 00 00 00 01 start code).
    static func annexB(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var starts: [(code: Int, payload: Int)] = []
        var index = 0
        while index + 2 < bytes.count {
            if bytes[index] == 0, bytes[index + 1] == 0, bytes[index + 2] == 1 {
                let code = index > 0 && bytes[index - 1] == 0 ? index - 1 : index
                starts.append((code, index + 3))
                index += 3
            } else {
                index += 1
            }
        }
        return starts.indices.map { i in
            let end = i + 1 < starts.count ? starts[i + 1].code : bytes.count
            return bytes[starts[i].payload..<max(starts[i].payload, end)]
        }
    }

    /// The NAL units of an MP4 sample (each after a big-endian length of `lengthSize`
    /// bytes), or nil when the lengths do not add up.
    static func ranges(_ bytes: UnsafeBufferPointer<UInt8>, lengthSize: Int) -> [Range<Int>]? {
        var units: [Range<Int>] = []
        var index = 0
        while index < bytes.count {
            guard index + lengthSize <= bytes.count else { return nil }
            let length = (0..<lengthSize).reduce(0) { $0 << 8 | Int(bytes[index + $1]) }
            index += lengthSize
            guard length <= bytes.count - index else { return nil }
            units.append(index..<(index + length))
            index += length
        }
        return units
    }

    /// `count` units of a decoder configuration record (avcC, hvcC), each after a 16-bit
    /// length, read from `index` on (which moves past them); nil when they overrun.
    static func configurationList(_ bytes: [UInt8], count: Int, at index: inout Int) -> [ArraySlice<UInt8>]? {
        var units: [ArraySlice<UInt8>] = []
        for _ in 0..<count {
            guard index + 2 <= bytes.count else { return nil }
            let length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
            index += 2
            guard length > 0, index + length <= bytes.count else { return nil }
            units.append(bytes[index..<(index + length)])
            index += length
        }
        return units
    }

    /// Units written each after its length in `lengthSize` bytes (an MP4 sample).
    static func lengthPrefixed<Unit: Collection<UInt8>>(_ units: [Unit], lengthSize: Int) -> [UInt8] {
        var out: [UInt8] = []
        for unit in units {
            for shift in stride(from: (lengthSize - 1) * 8, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: unit.count >> shift)) }
            out.append(contentsOf: unit)
        }
        return out
    }
}

/// The few pieces of H.264's bitstream that a smart cut needs to read and write:
/// parameter-set ids and the MP4 decoder configuration record (avcC, ISO/IEC 14496-15 §5.3.3).
enum H264 {
    enum NALType: UInt8 { case idrSlice = 5, sei = 6, sequenceParameterSet = 7, pictureParameterSet = 8, accessUnitDelimiter = 9 }

    static func type(of unit: ArraySlice<UInt8>) -> UInt8 { (unit.first ?? 0) & 0x1F }

    /// The `seq_parameter_set_id` of an SPS unit.
    static func sequenceParameterSetID(_ unit: ArraySlice<UInt8>) -> Int? {
        var reader = RBSPReader(unit.dropFirst())
        guard reader.skip(24) else { return nil } // profile_idc, constraint flags, level_idc
        return reader.unsignedExpGolomb()
    }

    /// The `pic_parameter_set_id` of a PPS unit.
    static func pictureParameterSetID(_ unit: ArraySlice<UInt8>) -> Int? {
        var reader = RBSPReader(unit.dropFirst())
        return reader.unsignedExpGolomb()
    }
}

/// Reads bits of a NAL unit's payload, dropping emulation-prevention bytes (00 00 03).
struct RBSPReader {
    private var payload: [UInt8] = []
    /// In bits from the start of the payload.
    var position = 0

    init(_ bytes: ArraySlice<UInt8>) {
        var zeros = 0
        for byte in bytes {
            if zeros >= 2, byte == 3 { zeros = 0; continue }
            zeros = byte == 0 ? zeros + 1 : 0
            payload.append(byte)
        }
    }

    mutating func bit() -> Int? {
        guard position < payload.count * 8 else { return nil }
        defer { position += 1 }
        return Int(payload[position / 8] >> (7 - UInt8(position % 8))) & 1
    }

    /// `count` bits (at most 32) as a number, first bit highest.
    mutating func bits(_ count: Int) -> Int? {
        guard count <= 32, position + count <= payload.count * 8 else { return nil }
        var value = 0
        for _ in 0..<count { value = value << 1 | (bit() ?? 0) }
        return value
    }

    mutating func skip(_ count: Int) -> Bool {
        guard position + count <= payload.count * 8 else { return false }
        position += count
        return true
    }

    /// ue(v): leading zeros, a one, then as many bits.
    mutating func unsignedExpGolomb() -> Int? {
        var zeros = 0
        while true {
            guard let next = bit() else { return nil }
            if next == 1 { break }
            zeros += 1
            if zeros > 31 { return nil }
        }
        guard let suffix = bits(zeros) else { return nil }
        return (1 << zeros) - 1 + suffix
    }

    /// Where the payload's last one bit is (rbsp_trailing_bits' stop bit), in bits.
    var lastOneBit: Int? {
        guard let index = payload.lastIndex(where: { $0 != 0 }) else { return nil }
        return index * 8 + 7 - payload[index].trailingZeroBitCount
    }

    /// The bytes from the current (byte-aligned) position on.
    var remainingBytes: ArraySlice<UInt8> { payload[Swift.min(position / 8, payload.count)...] }
}

/// An H.264 decoder configuration record (avcC): the parameter sets a decoder needs
/// before the first sample, and the size of each sample's NAL lengths.
struct AVCConfiguration: Equatable {
    var profile: UInt8
    var compatibility: UInt8
    var level: UInt8
    var lengthSize: Int
    var sequenceParameterSets: [ArraySlice<UInt8>]
    var pictureParameterSets: [ArraySlice<UInt8>]
    /// High-profile fields after the parameter sets (chroma format, bit depths), as they are.
    var trailer: [UInt8]

    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 7, bytes[0] == 1 else { return nil }
        profile = bytes[1]
        compatibility = bytes[2]
        level = bytes[3]
        lengthSize = Int(bytes[4] & 3) + 1
        var index = 6
        guard let sequence = NALUnits.configurationList(bytes, count: Int(bytes[5] & 0x1F), at: &index), index < bytes.count else { return nil }
        let pictureCount = Int(bytes[index])
        index += 1
        guard let picture = NALUnits.configurationList(bytes, count: pictureCount, at: &index) else { return nil }
        sequenceParameterSets = sequence
        pictureParameterSets = picture
        trailer = Array(bytes[index...])
    }

    var bytes: [UInt8] {
        var out: [UInt8] = [1, profile, compatibility, level, 0xFC | UInt8(lengthSize - 1), 0xE0 | UInt8(sequenceParameterSets.count)]
        func append(_ units: [ArraySlice<UInt8>]) {
            for unit in units { out += [UInt8(unit.count >> 8), UInt8(truncatingIfNeeded: unit.count)] + unit }
        }
        append(sequenceParameterSets)
        out.append(UInt8(pictureParameterSets.count))
        append(pictureParameterSets)
        return out + trailer
    }

    /// The smallest id no SPS nor PPS of this record uses (x264 numbers both alike).
    var freeParameterSetID: Int? {
        let used = Set(sequenceParameterSets.compactMap(H264.sequenceParameterSetID) + pictureParameterSets.compactMap(H264.pictureParameterSetID))
        return (0...31).first { !used.contains($0) }
    }
}
