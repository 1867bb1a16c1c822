import Foundation
import MoonreelComposition
import MoonreelMedia
import MoonreelPlatform
import MoonreelRender

/// The true peak of a mix once encoded. A lossy encoder rebuilds the waveform from bands it
/// quantised, and its peaks come out higher than the ones it was given: a limited mix held
/// 1.5 dB under a −1 dBTP ceiling measured −0.7 dBTP in the AAC file. So the ceiling is
/// checked where the listener meets it, on the encoded sound, as ffmpeg's `ebur128` reads it.
enum EncodedPeak {
    /// Encodes `plan` (its settled loudness gain and ceiling) alone with `encoding` into a
    /// temporary file, decodes it and returns its true peak in dBTP. Encoders are
    /// deterministic, so the export's own sound peaks where this one does.
    static func truePeak(of plan: AudioPlan, encoding: AudioEncoding, container: OutputContainer,
                         cancellation: CancellationFlag?) throws -> Double {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("moonreel-peak-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try ContainerWriter(path: path, container: container, video: nil, audio: (encoding, plan), gifPalette: nil,
                                         metadata: [:], fastStart: false, sizeLimit: nil)
        let renderer = try AudioRenderer.make(plan: plan, cancellation: cancellation)
        var written: Int64 = 0
        while let block = try renderer.nextBlock(count: writer.audioFrameSize) {
            if cancellation?.isCancelled == true { throw EngineError("export cancelled", kind: .cancelled) }
            _ = try writer.write(audio: block, pts: written)
            written += Int64(block.first?.count ?? 0)
        }
        try writer.finish()
        let encoded = try Asset(path: path)
        let sound = Composition()
        try sound.insertTimeRange(TimeRange(start: .zero, duration: encoded.duration), of: encoded, at: .zero)
        return try sound.loudness()?.truePeak ?? -.infinity
    }
}
