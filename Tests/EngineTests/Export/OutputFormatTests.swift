// FFmpeg's headers are in CMoonAVShim's module too, and Clang may list an enum under
// either: import both so its constants are always visible here.
import CMoonAVShim
import CMoonFFmpeg
import Testing
@testable import MoonreelEngine
@testable import MoonreelMedia

/// The container table says what FFmpeg's muxers take, and image sequences are named safely.
@Suite struct OutputFormatTests {
    /// FFmpeg's own answer for a codec in a container (1 yes, 0 no, below 0 unknown).
    func muxerTakes(_ container: OutputContainer, _ encoder: String) -> Int32 {
        guard let format = av_guess_format(container.muxerName, nil, nil), let codec = avcodec_find_encoder_by_name(encoder) else { return -1 }
        return avformat_query_codec(format, codec.pointee.id, FF_COMPLIANCE_NORMAL)
    }

    @Test func everyCombinationTheTableAllowsIsOneTheMuxerTakes() {
        for container in OutputContainer.allCases {
            for codec in container.videoCodecs {
                #expect(muxerTakes(container, codec.encoderNames[0]) != 0, "\(container) \(codec)")
            }
            for codec in container.audioCodecs {
                for bits in [16, AudioEncoding.deepestBits] {
                    #expect(muxerTakes(container, codec.encoderName(bits: bits)) != 0, "\(container) \(codec) \(bits)-bit")
                }
            }
        }
        // Refused ones the muxers refuse too (FLAC in MP4 needs FFmpeg 5.1's experimental flag instead).
        #expect(muxerTakes(.webm, "libx264") == 0 && muxerTakes(.mp4, "prores_ks") == 0 && muxerTakes(.m4v, "libopus") == 0)
        // m4v and m4a are Apple's MP4 (FFmpeg's "ipod"), not the raw MPEG-4 stream FFmpeg calls m4v.
        #expect(OutputContainer.m4v.muxerName == "ipod" && OutputContainer(extension: "JPEG") == .jpg)
    }

    @Test func sequenceNamesCountFromOneWithTheirDigits() throws {
        let padded = try SequencePattern(path: "f/%05d.png", directory: "f", name: "%05d.png")
        #expect(padded.path(1) == "f/00001.png" && padded.name(123_456) == "123456.png" && padded.digits == 5)
        let plain = try SequencePattern(path: "x_%d_%%.jpg", directory: ".", name: "x_%d_%%.jpg")
        #expect(plain.name(7) == "x_7_%.jpg" && plain.digits == 0)
        for bad in ["a.png", "%d%d.png", "%5d.png", "%s.png", "%00d.png", "%x.png", "100%.png"] {
            #expect(throws: EngineError.self, "\(bad)") { try SequencePattern(path: bad, directory: ".", name: bad) }
        }
    }

    @Test func settingsAreCheckedForTheirCodec() throws {
        var settings = VideoSettings()
        settings.crf = 55
        #expect(throws: EngineError.self) { try settings.check(for: .h264) }
        try settings.check(for: .vp9)
        settings.crf = nil
        settings.profile = "high10"
        try settings.check(for: .h264)
        #expect(settings.chosenPixelFormat(for: .h264) == .yuv420p10le)
        var audio = AudioSettings()
        audio.sampleRate = 44_100
        #expect(throws: EngineError.self) { try audio.check(for: .opus) }
        try audio.check(for: .aac)
    }
}
