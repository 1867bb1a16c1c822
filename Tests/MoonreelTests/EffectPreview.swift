import Foundation
import TestSupport

/// Renders a bundled effect the way a user previews it (`moonreel effects preview`) and reads
/// the picture back with ffmpeg, for the effect library's pixel tests.
enum EffectPreview {
    /// The frame at `seconds` of effect `name` applied with its example (and `options`, a Lua
    /// table text merged over it) at `width`×`height`, over `over` (a video or image; the
    /// generated test pattern when nil).
    static func still(_ name: String, at seconds: Double, with options: String? = nil, over: String? = nil,
                      width: Int = 1280, height: Int = 720) throws -> Image {
        let output = Fixtures.scratchPath("\(name).png")
        var arguments = ["effects", "preview", name, "--at", String(seconds), "--size", "\(width)x\(height)", "-o", output]
        if let options { arguments += ["--with", options] }
        if let over { arguments += ["--over", over] }
        let result = try Moonreel.run(arguments)
        guard result.status == 0 else {
            throw Tool.Failure(description: "effects preview \(name) failed (\(result.status)): \(result.err)")
        }
        return try Tool.rgbFrame(output, at: 0)
    }

    /// A grey clip to draw over: every pixel the effect did not touch is (128, 128, 128).
    static func grey(width: Int = 1280, height: Int = 720, seconds: Double = 6) throws -> String {
        try Fixtures.solid("0x808080", seconds: seconds, size: "\(width)x\(height)", tone: nil)
    }
}
