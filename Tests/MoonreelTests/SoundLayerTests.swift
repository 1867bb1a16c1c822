import Foundation
import Testing
import TestSupport

/// Issue 26 §3: layers that show the sound, exported by `moonreel` and read back from the
/// frames: a sine sweep's loudest bar is the band of the sweep's frequency at that frame, and
/// a click shows in its own frame, not the one before or after.
@Suite struct SoundLayerTests {
    /// Black 640×360 at 30 fps with `audio` (an aevalsrc expression) as 16-bit PCM in a MOV:
    /// no codec delay or pre-echo to blur the timing.
    static func clip(_ name: String, audio: String, seconds: Int) throws -> String {
        try Fixtures.cached("sound-layer-\(name).mov") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=black:size=640x360:rate=30:duration=\(seconds)",
                             "-f", "lavfi", "-i", "aevalsrc='\(audio)':s=48000:d=\(seconds)",
                             "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "pcm_s16le", "-shortest", path])
        }
    }

    /// Exports `clip` with the layers `lines` add to `parent` (a 640×360 root).
    static func export(_ clip: String, _ lines: String) throws -> String {
        let (output, result) = try Moonreel.exportWithLayers(clip, width: 640, height: 360, lines)
        #expect(result.status == 0, "\(result.err)")
        return output
    }

    /// Heights (pixels) of the bars of a 32-bar spectrum filling the frame's bottom 180 rows.
    static func barHeights(_ output: String, at t: Double) throws -> [Int] {
        let frame = try Tool.rgbFrame(output, at: t)
        return (0..<32).map { bar in
            let x = bar * 20 + 10
            return (180..<360).filter { frame.pixel(x, $0).g > 128 }.count
        }
    }

    @Test func theLoudestBarFollowsASineSweep() throws {
        // 100 Hz to 10 kHz in 5 s, exponentially: f(t) = 100 · 100^(t/5).
        let clip = try Self.clip("sweep", audio: "0.5*sin(2*PI*100*5/log(100)*(pow(100,t/5)-1))", seconds: 5)
        let output = try Self.export(clip, """
            parent:addSublayer(av.audioSpectrumLayer{ track = comp, bars = 32, frequencyRange = { 40, 16000 }, smoothing = 0,
                                                      colors = "white", frame = { 0, 0, 640, 180 } })
            """)
        for t in [0.5, 1.5, 2.5, 3.5, 4.5] {
            let frequency = 100 * pow(100, t / 5)
            let band = Int(32 * log(frequency / 40) / log(400))
            let heights = try Self.barHeights(output, at: t)
            let loudest = heights.indices.max { heights[$0] < heights[$1] } ?? -1
            #expect(loudest == band, "at \(t) s (\(Int(frequency)) Hz): loudest bar \(loudest), expected \(band); \(heights)")
            #expect(heights[band] > 120, "a half-scale sine is loud: \(heights[band]) of 180 px")
        }
    }

    @Test func aClickShowsInItsOwnFrame() throws {
        // Clicks 2 ms long at exactly 1 s and 2 s (frames 30 and 60), silence elsewhere.
        let clip = try Self.clip("clicks", audio: "0.8*(between(t,1,1.002)+between(t,2,2.002))*sin(2*PI*3000*t)", seconds: 3)
        let output = try Self.export(clip, """
            parent:addSublayer(av.audioSpectrumLayer{ track = comp, bars = 32, smoothing = 0, colors = "white", frame = { 0, 0, 640, 180 } })
            parent:addSublayer(av.audioWaveformLayer{ track = comp, style = "line", colors = "white", frame = { 0, 180, 640, 180 } })
            """)
        let frame = 1.0 / 30
        for click in [1.0, 2.0] {
            for (t, shows) in [(click - frame, false), (click, true), (click + frame, false)] {
                let picture = try Tool.rgbFrame(output, at: t)
                // The spectrum: any lit bar in the bottom half. The line: any point far from its middle row (90 of 0…180).
                let spectrumLit = (0..<32).contains { bar in picture.pixel(bar * 20 + 10, 350).g > 128 }
                let lineMoves = (0..<640).contains { x in (0..<60).contains { y in picture.pixel(x, y).g > 128 } || (120..<180).contains { y in picture.pixel(x, y).g > 128 } }
                #expect(spectrumLit == shows && lineMoves == shows, "at \(t) s: spectrum \(spectrumLit), waveform \(lineMoves), expected \(shows)")
            }
        }
    }

    @Test func mistakesAreNamed() throws {
        let clip = try Self.clip("clicks", audio: "0.8*(between(t,1,1.002)+between(t,2,2.002))*sin(2*PI*3000*t)", seconds: 3)
        for (statement, message) in [
            ("av.audioSpectrumLayer{ frame = { 0, 0, 10, 10 } }", "track is required"),
            ("av.audioSpectrumLayer{ track = comp, bars = 0 }", "field 'bars': must be 1 to 512, got 0"),
            ("av.audioSpectrumLayer{ track = comp, frequencyRange = { 500, 100 } }", "field 'frequencyRange': must be {low, high}"),
            ("av.audioWaveformLayer{ track = comp, style = \"spectrum\" }", "a spectrum is av.audioSpectrumLayer"),
            ("av.audioWaveformLayer{ track = comp, fram = 1 }", "bad argument #1 to 'audioWaveformLayer' (unknown Layer property \"fram\""),
            ("av.audioWaveformLayer{ track = comp, opacity = 2 }", "bad argument #1 to 'audioWaveformLayer' (property 'opacity': value must be in 0…1, got 2)"),
        ] {
            let result = try Moonreel.runScript(Moonreel.wholeAssetComposition() + statement, arguments: [clip])
            #expect(result.status != 0 && result.errorLines.count == 1 && result.err.contains(message), "\(statement): \(result.err)")
        }
    }

    @Test func theSoundALayerKeepsCountsAgainstTheMemoryLimit() throws {
        // 10 minutes kept at 32 kHz, 16 bits: 38 MB, more than a 32 MiB limit allows.
        let long = Fixtures.scratchPath("long.wav")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "sine=f=220:d=600:sample_rate=16000", "-c:a", "pcm_s16le", long])
        let script = Fixtures.scratchPath("sound.lua")
        try "local layer = av.audioWaveformLayer{ track = av.asset(arg[1]), frame = { 0, 0, 100, 100 } }\n"
            .write(toFile: script, atomically: true, encoding: .utf8)
        let result = try Moonreel.run(["run", "--memory-limit", "32", script, long])
        #expect(result.status == 1 && result.err.contains("sound.lua:1: script exceeded its memory limit (32 MiB)"), "\(result.err)")
    }
}
