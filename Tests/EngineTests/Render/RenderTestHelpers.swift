import Testing
import TestSupport
@testable import MoonreelEngine

/// Two 2-second 320×240 clips on video tracks 1 and 2 (the second mirrored and negated,
/// with a 660 Hz tone), a video composition at 30 fps with one instruction over both, and
/// the first clip's asset (for its sound).
func twoClipComposition() throws -> (composition: Composition, videoComposition: VideoComposition, instruction: VideoCompositionInstruction, first: Asset) {
    let a = try Asset(path: try Fixtures.clip(seconds: 2, size: "320x240"))
    let b = try Asset(path: try Fixtures.clip(seconds: 2, size: "320x240", tone: 660, extra: ["-vf", "hflip,negate"]))
    let composition = Composition()
    let range = TimeRange(start: .zero, duration: MediaTime(value: 2, timescale: 1))
    for asset in [a, b] {
        let track = try composition.addMutableTrack(mediaType: .video)
        try track.insertTimeRange(range, of: try #require(asset.tracks(withMediaType: .video).first), at: .zero)
    }
    let videoComposition = VideoComposition(renderSize: Size(width: 320, height: 240), frameDuration: MediaTime(value: 1, timescale: 30))
    let instruction = VideoCompositionInstruction(timeRange: range)
    videoComposition.instructions = [instruction]
    return (composition, videoComposition, instruction, a)
}

/// Bounding box (x0, y0, x1, y1 inclusive) of pixels with alpha above `threshold`.
func inkBounds(_ image: RGBAImage, threshold: UInt8 = 0) -> (x0: Int, y0: Int, x1: Int, y1: Int)? {
    var box: (x0: Int, y0: Int, x1: Int, y1: Int)?
    for y in 0..<image.height {
        for x in 0..<image.width where image.pixel(x: x, y: y).alpha > threshold {
            box = (min(box?.x0 ?? x, x), min(box?.y0 ?? y, y), max(box?.x1 ?? x, x), max(box?.y1 ?? y, y))
        }
    }
    return box
}

/// Where test images go, so a person can look at them.
func scratchPath(_ name: String) -> String { "/tmp/moonreel-render-tests/\(name)" }

func makeScratchDirectory() {
    _ = "/tmp/moonreel-render-tests".withCString { mkdir($0, 0o755) }
}

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
