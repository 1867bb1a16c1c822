import Foundation
import Testing
import TestSupport

/// Writer settings (`session.videoSettings`, `session.audioSettings`), the containers, GIFs
/// and image sequences they write, and `fileLengthLimit`: every output is read back with
/// ffprobe/ffmpeg, every refusal comes before any file exists.
@Suite struct WriterSettingsTests {
    /// 8 s of testsrc2 at 320×240, 30 fps, with a tone: long enough for rate control to settle.
    static let clip: String = (try? Fixtures.clip(seconds: 8, name: "settings-clip.mp4")) ?? ""

    /// Exports `arg[1]` once per remaining argument "output|videoSettings|audioSettings|fileLengthLimit"
    /// (Lua table constructors, empty for none), printing "output estimate maxDuration stoppedBy outputDuration".
    static let exportEach = """
        local asset = av.asset(arg[1])
        for i = 2, #arg do
          local output, video, audio, limit = arg[i]:match("^([^|]*)|([^|]*)|([^|]*)|([^|]*)$")
          local session = av.exportSession(asset, "HighestQuality")
          session.outputURL = output
          if video ~= "" then session.videoSettings = load("return " .. video)() end
          if audio ~= "" then session.audioSettings = load("return " .. audio)() end
          if limit ~= "" then session.fileLengthLimit = tonumber(limit) end
          local estimate, longest = session.estimatedOutputFileLength, session.maxDuration
          local ok, err = session:export()
          if not ok then error(err, 0) end
          print(output, estimate, longest, session.stoppedBy or "-", session.outputDuration)
        end
        """

    /// The printed line of each output: estimate, maxDuration, stoppedBy, outputDuration.
    func exportEach(_ cases: [String]) throws -> [String: [String]] {
        let result = try Moonreel.runScript(Self.exportEach, arguments: [Self.clip] + cases)
        try #require(result.status == 0, "\(result.err)")
        return Dictionary(uniqueKeysWithValues: result.out.split(separator: "\n").map { line in
            let fields = line.split(separator: "\t").map(String.init)
            return (fields[0], Array(fields.dropFirst()))
        })
    }

    /// Bits per second of a stream's packets over the file's length.
    func bitRate(_ path: String, stream: String = "v:0") throws -> Double {
        let sizes = try Tool.run("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", "packet=size", "-of", "csv=p=0", path]).out
        let bytes = sizes.split(separator: "\n").compactMap { Int($0.split(separator: ",")[0]) }.reduce(0, +)
        return Double(bytes * 8) / (try Tool.ffprobe(path).duration)
    }

    /// Indices of the key frames in presentation order.
    func keyframes(_ path: String) throws -> [Int] {
        let flags = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=key_frame", "-of", "csv=p=0", path]).out
        return flags.split(separator: "\n").enumerated().filter { $0.element.hasPrefix("1") }.map(\.offset)
    }

    func profile(_ path: String) throws -> String {
        try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=profile", "-of", "csv=p=0", path])
            .out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// What `ffmpeg -v error` says while decoding every stream: nothing for a sound file.
    func decodeErrors(_ path: String) throws -> String {
        try Tool.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0", "-f", "null", "-"]).err
    }

    /// Issue 25: a GIF export printed a note about 4:2:0 video and lost a pixel of each odd
    /// side; GIFs and images keep any whole size, and say nothing about chroma.
    @Test(arguments: ["out.gif", "frames/%03d.png", "frames/%03d.jpg"])
    func gifsAndImagesKeepOddSizesWithoutA420Note(_ name: String) throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder + "/frames", withIntermediateDirectories: true)
        let result = try Moonreel.runScript("""
            local a = av.asset(arg[1]); local comp = av.composition(); comp:insertTimeRange(av.range(0, 0.5), a, 0)
            local s = av.exportSession(comp, "HighestQuality"); s.outputURL = arg[2]
            s.videoComposition = av.videoComposition(comp, { renderSize = {161, 121}, fit = "fit" })
            assert(s:export())
            """, arguments: [try Fixtures.clip(seconds: 1), folder + "/" + name])
        #expect(result.status == 0 && !result.err.contains("4:2:0"), "\(result.err)")
        let first = folder + "/" + (name.hasPrefix("frames") ? name.replacingOccurrences(of: "%03d", with: "001") : name)
        let video = try #require(try Tool.ffprobe(first).streams.first)
        #expect(video.width == 161 && video.height == 121, "\(name): \(video.width ?? 0)×\(video.height ?? 0)")
    }

    @Test func codecsPixelFormatsBitRatesAndKeyframes() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let out = { (name: String) in folder + "/" + name }
        let printed = try exportEach([
            out("h264.mp4") + "|{codec='h264', bitRate=400000, keyframeInterval=2, preset='veryfast'}|{codec='mp3', bitRate=128000}|",
            out("hevc.mkv") + "|{codec='hevc', pixelFormat='yuv420p10le', bitRate=400000, keyframeInterval=1, preset='veryfast'}|{codec='flac'}|",
            out("vp9.webm") + "|{bitRate=400000, keyframeInterval=2}|{bitRate=64000}|",
            out("av1.mp4") + "|{codec='av1', bitRate=400000, keyframeInterval=2}|{codec='opus'}|",
            out("prores.mov") + "|{codec='prores', profile='standard'}|{codec='pcm', sampleRate=44100, channels=2}|",
            out("h264-422.mov") + "|{codec='h264', pixelFormat='yuv422p10le', crf=20}||",
            out("vp9-10bit.mkv") + "|{codec='vp9', pixelFormat='yuv420p10le', crf=40}||",
            out("plain.m4v") + "|||",
        ])
        let expected: [(String, video: String, pixels: String, audio: String, keyframeEvery: Int?)] = [
            ("h264.mp4", "h264", "yuv420p", "mp3", 60), ("hevc.mkv", "hevc", "yuv420p10le", "flac", 30),
            ("vp9.webm", "vp9", "yuv420p", "opus", 60), ("av1.mp4", "av1", "yuv420p", "opus", 60),
            ("prores.mov", "prores", "yuv422p10le", "pcm_s16le", 1), ("h264-422.mov", "h264", "yuv422p10le", "aac", nil),
            ("vp9-10bit.mkv", "vp9", "yuv420p10le", "aac", nil), ("plain.m4v", "h264", "yuv420p", "aac", nil),
        ]
        for (name, video, pixels, audio, keyframeEvery) in expected {
            let path = out(name)
            let probe = try Tool.ffprobe(path)
            #expect(probe.video?.codec_name == video && probe.video?.pix_fmt == pixels, "\(name): \(String(describing: probe.video))")
            #expect(probe.audio?.codec_name == audio, "\(name): \(String(describing: probe.audio))")
            #expect(probe.video?.frameCount == 240 && abs(probe.duration - 8) < 0.1, "\(name): \(probe.video?.frameCount ?? 0) frames")
            #expect(printed[path]?[2] == "-" && printed[path]?[3] == "8.0", "\(name): \(printed[path] ?? [])")
            if let every = keyframeEvery {
                let keys = try keyframes(path)
                #expect(keys == Array(stride(from: 0, to: 240, by: every)), "\(name): \(keys)")
            }
        }
        for name in ["h264.mp4", "hevc.mkv", "vp9.webm", "av1.mp4"] {
            let rate = try bitRate(out(name))
            #expect(abs(rate - 400_000) < 40_000, "\(name): video at \(Int(rate)) b/s for 400000")
            // bitRate mode: the estimate is the bit rates times the length.
            let estimate = Double(printed[out(name)]?[0] ?? "") ?? 0
            let size = Double(try FileManager.default.attributesOfItem(atPath: out(name))[.size] as? Int ?? 0)
            if name != "hevc.mkv" { #expect(abs(size - estimate) < 0.15 * estimate, "\(name): \(Int(size)) bytes, estimated \(Int(estimate))") }
        }
        #expect(abs(try bitRate(out("h264.mp4"), stream: "a:0") - 128_000) < 12_800)
        let pcm = try Tool.ffprobe(out("prores.mov")).audio
        #expect(pcm?.sample_rate == "44100" && pcm?.channels == 2)
        #expect(try profile(out("prores.mov")) == "Standard" && profile(out("h264-422.mov")) == "High 4:2:2"
                && profile(out("vp9-10bit.mkv")) == "Profile 2" && profile(out("hevc.mkv")) == "Main 10")
        for name in ["h264.mp4", "vp9.webm", "av1.mp4", "prores.mov"] { #expect(try decodeErrors(out(name)).isEmpty, "\(name)") }
        // An .m4v is Apple's MP4 (FFmpeg's "m4v" muxer would write a raw MPEG-4 part 2 stream).
        #expect(try Tool.ffprobe(out("plain.m4v")).format.format_name.hasPrefix("mov,mp4"))
    }

    /// maxBitRate and bufferSize were passed to the encoder only beside bitRate: at the
    /// preset's constant quality the reviewer's 200 kb/s cap wrote 366 kb/s, x264's settings
    /// reading "rc=crf crf=18.0" with no VBV. x264 and x265 keep the quality under the cap
    /// (capped CRF): each file's rate stays under it, no second overspends the buffer, and
    /// the encoder's own settings string (in the stream) says the cap.
    @Test func maxBitRateCapsConstantQuality() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let out = { (name: String) in folder + "/" + name }
        _ = try exportEach([
            out("capped.mp4") + "|{maxBitRate=200000, bufferSize=200000}||",
            out("capped-hevc.mkv") + "|{codec='hevc', crf=10, maxBitRate=200000, bufferSize=200000, preset='veryfast'}||",
        ])
        for (name, setting) in [("capped.mp4", "vbv_maxrate=200"), ("capped-hevc.mkv", "vbv-maxrate=200")] {
            // VBV lets 8 s carry at most the buffer more than 8 s at the peak: 225000 b/s.
            let rate = try bitRate(out(name))
            #expect(rate <= 200_000 + 200_000 / 8, "\(name): video at \(Int(rate)) b/s for a 200000 cap")
            let packets = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time,size",
                                                   "-of", "csv=p=0", out(name)]).out
            var bitsEachSecond = [Int: Int]()
            for line in packets.split(separator: "\n") {
                let fields = line.split(separator: ",")
                guard fields.count == 2, let time = Double(fields[0]), let size = Int(fields[1]) else { continue }
                bitsEachSecond[Int(time), default: 0] += 8 * size
            }
            let fullest = bitsEachSecond.values.max() ?? 0
            #expect(fullest <= 200_000 + 200_000, "\(name): \(fullest) bits in one second, more than the peak and the buffer")
            let saysCap = try String(decoding: Data(contentsOf: URL(fileURLWithPath: out(name))), as: UTF8.self).contains(setting)
            #expect(saysCap, "\(name): the encoder's settings do not say \(setting)")
        }
    }

    /// keyframeInterval is kept in whole frames: the reviewer's 0.05 s at 30 fps became a
    /// keyframe every 0.067 s without a word. A timeRounded note says what it became; a whole
    /// number of frames (1 s) gets none. ffprobe finds the keyframes where the note says.
    @Test func keyframeIntervalBetweenFramesIsANote() throws {
        let (rounded, whole) = (Fixtures.scratchPath("rounded.mp4"), Fixtures.scratchPath("whole.mp4"))
        let result = try Moonreel.runScript("""
            for i, interval in ipairs({ 0.05, 1 }) do
              local s = av.exportSession(av.asset(arg[1]), "HighestQuality"); s.outputURL = arg[1 + i]
              s.videoSettings = { keyframeInterval = interval, preset = "ultrafast" }
              assert(s:export())
            end
            """, name: "gop.lua", arguments: [Self.clip, rounded, whole])
        #expect(result.status == 0, "\(result.err)")
        let said = result.err.split(separator: "\n").filter { $0.contains("keyframeInterval") }
        #expect(said.count == 1 && said[0].contains("gop.lua:4: videoSettings keyframeInterval 0.05 s is not a whole number of frames at 30 fps: a keyframe is written every 2 frames, 0.067 s"),
                "\(result.err)")
        #expect(try keyframes(rounded) == Array(stride(from: 0, to: 240, by: 2)))
        #expect(try keyframes(whole) == Array(stride(from: 0, to: 240, by: 30)))
    }

    /// An odd-sized source into ProRes 4444 was rounded to 160×120 "which 4:2:0 video needs":
    /// sides are rounded only as the pixel format's colour samples need, 4:4:4 none, 4:2:2 an
    /// even width, 4:2:0 both, each saying its own reason. ffprobe reads the sizes.
    @Test func oddSizesAreRoundedOnlyAsTheChromaNeeds() throws {
        let outputs = ["4444.mov": "{ codec = 'prores', profile = '4444' }", "422.mov": "{ codec = 'prores' }", "420.mp4": "{ preset = 'ultrafast' }"]
            .map { (Fixtures.scratchPath($0.key), $0.value) }
        let result = try Moonreel.runScript("""
            for i = 2, #arg, 2 do
              local s = av.exportSession(av.asset(arg[1]), "HighestQuality"); s.outputURL = arg[i]
              s.videoSettings = load("return " .. arg[i + 1])()
              assert(s:export())
              print(arg[i])
            end
            """, name: "odd.lua", arguments: [Fixtures.real("11_vp9_odd_161x121.webm")] + outputs.flatMap { [$0.0, $0.1] })
        #expect(result.status == 0, "\(result.err)")
        let expected = ["4444.mov": (161, 121, nil), "422.mov": (160, 121, "is not whole pixels with an even width, which 4:2:2 video needs; the output is 160×121"),
                        "420.mp4": (160, 120, "is not made of even whole numbers, which 4:2:0 video needs; the output is 160×120")]
        let said = result.err.split(separator: "\n").filter { $0.contains("161×121") }
        #expect(said.count == 2, "\(result.err)")
        for (path, _) in outputs {
            let name = (path as NSString).lastPathComponent
            let (width, height, reason) = try #require(expected[name])
            let video = try #require(try Tool.ffprobe(path).video)
            #expect(video.width == width && video.height == height, "\(name): \(video.width ?? 0)×\(video.height ?? 0)")
            if let reason { #expect(said.contains { $0.contains(reason) }, "\(name): \(result.err)") }
        }
    }

    /// ProRes frames said unspecified primaries and transfer in their headers while the MOV
    /// colr atom said 6/6/6 (ffprobe: color_transfer=unknown): the frames now carry what the
    /// encoder is told, as H.264's stream does. ffprobe reads the stream and the first
    /// decoded frame, which must agree and be known.
    @Test func proResFrameHeadersSayTheFilesColours() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let out = { (name: String) in folder + "/" + name }
        _ = try exportEach([out("colours.mov") + "|{codec='prores', profile='proxy'}||", out("colours.mp4") + "|{preset='ultrafast'}||"])
        for name in ["colours.mov", "colours.mp4"] {
            let tags = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-read_intervals", "%+#1",
                                                "-show_entries", "stream=color_primaries,color_transfer,color_space:frame=color_primaries,color_transfer,color_space",
                                                "-of", "default=nw=1", out(name)]).out
            let lines = tags.split(separator: "\n").map(String.init)
            #expect(lines.count == 6 && Set(lines).count == 3 && !tags.contains("unknown"), "\(name): \(tags)")
        }
    }

    /// A 24-bit master (a recorder's or a studio's WAV) written losslessly keeps its depth:
    /// FLAC and PCM are 24-bit for it (both were 16-bit, 8 bits dropped in silence), and
    /// every sample comes back as it was between the edges' anti-click ramps, at full scale too
    /// (it was limited to a lossy encoder's ceiling, room for its overshoot); so does a 16-bit
    /// one at 16 bits (scaled by 2^15, as decoders read it: it was off by one in the loud half).
    @Test func losslessSoundKeepsItsDepthSampleForSample() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let deep = folder + "/master24.wav", plain = folder + "/master16.wav"
        try Tool.ffmpeg(["-f", "lavfi", "-i", "sine=f=440:d=1:sample_rate=48000,volume=0.9", "-f", "lavfi", "-i", "anoisesrc=d=1:r=48000:a=0.3:seed=1",
                         "-filter_complex", "[0][1]amerge=inputs=2", "-c:a", "pcm_s24le", deep])
        try Tool.ffmpeg(["-i", deep, "-c:a", "pcm_s16le", plain])
        // A master peaking at full scale: lossless sound is not held under the lossy encoders' −1 dBFS.
        let loud = folder + "/loud24.wav"
        try Tool.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=sgn(sin(2*PI*100*t)):s=48000:d=1", "-c:a", "pcm_s24le", loud])
        let script = Moonreel.wholeAssetComposition() + """
            local session = av.exportSession(comp, "AppleM4A")
            session.outputFileType = arg[2]:match("%.(%w+)$") == "mkv" and "mkv" or "mov"
            session.outputURL = arg[2]
            session.audioSettings = {codec = arg[3]}
            assert(session:export())
            """
        /// The integer samples as ffmpeg decodes them, scaled to 24 bits.
        func samples(_ path: String) throws -> [Int32] {
            let raw = folder + "/\(UUID().uuidString).s32"
            try Tool.ffmpeg(["-i", path, "-f", "s32le", "-c:a", "pcm_s32le", raw])
            return try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Int32.self)) }.map { $0 >> 8 }
        }
        for (source, codec, output, format, bits) in [(deep, "pcm", "deep.mov", "pcm_s24le", "24"), (deep, "flac", "deep.mkv", "flac", "24"),
                                                      (plain, "pcm", "plain.mov", "pcm_s16le", "16"), (plain, "flac", "plain.mkv", "flac", "16"),
                                                      (loud, "flac", "loud.mkv", "flac", "24")] {
            let path = folder + "/" + output
            let result = try Moonreel.runScript(script, arguments: [source, path, codec])
            try #require(result.status == 0, "\(result.err)")
            let stream = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=codec_name,bits_per_raw_sample,bits_per_sample", "-of", "csv=p=0", path]).out
            #expect(stream.hasPrefix(format) && stream.contains(bits), "\(output): \(stream)")
            let (original, written) = (try samples(source), try samples(path))
            // The anti-click ramps at the clip's edges: 8 ms in, 2 ms out at 48 kHz, two channels.
            let (head, tail) = (2 * 384, 2 * 96)
            let middle = { (samples: [Int32]) in samples.dropFirst(head).dropLast(tail) }
            #expect(original.count == written.count && middle(original) == middle(written),
                    "\(output): \(zip(middle(original), middle(written)).filter { $0 != $1 }.count) samples differ")
            #expect(!result.err.contains("-bit sound"), "\(result.err)")
        }
        // The dry run names the depth it will write.
        let planned = try Moonreel.runScript(script, arguments: [deep, folder + "/planned.mov", "pcm"], options: ["--dry-run"])
        #expect(planned.status == 0 && planned.out.contains("PCM 24-bit 48 kHz stereo"), "\(planned.out) \(planned.err)")
        // A 32-bit float master loses what 24 bits do not hold, and is told.
        let float = folder + "/master32.wav"
        try Tool.ffmpeg(["-i", deep, "-c:a", "pcm_f32le", float])
        let result = try Moonreel.runScript(script, arguments: [float, folder + "/float.mov", "pcm"])
        #expect(result.status == 0 && result.err.contains("note: ") && result.err.contains("the 32-bit sound is written as 24-bit PCM, the deepest Moonreel writes [encodingChanged]"), "\(result.err)")
    }

    /// A 5.1 source is mixed down to stereo (Moonreel writes mono or stereo): a note now says
    /// so (it was silent); a script that chose the channels (audioSettings) is told nothing.
    @Test func surroundMixedDownToStereoIsANote() throws {
        let surround = try Fixtures.cached("surround.m4a") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-af", "pan=5.1|FL=c0|FR=c0|FC=c0|LFE=c0|BL=c0|BR=c0", "-c:a", "aac", path])
        }
        for channels in [nil, 2] {
            let output = Fixtures.scratchPath("mixed-\(channels ?? 2).m4a")
            let result = try Moonreel.runScript("""
                local comp = av.composition()
                comp:insertTimeRange(av.range(0, 1), av.asset(arg[1]), 0)
                local session = av.exportSession(comp, "AppleM4A")
                session.outputURL = arg[2]
                \(channels.map { "session.audioSettings = { channels = \($0) }" } ?? "")
                assert(session:export())
                """, name: "surround.lua", arguments: [surround, output])
            #expect(result.status == 0, "\(result.err)")
            #expect(try Tool.ffprobe(output).audio?.channels == (channels ?? 2))
            let said = result.errorLines.filter { $0.hasSuffix("[soundLeftOut]") }
            if channels == nil {
                #expect(said.count == 1 && said[0].contains("note: ") && said[0].contains("\"surround.m4a\" has 6 audio channels; the output is stereo (Moonreel writes mono or stereo), so they are mixed down to two"),
                        "\(result.err)")
            } else {
                #expect(said.isEmpty, "\(result.err)")
            }
        }
    }

    /// A GIF or an image sequence keeps no tags: the session's metadata was dropped in silence
    /// (an MP4 and a WebM keep every key, custom ones too). Now an `optionIgnored` warning.
    @Test func metadataAFileCannotHoldIsAWarning() throws {
        let folder = Fixtures.scratchPath("tags")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let result = try Moonreel.runScript("""
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 1), av.asset(arg[1]), 0)
            for _, out in ipairs({ "tags.gif", "tags.mp4", "tags.webm", "frames-%03d.png" }) do
              local session = av.exportSession(comp, "LowQuality")
              session.outputURL = arg[2] .. "/" .. out
              session.metadata = { title = "My Title", myKey = "custom" }
              assert(session:export())
            end
            """, name: "tags.lua", arguments: [Self.clip, folder])
        #expect(result.status == 0, "\(result.err)")
        let left = result.errorLines.filter { $0.hasSuffix("[optionIgnored]") }
        #expect(left.count == 2 && left[0].contains("tags.gif: a GIF holds no metadata; myKey, title were left out")
                && left[1].contains("frames-%03d.png: a PNG image sequence holds no metadata"), "\(result.err)")
        for kept in ["tags.mp4", "tags.webm"] {
            let tags = try Tool.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "format_tags", "-of", "compact", folder + "/" + kept]).out.lowercased()
            #expect(tags.contains("title=my title") && tags.contains("mykey=custom"), "\(kept): \(tags)")
        }
    }

    /// A GIF counts each frame's time in hundredths of a second, and players (ffmpeg, the
    /// browsers) show 1 hundredth as 10: a 60 fps GIF of 2 s played for 5.7 s, without a
    /// word. It is a timeRounded warning; 30 fps (frames of 3 and 4 hundredths) a note; 25 fps
    /// (4 each) nothing. ffprobe reads the 60 fps file as longer, the 25 fps one as 2 s.
    @Test func aGifsFrameTimesInHundredthsAreSaid() throws {
        var said: [Int: [String]] = [:]
        for rate in [60, 30, 25] {
            let output = Fixtures.scratchPath("rate-\(rate).gif")
            let result = try Moonreel.runScript("""
                local comp = av.composition()
                comp:insertTimeRange(av.range(0, 2), av.asset(arg[1]), 0)
                local vc = av.videoComposition(comp)
                vc.frameDuration = av.time(1, \(rate))
                local s = av.exportSession(comp, "HighestQuality")
                s.outputURL, s.videoComposition = arg[2], vc
                assert(s:export())
                """, name: "gif.lua", arguments: [Self.clip, output])
            #expect(result.status == 0, "\(result.err)")
            said[rate] = result.errorLines.filter { $0.hasSuffix("[timeRounded]") }
            let played = try Tool.ffprobe(output).duration
            // 2 s exactly: the last frame is given what is left to the end (at 30 fps it took the
            // 4 hundredths of the frame before, and the GIF lasted 2.01 s).
            #expect(rate == 60 ? played > 2.5 : abs(played - 2) < 0.005, "\(rate) fps: \(played) s")
        }
        #expect(said[60]?.count == 1 && said[60]?.first?.contains("gif.lua:7: a GIF at 60 fps holds frames for 1.67 hundredths of a second") == true
                && said[60]?.first?.contains("warning") == true, "\(said)")
        #expect(said[30]?.count == 1 && said[30]?.first?.contains("frames of 3 and 4 alternate") == true && said[30]?.first?.contains("note") == true, "\(said)")
        #expect(said[25]?.isEmpty == true, "\(said)")
    }

    /// AAC carries at most 6144 bits a channel per 1024 samples, and the encoder held an
    /// 8 kHz mono sound asked at 320 kb/s to 48 kb/s without a word; an MP3 of a 96 kHz
    /// recording was resampled to 48 kHz without one either. The first is a warning, the
    /// second a note; ffprobe reads the rate said, and a bit rate within the most.
    @Test func soundEncodedOtherwiseThanAskedIsSaid() throws {
        let tone = { (rate: Int) in try Fixtures.cached("tone-\(rate).wav") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=\(rate):duration=2", path])
        } }
        let export = { (input: String, output: String, settings: String) in
            try Moonreel.runScript("""
                local a = av.asset(arg[1]); local comp = av.composition(); comp:insertTimeRange(av.range(0, a.duration), a, 0)
                local s = av.exportSession(comp, "HighestQuality"); s.outputURL = arg[2]
                s.audioSettings = \(settings)
                assert(s:export())
                """, name: "sound.lua", arguments: [input, output])
        }
        let aac = Fixtures.scratchPath("low.m4a"), mp3 = Fixtures.scratchPath("high.mkv")
        let loud = try export(try tone(8000), aac, "{ bitRate = 320000 }")
        #expect(loud.status == 0 && loud.err.contains("sound.lua:4: audioSettings bitRate 320000 is more than AAC carries at 8 kHz with 1 channel: at most 48000 b/s is written"), "\(loud.err)")
        #expect((Int(try Tool.ffprobe(aac).streams.first?.bit_rate ?? "") ?? 0) <= 48000)
        // LAME moved MP3 rates to its sample-rate family's in silence (the reviewer's 320 kb/s
        // at 22.05 kHz written at 160, 8 kb/s at 48 kHz at 32): the same warning, and its figure.
        let lame = [("mp3-22k.mp4", 8000, "{ codec = \"mp3\", sampleRate = 22050, bitRate = 320000 }",
                     "MP3 carries at 22.05 kHz with 1 channel: at most 160000 b/s is written", 160_000),
                    ("mp3-48k.mp4", 48000, "{ codec = \"mp3\", bitRate = 8000 }", "MP3 carries at 48 kHz with 1 channel: at least 32000 b/s is written", 32_000)]
        for (name, source, settings, said, written) in lame {
            let output = Fixtures.scratchPath(name)
            let result = try export(try tone(source), output, settings)
            #expect(result.status == 0 && result.err.contains("sound.lua:4: audioSettings bitRate") && result.err.contains(said), "\(name): \(result.err)")
            let rate = try bitRate(output, stream: "a:0")
            #expect(abs(rate - Double(written)) < 0.05 * Double(written), "\(name): \(Int(rate)) b/s")
        }
        // libopus takes at most 256 kb/s a channel: a mono 510 kb/s (inside Opus's 6000…510000)
        // failed with FFmpeg's "between 500 and 256000". It is written at 256 kb/s, said the same way.
        let opus = Fixtures.scratchPath("opus-mono.mp4")
        let wide = try export(try tone(48000), opus, "{ codec = \"opus\", bitRate = 510000, channels = 1 }")
        #expect(wide.status == 0 && wide.err.contains("sound.lua:4: audioSettings bitRate 510000 is more than Opus carries at 48 kHz with 1 channel: at most 256000 b/s is written"), "\(wide.err)")
        #expect(try Tool.ffprobe(opus).audio?.codec_name == "opus" && bitRate(opus, stream: "a:0") <= 256_000 * 1.1)
        let resampled = try export(try tone(96000), mp3, "{ codec = \"mp3\" }")
        #expect(resampled.status == 0 && resampled.err.contains("sound.lua:4: the sound is resampled from 96 kHz to 48 kHz"), "\(resampled.err)")
        #expect(try Tool.ffprobe(mp3).streams.first?.sample_rate == "48000")
    }

    /// A video exported to .m4a lost its picture without a word (a GIF losing its sound gets
    /// soundLeftOut): a note, as AVFoundation's AppleM4A drops video by design; none for
    /// AppleM4A, whose name says sound only. ffprobe finds the sound and no picture in both.
    @Test func videoIntoAnAudioOnlyFileIsANote() throws {
        let (highest, apple) = (Fixtures.scratchPath("highest.m4a"), Fixtures.scratchPath("apple.m4a"))
        let result = try Moonreel.runScript("""
            for i, preset in ipairs({ "HighestQuality", "AppleM4A" }) do
              local s = av.exportSession(av.asset(arg[1]), preset); s.outputURL = arg[1 + i]
              assert(s:export())
            end
            """, name: "m4a.lua", arguments: [Self.clip, highest, apple])
        #expect(result.status == 0, "\(result.err)")
        let said = result.err.split(separator: "\n").filter { $0.contains("holds no picture") }
        #expect(said.count == 1 && said[0].contains("m4a.lua:3:") && said[0].contains("highest.m4a: m4a holds no picture; the video was left out"), "\(result.err)")
        for path in [highest, apple] {
            let streams = try Tool.ffprobe(path).streams.map(\.codec_type)
            #expect(streams == ["audio"], "\(path): \(streams)")
        }
    }

    @Test func gifHasOnePaletteAndEveryFrame() throws {
        let output = Fixtures.scratchPath("clip.gif")
        let result = try Moonreel.run(["run", Moonreel.example("gif.lua"), Self.clip, output, "1", "2"])
        #expect(result.status == 0 && result.err.contains("\(output): a GIF holds no sound; the audio was left out"), "\(result.err)")
        let probe = try Tool.ffprobe(output)
        #expect(probe.video?.codec_name == "gif" && probe.video?.width == 320 && probe.video?.height == 240)
        #expect(probe.video?.frameCount == 20 && abs(probe.duration - 2) < 0.05, "\(probe.video?.frameCount ?? 0) frames, \(probe.duration) s")
        #expect(probe.audio == nil)
        // Frame 5 of the GIF is the clip at 1.5 s, in at most 256 colours, dithered close to it.
        let gif = try Tool.rgbFrame(output, at: 0.5), source = try Tool.rgbFrame(Self.clip, at: 1.5)
        #expect(gif.meanDifference(source) < 8, "\(gif.meanDifference(source))")
        var colours = Set<Int>()
        for index in stride(from: 0, to: gif.pixels.count, by: 3) {
            let (red, green, blue) = (Int(gif.pixels[index]), Int(gif.pixels[index + 1]), Int(gif.pixels[index + 2]))
            colours.insert(red << 16 | green << 8 | blue)
        }
        #expect(colours.count <= 256 && colours.count > 16, "\(colours.count) colours")
    }

    @Test func imageSequencesAreNumberedCompleteAndNeverOverwritten() throws {
        let pattern = Fixtures.scratchPath("%03d.png")
        let folder = (pattern as NSString).deletingLastPathComponent
        let script = """
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 1), av.asset(arg[1]), 0)
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL = arg[2]
            if arg[3] then session.fileLengthLimit = tonumber(arg[3]) end
            local ok, err = session:export()
            print(ok, err, session.stoppedBy)
            """
        let first = try Moonreel.runScript(script, arguments: [Self.clip, pattern])
        #expect(first.out.hasPrefix("true\tnil\tnil"), "\(first.out) \(first.err)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(names == (1...30).map { String(format: "%03d.png", $0) }, "\(names)")
        // 001.png is the clip's first frame (ffmpeg converts to RGB a little differently: < 3 as for stills).
        let picture = try Tool.rgbFrame(folder + "/001.png", at: 0)
        let difference = picture.meanDifference(try Tool.rgbFrame(Self.clip, at: 0))
        let later = picture.meanDifference(try Tool.rgbFrame(Self.clip, at: 0.5))
        #expect(picture.width == 320 && difference < 3 && difference < later, "\(difference), \(later) from the frame at 0.5 s")

        // Again without overwrite: refused before anything is written, the frames untouched.
        let before = try Data(contentsOf: URL(fileURLWithPath: folder + "/001.png"))
        let again = try Moonreel.runScript(script, arguments: [Self.clip, pattern])
        #expect(again.out.contains("output \"\(folder)/001.png\" already exists; set overwrite = true"), "\(again.out)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/001.png")) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).count == 30)

        // Too few digits for the frames, or no frame number: refused, nothing written.
        let jpegs = Fixtures.scratchPath("%01d.jpg"), jpegFolder = (jpegs as NSString).deletingLastPathComponent
        let short = try Moonreel.runScript(script, arguments: [Self.clip, jpegs])
        #expect(short.out.contains("30 frames need 2 digits; use %02d so the names sort in order"), "\(short.out)")
        let unnumbered = try Moonreel.runScript(script, arguments: [Self.clip, jpegFolder + "/frame.jpg"])
        #expect(unnumbered.out.contains("an image sequence's file name needs one frame number, such as frames/%05d.png"), "\(unnumbered.out)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: jpegFolder).isEmpty)

        // A size limit keeps whole frames only, numbered from 1.
        let limited = Fixtures.scratchPath("f%02d.jpg"), limitedFolder = (limited as NSString).deletingLastPathComponent
        let cut = try Moonreel.runScript(script, arguments: [Self.clip, limited, "200000"])
        #expect(cut.out.hasPrefix("true\tnil\tfileLengthLimit"), "\(cut.out) \(cut.err)")
        let kept = try FileManager.default.contentsOfDirectory(atPath: limitedFolder).sorted()
        let bytes = try kept.map { try FileManager.default.attributesOfItem(atPath: limitedFolder + "/" + $0)[.size] as? Int ?? 0 }.reduce(0, +)
        #expect(kept.count > 3 && kept.count < 30 && kept == (1...kept.count).map { String(format: "f%02d.jpg", $0) } && bytes <= 200_000, "\(kept)")
        #expect(try Tool.ffprobe(limitedFolder + "/f01.jpg").video?.codec_name == "mjpeg")
    }

    @Test func fileLengthLimitEndsAPlayableFileUnderTheLimit() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let limits = [("limited.mp4", "{codec='h264', bitRate=400000}", "{bitRate=64000}", 200_000),
                      ("limited.webm", "{bitRate=400000}", "{bitRate=64000}", 150_000),
                      ("limited.mov", "{codec='prores'}", "{codec='pcm'}", 1_000_000)]
        let printed = try exportEach(limits.map { "\(folder)/\($0.0)|\($0.1)|\($0.2)|\($0.3)" })
        for (name, _, _, limit) in limits {
            let path = folder + "/" + name
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
            #expect(size <= limit && size > limit * 8 / 10, "\(name): \(size) bytes for a limit of \(limit)")
            #expect(try decodeErrors(path).isEmpty, "\(name)")
            let fields = printed[path] ?? []
            let written = Double(fields.last ?? "") ?? 0, expected = Double(fields[1]) ?? 0
            #expect(fields[2] == "fileLengthLimit" && written > 0.5 && written < 7, "\(name): \(fields)")
            #expect(abs(try Tool.ffprobe(path).duration - written) < 0.05, "\(name): outputDuration \(written)")
            // maxDuration is the estimate of what fits.
            #expect(abs(expected - written) < 0.3 * written, "\(name): maxDuration \(expected), wrote \(written) s")
        }
        let tooSmall = folder + "/tiny.mov"
        let refused = try Moonreel.runScript(Self.exportEach, arguments: [Self.clip, tooSmall + "|{codec='prores', profile='4444'}||32768"])
        #expect(refused.status == 1 && refused.errorLines.count == 1
                && refused.err.contains("fileLengthLimit (32768 bytes) is too small for even the first frame"), "\(refused.err)")
        #expect(!FileManager.default.fileExists(atPath: tooSmall))
    }

    @Test func badSettingsAndCombinationsAreRefusedBeforeAnyFile() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let result = try Moonreel.runScript("""
            local asset = av.asset(arg[1])
            local function try(output, preset, video, audio)
              local session = av.exportSession(asset, preset)
              session.outputURL = arg[2] .. "/" .. output
              local ok, err = pcall(function()
                if video then session.videoSettings = video end
                if audio then session.audioSettings = audio end
              end)
              if ok then ok, err = session:export() end
              print(output .. ": " .. tostring(err))
            end
            try("a.mp4", "HighestQuality", { bitrate = 1000000 })
            try("b.mp4", "HighestQuality", { crf = 20, bitRate = 1000000 })
            try("c.mp4", "HighestQuality", { crf = 60 })
            try("d.mp4", "HighestQuality", { crf = 22.5 })
            try("e.mp4", "HighestQuality", { codec = "x264" })
            try("f.mp4", "HighestQuality", { codec = "hevc", profile = "main10", pixelFormat = "yuv420p" })
            try("g.mov", "HighestQuality", { codec = "prores", bitRate = 1000000 })
            try("h.mp4", "HighestQuality", nil, { codec = "opus", sampleRate = 44100 })
            try("i.mkv", "HighestQuality", nil, { codec = "flac", bitRate = 500000 })
            try("j.mp4", "HighestQuality", { keyframeInterval = -1 })
            try("k.mp4", "HighestQuality", nil, { channels = 6 })
            try("l.webm", "HighestQuality", { codec = "h264" })
            try("m.mp4", "HighestQuality", { codec = "prores" })
            try("n.mov", "HighestQuality", nil, { codec = "opus" })
            try("o.mp4", "HighestQuality", nil, { codec = "flac" })
            try("p.m4v", "HighestQuality", { codec = "hevc" })
            try("q.gif", "HighestQuality", nil, { codec = "aac" })
            try("%03d.png", "HighestQuality", { crf = 20 })
            try("r.mp4", "Passthrough", { crf = 20 })
            try("s.m4a", "AppleM4A", { codec = "h264" })
            try("t.mp4", "HighestQuality", { bufferSize = 1000000 })
            try("u.webm", "HighestQuality", { crf = 60, preset = "fastest" })
            try("v.mp4", "HighestQuality", { codec = "hevc", deterministic = true })
            try("w.webm", "HighestQuality", { crf = 30, maxBitRate = 1000000 })
            try("x.mp4", "HighestQuality", { qp = 20, maxBitRate = 1000000 })
            """, arguments: [Self.clip, folder])
        #expect(result.status == 0, "\(result.err)")
        let expected = [
            "a.mp4: ", "bad value for ExportSession.videoSettings (unknown videoSettings key \"bitrate\"; did you mean bitRate?)",
            "b.mp4: ", "crf and bitRate exclude each other",
            "c.mp4: ", "crf for h264 must be a whole number in 0…51, got 60",
            "d.mp4: ", "crf must be a whole number, got 22.5",
            "e.mp4: ", "codec must be one of \"h264\", \"hevc\", \"prores\", \"vp9\", \"av1\", got \"x264\"",
            "f.mp4: ", "hevc profile main10 cannot carry yuv420p (it takes yuv420p10le)",
            "g.mov: ", "bitRate and maxBitRate do not apply: prores is intra-only with a data rate set by its profile (proxy, lt, standard, hq, 4444, 4444xq)",
            "h.mp4: ", "opus cannot encode 44100 Hz (it takes 48000, 24000, 16000, 12000, 8000)",
            "i.mkv: ", "flac is lossless: it takes no bitRate",
            "j.mp4: ", "keyframeInterval must be in seconds, more than 0 and at most 3600",
            "k.mp4: ", "channels must be 1 (mono) or 2 (stereo), got 6",
            "l.webm: ", "webm cannot hold h264 video: webm holds vp9, av1; h264 goes in mov, mp4, m4v, mkv",
            "m.mp4: ", "mp4 cannot hold prores video: mp4 holds h264, hevc, vp9, av1; prores goes in mov, mkv",
            "n.mov: ", "mov cannot hold opus audio: mov holds aac, pcm, mp3; opus goes in mp4, mkv, webm",
            "o.mp4: ", "mp4 cannot hold flac audio (FLAC in MP4 is experimental in FFmpeg 5.1): mp4 holds aac, opus, mp3; flac goes in mkv",
            "p.m4v: ", "m4v cannot hold hevc video: m4v holds h264; hevc goes in mov, mp4, mkv",
            "q.gif: ", "a GIF holds no sound: remove audioSettings",
            "%03d.png: ", "videoSettings do not apply to a PNG image sequence",
            "r.mp4: ", "Passthrough copies packets as they are: videoSettings and audioSettings need a re-encoding preset",
            "s.m4a: ", "AppleM4A writes audio only: remove videoSettings or choose a video preset",
            "t.mp4: ", "bufferSize goes with maxBitRate",
            "u.webm: ", "unknown preset \"fastest\" (known: ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow, placebo)",
            "v.mp4: ", "deterministic is for h264 (x264's threaded lookahead); hevc has no such switch",
            "w.webm: ", "maxBitRate needs bitRate for vp9: libvpx-vp9 caps an average bit rate, not constant quality; set bitRate too",
            "x.mp4: ", "maxBitRate caps rate control, and qp has none (every frame at one quantizer): give crf or bitRate with maxBitRate",
        ]
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(lines.count == expected.count / 2, "\(result.out)")
        for index in stride(from: 0, to: expected.count, by: 2) {
            let line = lines.first { $0.hasPrefix(expected[index]) } ?? "(no line)"
            #expect(line.contains(expected[index + 1]), "\(line)")
        }
        // u.webm's crf 60 is fine for the VP9 a .webm gets; its preset is not.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty, "every refusal came before any file")
    }

    @Test func webmExampleOnARealPhoneClip() throws {
        let phone = Fixtures.real("01_iphone4s_portrait_h264_rot90.mov")
        let output = Fixtures.scratchPath("phone.webm")
        let result = try Moonreel.run(["run", Moonreel.example("webm.lua"), phone, output, "300"])
        #expect(result.status == 0 && result.out.contains("about 0.1"), "\(result.out) \(result.err)")
        let probe = try Tool.ffprobe(output)
        #expect(probe.video?.codec_name == "vp9" && probe.audio?.codec_name == "opus" && probe.audio?.sample_rate == "48000")
        #expect(probe.video?.width == 320 && probe.video?.height == 568, "upright")
        let keys = try keyframes(output)
        #expect(keys == [0, 60], "\(keys)")
        #expect(try decodeErrors(output).isEmpty)
    }
}
