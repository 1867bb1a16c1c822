import Foundation
import Testing
import TestSupport
@testable import MoonreelEngine

/// `AudioAnalysis` and `SceneAnalysis` on media with known answers, made by the ffmpeg CLI's
/// generators: click and drum patterns at set tempos (with and without swing and noise),
/// bursts with pauses, shots cut at set frames and a pan; and against the aubio CLI.
@Suite struct MediaAnalysisTests {
    /// Where the music starts: the beat tracker must not invent beats in the silence before.
    static let musicStart = 0.5
    static let seconds = 20.0

    enum Pattern: String, CaseIterable {
        /// A 1 kHz click on every beat, the first of each bar louder.
        case clicks
        /// Kick on 1 and 3 (1 louder), snare on 2 and 4, hi-hat on straight eighths.
        case drums
        /// The same with swung eighths (the off-beat hat two thirds through the beat) and a
        /// noise floor at about −29 dBFS.
        case swungDrumsInNoise
        /// Kick on 1 and 3, snare on 2 and 4, and a bass and chord note on every eighth, no
        /// hats: the body of the music pulses at twice the tempo, the snare's backbeat says
        /// the beat (90 and 120 read 180 and 240 before the backbeat was heard).
        case backbeatOverEighths
    }

    /// An aevalsrc expression for `pattern` at `bpm`; register 0 holds the time since the music began.
    static func expression(_ pattern: Pattern, bpm: Double) -> String {
        let p = 60 / bpm
        let since = { (offset: Double, period: Double) in "mod(ld(0)+\(offset),\(period))" }
        let body: String
        switch pattern {
        case .clicks:
            let click = { (m: String, gain: Double) in "\(gain)*sin(2*PI*1000*\(m))*exp(-\(m)*80)" }
            body = click(since(0, 4 * p), 0.4) + "+" + click(since(0, p), 0.5)
        case .drums, .swungDrumsInNoise:
            let kick = { (m: String, gain: Double) in "\(gain)*sin(2*PI*55*\(m))*exp(-\(m)*18)" }
            let snare = "0.35*(2*random(1)-1)*exp(-\(since(p, 2 * p))*30)"
            let eighth = pattern == .drums ? since(0, p / 2)
                : "if(lt(\(since(0, p)),\(2 * p / 3)),\(since(0, p)),\(since(0, p))-\(2 * p / 3))"
            let hat = "0.12*(2*random(2)-1)*exp(-(\(eighth))*250)"
            body = [kick(since(0, 4 * p), 0.9), kick(since(2 * p, 4 * p), 0.6), snare, hat].joined(separator: "+")
        case .backbeatOverEighths:
            let kick = { (m: String, gain: Double) in "\(gain)*sin(2*PI*55*\(m))*exp(-\(m)*18)" }
            let snare = "0.35*(2*random(1)-1)*exp(-\(since(p, 2 * p))*30)"
            let eighth = since(0, p / 2)
            let notes = "0.3*sin(2*PI*110*\(eighth))*exp(-\(eighth)*20)+0.15*sin(2*PI*440*\(eighth))*exp(-\(eighth)*20)"
            body = [kick(since(0, 4 * p), 0.9), kick(since(2 * p, 4 * p), 0.6), snare, notes].joined(separator: "+")
        }
        let noise = pattern == .swungDrumsInNoise ? "+0.06*(2*random(3)-1)" : ""
        return "st(0,t-\(musicStart));gte(ld(0),0)*(\(body))\(noise)"
    }

    static func music(_ pattern: Pattern, bpm: Double, container: String = "wav") throws -> String {
        try Fixtures.cached("analysis-\(pattern.rawValue)-\(bpm).\(container)") { path in
            let codec = container == "wav" ? ["-c:a", "pcm_s16le"] : ["-c:a", "aac", "-b:a", "160k"]
            try Tool.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='\(expression(pattern, bpm: bpm))':s=44100:c=stereo:d=\(seconds)"] + codec + [path])
        }
    }

    static func audioTrack(_ path: String) throws -> AssetTrack {
        let asset = try Asset(path: path)
        return try #require(asset.tracks(withMediaType: .audio).first)
    }

    /// Beats at the right times: at least 95 % of the true beats have a found beat within 20 ms,
    /// and no more than 5 % of the found beats are not true ones; the tempo within 1 BPM.
    @Test(arguments: [90.0, 120, 128, 174], Pattern.allCases)
    func beatsLandWithin20msAndTheTempoWithin1BPM(bpm: Double, pattern: Pattern) throws {
        let analysis = try AudioAnalysis.analyze(Self.audioTrack(Self.music(pattern, bpm: bpm)))
        let truth = stride(from: Self.musicStart, to: Self.seconds - 0.05, by: 60 / bpm).map { $0 }
        let matched = truth.filter { beat in analysis.beats.contains { abs($0 - beat) <= 0.02 } }
        let stray = analysis.beats.filter { beat in !truth.contains { abs($0 - beat) <= 0.02 } }
        let errors = truth.compactMap { beat in analysis.beats.map { $0 - beat }.min { abs($0) < abs($1) } }.filter { abs($0) <= 0.05 }
        print("\(pattern) at \(bpm) BPM: tempo \(analysis.tempo ?? 0) (confidence \(analysis.tempoConfidence)), \(matched.count)/\(truth.count) beats within 20 ms, \(stray.count) stray, mean error \(1000 * errors.reduce(0, +) / Double(max(errors.count, 1))) ms")
        #expect(Double(matched.count) >= 0.95 * Double(truth.count), "\(pattern) at \(bpm) BPM: \(matched.count) of \(truth.count) beats found; found \(analysis.beats.prefix(8))")
        #expect(Double(stray.count) <= 0.05 * Double(analysis.beats.count), "stray beats \(stray.prefix(8))")
        #expect(abs((analysis.tempo ?? 0) - bpm) <= 1, "tempo \(analysis.tempo ?? 0) for \(bpm)")
        #expect(analysis.beats.allSatisfy { $0 >= Self.musicStart - 0.02 }, "a beat in the silence before the music: \(analysis.beats.prefix(3))")
    }

    /// Downbeats fall on the louder first beat of each bar; onsets on every hit.
    @Test func downbeatsAndOnsetsOfAClickTrack() throws {
        let bpm = 120.0
        let analysis = try AudioAnalysis.analyze(Self.audioTrack(Self.music(.clicks, bpm: bpm)))
        let bars = stride(from: Self.musicStart, to: Self.seconds - 0.05, by: 4 * 60 / bpm).map { $0 }
        let matchedBars = bars.filter { bar in analysis.downbeats.contains { abs($0 - bar) <= 0.02 } }
        #expect(Double(matchedBars.count) >= 0.95 * Double(bars.count), "downbeats \(analysis.downbeats.prefix(6))")
        #expect(analysis.downbeats.count <= bars.count + 1)
        let clicks = stride(from: Self.musicStart, to: Self.seconds - 0.05, by: 60 / bpm).map { $0 }
        let heard = clicks.filter { click in analysis.onsets.contains { abs($0.time - click) <= 0.02 } }
        #expect(heard.count == clicks.count, "onsets \(analysis.onsets.prefix(6).map(\.time))")
        #expect(analysis.onsets.count <= clicks.count + 2, "\(analysis.onsets.count) onsets for \(clicks.count) clicks")
        #expect(analysis.onsets.allSatisfy { (0...1).contains($0.strength) })
    }

    /// Two hits in 20 s of room tone are two onsets: with the envelope measured against its
    /// 99th percentile alone, that was the noise floor, and its every ripple was an onset.
    @Test func twoHitsInRoomToneAreTwoOnsets() throws {
        let hits = [5.0, 14.0]
        let sound = hits.map { "gte(t,\($0))*0.5*exp(-30*(t-\($0)))*sin(2*PI*1000*t)" }.joined(separator: "+")
        let path = try Fixtures.cached("analysis-two-hits.wav") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='\(sound)+0.005*(2*random(0)-1)':s=44100:d=20", "-c:a", "pcm_s16le", path])
        }
        let onsets = try AudioAnalysis.analyze(Self.audioTrack(path)).onsets
        #expect(hits.allSatisfy { hit in onsets.contains { abs($0.time - hit) <= 0.02 } }, "\(onsets.prefix(8))")
        #expect(onsets.count <= hits.count + 1, "\(onsets.count) onsets for \(hits.count) hits: \(onsets.prefix(8))")
    }

    /// AAC's priming delay is accounted for: the beats of the same music in an M4A are where they are in the WAV.
    @Test func compressedAudioKeepsTheBeatTimes() throws {
        let wav = try AudioAnalysis.analyze(Self.audioTrack(Self.music(.drums, bpm: 128)))
        let m4a = try AudioAnalysis.analyze(Self.audioTrack(Self.music(.drums, bpm: 128, container: "m4a")))
        let shifts = m4a.beats.compactMap { beat in wav.beats.map { $0 - beat }.min { abs($0) < abs($1) } }
        #expect(shifts.filter { abs($0) <= 0.01 }.count >= shifts.count * 95 / 100, "shifts \(shifts.prefix(8))")
    }

    /// The aubio CLI (another implementation) hears the same beats.
    @Test func aubioHearsTheSameBeats() throws {
        for (pattern, bpm) in [(Pattern.drums, 120.0), (.swungDrumsInNoise, 90)] {
            let path = try Self.music(pattern, bpm: bpm)
            let ours = try AudioAnalysis.analyze(Self.audioTrack(path))
            let result = try Tool.run("aubio", ["beat", path])
            try #require(result.status == 0, "aubio beat failed: \(result.err)")
            let theirs = result.out.split(whereSeparator: \.isNewline).compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
                .filter { $0 > Self.musicStart + 2 && $0 < Self.seconds - 1 }
            let agreed = theirs.filter { beat in ours.beats.contains { abs($0 - beat) <= 0.03 } }
            print("aubio, \(pattern) at \(bpm): \(agreed.count) of \(theirs.count) of its beats within 30 ms of ours")
            #expect(theirs.count > 10 && Double(agreed.count) >= 0.9 * Double(theirs.count),
                    "aubio's beats \(theirs.prefix(6)), ours \(ours.beats.prefix(10))")
        }
    }

    /// Bursts with pauses (a talk's rhythm): the pauses at least 0.3 s long are found within
    /// 20 ms at each edge, the shorter one is not, and the loudness follows the level.
    @Test func silencesAreFoundWithin20msAndLoudnessFollows() throws {
        let bursts = [(0.5, 1.7), (1.9, 3.1), (4.0, 6.0), (6.35, 7.2)]
        let inside = bursts.map { "between(t,\($0.0),\($0.1))" }.joined(separator: "+")
        let path = try Fixtures.cached("analysis-bursts.wav") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "aevalsrc='(\(inside))*0.1*sin(2*PI*997*t)+0.0005*(2*random(0)-1)':s=48000:d=9",
                             "-c:a", "pcm_s16le", path])
        }
        let analysis = try AudioAnalysis.analyze(Self.audioTrack(path))
        let found = analysis.silences(threshold: -40, minimumDuration: 0.3).map { ($0.start.seconds, $0.end.seconds) }
        let expected = [(0.0, 0.5), (3.1, 4.0), (6.0, 6.35), (7.2, 9.0)]
        #expect(found.count == expected.count, "silences \(found)")
        for (got, wanted) in zip(found, expected) {
            #expect(abs(got.0 - wanted.0) <= 0.02 && abs(got.1 - wanted.1) <= 0.02, "silence \(got) for \(wanted)")
        }
        // 0.2 s pause between the first two bursts counts only when shorter pauses are asked for.
        #expect(analysis.silences(threshold: -40, minimumDuration: 0.15).contains { abs($0.start.seconds - 1.7) <= 0.02 })
        // A −20 dBFS 997 Hz mono sine reads about −23 LUFS once its 400 ms window is full (EBU R128).
        let index = Int(5.0 / AudioAnalysis.loudnessInterval)
        #expect(abs(analysis.loudness[index] - -23) <= 0.5, "momentary loudness at 5 s: \(analysis.loudness[index])")
        #expect(analysis.loudness[Int(8.5 / AudioAnalysis.loudnessInterval)] < -60)
        #expect(abs(Double(analysis.loudness.count) - 90) <= 1)
    }

    /// Shots cut at known frames: every cut is found at its frame; a continuous pan (every
    /// frame differs from the last) gives none.
    @Test func sceneCutsAreFoundAndAPanIsNotACut() throws {
        let path = try Fixtures.cached("analysis-scenes.mp4") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=2",
                             "-f", "lavfi", "-i", "smptebars=size=320x240:rate=25:duration=1.6",
                             "-f", "lavfi", "-i", "mandelbrot=size=320x240:rate=25",
                             // A pan across a large still picture: 6 pixels a frame.
                             "-f", "lavfi", "-i", "testsrc=size=1280x240:rate=25:duration=1",
                             "-filter_complex",
                             "[2]trim=duration=1.4,setpts=PTS-STARTPTS[m];[3]loop=loop=-1:size=1,trim=duration=2.4,setpts=N/25/TB,crop=320:240:'n*6':0[pan];"
                                + "[0][1][m][pan]concat=n=4:v=1[v]",
                             "-map", "[v]", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", path])
        }
        let asset = try Asset(path: path)
        let scenes = try SceneAnalysis.analyze(#require(asset.tracks(withMediaType: .video).first))
        let cuts = scenes.cuts().map(\.time)
        let expected = [2.0, 3.6, 5.0]
        #expect(cuts.count == expected.count, "cuts \(cuts) (scores \(scenes.cuts().map(\.score)))")
        for (got, wanted) in zip(cuts, expected) { #expect(abs(got - wanted) < 0.001, "cut at \(got) for \(wanted)") }
        #expect(scenes.frameTimes.count == 185)
        // libavfilter's scdet sees the same cuts.
        let scdet = try Tool.run("ffmpeg", ["-hide_banner", "-nostdin", "-i", path, "-vf", "scdet=threshold=10", "-f", "null", "-"])
        let theirs = scdet.err.components(separatedBy: "lavfi.scd.time: ").dropFirst().compactMap { Double($0.prefix { !$0.isWhitespace }) }
        for wanted in expected { #expect(theirs.contains { abs($0 - wanted) < 0.001 }, "scdet \(theirs)") }
    }

    /// Issue 36 §6: the real 10 fps Android clip converted to 30 fps shows each picture three
    /// times; every new picture after its repeats was reported as a cut (7 to 9 false cuts in
    /// its 2.4 s). Repeats are not cuts, whatever the codec left of them; a real cut spliced
    /// in is still found.
    @Test(arguments: [["-c:v", "libx264", "-crf", "23"], ["-c:v", "mpeg4", "-q:v", "8"]])
    func repeatedPicturesAreNotCuts(codec: [String]) throws {
        let clip = Fixtures.real("06_android_rot180_vfr_10fps.mp4")
        let path = try Fixtures.cached("android-30fps-\(codec[1]).mp4") { path in
            try Tool.ffmpeg(["-i", clip, "-f", "lavfi", "-i", "testsrc2=size=352x288:rate=30:duration=1",
                             "-filter_complex", "[0:v]fps=30,scale=352:288,setsar=1[a];[1:v]setsar=1[b];[a][b]concat=n=2:v=1[v]",
                             "-map", "[v]", "-pix_fmt", "yuv420p"] + codec + [path])
        }
        let asset = try Asset(path: path)
        let scenes = try SceneAnalysis.analyze(#require(asset.tracks(withMediaType: .video).first))
        let cuts = scenes.cuts().map(\.time)
        let end = try #require(scenes.frameTimes.last) - 1
        #expect(cuts.count == 1 && abs((cuts.first ?? 0) - end) < 0.05, "one cut, where the test pattern starts (\(end) s): \(cuts)")
    }

    /// Issue 36 §6: dissolves and fades were never reported. Real shots joined by ffmpeg
    /// (`Fixtures.realTransitions`: a handheld shot dissolving into one from a moving car, a
    /// fade through black into a handheld selfie, a hard cut): each transition is found with
    /// its kind, its start within 0.1 s and its length within 0.2 s; the cut stays one cut, and
    /// no cut is reported inside the transitions.
    @Test func aDissolveAndAFadeBetweenRealShotsAreTransitionsAndACutStaysACut() throws {
        let asset = try Asset(path: Fixtures.realTransitions())
        let scenes = try SceneAnalysis.analyze(#require(asset.tracks(withMediaType: .video).first))
        let found = scenes.transitions
        try #require(found.count == 2, "\(found)")
        for (transition, (kind, wanted)) in zip(found, [(SceneTransition.Kind.dissolve, Fixtures.realDissolve), (.fade, Fixtures.realFade)]) {
            #expect(transition.kind == kind && abs(transition.time - wanted.time) <= 0.1 && abs(transition.duration - wanted.duration) <= 0.2,
                    "\(transition) for a \(kind) at \(wanted)")
        }
        let end = try #require(scenes.frameTimes.last) + 1.0 / 30
        let cuts = scenes.cuts().map(\.time)
        #expect(cuts.count == 1 && abs((cuts.first ?? 0) - (end - Fixtures.realCutBeforeEnd)) < 0.05, "one cut, \(Fixtures.realCutBeforeEnd) s before the end: \(cuts)")
    }

    /// Issue 36 §6: the car's two real cuts (fixture 12: fields to a town at 1.752 s, to a
    /// bank of earth at 2.878 s, looked at frame by frame) join views laid out alike, sky over
    /// land, so the luma changed by 8.0 and 4.2 and neither was found. The histograms see
    /// both; the handheld phone clips as recorded still have no cut.
    @Test func cutsBetweenLikeViewsAreFoundAndHandheldClipsHaveNone() throws {
        let car = try SceneAnalysis.analyze(#require(Asset(path: Fixtures.real("12_vp9_profile2_10bit.webm")).tracks(withMediaType: .video).first))
        let cuts = car.cuts().map(\.time)
        #expect(cuts.count == 2 && zip(cuts, [1.752, 2.878]).allSatisfy { abs($0 - $1) < 0.01 }, "\(car.cuts())")
        for name in ["01_iphone4s_portrait_h264_rot90.mov", "03_iphone_trimmed_hevc10_editlist_vfr.mp4", "04_android12_portrait_4k60_rot90_yuvj.mp4",
                     "06_android_rot180_vfr_10fps.mp4", "07_screenrec_extreme_vfr_noaudio.mp4"] {
            let scenes = try SceneAnalysis.analyze(#require(Asset(path: Fixtures.real(name)).tracks(withMediaType: .video).first))
            #expect(scenes.cuts().isEmpty, "\(name): \(scenes.cuts())")
        }
    }

    /// Real clips as recorded, handheld and from a car, with their shake, exposure and the
    /// car's two real cuts (fixture 12), hold no dissolve or fade.
    @Test(arguments: ["01_iphone4s_portrait_h264_rot90.mov", "03_iphone_trimmed_hevc10_editlist_vfr.mp4", "04_android12_portrait_4k60_rot90_yuvj.mp4",
                      "05_pixel_motionphoto_hevc_rot270_2videotracks.mp4", "06_android_rot180_vfr_10fps.mp4", "12_vp9_profile2_10bit.webm"])
    func unEditedRealClipsHaveNoTransitions(name: String) throws {
        let asset = try Asset(path: Fixtures.real(name))
        let scenes = try SceneAnalysis.analyze(#require(asset.tracks(withMediaType: .video).first))
        #expect(scenes.transitions.isEmpty, "\(scenes.transitions)")
    }

    /// The cache answers a second time without decoding (a changed cached answer comes back as
    /// it was changed), and a changed file is analysed again.
    @Test func theCacheAnswersUntilTheFileChanges() throws {
        let folder = Fixtures.scratchPath("cache")
        let cache = AnalysisCache(folder: folder)
        let media = Fixtures.scratchPath("song.wav")
        try FileManager.default.copyItem(atPath: Self.music(.clicks, bpm: 120), toPath: media)
        let first = try cache.audio(of: Self.audioTrack(media))
        #expect(first.loudness.allSatisfy(\.isFinite) && first.loudness.first == AudioAnalysis.silenceFloor, "silence before the music reads as the floor")
        let kept = try cache.path(of: Self.audioTrack(media), kind: "audio")
        let text = try String(contentsOfFile: kept, encoding: .utf8)
        #expect(AudioAnalysis(cacheText: text) == first, "the cached text reads back exactly")
        var altered = first
        altered.tempo = 33
        try altered.cacheText.write(toFile: kept, atomically: true, encoding: .utf8)
        #expect(try cache.audio(of: Self.audioTrack(media)).tempo == 33)
        // New content under the same name: analysed anew.
        try FileManager.default.removeItem(atPath: media)
        try FileManager.default.copyItem(atPath: Self.music(.clicks, bpm: 90), toPath: media)
        let changed = try cache.audio(of: Self.audioTrack(media))
        #expect(abs((changed.tempo ?? 0) - 90) <= 1)
        // A damaged cache file is ignored and replaced.
        try "moonreel audio analysis\ntempo x".write(toFile: cache.path(of: Self.audioTrack(media), kind: "audio"), atomically: true, encoding: .utf8)
        #expect(try cache.audio(of: Self.audioTrack(media)) == changed)
    }

    /// Issue 35 §16: a file replaced between the hashing and the decoding stored the other
    /// file's beats under the first file's digest (7 of 7 tries). Now nothing is kept then.
    @Test func aFileReplacedWhileAnalysedIsNotCachedUnderTheOldDigest() throws {
        let cache = AnalysisCache(folder: Fixtures.scratchPath("cache"))
        let media = Fixtures.scratchPath("song.wav")
        try FileManager.default.copyItem(atPath: Self.music(.clicks, bpm: 120), toPath: media)
        let digestPath = try cache.path(of: Self.audioTrack(media), kind: "audio")
        let made = try cache.cached(Self.audioTrack(media), kind: "audio") {
            // The hash is taken; now another song takes the file's place, and is the one decoded.
            try FileManager.default.removeItem(atPath: media)
            try FileManager.default.copyItem(atPath: Self.music(.clicks, bpm: 90), toPath: media)
            return try AudioAnalysis.analyze(Self.audioTrack(media))
        }
        #expect(abs((made.tempo ?? 0) - 90) <= 1, "the run gets what it decoded")
        #expect(!FileManager.default.fileExists(atPath: digestPath), "but it is not kept as the 120 BPM file's analysis")
        // Unchanged, it is kept.
        _ = try cache.audio(of: Self.audioTrack(media))
        #expect(FileManager.default.fileExists(atPath: try cache.path(of: Self.audioTrack(media), kind: "audio")))
    }

}
