import Foundation
import Testing
import TestSupport
@testable import MoonreelEngine

/// A failed export says what kind of failure it was, as a value (`ExportSession.error`),
/// so embedders, the CLI and the REPL never read the message to decide what happened.
@Suite struct ExportErrorTests {
    func session(_ composition: Composition, to output: String?) -> ExportSession {
        let session = ExportSession(composition: composition, preset: ExportPreset.named("LowQuality")!)
        session.outputURL = output
        return session
    }

    func kind(of session: ExportSession) -> ExportError.Kind? {
        do { try session.export() } catch let error as ExportError {
            #expect(session.error?.kind == error.kind && session.error?.message == error.message)
            return error.kind
        } catch {
            Issue.record("not an ExportError: \(error)")
        }
        return nil
    }

    @Test func eachFailureHasItsKind() throws {
        let asset = try Asset(path: try Fixtures.clip(seconds: 1))
        let composition = Composition()
        try composition.insertTimeRange(TimeRange(start: .zero, duration: MediaTime(value: 1, timescale: 1)), of: asset, at: .zero)
        let existing = Fixtures.scratchPath("existing.mp4")
        try Data("keep".utf8).write(to: URL(fileURLWithPath: existing))

        #expect(kind(of: session(composition, to: nil)) == .invalidRequest)
        #expect(kind(of: session(Composition(), to: Fixtures.scratchPath("empty.mp4"))) == .invalidRequest)
        #expect(kind(of: session(composition, to: Fixtures.scratchPath("out.xyz"))) == .invalidRequest)
        #expect(kind(of: session(composition, to: existing)) == .outputUnavailable)
        #expect(kind(of: session(composition, to: "/nonexistent-folder/out.mp4")) == .outputUnavailable)
        #expect(kind(of: session(composition, to: asset.path)) == .outputUnavailable)
        let cancelled = session(composition, to: Fixtures.scratchPath("cancelled.mp4"))
        cancelled.cancel()
        #expect(kind(of: cancelled) == .cancelled)
        #expect(cancelled.status == .cancelled)
        #expect(try String(contentsOfFile: existing, encoding: .utf8) == "keep")
    }
}
