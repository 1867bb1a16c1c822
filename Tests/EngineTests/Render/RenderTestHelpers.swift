@testable import MoonreelEngine

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
