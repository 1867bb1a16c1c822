import Foundation
import Testing
import TestSupport

/// Issue 40 §2: the silent wrongs a first week of real use found, each read back from the
/// output as the user would see it (OCR of the frame, pixels, ffprobe), not from a return value.
@Suite struct DoneMeansRightTests {
    static let portrait = Moonreel.checkout + "/Tests/Fixtures/real/01_iphone4s_portrait_h264_rot90.mov"
    static let lyricsExample = Moonreel.checkout + "/scripts/examples/lyrics.lua"

    /// The words tesseract reads where the lyrics are at `seconds` (from half way down to the
    /// bottom fifth: the portrait clip is 9:16, so the lines keep out of the fifth that
    /// vertical-video apps cover): scaled up 3×,
    /// and the text — white, or the karaoke's yellow, both full red — made black on white
    /// (the grey wall of the clip is below the threshold).
    static func wordsRead(in video: String, at seconds: Double) throws -> [String] {
        let folder = (Fixtures.scratchPath("ocr") as NSString).deletingLastPathComponent
        let png = folder + "/lyric.png"
        try Tool.ffmpeg(["-ss", String(seconds), "-i", video, "-frames:v", "1",
                         "-vf", "crop=iw:ih*3/10:0:ih/2,scale=iw*3:ih*3:flags=lanczos,format=gbrp,extractplanes=r,lut=y='if(gt(val,235),0,255)'", png])
        let result = try Tool.run("tesseract", [png, "-", "--psm", "6"])
        return result.out.lowercased().split { !$0.isLetter && $0 != "-" }.map(String.init)
    }

    /// §2a: a long lyric over a portrait phone clip lost its last words behind an ellipsis,
    /// exit 0, nothing said. It is now drawn smaller until it fits its two lines: every word
    /// is on the frame, and no warning.
    @Test func aLongLyricOnPortraitVideoKeepsEveryWord() throws {
        let cues = Fixtures.scratchPath("lyrics.csv")
        try "id,lyric,start_at,end_at\n1,I keep calling out your name across the never-ending summer night,0.2,2.0\n"
            .write(toFile: cues, atomically: true, encoding: .utf8)
        let output = Fixtures.scratchPath("portrait.mp4")
        let result = try Moonreel.run(["run", Self.lyricsExample, Self.portrait, cues, output])
        #expect(result.status == 0, "\(result.err)")
        #expect(!result.err.contains("warning"), "it fits: \(result.err)")
        #expect(result.err.contains("moonreel: note: ") && result.err.contains("text layer \"cue 1 (\(cues):2)\" draws \"I keep calling") && result.err.contains("(fontSize 22) so that it fits [textShrunk]"),
                "the smaller size is said: \(result.err)")
        let words = try Self.wordsRead(in: output, at: 1.0)
        for word in ["keep", "calling", "out", "your", "name", "across", "summer", "night"] {
            #expect(words.contains(word), "\"\(word)\" is on the frame; read: \(words)")
        }
        #expect(words.contains { $0.hasPrefix("never") }, "read: \(words)")
    }

    /// A lyric with a heart drew the words before it twice ("we love we love <3 you") and a
    /// numeric character reference as written ("&#38;"): read back by OCR, the line is drawn
    /// as written, once.
    @Test func aLyricWithAHeartIsDrawnOnce() throws {
        let cues = Fixtures.scratchPath("love.srt")
        try "1\n00:00:00,200 --> 00:00:02,000\nwe love <3 you &#38; Tom\n".write(toFile: cues, atomically: true, encoding: .utf8)
        let output = Fixtures.scratchPath("love.mp4")
        let result = try Moonreel.run(["run", Self.lyricsExample, Self.portrait, cues, output])
        #expect(result.status == 0 && !result.err.contains("warning"), "\(result.err)")
        let folder = (output as NSString).deletingLastPathComponent
        try Tool.ffmpeg(["-ss", "1", "-i", output, "-frames:v", "1",
                         "-vf", "crop=iw:ih*3/10:0:ih/2,scale=iw*3:ih*3:flags=lanczos,format=gbrp,extractplanes=r,lut=y='if(gt(val,235),0,255)'", folder + "/love.png"])
        let read = try Tool.run("tesseract", [folder + "/love.png", "-", "--psm", "6"]).out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(read == "we love <3 you & Tom", "read: \(read)")
    }

    /// A text layer's animated strings are checked as its own is: a title switching to
    /// "CONGRATULATIONS GRADUATES" ran off both sides of a portrait frame, and an emoji value
    /// drew boxes, without a word (only the model string, "GO", was checked, and said to
    /// overflow its 80 px box, drawn whole: its line's spacing passed the box, not its glyphs).
    /// Read back: the long value's letters reach both edges of the frame.
    @Test func animatedStringsAreCheckedAsTheLayersOwn() throws {
        let video = try Fixtures.solid("0x202020", seconds: 3, size: "360x640")
        let output = Fixtures.scratchPath("title.mp4")
        let result = try DiagnosticsTests.exportOverlay(over: video, to: output, size: (360, 640), seconds: 3, name: "title.lua", layers: """
            local title = av.textLayer{ string = "GO", fontSize = 60, frame = {0, 320, 360, 80}, alignmentMode = "center", foregroundColor = "white" }
            title:addAnimation(av.keyframeAnimation{ keyPath = "string", values = {"GO", "CONGRATULATIONS GRADUATES", "🎉"},
                                                     keyTimes = {0, 0.33, 0.66}, calculationMode = "discrete", duration = 3 }, "words")
            parent:addSublayer(title)
            """)
        #expect(result.status == 0, "\(result.err)")
        let warnings = result.errorLines.filter { $0.contains("warning") }
        #expect(warnings.count == 2, "\(result.err)")
        #expect(warnings.contains { $0.contains("title.lua:6: a text layer at 0, 320 (360×80) draws \"CONGRATULATIONS GRADUATES\" at 60 px past its 360×80 box") && $0.hasSuffix("[textOverflow]") },
                "\(result.err)")
        #expect(warnings.contains { $0.contains("draws \"🎉\" with 🎉 U+1F389 as boxes") && $0.hasSuffix("[glyphMissing]") }, "\(result.err)")
        let frame = try Tool.rgbFrame(output, at: 1.5)
        let lit = { (columns: Range<Int>) in columns.contains { x in (200..<440).contains { y in frame.pixel(x, y).r > 200 } } }
        #expect(lit(0..<4) && lit(356..<360), "the long value is cut at both edges of the frame")
    }

    /// A ticker crawling for ever over a video longer than one crawl is not said to rest past
    /// the frame: the last look at its first pass was taken as held to the end, so the
    /// bundled example warned (layerOffFrame) and --strict wrote nothing (found by review).
    @Test func aTickerCrawlingOverALongVideoIsNotSaidToRest() throws {
        let clip = try Fixtures.clip(seconds: 40, rate: "10")
        let output = Fixtures.scratchPath("ticker.mp4")
        let result = try DiagnosticsTests.exportOverlay(over: clip, to: output, size: (320, 240), seconds: 40, name: "ticker.lua", layers: """
            parent:addSublayer(require("effects.ticker"){ renderSize = { 320, 240 }, text = "Moonreel news ticker" })
            """)
        #expect(result.status == 0 && !result.err.contains("layerOffFrame"), "\(result.err)")
    }

    /// A watermark's logo wider than the frame leaves is drawn to fit it, with a note: a 6:1
    /// wordmark on a portrait frame ran past its edge, its end cut off unsaid. And its
    /// copyright line in the logo's bottom corner sits beside the logo, not over it (found by
    /// review). Read back: the wordmark's blue end is inside the frame; no text over the logo.
    @Test func aWatermarksLogoFitsTheFrameAndItsLineKeepsClearOfIt() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let wordmark = folder + "/wordmark.png", dot = folder + "/dot.png"
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=orange:s=1200x200,format=rgba,drawbox=x=0:y=0:w=1200:h=200:c=blue:t=20", "-frames:v", "1", wordmark])
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=red:s=100x100", "-frames:v", "1", dot])
        let portrait = try Fixtures.solid("0x000000", seconds: 1, size: "360x640")
        let wide = try DiagnosticsTests.exportOverlay(over: portrait, to: folder + "/wide.mp4", size: (360, 640), name: "wide.lua", arguments: [wordmark], layers: """
            parent:addSublayer(require("effects.watermark"){ renderSize = { 360, 640 }, logo = av.image(arg[3]), logoOpacity = 1 })
            """)
        #expect(wide.status == 0 && wide.err.contains("the logo is 384 px wide at logoHeight 0.1, more than the 322 px the frame leaves: it is drawn 322 px wide")
                && wide.err.contains("[effectAdjusted]"), "\(wide.err)")
        let top = try Tool.rgbFrame(folder + "/wide.mp4", at: 0.5)
        let blueEnd = (300..<360).filter { x in (19..<60).contains { y in let p = top.pixel(x, y); return p.b > 200 && p.r < 80 } }.max() ?? 0
        #expect(blueEnd > 320 && blueEnd < 345, "the wordmark's right border ends inside the frame: at x \(blueEnd)")

        let landscape = try Fixtures.solid("0x000000", seconds: 1, size: "1280x720")
        let corner = try DiagnosticsTests.exportOverlay(over: landscape, to: folder + "/corner.mp4", size: (1280, 720), name: "corner.lua", arguments: [dot], layers: """
            parent:addSublayer(require("effects.watermark"){ renderSize = { 1280, 720 }, logo = av.image(arg[3]), logoCorner = "bottomRight", text = "© 2026 Example Studio" })
            """)
        #expect(corner.status == 0 && corner.err.isEmpty, "\(corner.err)")
        let frame = try Tool.rgbFrame(folder + "/corner.mp4", at: 0.5)
        // The logo: 72 px square, 21 px in from the right and bottom edges (x 1187…1259).
        let text = (600..<1187).filter { x in (640..<700).contains { y in let p = frame.pixel(x, y); return p.g > 200 && p.b > 200 } }
        let overLogo = (1187..<1259).filter { x in (627..<699).contains { y in let p = frame.pixel(x, y); return p.g > 150 } }
        #expect(!text.isEmpty && (text.max() ?? 0) < 1170 && overLogo.isEmpty, "text up to x \(text.max() ?? 0); text over the logo at \(overLogo.prefix(5))")
    }

    /// A layer timed to appear at or after the end is never seen, and said: a logo bug with a
    /// 6 s delay over a 3 s clip exported without it, nothing said (found by review). Read
    /// back: no red of the logo in the last frame; with a 1 s delay it is there.
    @Test func aLayerTimedPastTheEndIsSaidNeverSeen() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let dot = folder + "/dot.png"
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=red:s=100x100", "-frames:v", "1", dot])
        let clip = try Fixtures.solid("0x000000", seconds: 3, size: "640x360")
        var reds: [Int] = []
        for delay in [6, 1] {
            let output = folder + "/bug-\(delay).mp4"
            let result = try DiagnosticsTests.exportOverlay(over: clip, to: output, size: (640, 360), seconds: 3, name: "bug.lua", arguments: [dot], layers: """
                parent:addSublayer(require("effects.logoBug"){ renderSize = { 640, 360 }, logo = av.image(arg[3]), delay = \(delay) })
                """)
            let warned = result.err.contains("bug.lua:6: a picture layer at 6 s would first be seen at or after the end (3 s): it is never seen") && result.err.contains("[rangeClipped]")
            #expect(result.status == 0 && warned == (delay == 6), "\(delay) s: \(result.err)")
            let frame = try Tool.rgbFrame(output, at: 2.9)
            reds.append((0..<640).reduce(0) { sum, x in sum + (0..<360).filter { y in let p = frame.pixel(x, y); return p.r > 150 && p.g < 80 }.count })
        }
        #expect(reds[0] == 0 && reds[1] > 500, "red pixels of the logo at the end: \(reds)")
    }

    /// Effects place things as asked or say otherwise (found by review): a callout's label of
    /// two lines drew its second under the box, dark on the video, and a box asked past the
    /// frame was moved in unsaid; a picture-in-picture rect past the frame ran off its edges.
    /// Read back: the label's dark ink lies within the white box's rows.
    @Test func effectsPlaceAsAskedOrSaySo() throws {
        let grey = try Fixtures.solid("0x808080", seconds: 2, size: "1280x720")
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let twoLines = try DiagnosticsTests.exportOverlay(over: grey, to: folder + "/callout.mp4", size: (1280, 720), seconds: 2, name: "callout.lua", layers: """
            parent:addSublayer(require("effects.callout"){ renderSize = { 1280, 720 }, text = "Our new office\\nopens in May", target = { 0.5, 0.5 }, start = 0, duration = 2 })
            """)
        #expect(twoLines.status == 0 && twoLines.err.isEmpty, "\(twoLines.err)")
        let frame = try Tool.rgbFrame(folder + "/callout.mp4", at: 1)
        let rows = { (test: (Int, Int, Int) -> Bool) in (0..<720).filter { y in (0..<1280).contains { x in let p = frame.pixel(x, y); return test(p.r, p.g, p.b) } } }
        let (white, dark) = (rows { min($0, $1, $2) > 240 }, rows { max($0, $1, $2) < 60 })
        #expect(!dark.isEmpty && (white.min() ?? 720) < (dark.min() ?? 0) && (dark.max() ?? 720) < (white.max() ?? 0),
                "the label's rows \(dark.min() ?? -1)…\(dark.max() ?? -1) lie inside the box's \(white.min() ?? -1)…\(white.max() ?? -1)")

        let moved = try DiagnosticsTests.exportOverlay(over: grey, to: folder + "/moved.mp4", size: (1280, 720), seconds: 2, name: "moved.lua", layers: """
            parent:addSublayer(require("effects.callout"){ renderSize = { 1280, 720 }, text = "Our new office", target = { 0.5, 0.5 }, box = { 0.97, 0.1 }, start = 0, duration = 2 })
            """)
        #expect(moved.err.contains("the box asked at 1242, 72 would reach past the frame: it is drawn at") && moved.err.contains("[effectAdjusted]"), "\(moved.err)")

        let inset = try DiagnosticsTests.exportOverlay(over: grey, to: folder + "/inset.mp4", size: (1280, 720), seconds: 2, name: "inset.lua", layers: """
            parent:addSublayer(require("effects.pipFrame"){ renderSize = { 1280, 720 }, rect = { 0.7, 0.6, 0.5, 0.5 } })
            """)
        #expect(inset.status != 0 && inset.err.contains("rect {0.7, 0.6, 0.5, 0.5} reaches past the frame"), "\(inset.err)")
    }

    /// A lower third's name or role with a line break is drawn whole in its bar: the bar held
    /// one line each, and its window cut the role's second line off (found by review). Read
    /// back over grey: every row of white text lies within the dark bar's rows.
    @Test func aLowerThirdOfSeveralLinesHoldsThemAll() throws {
        let grey = try Fixtures.solid("0x808080", seconds: 2, size: "1280x720")
        let output = Fixtures.scratchPath("lower.mp4")
        let result = try DiagnosticsTests.exportOverlay(over: grey, to: output, size: (1280, 720), seconds: 2, name: "lower.lua", layers: """
            parent:addSublayer(require("effects.lowerThird"){ renderSize = { 1280, 720 }, name = "Ana Ribeiro", role = "Director of Photography\\nLisbon, Portugal", start = 0, duration = 2 })
            """)
        #expect(result.status == 0, "\(result.err)")
        let frame = try Tool.rgbFrame(output, at: 1)
        let rows = { (test: (Int, Int, Int) -> Bool) in (360..<720).filter { y in (0..<640).contains { x in let p = frame.pixel(x, y); return test(p.r, p.g, p.b) } } }
        let (text, bar) = (rows { min($0, $1, $2) > 200 }, rows { max($0, $1, $2) < 70 })
        #expect(!text.isEmpty && (bar.min() ?? 720) < (text.min() ?? 0) && (text.max() ?? 720) < (bar.max() ?? 0),
                "text rows \(text.min() ?? -1)…\(text.max() ?? -1) within the bar's \(bar.min() ?? -1)…\(bar.max() ?? -1)")
        // Its second line is drawn: two bands of text under the name, not one.
        let bands = zip(text, text.dropFirst()).filter { $1 - $0 > 2 }.count + 1
        #expect(bands >= 3, "name, role and its second line: \(bands) bands of text")
    }

    /// A weight the font lacks is drawn at its nearest face, and said: Noto Sans CJK (the
    /// Regular and Bold of fonts-noto-cjk) drew "thin" as regular, unsaid. Read back: the
    /// thin line's ink is the regular line's, pixel for pixel as near as an encoder keeps it.
    @Test func aWeightTheFontLacksIsANote() throws {
        let video = try Fixtures.solid("0x202020", seconds: 1, size: "640x360")
        let output = Fixtures.scratchPath("weights.mp4")
        let result = try DiagnosticsTests.exportOverlay(over: video, to: output, size: (640, 360), name: "weights.lua", layers: """
            for i, weight in ipairs({ "thin", "normal", "bold" }) do
              parent:addSublayer(av.textLayer{ string = "Hamburgefonstiv", font = "Noto Sans CJK JP", fontWeight = weight, fontSize = 40,
                                               foregroundColor = "white", frame = {0, 360 - 100 * i, 640, 80} })
            end
            """)
        #expect(result.status == 0 && result.errorLines.count == 1, "\(result.err)")
        #expect(result.err.contains("weights.lua:7: a text layer at 0, 260 (640×80) asks for \"Noto Sans CJK JP\" at fontWeight 100 (thin), which is not installed: it is drawn at 400 (regular)")
                && result.err.contains("[fontSubstituted]") && result.err.contains("moonreel: note: "), "\(result.err)")
        let frame = try Tool.rgbFrame(output, at: 0.5)
        let ink = { (rows: Range<Int>) in rows.reduce(0) { sum, y in sum + (0..<640).filter { frame.pixel($0, y).r > 128 }.count } }
        let (thin, regular, bold) = (ink(20..<100), ink(120..<200), ink(220..<300))
        #expect(regular > 0 && abs(thin - regular) * 50 < regular && bold > regular * 5 / 4, "ink: thin \(thin), regular \(regular), bold \(bold)")
    }

    /// A picture with a transparent part shows the background there: a PNG logo inserted as
    /// a clip drew its hidden colours instead (the transparent half of a red-and-clear PNG
    /// came out red over a green background), unsaid. Read back with ffmpeg.
    @Test func aTransparentPictureShowsTheBackgroundThrough() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let picture = folder + "/half.png", output = folder + "/half.mp4"
        try Tool.ffmpeg(["-f", "lavfi", "-i", "color=red:s=320x240,format=rgba,geq=r=255:g=0:b=0:a='if(lt(X,160),255,0)'", "-frames:v", "1", picture])
        let result = try Moonreel.runScript("""
            local comp = av.composition()
            local photo = av.asset(arg[1])
            comp:addMutableTrack("video"):insertTimeRange(av.range(0, 1), photo:tracksWithMediaType("video")[1], 0)
            local vc = av.videoComposition(comp)
            vc.instructions[1].backgroundColor = "#00FF00"
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL, session.videoComposition = arg[2], vc
            assert(session:export())
            """, arguments: [picture, output])
        #expect(result.status == 0, "\(result.err)")
        let frame = try Tool.rgbFrame(output, at: 0.5)
        let (left, right) = (frame.pixel(80, 120), frame.pixel(240, 120))
        #expect(left.r > 230 && left.g < 30, "the opaque half is red: \(left)")
        #expect(right.g > 230 && right.r < 30, "the background shows through the clear half: \(right)")
    }

    /// A file cut at fileLengthLimit early on ends its picture before its sound: the encoder
    /// holds pictures back while sound is written as it comes. The warning gave one length
    /// (the sound's) where the picture stopped 1.4 s earlier; it now says both, as ffprobe reads them.
    @Test func aFileCutAtItsLengthLimitSaysWhereItsPictureAndSoundEnd() throws {
        let clip = Fixtures.scratchPath("pattern.mp4")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "3",
                         "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "2", "-shortest", clip])
        let output = Fixtures.scratchPath("limited.mp4")
        let result = try Moonreel.runScript("""
            local session = av.exportSession(av.asset(arg[1]), "HighestQuality")
            session.outputURL, session.fileLengthLimit = arg[2], 60000
            assert(session:export())
            """, arguments: [clip, output])
        let warning = try #require(result.errorLines.first { $0.hasSuffix("[lengthLimited]") }, "\(result.err)")
        let said = warning.components(separatedBy: "its picture ends at ").dropFirst().first?.split(separator: " ")
        let (picture, gap) = (said.flatMap { Double($0[0]) } ?? -1, said.flatMap { $0.count > 2 ? Double($0[2]) : nil } ?? -1)
        let lengths = try Tool.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,duration", "-of", "csv=p=0", output]).out
            .split(separator: "\n").reduce(into: [String: Double]()) { found, line in
                let fields = line.split(separator: ",")
                if fields.count == 2 { found[String(fields[0])] = Double(fields[1]) }
            }
        let (video, audio) = (lengths["video"] ?? 0, lengths["audio"] ?? 0)
        #expect(audio - video > 1 && abs(picture - video) < 0.002 && abs(picture + gap - audio) < 0.002, "\(warning); ffprobe: \(lengths)")
    }

    /// A lyric too long for two lines even at the smallest size is cut — and that is a
    /// `textTruncated` warning naming the cue and its line in the CSV; `--strict` writes nothing.
    @Test func aLyricThatCannotFitIsAWarningNamingItsCue() throws {
        let cues = Fixtures.scratchPath("lyrics.csv")
        let long = String(repeating: "calling out your name across the never-ending summer night ", count: 4)
        try "id,lyric,start_at,end_at\n7,ok,0.1,0.5\n9,\(long),0.6,2.0\n".write(toFile: cues, atomically: true, encoding: .utf8)
        let output = Fixtures.scratchPath("cut.mp4")
        let result = try Moonreel.run(["run", Self.lyricsExample, Self.portrait, cues, output])
        #expect(result.status == 0, "\(result.err)")
        let warnings = result.errorLines.filter { $0.contains("[textTruncated]") }
        #expect(warnings.count == 1, "\(result.err)")
        #expect(warnings.first?.contains("text layer \"cue 9 (\(cues):3)\" cuts \"calling out your name") == true, "\(result.err)")
        #expect(warnings.first?.contains("to 2 lines at 13 px, the smallest its minimumScaleFactor allows (fontSize 22)") == true, "\(result.err)")
        // Half way through the cue, about half of what is drawn is sung: the first of its two
        // lines (it raced to the cut and waited there: 570 of 573 text pixels were sung).
        // Counted by clear colours only, so the share of pixels is a rough one.
        let frame = try Tool.rgbFrame(output, at: 1.3)
        var (sung, unsung) = (0, 0)
        for y in frame.height / 2..<frame.height * 4 / 5 {
            for x in 0..<frame.width {
                let pixel = frame.pixel(x, y)
                guard pixel.r > 235 else { continue }
                if pixel.b < 100 { sung += 1 } else if pixel.b > 220 { unsung += 1 }
            }
        }
        let share = Double(sung) / Double(max(sung + unsung, 1))
        #expect(share > 0.15 && share < 0.85, "sung \(sung), unsung \(unsung) pixels")
        let strict = try Moonreel.run(["run", "--strict", Self.lyricsExample, Self.portrait, cues, output + ".strict.mp4"])
        // Refused at the export's line, naming the line that made the layer (the effect's call).
        #expect(strict.status == 1 && strict.err.contains("lyrics.lua:37: strict: \(Self.lyricsExample):27: text layer \"cue 9"), "\(strict.err)")
        #expect(!FileManager.default.fileExists(atPath: output + ".strict.mp4"))
    }
}

extension DoneMeansRightTests {
    /// §2f: Ctrl-C after two rows had written their outputs reported them "interrupted" and
    /// "0 done". A row whose output was committed is done.
    @Test func aRowWhoseOutputWasCommittedIsDoneAfterCtrlC() throws {
        let clip = try Fixtures.clip(seconds: 2)
        let job = try BatchTests.Job(rows: "id,clip,duration\nr1,\(clip),0.5\nr2,\(clip),0.5\n")
        // The rows linger after exporting, so the interrupt comes after both commits; only
        // once the output is there (not in the batch's pre-check, a dry run), since the wait
        // spends CPU.
        let linger = "\nlocal made = io.open(p.output)\nif made then made:close() local t = os.clock() while os.clock() - t < 20 do end end\n"
        try (BatchTests.template + linger).write(toFile: job.template, atomically: true, encoding: .utf8)
        let batch = Process()
        batch.executableURL = URL(fileURLWithPath: Moonreel.executable)
        batch.arguments = ["batch", job.template, job.rows, "--out", job.folder + "/out/{id}.mp4", "--jobs", "2", "--report", job.folder + "/report.json"]
        let errors = Pipe()
        (batch.standardOutput, batch.standardError) = (Pipe(), errors)
        try batch.run()
        defer { if batch.isRunning { kill(batch.processIdentifier, SIGKILL) } }
        let deadline = Date().addingTimeInterval(60)
        while !(FileManager.default.fileExists(atPath: job.output("r1")) && FileManager.default.fileExists(atPath: job.output("r2"))), Date() < deadline {
            usleep(100_000)
        }
        usleep(300_000)
        kill(batch.processIdentifier, SIGINT)
        batch.waitUntilExit()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(said.contains("2 done"), "\(said)")
        let rows = try #require(try job.report()["rows"] as? [[String: Any]])
        #expect(rows.map { $0["status"] as? String } == ["done", "done"], "\(rows)")
    }
}

extension DoneMeansRightTests {
    /// The first and last rows holding text (bright pixels) of the frame at `seconds`.
    static func textRows(_ video: String, at seconds: Double) throws -> ClosedRange<Int>? {
        let frame = try Tool.rgbFrame(video, at: seconds)
        let rows = (0..<frame.height).filter { y in (0..<frame.width).filter { frame.pixel($0, y).r > 200 }.count > 3 }
        guard let first = rows.first, let last = rows.last else { return nil }
        return first...last
    }

    /// §2b: cue 4 starting at 3.0 while cue 3 ends at 3.6 stayed in the upper slot, in the
    /// middle of the picture, for its whole time. Once alone, it slides down to the first slot.
    @Test func anOverlappingLineGoesToItsSlotOnceAlone() throws {
        let clip = try Fixtures.solid("black", seconds: 6, size: "640x360")
        let cues = Fixtures.scratchPath("lyrics.csv")
        try "id,lyric,start_at,end_at\n3,Third line,1.0,3.6\n4,Fourth line,3.0,5.0\n".write(toFile: cues, atomically: true, encoding: .utf8)
        let output = Fixtures.scratchPath("overlap.mp4")
        let result = try Moonreel.run(["run", Self.lyricsExample, clip, cues, output])
        #expect(result.status == 0, "\(result.err)")
        let alone3 = try #require(try Self.textRows(output, at: 2.0))
        let both = try #require(try Self.textRows(output, at: 3.3))
        let alone4 = try #require(try Self.textRows(output, at: 4.5))
        #expect(both.lowerBound < alone3.lowerBound - 20, "both shown: the fourth above the third (\(both) vs \(alone3))")
        #expect(abs(alone4.lowerBound - alone3.lowerBound) <= 3 && abs(alone4.upperBound - alone3.upperBound) <= 3,
                "alone, the fourth line is where the third was: \(alone4) vs \(alone3)")
    }
}

extension DoneMeansRightTests {
    /// §2d: a CSV row with an empty name rendered "For ", exit 0. A required string is not
    /// "" (unless the template says `allowEmpty = true`), and the batch's check names the row.
    @Test func aRequiredTextIsNotEmpty() throws {
        let template = Fixtures.scratchPath("greeting.lua")
        try """
            local p = av.parameters{
              { name = "name", type = "string", required = true },
              { name = "note", type = "string", required = true, allowEmpty = true },
              { name = "output", type = "string", required = true },
            }
            print("For " .. p.name .. p.note)
            """.write(toFile: template, atomically: true, encoding: .utf8)
        let empty = try Moonreel.run(["run", "--set", "name=", "--set", "note=", "--set", "output=x.mp4", template])
        #expect(empty.status == 1 && empty.out.isEmpty, "\(empty.out)")
        #expect(empty.err.contains("parameter name is required and is empty"), "\(empty.err)")
        let given = try Moonreel.run(["run", "--set", "name=Ana", "--set", "note=", "--set", "output=x.mp4", template])
        #expect(given.status == 0 && given.out == "For Ana\n", "allowEmpty takes \"\": \(given.err)")
        let folder = (template as NSString).deletingLastPathComponent
        try "id,name,note\n1,Ana,\n2,,\n".write(toFile: folder + "/rows.csv", atomically: true, encoding: .utf8)
        let batch = try Moonreel.run(["batch", template, folder + "/rows.csv", "--out", folder + "/{id}.mp4"])
        #expect(batch.status == 1 && batch.err.contains("row 2:") && batch.err.contains("parameter name is required and is empty") && !batch.err.contains("row 1:"),
                "\(batch.err)")
    }

    /// §2q: a transcript file with nothing in it rendered no captions at all, "done".
    @Test func anEmptyCueFileIsAWarning() throws {
        let cues = Fixtures.scratchPath("empty.srt")
        try "".write(toFile: cues, atomically: true, encoding: .utf8)
        let loose = try Moonreel.runScript("print(#av.readCues(arg[1]))", arguments: [cues])
        #expect(loose.status == 0 && loose.out == "0\n", "\(loose.err)")
        #expect(loose.errorLines.count == 1 && loose.err.contains("holds no cue") && loose.err.contains("[cuesEmpty]"), "\(loose.err)")
        let strict = try Moonreel.runScript("print(#av.readCues(arg[1]))", arguments: [cues], options: ["--strict"])
        #expect(strict.status == 1 && strict.err.contains("strict: \(cues) holds no cue"), "\(strict.err)")
    }
}

extension DoneMeansRightTests {
    /// §2r: values every row shares come with `--set`; a row's own column wins.
    @Test func batchSetGivesEveryRowAValue() throws {
        let clip = try Fixtures.clip(seconds: 3)
        let job = try BatchTests.Job(rows: "id,clip\nr1,\(clip)\n")
        try "id,clip\nr1,\(clip)\nr2,\(clip)\n".write(toFile: job.rows, atomically: true, encoding: .utf8)
        let shared = try job.batch(["--set", "duration=0.5"])
        #expect(shared.status == 0, "\(shared.err)")
        for row in ["r1", "r2"] { #expect(abs(try Tool.ffprobe(job.output(row)).duration - 0.5) < 0.08, "\(row)") }
        let own = try BatchTests.Job(rows: "id,clip,duration\nr1,\(clip),1.5\n")
        #expect(try own.batch(["--set", "duration=0.5"]).status == 0)
        #expect(abs(try Tool.ffprobe(own.output("r1")).duration - 1.5) < 0.08, "the row's own value wins")
        let unknown = try own.batch(["--set", "colour=red"])
        #expect(unknown.status == 1 && unknown.err.contains("--set colour:") && unknown.err.contains("declares no parameter colour"), "\(unknown.err)")
    }
}

extension DoneMeansRightTests {
    /// `av.cutToBeats` shows a clip again from its start when what is left of it is too short
    /// for the next stretch: a montage repeated its shots and nothing said so. A note names
    /// each clip once, at the time its footage first repeats.
    @Test func aMontageThatRepeatsAClipSaysSo() throws {
        let (red, blue) = (try Fixtures.solid("red", seconds: 2, tone: nil), try Fixtures.solid("blue", seconds: 2, tone: nil))
        let result = try Moonreel.runScript("""
            local comp = av.cutToBeats({ av.asset(arg[1]), av.asset(arg[2]) }, { 1, 2, 3, 4, 5 }, { duration = 6 })
            print(comp.duration)
            """, arguments: [red, blue])
        #expect(result.status == 0 && result.out == "6.0\n", "\(result.out)\(result.err)")
        let notes = result.errorLines.filter { $0.contains("is shown again from the start of its range") }
        #expect(notes.count == 2 && notes[0].contains("test.lua:1: clip 1 (") && notes[0].contains("at 4 s") && notes[1].contains("clip 2 (") && notes[1].contains("at 5 s"),
                "\(result.err)")
    }

    /// Beats past the montage's end were dropped without a word: beats at 1, 2, 9 and 12 s
    /// over 6 s of music made a 6 s montage, and the cuts at 9 and 12 s vanished. They are a
    /// cutLeftOut note now, naming them; the montage is the music's length, cut at 1 and 2 s.
    @Test func beatsPastTheMontagesEndAreSaid() throws {
        let output = Fixtures.scratchPath("montage.mp4")
        let red = try Fixtures.solid("red", seconds: 3, tone: nil), blue = try Fixtures.solid("blue", seconds: 3, tone: nil)
        let music = try Fixtures.clip(seconds: 3)
        let result = try Moonreel.runScript("""
            local comp, vc, mix = av.cutToBeats({ av.asset(arg[2]), av.asset(arg[3]) }, { 1, 2, 9, 12, 13, 14 }, { music = av.asset(arg[4]) })
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL, session.videoComposition, session.audioMix = arg[1], vc, mix
            assert(session:export())
            """, arguments: [output, red, blue, music])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("test.lua:1: no cut at 9 s, 12 s, 13 s and 1 more: each lies past the montage's end (3 s)") && result.err.contains("[cutLeftOut]"), "\(result.err)")
        #expect(abs(try Tool.ffprobe(output).duration - 3) < 0.1)
        for (seconds, colour) in [(0.5, "red"), (1.5, "blue"), (2.5, "red")] {
            let seen = BeatEditTests.dominant(try Tool.rgbFrame(output, at: seconds).mean(x: 0, y: 0, width: 320, height: 240))
            #expect(seen == colour, "at \(seconds) s: \(seen)")
        }
    }

    /// §2c: beats from 0.003 s gave clip 1 one frame, then clip 2 until the next beat. The
    /// cut that short is left out with a note: clip 1 fills the start up to the next beat.
    /// An empty beat list said "clip 1 … shorter than the 8 s"; it now says the list is empty.
    @Test func aBeatJustAfterTheStartDoesNotFlashAClip() throws {
        let output = Fixtures.scratchPath("montage.mp4")
        let red = try Fixtures.solid("red", seconds: 3, tone: nil), blue = try Fixtures.solid("blue", seconds: 3, tone: nil)
        let result = try Moonreel.runScript("""
            local comp, vc = av.cutToBeats({ av.asset(arg[2]), av.asset(arg[3]) }, { 0.003, 1, 2 }, { duration = 3 })
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL, session.videoComposition = arg[1], vc
            assert(session:export())
            """, arguments: [output, red, blue])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("test.lua:1: no cut at 0.003 s: each would leave") && result.err.contains("[cutLeftOut]"), "\(result.err)")
        for (seconds, colour) in [(0.0, "red"), (0.5, "red"), (1.2, "blue"), (2.2, "red")] {
            let seen = BeatEditTests.dominant(try Tool.rgbFrame(output, at: seconds).mean(x: 0, y: 0, width: 320, height: 240))
            #expect(seen == colour, "at \(seconds) s: \(seen)")
        }
        let empty = try Moonreel.runScript("av.cutToBeats({ av.asset(arg[1]) }, {}, { duration = 8 })", arguments: [red])
        #expect(empty.status == 1 && empty.err.contains("the beat list is empty, so there is nothing to cut on") && !empty.err.contains("shorter than"),
                "\(empty.err)")
    }
}

extension DoneMeansRightTests {
    /// A 12 s talk (grey picture): 220 Hz "speech" at about −15 dBFS in four phrases, 0.5–2.2,
    /// 3.0–5.5, 6.4–8.0 and 9.1–11.0 s, over a −38 dBFS pink room tone.
    static func roomToneTalk() throws -> String {
        let phrases = [(0.5, 2.2), (3.0, 5.5), (6.4, 8.0), (9.1, 11.0)].map { "between(t,\($0.0),\($0.1))" }.joined(separator: "+")
        return try Fixtures.cached("room-tone-talk.mp4") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=0x404040:size=320x240:rate=30:duration=12",
                             "-f", "lavfi", "-i", "anoisesrc=color=pink:amplitude=0.08:duration=12:sample_rate=48000:seed=7",
                             "-f", "lavfi", "-i", "aevalsrc='(\(phrases))*0.25*sin(2*PI*220*t)*(0.55+0.45*sin(2*PI*5*t))':s=48000:d=12",
                             "-filter_complex", "[1][2]amix=inputs=2:normalize=0[a]", "-map", "0:v", "-map", "[a]",
                             "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", path])
        }
    }

    /// Ranges given to `removeSilences` that its margin leaves nothing of (no longer than
    /// twice it, or outside the composition) were kept without a word when others were cut.
    /// They are counted in a note; the composition loses only the range that was cut.
    @Test func pausesTooShortForTheMarginAreCounted() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let result = try Moonreel.runScript("""
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 6), av.asset(arg[1]), 0)
            local removed = comp:removeSilences({ av.range(1, 0.15), av.range(2, 1), av.range(9, 1) }, { margin = 0.1 })
            print(#removed, comp.duration)
            """, arguments: [clip])
        #expect(result.status == 0 && result.out.hasPrefix("1\t5.2"), "\(result.out)\(result.err)")
        #expect(result.err.contains("test.lua:3: removeSilences kept 2 of the 3 ranges given") && result.err.contains("note:"), "\(result.err)")
    }

    /// §2o: over a −38 dBFS room tone a fixed −40 dBFS threshold found no pause, and
    /// `removeSilences` of nothing said nothing. The threshold now comes from the recording
    /// (its pauses and its speech), with a note; removing nothing is a warning. Checked on
    /// the exported file: ffprobe's length is the talk less the pauses.
    @Test func pausesAreFoundOverARoomTone() throws {
        let talk = try Self.roomToneTalk()
        let output = Fixtures.scratchPath("tight.m4a")
        let script = """
            local talk = av.asset(arg[2])
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, talk.durationTime), talk, 0)
            local pauses = av.analyze(talk):silences(arg[3] and { threshold = tonumber(arg[3]) } or {})
            print(#pauses, pauses.threshold)
            local removed = comp:removeSilences(pauses, { margin = 0.1 })
            local session = av.exportSession(comp, "AppleM4A")
            session.outputURL = arg[1]
            assert(session:export())
            """
        let found = try Moonreel.runScript(script, arguments: [output, talk])
        #expect(found.status == 0, "\(found.err)")
        #expect(found.out.hasPrefix("5\t-3"), "five pauses, under a threshold near −30: \(found.out)")
        #expect(found.err.contains("test.lua:4: silences: below -3") && found.err.contains("[thresholdChosen]"), "\(found.err)")
        // Pauses of 0.5, 0.8, 0.9, 1.1 and 1.0 s, less 0.1 s at each side that touches speech.
        let expected = 12 - (0.4 + 0.6 + 0.7 + 0.9 + 0.9)
        let length = try Tool.ffprobe(output).duration
        #expect(abs(length - expected) < 0.1, "\(length) s, not \(expected)")

        let untouched = Fixtures.scratchPath("untouched.m4a")
        let fixed = try Moonreel.runScript(script, arguments: [untouched, talk, "-40"])
        #expect(fixed.status == 0 && fixed.out.hasPrefix("0\t-40"), "\(fixed.out)")
        #expect(fixed.err.contains("test.lua:6: removeSilences removed nothing: it was given no ranges") && fixed.err.contains("[nothingRemoved]"), "\(fixed.err)")
        #expect(abs(try Tool.ffprobe(untouched).duration - 12) < 0.1)
    }
}

extension DoneMeansRightTests {
    /// §2g: `cues check` stopped at the first bad CSV row and passed an empty lyric. It
    /// lists every row it cannot read (in file order), flags a line with no text, and with
    /// `--size` lists the lines the lyrics effect cuts to fit at that size.
    @Test func cuesCheckListsEveryProblem() throws {
        let cues = Fixtures.scratchPath("rows.csv")
        try "id,lyric,start_at,end_at\n1,Hello,0.5,1.5\n2,,1.6,2.0\n3,bad,x,3\n4,hi, there,3,4\n5,late,5,4\n6,ok,6,7\n"
            .write(toFile: cues, atomically: true, encoding: .utf8)
        let check = try Moonreel.run(["cues", "check", cues])
        let lines = check.out.split(separator: "\n").map(String.init)
        #expect(check.status == 1 && lines.count == 4, "\(check.out)\(check.err)")
        #expect(lines.first == "\(cues):4: row dropped: start_at \"x\" is not a time", "\(lines)")
        #expect(lines.dropFirst().first?.hasPrefix("\(cues):5: row dropped: row has 5 fields but the header has 4 (a comma in a field needs the field in double quotes)") == true, "\(lines)")
        #expect(lines.dropFirst(2).first == "\(cues):6: row dropped: the cue ends (4.0 s) before it starts (5.0 s)", "\(lines)")
        #expect(lines.last?.contains("cue \"2\" (0:01.60–0:02.00) has no text: nothing is shown while it lasts (\(cues):3)") == true, "\(lines)")
        #expect(check.err.contains("3 cues, 0:00.50–0:07.00; 4 problems"), "\(check.err)")

        let long = Fixtures.scratchPath("long.csv")
        let words = String(repeating: "calling out your name across the never-ending summer night ", count: 3)
        try "id,lyric,start_at,end_at\n1,\(words),0.5,2\n2,I keep calling out your name across the never-ending summer night,3,5\n"
            .write(toFile: long, atomically: true, encoding: .utf8)
        #expect(try Moonreel.run(["cues", "check", long]).status == 0, "no size, nothing to lay out")
        let portrait = try Moonreel.run(["cues", "check", long, "--size", "360x480"])
        #expect(portrait.status == 1 && portrait.out.split(separator: "\n").count == 1, "\(portrait.out)\(portrait.err)")
        #expect(portrait.out.hasPrefix("text layer \"cue 1 (\(long):2)\" cuts \"calling out your name"), "only the line that cannot fit: \(portrait.out)")
        let bad = try Moonreel.run(["cues", "check", long, "--size", "360"])
        #expect(bad.status == 2 && bad.err.contains("--size must be WIDTHxHEIGHT"), "\(bad.err)")
    }
}

extension DoneMeansRightTests {
    /// A cue that lasts no time (a CSV row or a subtitle whose end is its start) was read,
    /// passed every check and was never drawn. It is a `cueHidden` warning with its data
    /// line, from `cues check` and from `av.readCues` at the script's line.
    @Test func aCueThatLastsNoTimeIsAWarning() throws {
        let csv = Fixtures.scratchPath("instant.csv")
        try "id,lyric,start_at,end_at\n1,Hello,0.5,1.5\n2,gone,2,2\n3,there,2,3\n".write(toFile: csv, atomically: true, encoding: .utf8)
        let check = try Moonreel.run(["cues", "check", csv])
        #expect(check.status == 1 && check.out.contains("cue \"2\" (0:02.00–0:02.00) lasts 0 s: it is never shown (\(csv):3); give it an end after its start"),
                "\(check.out)\(check.err)")
        let srt = Fixtures.scratchPath("instant.srt")
        try "1\n00:00:01,000 --> 00:00:01,000\nhello\n\n2\n00:00:02,000 --> 00:00:03,000\nthere\n".write(toFile: srt, atomically: true, encoding: .utf8)
        let read = try Moonreel.runScript("""
            local cues = av.readCues(arg[1])
            print(#cues)
            """, name: "srt.lua", arguments: [srt])
        #expect(read.status == 0 && read.out == "2\n", "\(read.err)")
        #expect(read.err.contains("srt.lua:1: \(srt): cue \"1\" (0:01.00–0:01.00) lasts 0 s: it is never shown (\(srt):2)") && read.err.contains("[cueHidden]"), "\(read.err)")
    }
}

extension DoneMeansRightTests {
    /// The box of the pixels that differ from `background` (text, outline, shadow).
    static func marks(in frame: Image, background: (r: Int, g: Int, b: Int)) -> (minX: Int, maxX: Int, minY: Int, maxY: Int)? {
        var box: (minX: Int, maxX: Int, minY: Int, maxY: Int)?
        for y in 0..<frame.height { for x in 0..<frame.width {
            let p = frame.pixel(x, y)
            guard abs(p.r - background.r) + abs(p.g - background.g) + abs(p.b - background.b) > 60 else { continue }
            box = (min(box?.minX ?? x, x), max(box?.maxX ?? x, x), min(box?.minY ?? y, y), max(box?.maxY ?? y, y))
        } }
        return box
    }

    /// §2m: white lyrics with only a soft shadow vanished on a bright sky (tesseract read
    /// "Swit IF (i T ne EX HO"); the default now has a thin dark outline and reads. In a
    /// 9:16 frame the default keeps the lines out of the bottom fifth and the right eighth,
    /// which Reels, Shorts and TikTok cover; a landscape frame keeps its bottom third.
    @Test func lyricsReadOnABrightSkyInsideTheShortsSafeArea() throws {
        let sky = (r: 244, g: 248, b: 255)
        let cues = Fixtures.scratchPath("sky.csv")
        try "id,lyric,start_at,end_at\n1,Summer night across the sky,0.2,2.8\n".write(toFile: cues, atomically: true, encoding: .utf8)
        for (width, height) in [(360, 640), (640, 360)] {
            let clip = try Fixtures.cached("sky-\(width)x\(height).mp4") { path in
                try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=0xF4F8FF:size=\(width)x\(height):rate=30:duration=3",
                                 "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", path])
            }
            let output = Fixtures.scratchPath("sky-\(width)x\(height).mp4")
            let result = try Moonreel.run(["run", Self.lyricsExample, clip, cues, output])
            #expect(result.status == 0, "\(result.err)")
            let box = try #require(Self.marks(in: try Tool.rgbFrame(output, at: 1.5), background: sky))
            if height > width {
                #expect(box.maxY < height * 4 / 5 && box.maxX < width * 7 / 8 && box.minY > height / 12, "\(width)x\(height): text at \(box)")
            } else {
                #expect(box.minY > height * 2 / 3 - 10, "\(width)x\(height): text at \(box), not in the bottom third")
            }
            let png = Fixtures.scratchPath("sky.png")
            try Tool.ffmpeg(["-ss", "1.5", "-i", output, "-frames:v", "1", "-vf", "crop=iw:ih/3:0:\(box.minY - 8),scale=iw*3:ih*3:flags=lanczos", png])
            let read = try Tool.run("tesseract", [png, "-", "--psm", "6"]).out.lowercased()
            for word in ["summer", "night", "across"] { #expect(read.contains(word), "\(width)x\(height): read \(read)") }
        }
    }
}

extension DoneMeansRightTests {
    /// §2h: a title card and a dissolve after a variable-rate Android clip (10.5 fps on
    /// average) ran at 10.5 fps. Animated, the join is rendered at 30 fps with a
    /// frameRateChosen note; a plain cut keeps the clip's own pictures and rate; a rate the
    /// script sets is kept. Read back with ffprobe.
    @Test func animatedPhoneClipsGetAStandardRate() throws {
        let android = Moonreel.checkout + "/Tests/Fixtures/real/06_android_rot180_vfr_10fps.mp4"
        let script = """
            local clip = av.asset(arg[2])
            local items = arg[3] == "card" and { clip, av.titleCard{ title = "The end", duration = 1 } } or { clip }
            local comp, vc = av.join(items, { transition = arg[3] == "card" and "dissolve" or "none", duration = 0.5 })
            if arg[4] then vc.frameDuration = av.time(2, 21) end
            local session = av.exportSession(comp, "MediumQuality")
            session.outputURL, session.videoComposition = arg[1], vc
            assert(session:export())
            """
        let rate = { (path: String) throws -> String in try Tool.ffprobe(path).video?.r_frame_rate ?? "" }
        let animated = Fixtures.scratchPath("card.mp4")
        let result = try Moonreel.runScript(script, arguments: [animated, android, "card"])
        #expect(result.status == 0, "\(result.err)")
        #expect(try rate(animated) == "30/1")
        #expect(result.err.contains("test.lua:7: the video is rendered at 30 fps: its sources average 10.5 fps") && result.err.contains("[frameRateChosen]"), "\(result.err)")
        #expect(result.err.contains("rendered at 30 fps, \"06_android_rot180_vfr_10fps.mp4\" (10.5 fps) shows each of its pictures in several frames (up to 2.9 times)")
                && result.err.contains("[frameRepeated]"), "\(result.err)")
        let plain = Fixtures.scratchPath("plain.mp4")
        let cut = try Moonreel.runScript(script, arguments: [plain, android, "plain"])
        #expect(cut.status == 0 && !cut.err.contains("frameRateChosen") && !cut.err.contains("frameRepeated"), "\(cut.err)")
        #expect(try rate(plain) == "21/2")
        let asked = Fixtures.scratchPath("asked.mp4")
        let kept = try Moonreel.runScript(script, arguments: [asked, android, "card", "keep"])
        #expect(kept.status == 0 && !kept.err.contains("frameRateChosen"), "\(kept.err)")
        #expect(try rate(asked) == "21/2")
    }
}

extension DoneMeansRightTests {
    /// §2n: captions burnt over a talk with its pauses cut out drifted (by up to 11.7 s in
    /// the trial), with no word. removeSilences returns a time map; cues:remapped(map) moves
    /// each cue (and its words) to where its speech now is, and drawing cues over moved time
    /// without one is a cuesNotRemapped warning. Read back from the frames.
    @Test func captionsFollowTheTalkThroughItsCuts() throws {
        let talk = try Self.roomToneTalk()
        let captions = Fixtures.scratchPath("episode.srt")
        try "1\n00:00:00,600 --> 00:00:02,100\nFIRST\n\n2\n00:00:06,500 --> 00:00:07,900\nTHIRD\n\n3\n00:00:11,300 --> 00:00:11,800\nQUIET\n"
            .write(toFile: captions, atomically: true, encoding: .utf8)
        let script = """
            local talk = av.asset(arg[2])
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, talk.durationTime), talk, 0)
            local removed, map = comp:removeSilences(av.analyze(talk):silences{}, { margin = 0.1 })
            local cues = av.readCues(arg[3])
            if arg[4] == "remap" then cues = cues:remapped(map) end
            for _, cue in ipairs(cues) do print(("%s %.2f %.2f"):format(cue.text, cue.start, cue.finish)) end
            local vc = av.videoComposition(comp)
            local size = vc.renderSize
            local parent, video = av.layer{ frame = { 0, 0, size.width, size.height } }, av.layer{ frame = { 0, 0, size.width, size.height } }
            parent:addSublayer(video)
            parent:addSublayer(require("effects.lyrics"){ cues = cues, renderSize = { size.width, size.height } })
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            local session = av.exportSession(comp, "MediumQuality")
            session.outputURL, session.videoComposition = arg[1], vc
            assert(session:export())
            """
        let drifting = try Moonreel.runScript(script, arguments: [Fixtures.scratchPath("drift.mp4"), talk, captions])
        #expect(drifting.status == 0 && drifting.err.contains("test.lua:16: cues read with av.readCues are drawn over a composition whose time removeSilences moved") && drifting.err.contains("[cuesNotRemapped]"),
                "\(drifting.err)")
        let output = Fixtures.scratchPath("captions.mp4")
        let remapped = try Moonreel.runScript(script, arguments: [output, talk, captions, "remap"])
        #expect(remapped.status == 0 && !remapped.err.contains("cuesNotRemapped"), "\(remapped.err)")
        // Pauses 0–0.4, 2.3–2.9, 5.6–6.3, 8.1–9.0 and 11.1–12 s are cut: THIRD (6.5 s) now
        // starts 1.7 s earlier; QUIET lay wholly in the last pause and is left out, with a note.
        #expect(remapped.out == "FIRST 0.20 1.70\nTHIRD 4.80 6.20\n", "\(remapped.out)")
        #expect(remapped.err.contains("cue 3 (\"QUIET\", \(captions):10) lies wholly in time the edit removed: left out"), "\(remapped.err)")
        let lowerThird = { (seconds: Double) throws -> Int in
            let frame = try Tool.rgbFrame(output, at: seconds)
            var bright = 0
            for y in frame.height * 2 / 3..<frame.height { for x in 0..<frame.width where frame.pixel(x, y).r > 200 { bright += 1 } }
            return bright
        }
        #expect(try lowerThird(5.5) > 100, "THIRD is on screen with its speech")
        #expect(try lowerThird(3.0) == 0, "nothing between FIRST and THIRD")
    }
}

extension DoneMeansRightTests {
    /// §2n for sequences: each clip part of av.join (and av.cutToBeats) maps the clip's own
    /// times to the composition's, so subtitles written for clip 2 follow it.
    @Test func aJoinedClipsCuesFollowItsPart() throws {
        let clip = try Fixtures.clip(seconds: 3)
        let cues = Fixtures.scratchPath("clip2.srt")
        try "1\n00:00:01,500 --> 00:00:02,000\nSECOND\n\n2\n00:00:00,200 --> 00:00:00,400\nCUT\n".write(toFile: cues, atomically: true, encoding: .utf8)
        let result = try Moonreel.runScript("""
            local a = av.asset(arg[1])
            local comp, vc, mix, parts = av.join({ a, { a, start = 1, duration = 2 } }, { transition = "dissolve", duration = 0.5 })
            print(parts[1].map:time(1), parts[2].map:time(1.5), parts[2].map:time(0.5))
            for _, cue in ipairs(av.readCues(arg[2]):remapped(parts[2].map)) do print(cue.text, cue.start, cue.finish) end
            """, arguments: [clip, cues])
        // Clip 2 (its 1–3 s) starts at 2.5 s: its 1.5 s is at 3.0 s; its 0.5 s was not used.
        #expect(result.status == 0 && result.out == "1.0\t3.0\tnil\nSECOND\t3.0\t3.5\n", "\(result.out)\(result.err)")
        #expect(result.err.contains("cue 1 (\"CUT\"") && result.err.contains("left out"), "\(result.err)")
    }
}

extension DoneMeansRightTests {
    /// §1 glyphMissing: a character no installed font has was drawn as a box, exit 0. The
    /// export says which, naming the cue; the rest of the line still draws.
    @Test func aCharacterNoFontHasIsAWarning() throws {
        let cues = Fixtures.scratchPath("glyphs.csv")
        try "id,lyric,start_at,end_at\n1,Sing 𓀀 along,0.2,1.5\n".write(toFile: cues, atomically: true, encoding: .utf8)
        let output = Fixtures.scratchPath("glyphs.mp4")
        let result = try Moonreel.run(["run", Self.lyricsExample, try Fixtures.clip(seconds: 2, size: "640x360"), cues, output])
        #expect(result.status == 0, "\(result.err)")
        let warning = result.errorLines.first { $0.contains("[glyphMissing]") }
        #expect(warning?.contains("text layer \"cue 1 (\(cues):2)\" draws \"Sing 𓀀 along\" with 𓀀 U+13000 as boxes: no installed font has it") == true, "\(result.err)")
    }
}

extension DoneMeansRightTests {
    /// §1 trackShorter: a clip whose sound runs a second past its pictures, exported whole,
    /// held its last frame that second without a word. It is a note now, and what it says is
    /// what the file shows: the frame at 2.5 s is the one at 1.95 s.
    @Test func aPictureShorterThanItsSoundIsSaid() throws {
        let clip = try Fixtures.cached("picture-2s-sound-3s.mp4") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=2", "-f", "lavfi", "-i", "sine=duration=3",
                             "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", path])
        }
        let output = Fixtures.scratchPath("held.mp4")
        let result = try Moonreel.runScript(Moonreel.exportWholeAssetScript, arguments: [clip, output, "MediumQuality"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("the picture ends at 2 s, 1 s before the sound: its last frame stays on from there") && result.err.contains("[trackShorter]"),
                "\(result.err)")
        let held = try Tool.rgbFrame(output, at: 2.5), last = try Tool.rgbFrame(output, at: 1.95)
        #expect(held.meanDifference(last) < 3, "the last picture is held")
        // A clip whose tracks end together says nothing.
        let even = try Moonreel.runScript(Moonreel.exportWholeAssetScript, arguments: [try Fixtures.clip(seconds: 2), Fixtures.scratchPath("even.mp4"), "MediumQuality"])
        #expect(even.status == 0 && !even.err.contains("trackShorter"), "\(even.err)")
    }

    /// A sound-only composition into a GIF says the GIF holds no sound: it was "the
    /// composition has no video or audio media", though it has audio (found by review).
    @Test func soundIntoAGIFSaysAGIFHoldsNoSound() throws {
        let song = Fixtures.scratchPath("tone.m4a")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1", "-c:a", "aac", song])
        let output = Fixtures.scratchPath("tone.gif")
        let result = try Moonreel.runScript(Moonreel.exportWholeAssetScript, arguments: [song, output, "HighestQuality"])
        #expect(result.status != 0 && result.err.contains("the composition has no video to export, and a GIF holds no sound"), "\(result.err)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    /// A gap under a tenth of a second is said in milliseconds: at 1000 fps, sound 4 ms
    /// shorter than its picture was "the sound ends at 3 s, 0 s before the picture" (found by
    /// review). Read from the plan (a dry run); ffprobe gives the two lengths.
    @Test func aShortGapBetweenPictureAndSoundIsSaidInMilliseconds() throws {
        let clip = Fixtures.scratchPath("short-sound.mov")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=3", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2.996",
                         "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "pcm_s16le", clip])
        let lengths = try Tool.run("ffprobe", ["-v", "error", "-show_entries", "stream=duration", "-of", "csv=p=0", clip]).out
        #expect(lengths == "3.000000\n2.996000\n", "\(lengths)")
        let result = try Moonreel.runScript("""
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 3), av.asset(arg[1]), 0)
            local vc = av.videoComposition(comp)
            vc.frameDuration = av.time(1, 1000)
            local session = av.exportSession(comp, "LowQuality")
            session.outputURL, session.videoComposition = arg[2], vc
            assert(session:export())
            """, arguments: [clip, Fixtures.scratchPath("short-sound.mp4")], options: ["--dry-run"])
        #expect(result.err.contains("the sound ends at 2.996 s, 4 ms before the picture: silence from there") && result.err.contains("[trackShorter]"), "\(result.err)")
    }

    @Test func aStillWithTextCutToFitSaysSoAtItsLine() throws {
        // copyImage drew a truncated caption and said nothing (an export says textTruncated).
        let grey = try Fixtures.solid("gray", seconds: 2, size: "320x180", tone: nil)
        let script = """
            local comp, vc = av.join({ av.asset(arg[1]) }, { renderSize = { 320, 180 } })
            local parent, video = av.layer{ frame = { 0, 0, 320, 180 } }, av.layer{ frame = { 0, 0, 320, 180 } }
            parent:addSublayer(video)
            parent:addSublayer(av.textLayer{ name = "caption", string = "A caption far too long for its little box", fontSize = 30,
                                             frame = { 10, 10, 120, 40 }, truncationMode = "end", maxLines = 1 })
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            local generator <close> = av.imageGenerator(comp, { videoComposition = vc })
            generator:copyImage(0.5, arg[2])
            generator:copyImage(1, arg[3])
            """
        let (first, second) = (Fixtures.scratchPath("a.png"), Fixtures.scratchPath("b.png"))
        let told = try Moonreel.runScript(script, name: "still.lua", arguments: [grey, first, second])
        #expect(told.status == 0 && FileManager.default.fileExists(atPath: second), "\(told.err)")
        let warnings = told.errorLines.filter { $0.contains("[textTruncated]") }
        #expect(warnings.count == 1 && warnings[0].contains("still.lua:4:") && warnings[0].contains("text layer \"caption\""), "once, at the layer's line: \(told.err)")
        let strict = Fixtures.scratchPath("strict.png")
        let refused = try Moonreel.runScript(script, name: "still.lua", arguments: [grey, strict, strict + ".2.png"], options: ["--strict"])
        #expect(refused.status != 0 && refused.err.contains("strict: text layer \"caption\""), "\(refused.err)")
        #expect(!FileManager.default.fileExists(atPath: strict), "under --strict nothing is written")
    }

    /// A clip faster than the output loses pictures that fall between frames: a 25 fps clip
    /// at 24 fps shows 24 of each 25, at 10 fps 10; said with how many, counted from when each
    /// picture shows (it was silent, while a slower clip's repeated pictures were said). The
    /// output's frames, counted by ffprobe, are the pictures the note says are left. At its own
    /// rate, nothing is said. A screen recording written in bursts (real fixture 07) loses 42
    /// of its 63 pictures at its own average rate, as the frame each output frame shows says.
    @Test func aClipFasterThanTheOutputSaysItsPicturesAreLeftOut() throws {
        let clip = try Fixtures.clip(seconds: 4, rate: "25")
        let script = """
            local a = av.asset(arg[2])
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 4), a, 0)
            local vc = av.videoComposition(comp)
            vc.frameDuration = av.time(1, tonumber(arg[3]))
            local session = av.exportSession(comp, "MediumQuality")
            session.outputURL, session.videoComposition = arg[1], vc
            if arg[4] then session.timeRange = av.range(1.02, 2) end
            assert(session:export())
            """
        // 1.02…3.02 s of it holds the 50 pictures from 1.04 s; its first frame shows the one
        // at 1 s, so 47 frames at 24 fps show 47 of them. The whole clip's 4 of 100 were said.
        let part = Fixtures.scratchPath("faster-part.mp4")
        let range = try Moonreel.runScript(script, arguments: [part, clip, "24", "range"])
        #expect(range.status == 0 && range.err.contains("leaves out 3 of its 50 pictures"), "\(range.err)")
        for (rate, leftOut) in [(24, 4), (10, 60), (25, nil)] {
            let output = Fixtures.scratchPath("faster-\(rate).mp4")
            let result = try Moonreel.runScript(script, arguments: [output, clip, "\(rate)"])
            try #require(result.status == 0, "\(result.err)")
            let frames = try Tool.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames",
                                                  "-of", "csv=p=0", output]).out.split(whereSeparator: { $0 == "," || $0.isNewline }).first.flatMap { Int($0) } ?? 0
            #expect(frames == 4 * rate, "\(rate) fps: \(frames) frames")
            if let leftOut {
                #expect(result.err.contains("rendered at \(rate) fps, \"\((clip as NSString).lastPathComponent)\" leaves out \(leftOut) of its 100 pictures: they fall between frames")
                        && result.err.contains("[framesDropped]"), "\(result.err)")
                #expect(frames == 100 - leftOut, "\(frames) of 100 pictures shown")
            } else {
                #expect(!result.err.contains("framesDropped"), "\(result.err)")
            }
        }
        let bursts = Moonreel.checkout + "/Tests/Fixtures/real/07_screenrec_extreme_vfr_noaudio.mp4"
        let output = Fixtures.scratchPath("bursts.mp4")
        let cut = try Moonreel.run(["run", Moonreel.checkout + "/scripts/examples/cut.lua", bursts, output, "0", "8.726"])
        #expect(cut.status == 0 && cut.err.contains("leaves out 42 of its 63 pictures: they fall between frames"), "\(cut.err)")
    }

    /// A clip sped up with scaleTimeRange at the output's rate leaves pictures out (2× shows
    /// 90 of 180, 100× shows 2), which was not said, while a clip faster than the output was.
    /// It is the same framesDropped note, naming the speed; slow motion says nothing. The
    /// frame counts ffprobe reads are the pictures the note says are shown.
    @Test func aSpedUpClipSaysItsPicturesAreLeftOut() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let name = (clip as NSString).lastPathComponent
        for (speed, frames, said) in [(2.0, 90, "shown at 2× leaves out 90 of its 180 pictures"), (100, 2, "shown at 100× leaves out 178 of its 180 pictures"), (0.5, 360, nil)] {
            let output = Fixtures.scratchPath("sped-\(speed).mp4")
            let result = try Moonreel.runScript("""
                local comp = av.composition()
                comp:insertTimeRange(av.range(0, 6), av.asset(arg[2]), 0)
                comp:scaleTimeRange(av.range(0, 6), 6 / tonumber(arg[3]))
                local session = av.exportSession(comp, "MediumQuality")
                session.outputURL = arg[1]
                assert(session:export())
                """, arguments: [output, clip, "\(speed)"])
            try #require(result.status == 0, "\(result.err)")
            let counted = try Tool.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames",
                                                   "-of", "csv=p=0", output]).out.split(whereSeparator: { $0 == "," || $0.isNewline }).first.flatMap { Int($0) } ?? 0
            #expect(counted == frames, "\(speed)×: \(counted) frames")
            if let said {
                #expect(result.err.contains("rendered at 30 fps, \"\(name)\" \(said): they fall between frames") && result.err.contains("[framesDropped]"), "\(result.err)")
            } else {
                #expect(!result.err.contains("framesDropped"), "\(result.err)")
            }
        }
    }

    /// A phone clip at its own rate shows every picture once, though its frame times jitter
    /// (real fixture 04, Android 4K60: 16.0–17.2 ms apart): each picture a fraction of a
    /// millisecond late was skipped and the one before shown twice, 2 of its 18, without a
    /// word. Read back with ffmpeg: no output frame repeats the
    /// one before, and each is nearest its own source picture.
    @Test func aPhoneClipsJitteryFramesAreEachShownAtItsOwnRate() throws {
        let clip = Moonreel.checkout + "/Tests/Fixtures/real/04_android12_portrait_4k60_rot90_yuvj.mp4"
        let output = Fixtures.scratchPath("sixty.mp4")
        let result = try Moonreel.runScript("""
            local a = av.asset(arg[2])
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, a.duration), a, 0)
            local vc = av.videoComposition(comp)
            vc.frameDuration = av.time(1, 60)
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL, session.videoComposition = arg[1], vc
            assert(session:export())
            """, arguments: [output, clip])
        try #require(result.status == 0, "\(result.err)")
        #expect(!result.err.contains("framesDropped"), "\(result.err)")
        // Frame by frame PSNR of the first 18 output frames against the source's 18 pictures
        // moved by `shift` (each scaled down alike; ffmpeg turns the source upright).
        func psnr(_ path: String, against reference: String, shift: Int) throws -> [Double] {
            let frames = { (first: Int) in "scale=270:480,trim=start_frame=\(first):end_frame=\(first + 18 - abs(shift)),setpts=N/(60*TB)" }
            let result = try Tool.run("ffmpeg", ["-hide_banner", "-nostdin", "-i", path, "-i", reference, "-lavfi",
                                                 "[0:v]\(frames(max(-shift, 0)))[a];[1:v]\(frames(max(shift, 0)))[b];[a][b]psnr=stats_file=-",
                                                 "-f", "null", "-"])
            return result.out.split(separator: "\n").compactMap { line in
                line.split(separator: " ").first { $0.hasPrefix("psnr_avg:") }.map { Double($0.dropFirst(9)) ?? 99 }
            }
        }
        let own = try psnr(output, against: clip, shift: 0)
        let next = try psnr(output, against: clip, shift: 1), previous = try psnr(output, against: clip, shift: -1)
        let repeats = try psnr(output, against: output, shift: 1)
        try #require(own.count == 18 && next.count == 17 && previous.count == 17 && repeats.count == 17, "\(own) \(next) \(previous) \(repeats)")
        for index in 0..<18 {
            #expect(index == 17 || (own[index] > next[index] && repeats[index] < 45), "frame \(index): \(own[index]) dB to its picture, \(next[index]) to the next; \(repeats[index]) to the next frame")
            #expect(index == 0 || own[index] > previous[index - 1], "frame \(index): \(own[index]) dB to its picture, \(previous[index - 1]) to the one before")
        }
    }
}
