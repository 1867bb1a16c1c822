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
            for (path, transfer, exact) in [(hlg, "arib-std-b67", "agamma=0:"), (pq, "smpte2084", "")] {
                try? Tool.ffmpeg(["-i", sdr, "-vf", "zscale=\(exact)tin=bt709:pin=bt709:min=bt709:rin=tv:t=\(transfer):p=bt2020:m=bt2020nc:r=tv:npl=203,format=yuv420p10le",
                                  "-c:v", "libx265", "-crf", "16", "-preset", "ultrafast", "-x265-params", "log-level=error",
                                  "-color_primaries", "bt2020", "-color_trc", transfer, "-colorspace", "bt2020nc", path])
            }
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
        #expect(refused.status == 1 && refused.err.contains("hdr = \"keep\" needs an HEVC preset"), "\(refused.err)")
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
