import Testing
import TestSupport
@testable import MoonreelEngine

/// Where its encoder is the work, an export decodes with one thread and draws each picture
/// once the encoder is done with the last (no pictures in flight); where decoding is, with
/// FFmpeg's frame threads, drawing ahead.
@Suite struct RenderPaceTests {
    /// The pace the export of all of `source` with `preset` plans.
    func pace(_ source: String, preset: String, speed: String? = nil) throws -> RenderPace {
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
        let planner = ExportPlanner(settings: session.settings)
        let request = try planner.request(makingOutput: false)
        return try #require(try planner.videoPlan(request).0).pace
    }

    @Test func oneThreadWhereTheEncoderIsTheWork() throws {
        let clip = try Fixtures.clip(seconds: 1)
        #expect(try pace(clip, preset: "HighestQuality") == .encoder)            // x264 medium, all the pixels
        #expect(try pace(clip, preset: "HEVCHighestQuality") == .encoder)        // x265 medium
        #expect(try pace(clip, preset: "HighestQuality", speed: "slow") == .encoder)
    }

    @Test func frameThreadsWhereDecodingIsTheWork() throws {
        let clip = try Fixtures.clip(seconds: 1)
        #expect(try pace(clip, preset: "LowQuality") == .renderer)             // veryfast
        #expect(try pace(clip, preset: "HighestQuality", speed: "fast") == .renderer)
        // A quarter of the source's pixels encoded at medium: the decoder decodes four for one.
        let large = try Fixtures.clip(seconds: 1, size: "1280x720")
        #expect(try pace(large, preset: "640x480") == .renderer)
    }
}
