import Foundation
import Testing
import TestSupport

/// Stills: `av.imageGenerator(...):copyImage(t, png)` and `moonreel snapshot` give the frame
/// at exactly `t` (zero tolerance), composed and upright, at the right size.
@Suite struct StillsTests {
    @Test func copyImageIsTheComposedFrameAtExactlyThatTime() throws {
        // testsrc2 (each frame differs) with a second, later-starting copy of it in the
        // top-right corner at 80 % opacity; exported, and stills taken from the same script.
        let directory = (Fixtures.scratchPath("stills") as NSString).deletingLastPathComponent
        let video = directory + "/composed.mp4"
        let result = try Moonreel.runScript("""
            local output, directory = arg[1], arg[2]
            local source = av.asset(arg[3]):tracksWithMediaType("video")[1]
            local comp = av.composition()
            local full, corner = comp:addMutableTrack("video"), comp:addMutableTrack("video")
            full:insertTimeRange(av.range(0, 2), source, 0)
            corner:insertTimeRange(av.range(0.5, 1.5), source, 0)
            local vc = av.videoComposition{ renderSize = {320, 240}, frameDuration = av.time(1, 30) }
            local top, under = av.layerInstruction(corner), av.layerInstruction(full)
            top:setTransform(av.transform{0.5, 0, 0, 0.5, 160, 0}, 0)
            top:setOpacity(0.8, 0)
            vc.instructions = { av.videoCompositionInstruction{ timeRange = av.range(0, 2), layerInstructions = { top, under } } }
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL = output
            session.videoComposition = vc
            assert(session:export())
            local generator = av.imageGenerator(comp, { videoComposition = vc })
            for _, frame in ipairs({ 0, 30, 31, 42 }) do
              generator:copyImage(av.time(frame, 30), ("%s/%d.png"):format(directory, frame))
            end
            -- Half a frame after frame 30: still frame 30, exactly.
            generator:copyImage(av.time(61, 60), directory .. "/30.5.png")
            local ok, message = pcall(generator.copyImage, generator, 2.5, directory .. "/late.png")
            print(message)
            """, name: "stills.lua", arguments: [video, directory, try Fixtures.clip(seconds: 2)])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("time 2.5 s is outside the composition (0…2.0 s)"), "\(result.out)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/late.png"))

        // Compared by luma: the PNG's RGB comes from full-resolution chroma, ffmpeg's default
        // conversion interpolates chroma differently (about 3 levels of RGB on testsrc2).
        for frame in [0, 30, 31, 42] {
            let still = try Tool.rgbFrame(directory + "/\(frame).png", at: 0)
            #expect(still.width == 320 && still.height == 240)
            let exported = try lumaDifference(still, Tool.rgbFrame(video, at: Double(frame) / 30))
            #expect(exported < 2, "frame \(frame): mean difference \(exported) from the exported frame")
            for neighbour in [frame - 1, frame + 1] where neighbour >= 0 {
                let other = try lumaDifference(still, Tool.rgbFrame(video, at: Double(neighbour) / 30))
                #expect(exported < other / 2, "frame \(frame) looks as much like exported frame \(neighbour) (\(other) vs \(exported))")
            }
        }
        let atFrame = try Data(contentsOf: URL(fileURLWithPath: directory + "/30.png"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/30.5.png")) == atFrame, "between frames the earlier one is held")
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/31.png")) != atFrame)
    }

    /// One sizing rule for every picture: a render size that scales to half pixels gives a
    /// still of the GIF export's size (it was rounded up where the export rounds down), and a
    /// video export the nearest even size below.
    @Test func aStillHasTheExportsSizeWhenTheScaleLeavesHalfPixels() throws {
        let directory = (Fixtures.scratchPath("stills-size") as NSString).deletingLastPathComponent
        let result = try Moonreel.runScript("""
            local directory = arg[1]
            local comp = av.composition()
            comp:addMutableTrack("video"):insertTimeRange(av.range(0, 0.5), av.asset(arg[2]):tracksWithMediaType("video")[1], 0)
            local vc = av.videoComposition{ renderSize = {321, 241}, renderScale = 0.5, frameDuration = av.time(1, 10) }
            vc.instructions = { av.videoCompositionInstruction{ timeRange = av.range(0, 0.5),
              layerInstructions = { av.layerInstruction(comp:tracksWithMediaType("video")[1]) } } }
            av.imageGenerator(comp, { videoComposition = vc }):copyImage(0, directory .. "/still.png")
            for _, name in ipairs({ "out.gif", "out.mp4" }) do
              local session = av.exportSession(comp, "HighestQuality")
              session.outputURL, session.videoComposition = directory .. "/" .. name, vc
              assert(session:export())
            end
            """, name: "sizes.lua", arguments: [directory, try Fixtures.clip(seconds: 1)])
        #expect(result.status == 0, "\(result.err)")
        let still = try Tool.rgbFrame(directory + "/still.png", at: 0)
        let gif = try Tool.rgbFrame(directory + "/out.gif", at: 0)
        let video = try Tool.rgbFrame(directory + "/out.mp4", at: 0)
        #expect(still.width == 160 && still.height == 120, "still \(still.width)×\(still.height)")
        #expect(gif.width == still.width && gif.height == still.height, "GIF \(gif.width)×\(gif.height)")
        #expect(video.width == 160 && video.height == 120, "video \(video.width)×\(video.height)")
        // Each of the three says what it rounded, at the line that asked for the picture.
        #expect(result.err.contains("sizes.lua:7: renderSize 160.5×120.5 is not made of whole pixels; the output is 160×120 [sizeRounded]"), "\(result.err)")
        #expect(result.err.contains("sizes.lua:11: renderSize 160.5×120.5 is not made of whole pixels; the output is 160×120 [sizeRounded]"), "\(result.err)")
        #expect(result.err.contains("sizes.lua:11: renderSize 160.5×120.5 is not made of even whole numbers, which 4:2:0 video needs; the output is 160×120 [sizeRounded]"), "\(result.err)")
    }

    @Test func aNewVideoCompositionIsUsedFromTheNextImage() throws {
        let directory = (Fixtures.scratchPath("stills") as NSString).deletingLastPathComponent
        let result = try Moonreel.runScript("""
            local asset = av.asset(arg[2])
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 1), asset, 0)
            local function framed(size, color)
              local vc = av.videoComposition{ renderSize = size, frameDuration = av.time(1, 30) }
              local li = av.layerInstruction(comp:tracksWithMediaType("video")[1])
              li:setOpacity(0, 0)
              vc.instructions = { av.videoCompositionInstruction{ timeRange = av.range(0, 1), backgroundColor = color, layerInstructions = { li } } }
              return vc
            end
            local generator = av.imageGenerator(comp, { videoComposition = framed({320, 240}, "red") })
            generator:copyImage(0.5, arg[1] .. "/first.png")
            generator.videoComposition = framed({160, 120}, "blue")
            generator:copyImage(0.5, arg[1] .. "/second.png")
            """, name: "regenerate.lua", arguments: [directory, try Fixtures.solid("white")])
        #expect(result.status == 0, "\(result.err)")
        let first = try Tool.rgbFrame(directory + "/first.png", at: 0), second = try Tool.rgbFrame(directory + "/second.png", at: 0)
        #expect(first.width == 320 && first.height == 240 && second.width == 160 && second.height == 120)
        expectColor(first.mean(x: 0, y: 0, width: 320, height: 240), Solid.red, "first composition's background")
        expectColor(second.mean(x: 0, y: 0, width: 160, height: 120), Solid.blue, "second composition's background")
    }

    struct PhoneCase: CustomTestStringConvertible, Sendable {
        let file: String
        let width: Int
        let height: Int
        var testDescription: String { file }
    }

    @Test(arguments: [PhoneCase(file: "01_iphone4s_portrait_h264_rot90.mov", width: 320, height: 568),
                      PhoneCase(file: "05_pixel_motionphoto_hevc_rot270_2videotracks.mp4", width: 1080, height: 1440),
                      PhoneCase(file: "06_android_rot180_vfr_10fps.mp4", width: 1280, height: 720)])
    func snapshotOfAPhoneFileIsUprightAtItsDisplaySize(_ c: PhoneCase) throws {
        let source = Fixtures.real(c.file)
        // Midway between two source frames: the earlier one is shown.
        let times = try shownPacketTimes(source)
        let shown = times[times.count / 2]
        let at = (shown + times[times.count / 2 + 1]) / 2
        let png = Fixtures.scratchPath("snapshot.png")
        let result = try Moonreel.run(["snapshot", source, "--at", String(at), "-o", png])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("(\(c.width)×\(c.height)"), "\(result.out)")
        let still = try Tool.rgbFrame(png, at: 0)
        #expect(still.width == c.width && still.height == c.height, "got \(still.width)×\(still.height)")
        let upright = still.meanDifference(try Tool.referenceFrame(source, at: shown, width: c.width, height: c.height))
        #expect(upright < 12, "\(c.file): mean difference from ffmpeg's upright frame at \(shown) s is \(upright)")
    }

    @Test func snapshotWritesTheFormatItsNameAsksForAndKeepsExistingFiles() throws {
        let clip = try Fixtures.clip(seconds: 2)
        let png = Fixtures.scratchPath("frame.png")
        let directory = (png as NSString).deletingLastPathComponent
        try #require(try Moonreel.run(["snapshot", clip, "--at", "1", "-o", png]).status == 0)
        let reference = try Tool.rgbFrame(png, at: 0)
        for (name, codec) in [("frame.jpg", "mjpeg"), ("frame.jpeg", "mjpeg"), ("frame.webp", "webp")] {
            let path = directory + "/" + name
            let result = try Moonreel.run(["snapshot", clip, "--at", "1", "-o", path])
            try #require(result.status == 0, "\(result.err)")
            #expect(try Tool.ffprobe(path).video?.codec_name == codec, "\(name) holds \(codec) data")
            #expect(try Tool.rgbFrame(path, at: 0).meanDifference(reference) < 3, "\(name) shows the same picture")
        }
        let refused = try Moonreel.run(["snapshot", clip, "--at", "1", "-o", directory + "/frame.bmp"])
        #expect(refused.status == 1 && refused.errorLines == ["moonreel: image \"\(directory)/frame.bmp\": cannot tell the format from the name; use a .png, .jpg or .webp name"],
                "\(refused.err)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/frame.bmp"))

        // An existing image is kept unless --overwrite says otherwise.
        let kept = directory + "/keep.png"
        try Data("mine".utf8).write(to: URL(fileURLWithPath: kept))
        let again = try Moonreel.run(["snapshot", clip, "--at", "0.5", "-o", kept])
        #expect(again.status == 1 && again.err.contains("already exists"), "\(again.err)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept)) == Data("mine".utf8))
        #expect(try Moonreel.run(["snapshot", clip, "--at", "0.5", "-o", kept, "--overwrite"]).status == 0)
        #expect(try Tool.ffprobe(kept).video?.codec_name == "png")
    }

    /// An image generator holds its sources' decoders (open files): `<close>` lets them go
    /// when its variable goes out of scope (issue 22 §6), and a closed one says so.
    @Test func aClosedImageGeneratorLetsItsFilesGo() throws {
        let clip = try Fixtures.clip(seconds: 1)
        let still = Fixtures.scratchPath("still.png")
        let result = try Moonreel.runScript("""
            local function openCopies(path)
              local pid = io.open("/proc/self/stat"):read("n")
              local listing = io.popen("ls -l /proc/" .. pid .. "/fd 2>/dev/null"):read("a")
              local count = 0
              for _ in listing:gmatch((path:gsub("%p", "%%%0"))) do count = count + 1 end
              return count
            end
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 1), av.asset(arg[1]), 0)
            local kept
            do
              local generator <close> = av.imageGenerator(comp)
              generator:copyImage(0.5, arg[2])
              print("in scope", openCopies(arg[1]))
              kept = generator
            end
            print("after", openCopies(arg[1]))
            print(pcall(kept.copyImage, kept, 0.5, arg[2] .. ".png"))
            """, arguments: [clip, still])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "in scope\t1\nafter\t0\nfalse\tbad argument #1 to 'copyImage' (this ImageGenerator was closed (its <close> variable went out of scope))\n", "\(result.out)")
        #expect(try Tool.ffprobe(still).video != nil)
    }
}

/// Mean absolute difference of BT.601 luma, in levels.
func lumaDifference(_ a: Image, _ b: Image) -> Double {
    var total = 0.0
    for i in stride(from: 0, to: min(a.pixels.count, b.pixels.count) - 2, by: 3) {
        let difference = 0.299 * (Double(a.pixels[i]) - Double(b.pixels[i])) + 0.587 * (Double(a.pixels[i + 1]) - Double(b.pixels[i + 1]))
            + 0.114 * (Double(a.pixels[i + 2]) - Double(b.pixels[i + 2]))
        total += abs(difference)
    }
    return total / Double(max(a.width * a.height, 1))
}
