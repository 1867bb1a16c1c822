import Testing
@testable import MoonreelEngine

/// How a chunked render splits its frames, and the warm-up each piece encodes around its
/// own frames so x264 meets a seam as the single export did.
@Suite struct ChunkLayoutTests {
    func layout(frames: Int64, pieces: Int, gop: Int64, warmsUp: Bool = true) -> ChunkLayout {
        ChunkLayout(pieces: ChunkLayout.split(frameCount: frames, into: pieces, gop: gop), frameDuration: MediaTime(value: 1, timescale: 30),
                    gop: gop, warmsUp: warmsUp, folder: "/tmp", key: "k", fileExtension: "mp4")
    }

    @Test func piecesWarmUpInWholeGOPsBeforeAndTwoSecondsAfter() {
        // 10 minutes at 30 fps in 4 pieces of 4500 frames, keyframes every 48 frames.
        let long = layout(frames: 18000, pieces: 4, gop: 48)
        #expect(long.pieces.map(\.lowerBound) == [0, 4464, 8976, 13488])
        let first = long.encodedFrames(of: 0), middle = long.encodedFrames(of: 1), last = long.encodedFrames(of: 3)
        #expect(first.encoded == 0..<4524 && first.kept == 0..<4464)
        // 60 frames after; before, the whole GOPs within 180 frames: 144, so the encode starts on a keyframe.
        #expect(middle.encoded == 4320..<9036 && middle.kept == 144..<4656)
        #expect(last.encoded == 13344..<18000 && last.kept == 144..<4656)
    }

    @Test func warmUpStaysInsideTheExportAndNeedsFixedKeyframesAndDeterminism() {
        let short = layout(frames: 600, pieces: 4, gop: 30)   // pieces of 150 frames
        #expect(short.encodedFrames(of: 1).encoded == 0..<360 && short.encodedFrames(of: 1).kept == 150..<300)
        #expect(short.encodedFrames(of: 3).encoded == 270..<600 && short.encodedFrames(of: 3).kept == 180..<330)
        let free = layout(frames: 18000, pieces: 4, gop: 1)  // no fixed keyframes: a piece starts its own encode
        #expect(free.encodedFrames(of: 2).encoded == free.pieces[2] && free.encodedFrames(of: 2).kept == 0..<Int64(free.pieces[2].count))
        let threaded = layout(frames: 18000, pieces: 4, gop: 48, warmsUp: false)  // x264's own lookahead thread: no warm-up
        #expect(threaded.encodedFrames(of: 2).encoded == threaded.pieces[2])
    }
}
