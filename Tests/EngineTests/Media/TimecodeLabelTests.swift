import Testing
@testable import MoonreelMedia

/// Timecode labels as FFmpeg's own `av_timecode` writes them, including rates a label
/// cannot count (under one frame a second: a slideshow's EDL), which must never be empty.
@Suite struct TimecodeLabelTests {
    @Test func labelsCountDropFrameAndSlowFrames() {
        let ntsc = MediaTime(value: 1001, timescale: 30000)
        #expect(Timecode.label(frame: 107_892, frameDuration: ntsc, dropFrame: true) == "01:00:00;00")
        #expect(Timecode.label(frame: 108_000, frameDuration: ntsc, dropFrame: false) == "01:00:00:00")
        #expect(Timecode.label(frame: 90_000, frameDuration: MediaTime(value: 1, timescale: 25), dropFrame: false) == "01:00:00:00")
        // Frames of 2 s (0.5 fps rounds to no frame a second): counted as seconds, not "", and
        // two digits of frames, as an EDL needs them.
        #expect(Timecode.label(frame: 65, frameDuration: MediaTime(value: 2, timescale: 1), dropFrame: false) == "00:01:05:00")
    }

    @Test func onlyRealLabelsAreRead() {
        let ntsc = MediaTime(value: 1001, timescale: 30000)
        #expect(Timecode("01:00:00;00", frameDuration: ntsc, origin: .zero)?.frame == 107_892)
        #expect(Timecode("00:01:00;02", frameDuration: ntsc, origin: .zero)?.frame == 1800)
        for wrong in ["00:01:00;00", "24:00:00:00", "01:60:00:00", "01:00:00:30", "01:00:00.00", "1:00:00:00", "01:00:00:00x", ""] {
            #expect(Timecode(wrong, frameDuration: ntsc, origin: .zero) == nil, "\(wrong)")
        }
        #expect(Timecode("01:00:00:110", frameDuration: MediaTime(value: 1, timescale: 120), origin: .zero)?.frame == 432_110)
        #expect(Timecode("00:00:10:5", frameDuration: MediaTime(value: 1, timescale: 8), origin: .zero)?.frame == 85)
    }
}
