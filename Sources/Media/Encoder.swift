import CMoonFFmpeg
import CMoonAVShim

/// Owns one encoder (`AVCodecContext`) and drains its packets into a muxer stream.
package final class StreamEncoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    package let streamIndex: Int32
    private let packet: UnsafeMutablePointer<AVPacket>
    private unowned let muxer: Muxer
    /// What went in and came out, for the file-length budget.
    private(set) var framesSent = 0
    package private(set) var packetsWritten = 0
    private(set) var bytesWritten: Int64 = 0
    private var keyframePackets = 0
    private var keyframeBytes: Int64 = 0
    /// Set once a packet did not fit under the muxer's size limit: every later packet is
    /// dropped too, so the stream ends there instead of having a hole.
    package private(set) var isCutShort = false
    /// Video: the packets written are those whose pts (in frames) lie here, moved to start at
    /// 0; the rest are dropped (frames that only warm the encoder up). nil: all.
    package var keptFrames: Range<Int64>?

    private init(context: UnsafeMutablePointer<AVCodecContext>, muxer: Muxer) throws {
        self.context = context
        self.muxer = muxer
        guard let packet = av_packet_alloc() else { throw EngineError("out of memory", kind: .limit) }
        self.packet = packet
        streamIndex = try muxer.addStream(for: context)
    }

    deinit {
        var maybePacket: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&maybePacket)
        var maybeContext: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&maybeContext)
    }

    /// `liveKeyframeInterval`: set for recordings, which encode as the camera delivers (a
    /// keyframe every that many frames, no B-frames, no lookahead). `timeBase`: the frames'
    /// pts count in it (a copy keeping its source's frame times) instead of in frames.
    package static func video(_ encoding: VideoEncoding, width: Int, height: Int, frameDuration: MediaTime,
                              color: ColorDescription, muxer: Muxer, liveKeyframeInterval: Int32? = nil,
                              timeBase: AVRational? = nil) throws -> StreamEncoder {
        let name = encoding.encoderName
        guard let codec = avcodec_find_encoder_by_name(name) else {
            throw EngineError("this FFmpeg has no \(name) encoder; install one built with it (Debian: libavcodec59 with \(name))", kind: .unsupported)
        }
        guard let context = avcodec_alloc_context3(codec) else { throw EngineError("out of memory", kind: .limit) }
        let reduced = frameDuration.reduced()
        context.pointee.width = Int32(width)
        context.pointee.height = Int32(height)
        context.pointee.pix_fmt = encoding.pixelFormat
        context.pointee.time_base = timeBase ?? AVRational(num: Int32(clamping: reduced.value), den: reduced.timescale)
        context.pointee.framerate = AVRational(num: reduced.timescale, den: Int32(clamping: reduced.value))
        context.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        if encoding.codec != nil { tagColor(of: context, color) }
        if let tag = encoding.codecTag { context.pointee.codec_tag = fourCC(tag) }
        if muxer.needsGlobalHeader { context.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        for (key, value) in encoding.encoderOptions { av_dict_set(&options, key, value, 0) }
        switch encoding.rateControl {
        case .quality(let crf):
            context.pointee.bit_rate = 0 // libvpx and libaom encode constant quality only without a bit rate
            av_dict_set(&options, "crf", "\(crf)", 0)
        case .quantizer(let qp):
            av_dict_set(&options, "qp", "\(qp)", 0)
        case .bitRate(let average, let constant):
            context.pointee.bit_rate = Int64(average)
            if constant { (context.pointee.rc_min_rate, context.pointee.rc_max_rate) = (Int64(average), Int64(average)) }
        case .fixed:
            break
        }
        if let peak = encoding.peak {
            // With crf, x264 and x265 keep constant quality under the cap (capped CRF).
            context.pointee.rc_max_rate = Int64(peak.bitsPerSecond)
            context.pointee.rc_buffer_size = Int32(clamping: peak.bufferBits)
        }
        if let frames = encoding.keyframeFrames(frameDuration: frameDuration).map(Int32.init(clamping:)) {
            // Exactly every N frames: no shorter GOPs either (the codec parameters turn scene cuts off).
            (context.pointee.gop_size, context.pointee.keyint_min) = (frames, frames)
        }
        if let liveKeyframeInterval {
            // Recordings: a keyframe at each fragment, and no B-frames, so timestamps start at
            // zero without the edit list a fragmented MP4 cannot write up front; no lookahead,
            // so what is written (what maxFileSize counts, what survives a kill) follows the camera.
            (context.pointee.gop_size, context.pointee.max_b_frames) = (liveKeyframeInterval, 0)
            av_dict_set(&options, "tune", "zerolatency", 0)
        }
        let encoder = try StreamEncoder(context: context, muxer: muxer)
        try check(avcodec_open2(context, codec, &options), "opening the \(name) encoder", context: "output")
        try muxer.copyParameters(from: context, to: encoder.streamIndex)
        if let metadata = encoding.hdrMetadata, let stream = muxer.context.pointee.streams[Int(encoder.streamIndex)] {
            try metadata.attach(to: stream)
        }
        return encoder
    }

    /// Colour tags for players: HDR as kept, SDR as the untagged rule reads it.
    private static func tagColor(of context: UnsafeMutablePointer<AVCodecContext>, _ color: ColorDescription) {
        context.pointee.colorspace = color.space
        context.pointee.color_range = color.range
        if color.dynamicRange.isHDR {
            context.pointee.color_primaries = AVCOL_PRI_BT2020
            context.pointee.color_trc = color.dynamicRange.transfer
        } else {
            let isHD = color.space == AVCOL_SPC_BT709
            context.pointee.color_primaries = isHD ? AVCOL_PRI_BT709 : AVCOL_PRI_SMPTE170M
            context.pointee.color_trc = isHD ? AVCOL_TRC_BT709 : AVCOL_TRC_SMPTE170M
        }
    }

    package static func audio(_ encoding: AudioEncoding, format: AudioFormat, muxer: Muxer) throws -> StreamEncoder {
        let name = encoding.encoderName
        guard let codec = avcodec_find_encoder_by_name(name) else { throw EngineError("this FFmpeg has no \(name) encoder", kind: .unsupported) }
        guard let context = avcodec_alloc_context3(codec) else { throw EngineError("out of memory", kind: .limit) }
        context.pointee.sample_fmt = encoding.sampleFormat
        // FLAC keeps the top `bits` of 32-bit samples; PCM's 24-bit encoder is 24 bits by name.
        if encoding.bits > 16 { context.pointee.bits_per_raw_sample = Int32(encoding.bits) }
        context.pointee.sample_rate = format.sampleRate
        av_channel_layout_default(&context.pointee.ch_layout, Int32(format.channels))
        let written = encoding.codec.writtenBitRates(sampleRate: Int(format.sampleRate), channels: format.channels)
        // libopus refuses a rate it cannot write; AAC and LAME would move it themselves.
        context.pointee.bit_rate = Int64(encoding.bitRate.map { rate in written.map { min(max(rate, $0.lowerBound), $0.upperBound) } ?? rate } ?? 0)
        context.pointee.time_base = AVRational(num: 1, den: format.sampleRate)
        if muxer.needsGlobalHeader { context.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        let encoder = try StreamEncoder(context: context, muxer: muxer)
        try check(avcodec_open2(context, codec, nil), "opening the \(name) encoder", context: "output")
        try muxer.copyParameters(from: context, to: encoder.streamIndex)
        return encoder
    }

    package var frameSize: Int { context.pointee.frame_size > 0 ? Int(context.pointee.frame_size) : 1024 }

    /// Encodes one frame (nil flushes) and writes every packet that comes out.
    package func encode(_ frame: Frame?) throws {
        // Decoded and generated frames carry their own picture type, which libx264 would
        // obey (every source keyframe forced to an I-frame); let the encoder decide.
        frame?.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
        if let picture = frame?.pointer, context.pointee.codec_type == AVMEDIA_TYPE_VIDEO {
            // prores_ks writes each frame's own colour tags into its header (rendered frames
            // carry none: unspecified, while the MOV colr atom said 6/6/6); x264 and x265 read
            // the context's. Both say the tags set on the context.
            picture.pointee.color_primaries = context.pointee.color_primaries
            picture.pointee.color_trc = context.pointee.color_trc
            picture.pointee.colorspace = context.pointee.colorspace
            picture.pointee.color_range = context.pointee.color_range
        }
        try check(avcodec_send_frame(context, frame?.pointer), "encoding", context: "output")
        if frame != nil { framesSent += 1 }
        while true {
            let status = avcodec_receive_packet(context, packet)
            if status == MOON_AVERROR_EAGAIN || status == MOON_AVERROR_EOF { return }
            try check(status, "encoding", context: "output")
            // One frame per time-base tick; x264 leaves it 0, which shortens the last frame.
            if packet.pointee.duration == 0, context.pointee.codec_type == AVMEDIA_TYPE_VIDEO { packet.pointee.duration = 1 }
            if let kept = keptFrames {
                guard kept.contains(packet.pointee.pts) else {
                    av_packet_unref(packet)
                    continue
                }
                packet.pointee.pts -= kept.lowerBound
                packet.pointee.dts -= kept.lowerBound
            }
            let (size, isKeyframe) = (Int64(packet.pointee.size), packet.pointee.flags & AV_PKT_FLAG_KEY != 0) // the muxer takes the packet
            guard !isCutShort, try muxer.write(packet, stream: streamIndex, from: context.pointee.time_base) else {
                isCutShort = true
                av_packet_unref(packet)
                continue
            }
            packetsWritten += 1
            bytesWritten += size
            if isKeyframe {
                keyframePackets += 1
                keyframeBytes += size
            }
        }
    }

    /// Bytes per frame of a long encode at these settings, judged from the packets so far:
    /// the mean frame other than a keyframe, plus a keyframe's share at one every
    /// `keyframeSpacing` frames. nil before any packet.
    package func bytesPerFrame(keyframeSpacing: Int) -> Double? {
        guard packetsWritten > 0 else { return nil }
        let keyframe = keyframePackets > 0 ? Double(keyframeBytes) / Double(keyframePackets) : 0
        guard let other = meanOtherFrameBytes else { return keyframe }
        return Double(other) + keyframe / Double(max(keyframeSpacing, 1))
    }

    /// The mean packet other than a keyframe; nil while only keyframes are out.
    private var meanOtherFrameBytes: Int64? {
        packetsWritten > keyframePackets ? (bytesWritten - keyframeBytes) / Int64(packetsWritten - keyframePackets) : nil
    }

    /// About how many bytes the frames still inside the encoder (its look-ahead and
    /// reordering) and the next one will take once they come out, judged by the packets so
    /// far other than keyframes. While only keyframes are out (x264's first packet comes
    /// after some 40 frames of look-ahead), the others are taken as a quarter of their size,
    /// a usual ratio; an intra-only encoder holds no frames, so this barely counts for it.
    package var bytesInFlight: Int64 {
        guard packetsWritten > 0 else { return 0 }
        let frameBytes = meanOtherFrameBytes ?? bytesWritten / Int64(packetsWritten) / 4
        return Int64(max(framesSent - packetsWritten, 0) + 1) * frameBytes
    }

    /// Seconds of the encoder's priming (AAC's 1024 samples) in its first packets, which
    /// the file's edit list hides.
    package var primingSeconds: Double {
        let rate = context.pointee.sample_rate
        return rate > 0 ? Double(context.pointee.initial_padding) / Double(rate) : 0
    }
}

package func fourCC(_ code: String) -> UInt32 {
    code.utf8.prefix(4).enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
}

/// Owns the output container (`AVFormatContext` + its file).
package final class Muxer {
    package let context: UnsafeMutablePointer<AVFormatContext>
    private var headerWritten = false
    let path: String
    /// The most bytes the file may hold (`fileLengthLimit`): a packet that would take the
    /// file past it is refused.
    package var sizeLimit: Int64?
    private var headerBytes: Int64 = 0
    /// Bytes of encoded media handed to the container so far.
    package private(set) var packetBytes: Int64 = 0
    private var packetCount: Int64 = 0
    private var metadataBytes: Int64 = 0
    /// Where the latest packet written ends, in seconds: how long the file is so far.
    package private(set) var writtenSeconds = 0.0
    /// How long each stream's packets written last together, in seconds, by stream index
    /// (a picture cut at the size limit with B-frames leaves gaps in its times: players show
    /// the pictures written, one after another).
    package private(set) var streamSeconds: [Int32: Double] = [:]

    package convenience init(path: String, container: OutputContainer) throws {
        try self.init(path: path, muxerName: container.muxerName, name: container.rawValue)
    }

    /// A file in FFmpeg's container `muxerName` (`name` in messages).
    init(path: String, muxerName: String, name: String) throws {
        self.path = path
        var maybe: UnsafeMutablePointer<AVFormatContext>? = nil
        try check(avformat_alloc_output_context2(&maybe, nil, muxerName, path), "creating the \(name) container", context: "output")
        guard let context = maybe else { throw EngineError("cannot create a \(name) file", kind: .encode, subject: path) }
        self.context = context
        let status = avio_open(&context.pointee.pb, path, AVIO_FLAG_WRITE)
        if status < 0 {
            // deinit frees the context: every stored property is set, so it runs on a throw.
            throw FFmpegError(code: status, operation: "creating the file", context: "output \"\(path)\"", detail: "")
        }
    }

    deinit {
        avio_closep(&context.pointee.pb)
        avformat_free_context(context)
    }

    var needsGlobalHeader: Bool { context.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 }

    func addStream(for encoder: UnsafeMutablePointer<AVCodecContext>) throws -> Int32 {
        guard let stream = avformat_new_stream(context, nil) else { throw EngineError("out of memory", kind: .limit) }
        stream.pointee.time_base = encoder.pointee.time_base
        stream.pointee.avg_frame_rate = encoder.pointee.framerate // what a timecode track counts at
        return stream.pointee.index
    }

    /// A stream copying packets of `parameters`, at the source stream's `frameRate` (what a
    /// timecode track counts at).
    package func addStream(copying parameters: UnsafePointer<AVCodecParameters>, timeBase: AVRational, frameRate: AVRational) throws -> Int32 {
        guard let stream = avformat_new_stream(context, nil) else { throw EngineError("out of memory", kind: .limit) }
        try check(avcodec_parameters_copy(stream.pointee.codecpar, parameters), "copying stream parameters", context: "output")
        // The source's tag when the container knows it for this codec (HEVC stays hvc1, which
        // QuickTime and Photos need; the muxer's own choice would be hev1), else the container's own.
        let tag = parameters.pointee.codec_tag
        let known = tag != 0 && context.pointee.oformat.pointee.codec_tag.map { av_codec_get_id($0, tag) == parameters.pointee.codec_id } == true
        stream.pointee.codecpar.pointee.codec_tag = known ? tag : 0
        stream.pointee.time_base = timeBase
        stream.pointee.avg_frame_rate = frameRate
        return stream.pointee.index
    }

    func copyParameters(from encoder: UnsafeMutablePointer<AVCodecContext>, to index: Int32) throws {
        guard let stream = context.pointee.streams[Int(index)] else { return }
        try check(avcodec_parameters_from_context(stream.pointee.codecpar, encoder), "copying encoder parameters", context: "output")
    }

    /// Keys the QuickTime/MP4 muxer writes as classic iTunes-style or `©xxx` tags, which
    /// every player reads. Other keys can only go into QuickTime's `mdta` key list.
    static let standardMetadataKeys: Set<String> = [
        "title", "artist", "album_artist", "album", "composer", "date", "comment", "genre", "copyright",
        "grouping", "lyrics", "description", "synopsis", "show", "episode_id", "network", "keywords",
        "track", "disc", "compilation", "encoder", "creation_time", "location",
    ]
    /// Apple's own `mdta` names for the standard keys, so Photos and QuickTime still find
    /// the title when custom keys switch the file to `mdta` metadata.
    static let appleMetadataNames = [
        "title": "com.apple.quicktime.title", "artist": "com.apple.quicktime.artist",
        "album": "com.apple.quicktime.album", "comment": "com.apple.quicktime.comment",
        "description": "com.apple.quicktime.description", "copyright": "com.apple.quicktime.copyright",
        "genre": "com.apple.quicktime.genre", "keywords": "com.apple.quicktime.keywords",
        "composer": "com.apple.quicktime.composer", "location": "com.apple.quicktime.location.ISO6709",
    ]

    /// Writes the header with the metadata. Standard keys are written as the classic tags;
    /// any other key (a job id, a source name) makes the muxer write QuickTime `mdta`
    /// metadata, which holds arbitrary keys, with the standard ones also under Apple's names.
    /// `timecode` labels the first video frame: the video streams carry it, from which MOV
    /// and MP4 write a `tmcd` track and Matroska a tag.
    /// `fragmented`: a fragmented MP4 (an empty moov first, then a moof per second), which
    /// stays playable up to its last fragment if the writer is killed.
    package func writeHeader(metadata: [String: String], fastStart: Bool, fragmented: Bool = false) throws {
        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        var tags = metadata
        if let timecode = tags.removeValue(forKey: "timecode") {
            for index in 0..<Int(context.pointee.nb_streams) {
                guard let stream = context.pointee.streams[index], stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO else { continue }
                av_dict_set(&stream.pointee.metadata, "timecode", timecode, 0)
            }
        }
        let custom = tags.keys.contains { !Muxer.standardMetadataKeys.contains($0) }
        if custom {
            for (key, value) in tags { if let apple = Muxer.appleMetadataNames[key] { tags[apple] = value } }
            av_dict_set(&options, "movflags", "+use_metadata_tags", AV_DICT_APPEND)
        }
        for (key, value) in tags { av_dict_set(&context.pointee.metadata, key, value, 0) }
        metadataBytes = tags.reduce(0) { $0 + Int64($1.key.utf8.count + $1.value.utf8.count + 32) }
        if fastStart { av_dict_set(&options, "movflags", "+faststart", AV_DICT_APPEND) }
        if fragmented {
            av_dict_set(&options, "movflags", "+frag_keyframe+empty_moov+default_base_moof", AV_DICT_APPEND)
            av_dict_set(&options, "frag_duration", "1000000", 0)
            context.pointee.flags |= AVFMT_FLAG_FLUSH_PACKETS
        }
        try check(avformat_write_header(context, &options), "writing the header", context: "output \"\(path)\"")
        headerWritten = true
        headerBytes = context.pointee.pb.map { avio_tell($0) } ?? 0
    }

    /// What the file would hold if it ended after the packets written so far: the header,
    /// the packets with their framing, and the index the trailer writes (MP4's sample
    /// tables, Matroska's cues: well under 32 bytes a packet) with the metadata. An
    /// over-estimate, so a file cut at the limit stays under it.
    package var projectedSize: Int64 { headerBytes + packetBytes + 32 * packetCount + 8192 + 2 * metadataBytes }

    /// Writes a packet, or returns false when it would take the file past `sizeLimit`.
    package func write(_ packet: UnsafeMutablePointer<AVPacket>, stream index: Int32, from timeBase: AVRational) throws -> Bool {
        guard let stream = context.pointee.streams[Int(index)] else { return false }
        if let sizeLimit, projectedSize + Int64(packet.pointee.size) + 32 > sizeLimit { return false }
        packetBytes += Int64(packet.pointee.size)
        packetCount += 1
        packet.pointee.stream_index = index
        writtenSeconds = max(writtenSeconds, Double(packet.pointee.pts + packet.pointee.duration) * av_q2d(timeBase))
        streamSeconds[index, default: 0] += Double(packet.pointee.duration) * av_q2d(timeBase)
        av_packet_rescale_ts(packet, timeBase, stream.pointee.time_base)
        try check(av_interleaved_write_frame(context, packet), "writing", context: "output \"\(path)\"")
        return true
    }

    package func finish() throws {
        guard headerWritten else { return }
        try check(av_write_trailer(context), "finishing the file", context: "output \"\(path)\"")
        try check(avio_closep(&context.pointee.pb), "closing the file", context: "output \"\(path)\"")
    }
}
