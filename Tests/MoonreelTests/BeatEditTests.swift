import Foundation
import Testing
import TestSupport

/// Issue 26 §2, end to end: edits made from what `av.analyze` found — a montage cut on the
/// beats, a talk with its pauses cut out, a layer pulsing on beats and one following a level
/// envelope — exported by `moonreel` and measured with the ffmpeg CLI.
@Suite struct BeatEditTests {
    /// Clicks at 120 BPM from 0.5 s (a beat every 0.5 s) for 6 s, in AAC.
    static func clickSong() throws -> String {
        try Fixtures.cached("beat-edit-clicks.m4a") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i",
                             "aevalsrc='st(0,t-0.5);gte(ld(0),0)*0.6*sin(2*PI*1000*mod(ld(0),0.5))*exp(-mod(ld(0),0.5)*60)':s=48000:d=6",
                             "-c:a", "aac", "-b:a", "128k", path])
        }
    }

    static func run(_ source: String, _ arguments: [String]) throws -> Moonreel.Result {
        let script = Fixtures.scratchPath("edit.lua")
        try source.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try Tool.run(Moonreel.executable, ["run", script] + arguments, environment: ["XDG_CACHE_HOME": Fixtures.scratchPath("cache")])
        #expect(result.status == 0, "\(result.err)")
        return Moonreel.Result(status: result.status, out: result.out, err: result.err)
    }

    static func dominant(_ c: (r: Double, g: Double, b: Double)) -> String {
        c.r > 200 && c.g < 60 && c.b < 60 ? "red" : c.g > 90 && c.r < 60 && c.b < 60 ? "green" : c.b > 200 && c.r < 60 && c.g < 60 ? "blue" : "other \(c)"
    }

    /// Cut on every second beat over the song: the picture changes within one frame of each
    /// beat it was cut on, the clips come in turn, and the sound is the song's, not the clips'.
    @Test func aMontageCutsOnTheBeatsOverTheMusic() throws {
        let output = Fixtures.scratchPath("montage.mp4")
        let result = try Self.run("""
            local song = av.asset(arg[2])
            local beats = av.analyze(song).beats
            local comp, vc, mix = av.cutToBeats({ av.asset(arg[3]), av.asset(arg[4]), av.asset(arg[5]) }, beats,
                                                { every = 2, music = song })
            for i = 1, #beats, 2 do print(string.format("%.4f", beats[i])) end
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL, session.videoComposition, session.audioMix = arg[1], vc, mix
            assert(session:export())
            """, [output, try Self.clickSong(), try Fixtures.solid("red", tone: 440), try Fixtures.solid("green", tone: 440),
                  try Fixtures.solid("blue", tone: 440)])
        let cuts = result.out.split(separator: "\n").compactMap { Double($0) }
        #expect(cuts.count == 6, "\(result.out)")
        #expect(abs(try Tool.ffprobe(output).duration - 6) < 0.05)
        let colours = ["red", "green", "blue"]
        let frame = 1.0 / 30
        for (index, cut) in cuts.enumerated() {
            // The last frame before the beat's frame, and the first frame at or after it.
            let before = Self.dominant(try Tool.rgbFrame(output, at: cut - frame).mean(x: 0, y: 0, width: 320, height: 240))
            let after = Self.dominant(try Tool.rgbFrame(output, at: cut + frame).mean(x: 0, y: 0, width: 320, height: 240))
            #expect(before == colours[index % 3] && after == colours[(index + 1) % 3], "cut \(index + 1) at \(cut) s: \(before) → \(after)")
        }
        let sound = try Tool.audioSamples(output)
        #expect(sound.toneAmplitude(440, from: 48000, to: 96000, rate: 48000) < 0.01, "the clips' own tone is left out")
        #expect(sound.level(from: 24000, to: 26400) > 0.1, "the click at 0.5 s")
        #expect(sound.level(from: 0, to: 20000) < 0.01, "silence before the first beat")
    }

    /// A talk's pauses cut out, picture and sound together: the remaining pauses are the
    /// margins, and the picture after a cut is the source's picture from after the pause.
    @Test func pausesAreCutOutOfPictureAndSoundWithMargins() throws {
        let bursts = [(0.5, 1.7), (1.9, 3.1), (4.0, 6.0), (6.35, 7.2)]
        let inside = bursts.map { "between(t,\($0.0),\($0.1))" }.joined(separator: "+")
        let talk = try Fixtures.cached("beat-edit-talk.mp4") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=9",
                             "-f", "lavfi", "-i", "aevalsrc='(\(inside))*0.2*sin(2*PI*300*t)*(0.6+0.4*sin(2*PI*4*t))':s=48000:d=9",
                             "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-g", "25", "-c:a", "aac", path])
        }
        let output = Fixtures.scratchPath("tight.mp4")
        let result = try Self.run("""
            local talk = av.asset(arg[2])
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, talk.durationTime), talk, 0)
            local pauses = av.analyze(talk, { video = false }):silences{ threshold = -40, minDuration = 0.3 }
            for _, r in ipairs(comp:removeSilences(pauses, { margin = 0.1 })) do print(string.format("%.2f %.2f", r.start, r.finish)) end
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL = arg[1]
            assert(session:export())
            """, [output, talk])
        #expect(result.out.split(separator: "\n") == ["0.00 0.40", "3.20 3.90", "6.10 6.25", "7.30 9.00"], "\(result.out)")
        #expect(abs(try Tool.ffprobe(output).duration - 6.05) < 0.06)
        // Output 3.0 s is source 3.0 + 0.4 + 0.7 = 4.1 s (after the second cut), where the
        // source's frame 102 (4.08…4.12 s at 25 fps) shows: of the frames around it, that one
        // is the nearest (testsrc2 changes every frame).
        let cutPicture = try Tool.rgbFrame(output, at: 3.0)
        let differences = try [3.0, 4.0, 4.04, 4.08, 4.12, 4.16].map { (at: $0, by: cutPicture.meanDifference(try Tool.rgbFrame(talk, at: $0))) }
        #expect(differences.min { $0.by < $1.by }?.at == 4.08, "\(differences)")
        // No pause longer than two margins is left.
        let sound = try Tool.audioSamples(output)
        var quiet = 0, longest = 0
        for block in stride(from: 0, to: sound.count - 480, by: 480) {
            quiet = sound.level(from: block, to: block + 480) < 0.01 ? quiet + 1 : 0
            longest = max(longest, quiet)
        }
        #expect(Double(longest) * 0.01 <= 0.22, "longest pause left: \(Double(longest) * 0.01) s")
    }

    /// A white layer that pulses its opacity on beats at 1 s and 2 s over black, and one whose
    /// opacity follows a level envelope: both exactly in time.
    @Test func pulsesPeakOnTheBeatAndEnvelopesFollowTheLevels() throws {
        let (output, result) = try Moonreel.exportWithLayers(try Fixtures.solid("black", seconds: 3, tone: nil), width: 320, height: 240, """
            local left = av.layer{ frame = { 0, 0, 160, 240 }, backgroundColor = "white", opacity = 0 }
            local right = av.layer{ frame = { 160, 0, 160, 240 }, backgroundColor = "white", opacity = 0 }
            parent:addSublayer(left); parent:addSublayer(right)
            av.pulse(left, { 1, 2 }, { keyPath = "opacity", from = 0, amount = 1, rise = 0.2, fall = 0.4 })
            right:addAnimation(av.envelopeAnimation({ -60, -30, 0, -90 }, { interval = 0.8, floor = -60, ceiling = 0 }), "level")
            """)
        #expect(result.status == 0, "\(result.err)")
        let left = { (t: Double) in try Tool.rgbFrame(output, at: t).mean(x: 20, y: 20, width: 120, height: 200).g }
        let right = { (t: Double) in try Tool.rgbFrame(output, at: t).mean(x: 180, y: 20, width: 120, height: 200).g }
        let pulse = try [0.5, 0.9, 1.0, 1.2, 1.5, 2.0, 2.6].map { ($0, try left($0)) }
        let level = { (t: Double) in pulse.first { $0.0 == t }?.1 ?? -1 }
        #expect(level(1.0) > 240 && level(2.0) > 240, "peaks on the beats: \(pulse)")
        #expect(level(0.5) < 10 && level(1.5) < 10 && level(2.6) < 10, "rests between them: \(pulse)")
        #expect(abs(level(0.9) - 128) < 20, "half way up 0.1 s before the beat: \(pulse)")
        #expect(abs(level(1.2) - 128) < 20, "half way down 0.2 s after: \(pulse)")
        // Envelope: −60 → 0, −30 → 0.5, 0 → 1 at 0, 0.8, 1.6 s; −90 (below the floor) → 0 at 2.4 s.
        let envelope = try [0.0, 0.8, 1.6, 2.4].map(right)
        #expect(envelope[0] < 10 && abs(envelope[1] - 128) < 20 && envelope[2] > 240 && envelope[3] < 10, "envelope \(envelope)")
    }

    /// The bundled example: clips cut every two beats of the song, its spectrum along the
    /// bottom, its lyrics above; the song is the sound.
    @Test func theBeatMontageExampleRuns() throws {
        let lyrics = Fixtures.scratchPath("lyrics.csv")
        try "id,lyric,start_at,end_at\n1,Cut to the beat,0.5,2.5\n2,Second line,3,5.5\n".write(toFile: lyrics, atomically: true, encoding: .utf8)
        let output = Fixtures.scratchPath("montage.mp4")
        let result = try Tool.run(Moonreel.executable, ["run", Moonreel.example("beat_montage.lua"), try Self.clickSong(), lyrics, output,
                                                        try Fixtures.solid("red", tone: 440), try Fixtures.solid("blue", tone: 440)],
                                  environment: ["XDG_CACHE_HOME": Fixtures.scratchPath("cache")])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("120.0 BPM, 11 beats"), "\(result.out)")
        let probe = try Tool.ffprobe(output)
        #expect(abs(probe.duration - 6) < 0.05)
        let frame = 1.0 / 30
        // Red until the first beat (0.5 s), blue to the third (1.5 s), red again: the picture
        // above the spectrum, below the lyrics.
        let colour = { (t: Double) in Self.dominant(try Tool.rgbFrame(output, at: t).mean(x: 40, y: 300, width: 200, height: 100)) }
        #expect(try [colour(0.5 - frame), colour(0.5 + frame), colour(1.5 - frame), colour(1.5 + frame)] == ["red", "blue", "blue", "red"])
        // The click at 1.0 s lights the spectrum in the bottom fifth (720 / 5 = 144 rows); by
        // 1.25 s, between clicks, it has fallen away. The same clip shows above it both times.
        let (click, between) = (try Tool.rgbFrame(output, at: 1.0), try Tool.rgbFrame(output, at: 1.25))
        let strip = { (image: Image) in image.crop(x: 0, y: 600, width: 1280, height: 120) }
        let above = { (image: Image) in image.crop(x: 0, y: 300, width: 1280, height: 100) }
        #expect(strip(click).meanDifference(strip(between)) > 4, "spectrum bars at the bottom at 1.0 s, not at 1.25 s")
        #expect(above(click).meanDifference(above(between)) < 1, "\(above(click).meanDifference(above(between)))")
    }
}
