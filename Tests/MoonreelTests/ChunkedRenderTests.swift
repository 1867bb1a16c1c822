import Foundation
import Testing
import TestSupport

/// Issue 23 §4: `moonreel run --chunks N` renders an export in N pieces and a sound task,
/// joined by copying packets; the result must be the single-process export's frames,
/// timestamps and sound.
@Suite struct ChunkedRenderTests {
    /// The template every chunked render here runs (bench/chunks.py runs it too), lyric-video
    /// like: the clip under a title layer, the clip's sound, `crf` and `keyframes` (seconds,
    /// 0: the encoder's choice) from the parameters.
    static let templatePath = Moonreel.checkout + "/Tests/MoonreelTests/Fixtures/pieces.lua"

    struct Job {
        let folder, template, clip: String

        init(clip: String) throws {
            template = ChunkedRenderTests.templatePath
            folder = (Fixtures.scratchPath("pieces") as NSString).deletingLastPathComponent
            self.clip = clip
        }

        /// `moonreel run` of the template into `name`, with `options` before the script.
        func run(_ name: String, _ options: [String] = [], values: [String] = []) throws -> Moonreel.Result {
            try Moonreel.run(["run", "--set", "clip=\(clip)", "--set", "output=\(path(name))"] + values.flatMap { ["--set", $0] }
                             + options + [template])
        }

        func path(_ name: String) -> String { folder + "/" + name }
        var chunkFolder: String { folder + "/chunks" }
    }

    static func frameHashes(_ path: String, stream: String = "v:0") throws -> [String] {
        let result = try Tool.run("ffmpeg", ["-v", "error", "-i", path, "-map", "0:\(stream)", "-f", "framemd5", "-"])
        return result.out.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    /// Lossless pieces: every decoded frame (and its timestamp) and the sound's PCM are the
    /// single export's; each piece starts on a keyframe; the pieces' folder is gone.
    @Test func losslessPiecesJoinIntoTheSingleExportFrameForFrame() throws {
        try MachineLoad.heavy {
            let job = try Job(clip: try Fixtures.clip(seconds: 8))
            let single = try job.run("single.mp4", values: ["crf=0"])
            #expect(single.status == 0, "\(single.err)")
            let chunked = try job.run("chunked.mp4", ["--chunks", "4", "--chunk-folder", job.chunkFolder], values: ["crf=0"])
            #expect(chunked.status == 0, "\(chunked.err)")
            #expect(chunked.out.contains("exported \(job.path("chunked.mp4"))"), "the script's own output is printed once, by the join")
            let (expected, joined) = (try Self.frameHashes(job.path("single.mp4")), try Self.frameHashes(job.path("chunked.mp4")))
            #expect(expected.count == 240)
            #expect(joined == expected, "every frame and timestamp identical")
            #expect(try Self.frameHashes(job.path("chunked.mp4"), stream: "a:0") == Self.frameHashes(job.path("single.mp4"), stream: "a:0"))
            let keyframes = try Tool.packets(job.path("chunked.mp4")).enumerated().filter { $0.element.isKeyframe }.map(\.offset)
            for start in [0, 60, 120, 180] { #expect(keyframes.contains(start), "piece starting at frame \(start) opens with a keyframe") }
            #expect(!FileManager.default.fileExists(atPath: job.chunkFolder), "pieces and logs removed once joined")
        }
    }

    /// A real iPhone clip (HEVC 10-bit, variable frame rate, an edit list) in three pieces.
    @Test func realPhoneClipInPieces() throws {
        try MachineLoad.heavy {
            let job = try Job(clip: Fixtures.real("03_iphone_trimmed_hevc10_editlist_vfr.mp4"))
            #expect(try job.run("single.mp4", values: ["crf=0"]).status == 0)
            let chunked = try job.run("chunked.mp4", ["--chunks", "3", "--chunk-folder", job.chunkFolder], values: ["crf=0"])
            #expect(chunked.status == 0, "\(chunked.err)")
            let expected = try Self.frameHashes(job.path("single.mp4"))
            #expect(expected.count > 30)
            #expect(try Self.frameHashes(job.path("chunked.mp4")) == expected)
            #expect(try Self.frameHashes(job.path("chunked.mp4"), stream: "a:0") == Self.frameHashes(job.path("single.mp4"), stream: "a:0"))
        }
    }

    /// Lossy pieces are encoded apart, so x264's rate control (which carries the QP of past
    /// frames into each keyframe) makes their frames differ slightly from the single
    /// export's; the seams must cost no visible quality: the same distance from the lossless
    /// render as the single export (within 0.5 dB), and no frame at a seam far from it.
    @Test func lossyPiecesKeepTheSingleExportsQuality() throws {
        try MachineLoad.heavy {
            let job = try Job(clip: try Fixtures.clip(seconds: 8))
            #expect(try job.run("reference.mp4", values: ["crf=0", "keyframes=1"]).status == 0)
            #expect(try job.run("single.mp4", values: ["keyframes=1"]).status == 0)
            let chunked = try job.run("chunked.mp4", ["--chunks", "4", "--chunk-folder", job.chunkFolder], values: ["keyframes=1"])
            #expect(chunked.status == 0, "\(chunked.err)")
            let (single, joined) = (try Tool.ffprobe(job.path("single.mp4")), try Tool.ffprobe(job.path("chunked.mp4")))
            #expect(joined.streams.first { $0.codec_type == "video" }?.frameCount == 240)
            #expect(single.streams.first { $0.codec_type == "video" }?.frameCount == 240)
            #expect(joined.format.duration == single.format.duration)
            let singleQuality = try Tool.psnr(job.path("single.mp4"), against: job.path("reference.mp4"))
            let chunkedQuality = try Tool.psnr(job.path("chunked.mp4"), against: job.path("reference.mp4"))
            #expect(chunkedQuality > singleQuality - 0.5, "single \(singleQuality) dB, pieces \(chunkedQuality) dB from the lossless render")
            // Seams at frames 60, 120, 180 (1 s keyframes at 30 fps, 8 s in 4 pieces): each side of each seam.
            let seams = try Tool.run("ffmpeg", ["-i", job.path("single.mp4"), "-i", job.path("chunked.mp4"), "-lavfi",
                                                "[0:v][1:v]psnr=stats_file=-", "-f", "null", "-"]).out
                .split(separator: "\n").compactMap { line -> (Int, Double)? in
                    let fields = Dictionary(uniqueKeysWithValues: line.split(separator: " ").compactMap { field -> (String, String)? in
                        let parts = field.split(separator: ":", maxSplits: 1)
                        return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
                    })
                    guard let number = fields["n"].flatMap({ Int($0) }), let value = fields["psnr_avg"] else { return nil }
                    return (number - 1, value == "inf" ? 100 : Double(value) ?? 0)
                }
                .filter { [59, 60, 119, 120, 179, 180].contains($0.0) }
            #expect(seams.count == 6)
            for (frame, value) in seams { #expect(value > 38, "frame \(frame) at a seam: \(value) dB from the single export") }
        }
    }

    /// Issue 23 §4 at constant quality: with x264 deterministic (its lookahead in step with the
    /// encode) and fixed keyframes, each piece's warm-up (frames encoded before and after its
    /// own, their packets dropped) brings x264 to every seam as the single export came to it,
    /// so the joined frames are the single export's exactly — and so ≥ 50 dB at every seam.
    /// 20 s in 4 pieces of 150 frames: the third and fourth start their encodes mid-way (at
    /// frames 120 and 270), so their rate control has to catch up with the single export's.
    @Test func deterministicPiecesAtCRFAreTheSingleExportsFrames() throws {
        try MachineLoad.heavy {
            let job = try Job(clip: try Fixtures.clip(seconds: 20))
            let values = ["crf=23", "keyframes=1", "deterministic=true"]
            #expect(try job.run("single.mp4", values: values).status == 0)
            let chunked = try job.run("chunked.mp4", ["--chunks", "4", "--chunk-folder", job.chunkFolder], values: values)
            #expect(chunked.status == 0, "\(chunked.err)")
            let frames = try Self.frameHashes(job.path("chunked.mp4")), single = try Self.frameHashes(job.path("single.mp4"))
            #expect(frames.count == 600 && frames == single, "\(zip(frames, single).filter { $0 != $1 }.count) of 600 frames differ")
        }
    }

    /// Issue 23 §4: with a constant quantizer (`videoSettings.qp`) no rate control carries
    /// state across a seam, so lossy pieces are the single export's frames exactly.
    @Test func constantQuantizerPiecesAreTheSingleExportsFrames() throws {
        try MachineLoad.heavy {
            let job = try Job(clip: try Fixtures.clip(seconds: 8))
            #expect(try job.run("single.mp4", values: ["qp=24", "keyframes=1"]).status == 0)
            let chunked = try job.run("chunked.mp4", ["--chunks", "4", "--chunk-folder", job.chunkFolder], values: ["qp=24", "keyframes=1"])
            #expect(chunked.status == 0, "\(chunked.err)")
            let frames = try Self.frameHashes(job.path("chunked.mp4")), single = try Self.frameHashes(job.path("single.mp4"))
            #expect(frames.count == 240 && frames == single)
            // Lossy: not the lossless render's frames.
            #expect(try job.run("lossless.mp4", values: ["crf=0", "keyframes=1"]).status == 0)
            let lossless = try Self.frameHashes(job.path("lossless.mp4"))
            #expect(frames != lossless)
        }
    }

    /// A run that fails leaves the pieces it rendered; the same command again renders only
    /// what is missing, then joins. Every task checks the output's place before rendering.
    @Test func aFailedRunKeepsItsPiecesAndARunAgainRendersOnlyTheRest() throws {
        try MachineLoad.heavy {
            let job = try Job(clip: try Fixtures.clip(seconds: 4, size: "320x240"))
            let options = ["--chunks", "2", "--chunk-folder", job.chunkFolder]
            let refused = try job.run("later/out.mp4", options)
            #expect(refused.status == 1)
            #expect(refused.err.contains("every task failed") && refused.err.contains("/later\" does not exist"), "\(refused.err)")
            #expect(refused.err.split(separator: "\n").count <= 3, "one cause, said once: \(refused.err)")
            // One piece rendered by its task alone (as a task that finished before a failure).
            try FileManager.default.createDirectory(atPath: job.path("later"), withIntermediateDirectories: true)
            let piece = try Moonreel.run(["run", "--chunks", "2", "--chunk-task", "piece:1", "--chunk-folder", job.chunkFolder,
                                          "--set", "clip=\(job.clip)", "--set", "output=\(job.path("later/out.mp4"))", job.template])
            #expect(piece.status == 0, "\(piece.err)")
            #expect(!FileManager.default.fileExists(atPath: job.path("later/out.mp4")), "a piece task writes no output")
            let whole = try job.run("later/out.mp4", options)
            #expect(whole.status == 0, "\(whole.err)")
            #expect(whole.err.contains("piece 1 of 2 kept from an earlier run"), "\(whole.err)")
            #expect(whole.err.contains("piece 2 of 2 done"), "\(whole.err)")
            #expect(try Tool.ffprobe(job.path("later/out.mp4")).streams.first { $0.codec_type == "video" }?.frameCount == 120)
        }
    }

    /// The pieces render in processes of their own, their words in logs removed once joined:
    /// the export's warnings (161×121 rounded to even) were never said. Each is said once,
    /// as a line and under --progress json as an event; --strict still fails.
    @Test func thePiecesWarningsAreSaidOnce() throws {
        try MachineLoad.heavy {
            let job = try Job(clip: Fixtures.real("11_vp9_odd_161x121.webm"))
            let options = ["--chunks", "2", "--chunk-folder", job.chunkFolder]
            let chunked = try job.run("chunked.mp4", options)
            #expect(chunked.status == 0, "\(chunked.err)")
            let warnings = chunked.errorLines.filter { $0.contains("warning:") }
            #expect(warnings.filter { $0.hasSuffix("[sizeRounded]") }.count == 1, "\(chunked.err)")
            #expect(Set(warnings).count == warnings.count, "each said once, by the join or for the pieces: \(chunked.err)")
            let json = try job.run("json.mp4", options + ["--progress", "json"])
            let events = json.out.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(events.filter { $0["event"] as? String == "diagnostic" && $0["kind"] as? String == "sizeRounded" }.count == 1, "\(json.out)")
            let strict = try job.run("strict.mp4", options + ["--strict"])
            #expect(strict.status == 1 && strict.err.contains("strict: "), "\(strict.err)")
            #expect(!FileManager.default.fileExists(atPath: job.path("strict.mp4")))
        }
    }

    /// Pieces start on keyframe intervals: 2 s at 30 fps with one every 0.5 s make 4 pieces,
    /// whatever --chunks asks. Asked for 8, the run said "8 pieces … joined" and the tasks of
    /// pieces 5–8 rendered nothing unsaid: a note says the real count and why, once.
    @Test func fewerPiecesThanAskedAreSaid() throws {
        try MachineLoad.heavy {
            let job = try Job(clip: try Fixtures.clip(seconds: 2))
            let chunked = try job.run("chunked.mp4", ["--chunks", "8", "--chunk-folder", job.chunkFolder], values: ["keyframes=0.5"])
            #expect(chunked.status == 0, "\(chunked.err)")
            let notes = chunked.errorLines.filter { $0.contains("is rendered in 4 pieces, not the 8 asked: its 60 frames make 4 keyframe intervals of 15 frames") }
            #expect(notes.count == 1 && notes.first?.hasSuffix("the tasks of pieces 5…8 have nothing to render [encodingChanged]") == true, "\(chunked.err)")
            #expect(!chunked.err.contains("8 pieces and the sound"), "\(chunked.err)")
            let keyframes = try Tool.packets(job.path("chunked.mp4")).enumerated().filter { $0.element.isKeyframe }.map(\.offset)
            #expect(keyframes == [0, 15, 30, 45], "\(keyframes)")
        }
    }
}
