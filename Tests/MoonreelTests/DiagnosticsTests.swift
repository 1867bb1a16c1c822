import Foundation
import MoonreelEngine
import MoonreelBindings
import Testing
import TestSupport

/// Issue 40 §1: one mechanism for everything done other than as asked — a typed diagnostic
/// with a kind, a level and the script line — reaching the terminal (each once), JSON
/// events, Lua, a batch's report and the Swift host; `--strict` makes warnings errors
/// before anything is committed.
@Suite struct DiagnosticsTests {
    /// An export whose render size 4:2:0 video cannot take, run twice from one line; with
    /// `strict` as the second argument, the session is strict.
    static let oddSize = """
        local asset = av.asset(arg[1])
        local comp = av.composition()
        comp:insertTimeRange(av.range(0, 0.5), asset, 0)
        local vc = av.videoComposition(comp)
        vc.renderSize = { 161, 121 }
        for i = 1, 2 do
          local session = av.exportSession(comp, "LowQuality")
          session.outputURL = arg[2] .. i .. ".mp4"
          session.videoComposition = vc
          session.strict = arg[3] == "strict"
          local ok, how = session:export()
          for _, d in ipairs(session.diagnostics) do print(ok, how, d.kind, d.level, d.message) end
        end
        print("dryRun", av.dryRun)
        """

    @Test func aRoundedSizeIsOneWarningWithItsLineCountedNotRepeated() throws {
        let clip = try Fixtures.clip(seconds: 1)
        let output = Fixtures.scratchPath("odd")
        let result = try Moonreel.runScript(Self.oddSize, name: "odd.lua", arguments: [clip, output])
        #expect(result.status == 0, "\(result.err)")
        let warnings = result.errorLines.filter { $0.hasPrefix("moonreel: warning: ") }
        #expect(warnings.count == 1, "said once: \(result.err)")
        #expect(warnings.first?.hasSuffix("odd.lua:11: renderSize 161×121 is not made of even whole numbers, which 4:2:0 video needs; the output is 160×120 [sizeRounded]") == true,
                "\(result.err)")
        #expect(result.err.contains("moonreel: warning [sizeRounded] at ") && result.err.contains("odd.lua:11 came 2 times in all"), "\(result.err)")
        #expect(result.out.contains("true\tnil\tsizeRounded\twarning\trenderSize 161×121"), "Lua sees it: \(result.out)")
        #expect(result.out.contains("dryRun\tfalse"))
        #expect(try Tool.ffprobe(output + "1.mp4").streams.first { $0.codec_type == "video" }?.width == 160)
    }

    /// Done means right: a `timeRange` past the composition's end was cut to it in silence
    /// (10–30 s of a 3 s composition wrote 2 s). It is a warning at the export's line, and
    /// `strict` writes nothing; a range inside says nothing.
    @Test func aTimeRangePastTheEndIsAWarning() throws {
        let clip = try Fixtures.clip(seconds: 3)
        let output = Fixtures.scratchPath("ranged")
        let script = """
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 3), av.asset(arg[1]), 0)
            for i, range in ipairs({ av.range(1, 30), av.range(1, 1) }) do
              local session = av.exportSession(comp, "LowQuality")
              session.outputURL, session.timeRange, session.strict = arg[2] .. i .. ".mp4", range, arg[3] == "strict"
              local ok, how = session:export()
              print(i, ok, #session.diagnostics)
            end
            """
        let result = try Moonreel.runScript(script, name: "ranged.lua", arguments: [clip, output])
        #expect(result.status == 0, "\(result.err)")
        let warnings = result.errorLines.filter { $0.contains("[rangeClipped]") }
        #expect(warnings.count == 1 && warnings.first?.contains("ranged.lua:6: timeRange 1–31 s reaches past the composition (0–3 s): 1–3 s is written, 2 s") == true,
                "\(result.err)")
        #expect(result.out.contains("1\ttrue\t1") && result.out.contains("2\ttrue\t0"), "\(result.out)")
        #expect(abs((Double(try Tool.ffprobe(output + "1.mp4").format.duration ?? "") ?? 0) - 2) < 0.08)
        let strict = try Moonreel.runScript(script, name: "ranged.lua", arguments: [clip, output + "-strict", "strict"])
        #expect(strict.out.contains("1\tnil\t1"), "no output under strict: \(strict.out) \(strict.err)")
        #expect(!FileManager.default.fileExists(atPath: output + "-strict1.mp4"))
    }

    /// Done means right: two input parameters for one track (a volume on one, ducking on
    /// another) — only the last counts, and the other's volume was lost in silence. It is a
    /// warning at the export's line; the sound is the last one's (full level, not 0.1).
    @Test func twoInputParametersForOneTrackAreAWarning() throws {
        let clip = try Fixtures.clip(seconds: 2)
        let output = Fixtures.scratchPath("shared-track.m4a")
        let result = try Moonreel.runScript("""
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 2), av.asset(arg[1]), 0)
            local track = comp:tracksWithMediaType("audio")[1]
            local quiet, other = av.audioMixInputParameters(track), av.audioMixInputParameters(track)
            quiet:setVolume(0.1, 0)
            local session = av.exportSession(comp, "AppleM4A")
            session.outputURL, session.audioMix = arg[2], av.audioMix{ inputParameters = { quiet, other } }
            assert(session:export())
            """, name: "mix.lua", arguments: [clip, output])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("mix.lua:8: audioMix's input parameters 1, 2 all name audio track") && result.err.contains("only 2 is used")
                && result.err.contains("[optionIgnored]"), "\(result.err)")
        let (mixed, source) = (try Tool.audioSamples(output), try Tool.audioSamples(clip))
        #expect(abs(mixed.level(from: 24000, to: 72000) / source.level(from: 24000, to: 72000) - 1) < 0.1, "the last parameters' full level")
    }

    /// Done means right: a video track added after `av.videoComposition(comp)` made its
    /// instructions is drawn by none of them, so its B-roll never showed, and nothing said so.
    /// It is a warning naming the track and its time; the frame there is the first track's
    /// (red, not the blue B-roll), as the warning says.
    @Test func aTrackNoInstructionDrawsIsAWarning() throws {
        let (red, blue) = (try Fixtures.solid("red", seconds: 2), try Fixtures.solid("blue", seconds: 2))
        let output = Fixtures.scratchPath("undrawn.mp4")
        let result = try Moonreel.runScript("""
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 2), av.asset(arg[1]), 0)
            local vc = av.videoComposition(comp)
            local broll = av.asset(arg[2])
            comp:addMutableTrack("video"):insertTimeRange(av.range(0, 1), broll:tracksWithMediaType("video")[1], 0.5)
            local session = av.exportSession(comp, "LowQuality")
            session.outputURL, session.videoComposition = arg[3], vc
            assert(session:export())
            """, name: "broll.lua", arguments: [red, blue, output])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("broll.lua:8: video track 3 has media at [0.5…1.5) s that no layer instruction draws (videoComposition.instructions[1]): it is not shown")
                && result.err.contains("[trackNotDrawn]"), "\(result.err)")
        let frame = try Tool.rgbFrame(output, at: 1.0).mean(x: 100, y: 80, width: 100, height: 80)
        #expect(frame.r > 150 && frame.b < 80, "the red first track: \(frame)")
    }

    /// Done means right: `av.join` plays an item's first audio track only, so a recording
    /// with a second microphone (OBS, a camera with two inputs) lost it in silence. It is a
    /// `soundLeftOut` warning naming the tracks; the sound is the first track's (440 Hz, no 880).
    @Test func aSecondAudioTrackAJoinDoesNotPlayIsAWarning() throws {
        let twoMicrophones = try Fixtures.cached("two-microphones.mp4") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=2",
                             "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
                             "-f", "lavfi", "-i", "sine=frequency=880:sample_rate=48000:duration=2",
                             "-map", "0", "-map", "1", "-map", "2", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
                             "-c:a", "aac", "-shortest", path])
        }
        let output = Fixtures.scratchPath("joined-microphones.m4a")
        let result = try Moonreel.runScript("""
            local comp, vc, mix = av.join({ av.asset(arg[1]) })
            local session = av.exportSession(comp, "AppleM4A")
            session.outputURL, session.audioMix = arg[2], mix
            assert(session:export())
            av.pictureInPicture(comp, vc, av.asset(arg[1]))
            """, name: "join.lua", arguments: [twoMicrophones, output])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("join.lua:5: the inset \"\(twoMicrophones)\" has 2 audio tracks and only its first is played: track 3 is not heard"), "\(result.err)")
        #expect(result.err.contains("join.lua:1: item 1 (\"\(twoMicrophones)\") has 2 audio tracks and only its first is played: track 3 is not heard")
                && result.err.contains("[soundLeftOut]"), "\(result.err)")
        let sound = try Tool.audioSamples(output)
        #expect(sound.toneAmplitude(440, from: 24000, to: 72000, rate: 48000) > 0.1 && sound.toneAmplitude(880, from: 24000, to: 72000, rate: 48000) < 0.01)
    }

    /// Done means right: text laid out past the frame (lyrics made for a landscape
    /// renderSize over a portrait video) lost its words at the edge, and nothing said so:
    /// the text fitted its own box. It is a `layerOffFrame` warning naming the layer and where
    /// its text lies; a text layer inside the frame, and one that slides in and holds there, say nothing. The
    /// frame shows the cut: the text's ink reaches the right edge.
    @Test func textLaidOutPastTheFrameIsAWarning() throws {
        let clip = try Fixtures.solid("black", seconds: 1, size: "360x640", tone: nil)
        let output = Fixtures.scratchPath("past-the-edge.mp4")
        let result = try Self.exportOverlay(over: clip, to: output, size: (360, 640), name: "edge.lua", layers: """
            parent:addSublayer(av.textLayer{ string = "Across the summer night", fontSize = 40, frame = { 0, 300, 640, 60 }, alignmentMode = "center", name = "lyric" })
            parent:addSublayer(av.textLayer{ string = "Inside", fontSize = 40, frame = { 0, 100, 360, 60 }, alignmentMode = "center" })
            local sliding = av.textLayer{ string = "Sliding in", fontSize = 40, frame = { 400, 500, 300, 60 } }
            sliding:addAnimation(av.basicAnimation{ keyPath = "position", fromValue = { 550, 530 }, toValue = { 150, 530 }, duration = 0.5,
                                                    fillMode = "forwards", isRemovedOnCompletion = false }, "in")
            parent:addSublayer(sliding)
            """)
        #expect(result.status == 0, "\(result.err)")
        let warnings = result.errorLines.filter { $0.contains("[layerOffFrame]") }
        #expect(warnings.count == 1 && warnings[0].contains("edge.lua:6: text layer \"lyric\" lays out \"Across the summer night\" over x ")
                && warnings[0].contains("past the right edge of the 360×640 frame"), "\(result.err)")
        let frame = try Tool.rgbFrame(output, at: 0.5)
        let edge = (0..<640).map { frame.pixel(358, $0) }.filter { $0.r > 128 }.count
        #expect(edge > 0, "the text's ink reaches the frame's right edge")
    }

    /// A logo placed for 1920×1080 (bottom-right, 40 px in) over a 1280×720 export lies past
    /// the right edge: most of it is not in the video, and it was drawn without a word. A
    /// picture larger than the frame (a Ken Burns photo), one inside it and one inside a layer
    /// scaled to half (placed past the frame in that layer's own coordinates) say nothing.
    @Test func aPicturePlacedPastTheFrameIsAWarning() throws {
        let clip = try Fixtures.solid("black", seconds: 1, size: "1280x720", tone: nil)
        let logo = Fixtures.scratchPath("red-logo.png"), output = Fixtures.scratchPath("logo-past-the-edge.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=200x100", "-frames:v", "1", logo])
        let result = try Self.exportOverlay(over: clip, to: output, size: (1280, 720), name: "logo.lua", arguments: [logo], layers: """
            local logo = av.image(arg[3])
            parent:addSublayer(av.layer{ contents = logo, frame = { 1920 - 240, 40, 200, 100 }, name = "logo" })
            parent:addSublayer(av.layer{ contents = logo, frame = { 40, 40, 200, 100 } })
            parent:addSublayer(av.layer{ contents = logo, frame = { -200, -100, 1680, 920 }, opacity = 0.01 })
            local half = av.layer{ bounds = { 0, 0, 2560, 1440 }, position = { 640, 360 }, transform = av.transform():scaled(0.5) }
            half:addSublayer(av.layer{ contents = logo, frame = { 2000, 1200, 200, 100 } }) parent:addSublayer(half)
            """)
        #expect(result.status == 0, "\(result.err)")
        let warnings = result.errorLines.filter { $0.contains("[layerOffFrame]") }
        #expect(warnings.count == 1 && warnings[0].contains("logo.lua:7: picture layer \"logo\" (\"red-logo.png\") lies over x 1680…1880, y 40…140, past the right edge of the 1280×720 frame: none of it is in the video"),
                "\(result.err)")
        // The oracle: the frame's right edge has no red, the logo placed inside does.
        let frame = try Tool.rgbFrame(output, at: 0.5)
        #expect((0..<720).allSatisfy { frame.pixel(1278, $0).r < 100 }, "nothing of the logo at the right edge")
        #expect(frame.pixel(140, 720 - 90).r > 200, "the logo inside the frame is drawn")
        #expect(frame.pixel(1050, 720 - 625).r > 200, "so is the one inside a layer drawn at half size, not warned of")
    }

    /// A diagnostic about a layer names the script line that made it, and for a layer an
    /// effect made, the line that called the effect — not the export's line (all 500 videos
    /// of a batch share that one) nor a line inside a stranger's effect.
    @Test func aLayersDiagnosticNamesTheLineThatMadeIt() throws {
        let clip = try Fixtures.solid("black", seconds: 1, size: "640x360", tone: nil)
        let output = Fixtures.scratchPath("made-at.mp4")
        let effects = (output as NSString).deletingLastPathComponent + "/effects"
        try FileManager.default.createDirectory(atPath: effects, withIntermediateDirectories: true)
        try """
            return { name = "banner", version = "1.0.0",
              parameters = { { name = "text", type = "string", required = true } },
              apply = function(p)
                return av.textLayer{ string = p.text, fontSize = 40, frame = { 500, 100, 600, 60 } }
              end }
            """.write(toFile: effects + "/banner.lua", atomically: true, encoding: .utf8)
        let result = try Self.exportOverlay(over: clip, to: output, size: (640, 360), name: effects + "/../made-at.lua", layers: """
            local banner = require "effects.banner"
            parent:addSublayer(banner{ text = "A banner made for 1920" })
            parent:addSublayer(av.textLayer{ string = "Mine, too long for its box", fontSize = 40, frame = { 20, 20, 60, 50 }, maxLines = 1 })
            """)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.errorLines.contains { $0.hasSuffix("[layerOffFrame]") && $0.contains("made-at.lua:7: a text layer lays out \"A banner made for 1920\"") },
                "\(result.err)")
        #expect(result.errorLines.contains { $0.hasSuffix("[textOverflow]") && $0.contains("made-at.lua:8: a text layer at 20, 20") }, "\(result.err)")
    }

    /// A paced keyframe animation places its keys by the distance between the values (as Core
    /// Animation's): keyTimes given were not used, and nothing said so. The same animation in
    /// linear mode keeps them and says nothing.
    @Test func keyTimesAPacedAnimationDoesNotUseAreAWarning() throws {
        let clip = try Fixtures.solid("black", seconds: 4, size: "320x240", tone: nil)
        for mode in ["paced", "linear"] {
            let output = Fixtures.scratchPath("\(mode).mp4")
            let result = try Self.exportOverlay(over: clip, to: output, size: (320, 240), name: "\(mode).lua", layers: """
                local box = av.layer{ frame = { 0, 0, 320, 240 }, backgroundColor = "white", opacity = 0 }
                box:addAnimation(av.keyframeAnimation{ keyPath = "opacity", values = { 0, 0.5, 1 }, keyTimes = { 0, 0.9, 1 }, calculationMode = "\(mode)", duration = 2 }, "o")
                parent:addSublayer(box)
                """)
            #expect(result.status == 0, "\(result.err)")
            let said = result.errorLines.filter { $0.hasSuffix("[animationIgnored]") }
            // Half-way through the second, paced is at 0.5 (by distance), linear at about 0.28.
            let grey = try Tool.rgbFrame(output, at: 0.5).mean(x: 100, y: 80, width: 120, height: 80).g
            if mode == "paced" {
                #expect(said.count == 1 && said[0].contains("\(mode).lua:7: the opacity animation's calculationMode \"paced\" places its keys by the distance between the values: the keyTimes given is not used"),
                        "\(result.err)")
                #expect(abs(grey - 64) < 10, "paced: \(grey)")
            } else {
                #expect(said.isEmpty, "\(result.err)")
                #expect(abs(grey - 36) < 10, "linear: \(grey)")
            }
        }
    }

    /// A size preset (AVFoundation's 1920x1080) fits a picture into its box but never scales
    /// it up: a 320×240 clip asked for at 1920x1080 came out 320×240 without a word. Now a
    /// note; a quality preset, whose box is only a most, says nothing.
    @Test func aSizePresetLargerThanThePictureIsANote() throws {
        let clip = try Fixtures.clip(seconds: 2)
        for preset in ["1920x1080", "MediumQuality"] {
            let output = Fixtures.scratchPath("\(preset).mp4")
            let result = try Moonreel.runScript(Moonreel.cutScript(start: 0, duration: 1, preset: preset), name: "up.lua", arguments: [clip, output])
            #expect(result.status == 0, "\(result.err)")
            let video = try #require(try Tool.ffprobe(output).video)
            #expect(video.width == 320 && video.height == 240)
            let said = result.errorLines.filter { $0.hasSuffix("[sizeRounded]") }
            if preset == "1920x1080" {
                #expect(said.count == 1 && said[0].contains("note: ") && said[0].contains("up.lua:6: the video's size 320×240 is smaller than the preset's 1920×1080 box and is not scaled up: the output is 320×240"),
                        "\(result.err)")
            } else {
                #expect(said.isEmpty, "\(result.err)")
            }
        }
    }

    /// A layer takes a copy of an animation (Core Animation's addAnimation): a change made
    /// after it (a port setting duration last) never reaches the video, in silence. Now a
    /// warning at the export; a loop that changes one animation and adds it again each time
    /// (the usual lyric code) says nothing.
    @Test func anAnimationChangedAfterItWasAddedIsAWarning() throws {
        let clip = try Fixtures.solid("black", seconds: 2, size: "320x240", tone: nil)
        let output = Fixtures.scratchPath("late-change.mp4")
        let result = try Self.exportOverlay(over: clip, to: output, size: (320, 240), name: "late.lua", layers: """
            local late = av.layer{ frame = { 0, 0, 160, 240 }, backgroundColor = "white", opacity = 0 }
            local fade = av.basicAnimation{ keyPath = "opacity", fromValue = 1, toValue = 1, duration = 0.2 }
            late:addAnimation(fade, "show") fade.duration = 5 parent:addSublayer(late)
            local reused = av.basicAnimation{ keyPath = "backgroundColor", fromValue = "red", toValue = "red", duration = 0.2 }
            for i = 1, 2 do local box = av.layer{ frame = { 160 + 80 * (i - 1), 0, 80, 240 } } reused.beginTime = 0.5 * (i - 1) box:addAnimation(reused, "c") parent:addSublayer(box) end
            """)
        #expect(result.status == 0, "\(result.err)")
        let said = result.errorLines.filter { $0.hasSuffix("[optionIgnored]") }
        #expect(said.count == 1 && said[0].contains("late.lua:14: the opacity animation was changed after a layer took a copy of it (addAnimation); the copy is unchanged"),
                "\(result.err)")
        // The oracle: at 0.5 s the copy (0.2 s long) is over, so the left half is black.
        #expect(try Tool.rgbFrame(output, at: 0.5).mean(x: 20, y: 20, width: 100, height: 200).g < 30)
    }

    /// `layer.opacity = 2` is refused, but an animation to 4 (or a filter amount stepped by
    /// byValue past its range) was taken and drawn clamped: a triangle became a plateau. Each
    /// is refused now, naming the value; a byValue that steps down stays allowed.
    @Test(arguments: [
        ("av.keyframeAnimation{ keyPath = \"opacity\", values = { 0, 4, 0 }, duration = 4 }", "value 2 of 3 is 4, but opacity takes 0…1"),
        ("av.basicAnimation{ keyPath = \"opacity\", fromValue = 0.5, byValue = 1, duration = 1 }", "toValue (fromValue + byValue) is 1.5, but opacity takes 0…1"),
        ("av.basicAnimation{ keyPath = \"cornerRadius\", toValue = -3, duration = 1 }", "toValue is -3, but cornerRadius takes 0 or more"),
        ("av.basicAnimation{ keyPath = \"filters.gr.amount\", fromValue = 0, byValue = 50, duration = 4 }", "grain amount must be in 0…1, got 50"),
    ])
    func animatedValuesPastTheirRangeAreRefused(statement: String, message: String) throws {
        let result = try Moonreel.runScript("""
            local layer = av.layer{ frame = { 0, 0, 10, 10 } }
            layer.filters = { av.filter("grain", { amount = 0.1, name = "gr" }) }
            local a = \(statement) if a then layer:addAnimation(a, "a") end
            """, name: "range.lua")
        #expect(result.status != 0 && result.err.contains(message) && result.err.contains("range.lua:3"), "\(result.err)")
        let down = try Moonreel.runScript("av.layer{}:addAnimation(av.basicAnimation{ keyPath = \"opacity\", fromValue = 1, byValue = -0.5, duration = 1 }, \"a\")", name: "down.lua")
        #expect(down.status == 0, "\(down.err)")
    }

    /// An ease that overshoots (CSS's "back" curves, y control points past 0…1) took opacity
    /// past 1 and a cubic curve through a cornerRadius's keys below 0, and both were drawn
    /// at the bound without a word. Each is an `animationIgnored` warning at its
    /// `addAnimation` line; eases and curves that stay inside say nothing, and so does a
    /// cubic fade whose hold at full opacity bulges past 1 (drawn at 1, it is the hold meant).
    @Test func anAnimationThatOvershootsItsRangeIsAWarning() throws {
        let clip = try Fixtures.solid("black", seconds: 2, size: "320x240", tone: nil)
        let output = Fixtures.scratchPath("overshoot.mp4")
        let result = try Self.exportOverlay(over: clip, to: output, size: (320, 240), name: "back.lua", layers: """
            local box = av.layer{ frame = { 0, 0, 160, 240 }, backgroundColor = "white", filters = { av.filter("grain", { amount = 0, name = "gr" }) } }
            box:addAnimation(av.basicAnimation{ keyPath = "opacity", fromValue = 0, toValue = 1, duration = 1, timingFunction = { 0.34, 1.56, 0.64, 1 } }, "in")
            box:addAnimation(av.keyframeAnimation{ keyPath = "cornerRadius", values = { 10, 0.5, 0.5, 10 }, calculationMode = "cubic", duration = 1 }, "r")
            box:addAnimation(av.keyframeAnimation{ keyPath = "filters.gr.amount", values = { 0, 0.5 }, timingFunctions = { { 0.6, -0.28, 0.74, 0.05 } }, duration = 1 }, "g")
            av.layer{}:addAnimation(av.keyframeAnimation{ keyPath = "opacity", values = { 0, 0.5, 1 }, calculationMode = "cubic", duration = 1 }, "fine")
            av.layer{}:addAnimation(av.keyframeAnimation{ keyPath = "opacity", values = { 0, 1, 1, 0 }, calculationMode = "cubic", duration = 1 }, "hold")
            box:addAnimation(av.basicAnimation{ keyPath = "borderWidth", fromValue = 0, toValue = 4, duration = 1, timingFunction = "easeInEaseOut" }, "fine2")
            parent:addSublayer(box)
            """)
        #expect(result.status == 0, "\(result.err)")
        let said = result.errorLines.filter { $0.hasSuffix("[animationIgnored]") }
        #expect(said.count == 3, "\(result.err)")
        #expect(said.contains { $0.contains("back.lua:7: the opacity animation's easing overshoots to 1.098, past what opacity takes (0…1): it is drawn at 1 there") }, "\(result.err)")
        #expect(said.contains { $0.contains("back.lua:8: the cornerRadius animation's cubic curve through its values overshoots to -0.687, past what cornerRadius takes (0 or more)") }, "\(result.err)")
        #expect(said.contains { $0.contains("back.lua:9: the filters.gr.amount animation's easing overshoots to -0.048, past what filters.gr.amount takes (0…1): it is drawn at 0 there") }, "\(result.err)")
        // The oracle: at 0.5 s the ease is at its top (opacity 1.098), drawn fully white.
        #expect(try Tool.rgbFrame(output, at: 0.5).mean(x: 20, y: 20, width: 100, height: 200).g > 245)
    }

    /// A moving layer was not judged at all, so a lower third made for 1920×1080 over a
    /// portrait phone video slid in and held with its words cut at the right edge, without a
    /// word. Where a moving layer comes to rest while shown is judged now: the lower third
    /// warns for its name and role at the effect's line, and so does a slide-in whose model
    /// place lies off the frame (Core Animation's snap back: when the animation is removed,
    /// the text jumps there). The frames show both.
    @Test func aLayerThatComesToRestPastTheFrameIsAWarning() throws {
        let clip = try Fixtures.solid("black", seconds: 2, size: "360x640", tone: nil)
        let output = Fixtures.scratchPath("rest.mp4")
        let result = try Self.exportOverlay(over: clip, to: output, size: (360, 640), name: "rest.lua", layers: """
            local lowerThird = require "effects.lowerThird"
            parent:addSublayer(lowerThird{ renderSize = { 1920, 1080 }, name = "Ana Ribeiro", role = "Director of Photography", start = 0, duration = 0.9, slide = 0.2 })
            local snap = av.textLayer{ string = "Snaps back", fontSize = 40, frame = { 400, 500, 300, 60 } }
            snap:addAnimation(av.basicAnimation{ keyPath = "position", fromValue = { 150, 530 }, toValue = { 160, 530 }, duration = 0.4 }, "in")
            parent:addSublayer(snap)
            """)
        #expect(result.status == 0, "\(result.err)")
        let warnings = result.errorLines.filter { $0.contains("[layerOffFrame]") }
        #expect(warnings.count == 3, "\(result.err)")
        #expect(warnings.contains { $0.contains("rest.lua:7: text layer \"lower third name\" rests with \"Ana Ribeiro\" over x ") && $0.contains("past the right edge of the 360×640 frame") }, "\(result.err)")
        #expect(warnings.contains { $0.contains("rest.lua:7: text layer \"lower third role\" rests with \"Director of Photography\"") }, "\(result.err)")
        #expect(warnings.contains { $0.contains("rest.lua:8: a text layer rests with \"Snaps back\" over x 400…") }, "\(result.err)")
        // The oracles: the lower third's bar runs into the right edge while it holds; the
        // snapping text is drawn while its animation runs and is gone after.
        let holding = try Tool.rgbFrame(output, at: 0.6)
        let barAtTheEdge = (0..<640).map { holding.pixel(358, $0) }.filter { $0.b > 60 && $0.b > $0.r + 30 }.count
        #expect(barAtTheEdge > 20, "the bar reaches the right edge in \(barAtTheEdge) rows")
        let ink = { (frame: Image) in (0..<140).flatMap { y in (0..<360).map { frame.pixel($0, y) } }.filter { $0.g > 128 }.count }
        #expect(try ink(Tool.rgbFrame(output, at: 0.2)) > 50 && ink(Tool.rgbFrame(output, at: 0.6)) == 0)
    }

    /// An anamorphic source (PAL DV stored 720×576, shown 16:9 through a sample aspect ratio
    /// of 64:45) was drawn with square pixels, squeezed to 5:4, without a word. Where
    /// Moonreel lays the picture out (an export without a video composition, `av.join`,
    /// `av.videoComposition(comp)`), it is now shown at its shape, 1024×576, as the ffmpeg
    /// CLI's own `scale=iw*sar:ih` shows it; a script's own layer instruction that draws it
    /// with square pixels is an optionIgnored warning naming the file and the widths.
    @Test func nonSquarePixelsAreShownAtTheirShapeOrSaid() throws {
        let anamorphic = try Fixtures.cached("anamorphic-720x576.mp4") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=720x576:rate=25:duration=1", "-vf", "setsar=64/45",
                             "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", path])
        }
        let reference = Fixtures.scratchPath("reference.mp4")
        try Tool.ffmpeg(["-i", anamorphic, "-vf", "scale=1024:576,setsar=1", "-c:v", "libx264", "-crf", "10", "-preset", "ultrafast", reference])
        for (name, script) in [("plain", Moonreel.exportWholeAssetScript),
                               ("join", "local comp, vc = av.join({ av.asset(arg[1]) })\nlocal s = av.exportSession(comp, arg[3])\ns.outputURL, s.videoComposition = arg[2], vc\nassert(s:export())")] {
            let output = Fixtures.scratchPath("\(name).mp4")
            let result = try Moonreel.runScript(script, name: "sar.lua", arguments: [anamorphic, output, "HighestQuality"])
            #expect(result.status == 0 && !result.err.contains("[optionIgnored]"), "\(name): \(result.err)")
            #expect(try Tool.videoSize(output) == (1024, 576), "\(name)")
            #expect(try Tool.psnr(output, against: reference) > 35, "\(name): drawn at its shape")
        }
        // A layer instruction of the script's own, at the stored size: squeezed, and said.
        let own = """
            local a = av.asset(arg[1])
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, a.duration), a, 0)
            local vc = av.videoComposition{ renderSize = {720, 576}, frameDuration = av.time(1, 25) }
            local li = av.layerInstruction(comp:tracksWithMediaType("video")[1])
            li:setTransform(av.transform():scaled(tonumber(arg[3]), 1), 0)
            vc.instructions = { av.videoCompositionInstruction{ timeRange = av.range(0, comp.duration), layerInstructions = { li } } }
            local s = av.exportSession(comp, "HighestQuality")
            s.outputURL, s.videoComposition = arg[2], vc
            assert(s:export())
            """
        let squeezed = try Moonreel.runScript(own, name: "sar.lua", arguments: [anamorphic, Fixtures.scratchPath("squeezed.mp4"), "1"])
        #expect(squeezed.status == 0 && squeezed.err.contains("sar.lua:10: \"anamorphic-720x576.mp4\" stores pixels 1.42 times as wide as high: it is drawn with square pixels, 720 px wide where it shows 1024, squeezed")
                && squeezed.err.contains("[optionIgnored]"), "\(squeezed.err)")
        // The remedy followed (stretched by its layer instruction), nothing is said.
        let stretched = try Moonreel.runScript(own, name: "sar.lua", arguments: [anamorphic, Fixtures.scratchPath("stretched.mp4"), "\(1024.0 / 720)"])
        #expect(stretched.status == 0 && !stretched.err.contains("[optionIgnored]"), "\(stretched.err)")
        let square = try Moonreel.runScript(Moonreel.exportWholeAssetScript, name: "sar.lua", arguments: [try Fixtures.clip(seconds: 1), Fixtures.scratchPath("square.mp4"), "HighestQuality"])
        #expect(square.status == 0 && !square.err.contains("[optionIgnored]"), "\(square.err)")
    }

    /// The other common pixel shapes (NTSC 16:9 at 32:27, rounded to an even 854; HDV at 4:3)
    /// with `av.videoComposition(comp, {fit=})` and picture in picture; a photo whose JPEG
    /// density says 2:1 is not stretched (dots per inch are no pixel shape); the script, probe
    /// and a timeline written from the edit agree, and the timeline does not call the
    /// stretched clip moved.
    @Test func pixelShapesAgreeEverywhere() throws {
        let make = { (name: String, size: String, sar: String) in
            try Fixtures.cached(name) { path in
                try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=\(size):rate=25:duration=0.4", "-vf", "setsar=\(sar)",
                                 "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", path])
            }
        }
        let ntsc = try make("anamorphic-720x480.mp4", "720x480", "32/27"), hdv = try make("anamorphic-1440x1080.mp4", "1440x1080", "4/3")
        let photo = Fixtures.scratchPath("dense.jpg")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240", "-frames:v", "1", "-vf", "setsar=2", photo])
        let script = """
            local a = av.asset(arg[1])
            local track = a:tracksWithMediaType("video")[1]
            print(("%.4f %dx%d"):format(track.pixelAspectRatio, track.shownSize.width, track.shownSize.height))
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, math.min(a.duration, 0.4)), a, 0)
            local vc = av.videoComposition(comp, arg[3] ~= "" and { fit = "fit", renderSize = { 1280, 720 } } or nil)
            if arg[4] then av.pictureInPicture(comp, vc, av.asset(arg[4]), { scale = 0.25 }) end
            av.writeTimeline(comp, vc, nil, arg[2] .. ".otio")
            local s = av.exportSession(comp, "HighestQuality")
            s.outputURL, s.videoComposition = arg[2], vc
            assert(s:export())
            """
        for (source, fit, pip, printed, size) in [(ntsc, "", nil as String?, "1.1852 854x480", (854, 480)), (hdv, "fit", nil, "1.3333 1920x1080", (1280, 720)),
                                                  (photo, "", nil, "2.0000 320x240", (320, 240)), (try Fixtures.clip(seconds: 1), "fit", ntsc, "1.0000 320x240", (1280, 720))] {
            let output = Fixtures.scratchPath("shape.mp4")
            let result = try Moonreel.runScript(script, name: "shape.lua", arguments: [source, output, fit] + (pip.map { [$0] } ?? []))
            #expect(result.status == 0 && result.out.hasPrefix(printed), "\(source): \(result.out) \(result.err)")
            // (A picture in picture is a placement timelines leave out, and say so.)
            #expect(!result.err.contains("[optionIgnored]") && (pip != nil || !result.err.contains("[notInTimeline]")) && !result.err.contains("[layerOffFrame]"),
                    "\(source): \(result.err)")
            #expect(try Tool.videoSize(output) == size, "\(source)")
        }
        let probe = try Moonreel.run(["probe", ntsc])
        #expect(probe.out.contains("720×480 yuv420p 25.0 fps, shown 854×480 (pixels 1.185 times as wide as high)"), "\(probe.out)")
    }

    /// `scaleTimeRange` and `removeTimeRange` with a range reaching past the composition's end
    /// act on the part inside only, and said nothing: scaling 2–12 s of a 3 s clip to 20 s
    /// gave 4 s, removing 4–5 s removed nothing. Each says what it did, at its line; ffprobe
    /// reads the durations said.
    @Test func anEditRangePastTheEndSaysWhatItDid() throws {
        let (result, output) = try Self.editAThreeSecondClip(name: "edit.lua", """
            comp:scaleTimeRange(av.range(2, 10), 20)
            comp:removeTimeRange(av.range(4, 1))
            comp:removeTimeRange(av.range(3, 5))
            """)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("edit.lua:4: scaleTimeRange's range 2–12 s reaches past the end (3 s): 2–3 s is scaled at the same rate [rangeClipped]"), "\(result.err)")
        #expect(result.err.contains("edit.lua:5: removeTimeRange's range 4–5 s lies past the end (4 s): nothing is removed [nothingRemoved]"), "\(result.err)")
        #expect(result.err.contains("edit.lua:6: removeTimeRange's range 3–8 s reaches past the end (4 s): 3–4 s is removed [rangeClipped]"), "\(result.err)")
        #expect(abs(try Tool.ffprobe(output).duration - 3) < 0.1)
    }

    /// A ramp reaching past the composition's end was cut off there in silence: a volume
    /// ramp from 1 to 0 over 4–14 s of a 6 s composition ended the sound at 0.8, abruptly,
    /// where a fade out was asked. Volume and opacity ramps past the end are each a
    /// rangeClipped warning at the export saying where they stop; the last 100 ms of sound
    /// and the last frame (white at 0.8 over black) are what they say.
    @Test func aRampPastTheEndSaysWhereItStops() throws {
        let (result, output) = try Self.editAThreeSecondClip(name: "fade.lua", """
            local p = av.audioMixInputParameters(comp:tracksWithMediaType("audio")[1])
            p:setVolumeRamp(1, 0, av.range(1, 10))
            local vc = av.videoComposition(comp)
            vc.instructions[1].layerInstructions[1]:setOpacityRamp(1, 0, av.range(1, 10))
            """, session: "s.audioMix, s.videoComposition = av.audioMix{ inputParameters = { p } }, vc")
        #expect(result.status == 0, "\(result.err)")
        let said = result.errorLines.filter { $0.hasSuffix("[rangeClipped]") }
        #expect(said.count == 2 && said[0].contains("fade.lua:11: the volume ramp over 1–11 s of audio track 2 reaches past the end (3 s): the output ends 20 % of the way through it, at volume 0.8, not 0; end the ramp by 3 s")
                && said[1].contains("the opacity ramp over 1–11 s of video track 1 reaches past the end (3 s): the output ends 20 % of the way through it, at opacity 0.8, not 0"), "\(result.err)")
        let sound = try Tool.audioSamples(output)
        let full = sound.level(from: 24000, to: 28800), last = sound.level(from: 139200, to: 144000)
        #expect(abs(last / full - 0.805) < 0.03, "the last 100 ms at \(last / full) of full")
        let white = try Tool.rgbFrame(output, at: 2.95).pixel(160, 120).r
        #expect(abs(white - 205) < 8, "the last frame at \(white)")
    }

    /// Two ramps of one property (a filter parameter's too) that overlap: the later start
    /// took over and the earlier stopped short, so the level jumped (a fade-in cut at half
    /// volume by a fade-out), in silence. Each overlap is an animationIgnored warning at the later call; ramps that
    /// meet end to start say nothing. The sound shows the jump the warning names.
    @Test func overlappingRampsAreAWarning() throws {
        let (result, output) = try Self.editAThreeSecondClip(name: "ramps.lua", """
            local p = av.audioMixInputParameters(comp:tracksWithMediaType("audio")[1])
            p:setVolumeRamp(0, 1, av.range(0, 2))
            p:setVolumeRamp(1, 0, av.range(1, 2))
            local vc = av.videoComposition(comp)
            local li = vc.instructions[1].layerInstructions[1]
            li:setOpacityRamp(1, 0.5, av.range(0, 1))
            li:setOpacityRamp(0.5, 1, av.range(1, 1))
            li:setOpacity(0.2, 2.5)
            vc.filters = { av.filter("grain", { amount = 0, name = "gr" }) }
            vc:setFilterRamp("gr", "amount", 0, 0.5, av.range(0, 2))
            vc:setFilterValue("gr", "amount", 0.1, 1)
            """, session: "s.audioMix, s.videoComposition = av.audioMix{ inputParameters = { p } }, vc")
        #expect(result.status == 0, "\(result.err)")
        let said = result.errorLines.filter { $0.hasSuffix("[animationIgnored]") }
        #expect(said.count == 2 && said[0].contains("ramps.lua:6: the volume ramp over 1–3 s overlaps the volume ramp over 0–2 s: from 1 s the later one holds, so the volume ramp over 0–2 s stops short and the volume jumps there"), "\(result.err)")
        #expect(said.last?.contains("ramps.lua:14: the gr.amount set at 1 s overlaps the gr.amount ramp over 0–2 s") == true, "\(result.err)")
        // The jump: half volume just before 1 s (the fade-in cut at 0.5), full just after.
        let sound = try Tool.audioSamples(output)
        let before = sound.toneAmplitude(440, from: 43200, to: 47520, rate: 48000), after = sound.toneAmplitude(440, from: 48480, to: 52800, rate: 48000)
        #expect(after > 1.6 * before, "\(before) then \(after)")
    }

    /// An animated PNG as a layer's contents drew its first frame for the whole video, in
    /// silence, and an animated WebP failed at the export with "not an image". The PNG is an
    /// optionIgnored warning at its av.image line (the frame drawn stays the first: red at
    /// 0.7 s, when the file shows blue); the WebP is refused there, saying why.
    @Test func anAnimatedPictureIsSaid() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let (png, webp) = (folder + "/moving.png", folder + "/moving.webp")
        let frames = ["-f", "lavfi", "-i", "color=red:s=320x240:d=0.5", "-f", "lavfi", "-i", "color=blue:s=320x240:d=0.5", "-filter_complex", "[0][1]concat=n=2:v=1", "-r", "2"]
        try Tool.ffmpeg(frames + ["-plays", "0", "-f", "apng", png])
        try Tool.ffmpeg(frames + ["-loop", "0", "-f", "webp", webp])
        let clip = try Fixtures.solid("black", seconds: 1, size: "320x240", tone: nil)
        let output = Fixtures.scratchPath("apng.mp4")
        let result = try Self.exportOverlay(over: clip, to: output, size: (320, 240), name: "anim.lua", arguments: [png], layers: """
            parent:addSublayer(av.layer{ frame = { 0, 0, 320, 240 }, contents = av.image(arg[3]) })
            """)
        #expect(result.status == 0 && result.err.contains("anim.lua:6: \"moving.png\" is an animated PNG: layers draw its first frame only") && result.err.contains("[optionIgnored]"), "\(result.err)")
        #expect(try Tool.rgbFrame(output, at: 0.7).pixel(160, 120).r > 200, "the first frame (red) is what is drawn")
        let refused = try Moonreel.runScript("av.image(arg[1])", name: "webp.lua", arguments: [webp])
        #expect(refused.status != 0 && refused.err.contains("an animated WebP, which the decoder cannot read"), "\(refused.err)")
    }

    /// An export with no video composition of the script's builds one from the composition
    /// (AVFoundation's "properties of" it), and that one's notes were dropped: a Pixel motion
    /// photo's second video track, of another size, was drawn at its own size under the
    /// first, hidden, without a word (the same edit with av.videoComposition(comp) said it).
    /// They are said at the export now.
    @Test func theDefaultVideoCompositionsNotesAreSaid() throws {
        let (result, _) = try Self.exportEdited(Fixtures.real("05_pixel_motionphoto_hevc_rot270_2videotracks.mp4"), name: "photo.lua", preset: "LowQuality")
        #expect(result.status == 0 && result.err.contains("photo.lua:8: clip ") && result.err.contains("is portrait 1536×2048 but the render size is portrait 1080×1440: it is drawn at its own size from the top-left corner")
                && result.err.contains("[layerOffFrame]"), "\(result.err)")
    }

    /// An iPhone's Dolby Vision was said lost only by SmartCut; Passthrough (which drops the
    /// configuration record) and a re-encode (which works from the HLG base layer) lost it in
    /// silence. Each says it now; ffprobe finds no DOVI record in either output.
    @Test(arguments: ["Passthrough", "HEVCHighestQuality"]) func dolbyVisionLostIsSaidByEveryWayOfWriting(preset: String) throws {
        let (result, output) = try Self.exportEdited(Fixtures.real("02_iphone14pro_portrait_hevc10_hlg_dovi.MOV"), name: "dovi.lua", preset: preset)
        let how = preset == "Passthrough" ? "Passthrough" : "the export"
        #expect(result.status == 0 && result.err.contains("dovi.lua:8: \(how) does not keep the source's Dolby Vision (profile 8.4)") && result.err.contains("[optionIgnored]"), "\(result.err)")
        let sideData = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream_side_data", "-of", "json", output]).out
        #expect(!sideData.contains("DOVI"), "\(sideData)")
    }

    /// No way of writing carries a source's chapters, subtitle tracks, cover art or tags a
    /// person wrote (a title), and none of it was said: a podcast trim lost its chapters in
    /// silence. Chapters and subtitles, which a viewer misses, are an optionIgnored warning;
    /// cover art and tags a note (what a device writes on every file, such as the date, is
    /// not counted). ffprobe finds none of it kept.
    @Test func whatTheSourceHoldsBesidesPictureAndSoundIsSaid() throws {
        let source = try Fixtures.cached("chapters-subtitles.mov") { path in
            let folder = (path as NSString).deletingLastPathComponent
            let (chapters, subtitles) = (folder + "/chapters.txt", folder + "/subtitles.srt")
            try ";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1000\ntitle=Intro\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=1000\nEND=2000\ntitle=Main\n"
                .write(toFile: chapters, atomically: true, encoding: .utf8)
            try "1\n00:00:00,200 --> 00:00:01,500\nHello\n".write(toFile: subtitles, atomically: true, encoding: .utf8)
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=2", "-f", "lavfi", "-i", "sine=frequency=440:duration=2",
                             "-i", subtitles, "-i", chapters, "-map", "0", "-map", "1", "-map", "2", "-map_chapters", "3",
                             "-metadata", "creation_time=2021-05-06T10:00:00Z", "-metadata", "title=Take 3",
                             "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-c:s", "mov_text", path])
        }
        let (result, output) = try Self.exportEdited(source, name: "extras.lua")
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("extras.lua:8: \"chapters-subtitles.mov\" has 2 chapters and a subtitle track, which the output does not keep") && result.err.contains("warning"), "\(result.err)")
        #expect(result.err.contains("extras.lua:8: \"chapters-subtitles.mov\" has tags (title), which the output does not keep"), "\(result.err)")
        #expect(!result.err.contains("creation"), "a date every file has is not counted: \(result.err)")
        let kept = try Tool.run("ffprobe", ["-v", "error", "-show_chapters", "-show_entries", "stream=codec_type", "-of", "csv=p=0", output]).out
        #expect(!kept.contains("subtitle") && !kept.contains("Intro"), "\(kept)")
        // A title the session writes itself is not said lost.
        let (titled, _) = try Self.exportEdited(source, name: "extras.lua", session: "s.metadata = { title = \"Mine\" }")
        #expect(titled.status == 0 && !titled.err.contains("has tags"), "\(titled.err)")
    }

    /// An iPhone's HLG video exported with an H.264 preset is tone-mapped to SDR, as
    /// docs/color-and-hdr.md says, but the export said nothing, so a batch could not tell.
    /// A note says it now; HEVC and SmartCut (which keep HDR) and hdr = "toneMap" (asked) say nothing.
    /// ffprobe reads bt709 in the H.264 output.
    @Test(arguments: [("HighestQuality", "", true), ("HEVCHighestQuality", "", false), ("HighestQuality", "s.hdr = \"toneMap\"", false), ("SmartCut", "", false)])
    func hdrToneMappedWithoutBeingAskedIsANote(preset: String, session: String, said: Bool) throws {
        let (result, output) = try Self.exportEdited(Fixtures.real("02_iphone14pro_portrait_hevc10_hlg_dovi.MOV"), name: "hlg.lua", preset: preset, session: session)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("hlg.lua:8: the HDR (HLG) sources are tone-mapped to SDR: H.264 carries no HDR here") == said, "\(preset) \(session): \(result.err)")
        let transfer = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=color_transfer", "-of", "csv=p=0", output]).out
        #expect(transfer.contains("arib-std-b67") == (preset != "HighestQuality"), "\(transfer)")
    }

    /// An iOS port names Apple's fonts: "Helvetica Neue" is not installed here, and fontconfig
    /// drew the text in DejaVu Sans without a word. Now a `fontSubstituted` warning naming
    /// both, once for the font; an installed family (any case) and a generic one say nothing.
    @Test func aFontThatIsNotInstalledIsAWarning() throws {
        let clip = try Fixtures.solid("black", seconds: 1, size: "640x360", tone: nil)
        let output = Fixtures.scratchPath("fonts.mp4")
        let result = try Self.exportOverlay(over: clip, to: output, size: (640, 360), name: "fonts.lua", layers: """
            parent:addSublayer(av.textLayer{ string = "Port", font = "Helvetica Neue", fontSize = 30, frame = { 10, 300, 300, 50 }, name = "title" })
            parent:addSublayer(av.textLayer{ string = "Here", font = "dejavu serif", fontSize = 30, frame = { 10, 200, 300, 50 } })
            parent:addSublayer(av.textLayer{ string = "Any", font = "sans-serif", fontSize = 30, frame = { 10, 100, 300, 50 } })
            parent:addSublayer(av.textLayer{ string = "Again", font = "Helvetica Neue", fontSize = 30, frame = { 320, 300, 300, 50 } })
            """)
        #expect(result.status == 0, "\(result.err)")
        // Once for the font, however many layers ask for it (a lyric's hundred lines).
        let said = result.errorLines.filter { $0.hasSuffix("[fontSubstituted]") }
        #expect(said.count == 1 && said[0].contains("fonts.lua:6: text layer \"title\" and 1 more ask for the font \"Helvetica Neue\", which is not installed: they are drawn in "),
                "\(result.err)")
    }

    /// Exports the first second of `clip` with a video layer and the Lua `layers` (adding to
    /// `parent`, a `size` frame; `arg[3]`… are `arguments`) over it; `layers` start at line 6.
    /// Runs `edits` on `comp`, a 3 s white clip with a 440 Hz tone from line 4 of the script,
    /// then exports it (after `session`, which may set `s`'s other properties).
    static func editAThreeSecondClip(name: String, _ edits: String, session: String = "") throws -> (Moonreel.Result, String) {
        try exportEdited(try Fixtures.solid("white", seconds: 3, size: "320x240", tone: 440), name: name, edits, session: session)
    }

    /// Runs `edits` on `comp`, the whole of `clip` from line 4 of the script, then exports it
    /// with `preset` (after `session`, which may set `s`'s other properties) at line 8.
    static func exportEdited(_ clip: String, name: String, preset: String = "HighestQuality", _ edits: String = "", session: String = "") throws -> (Moonreel.Result, String) {
        let output = Fixtures.scratchPath("edited.mp4")
        let result = try Moonreel.runScript("""
            local a = av.asset(arg[1])
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, a.duration), a, 0)
            \(edits)
            local s = av.exportSession(comp, "\(preset)")
            s.outputURL = arg[2]
            \(session)
            assert(s:export())
            """, name: name, arguments: [clip, output])
        return (result, output)
    }

    /// Exports the first `seconds` of `clip` to `output` under `layers`, Lua that adds
    /// layers to `parent`, starting at the script's line 6.
    static func exportOverlay(over clip: String, to output: String, size: (Int, Int), seconds: Double = 1, name: String, arguments: [String] = [],
                              layers: String) throws -> Moonreel.Result {
        try Moonreel.runScript("""
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, \(seconds)), av.asset(arg[1]), 0)
            local vc = av.videoComposition(comp)
            local parent, video = av.layer{ frame = { 0, 0, \(size.0), \(size.1) } }, av.layer{ frame = { 0, 0, \(size.0), \(size.1) } }
            parent:addSublayer(video)
            \(layers)
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL, session.videoComposition = arg[2], vc
            assert(session:export())
            """, name: name, arguments: [clip, output] + arguments)
    }

    /// A count given with a fraction was cut to its whole part in silence (`maxLines = 2.5`
    /// drew 2 lines, `fontWeight = 650.5` drew 650). It is refused, naming the value.
    @Test func aFractionWhereACountGoesIsRefused() throws {
        for (key, value) in [("maxLines", "2.5"), ("highlightedScalars", "3.5"), ("fontWeight", "650.5")] {
            let result = try Moonreel.runScript("local t = av.textLayer{ string = \"Hi\", \(key) = \(value) }", name: "count.lua")
            #expect(result.status != 0 && result.err.contains("must be a whole number, got \(value)"), "\(key): \(result.err)")
        }
        let whole = try Moonreel.runScript("local t = av.textLayer{ string = \"Hi\", maxLines = 2, fontWeight = 650 } print(t.maxLines, t.fontWeight)", name: "count.lua")
        #expect(whole.status == 0 && whole.out.hasPrefix("2\t650"), "\(whole.out)\(whole.err)")
    }

    /// A preset's box that fits a picture at a fraction of a pixel: the output's sides are
    /// rounded, so its shape is a little off the picture's, and the export says so (a note);
    /// a picture the box fits exactly says nothing.
    @Test func aPresetsBoxThatFitsAtAFractionOfAPixelIsANote() throws {
        let clip = try Fixtures.clip(seconds: 1)
        let output = Fixtures.scratchPath("fitted")
        let script = """
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 0.3), av.asset(arg[1]), 0)
            for i, size in ipairs({ { 1080, 1350 }, { 1080, 1920 } }) do
              local vc = av.videoComposition(comp)
              vc.renderSize = size
              local session = av.exportSession(comp, "960x540")
              session.outputURL = arg[2] .. i .. ".mp4"
              session.videoComposition = vc
              assert(session:export())
              print(i, #session.diagnostics)
            end
            """
        let result = try Moonreel.runScript(script, name: "fitted.lua", arguments: [clip, output])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("fitted.lua:9: renderSize 1080×1350 fitted into the preset's 540×960 box is 540×675; the output is 540×674 "
                                    + "(even whole pixels, as 4:2:0 video needs), its shape 0.15 % off the picture's [sizeRounded]"), "\(result.err)")
        #expect(result.out.contains("1\t1") && result.out.contains("2\t0"), "the exact fit says nothing: \(result.out)")
        let video = try #require(try Tool.ffprobe(output + "1.mp4").streams.first { $0.codec_type == "video" })
        #expect(video.width == 540 && video.height == 674)
    }

    @Test func strictFailsTheExportBeforeItsFileIsWritten() throws {
        let clip = try Fixtures.clip(seconds: 1)
        let output = Fixtures.scratchPath("odd")
        let session = try Moonreel.runScript(Self.oddSize, name: "odd.lua", arguments: [clip, output, "strict"])
        #expect(session.out.hasPrefix("nil\t") && session.out.contains("odd.lua:11: strict: renderSize 161×121"), "\(session.out)")
        let flag = try Moonreel.runScript(Self.oddSize + "\nassert(false, 'not reached')", name: "odd.lua", arguments: [clip, output + "-flag"], options: ["--strict"])
        #expect(flag.out.hasPrefix("nil\t") && flag.out.contains("odd.lua:11: strict: renderSize 161×121") && flag.out.contains("; \(output)-flag1.mp4 was not written"), "\(flag.out)")
        for name in [output + "1.mp4", output + "2.mp4", output + "-flag1.mp4"] {
            #expect(!FileManager.default.fileExists(atPath: name), "\(name) not written")
        }
        let folder = (output as NSString).deletingLastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix(".") }.isEmpty, "no temporary file left")
    }

    /// A warning while the script runs (a cue file's dropped block) is raised at its line
    /// under `--strict`, with the error kind `strict`.
    @Test func strictRaisesAScriptLevelWarningAtItsLine() throws {
        let cues = Fixtures.scratchPath("lyrics.srt")
        try "1\n00:00:01,000 --> 00:00:02,000\none\n\n2\n00:00:02,000 --> 00:00:0x,000\ntwo\n".write(toFile: cues, atomically: true, encoding: .utf8)
        let script = """
            local ok, err = pcall(av.readCues, arg[1])
            print(ok, ok or err.kind)
            av.readCues(arg[1])
            """
        let loose = try Moonreel.runScript(script, arguments: [cues])
        #expect(loose.status == 0 && loose.out.hasPrefix("true\t"), "\(loose.out) \(loose.err)")
        let strict = try Moonreel.runScript(script, arguments: [cues], options: ["--strict"])
        #expect(strict.status == 1)
        #expect(strict.out == "false\tstrict\n", "\(strict.out)")
        #expect(strict.errorLines.last?.contains("test.lua:3: strict: \(cues):6: cue dropped") == true, "\(strict.err)")
    }

    @Test func jsonEventsCarryKindLevelAndLine() throws {
        let clip = try Fixtures.clip(seconds: 1)
        let result = try Moonreel.runScript(Self.oddSize, name: "odd.lua", arguments: [clip, Fixtures.scratchPath("odd")], options: ["--progress", "json"])
        let events = result.out.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let diagnostics = events.filter { $0["event"] as? String == "diagnostic" }
        #expect(diagnostics.count == 1, "\(result.out)")
        let first = try #require(diagnostics.first)
        #expect(first["kind"] as? String == "sizeRounded" && first["level"] as? String == "warning" && first["line"] as? Int == 11
                && (first["file"] as? String)?.hasSuffix("odd.lua") == true && first["schema"] as? Int == 2, "\(first)")
    }

    /// In a dry run nothing is made, and the script can tell.
    @Test func aDryRunSaysSo() throws {
        let clip = try Fixtures.clip(seconds: 1)
        let output = Fixtures.scratchPath("odd")
        let result = try Moonreel.runScript(Self.oddSize, name: "odd.lua", arguments: [clip, output], options: ["--dry-run", "--rough-estimate"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("true\tdry run\tsizeRounded") && result.out.contains("dryRun\ttrue"), "\(result.out)")
        #expect(!FileManager.default.fileExists(atPath: output + "1.mp4"))
    }

    /// A batch's report lists each row's diagnostics and counts them; `--strict` fails the
    /// rows that would warn in the pre-check, before any is rendered.
    @Test func aBatchReportsDiagnosticsPerRowAndStrictRefusesThem() throws {
        let clip = try Fixtures.clip(seconds: 2)
        let template = BatchTests.template.replacingOccurrences(of: """
            local session = av.exportSession(comp, "LowQuality")
            """, with: """
            local session = av.exportSession(comp, "LowQuality")
            if p.start > 0 then
              local vc = av.videoComposition(comp)
              vc.renderSize = { 161, 121 }
              session.videoComposition = vc
            end
            """)
        let job = try BatchTests.Job(rows: "id,clip,start,duration\nplain,\(clip),0,0.5\nodd,\(clip),0.5,0.5\n")
        try template.write(toFile: job.template, atomically: true, encoding: .utf8)
        let report = job.folder + "/report.json"
        let result = try job.batch(["--report", report])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("1 with warnings") && result.err.contains("[sizeRounded]"), "\(result.err)")
        let json = try job.report()
        let totals = try #require(json["totals"] as? [String: Any])
        #expect(totals["warnings"] as? Int == 1 && totals["rowsWithWarnings"] as? Int == 1, "\(totals)")
        let rows = try #require(json["rows"] as? [[String: Any]])
        #expect((rows[0]["diagnostics"] as? [Any])?.isEmpty == true)
        #expect(((rows[1]["diagnostics"] as? [[String: Any]])?.first?["kind"] as? String) == "sizeRounded", "\(rows[1])")
        let strict = try BatchTests.Job(rows: "id,clip,start,duration\nplain,\(clip),0,0.5\nodd,\(clip),0.5,0.5\n")
        try template.write(toFile: strict.template, atomically: true, encoding: .utf8)
        let refused = try strict.batch(["--strict"])
        #expect(refused.status == 1)
        #expect(refused.err.contains("row 2:") && refused.err.contains("strict: renderSize 161×121") && !refused.err.contains("row 1:"), "\(refused.err)")
        #expect(!FileManager.default.fileExists(atPath: strict.output("plain")), "nothing rendered")
    }

    /// The Swift host hears each diagnostic typed, with the line that caused it.
    @Test func theHostHearsTypedDiagnostics() throws {
        let clip = try Fixtures.clip(seconds: 1)
        let host = try MoonreelHost()
        var heard: [Diagnostic] = []
        host.onDiagnostic = { heard.append($0) }
        host.onPrint = { _ in }
        try host.run(source: Self.oddSize, name: "odd.lua", arguments: [clip, Fixtures.scratchPath("odd")])
        #expect(heard.count == 2, "once per export: \(heard)")
        #expect(heard.first?.kind == .sizeRounded && heard.first?.level == .warning && heard.first?.origin == SourceLine(file: "odd.lua", line: 11),
                "\(heard)")
        host.strict = true
        #expect(throws: ScriptError.self) { try host.run(source: "av.readCues('\(try Self.badCues())')", name: "cues.lua") }
    }

    static func badCues() throws -> String {
        let path = Fixtures.scratchPath("bad.srt")
        try "1\n00:00:01,000 --> 00:00:0x,000\none\n".write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// docs/diagnostics.md lists every kind.
    @Test func everyKindIsDocumented() throws {
        let text = try String(contentsOfFile: Moonreel.checkout + "/docs/diagnostics.md", encoding: .utf8)
        for kind in Diagnostic.Kind.allCases { #expect(text.contains("| `\(kind.rawValue)` |"), "\(kind) is not in docs/diagnostics.md") }
    }
}
