import Foundation
import Testing
import TestSupport

/// HDR phone video (HLG, PQ; iPhones record HLG): tone-mapped to SDR BT.709 for H.264 and
/// stills, kept as 10-bit HDR by HEVC presets, with SDR overlays at reference white.
@Suite struct HDRTests {
    static let export = Moonreel.exportWholeAssetScript

    /// An SDR BT.709 clip (test pattern beside a fractal), and the same converted to HDR as a
    /// phone would record it (SDR white at reference white), with libx265 10-bit.
    static let sources: (sdr: String, hlg: String, pq: String) = {
        let directory = Fixtures.directory
        let sdr = directory + "/hdr-sdr.mp4", hlg = directory + "/hdr-hlg.mp4", pq = directory + "/hdr-pq.mp4"
        if !FileManager.default.fileExists(atPath: pq) {
            try? Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=640x720:rate=30:duration=2", "-f", "lavfi", "-i", "mandelbrot=size=640x720:rate=30",
                              "-filter_complex", "[0][1]hstack,format=yuv420p", "-t", "2", "-c:v", "libx264", "-crf", "10", "-preset", "ultrafast",
                              "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", sdr])
            for (path, transfer) in [(hlg, "arib-std-b67"), (pq, "smpte2084")] { try? hdr(from: sdr, transfer: transfer, to: path) }
        }
        return (sdr, hlg, pq)
    }()

    func exported(_ source: String, preset: String, hdr: String? = nil, name: String = "out.mp4") throws -> String {
        let output = Fixtures.scratchPath(name)
        let result = try Moonreel.runScript(Self.export, name: "hdr.lua", arguments: [source, output, preset] + (hdr.map { [$0] } ?? []))
        try #require(result.status == 0, "\(result.err)")
        return output
    }

    @Test func hdrToSDRRoundTripKeepsThePicture() throws {
        for source in [Self.sources.hlg, Self.sources.pq] {
            let output = try exported(source, preset: "HighestQuality")
            let video = try #require(try Tool.ffprobe(output).video)
            #expect(video.pix_fmt == "yuv420p")
            let tags = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=color_transfer,color_primaries,color_space", "-of", "csv=p=0", output]).out
            #expect(tags.contains("bt709,bt709,bt709") || tags.contains("bt709"), "\(tags)")
            let roundTrip = try Tool.psnr(output, against: Self.sources.sdr)
            #expect(roundTrip >= 28, "\(source): SDR → HDR → export is \(roundTrip) dB from the SDR original")
        }
        // Read as if it were SDR (what exports did before), the same clip is far off.
        let naive = try Tool.psnr(Self.sources.hlg, against: Self.sources.sdr, filter: "format=yuv420p")
        #expect(naive < 24, "reading HLG as SDR should be visibly wrong: \(naive) dB")
    }

    /// `sdr` in HDR as a phone or a broadcaster places SDR there (BT.2408: SDR white at
    /// reference white), with libx265 10-bit. HLG by zimg's exact maths (`agamma=0`): its
    /// default applies HLG's OOTF channel by channel where BT.2100 (and Moonreel) apply it to
    /// luminance; read back exactly, such a signal's colours come out pastel and 8 dB off
    /// (21.5 dB for the pattern of `sources`) whatever the tone curve, even with none.
    static func hdr(from sdr: String, transfer: String, to path: String) throws {
        let exact = transfer == "arib-std-b67" ? "agamma=0:" : ""
        try Tool.ffmpeg(["-i", sdr, "-vf", "zscale=\(exact)tin=bt709:pin=bt709:min=bt709:rin=tv:t=\(transfer):p=bt2020:m=bt2020nc:r=tv:npl=203,format=yuv420p10le",
                         "-c:v", "libx265", "-crf", "16", "-preset", "ultrafast", "-x265-params", "log-level=error",
                         "-color_primaries", "bt2020", "-color_trc", transfer, "-colorspace", "bt2020nc", path])
    }

    /// 100 % colour bars sit at reference white in HDR, the brightest an SDR picture holds: they
    /// come back near SDR white and as saturated as they were (no pastel from a tone curve that
    /// desaturates, or from an HLG reading that disagrees with the writer's).
    @Test func fullBarsComeBackSaturated() throws {
        // 720 lines, so the export is BT.709 like the source (below, BT.601 changes every code).
        let sdr = try Fixtures.cached("bars-sdr.mp4") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "pal100bars=size=1280x720:rate=30:duration=1",
                             "-vf", "format=gbrp,scale=out_color_matrix=bt709:out_range=tv,format=yuv420p", "-c:v", "libx264", "-qp", "0",
                             "-preset", "ultrafast", "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", path])
        }
        let hlg = try Fixtures.cached("bars-hlg.mp4") { try Self.hdr(from: sdr, transfer: "arib-std-b67", to: $0) }
        let output = try exported(hlg, preset: "HighestQuality")
        // Measured 32.4 dB (ffmpeg's Möbius graph, the curve before: 32.0; reference white to
        // SDR white with nothing rolled off: 35.0); the HLG of zscale's default: 21.2 dB.
        let roundTrip = try Tool.psnr(output, against: sdr)
        #expect(roundTrip >= 28, "100 % bars through HLG: \(roundTrip) dB")
        let original = try Tool.rgbFrame(sdr, at: 0), back = try Tool.rgbFrame(output, at: 0)
        // White, yellow, cyan, green, magenta, red, blue, black: each bar's centre.
        for bar in 0..<8 {
            let (x, y) = (80 + 160 * bar, 360)
            let before = original.pixel(x, y), after = back.pixel(x, y)
            for (was, now) in [(before.r, after.r), (before.g, after.g), (before.b, after.b)] {
                // Full channels come back at 242–245 of 255 (reference white at 0.91 of SDR
                // white), empty ones at most 15 (pastel bars measured 29–94).
                #expect(was > 128 ? now >= 236 : now <= 24, "bar \(bar): \(before) came back as \(after)")
            }
        }
    }

    /// A ramp from black to 1000 cd/m² in 32 equal steps of the HLG signal (reference white,
    /// 75 %, between the 24th and the 25th): every step stays a step in SDR, and only the last
    /// reaches SDR white. A clip flattens everything above reference white; the Möbius curve
    /// used before merged the top four steps into two codes.
    @Test func highlightRampRisesUntilItsLastStep() throws {
        let (width, height, steps) = (1024, 64, 32)
        let ramp = try Fixtures.cached("hlg-ramp.mp4") { path in
            var luma = [UInt16](repeating: 0, count: width * height)
            for x in 0..<width {
                let code = UInt16((64 + 876 * Double(x / (width / steps)) / Double(steps - 1)).rounded())
                for y in 0..<height { luma[y * width + x] = code }
            }
            let neutral = [UInt16](repeating: 512, count: width * height / 2)
            let raw = path + ".yuv"
            try (luma + neutral).withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: raw)) }
            try Tool.ffmpeg(["-f", "rawvideo", "-pix_fmt", "yuv420p10le", "-s", "\(width)x\(height)", "-r", "30", "-i", raw, "-frames:v", "15",
                             "-c:v", "libx265", "-x265-params", "lossless=1:log-level=error",
                             "-color_primaries", "bt2020", "-color_trc", "arib-std-b67", "-colorspace", "bt2020nc", path])
        }
        let (luma, _) = try Tool.luma(try exported(ramp, preset: "HighestQuality"), at: 0, tenBit: false)
        // Each step's mean away from its edges (the codec's and the chroma's blur).
        let step = width / steps
        let means = (0..<steps).map { index in
            var sum = 0
            for y in 16..<48 { for x in (index * step + 8)..<(index * step + step - 8) { sum += luma[y * width + x] } }
            return Double(sum) / Double(32 * (step - 16))
        }
        for index in 1..<steps {
            #expect(means[index] > means[index - 1] + 0.5, "step \(index) is not brighter than the one before: \(means.suffix(10))")
        }
        #expect(means[steps - 1] > 234.5, "the last step is SDR white (235): \(means.suffix(10))")
    }

    /// The real iPhone skies (600–1000 cd/m², far above reference white) keep gradation: over
    /// the brightest 15 % of the source, the SDR luma still rises with the source's. ffmpeg's
    /// plain mapping (reference white to SDR white, the rest clipped) makes all of it one
    /// white; the Möbius curve Moonreel used before left about 2 codes between the dimmest and
    /// brightest fifths of it, this curve about 3.4.
    @Test func iPhoneSkiesKeepTheirGradation() throws {
        let clipping = "zscale=agamma=0:tin=arib-std-b67:pin=bt2020:min=bt2020nc:rin=tv:t=bt709:p=bt709:m=bt709:r=tv:npl=203,format=yuv420p"
        for file in ["02_iphone14pro_portrait_hevc10_hlg_dovi.MOV", "03_iphone_trimmed_hevc10_editlist_vfr.mp4"] {
            let source = Fixtures.real(file)
            let (hdr, _) = try Tool.luma(source, at: 0, tenBit: true)
            // The brightest 15 % of the picture, cut into fifths by the source's luma.
            let sorted = hdr.sorted()
            let edges = (0...5).map { sorted[min(sorted.count * (85 + 3 * $0) / 100, sorted.count - 1)] }
            /// Mean SDR luma of the brightest fifth less that of the dimmest, and the former.
            func spread(_ luma: [Int]) -> (spread: Double, brightest: Double) {
                var sums = [Int](repeating: 0, count: 5), counts = sums
                for (source, value) in zip(hdr, luma) where source >= edges[0] {
                    let fifth = (1...4).last { source >= edges[$0] } ?? 0
                    sums[fifth] += value
                    counts[fifth] += 1
                }
                let means = zip(sums, counts).map { Double($0) / Double(max($1, 1)) }
                return (means[4] - means[0], means[4])
            }
            let ours = spread(try Tool.luma(try exported(source, preset: "HighestQuality"), at: 0, tenBit: false).values)
            let clippedPath = Fixtures.scratchPath("clipped.mp4")
            try Tool.ffmpeg(["-i", source, "-frames:v", "1", "-vf", clipping, "-c:v", "libx264", "-qp", "0", clippedPath])
            let clipped = spread(try Tool.luma(clippedPath, at: 0, tenBit: false).values)
            #expect(clipped.spread < 0.5, "\(file): ffmpeg's plain mapping was expected to clip the sky: \(clipped)")
            #expect(ours.spread >= 3 && ours.brightest < 233, "\(file): the sky's gradation is \(ours.spread) codes, its brightest fifth at \(ours.brightest)")
        }
    }

    @Test func hevcPresetsKeepHDR() throws {
        for (source, transfer) in [(Self.sources.hlg, "arib-std-b67"), (Self.sources.pq, "smpte2084")] {
            let output = try exported(source, preset: "HEVCHighestQuality")
            let line = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries",
                                                "stream=codec_name,codec_tag_string,pix_fmt,color_transfer,color_primaries,color_space", "-of", "csv=p=0", output]).out
            #expect(line.contains("hevc,hvc1,yuv420p10le,bt2020nc,\(transfer),bt2020"), "\(line)")
            #expect(try Tool.psnr(output, against: source) > 40, "\(transfer) kept")
        }
        let toneMapped = try exported(Self.sources.hlg, preset: "HEVCHighestQuality", hdr: "toneMap")
        #expect(try Tool.ffprobe(toneMapped).video?.pix_fmt == "yuv420p")
        let refused = try Moonreel.runScript(Self.export, name: "hdr.lua",
                                             arguments: [Self.sources.hlg, Fixtures.scratchPath("x.mp4"), "HighestQuality", "keep"])
        #expect(refused.status == 1 && refused.err.contains("keeping HDR (hdr \"keep\") needs an HEVC preset"), "\(refused.err)")
    }

    /// PQ and HLG clips joined: one video has one transfer, so the PQ clip is written as HLG,
    /// and a note says so (it was silent).
    @Test func pqBesideHLGIsConvertedAndSaid() throws {
        let script = Moonreel.wholeAssetComposition() + """
            local pq = av.asset(arg[2])
            comp:insertTimeRange(av.range(0, pq.durationTime), pq, comp.durationTime)
            local session = av.exportSession(comp, "HEVCHighestQuality")
            session.outputURL = arg[3]
            assert(session:export())
            """
        let output = Fixtures.scratchPath("joined.mp4")
        let result = try Moonreel.runScript(script, arguments: [Self.sources.hlg, Self.sources.pq, output])
        try #require(result.status == 0, "\(result.err)")
        #expect(result.err.contains("the PQ sources are converted to HLG, the transfer of the others: one video has one HDR transfer [encodingChanged]"), "\(result.err)")
        let transfer = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=color_transfer", "-of", "csv=p=0", output]).out
        #expect(transfer.hasPrefix("arib-std-b67"), "\(transfer)")
    }

    /// White text over a clip, exported with `preset`; returns the mean luma code inside the
    /// text's strokes (pixels brighter than everything in the grey background).
    func textWhite(over source: String, preset: String, tenBit: Bool) throws -> Double {
        let output = Fixtures.scratchPath("white.mp4")
        let result = try Moonreel.runScript(Moonreel.wholeAssetComposition() + """
            local vc = av.videoComposition(comp)
            local size = vc.renderSize
            local parent, video = av.layer{ frame = {0, 0, size.width, size.height} }, av.layer{ frame = {0, 0, size.width, size.height} }
            parent:addSublayer(video)
            parent:addSublayer(av.layer{ frame = {40, 40, 200, 100}, backgroundColor = "white" })
            vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
            """ + Moonreel.exportThroughVideoComposition(preset: "arg[3]"), name: "white.lua", arguments: [source, output, preset])
        try #require(result.status == 0, "\(result.err)")
        let (luma, width) = try Tool.luma(output, at: 1, tenBit: tenBit)
        let height = luma.count / width
        // The box is 40…240 × 40…140 from the bottom-left: rows height-140…height-40.
        var sum = 0, count = 0
        for y in (height - 130)..<(height - 50) { for x in 50..<230 { sum += luma[y * width + x]; count += 1 } }
        return Double(sum) / Double(count)
    }

    @Test func sdrOverlaysAreReferenceWhiteInHDR() throws {
        // BT.2408: SDR white is 75 % HLG (10-bit 721) and 58 % PQ (573); in SDR it is 235.
        let hlg = try textWhite(over: Self.sources.hlg, preset: "HEVCHighestQuality", tenBit: true)
        #expect(abs(hlg - 721) < 6, "white over HLG: \(hlg)")
        let pq = try textWhite(over: Self.sources.pq, preset: "HEVCHighestQuality", tenBit: true)
        #expect(abs(pq - 573) < 6, "white over PQ: \(pq)")
        let sdr = try textWhite(over: Self.sources.hlg, preset: "HighestQuality", tenBit: false)
        #expect(abs(sdr - 235) < 3, "white over tone-mapped SDR: \(sdr)")
    }

    @Test func iPhoneHLGFilesLookLikeFFmpegsToneMap() throws {
        let toneMap = Tool.toneMapFilter(transfer: "arib-std-b67")
        for (file, width, height) in [("02_iphone14pro_portrait_hevc10_hlg_dovi.MOV", 720, 1280), ("03_iphone_trimmed_hevc10_editlist_vfr.mp4", 1080, 1920)] {
            let source = Fixtures.real(file)
            let output = try exported(source, preset: "HighestQuality")
            let directory = (output as NSString).deletingLastPathComponent
            // Both pictures, side by side in the test's folder, for a person to look at.
            let ours = directory + "/moonreel.png", reference = directory + "/ffmpeg-zscale-tonemap.png"
            try Tool.ffmpeg(["-i", output, "-frames:v", "1", ours])
            try Tool.ffmpeg(["-i", source, "-frames:v", "1", "-vf", "\(toneMap),scale=\(width):\(height)", reference])
            print("\(file): compare \(ours) with \(reference)")
            // ffmpeg's Möbius curve is not Moonreel's (docs/color-and-hdr.md): measured 2.1 (02)
            // and 1.9 (03) of 255; 1.1 and 1.3 when Moonreel used that curve too.
            let difference = try Tool.rgbFrame(ours, at: 0).meanDifference(try Tool.rgbFrame(reference, at: 0))
            #expect(difference < 6, "\(file): mean difference from ffmpeg's tone-mapped frame is \(difference)")
            let naivePNG = directory + "/naive.png"
            try Tool.ffmpeg(["-i", source, "-frames:v", "1", "-vf", "scale=\(width):\(height)", naivePNG])
            #expect(try Tool.rgbFrame(ours, at: 0).meanDifference(try Tool.rgbFrame(naivePNG, at: 0)) > 3 * difference, "\(file): the naive reading differs more")
        }
    }

    @Test func dissolveBetweenHDRClipsStaysHDR() throws {
        let output = Fixtures.scratchPath("dissolve.mp4")
        let result = try Moonreel.runScript("""
            local clip = av.asset(arg[1])
            local comp = av.composition()
            local a, b = comp:addMutableTrack("video"), comp:addMutableTrack("video")
            local source = clip:tracksWithMediaType("video")[1]
            a:insertTimeRange(av.range(0, 1.5), source, 0)
            b:insertTimeRange(av.range(0, 1.5), source, 1)
            local vc = av.videoComposition(comp)
            local top, under = av.layerInstruction(a), av.layerInstruction(b)
            top:setOpacityRamp(1, 0, av.range(1, 0.5))
            vc.instructions = {
              av.videoCompositionInstruction{ timeRange = av.range(0, 1), layerInstructions = { top } },
              av.videoCompositionInstruction{ timeRange = av.range(1, 0.5), layerInstructions = { top, under } },
              av.videoCompositionInstruction{ timeRange = av.range(1.5, 1), layerInstructions = { under } },
            }
            local session = av.exportSession(comp, "HEVCHighestQuality")
            session.outputURL = arg[2]
            session.videoComposition = vc
            assert(session:export())
            """, name: "dissolve.lua", arguments: [Self.sources.hlg, output])
        try #require(result.status == 0, "\(result.err)")
        let tags = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=pix_fmt,color_transfer", "-of", "csv=p=0", output]).out
        #expect(tags.contains("yuv420p10le,arib-std-b67"), "\(tags)")
        // Before and after the dissolve the frames are the source's own; in it, a mix.
        #expect(try Tool.psnr(output, against: Self.sources.hlg, filter: "trim=end=0.9") > 38)
    }

    @Test func probeNamesTheColours() throws {
        for file in [Self.sources.pq, Fixtures.real("02_iphone14pro_portrait_hevc10_hlg_dovi.MOV")] {
            let text = try Moonreel.run(["probe", file]), json = try Moonreel.run(["probe", "--json", file])
            #expect(text.status == 0 && json.status == 0)
            if file == Self.sources.pq {
                #expect(text.out.contains("10-bit, bt2020 / smpte2084 / bt2020nc, limited range, HDR (PQ)"), "\(text.out)")
                #expect(json.out.contains("\"bitDepth\":10") && json.out.contains("\"hdr\":\"PQ\"") && json.out.contains("\"dolbyVision\":null"), "\(json.out)")
            } else {
                #expect(text.out.contains("10-bit, bt2020 / arib-std-b67 / bt2020nc, limited range, HDR (HLG), Dolby Vision 8.4"), "\(text.out)")
                #expect(json.out.contains("\"transfer\":\"arib-std-b67\"") && json.out.contains("\"dolbyVision\":\"8.4\""), "\(json.out)")
            }
        }
    }

    /// Untagged video is read, and the output tagged, by one rule (BT.709 from 720 lines,
    /// BT.601 below), so the Y'CbCr codes pass through unchanged and players show the same.
    @Test func untaggedVideoFollowsOneRule() throws {
        for (size, matrix) in [("640x480", "smpte170m"), ("1280x540", "smpte170m"), ("1280x720", "bt709")] {
            let source = Fixtures.scratchPath("untagged-\(size).mp4")
            try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=0xC03020:size=\(size):rate=30:duration=1", "-c:v", "libx264",
                             "-preset", "ultrafast", "-qp", "0", "-pix_fmt", "yuv420p", source])
            let output = try exported(source, preset: "HighestQuality")
            let tags = try Tool.run("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=color_space",
                                                "-of", "default=noprint_wrappers=1:nokey=1", output]).out
            #expect(tags.hasPrefix(matrix), "\(size): tagged \(tags)")
            func codes(_ path: String) throws -> [Int] {
                let raw = Fixtures.scratchPath("codes.yuv")
                try Tool.ffmpeg(["-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "yuv444p", raw])
                let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
                let plane = data.count / 3
                return (0..<3).map { Int(data[$0 * plane + plane / 2]) }
            }
            let before = try codes(source), after = try codes(output)
            #expect(zip(before, after).allSatisfy { abs($0 - $1) <= 2 }, "\(size): Y'CbCr \(before) became \(after)")
        }
    }
}
