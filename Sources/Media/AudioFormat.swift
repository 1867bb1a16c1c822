import CMoonFFmpeg

/// An audio format the engine renders in: planar float at one rate and channel count.
package struct AudioFormat: Sendable, Equatable {
    package let sampleRate: Int32
    package let channels: Int

    package init(sampleRate: Int32, channels: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// Sample index of output-relative time `t` (exact rational → nearest sample).
    package func sample(at t: MediaTime) -> Int64 { t.count(in: sampleRate) }
}

extension AudioFormat {
    /// The `abuffer` source's arguments for planar float audio in this format.
    package func abufferArguments() throws -> String {
        var layout = AVChannelLayout()
        av_channel_layout_default(&layout, Int32(channels))
        var name = [CChar](repeating: 0, count: 64)
        _ = try check(av_channel_layout_describe(&layout, &name, name.count), "describing the channel layout")
        let layoutName = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "sample_fmt=fltp:sample_rate=\(sampleRate):channel_layout=\(layoutName):time_base=1/\(sampleRate)"
    }
}

extension Frame {
    /// Planar float samples as a frame in `sampleFormat`: planar float, interleaved float
    /// (Opus), interleaved 16-bit (FLAC, PCM) or 24-bit in the top of 32 (FLAC and PCM of
    /// deep sources). Integers are scaled by 2^15 or 2^23, as decoders read them, so a
    /// lossless source comes back sample for sample; the limiter keeps them in range.
    package static func audio(_ block: [[Float]], format: AudioFormat, pts: Int64, sampleFormat: AVSampleFormat = AV_SAMPLE_FMT_FLTP) throws -> Frame {
        let frame = try Frame()
        let count = block.first?.count ?? 0
        frame.pointer.pointee.nb_samples = Int32(count)
        frame.pointer.pointee.format = sampleFormat.rawValue
        frame.pointer.pointee.sample_rate = format.sampleRate
        av_channel_layout_default(&frame.pointer.pointee.ch_layout, Int32(format.channels))
        try check(av_frame_get_buffer(frame.pointer, 0), "allocating audio")
        switch sampleFormat {
        case AV_SAMPLE_FMT_FLT:
            let samples = UnsafeMutableRawPointer(frame.plane(0).0).assumingMemoryBound(to: Float.self)
            for (channel, values) in block.enumerated() {
                for (index, value) in values.enumerated() { samples[index * block.count + channel] = value }
            }
        case AV_SAMPLE_FMT_S16:
            let samples = UnsafeMutableRawPointer(frame.plane(0).0).assumingMemoryBound(to: Int16.self)
            for (channel, values) in block.enumerated() {
                for (index, value) in values.enumerated() {
                    samples[index * block.count + channel] = value.isNaN ? 0 : Int16(min(max((value * 32768).rounded(), -32768), 32767))
                }
            }
        case AV_SAMPLE_FMT_S32:
            let samples = UnsafeMutableRawPointer(frame.plane(0).0).assumingMemoryBound(to: Int32.self)
            for (channel, values) in block.enumerated() {
                for (index, value) in values.enumerated() {
                    // 24 bits, in the top of the 32 as FLAC and pcm_s24le read them.
                    samples[index * block.count + channel] = value.isNaN ? 0 : Int32(min(max((Double(value) * 8_388_608).rounded(), -8_388_608), 8_388_607)) << 8
                }
            }
        default:
            for (channel, samples) in block.enumerated() {
                let (plane, _) = frame.plane(channel)
                samples.withUnsafeBytes { bytes in
                    if let base = bytes.baseAddress { plane.update(from: base.assumingMemoryBound(to: UInt8.self), count: count * 4) }
                }
            }
        }
        frame.pointer.pointee.pts = pts
        return frame
    }
}
