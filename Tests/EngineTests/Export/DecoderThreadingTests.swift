import Testing
import TestSupport
@testable import MoonreelEngine

/// An export decodes with one thread where its encoder is the work (no pictures in flight),
/// with FFmpeg's frame threads where decoding is.
@Suite struct DecoderThreadingTests {
    /// The decoder threading the export of all of `source` with `preset` plans.
    func threading(_ source: String, preset: String, speed: String? = nil) throws -> DecoderThreading {
        let asset = try Asset(path: source)
        let composition = Composition()
        try composition.insertTimeRange(TimeRange(start: .zero, duration: asset.duration), of: asset, at: .zero)
        let session = ExportSession(composition: composition, preset: try #require(ExportPreset.named(preset)))
        session.outputURL = Fixtures.scratchPath("threading.mp4")
        if let speed {
            var settings = VideoSettings()
            settings.preset = speed
            session.videoSettings = settings
        }
        let planner = ExportPlanner(session: session)
        let request = try planner.request(makingOutput: false)
        return try #require(try planner.videoPlan(request).0).decoderThreading
    }

    @Test func oneThreadWhereTheEncoderIsTheWork() throws {
        let clip = try Fixtures.clip(seconds: 1)
        #expect(try threading(clip, preset: "HighestQuality") == .single)            // x264 medium, all the pixels
        #expect(try threading(clip, preset: "HEVCHighestQuality") == .single)        // x265 medium
        #expect(try threading(clip, preset: "HighestQuality", speed: "slow") == .single)
    }

    @Test func frameThreadsWhereDecodingIsTheWork() throws {
        let clip = try Fixtures.clip(seconds: 1)
        #expect(try threading(clip, preset: "LowQuality") == .automatic)             // veryfast
        #expect(try threading(clip, preset: "HighestQuality", speed: "fast") == .automatic)
        // A quarter of the source's pixels encoded at medium: the decoder decodes four for one.
        let large = try Fixtures.clip(seconds: 1, size: "1280x720")
        #expect(try threading(large, preset: "640x480") == .automatic)
    }
}
