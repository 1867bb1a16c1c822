import MoonreelMedia

/// Reads a finished export back before it replaces anything at the output path: a file must
/// open as media, fit `fileLengthLimit` and last as long as what was written (within 0.2 s);
/// an image sequence checks its own frames. Any failure leaves the user's file as it was.
struct OutputVerifier {
    let fileLengthLimit: Int64?

    /// `duration`: how long the file should last; nil when the export stopped early on purpose.
    func verify(_ output: any ExportOutput, lasting duration: MediaTime?) throws {
        if let sequence = output as? ImageSequenceOutput { return try sequence.verify() }
        let path = output.temporaryPath
        let written: Asset
        do {
            written = try Asset(path: path)
        } catch {
            throw EngineError("the exported file failed verification (\(error)); the output was not replaced", kind: .encode, underlying: error)
        }
        if let limit = fileLengthLimit, let size = fileSize(path), size > limit {
            throw EngineError("the exported file came out at \(size) bytes, over fileLengthLimit (\(limit)); the output was not replaced", kind: .limit)
        }
        let tolerance = MediaTime(value: 1, timescale: 5)
        if let duration, written.duration + tolerance < duration {
            throw EngineError("the exported file is \(written.duration.seconds) s long but should be \(duration.seconds) s; the output was not replaced", kind: .encode)
        }
    }
}
