import Foundation
import Testing
import TestSupport
@testable import MoonreelEngine
@testable import MoonreelRender

/// Dissolves and full-frame opacity ramps are mixed on the Y'CbCr planes: against the ideal
/// mix of the two pictures (computed in Double from the very frames the renderer blends),
/// every plane is within rounding.
@Suite struct DissolveTests {
    /// Frame `time` of clip A (track 1) under clip B (track 2, on top), each at its opacity.
    static func render(at time: MediaTime, opacities: [Double]) throws -> Frame {
        let (composition, videoComposition, instruction, _) = try twoClipComposition()
        for (index, opacity) in opacities.enumerated() {
            let layer = LayerInstruction(trackID: composition.tracks[index].trackID)
            layer.opacity.set(opacity, at: .zero)
            instruction.layerInstructions.insert(layer, at: 0)   // later tracks on top
        }
        let plan = try VideoPlan.make(composition: composition, videoComposition: videoComposition, range: instruction.timeRange,
                                      outputWidth: 320, outputHeight: 240)
        return try VideoRenderer(plan: plan).render(at: time)
    }

    static let middle = MediaTime(value: 1, timescale: 2)

    /// PSNR (dB) of `plane` of `frame` against `ideal`.
    static func psnr(_ frame: Frame, plane: Int, ideal: [Double]) -> Double {
        let (pixels, stride) = frame.plane(plane)
        let width = plane == 0 ? frame.width : (frame.width + 1) / 2, height = plane == 0 ? frame.height : (frame.height + 1) / 2
        var squared = 0.0
        for y in 0..<height { for x in 0..<width {
            let difference = Double(pixels[y * stride + x]) - ideal[y * width + x]
            squared += difference * difference
        } }
        let mse = max(squared / Double(width * height), 1e-12)
        return 10 * log10(255 * 255 / mse)
    }

    static func samples(_ frame: Frame, plane: Int) -> [Double] {
        let (pixels, stride) = frame.plane(plane)
        let width = plane == 0 ? frame.width : (frame.width + 1) / 2, height = plane == 0 ? frame.height : (frame.height + 1) / 2
        return (0..<height).flatMap { y in (0..<width).map { Double(pixels[y * stride + $0]) } }
    }

    @Test(arguments: [0.25, 0.5, 0.8])
    func dissolveIsTheIdealMixOfThePlanes(opacity: Double) throws {
        let mixed = try Self.render(at: Self.middle, opacities: [1, opacity])
        let a = try Self.render(at: Self.middle, opacities: [1, 0]), b = try Self.render(at: Self.middle, opacities: [0, 1])
        for plane in 0..<3 {
            let ideal = zip(Self.samples(a, plane: plane), Self.samples(b, plane: plane)).map { $0 * (1 - opacity) + $1 * opacity }
            let quality = Self.psnr(mixed, plane: plane, ideal: ideal)
            #expect(quality >= 48, "plane \(plane) at \(opacity): \(quality) dB")
        }
    }

    /// A fade from black: B alone at 0.3 over the black background (Y 16, chroma 128).
    @Test func fadeFromBlackIsTheIdealMixWithBlack() throws {
        let opacity = 0.3
        let faded = try Self.render(at: Self.middle, opacities: [0, opacity])
        let b = try Self.render(at: Self.middle, opacities: [0, 1])
        for plane in 0..<3 {
            let black = plane == 0 ? 16.0 : 128.0
            let ideal = Self.samples(b, plane: plane).map { black * (1 - opacity) + $0 * opacity }
            let quality = Self.psnr(faded, plane: plane, ideal: ideal)
            #expect(quality >= 48, "plane \(plane): \(quality) dB")
        }
    }
}

/// Issue 39 §3: the engine's messages are in plain words; the Lua bindings say remedies in
/// Lua's (`vc.renderSize = {1920, 1080}` was in the engine's text, for Swift apps too).
@Suite struct EngineMessageTests {
    @Test func aRemedyIsSaidInPlainWords() throws {
        let second = TimeRange(start: .zero, duration: MediaTime(value: 1, timescale: 1))
        let unsized = VideoComposition(renderSize: .zero, frameDuration: MediaTime(value: 1, timescale: 30))
        #expect {
            try VideoPlan.make(composition: Composition(), videoComposition: unsized, range: second, outputWidth: 320, outputHeight: 240)
        } throws: { error in
            guard let error = error as? EngineError else { return false }
            return error.remedy == .setRenderSize && error.message == "videoComposition.renderSize must be set"
                && "\(error)".contains("made from the composition takes its size") && !"\(error)".contains("av.")
        }
    }
}
