import Foundation
import Testing
import TestSupport

/// Issue 4's "done when": lyrics visible exactly inside their cue ranges, in the bottom
/// third and centred; CJK and Latin text with real glyphs; the watermark's position and
/// blended opacity by pixel values.
@Suite struct LyricsAndWatermarkTests {
    static let grey = 64

    /// Pixels clearly brighter than the grey background (the white text and its outline).
    struct Ink {
        let count: Int
        let centroidX: Double
        let centroidY: Double
        let mask: [Bool]

        init(_ image: Image, threshold: Int = LyricsAndWatermarkTests.grey + 80) {
            var mask = [Bool](repeating: false, count: image.width * image.height)
            var (count, sumX, sumY) = (0, 0.0, 0.0)
            for y in 0..<image.height { for x in 0..<image.width {
                let p = image.pixel(x, y)
                if min(p.r, p.g, p.b) > threshold {
                    mask[y * image.width + x] = true
                    count += 1; sumX += Double(x); sumY += Double(y)
                }
            } }
            self.count = count
            self.mask = mask
            centroidX = count > 0 ? sumX / Double(count) : 0
            centroidY = count > 0 ? sumY / Double(count) : 0
        }
    }

    /// Lua lines: `comp` (the whole of `arg[1]`, 640×360) and `vc`, its video composition
    /// with `overlay` (Lua code that builds a layer, given `arg[2]`) above the video.
    func overlayComposition(_ overlay: String) -> String {
        """
        local asset = av.asset(arg[1])
        local comp = av.composition()
        comp:insertTimeRange(av.range(0, asset.durationTime), asset, 0)
        local vc = av.videoComposition(comp)
        local parent = av.layer{ frame = {0, 0, 640, 360} }
        local video = av.layer{ frame = {0, 0, 640, 360} }
        parent:addSublayer(video)
        parent:addSublayer(\(overlay))
        vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }

        """
    }

    /// Exports `arg[1]` (640×360) with `overlay` (Lua code that builds a layer, given
    /// `arg[2]`) above the video to `arg[3]`.
    @discardableResult
    func exportWithOverlay(_ overlay: String, arguments: [String]) throws -> Moonreel.Result {
        let result = try Moonreel.runScript(overlayComposition(overlay) + """
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL = arg[3]
            session.videoComposition = vc
            assert(session:export())
            """, arguments: arguments)
        #expect(result.status == 0, "\(result.err)")
        return result
    }

    func lyricVideo(cues csv: String) throws -> String {
        let video = try Fixtures.solid("0x404040", seconds: 4, size: "640x360")
        let cues = Fixtures.scratchPath("lyrics.csv")
        try csv.write(toFile: cues, atomically: true, encoding: .utf8)
        let output = (cues as NSString).deletingLastPathComponent + "/lyrics.mp4"
        try exportWithOverlay("require('effects.lyrics'){ cues = av.readCues(arg[2]), renderSize = {640, 360}, shadow = false }",
                              arguments: [video, cues, output])
        return output
    }

    @Test func lyricsShowInsideTheirCuesOnlyCentredInTheBottomThird() throws {
        let output = try lyricVideo(cues: """
            id,lyric,start_at,end_at
            1,HELLO WORLD,0.5,1.5
            2,SECOND LINE,2.0,3.0
            """)
        // The frames on each side of every boundary (30 fps: cue 1 is frames 15…44, cue 2
        // frames 60…89); a time just below k/30 makes ffmpeg pick frame k.
        let expectations: [(frame: Int, visible: Bool)] = [(14, false), (15, true), (30, true), (44, true), (45, false),
                                                            (59, false), (60, true), (89, true), (90, false)]
        for (frame, visible) in expectations {
            let time = Double(frame) / 30 - 0.0005
            let ink = Ink(try Tool.rgbFrame(output, at: time))
            if visible {
                #expect(ink.count > 300, "lyric missing at \(time) s")
                #expect(abs(ink.centroidX - 320) < 12, "not centred at \(time) s: x \(ink.centroidX)")
                #expect(ink.centroidY > 240 && ink.centroidY < 360, "not in the bottom third at \(time) s: y \(ink.centroidY)")
            } else {
                #expect(ink.count < 20, "lyric shown outside its cue at \(time) s (\(ink.count) pixels)")
            }
        }
    }

    /// A portrait video's lyrics are sized by its width, as a landscape one's by its height:
    /// the default size was a fourteenth of the height, so on a phone's 9:16 frame a short
    /// line took two lines (and a longer one was cut with "…").
    @Test func portraitLyricsKeepAShortLineOnOneLine() throws {
        let video = try Fixtures.solid("0x404040", seconds: 2, size: "360x640")
        let cues = Fixtures.scratchPath("portrait.csv")
        try "id,lyric,start_at,end_at\n1,Twinkle twinkle little,0.5,1.5\n".write(toFile: cues, atomically: true, encoding: .utf8)
        let output = (cues as NSString).deletingLastPathComponent + "/portrait.mp4"
        let result = try Moonreel.runScript("""
            local asset = av.asset(arg[1])
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, asset.duration), asset, 0)
            local vc = av.videoComposition(comp)
            local full = { 0, 0, 360, 640 }
            local parent, video = av.layer{ frame = full }, av.layer{ frame = full }
            parent:addSublayer(video)
            parent:addSublayer(require('effects.lyrics'){ cues = av.readCues(arg[2]), renderSize = {360, 640}, shadow = false })
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            local session = av.exportSession(comp, "HighestQuality")
            session.videoComposition = vc
            session.outputURL = arg[3]
            assert(session:export())
            """, name: "portrait.lua", arguments: [video, cues, output])
        try #require(result.status == 0, "\(result.err)")
        // At the cue's start nothing is sung yet: every glyph is white.
        let ink = Ink(try Tool.rgbFrame(output, at: 0.5 + 0.5 / 30))
        let rows = (0..<640).filter { y in (0..<360).contains { ink.mask[y * 360 + $0] } }
        let lines = zip(rows, rows.dropFirst()).filter { $1 - $0 > 4 }.count + (rows.isEmpty ? 0 : 1)
        #expect(ink.count > 300, "the line is missing")
        #expect(lines == 1, "\"Twinkle twinkle little\" took \(lines) lines on a 360-wide frame (rows \(rows.first ?? 0)…\(rows.last ?? 0))")
    }

    /// Issue 25: lines that overlap in time were drawn over each other (unreadable); the
    /// lyrics effect stacks them, and av.readCues notes the overlap (strict: refuses it).
    @Test func overlappingLinesAreStackedAndNoted() throws {
        let output = try lyricVideo(cues: """
            id,lyric,start_at,end_at
            1,HELLO WORLD,0.5,2.5
            2,SECOND LINE,2.0,3.5
            """)
        let alone = Ink(try Tool.rgbFrame(output, at: 1.0)), both = Ink(try Tool.rgbFrame(output, at: 2.25)), second = Ink(try Tool.rgbFrame(output, at: 3.0))
        #expect(both.count > alone.count + second.count / 2, "both lines drawn: \(both.count) vs \(alone.count) and \(second.count)")
        // Stacked while both show (their centre above the first line's), then the second
        // slides down to the first line's place once alone (issue 40 §2b).
        #expect(both.centroidY < alone.centroidY - 15 && abs(second.centroidY - alone.centroidY) < 4,
                "the second line above the first, then in its place: y \(alone.centroidY), both \(both.centroidY), alone \(second.centroidY)")
        let cues = Fixtures.scratchPath("overlap.csv")
        try "lyric,start_at,end_at\nA,0.5,2.5\nB,2.0,3.5\nC,9,10\n".write(toFile: cues, atomically: true, encoding: .utf8)
        let noted = try Moonreel.runScript("av.readCues(arg[1], { duration = 5 })", arguments: [cues])
        #expect(noted.status == 0 && noted.err.contains("cues 1 (0:00.50–0:02.50) and 2 (0:02.00–0:03.50) overlap by 0.50 s")
                && noted.err.contains("cue 3 (0:09.00–0:10.00) starts after the video ends (0:05.00): it is never shown"), "\(noted.err)")
        let strict = try Moonreel.runScript("av.readCues(arg[1], { strict = true })", arguments: [cues])
        #expect(strict.status == 1 && strict.errorLines.count == 1 && strict.err.contains("overlap by 0.50 s"), "\(strict.err)")
        let check = try Moonreel.run(["cues", "check", cues, "--duration", "5"])
        #expect(check.status == 1 && check.out.split(separator: "\n").count == 2 && check.err.contains("3 cues, 0:00.50–0:10.00; 2 problems"), "\(check.out) \(check.err)")
        let clean = Fixtures.scratchPath("clean.lrc")
        try "[00:01.00]one\n[00:02.00]two\n".write(toFile: clean, atomically: true, encoding: .utf8)
        let fine = try Moonreel.run(["cues", "check", clean, "--duration", "4"])
        #expect(fine.status == 0 && fine.out.isEmpty && fine.err.contains("no problems"), "\(fine.err)")
    }

    @Test func japaneseLinesDrawRealGlyphsThatDiffer() throws {
        let output = try lyricVideo(cues: """
            id,lyric,start_at,end_at
            1,きらきら光る,0.0,1.0
            2,お空の星よ,1.0,2.0
            3,Twinkle twinkle,2.0,3.0
            """)
        let first = Ink(try Tool.rgbFrame(output, at: 0.5))
        let second = Ink(try Tool.rgbFrame(output, at: 1.5))
        let latin = Ink(try Tool.rgbFrame(output, at: 2.5))
        #expect(first.count > 300 && second.count > 300 && latin.count > 300)
        // Tofu boxes would all look alike; real glyphs differ in most of their ink.
        let overlap = zip(first.mask, second.mask).filter { $0 && $1 }.count
        #expect(Double(overlap) < 0.5 * Double(min(first.count, second.count)), "CJK lines share \(overlap) of their ink pixels")
    }

    /// Exports three seconds of grey with `lyrics` (a file named `name`) karaoke-filled in
    /// yellow; returns the count of sung (yellow) pixels in the bottom third at `times`.
    func sungPixels(lyrics: String, name: String, at times: [Double]) throws -> [Int] {
        let video = try Fixtures.solid("0x404040", seconds: 3, size: "640x360")
        let path = Fixtures.scratchPath(name)
        try lyrics.write(toFile: path, atomically: true, encoding: .utf8)
        let output = (path as NSString).deletingLastPathComponent + "/karaoke.mp4"
        try exportWithOverlay("""
            require('effects.lyrics'){ cues = av.readCues(arg[2]), renderSize = {640, 360}, shadow = false, karaokeColor = "#FFFF00" }
            """, arguments: [video, path, output])
        #expect(Ink(try Tool.rgbFrame(output, at: times[0])).count > 100, "unsung words stay white")
        return try times.map { time in
            let frame = try Tool.rgbFrame(output, at: time)
            var count = 0
            for y in 240..<360 { for x in 0..<640 {
                let p = frame.pixel(x, y)
                if p.r > 180 && p.g > 180 && p.b < 100 { count += 1 }
            } }
            return count
        }
    }

    @Test func karaokeFillFollowsTheWordTimesOfAnEnhancedLRC() throws {
        let sung = try sungPixels(lyrics: "[00:00.00]<00:00.00>SING <00:01.00>ALONG <00:02.00>NOW\n[00:03.00]\n",
                                  name: "song.lrc", at: [0.5, 1.5, 2.5])
        #expect(sung[0] > 100, "the first word is highlighted while it is sung (\(sung[0]) px)")
        #expect(sung[1] > sung[0] + 100 && sung[2] > sung[1] + 100, "the fill grows word by word: \(sung)")
    }

    @Test func karaokeFillFollowsTheSyllablesOfAnASSFile() throws {
        let ass = """
            [Script Info]
            ScriptType: v4.00+

            [Events]
            Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
            Dialogue: 0,0:00:00.00,0:00:03.00,Default,,0,0,0,,{\\k100}SING {\\k100}ALONG {\\k100}NOW
            """
        let sung = try sungPixels(lyrics: ass, name: "song.ass", at: [0.5, 1.5, 2.5])
        #expect(sung[0] > 100, "the first syllable is highlighted while it is sung (\(sung[0]) px)")
        #expect(sung[1] > sung[0] + 100 && sung[2] > sung[1] + 100, "the fill grows syllable by syllable: \(sung)")
    }

    /// Issue 25: ASS `\\kf` fills a syllable smoothly across its time, inside the word (the
    /// sung edge passes through a letter), where `\\k` lights it whole when it starts.
    @Test func karaokeKfFillsInsideAWord() throws {
        let line = { (syllables: String) in """
            [Script Info]
            ScriptType: v4.00+

            [Events]
            Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
            Dialogue: 0,0:00:00.00,0:00:04.00,Default,,0,0,0,,\(syllables)
            """ }
        // A quarter, a half and three quarters of the way through the first syllable (NN stays white).
        let swept = try sungPixels(lyrics: line("{\\kf300}MMMM {\\k100}NN"), name: "fill.ass", at: [0.75, 1.5, 2.25])
        #expect(swept[0] > 100 && swept[1] > swept[0] * 3 / 2 && swept[2] > swept[1] * 5 / 4, "the fill grows across the word: \(swept)")
        #expect(abs(Double(swept[1]) / Double(swept[2]) - 2.0 / 3) < 0.12, "in step with time: \(swept)")
        let whole = try sungPixels(lyrics: line("{\\k150}MMMM {\\k150}NN"), name: "jump.ass", at: [0.75, 1.4])
        #expect(whole[0] > 0 && whole[0] == whole[1], "\\k lights the syllable at once: \(whole)")
        #expect(abs(swept[2] - whole[0] * 3 / 4) < whole[0] / 8, "three quarters of the fill at three quarters of the time: \(swept) \(whole)")
    }

    /// Issue 25 §3: a `\\kf` line wrapped onto two lines, its stills (the engine's PNG,
    /// read back with ffmpeg) inside a character, on a character boundary, at the word
    /// boundary that ends the first line and inside a character of the second: on each line,
    /// sung (yellow) glyphs only left of the edge and unsung (white) only right of it. Kana
    /// advance one em, so the edge is 40 px × the sung characters of that line.
    @Test func karaokeStillsAreCutAtTheSungEdgeOfEachLine() throws {
        let video = try Fixtures.solid("0x404040", seconds: 4, size: "640x360")
        let cues = Fixtures.scratchPath("two-lines.ass")
        try """
            [Script Info]
            ScriptType: v4.00+

            [Events]
            Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
            Dialogue: 0,0:00:00.00,0:00:04.00,Default,,0,0,0,,{\\kf200}きらきら{\\kf200}ひかるよ
            """.write(toFile: cues, atomically: true, encoding: .utf8)
        let folder = (cues as NSString).deletingLastPathComponent
        // Sung characters at each time: 2, 2 + 12/32, 4 (the first line, then none of the
        // second), 6 + 19/32 (the 1/32 steps of `highlightedScalars`).
        let stills: [(time: Double, edges: (Double, Double))] = [(1.0, (80, 0)), (1.2, (95, 0)), (2.0, (160, 0)), (3.3, (160, 103.75))]
        let result = try Moonreel.runScript(overlayComposition("""
            require('effects.lyrics'){ cues = av.readCues(arg[2]), renderSize = {640, 360}, shadow = false,
              karaokeColor = "#FFFF00", fontSize = 40, alignment = "left", frame = {100, 120, 180, 160} }
            """) + """
            local generator = av.imageGenerator(comp, { videoComposition = vc })
            generator.overwrite = true
            for i = 4, #arg do generator:copyImage(tonumber(arg[i]), ("%s/karaoke-%s.png"):format(arg[3], arg[i])) end
            """, arguments: [video, cues, folder] + stills.map { String($0.time) })
        #expect(result.status == 0, "\(result.err)")
        for (time, edges) in stills {
            let frame = try Tool.rgbFrame("\(folder)/karaoke-\(time).png", at: 0)
            // Kana lines are 58 px apart at 40 px: the first from y 120, the second from 178.
            for (line, rows, edge) in [(1, 120..<178, edges.0), (2, 178..<240, edges.1)] {
                var sung: [Int] = [], unsung: [Int] = []
                for y in rows { for x in 80..<300 {
                    let p = frame.pixel(x, y)
                    if p.r > 180 && p.g > 180 && p.b < 100 { sung.append(x - 100) }
                    if min(p.r, p.g, p.b) > 200 { unsung.append(x - 100) }
                } }
                let found = "at \(time) s, line \(line), edge \(edge): sung x \(sung.min() ?? -1)…\(sung.max() ?? -1), unsung \(unsung.min() ?? -1)…\(unsung.max() ?? -1)"
                #expect(sung.allSatisfy { Double($0) < edge + 3 } && unsung.allSatisfy { Double($0) > edge - 3 }, "\(found)")
                #expect(edge == 0 || sung.count > 100, "\(found)")
                #expect(edge == 160 || unsung.count > 100, "\(found)")
            }
        }
    }

    /// Issue 25: bilingual lyrics — a translation (LRC: a second line with the same time tag;
    /// CSV: a translation column) is drawn under its line, smaller, and never sung; drawn
    /// whole, it is not said to overflow (its box was a line of Noto Sans CJK short by a pixel).
    @Test func translationsSitUnderTheirLinesUnsung() throws {
        for (name, lyrics) in [("bilingual.lrc", "[00:00.00]SING ALONG\n[00:00.00]chantez avec nous\n[00:03.00]\n"),
                               ("bilingual.csv", "lyric,translation,start_at,end_at\nSING ALONG,chantez avec nous,0,3\n")] {
            let video = try Fixtures.solid("0x404040", seconds: 3, size: "640x360")
            let path = Fixtures.scratchPath(name)
            try lyrics.write(toFile: path, atomically: true, encoding: .utf8)
            let output = (path as NSString).deletingLastPathComponent + "/bilingual.mp4"
            let result = try exportWithOverlay("require('effects.lyrics'){ cues = av.readCues(arg[2]), renderSize = {640, 360}, shadow = false, karaokeColor = '#FFFF00' }",
                                               arguments: [video, path, output])
            #expect(!result.err.contains("[textOverflow]"), "\(name): \(result.err)")
            let frame = try Tool.rgbFrame(output, at: 2.5)
            let rows = (240..<360).filter { y in (0..<640).contains { x in let p = frame.pixel(x, y); return min(p.r, p.g, p.b) > 180 || (p.r > 180 && p.g > 180) } }
            // Two bands of ink: the lyric (sung: yellow at 2.5 s) and, below it, the translation (white).
            let gaps = zip(rows, rows.dropFirst()).filter { $1 - $0 > 4 }
            let lower = try #require(gaps.last?.1, "\(name): a second band of text under the lyric")
            let translationInk = (lower..<360).flatMap { y in (0..<640).map { frame.pixel($0, y) } }
            #expect(translationInk.contains { min($0.r, $0.g, $0.b) > 180 }, "\(name): the translation is white")
            #expect(!translationInk.contains { $0.r > 180 && $0.g > 180 && $0.b < 100 }, "\(name): the translation is never sung")
            let upper = (rows.first ?? 0)..<(gaps.last?.0 ?? 0)
            #expect(upper.contains { y in (0..<640).contains { x in let p = frame.pixel(x, y); return p.r > 180 && p.g > 180 && p.b < 100 } }, "\(name): the lyric is sung")
        }
    }

    @Test func karaokeWithoutWordTimesSweepsEachLineEvenly() throws {
        let sung = try sungPixels(lyrics: "id,lyric,start_at,end_at\n1,SING ALONG NOW,0,3\n", name: "song.csv", at: [0.2, 1.5, 2.8])
        #expect(sung[0] < sung[1] && sung[1] < sung[2], "the fill grows over the line: \(sung)")
        #expect(sung[1] > 300 && sung[0] < sung[2] / 4, "about half sung in the middle, little at the start: \(sung)")
    }

    /// A lyrics template's part that misses every cue (a start past them) rendered a video
    /// without a word, exit 0, nothing said: the effect now warns it was given no cue.
    @Test func lyricsGivenNoCueIsAWarning() throws {
        let video = try Fixtures.solid("0x404040", seconds: 3, size: "640x360")
        let cues = Fixtures.scratchPath("early.csv")
        try "id,lyric,start_at,end_at\n1,hello there,0.2,1.5\n2,second,1.5,1.9\n".write(toFile: cues, atomically: true, encoding: .utf8)
        let output = (cues as NSString).deletingLastPathComponent + "/part.mp4"
        let result = try Moonreel.run(["run", "--set", "video=\(video)", "--set", "lyrics=\(cues)", "--set", "start=2", "--set", "output=\(output)",
                                       Moonreel.checkout + "/scripts/examples/lyrics_template.lua"])
        #expect(result.status == 0 && result.err.contains("lyrics_template.lua:41: effect \"lyrics\": it was given no cue, so it draws no lyric")
                && result.err.contains("[effectAdjusted]"), "\(result.err)")
    }

    @Test func parameterErrorsNameTheEffectAndTheParameter() throws {
        let result = try Moonreel.runScript("""
            local lyrics = require "effects.lyrics"
            lyrics{ cues = {}, renderSize = {640, 360}, fontSize = "big" }
            """, name: "main.lua")
        #expect(result.status == 1)
        #expect(result.err.contains("main.lua:2: effect \"lyrics\": parameter fontSize must be a number in 1…1000, got \"big\""), "\(result.err)")
    }

    @Test func watermarkLogoSitsInItsCornerWithItsOpacity() throws {
        let video = try Fixtures.solid("0x404040", seconds: 1, size: "640x360")
        let logo = Fixtures.scratchPath("logo.png")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=0xFF0000:size=100x50", "-frames:v", "1", logo])
        let output = (logo as NSString).deletingLastPathComponent + "/stamped.mp4"
        try exportWithOverlay("""
            require("effects.watermark"){ renderSize = {640, 360}, logo = av.image(arg[2]), logoOpacity = 0.5, text = "© 2026 Moonreel" }
            """, arguments: [video, logo, output])
        let frame = try Tool.rgbFrame(output, at: 0.5)
        // margin = floor(360 × 0.03) = 10; logo height = floor(360 × 0.1) = 36, width 72.
        let inside = frame.mean(x: 20, y: 18, width: 52, height: 20)
        #expect(abs(inside.r - (0.5 * 255 + 0.5 * 64)) < 8, "red \(inside.r)")
        #expect(abs(inside.g - 32) < 8 && abs(inside.b - 32) < 8, "green \(inside.g) blue \(inside.b)")
        let outside = frame.mean(x: 90, y: 18, width: 20, height: 20)
        #expect(abs(outside.r - 64) < 4 && abs(outside.g - 64) < 4)
        let above = frame.mean(x: 20, y: 2, width: 52, height: 6)
        #expect(abs(above.r - 64) < 4, "logo starts below the margin")
        // The copyright line sits at the bottom right.
        let notice = Ink(frame)
        #expect(notice.count > 100 && notice.centroidX > 480 && notice.centroidY > 320)
    }
}
