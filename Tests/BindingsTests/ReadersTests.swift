import MoonreelBindings
import MoonreelScriptHost
import Testing

/// The `av` module's argument and property readers, in process (a MoonreelHost, no binary,
/// no media): exact times, ranges, sizes in both forms, colours, and each refusal naming the
/// argument or property, what it needs and what it got; an error's kind reaches Lua.
@Suite struct ReadersTests {
    func run(_ source: String) throws -> [ScriptValue] {
        try MoonreelHost().run(source: source, name: "readers.lua")
    }

    /// The message a script's error ends with, or nil when it ran.
    func refusal(_ source: String) -> String? {
        do {
            _ = try run(source)
            return nil
        } catch let error as ScriptError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func timesAreExactAndAFractionIsRoundedToItsTimescale() throws {
        #expect(try run("local t = av.time(1, 30) + av.time(1, 30); return t.value, t.timescale") == [.integer(2), .integer(30)])
        #expect(try run("return av.time(2.5, 600).value, av.time(1, 3).seconds * 3") == [.integer(1500), .number(1)])
    }

    @Test func aSizeIsReadAsAPairOrByName() throws {
        #expect(try run("""
            local vc = av.videoComposition{ renderSize = {1280, 720}, frameDuration = av.time(1, 30) }
            local first = vc.renderSize.width
            vc.renderSize = { width = 640, height = 360 }
            return first, vc.renderSize[1], vc.renderSize.height
            """) == [.number(1280), .number(640), .number(360)])
    }

    @Test(arguments: [
        ("av.time(1, 0)", "bad argument #2 to 'time' (timescale must be a positive 32-bit integer, got 0)"),
        ("av.range(0, -1)", "bad argument #2 to 'range' (duration must not be negative, got -1.0)"),
        ("av.videoComposition{}.renderSize = {0, 720}", "bad value for VideoComposition.renderSize (size must be between 1 and 65536 on each side, got 0×720)"),
        ("av.layer{}.opacity = 0/0", "bad value for Layer.opacity (number must be finite, got nan)"),
        ("av.layer{}.backgroundColor = '#GG0000'", "bad value for Layer.backgroundColor (unknown colour \"#GG0000\""),
    ])
    func aRefusalNamesWhatItReadAndWhatItGot(_ source: String, _ message: String) {
        let said = refusal(source)
        #expect(said?.contains(message) == true, "\(source): \(said ?? "ran")")
        #expect(said?.contains("readers.lua:1:") == true, "the script's line: \(said ?? "ran")")
    }

    @Test func anErrorsKindAndSubjectReachLuaOnItsMessage() throws {
        #expect(try run("""
            local ok, err = pcall(av.asset, "/no/such/clip.mp4")
            return ok, err.kind, err.subject, type(err)
            """) == [.bool(false), .string("notFound"), .string("/no/such/clip.mp4"), .string("string")])
    }
}
