import Foundation
import Testing
import TestSupport

/// What gets in a new user's way: errors that say what was meant, and seeing frames before
/// exporting.
@Suite struct EverydayUseTests {
    /// Issue 25: the documented batch pattern survives a broken file. `av.asset(path, {try =
    /// true})` gives nil and the one-line reason for a phone recording cut before its moov
    /// (before, `av.asset` raised and the batch died); the good clip is still written.
    @Test func aBatchSkipsABrokenFileAndGoesOn() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent + "/clips"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.real("20_DERIVED_iphone14pro_cut_before_moov.MOV"), toPath: folder + "/a-broken.MOV")
        try FileManager.default.copyItem(atPath: try Fixtures.clip(seconds: 2), toPath: folder + "/b-good.mov")
        let output = (folder as NSString).deletingLastPathComponent + "/out"
        let result = try Moonreel.run(["run", Moonreel.example("batch_trim.lua"), folder, output])
        #expect(result.status == 0, "\(result.err)")
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && lines[0].hasPrefix("skipped ") && lines[0].contains("batch_trim.lua:7: ")
                && lines[0].contains("a-broken.MOV") && lines[0].contains("moov atom not found"), "\(result.out)")
        #expect(lines.last == "wrote \(output)/b-good.mp4", "\(result.out)")
        #expect(try Tool.ffprobe(output + "/b-good.mp4").video?.height == 240)   // the preset scales down only
        let strict = try Moonreel.runScript("av.asset(arg[1])", arguments: [folder + "/a-broken.MOV"])
        #expect(strict.status == 1 && strict.err.contains("moov atom not found"), "\(strict.err)")
    }

    /// iPhones save photos as HEIC, which FFmpeg 5.1 reads as an MP4 without its movie: the
    /// message said "moov atom not found (file truncated?…)". It now names the format and the
    /// way out, for `av.asset`, `av.image` and `moonreel probe` alike. The file is what a HEIF
    /// begins with (libheif's and Apple's: an `ftyp` of brand mif1 with heic, then `meta`).
    @Test func aHEICPhotoIsNamedNotCalledTruncated() throws {
        let photo = Fixtures.scratchPath("IMG_0001.HEIC")
        let box = { (type: String, body: [UInt8]) in
            withUnsafeBytes(of: UInt32(8 + body.count).bigEndian) { Array($0) } + Array(type.utf8) + body
        }
        let ftyp = box("ftyp", Array("mif1".utf8) + [0, 0, 0, 0] + Array("mif1heicmiaf".utf8))
        let meta = box("meta", [0, 0, 0, 0] + box("hdlr", [UInt8](repeating: 0, count: 8) + Array("pict".utf8) + [UInt8](repeating: 0, count: 13)))
        try Data(ftyp + meta + box("mdat", [UInt8](repeating: 0x5A, count: 64))).write(to: URL(fileURLWithPath: photo))
        let said = "a HEIF image (HEIC, as iPhones save photos), which Moonreel cannot read; convert it to JPEG or PNG first (heif-convert photo.heic photo.jpg, from Debian's libheif-examples)"
        for (script, role) in [("av.asset(arg[1])", "input"), ("av.image(arg[1])", "image")] {
            let result = try Moonreel.runScript(script, arguments: [photo])
            #expect(result.status == 1 && result.err.contains("\(role) \"\(photo)\": \(said)") && !result.err.contains("moov"), "\(result.err)")
        }
        let probe = try Moonreel.run(["probe", photo])
        #expect(probe.status != 0 && probe.err.contains(said), "\(probe.err)")
    }

    @Test func errorsPointToTheFix() throws {
        let cases: [(String, String)] = [
            ("local s = av.exportsession(av.composition())", "main.lua:1: av has no function 'exportsession'; did you mean av.exportSession?"),
            ("av.exportSession(av.composition(), 'LowQuality').outputUrl = 'x.mp4'",
             "main.lua:1: ExportSession has no property 'outputUrl'; did you mean outputURL?"),
            ("local l = av.layer{}; l:addSublyer(av.layer{})", "main.lua:1: Layer has no property or method 'addSublyer'; did you mean addSublayer?"),
            ("av.layer{}.contents = 'logo.png'", "(Image expected, got a string: pass av.image(\"logo.png\"))"),
            ("local s = av.exportSession(av.composition(), 'LowQuality'); s:export(); assert(s:export())",
             "main.lua:1: this export session has already run (its status is failed); make a new one to export again"),
            ("av.readCues('x.lrc', { format = 'lyrics' })", "main.lua:1: bad argument #2 to 'readCues' (field 'format': unknown value \"lyrics\""),
            ("require('effects.watermark'){ renderSize = {640, 360}, logo = 'logo.png' }",
             "effect \"watermark\": logo must be an image: pass av.image(\"logo.png\")"),
            ("require('effects.lyrics'){ cues = {}, renderSize = {640, 360}, color = 'blurple' }",
             "main.lua:1: effect \"lyrics\": parameter color must be a color (a name, \"#RRGGBB\" or {r, g, b, a}), got \"blurple\""),
        ]
        for (script, message) in cases {
            let result = try Moonreel.runScript(script, name: "main.lua")
            #expect(result.status == 1 && result.errorLines.count == 1 && result.err.contains(message), "\(script): \(result.err)")
        }
        // A near miss is an error; another absent name is nil, as in Lua.
        let probe = try Moonreel.runScript("print(av.somethingElseEntirely, av.version ~= nil)")
        #expect(probe.out == "nil\ttrue\n", "\(probe.err)")
    }

    @Test func optionsAfterTheScriptAreNamedAndDashDashPassesThem() throws {
        let noted = try Moonreel.runScript("print(arg[1])", arguments: ["--overwrite"])
        #expect(noted.out == "--overwrite\n" && noted.err.contains("note: --overwrite comes after the script"), "\(noted.err)")
        let quiet = try Moonreel.runScript("print(arg[1], #arg)", arguments: ["--", "--overwrite"])
        #expect(quiet.out == "--overwrite\t1\n" && quiet.err.isEmpty, "\(quiet.err)")
    }

    @Test func snapshotTakesTimecodesThumbnailsAndContactSheets() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let thumbnail = Fixtures.scratchPath("thumb.png")
        let one = try Moonreel.run(["snapshot", clip, "--at", "0:02.5", "--width", "160", "-o", thumbnail])
        #expect(one.status == 0 && one.out == "\(thumbnail) (160×120, 2.5 s)\n", "\(one.err)")
        // The thumbnail is the frame at 2.5 s, scaled: ffmpeg's own scaled frame is the oracle.
        let reference = Fixtures.scratchPath("reference.png")
        try Tool.ffmpeg(["-y", "-i", clip, "-ss", "2.5", "-frames:v", "1", "-vf", "scale=160:-1:flags=bicubic", reference])
        #expect(try Tool.rgbFrame(thumbnail, at: 0).meanDifference(Tool.rgbFrame(reference, at: 0)) < 6)

        let sheet = Fixtures.scratchPath("sheet.png")
        let grid = try Moonreel.run(["snapshot", clip, "--every", "1.5", "--grid", "3x2", "--width", "100", "-o", sheet])
        #expect(grid.status == 0 && grid.out == "\(sheet) (332×174, 4 frames every 1.5 s)\n", "\(grid.err)")
        let image = try Tool.rgbFrame(sheet, at: 0)
        // Four tiles (0, 1.5, 3, 4.5 s) of 100×75 in a 3×2 grid, 8 px gaps: the last two cells
        // are the dark ground, the first tile is the frame at 0 and the fourth the frame at
        // 4.5 s (compared above their time labels).
        #expect(image.width == 332 && image.height == 174)
        let corner = image.mean(x: 240, y: 100, width: 60, height: 50)
        #expect(corner.r < 30 && corner.g < 30 && corner.b < 30)
        let framesReference = Fixtures.scratchPath("frames.png")
        try Tool.ffmpeg(["-y", "-i", clip, "-vf", "select='eq(n\\,0)+eq(n\\,135)',scale=100:-1:flags=bicubic,tile=2x1", "-frames:v", "1", framesReference])
        let expected = try Tool.rgbFrame(framesReference, at: 0)
        let first = image.mean(x: 18, y: 10, width: 80, height: 35), firstExpected = expected.mean(x: 10, y: 2, width: 80, height: 35)
        let fourth = image.mean(x: 18, y: 93, width: 80, height: 35), fourthExpected = expected.mean(x: 110, y: 2, width: 80, height: 35)
        #expect(abs(first.r - firstExpected.r) + abs(first.g - firstExpected.g) + abs(first.b - firstExpected.b) < 15)
        #expect(abs(fourth.r - fourthExpected.r) + abs(fourth.g - fourthExpected.g) + abs(fourth.b - fourthExpected.b) < 15)
        // Issue 25: the time of each tile is written on it (white ink in the lower-left corner).
        let label = image.mean(x: 10, y: 62, width: 40, height: 18), above = image.mean(x: 10, y: 40, width: 40, height: 18)
        #expect(label.r + label.g + label.b != above.r + above.g + above.b)
        // --count N spreads N frames evenly; --sheet-width sets the whole sheet's width.
        let spread = try Moonreel.run(["snapshot", clip, "--count", "4", "--sheet-width", "400", "-o", sheet, "--overwrite"])
        #expect(spread.status == 0 && spread.out.hasPrefix("\(sheet) (400×") && spread.out.contains("4 frames spread over 0:06.00"), "\(spread.out) \(spread.err)")
        let both = try Moonreel.run(["snapshot", clip, "--count", "4", "--every", "1", "-o", sheet])
        #expect(both.status == 2 && both.err.contains("give one of --at (one frame), --count N or --every SECONDS"), "\(both.err)")
        // More frames than the grid holds were cut to its cells in silence (12 asked, 6 drawn;
        // --every covering only the video's start): refused, with what fits.
        let crowded = try Moonreel.run(["snapshot", clip, "--count", "12", "--grid", "2x3", "-o", sheet, "--overwrite"])
        #expect(crowded.status == 2 && crowded.err.contains("--count 12 frames: a 2x3 grid holds 6; give --count 6 or a larger --grid"), "\(crowded.err)")
        let short = try Moonreel.run(["snapshot", clip, "--every", "0.5", "--grid", "2x2", "-o", sheet, "--overwrite"])
        #expect(short.status == 2 && short.err.contains("--every 0.5 s over the video's 0:06.00 is more than 4 frames: a 2x2 grid holds 4; give --every 1.5 or more, or a larger --grid"),
                "\(short.err)")
        // A sheet too narrow for its columns came out wider than asked (--sheet-width 100 for
        // 12 frames gave 104 px): refused, with the width that fits.
        let narrow = try Moonreel.run(["snapshot", clip, "--count", "12", "--sheet-width", "100", "-o", sheet, "--overwrite"])
        #expect(narrow.status == 2 && narrow.err.contains("--sheet-width 100 is too narrow for 4 columns of frames at least 16 px wide; give --sheet-width 104 or more"),
                "\(narrow.err)")
        let bad = try Moonreel.run(["snapshot", clip, "--at", "1:99"])
        #expect(bad.status == 2 && bad.err.contains("--at must be seconds or a timecode"), "\(bad.err)")
    }

    /// `--dry-run` checks every export as a real run would and says what it would write,
    /// without encoding anything.
    @Test func dryRunChecksAndDescribesWithoutEncoding() throws {
        let clip = try Fixtures.clip(seconds: 6)
        let output = Fixtures.scratchPath("dry.mp4")
        let planned = try Moonreel.runScript(Moonreel.cutScript(start: 1, duration: 3, preset: "MediumQuality"),
                                             arguments: [clip, output], options: ["--dry-run"])
        #expect(planned.status == 0, "\(planned.err)")
        #expect(planned.out.hasPrefix("would export \(output) (mp4): 320×240 30 fps H.264 CRF 23 + AAC 128 kb/s 48 kHz mono, 3 s, about "),
                "\(planned.out)")
        #expect(!FileManager.default.fileExists(atPath: output))
        let json = try Moonreel.runScript(Moonreel.cutScript(start: 1, duration: 3, preset: "MediumQuality"),
                                          arguments: [clip, output], options: ["--dry-run", "--progress", "json"])
        let event = try Self.planEvent(json.out)
        #expect(event?["event"] as? String == "plan" && event?["width"] as? Int == 320 && event?["duration"] as? Double == 3)
        // What a real run would refuse, a dry run refuses too.
        try Data("keep".utf8).write(to: URL(fileURLWithPath: output))
        let refused = try Moonreel.runScript(Moonreel.cutScript(start: 1, duration: 3, preset: "MediumQuality"),
                                             arguments: [clip, output], options: ["--dry-run"])
        #expect(refused.status == 1 && refused.err.contains("already exists; set overwrite = true"), "\(refused.err)")
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "keep")
    }

    /// The `plan` event among a dry run's JSON lines (its notes come first, as `diagnostic` events).
    static func planEvent(_ lines: String) throws -> [String: Any]? {
        try lines.split(separator: "\n").compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .first { $0["event"] as? String == "plan" }
    }

    /// Issue 25: `--dry-run` said about 5.8 MB for a file of 1.06 MB (a bits-per-pixel figure
    /// for camera footage). It now encodes a few short samples of the export's own pictures.
    @Test func dryRunMeasuresTheSizeOnASampleOfThePictures() throws {
        // Without sound: AAC at a set bit rate is estimated as set, and a sine takes less.
        let calm = try Fixtures.cached("calm-640x360-8s-silent.mp4") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=0x336699:size=640x360:rate=30:duration=8,drawbox=x=t*40:y=100:w=80:h=80:color=white:t=fill",
                             "-c:v", "libx264", "-preset", "fast", "-pix_fmt", "yuv420p", path])
        }
        for (source, name) in [(calm, "calm"), (Fixtures.real("01_iphone4s_portrait_h264_rot90.mov"), "iphone")] {
            let output = Fixtures.scratchPath("\(name).mp4")
            func estimate(_ options: [String]) throws -> Double {
                let planned = try Moonreel.runScript(Moonreel.exportWholeAssetScript, arguments: [source, output, "HighestQuality"],
                                                     options: ["--dry-run", "--progress", "json"] + options)
                return try #require(try Self.planEvent(planned.out)?["estimatedBytes"] as? Double, "\(planned.out) \(planned.err)")
            }
            let measured = try estimate([]), rough = try estimate(["--rough-estimate"])
            let exported = try Moonreel.runScript(Moonreel.exportWholeAssetScript, arguments: [source, output, "HighestQuality"])
            #expect(exported.status == 0, "\(exported.err)")
            let size = Double(try #require(try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int))
            #expect(measured > size * 0.7 && measured < size * 1.4, "\(name): estimated \(measured) bytes, wrote \(size)")
            if name == "calm" { #expect(rough > size * 3, "\(name): the rough estimate \(rough) was close to \(size)") }
        }
    }

    @Test func filesListsAFolderForBatchJobs() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent + "/batch"
        try FileManager.default.createDirectory(atPath: folder + "/sub.mov", withIntermediateDirectories: true)
        for name in ["clip10.mov", "clip2.mov", "Clip1.MOV", "notes.txt", ".hidden.mov"] {
            try Data().write(to: URL(fileURLWithPath: folder + "/" + name))
        }
        let result = try Moonreel.runScript("""
            print(table.concat(av.files(arg[1], "*.mov"), " "))
            print(#av.files(arg[1]), #av.files(arg[1], "*.[mM][oO][vV]"))
            print(pcall(av.files, arg[1] .. "/notes.txt"))
            """, arguments: [folder])
        #expect(result.out.hasPrefix("\(folder)/clip2.mov \(folder)/clip10.mov\n4\t3\nfalse\t"), "\(result.out) \(result.err)")
        #expect(result.out.contains("is not a folder"))
    }
}
