import MoonreelMedia

/// The pieces of HEVC's bitstream a smart cut rewrites. x265 cannot be told which
/// parameter-set ids to use, so the re-encoded frames' VPS, SPS and PPS are renumbered to
/// ids the source does not use, and so is every slice header that names its PPS. x265 is
/// set up so those headers are simple to rewrite: every frame an IDR picture in one slice,
/// no tiles, no wavefronts (Rec. ITU-T H.265 §7.3.2 and §7.3.6).
enum HEVC {
    enum NALType: UInt8 {
        case idrWithLeadingPictures = 19, idrWithoutLeadingPictures = 20
        case videoParameterSet = 32, sequenceParameterSet = 33, pictureParameterSet = 34
        case accessUnitDelimiter = 35, endOfSequence = 36, prefixSEI = 39, suffixSEI = 40
    }

    static func type(ofHeader byte: UInt8) -> UInt8 { (byte >> 1) & 0x3F }
    static func type(of unit: ArraySlice<UInt8>) -> UInt8 { type(ofHeader: unit.first ?? 0) }

    /// Broken-link, IDR and CRA pictures (16–23): where decoding can start.
    static func isRandomAccess(_ type: UInt8) -> Bool { (16...23).contains(type) }

    /// The unit with a new header (2 bytes) and payload, emulation prevention added.
    static func unit(header: ArraySlice<UInt8>, payload: [UInt8]) -> [UInt8] {
        var out = Array(header)
        var zeros = 0
        for byte in payload {
            if zeros >= 2, byte <= 3 { out.append(3); zeros = 0 }
            out.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return out
    }
}

/// Writes the bits of a NAL unit's payload (before emulation prevention).
struct RBSPWriter {
    private(set) var bytes: [UInt8] = []
    private var bitCount = 0

    mutating func write(_ value: Int, bits: Int) {
        for shift in stride(from: bits - 1, through: 0, by: -1) {
            if bitCount % 8 == 0 { bytes.append(0) }
            if (value >> shift) & 1 == 1 { bytes[bytes.count - 1] |= 0x80 >> UInt8(bitCount % 8) }
            bitCount += 1
        }
    }

    mutating func writeUnsignedExpGolomb(_ value: Int) {
        let coded = value + 1
        let length = Int.bitWidth - coded.leadingZeroBitCount
        write(0, bits: length - 1)
        write(coded, bits: length)
    }

    /// rbsp_trailing_bits / byte_alignment: a one, then zeros to the byte boundary.
    mutating func alignWithStopBit() {
        write(1, bits: 1)
        while bitCount % 8 != 0 { write(0, bits: 1) }
    }

    mutating func append(bytes more: ArraySlice<UInt8>) {
        guard bitCount % 8 == 0 else {
            for byte in more { write(Int(byte), bits: 8) }
            return
        }
        bytes += more
        bitCount += more.count * 8
    }
}

extension RBSPReader {
    /// Copies `count` bits to `writer` unchanged.
    mutating func copy(_ count: Int, to writer: inout RBSPWriter) throws {
        var left = count
        while left > 0 {
            let chunk = Swift.min(left, 24)
            guard let value = bits(chunk) else { throw EngineError("an HEVC header ends early", kind: .encode) }
            writer.write(value, bits: chunk)
            left -= chunk
        }
    }

    /// Copies one ue(v) or se(v) code bit for bit (both have the same shape).
    mutating func copyExpGolomb(to writer: inout RBSPWriter) throws {
        let start = position
        guard unsignedExpGolomb() != nil else { throw EngineError("an HEVC header ends early", kind: .encode) }
        let length = position - start
        position = start
        try copy(length, to: &writer)
    }

    mutating func flag() throws -> Bool {
        guard let bit = bit() else { throw EngineError("an HEVC header ends early", kind: .encode) }
        return bit == 1
    }

    mutating func value(_ count: Int) throws -> Int {
        guard let value = bits(count) else { throw EngineError("an HEVC header ends early", kind: .encode) }
        return value
    }

    mutating func expGolomb() throws -> Int {
        guard let value = unsignedExpGolomb() else { throw EngineError("an HEVC header ends early", kind: .encode) }
        return value
    }

    /// Copies everything up to the stop bit of rbsp_trailing_bits.
    mutating func copyToStopBit(to writer: inout RBSPWriter) throws {
        guard let stop = lastOneBit, stop >= position else { throw EngineError("an HEVC parameter set has no stop bit", kind: .encode) }
        try copy(stop - position, to: &writer)
    }
}

/// x265's parameter sets and slices, moved to ids the source leaves free.
struct HEVCRenumbering {
    let videoParameterSetID: Int
    let sequenceParameterSetID: Int
    let pictureParameterSetID: Int
    /// What a slice header holds depends on these flags of the SPS and PPS.
    private var hasSampleAdaptiveOffset = false
    private var hasChroma = true
    private var separateColourPlanes = false
    private var dependentSliceSegments = false
    private var outputFlagPresent = false
    private var extraSliceHeaderBits = 0
    private var sliceChromaQPOffsets = false
    private var deblockingOverride = false
    private var deblockingDisabled = false
    private var loopFilterAcrossSlices = false
    private var sliceHeaderExtension = false

    init(videoParameterSetID: Int, sequenceParameterSetID: Int, pictureParameterSetID: Int) {
        (self.videoParameterSetID, self.sequenceParameterSetID, self.pictureParameterSetID) =
            (videoParameterSetID, sequenceParameterSetID, pictureParameterSetID)
    }

    func videoParameterSet(_ unit: ArraySlice<UInt8>) throws -> [UInt8] {
        var reader = RBSPReader(unit.dropFirst(2)), writer = RBSPWriter()
        _ = try reader.value(4) // vps_video_parameter_set_id
        writer.write(videoParameterSetID, bits: 4)
        try reader.copyToStopBit(to: &writer)
        writer.alignWithStopBit()
        return HEVC.unit(header: unit.prefix(2), payload: writer.bytes)
    }

    mutating func sequenceParameterSet(_ unit: ArraySlice<UInt8>) throws -> [UInt8] {
        var reader = RBSPReader(unit.dropFirst(2)), writer = RBSPWriter()
        _ = try reader.value(4) // sps_video_parameter_set_id
        writer.write(videoParameterSetID, bits: 4)
        let subLayers = try reader.value(3)
        writer.write(subLayers, bits: 3)
        try reader.copy(1 + 88 + 8, to: &writer) // temporal nesting, general profile, tier and level
        if subLayers > 0 {
            var present: [(profile: Bool, level: Bool)] = []
            for _ in 0..<subLayers { present.append((try reader.flag(), try reader.flag())) }
            reader.position -= 2 * subLayers
            try reader.copy(2 * subLayers + 2 * (8 - subLayers), to: &writer)
            for layer in present { try reader.copy((layer.profile ? 88 : 0) + (layer.level ? 8 : 0), to: &writer) }
        }
        _ = try reader.expGolomb() // sps_seq_parameter_set_id
        writer.writeUnsignedExpGolomb(sequenceParameterSetID)
        // Read on (on a copy) to the flags slice headers depend on.
        var fields = reader
        let chromaFormat = try fields.expGolomb()
        separateColourPlanes = chromaFormat == 3 ? try fields.flag() : false
        hasChroma = chromaFormat != 0 && !separateColourPlanes
        _ = try fields.expGolomb(); _ = try fields.expGolomb() // width, height
        if try fields.flag() { for _ in 0..<4 { _ = try fields.expGolomb() } } // conformance window
        for _ in 0..<3 { _ = try fields.expGolomb() } // bit depths, log2_max_pic_order_cnt_lsb
        let orderingForEachLayer = try fields.flag()
        for _ in (orderingForEachLayer ? 0 : subLayers)...subLayers { for _ in 0..<3 { _ = try fields.expGolomb() } }
        for _ in 0..<6 { _ = try fields.expGolomb() } // block and transform sizes and depths
        if try fields.flag(), try fields.flag() { throw EngineError("x265 wrote scaling lists, which the smart cut does not read", kind: .unsupported) }
        _ = try fields.flag() // amp_enabled_flag
        hasSampleAdaptiveOffset = try fields.flag()
        try reader.copyToStopBit(to: &writer)
        writer.alignWithStopBit()
        return HEVC.unit(header: unit.prefix(2), payload: writer.bytes)
    }

    mutating func pictureParameterSet(_ unit: ArraySlice<UInt8>) throws -> [UInt8] {
        var reader = RBSPReader(unit.dropFirst(2)), writer = RBSPWriter()
        _ = try reader.expGolomb(); _ = try reader.expGolomb() // pps and sps ids
        writer.writeUnsignedExpGolomb(pictureParameterSetID)
        writer.writeUnsignedExpGolomb(sequenceParameterSetID)
        var fields = reader
        dependentSliceSegments = try fields.flag()
        outputFlagPresent = try fields.flag()
        extraSliceHeaderBits = try fields.value(3)
        _ = try fields.value(2) // sign data hiding, cabac_init_present_flag
        for _ in 0..<3 { _ = try fields.expGolomb() } // default ref idx counts, init_qp_minus26
        _ = try fields.value(2) // constrained intra, transform skip
        if try fields.flag() { _ = try fields.expGolomb() } // cu_qp_delta depth
        _ = try fields.expGolomb(); _ = try fields.expGolomb() // cb and cr qp offsets
        sliceChromaQPOffsets = try fields.flag()
        _ = try fields.value(3) // weighted prediction, bi-prediction, transquant bypass
        let tiles = try fields.flag(), wavefronts = try fields.flag()
        guard !tiles, !wavefronts else { throw EngineError("x265 wrote tiles or wavefronts, which the smart cut turns off", kind: .unsupported) }
        loopFilterAcrossSlices = try fields.flag()
        if try fields.flag() { // deblocking_filter_control_present_flag
            deblockingOverride = try fields.flag()
            deblockingDisabled = try fields.flag()
            if !deblockingDisabled { _ = try fields.expGolomb(); _ = try fields.expGolomb() }
        }
        if try fields.flag() { throw EngineError("x265 wrote scaling lists, which the smart cut does not read", kind: .unsupported) }
        _ = try fields.flag() // lists_modification_present_flag
        _ = try fields.expGolomb() // log2_parallel_merge_level_minus2
        sliceHeaderExtension = try fields.flag()
        if try fields.flag() { throw EngineError("x265 wrote PPS extensions, which the smart cut does not read", kind: .unsupported) }
        try reader.copyToStopBit(to: &writer)
        writer.alignWithStopBit()
        return HEVC.unit(header: unit.prefix(2), payload: writer.bytes)
    }

    /// An IDR slice of x265's, naming the renumbered PPS (read after the SPS and PPS).
    func slice(_ unit: ArraySlice<UInt8>) throws -> [UInt8] {
        var reader = RBSPReader(unit.dropFirst(2)), writer = RBSPWriter()
        let type = HEVC.type(of: unit)
        guard type == HEVC.NALType.idrWithLeadingPictures.rawValue || type == HEVC.NALType.idrWithoutLeadingPictures.rawValue else {
            throw EngineError("x265 wrote a picture of NAL type \(type) where an IDR picture was asked for", kind: .encode)
        }
        guard try reader.flag() else { throw EngineError("x265 wrote more than one slice per picture", kind: .unsupported) }
        writer.write(1, bits: 1)
        try reader.copy(1, to: &writer) // no_output_of_prior_pics_flag
        _ = try reader.expGolomb()
        writer.writeUnsignedExpGolomb(pictureParameterSetID)
        try reader.copy(extraSliceHeaderBits, to: &writer)
        try reader.copyExpGolomb(to: &writer) // slice_type
        if outputFlagPresent { try reader.copy(1, to: &writer) }
        if separateColourPlanes { try reader.copy(2, to: &writer) }
        var filtersAcrossSlices = false
        if hasSampleAdaptiveOffset {
            let luma = try reader.flag(), chroma = hasChroma ? try reader.flag() : false
            writer.write(luma ? 1 : 0, bits: 1)
            if hasChroma { writer.write(chroma ? 1 : 0, bits: 1) }
            filtersAcrossSlices = luma || chroma
        }
        try reader.copyExpGolomb(to: &writer) // slice_qp_delta
        if sliceChromaQPOffsets { for _ in 0..<2 { try reader.copyExpGolomb(to: &writer) } }
        var disabled = deblockingDisabled
        if deblockingOverride, try reader.flag() {
            writer.write(1, bits: 1)
            disabled = try reader.flag()
            writer.write(disabled ? 1 : 0, bits: 1)
            if !disabled { for _ in 0..<2 { try reader.copyExpGolomb(to: &writer) } }
        } else if deblockingOverride {
            writer.write(0, bits: 1)
        }
        if loopFilterAcrossSlices, filtersAcrossSlices || !disabled { try reader.copy(1, to: &writer) }
        if sliceHeaderExtension {
            let length = try reader.expGolomb()
            writer.writeUnsignedExpGolomb(length)
            try reader.copy(8 * length, to: &writer)
        }
        guard try reader.flag() else { throw EngineError("an x265 slice header does not end where it should", kind: .encode) }
        while reader.position % 8 != 0 { _ = try reader.flag() }
        writer.alignWithStopBit()
        writer.append(bytes: reader.remainingBytes)
        return HEVC.unit(header: unit.prefix(2), payload: writer.bytes)
    }
}

/// An HEVC decoder configuration record (hvcC, ISO/IEC 14496-15 §8.3.3): the profile
/// header, then arrays of parameter sets and SEI by NAL type.
struct HEVCConfiguration: Equatable {
    var header: [UInt8] // the 22 bytes before numOfArrays
    var arrays: [(type: UInt8, units: [ArraySlice<UInt8>])]

    static func == (a: HEVCConfiguration, b: HEVCConfiguration) -> Bool {
        a.header == b.header && a.arrays.count == b.arrays.count && zip(a.arrays, b.arrays).allSatisfy { $0.type == $1.type && $0.units == $1.units }
    }

    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 23, bytes[0] == 1 else { return nil }
        header = Array(bytes[0..<22])
        arrays = []
        var index = 23
        for _ in 0..<Int(bytes[22]) {
            guard index + 3 <= bytes.count else { return nil }
            let type = bytes[index] & 0x3F, count = Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            index += 3
            guard let units = NALUnits.configurationList(bytes, count: count, at: &index) else { return nil }
            arrays.append((type, units))
        }
    }

    var lengthSize: Int { Int(header[21] & 3) + 1 }

    /// Every parameter set is in the record (`hvc1`: none in the samples).
    var bytes: [UInt8] {
        var out = header + [UInt8(arrays.count)]
        for array in arrays {
            out += [0x80 | array.type, UInt8(array.units.count >> 8), UInt8(truncatingIfNeeded: array.units.count)]
            for unit in array.units { out += [UInt8(unit.count >> 8), UInt8(truncatingIfNeeded: unit.count)] + unit }
        }
        return out
    }

    func units(of type: HEVC.NALType) -> [ArraySlice<UInt8>] { arrays.first { $0.type == type.rawValue }?.units ?? [] }

    mutating func add(_ unit: [UInt8]) {
        let type = HEVC.type(of: unit[...])
        if let index = arrays.firstIndex(where: { $0.type == type }) {
            arrays[index].units.append(unit[...])
        } else {
            arrays.append((type, [unit[...]]))
        }
    }

    /// The smallest ids no VPS, SPS nor PPS of the record uses (nil when one cannot be read).
    var freeParameterSetIDs: (video: Int, sequence: Int, picture: Int)? {
        func ids(_ type: HEVC.NALType, _ read: (inout RBSPReader) -> Int?) -> Set<Int>? {
            let found = units(of: type).map { unit -> Int? in var reader = RBSPReader(unit.dropFirst(2)); return read(&reader) }
            return found.contains(nil) ? nil : Set(found.compactMap { $0 })
        }
        guard let video = ids(.videoParameterSet, { $0.bits(4) }),
              let sequence = ids(.sequenceParameterSet, { reader in
                  // After the VPS id, the sub-layer count and profile_tier_level (no sub-layers).
                  guard reader.bits(4) != nil, reader.bits(3) == 0, reader.skip(1 + 96) else { return nil }
                  return reader.unsignedExpGolomb()
              }),
              let picture = ids(.pictureParameterSet, { $0.unsignedExpGolomb() }),
              let v = (0...15).first(where: { !video.contains($0) }), let s = (0...15).first(where: { !sequence.contains($0) }),
              let p = (0...63).first(where: { !picture.contains($0) }) else { return nil }
        return (v, s, p)
    }
}
