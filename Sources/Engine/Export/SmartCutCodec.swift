import CMoonAVShim
import CMoonFFmpeg
import MoonreelMedia

/// What a smart cut does differently for H.264 and HEVC: reading the source's decoder
/// configuration, the pictures a copy may start at, the matched encoder, and joining that
/// encoder's parameter sets to the source's in one sample entry (`avc1`, `hvc1`).
enum SmartCutCodec {
    /// x264 numbers its SPS and PPS alike, with an id it is told.
    case h264(AVCConfiguration, parameterSetID: Int)
    /// x265 cannot be told ids: its parameter sets and slices are renumbered.
    case hevc(HEVCConfiguration, HEVCRenumbering)

    /// The codec written, as writer settings name it.
    var videoCodec: VideoSettings.Codec {
        if case .h264 = self { return .h264 }
        return .hevc
    }

    /// The source's configuration, once it is clear the matched encoder can make frames
    /// its decoder accepts; otherwise why not.
    init(_ parameters: UnsafePointer<AVCodecParameters>, path: String) throws {
        let source = parameters.pointee
        let format = AVPixelFormat(rawValue: source.format)
        let formatName = av_get_pix_fmt_name(format).map { String(cString: $0) } ?? "unknown"
        let extradata = SmartCutWriter.extradata(parameters)
        let isHEVC = source.codec_id == AV_CODEC_ID_HEVC
        guard source.field_order == AV_FIELD_PROGRESSIVE || source.field_order == AV_FIELD_UNKNOWN else {
            throw SmartCutUnavailable("\"\(path)\" is interlaced", isHEVC: isHEVC)
        }
        // hev1/avc3 tracks may carry parameter sets in their samples, whose ids the record
        // does not show: the ids chosen for re-encoded frames could collide with them.
        let tag = source.codec_tag
        let inBandTags: [UInt32] = [fourCC("hev1"), fourCC("avc3"), fourCC("avc4")]
        guard !inBandTags.contains(tag) else {
            throw SmartCutUnavailable("\"\(path)\" may carry parameter sets inside its samples (\(isHEVC ? "hev1" : "avc3"))", isHEVC: isHEVC)
        }
        switch source.codec_id {
        case AV_CODEC_ID_H264:
            guard let configuration = AVCConfiguration(extradata) else {
                throw SmartCutUnavailable("\"\(path)\" has no avcC parameter sets (not an MP4/QuickTime/Matroska H.264 track)")
            }
            let eightBit: Set<AVPixelFormat> = [AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUVJ422P,
                                                AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUVJ444P]
            guard eightBit.contains(format) else { throw SmartCutUnavailable("\"\(path)\" is \(formatName); this x264 writes 8-bit video only") }
            guard SmartCutCodec.x264Profile(source.profile) != nil else {
                throw SmartCutUnavailable("\"\(path)\" uses H.264 profile \(source.profile), which x264 cannot match")
            }
            // The record's counts are 5 and 8 bits: room for the encoder's SPS and PPS.
            guard configuration.sequenceParameterSets.count < 31, configuration.pictureParameterSets.count < 255 else {
                throw SmartCutUnavailable("\"\(path)\" has too many parameter sets to add the re-encoded frames' own")
            }
            guard let id = configuration.freeParameterSetID else {
                throw SmartCutUnavailable("\"\(path)\" uses every parameter-set id, leaving none for the re-encoded frames")
            }
            self = .h264(configuration, parameterSetID: id)
        case AV_CODEC_ID_HEVC:
            guard let configuration = HEVCConfiguration(extradata) else {
                throw SmartCutUnavailable("\"\(path)\" has no hvcC parameter sets (not an MP4/QuickTime/Matroska HEVC track)", isHEVC: true)
            }
            guard [AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUV420P10LE].contains(format), [1, 2].contains(source.profile) else {
                throw SmartCutUnavailable("\"\(path)\" is HEVC \(formatName), profile \(source.profile); SmartCut matches Main and Main 10 4:2:0", isHEVC: true)
            }
            // The record counts arrays in 8 bits and units in 16: room for a VPS, SPS and PPS.
            guard configuration.arrays.count < 253, configuration.arrays.allSatisfy({ $0.units.count < 0xFFFF }) else {
                throw SmartCutUnavailable("\"\(path)\" has too many parameter sets to add the re-encoded frames' own", isHEVC: true)
            }
            guard let ids = configuration.freeParameterSetIDs else {
                throw SmartCutUnavailable("\"\(path)\" leaves no parameter-set ids free for the re-encoded frames", isHEVC: true)
            }
            self = .hevc(configuration, HEVCRenumbering(videoParameterSetID: ids.video, sequenceParameterSetID: ids.sequence,
                                                        pictureParameterSetID: ids.picture))
        default:
            let name = avcodec_get_name(source.codec_id).map { String(cString: $0) } ?? "unknown"
            throw SmartCutUnavailable("\"\(path)\" is \(name) video; SmartCut copies H.264 and HEVC")
        }
    }

    /// x264's name for an H.264 profile it can write in 8-bit.
    private static func x264Profile(_ profile: Int32) -> String? {
        switch profile {
        case 66, 66 | 1 << 9: return "baseline" // baseline, constrained baseline
        case 77: return "main"
        case 100: return "high"
        case 122: return "high422"
        case 244: return "high444"
        default: return nil
        }
    }

    var lengthSize: Int {
        switch self {
        case .h264(let configuration, _): return configuration.lengthSize
        case .hevc(let configuration, _): return configuration.lengthSize
        }
    }

    var sourceSampleEntry: [UInt8] {
        switch self {
        case .h264(let configuration, _): return configuration.bytes
        case .hevc(let configuration, _): return configuration.bytes
        }
    }

    /// An end-of-sequence NAL unit as a sample holds it: after it, an HEVC CRA picture
    /// starts a new coded video sequence. H.264 copies start at IDR pictures, which always do.
    var endOfSequence: [UInt8]? {
        guard case .hevc(let configuration, _) = self else { return nil }
        return NALUnits.lengthPrefixed([[HEVC.NALType.endOfSequence.rawValue << 1, 1]], lengthSize: configuration.lengthSize)
    }

    /// QuickTime and Safari play HEVC tagged `hvc1` (every parameter set in the sample entry).
    var codecTag: UInt32 {
        if case .hevc = self { return fourCC("hvc1") }
        return 0
    }

    /// Whether a NAL unit starting with `header` is a parameter set (SPS, PPS; HEVC: VPS).
    func isParameterSet(_ header: UInt8) -> Bool {
        switch self {
        case .h264: return [H264.NALType.sequenceParameterSet, .pictureParameterSet].map(\.rawValue).contains(header & 0x1F)
        case .hevc: return (HEVC.NALType.videoParameterSet.rawValue...HEVC.NALType.pictureParameterSet.rawValue).contains(HEVC.type(ofHeader: header))
        }
    }

    /// This codec with ids for the re-encoded frames' parameter sets that neither the
    /// sample entry nor `inBand` (parameter sets found inside the copied samples) uses: a
    /// player that takes sets from the sample entry and one that takes them from the samples
    /// must not find two different sets under one id.
    func avoiding(inBand units: [ArraySlice<UInt8>], path: String) throws -> SmartCutCodec {
        guard !units.isEmpty else { return self }
        switch self {
        case .h264(let configuration, _):
            var seen = configuration
            for unit in units {
                if H264.type(of: unit) == H264.NALType.sequenceParameterSet.rawValue { seen.sequenceParameterSets.append(unit) }
                if H264.type(of: unit) == H264.NALType.pictureParameterSet.rawValue { seen.pictureParameterSets.append(unit) }
            }
            guard let id = seen.freeParameterSetID else {
                throw SmartCutUnavailable("\"\(path)\" uses every parameter-set id in its samples and sample entry, leaving none for the re-encoded frames")
            }
            return .h264(configuration, parameterSetID: id)
        case .hevc(let configuration, _):
            var seen = configuration
            for unit in units {
                let type = HEVC.type(of: unit)
                if let index = seen.arrays.firstIndex(where: { $0.type == type }) { seen.arrays[index].units.append(unit) } else { seen.arrays.append((type, [unit])) }
            }
            guard let ids = seen.freeParameterSetIDs else {
                throw SmartCutUnavailable("\"\(path)\" leaves no parameter-set ids free in its samples and sample entry for the re-encoded frames", isHEVC: true)
            }
            return .hevc(configuration, HEVCRenumbering(videoParameterSetID: ids.video, sequenceParameterSetID: ids.sequence, pictureParameterSetID: ids.picture))
        }
    }

    /// Whether a NAL unit starting with `header` holds a picture decoding can start at
    /// with other parameter sets: an IDR picture (H.264), any random-access picture (HEVC).
    func startsRandomAccess(_ header: UInt8) -> Bool {
        switch self {
        case .h264: return header & 0x1F == H264.NALType.idrSlice.rawValue
        case .hevc: return HEVC.isRandomAccess(HEVC.type(ofHeader: header))
        }
    }

    /// The matched encoder and its options. Neither makes B-frames (their reordering delay
    /// would collide with the copied frames' decode times); x264 makes one IDR picture per
    /// piece, x265 makes every picture an IDR one, whose slice headers are the simple ones
    /// that can be renumbered.
    /// `longRuns`: smart rendering, whose encoded runs last minutes, gets x264's usual
    /// keyframes and lookahead; the few frames around a cut get one keyframe and a short lookahead.
    func encoder(profile: Int32, preset: ExportPreset, longRuns: Bool = false) -> (name: String, options: [(String, String)]) {
        switch self {
        case .h264(_, let id):
            return ("libx264", [("crf", "\(preset.crf)"), ("preset", preset.speed), ("profile", SmartCutCodec.x264Profile(profile) ?? "high"),
                                ("x264-params", "sps-id=\(id)" + (longRuns ? "" : ":keyint=infinite:scenecut=0:rc-lookahead=10"))])
        case .hevc:
            // All-intra pictures cost x265 3.5 times less CPU at "ultrafast" than "veryfast"
            // for 5 % more bytes (1080p 10-bit iPhone video).
            return ("libx265", [("crf", "\(preset.crf + 3)"), ("preset", "ultrafast"), ("profile", profile == 2 ? "main10" : "main"),
                                ("x265-params", "keyint=1:min-keyint=1:slices=1:wpp=0:pmode=0:pme=0:info=0:aud=0:hrd=0:repeat-headers=0:log-level=error")])
        }
    }

    /// The source's sample entry with the encoder's parameter sets (from its global header)
    /// added under their own ids, and the converter for the encoder's packets.
    func sampleEntry(adding encoderHeader: [ArraySlice<UInt8>]) throws -> (entry: [UInt8], converter: SampleConverter) {
        switch self {
        case .h264(var configuration, let id):
            let sequence = encoderHeader.filter { H264.type(of: $0) == H264.NALType.sequenceParameterSet.rawValue }
            let picture = encoderHeader.filter { H264.type(of: $0) == H264.NALType.pictureParameterSet.rawValue }
            guard sequence.count == 1, picture.count == 1, H264.sequenceParameterSetID(sequence[0]) == id else {
                throw EngineError("x264 gave unexpected parameter sets (\(sequence.count) SPS, \(picture.count) PPS)", kind: .encode)
            }
            configuration.sequenceParameterSets += sequence
            configuration.pictureParameterSets += picture
            return (configuration.bytes, SampleConverter(lengthSize: configuration.lengthSize, renumbering: nil, endOfSequence: nil))
        case .hevc(var configuration, var renumbering):
            func only(_ type: HEVC.NALType) throws -> ArraySlice<UInt8> {
                let units = encoderHeader.filter { HEVC.type(of: $0) == type.rawValue }
                guard units.count == 1 else { throw EngineError("x265 gave \(units.count) units of type \(type.rawValue) in its header", kind: .encode) }
                return units[0]
            }
            configuration.add(try renumbering.videoParameterSet(try only(.videoParameterSet)))
            configuration.add(try renumbering.sequenceParameterSet(try only(.sequenceParameterSet)))
            configuration.add(try renumbering.pictureParameterSet(try only(.pictureParameterSet)))
            return (configuration.bytes, SampleConverter(lengthSize: configuration.lengthSize, renumbering: renumbering, endOfSequence: endOfSequence))
        }
    }
}

/// Turns the matched encoder's Annex B access units into samples of the copied stream:
/// length-prefixed NAL units, without the parameter sets (they are in the sample entry),
/// HEVC slices renumbered.
struct SampleConverter {
    let lengthSize: Int
    /// Set for HEVC.
    let renumbering: HEVCRenumbering?
    let endOfSequence: [UInt8]?

    func sample(_ annexB: [UInt8]) throws -> (bytes: [UInt8], isKeyframe: Bool) {
        let units = NALUnits.annexB(annexB).filter { !$0.isEmpty }
        guard let renumbering else {
            let outOfBand: Set<UInt8> = [H264.NALType.sequenceParameterSet.rawValue, H264.NALType.pictureParameterSet.rawValue,
                                         H264.NALType.accessUnitDelimiter.rawValue]
            let isKeyframe = units.contains { H264.type(of: $0) == H264.NALType.idrSlice.rawValue }
            return (NALUnits.lengthPrefixed(units.filter { !outOfBand.contains(H264.type(of: $0)) }, lengthSize: lengthSize), isKeyframe)
        }
        // Pictures only (VCL types below 32): parameter sets, delimiters and SEI (encoder
        // information) stay out.
        let pictures = try units.filter { HEVC.type(of: $0) < 32 }.map { try renumbering.slice($0) }
        return (NALUnits.lengthPrefixed(pictures, lengthSize: lengthSize), !pictures.isEmpty)
    }
}
