import Testing
@testable import MoonreelEngine

/// The planner reads a session's settings as one value, taken when planning starts, and a
/// session's copy (the studio's Export button exports the same edit again) has all of them.
@Suite struct ExportSettingsTests {
    func session() throws -> ExportSession {
        ExportSession(composition: Composition(), preset: try #require(ExportPreset.named("HighestQuality")))
    }

    @Test func aCopyKeepsEverySetting() throws {
        let original = try session()
        original.outputURL = "out.mov"
        original.timeRange = TimeRange(start: MediaTime(value: 1, timescale: 1), duration: MediaTime(value: 2, timescale: 1))
        (original.smartRendering, original.strict, original.overwrite, original.hdr) = (false, true, true, .toneMap)
        (original.fileLengthLimit, original.memoryLimit, original.metadata) = (1_000_000, 500_000_000, ["title": "A"])
        let copy = original.copy()
        #expect(copy.outputURL == "out.mov" && copy.timeRange == original.timeRange)
        #expect(copy.smartRendering == false, "smartRendering off must stay off in the copy")
        #expect(copy.strict && copy.overwrite && copy.hdr == .toneMap)
        #expect(copy.fileLengthLimit == 1_000_000 && copy.memoryLimit == 500_000_000 && copy.metadata == ["title": "A"])
    }

    @Test func thePlannerReadsTheSettingsAsTheyWereWhenTaken() throws {
        let session = try session()
        session.outputURL = "first.mp4"
        let planner = ExportPlanner(settings: session.settings)
        session.outputURL = "second.mov"
        session.outputFileType = "mov"
        #expect(try planner.container(for: "first.mp4") == .mp4)
        #expect(planner.settings.outputURL == "first.mp4" && planner.settings.outputFileType == nil)
    }
}
