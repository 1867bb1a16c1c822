import Foundation
import Testing
import TestSupport

/// Issue 12 section 3, end to end: `av.join` transitions, title cards and stills,
/// `av.pictureInPicture`, ducking and loudness, each exported by `moonreel` and measured
/// from the decoded output with the ffmpeg CLI (pixels, tone levels, EBU R128).
@Suite struct EditHelpersTests {
    static let rate = 48000

    // MARK: Transitions

    /// Runs `lines`, which make `comp`, `vc` and `mix` from a red clip at 440 Hz (arg[2]) and a
    /// blue one at 660 Hz (arg[3]), or from `clips`; exports them. Returns the output and
    /// what the script printed.
    static func export(_ lines: String, clips: [String]? = nil) throws -> (output: String, printed: String) {
        let output = Fixtures.scratchPath("helpers.mp4")
        let result = try Moonreel.runScript(lines + """

            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL, session.videoComposition, session.audioMix = arg[1], vc, mix
            assert(session:export())
            """, arguments: [output] + (clips ?? [try Fixtures.solid("red", tone: 440), try Fixtures.solid("blue", tone: 660)]))
        #expect(result.status == 0, "\(result.err)")
        return (output, result.out.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The red clip then the blue one, 2 s each, joined by a 1 s transition over 1…2 s; the
    /// frame at 1.5 s is the transition's middle.
    static func redThenBlue(_ options: String) throws -> String {
        try export("local comp, vc, mix = av.join({ av.asset(arg[2]), av.asset(arg[3]) }, \(options))").output
    }

    static func isRed(_ c: (r: Double, g: Double, b: Double)) -> Bool { c.r > 230 && c.g < 25 && c.b < 25 }
    static func isBlue(_ c: (r: Double, g: Double, b: Double)) -> Bool { c.b > 230 && c.r < 25 && c.g < 25 }

    @Test func dissolveIsTheAverageOfBothClipsHalfWayAndTheSoundCrossfades() throws {
        let output = try Self.redThenBlue("{ transition = \"dissolve\", duration = 1 }")
        #expect(abs(try Tool.ffprobe(output).duration - 3) < 0.05)
        #expect(Self.isRed(try Tool.rgbFrame(output, at: 0.9).mean(x: 0, y: 0, width: 320, height: 240)))
        let middle = try Tool.rgbFrame(output, at: 1.5).mean(x: 0, y: 0, width: 320, height: 240)
        #expect(abs(middle.r - 127) < 12 && abs(middle.b - 127) < 12 && middle.g < 20, "\(middle)")
        let quarter = try Tool.rgbFrame(output, at: 1.25).mean(x: 0, y: 0, width: 320, height: 240)
        #expect(abs(quarter.r - 191) < 14 && abs(quarter.b - 64) < 14, "a quarter through: \(quarter)")
        #expect(Self.isBlue(try Tool.rgbFrame(output, at: 2.1).mean(x: 0, y: 0, width: 320, height: 240)))

        let samples = try Tool.audioSamples(output, rate: Self.rate)
        let tone = { (frequency: Double, at: Double) in
            samples.toneAmplitude(frequency, from: Int(at * Double(Self.rate)), to: Int((at + 0.1) * Double(Self.rate)), rate: Self.rate)
        }
        let full440 = tone(440, 0.3), full660 = tone(660, 2.5)
        #expect(full440 > 0.05 && full660 > 0.05)
        // 1.45…1.55 s: both at half.
        #expect(abs(tone(440, 1.45) / full440 - 0.5) < 0.05 && abs(tone(660, 1.45) / full660 - 0.5) < 0.05,
                "440 Hz at \(tone(440, 1.45) / full440), 660 Hz at \(tone(660, 1.45) / full660)")
        #expect(tone(660, 0.5) / full660 < 0.02 && tone(440, 2.3) / full440 < 0.02)
    }

    @Test func slidePushesTheFirstClipOutToTheLeft() throws {
        let output = try Self.redThenBlue("{ transition = \"slide\", duration = 1 }")
        // A quarter through, the edge between them is at 3/4 of the width (x = 240).
        let quarter = try Tool.rgbFrame(output, at: 1.25)
        #expect(Self.isRed(quarter.mean(x: 200, y: 40, width: 36, height: 160)))
        #expect(Self.isBlue(quarter.mean(x: 244, y: 40, width: 36, height: 160)))
        let middle = try Tool.rgbFrame(output, at: 1.5)
        #expect(Self.isRed(middle.mean(x: 0, y: 0, width: 156, height: 240)) && Self.isBlue(middle.mean(x: 164, y: 0, width: 156, height: 240)))
    }

    /// A landscape clip whose middle 40 % is `middle` and whose outer 30 % on each side is green:
    /// filled into a portrait frame, only the middle shows.
    static func framedClip(_ middle: String) throws -> String {
        try Fixtures.cached("framed-\(middle).mp4") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=green:size=320x180:rate=30:duration=2",
                             "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
                             "-vf", "drawbox=x=96:y=0:w=128:h=180:color=\(middle):t=fill,drawbox=x=96:y=0:w=8:h=180:color=yellow:t=fill",
                             "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", path])
        }
    }

    static func isGreen(_ c: (r: Double, g: Double, b: Double)) -> Bool { c.g > 100 && c.r < 40 && c.b < 40 }

    /// Issue 25: `fit = "fill"` for vertical shorts — landscape clips cover a 9:16 frame,
    /// cropped (centred, or at `focus`), and a slide never shows what was cropped.
    @Test func fillCoversAPortraitFrameAndASlideShowsOnlyWhatFills() throws {
        let clips = [try Self.framedClip("red"), try Self.framedClip("blue")]
        let output = try Self.export("local comp, vc, mix = av.join({ av.asset(arg[2]), av.asset(arg[3]) }, "
                                     + "{ renderSize = {180, 320}, fit = \"fill\", transition = \"slide\", duration = 1 })", clips: clips).output
        let alone = try Tool.rgbFrame(output, at: 0.5)
        #expect(alone.width == 180 && alone.height == 320)
        // The middle of the picture, scaled 320/180 up: no border, no green, red to the top and bottom rows.
        #expect(Self.isRed(alone.mean(x: 40, y: 0, width: 120, height: 8)) && Self.isRed(alone.mean(x: 40, y: 312, width: 120, height: 8)))
        #expect(!Self.isGreen(alone.mean(x: 0, y: 100, width: 4, height: 120)) && !Self.isGreen(alone.mean(x: 176, y: 100, width: 4, height: 120)))
        for time in [1.25, 1.5, 1.75] {
            let moving = try Tool.rgbFrame(output, at: time)
            for x in stride(from: 0, to: 180, by: 6) {
                #expect(!Self.isGreen(moving.mean(x: x, y: 40, width: 6, height: 240)), "cropped-away green at x \(x), \(time) s")
            }
        }
        // Focus on the picture's left edge: the green outer part shows at the left.
        let left = try Self.export("local comp, vc, mix = av.join({ av.asset(arg[2]) }, { renderSize = {180, 320}, fit = \"fill\", focus = {0, 0.5} })",
                                   clips: [clips[0]]).output
        #expect(Self.isGreen(try Tool.rgbFrame(left, at: 0.5).mean(x: 0, y: 100, width: 60, height: 120)))
        // The same from av.videoComposition.
        let composed = try Self.export("""
            local a = av.asset(arg[2]); local comp = av.composition(); comp:insertTimeRange(av.range(0, a.duration), a, 0)
            local vc = av.videoComposition(comp, { renderSize = {180, 320}, fit = "fill" }); local mix = nil
            """, clips: [clips[0]]).output
        let filled = try Tool.rgbFrame(composed, at: 0.5)
        #expect(Self.isRed(filled.mean(x: 40, y: 0, width: 120, height: 8)) && !Self.isGreen(filled.mean(x: 0, y: 100, width: 4, height: 120)))
    }

    /// Issue 25: a transform the script sets at a clip's start on the layer instructions
    /// av.join made was overridden by the join's own placement at each instruction's start
    /// (after a transition, the clip's own instruction starts later than the clip).
    @Test func aTransformSetAtAClipsStartTakesEffectInEveryInstruction() throws {
        for transition in ["dissolve", "slide"] {
            let output = try Self.export("""
                local comp, vc, mix, parts = av.join({ av.asset(arg[2]), av.asset(arg[3]) }, { transition = "\(transition)", duration = 1 })
                local second = parts[2]
                for _, instruction in ipairs(vc.instructions) do
                  for _, li in ipairs(instruction.layerInstructions) do
                    if li.trackID == second.videoTrack.trackID then li:setTransform(av.transform():scaled(0.5), second.timeRange.start) end
                  end
                end
                """).output
            let alone = try Tool.rgbFrame(output, at: 2.5)
            #expect(Self.isBlue(alone.mean(x: 20, y: 20, width: 100, height: 80)), "\(transition): the blue clip at half size, top left")
            #expect(alone.mean(x: 200, y: 160, width: 100, height: 60).b < 30, "\(transition): background beyond it, not the clip at full size")
        }
    }

    @Test func fitAndFocusMistakesAreOneLine() throws {
        let clip = try Fixtures.solid("red")
        for (options, message) in [("fit = \"cover\"", "fit must be \"fit\" (inside the frame), \"fill\" (cover it, cropped) or \"none\""),
                                   ("focus = {0.2, 0.5}", "focus needs fit = \"fill\""),
                                   ("fit = \"fill\", focus = {2, 0.5}", "focus must be {x, y} with each in 0…1")] {
            let result = try Moonreel.runScript("av.join({ av.asset(arg[1]) }, { renderSize = {180, 320}, \(options) })", arguments: [clip])
            #expect(result.status == 1 && result.errorLines.count == 1 && result.err.contains(message), "\(options): \(result.err)")
        }
    }

    @Test func wipeSweepsAnEdgeAcrossWithTheNextClipBehindIt() throws {
        let output = try Self.redThenBlue("{ transition = \"wipe\", duration = 1 }")
        // The edge travels right: at a quarter it is at x = 80, the new clip to its left.
        let quarter = try Tool.rgbFrame(output, at: 1.25)
        #expect(Self.isBlue(quarter.mean(x: 40, y: 40, width: 36, height: 160)))
        #expect(Self.isRed(quarter.mean(x: 84, y: 40, width: 36, height: 160)))
        let up = try Self.redThenBlue("{ transition = \"wipe\", duration = 1, direction = \"up\" }")
        let rising = try Tool.rgbFrame(up, at: 1.5)
        #expect(Self.isRed(rising.mean(x: 0, y: 0, width: 320, height: 116)) && Self.isBlue(rising.mean(x: 0, y: 124, width: 320, height: 116)))
    }

    @Test func fadeThroughBlackIsBlackHalfWayAndSilentToo() throws {
        let output = try Self.redThenBlue("{ transition = \"fadeThroughBlack\", duration = 1 }")
        let black = try Tool.rgbFrame(output, at: 1.5).mean(x: 0, y: 0, width: 320, height: 240)
        #expect(black.r < 8 && black.g < 8 && black.b < 8, "\(black)")
        let dim = try Tool.rgbFrame(output, at: 1.25).mean(x: 0, y: 0, width: 320, height: 240)
        #expect(abs(dim.r - 127) < 14 && dim.b < 15, "half-faded red: \(dim)")
        let samples = try Tool.audioSamples(output, rate: Self.rate)
        let middle = samples.level(from: Int(1.47 * Double(Self.rate)), to: Int(1.53 * Double(Self.rate)))
        #expect(middle < samples.level(from: Self.rate / 4, to: Self.rate / 2) * 0.08, "level at the middle \(middle)")
    }

    @Test func eachJoinCanHaveItsOwnTransition() throws {
        let clip = { (color: String) in try Fixtures.solid(color, tone: nil) }
        let (output, printed) = try Self.export("""
            local a, b, c = av.asset(arg[2]), av.asset(arg[3]), av.asset(arg[4])
            local comp, vc, mix = av.join({ a, { b, start = 0.5, duration = 1.5 }, c },
                                          { transitions = { "none", { "wipe", duration = 0.5, direction = "left" } } })
            print(#vc.instructions, comp.duration)
            """, clips: [try clip("red"), try clip("blue"), try clip("lime")])
        // 2 + 1.5 + 2 − 0.5 = 5 s: red alone, blue alone, the wipe, lime alone.
        #expect(printed == "4\t5.0")
        #expect(Self.isBlue(try Tool.rgbFrame(output, at: 2.1).mean(x: 0, y: 0, width: 320, height: 240)))
        // The edge travels left from 3.0 s: half way (3.25 s) lime is on the right.
        let wipe = try Tool.rgbFrame(output, at: 3.25)
        #expect(Self.isBlue(wipe.mean(x: 0, y: 0, width: 150, height: 240)))
        #expect(wipe.mean(x: 170, y: 0, width: 150, height: 240).g > 230)
    }

    // MARK: Stills and title cards

    @Test func titleCardIsTextOnItsColourAndDissolvesLikeAClip() throws {
        let (output, printed) = try Self.export("""
            local card = av.titleCard{ title = "Moonreel", subtitle = "a test", duration = 2, backgroundColor = "#204060" }
            local comp, vc, mix, parts = av.join({ av.asset(arg[2]), card, av.asset(arg[3]) }, { transition = "dissolve", duration = 0.5 })
            print(parts[2].timeRange.start, parts[2].timeRange.duration, parts[2].layer ~= nil, parts[2].videoTrack == nil)
            """)
        #expect(printed == "1.5\t2.0\ttrue\ttrue")
        // The card alone over 2.0…3.0 s: its colour in the corners, white text in the middle.
        let card = try Tool.rgbFrame(output, at: 2.5)
        let corner = card.mean(x: 0, y: 0, width: 40, height: 40)
        #expect(abs(corner.r - 32) < 8 && abs(corner.g - 64) < 8 && abs(corner.b - 96) < 8, "\(corner)")
        let brightest = (60..<180).flatMap { y in (40..<280).map { x in card.pixel(x, y).g } }.max() ?? 0
        #expect(brightest > 200, "no text drawn: brightest green \(brightest)")
        // Half way into it (1.75 s): red and the card's colour, half each.
        let mixed = try Tool.rgbFrame(output, at: 1.75).mean(x: 0, y: 0, width: 40, height: 40)
        #expect(abs(mixed.r - (255 + 32) / 2) < 14 && abs(mixed.b - 48) < 14, "\(mixed)")
    }

    /// Issue 25: a title that wraps ran into its subtitle, and sizes followed the frame's
    /// height (huge on a vertical frame). Title and subtitle are one measured block, centred,
    /// sized by the frame's shorter side.
    @Test func aWrappedTitleKeepsItsSubtitleBelowItOnAnyFrame() throws {
        for (width, height) in [(360, 640), (640, 360)] {
            let output = try Self.export("""
                local card = av.titleCard{ title = "A very long title that certainly wraps onto several lines", subtitle = "The subtitle", duration = 1 }
                local comp, vc = av.join({ card }, { renderSize = { \(width), \(height) } }); local mix = nil
                """).output
            let frame = try Tool.rgbFrame(output, at: 0.5)
            let inked = (0..<frame.height).filter { y in (0..<frame.width).contains { x in frame.pixel(x, y).r > 128 } }
            let first = try #require(inked.first), last = try #require(inked.last)
            // Runs of inked rows: the title's lines, then the subtitle after the widest gap.
            let gaps = zip(inked, inked.dropFirst()).map { ($1 - $0, $1) }
            let widest = try #require(gaps.max { $0.0 < $1.0 })
            let titleSize = Double(min(width, height)) / 10
            #expect(Double(widest.0) >= titleSize / 3, "\(width)×\(height): a clear gap above the subtitle (\(widest.0) px)")
            let subtitleRows = inked.filter { $0 >= widest.1 }.count
            #expect(Double(subtitleRows) < titleSize * 0.75, "\(width)×\(height): only the subtitle below the gap (\(subtitleRows) rows)")
            #expect(abs(Double(first + last) / 2 - Double(height) / 2) < Double(height) * 0.06, "\(width)×\(height): centred (\(first)…\(last))")
            #expect(Double(inked.filter { $0 < widest.1 }.count) > titleSize * 1.5, "\(width)×\(height): the title wraps onto lines")
        }
    }

    @Test func aPortraitStillIsAClipOfAnyLengthFittedIntoTheFrame() throws {
        let still = try Fixtures.cached("portrait-yellow.png") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=yellow:size=120x160", "-frames:v", "1", path])
        }
        let (output, _) = try Self.export("""
            local comp, vc, mix = av.join({ av.asset(arg[2]), { av.asset(arg[3]), duration = 1.5 } })
            """, clips: [try Fixtures.solid("red", tone: 440), still])
        let probe = try Tool.ffprobe(output)
        #expect(probe.video?.frameCount == 105 && probe.video?.width == 320)
        // 120×160 fitted into 320×240: 180×240 in the middle, black bars of 70 px each side.
        let frame = try Tool.rgbFrame(output, at: 3)
        let middle = frame.mean(x: 100, y: 20, width: 120, height: 200), bar = frame.mean(x: 0, y: 0, width: 60, height: 240)
        #expect(middle.r > 230 && middle.g > 230 && middle.b < 30, "\(middle)")
        #expect(bar.r < 10 && bar.g < 10 && bar.b < 10, "\(bar)")
    }

    // MARK: Picture in picture

    @Test func insetShowsTheSecondClipInItsCornerFromItsStart() throws {
        let (output, printed) = try Self.export("""
            local comp, vc, mix = av.join({ av.asset(arg[2]) })
            local inset, video, audio = av.pictureInPicture(comp, vc, { av.asset(arg[3]), duration = 1 },
                { at = 0.5, corner = "bottomRight", scale = 0.25, margin = 0.05, borderWidth = 4, borderColor = "white" })
            print(#vc.instructions, inset.trackID == video.trackID, audio ~= nil)
            """)
        #expect(printed == "3\ttrue\ttrue")
        // 80×60 at 228, 168 (margin 12 px = 5 % of 240), a 4 px white border outside it.
        let during = try Tool.rgbFrame(output, at: 1)
        #expect(Self.isBlue(during.mean(x: 236, y: 176, width: 64, height: 44)))
        #expect(Self.isRed(during.mean(x: 20, y: 20, width: 180, height: 120)))
        let border = during.mean(x: 224, y: 180, width: 4, height: 30)
        #expect(border.r > 220 && border.g > 220 && border.b > 220, "border \(border)")
        for time in [0.25, 1.75] {
            #expect(Self.isRed(try Tool.rgbFrame(output, at: time).mean(x: 236, y: 176, width: 64, height: 44)), "at \(time) s")
        }
    }

    // MARK: Ducking

    /// Music at 220 Hz under "speech" (a 1 kHz tone that sounds 1…2 s and 3…4 s): the
    /// music drops by the amount while it speaks and is back after hold + release.
    @Test func musicIsDuckedUnderSpeechAndRecovers() throws {
        let music = try Fixtures.cached("music-220.m4a") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=220:sample_rate=48000:duration=5", "-c:a", "aac", "-b:a", "192k", path])
        }
        let speech = try Fixtures.cached("speech-bursts.m4a") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=0.25*sin(2*PI*1000*t)*(between(t\\,1\\,2)+between(t\\,3\\,4)):s=48000:d=5",
                             "-c:a", "aac", "-b:a", "192k", path])
        }
        let output = Fixtures.scratchPath("ducked.m4a")
        let result = try Moonreel.runScript("""
            local comp = av.composition()
            local song, voice = av.asset(arg[2]), av.asset(arg[3])
            local music, speech = comp:addMutableTrack("audio"), comp:addMutableTrack("audio")
            music:insertTimeRange(av.range(0, 5), song:tracksWithMediaType("audio")[1], 0)
            speech:insertTimeRange(av.range(0, 5), voice:tracksWithMediaType("audio")[1], 0)
            local p = av.audioMixInputParameters(music)
            p:setDucking{ under = speech, amount = -12, threshold = -40, attack = 0.05, hold = 0.2, release = 0.3 }
            print(p.ducking.amount, p.ducking.under[1] == speech.trackID, p.ducking.release)
            local session = av.exportSession(comp, "AppleM4A")
            session.outputURL, session.audioMix = arg[1], av.audioMix{ inputParameters = { p } }
            assert(session:export())
            """, arguments: [output, music, speech])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.trimmingCharacters(in: .whitespacesAndNewlines) == "-12.0\ttrue\t0.3")
        let samples = try Tool.audioSamples(output, rate: Self.rate)
        let decibels = { (at: Double, window: Double) in
            20 * log10(samples.toneAmplitude(220, from: Int(at * Double(Self.rate)), to: Int((at + window) * Double(Self.rate)), rate: Self.rate))
        }
        let full = decibels(0.4, 0.1)
        for time in [1.1, 1.6, 3.5] { #expect(abs(decibels(time, 0.1) - full - -12) < 0.5, "at \(time) s: \(decibels(time, 0.1) - full) dB") }
        // Speech stops at 2 s; the 10 ms window empties, the hold keeps the music down to
        // 2.21 s, the release brings it back by 2.51 s: half way (−6 dB) at 2.36 s.
        #expect(abs(decibels(2.0, 0.1) - full - -12) < 0.5)
        #expect(abs(decibels(2.335, 0.05) - full - -6) < 1, "half way up: \(decibels(2.335, 0.05) - full) dB")
        #expect(abs(decibels(2.6, 0.1) - full) < 0.3 && abs(decibels(4.6, 0.1) - full) < 0.3)
    }

    // MARK: Loudness

    /// `ffmpeg -af ebur128` on the output: integrated loudness (LUFS) and true peak (dBTP).
    static func ebur128(_ path: String) throws -> (integrated: Double, truePeak: Double) {
        let result = try Tool.run("ffmpeg", ["-hide_banner", "-nostdin", "-i", path, "-af", "ebur128=peak=true", "-f", "null", "-"])
        let summary = result.err[(result.err.range(of: "Summary:")?.upperBound ?? result.err.startIndex)...]
        func value(after label: String, in text: Substring) -> Double? {
            guard let range = text.range(of: label) else { return nil }
            return Double(text[range.upperBound...].drop { $0 == " " }.prefix { !$0.isWhitespace })
        }
        guard let integrated = value(after: "I:", in: summary),
              let peakSection = summary.range(of: "True peak:"),
              let truePeak = value(after: "Peak:", in: summary[peakSection.upperBound...]) else {
            throw MissingFigures(output: String(result.err.suffix(400)))
        }
        return (integrated, truePeak)
    }

    /// `loudnorm`'s own measurement (a second reading of the same standard).
    static func loudnormInput(_ path: String) throws -> Double {
        let result = try Tool.run("ffmpeg", ["-hide_banner", "-nostdin", "-i", path, "-af", "loudnorm=print_format=json", "-f", "null", "-"])
        guard let open = result.err.lastIndex(of: "{"),
              let json = try JSONSerialization.jsonObject(with: Data(result.err[open...].utf8)) as? [String: String],
              let value = json["input_i"].flatMap(Double.init) else {
            throw MissingFigures(output: String(result.err.suffix(400)))
        }
        return value
    }

    /// `duration` is the default of every listed transition without its own, however the
    /// options table happens to be laid out (Lua walks its fields in no set order).
    @Test func listedTransitionsTakeTheCallsDuration() throws {
        let clip = try Fixtures.clip(seconds: 3)
        let result = try Moonreel.runScript("""
            local a = av.asset(arg[1])
            for _, options in ipairs{ { duration = 2, transitions = { "dissolve" } },
                                      { transitions = { "dissolve" }, duration = 2 },
                                      { transitions = { "wipe" }, direction = "left", duration = 2, renderSize = { 320, 240 } } } do
              print(av.join({ a, a }, options).duration)
            end
            """, arguments: [clip])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.split(separator: "\n").map { Double($0) } == [4, 4, 4], "\(result.out)")
    }

    /// A near-silent recording cannot be raised to −14 LUFS (the gain is capped at 30 dB so
    /// its noise stays down): the export says how loud it got instead of missing silently.
    @Test func aTargetTheMixCannotReachIsNamed() throws {
        let input = try Fixtures.cached("loudness-whisper-35.mp4") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=gray:size=160x120:rate=30:duration=4", "-f", "lavfi",
                             "-i", "sine=frequency=997:sample_rate=48000:duration=4,volume=-35dB",
                             "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "192k", "-shortest", path])
        }
        let output = Fixtures.scratchPath("whisper.mp4")
        let result = try Moonreel.runScript(Moonreel.wholeAssetComposition(argument: 2) + """
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL = arg[1]
            session.loudness = -14
            assert(session:export())
            """, arguments: [output, input])
        #expect(result.status == 0, "\(result.err)")
        let reached = try Self.ebur128(output).integrated
        let note = try #require(result.err.split(separator: "\n").first { $0.contains("loudness: the mix reaches about") }, "\(result.err)")
        #expect(note.hasSuffix("not -14.0: quiet audio is raised at most 30 dB, so its noise stays down [loudnessMissed]"))
        let said = try #require(note.split(separator: " ").compactMap { Double($0) }.first)
        #expect(abs(said - reached) <= 1 && reached < -20, "said \(said), measured \(reached) LUFS")
    }

    /// `av.loudness{timeRange=}` reaching past the end measured the part inside without a
    /// word; now a `rangeClipped` note says which part. The figure is the same as asking for
    /// that part, and a range inside says nothing.
    @Test func aLoudnessRangePastTheEndSaysWhatWasMeasured() throws {
        let input = try Fixtures.cached("loudness-tone.mp4") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=gray:size=160x120:rate=30:duration=6", "-f", "lavfi", "-i", "sine=frequency=997:sample_rate=48000:duration=6,volume=0.4",
                             "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "192k", "-shortest", path])
        }
        let result = try Moonreel.runScript("""
            local a = av.asset(arg[1])
            print(("%.2f"):format(av.loudness(a, { timeRange = { 4, 10 } }).integrated))
            print(("%.2f"):format(av.loudness(a, { timeRange = { 4, 2 } }).integrated))
            """, name: "past.lua", arguments: [input])
        #expect(result.status == 0, "\(result.err)")
        let said = result.errorLines.filter { $0.hasSuffix("[rangeClipped]") }
        #expect(said.count == 1 && said[0].contains("past.lua:2: timeRange 4–14 s reaches past the audio (0–6") && said[0].contains("4–6"), "\(result.err)")
        let printed = result.out.split(separator: "\n").compactMap { Double($0) }
        #expect(printed.count == 2 && printed[0] == printed[1], "\(printed)")
    }

    /// A quiet tone (one gain does it); speech-like peaks far above a quiet tone (the limiter
    /// holds them and the gain is corrected for what it takes); sharp 1 ms clicks, which the
    /// AAC encoder rebuilt up to 0.7 dB over the ceiling until the encoded peak was checked
    /// (issue 40 §2p). Every one ends under −1 dBTP as ffmpeg's ebur128 reads the file.
    @Test(arguments: [(-14.0, "tone", "sine=frequency=997:sample_rate=48000:duration=6,volume=0.4", -1.0),
                      (-16.0, "bursts", "aevalsrc=0.06*sin(2*PI*440*t)+0.7*sin(2*PI*3000*t)*(0.5-0.5*cos(2*PI*mod(t\\,0.25)/0.004))*lt(mod(t\\,0.25)\\,0.004):s=48000:d=6", -1.0),
                      (-16.0, "clicks", "aevalsrc=0.05*sin(2*PI*440*t)+0.6*lt(mod(t\\,0.25)\\,0.001):s=48000:d=6", -1.0)])
    func loudnessIsBroughtToTheTargetWithinOneLU(target: Double, name: String, source: String, peakLimit: Double) throws {
        let input = try Fixtures.cached("loudness-\(name).mp4") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=gray:size=160x120:rate=30:duration=6", "-f", "lavfi", "-i", source,
                             "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "192k", "-shortest", path])
        }
        let output = Fixtures.scratchPath("loud.mp4")
        let result = try Moonreel.runScript(Moonreel.wholeAssetComposition(argument: 2) + """
            print(("%.2f"):format(av.loudness(comp).integrated))
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL = arg[1]
            session.loudness = arg[3] + 0
            assert(session:export())
            print(("%.2f"):format(av.loudness(av.asset(arg[1])).integrated))
            """, arguments: [output, input, "\(target)"])
        #expect(result.status == 0, "\(result.err)")
        let before = try Self.ebur128(input), after = try Self.ebur128(output)
        #expect(abs(before.integrated - target) > 5, "the source is already at \(before.integrated) LUFS")
        #expect(abs(after.integrated - target) <= 1, "ebur128: \(after.integrated) LUFS for a target of \(target)")
        #expect(abs(try Self.loudnormInput(output) - target) <= 1)
        #expect(after.truePeak <= peakLimit, "true peak \(after.truePeak) dBTP (ceiling −1 dBTP)")
        // av.loudness reads the source as ffmpeg does.
        let printed = result.out.split(separator: "\n").compactMap { Double($0) }
        #expect(printed.count == 2 && abs(printed[0] - before.integrated) < 0.3 && abs(printed[1] - after.integrated) < 0.3, "\(printed)")
        print("loudness of \(name): \(before) → \(after) for \(target) LUFS")
    }

    // MARK: The example

    /// Issue 12's yardstick: three clips with dissolves over ducked music in at most 20 lines.
    @Test func threeClipDissolveWithDuckedMusicExampleFitsInTwentyLines() throws {
        let script = Moonreel.example("dissolve_music.lua")
        let lines = try String(contentsOfFile: script, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 21 && lines.last == "", "\(lines.count - 1) lines")
        let music = try Fixtures.cached("music-220-12s.m4a") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=220:sample_rate=48000:duration=12", "-c:a", "aac", path])
        }
        // The third clip is silent, so the music comes back under it.
        let clips = [try Fixtures.solid("red", seconds: 3, tone: 440), try Fixtures.solid("blue", seconds: 3, tone: 660),
                     try Fixtures.solid("lime", seconds: 4, tone: nil)]
        let output = Fixtures.scratchPath("dissolve_music.mp4")
        let result = try Moonreel.run(["run", script, output, music] + clips)
        #expect(result.status == 0, "\(result.err)")
        #expect(abs(try Tool.ffprobe(output).duration - 8) < 0.05)
        let middle = try Tool.rgbFrame(output, at: 2.5).mean(x: 0, y: 0, width: 320, height: 240)
        #expect(abs(middle.r - 127) < 14 && abs(middle.b - 127) < 14, "first dissolve half way: \(middle)")
        let samples = try Tool.audioSamples(output, rate: Self.rate)
        let music220 = { (at: Double) in
            20 * log10(samples.toneAmplitude(220, from: Int(at * Double(Self.rate)), to: Int((at + 0.1) * Double(Self.rate)), rate: Self.rate))
        }
        // Ducked by 15 dB under the first two clips' sound; back under the silent third once
        // the second's sound has faded (4…5 s) and the release is over, before the music's
        // own fade-out over the last 2 s.
        #expect(abs(music220(1.0) - music220(5.7) - -15) < 1, "\(music220(1.0) - music220(5.7)) dB")
        #expect(abs(music220(3.5) - music220(5.7) - -15) < 1)
        #expect(music220(7.5) < music220(5.7) - 10)
        #expect(abs(try Self.ebur128(output).integrated - -14) <= 1)
    }

    // MARK: Real phone media

    /// An iPhone portrait clip slides out for a rotated, variable-rate Android one: half way,
    /// each half of the frame is the matching half of each clip as ffmpeg shows them.
    @Test func phoneClipsSlideIntoEachOtherUpright() throws {
        let iphone = Fixtures.real("01_iphone4s_portrait_h264_rot90.mov")
        let android = Fixtures.real("06_android_rot180_vfr_10fps.mp4")
        let (output, _) = try Self.export("""
            local comp, vc, mix = av.join({ av.asset(arg[2]), av.asset(arg[3]) }, { transition = "slide", duration = 1 })
            """, clips: [iphone, android])
        let probe = try Tool.ffprobe(output)
        #expect(probe.video?.width == 320 && probe.video?.height == 568)
        // 01 lasts 2.202 s: the slide runs 1.202…2.202 s; at 1.702 s each has moved half a frame.
        let frame = try Tool.rgbFrame(output, at: 1.702)
        let outgoing = try Tool.referenceFrame(iphone, at: 1.702, width: 320, height: 568)
        // 06 (1280×720 turned 180°) fitted into 320×568: 320×180, centred. It is 0.4998 s
        // into 06, whose frames (10 fps, variable) are at 0.4 and 0.5 s: the one at 0.4 shows.
        let incoming = try Tool.referenceFrame(android, at: 0.4, width: 320, height: 180)
        let leftOfFrame = frame.crop(x: 0, y: 0, width: 160, height: 568)
        #expect(leftOfFrame.meanDifference(outgoing.crop(x: 160, y: 0, width: 160, height: 568)) < 12)
        let rightOfFrame = frame.crop(x: 160, y: 194, width: 160, height: 180)
        let match = rightOfFrame.meanDifference(incoming.crop(x: 0, y: 0, width: 160, height: 180))
        #expect(match < 15 && match < rightOfFrame.meanDifference(incoming.crop(x: 160, y: 0, width: 160, height: 180)) / 3, "\(match)")
    }

    // MARK: Errors

    struct MissingFigures: Error { let output: String }

    @Test func mistakesGiveOneLineNamingWhatIsWrongAndWhatWorks() throws {
        let clip = try Fixtures.solid("red", tone: 440)
        let result = try Moonreel.runScript("""
            local clip = av.asset(arg[1])
            local comp, vc, mix = av.join({ clip })
            local music = av.audioMixInputParameters(comp:tracksWithMediaType("audio")[1])
            local session = av.exportSession(comp, "HighestQuality")
            for _, attempt in ipairs({
              function() av.join({ clip, clip }, { transition = "fade" }) end,
              function() av.join({ clip, clip }, { transition = "dissolve", duration = 2.5 }) end,
              function() av.join({}) end,
              function() av.join({ clip }, { transiton = "dissolve" }) end,
              function() av.join({ { clip, durration = 1 } }) end,
              function() av.join({ clip, clip }, { transitions = { "wipe", "slide" } }) end,
              function() av.pictureInPicture(comp, vc, av.titleCard{ title = "x" }) end,
              function() music:setDucking{ amount = -12 } end,
              function() music:setDucking{ under = comp:tracksWithMediaType("video")[1] } end,
              function()   -- more than the mix takes: refused, not cut to the first 1000
                local many = {}
                for i = 1, 1001 do many[i] = comp:tracksWithMediaType("audio")[1] end
                music:setDucking{ under = many }
              end,
              function() session.loudness = 5 end,
              function() session.truePeakLimit = -2 end,
              function()
                local copy = av.exportSession(comp, "Passthrough")
                copy.outputURL, copy.loudness = arg[2], -14
                assert(copy:export())
              end,
            }) do
              print(select(2, pcall(attempt)))
            end
            """, arguments: [clip, Fixtures.scratchPath("copy.mp4")])
        #expect(result.status == 0, "\(result.err)")
        let lines = result.out.split(separator: "\n").map(String.init)
        let expected = [
            "join: join 1: unknown transition \"fade\" (use \"none\", \"dissolve\", \"slide\", \"wipe\", \"fadeThroughBlack\"; \"cut\" is \"none\"; or a transition effect's name: moonreel effects list shows them)",
            "join: item 1 (\"" + clip + "\") lasts 2 s, shorter than its transitions (0 s in + 2.5 s out)",
            "nothing to join: the array is empty",
            "unknown option \"transiton\" (options: direction, duration, fit, focus, renderSize, transition, transitions)",
            "item 1: unknown option \"durration\" (options: duration, range, start)",
            "2 items need 1 transitions, one per join; got 2",
            "a title card cannot be an inset; give a clip",
            "ducking needs under = the track (or tracks) whose sound lowers this one",
            "is a video track, not an audio track",
            "lists 1001 tracks to duck under; at most 1000 are taken (a mix of more is a mistake)",
            "value must be in -70…-5, got 5",
            "set session.loudness (the target in LUFS) before truePeakLimit",
            "loudness needs the audio mixed again, but Passthrough copies it as it is; use another preset (AppleM4A, HighestQuality…)",
        ]
        #expect(lines.count == expected.count, "\(lines)")
        for (line, text) in zip(lines, expected) {
            #expect(line.contains(text), "\(line)")
        }
    }
}
