import Foundation
import Testing
import TestSupport

/// The audiogram card (issue 37 §1, audio-visual): rendered as `moonreel effects preview`
/// renders it, over a clip that is silent for 3 s and then loud, and read back by pixel;
/// and the `asset` parameter type it takes its sound by.
@Suite struct AudiogramTests {
    /// 6 s of grey with a sound silent for 3 s, then a 330 Hz tone at 0.9 of full scale.
    static func silenceThenLoud() throws -> String {
        try Fixtures.cached("silence-then-loud.mp4") { path in
            try Tool.ffmpeg(["-f", "lavfi", "-i", "color=c=0x808080:size=640x360:rate=30:duration=6",
                             "-f", "lavfi", "-i", "aevalsrc='if(gte(t,3),0.9*sin(2*PI*330*t),0)':s=48000:d=6",
                             "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k", "-shortest", path])
        }
    }

    /// The accent colour's pixels (#F5A623, the default): the sound and the progress fill.
    static func isAccent(_ p: (r: Int, g: Int, b: Int)) -> Bool { p.r > 200 && p.g > 130 && p.g < 200 && p.b < 90 }

    static func count(_ image: Image, x: Range<Int>, y: Range<Int>, _ matches: ((r: Int, g: Int, b: Int)) -> Bool) -> Int {
        y.reduce(0) { total, row in total + x.filter { matches(image.pixel($0, row)) }.count }
    }

    /// How far from x 50 the progress fill reaches along row `y`.
    static func filled(_ image: Image, row y: Int) -> Int {
        var x = 50
        while x < image.width, isAccent(image.pixel(x, y)) { x += 1 }
        return x - 50
    }

    // 1280×720 (landscape): margin 50, cover 331 px square at (50, 50); the sound between y
    // 411 and 636 (below the cover, above the bar); the bar 9 px thick at y 661, x 50…1230.
    @Test func theBarsFollowTheLoudnessAndTheProgressBarTheTime() throws {
        let sound = try Self.silenceThenLoud()
        let options = "{ style = \"mirror\", window = 2, duration = 6 }"
        let quiet = try EffectPreview.still("audiogram", at: 1, with: options, over: sound)
        let loud = try EffectPreview.still("audiogram", at: 4.5, with: options, over: sound)
        let area = (x: 50..<1230, y: 411..<636)
        let quietInk = Self.count(quiet, x: area.x, y: area.y, Self.isAccent)
        let loudInk = Self.count(loud, x: area.x, y: area.y, Self.isAccent)
        // Silent 0…2 s shows (nearly) nothing; loud 3.5…5.5 s tall mirrored bars.
        #expect(quietInk < 1180 * 225 / 50, "silence: \(quietInk) accent pixels")
        #expect(loudInk > 1180 * 225 / 4, "loud: \(loudInk) accent pixels")
        // Taller in the middle of the band when loud (mirrored about it), not at its edges only.
        #expect(Self.count(loud, x: 600..<680, y: 515..<530, Self.isAccent) > 80 * 15 / 3)

        // The spectrum (the example's style) shows the frame's own sound: nothing, then the tone.
        let spectra = try [1, 4.5].map { try EffectPreview.still("audiogram", at: $0, over: sound) }
        let (silentBands, toneBands) = (Self.count(spectra[0], x: area.x, y: area.y, Self.isAccent), Self.count(spectra[1], x: area.x, y: area.y, Self.isAccent))
        #expect(silentBands < 500 && toneBands > 5000, "spectrum: \(silentBands) then \(toneBands) accent pixels")

        // The progress bar fills 1/6 of 1180 px at 1 s and 4.5/6 at 4.5 s.
        let (early, late) = (Self.filled(quiet, row: 665), Self.filled(loud, row: 665))
        #expect(abs(early - 197) <= 6 && abs(late - 885) <= 6, "filled \(early) then \(late) px")
        // Without duration it fills over the sound's own length (6 s, give or take AAC's padding).
        let byLength = Self.filled(try EffectPreview.still("audiogram", at: 3, with: "{ style = \"mirror\", window = 2 }", over: sound), row: 665)
        #expect(abs(byLength - 590) <= 8, "half of the sound's length: \(byLength) px")
    }

    @Test func theTitleIsDrawnBesideTheCoverOrUnderItInPortrait() throws {
        let sound = try Self.silenceThenLoud()
        func isInk(_ p: (r: Int, g: Int, b: Int)) -> Bool { p.r > 200 && p.g > 200 && p.b > 200 }
        let card = try EffectPreview.still("audiogram", at: 1, with: "{ title = \"Night trains\", subtitle = \"\" }", over: sound)
        // Landscape: text from x 421 (cover, then 40 px), centred on the cover's height.
        #expect(Self.count(card, x: 421..<1230, y: 150..<290, isInk) > 1500, "the title's ink beside the cover")
        #expect(Self.count(card, x: 421..<1230, y: 50..<140, isInk) == 0 && Self.count(card, x: 421..<1230, y: 300..<400, isInk) == 0,
                "one line, centred on the cover: nothing above or below it")
        #expect(Self.count(card, x: 0..<1280, y: 400..<720, isInk) == 0, "no white in the sound's or bar's part")

        // Portrait 1080×1920: the cover (604 px square from y 172) then the title under it,
        // centred; nothing at all in the bottom fifth (from y 1536) but the card's colour.
        let tall = try EffectPreview.still("audiogram", at: 4.5, with: "{ title = \"Night trains\", subtitle = \"\", style = \"mirror\" }", over: sound,
                                           width: 1080, height: 1920)
        #expect(Self.count(tall, x: 76..<1004, y: 800..<930, isInk) > 1500, "the title's ink under the cover")
        let left = Self.count(tall, x: 76..<540, y: 800..<930, isInk), right = Self.count(tall, x: 540..<1004, y: 800..<930, isInk)
        #expect(abs(left - right) < (left + right) / 3, "centred: \(left) | \(right)")
        let background = tall.pixel(540, 1700)
        #expect(Self.count(tall, x: 0..<1080, y: 1536..<1920) { abs($0.r - background.r) > 6 || abs($0.b - background.b) > 6 } == 0,
                "the bottom fifth is free for the apps' captions")
        #expect(Self.count(tall, x: 76..<1004, y: 1000..<1440, Self.isAccent) > 20000, "the sound, loud, between the text and the bar")
    }

    @Test func theSoundIsAnAssetAndTheTrialMakesOne() throws {
        let script = Fixtures.scratchPath("card.lua")
        try """
            local audiogram = require "effects.audiogram"
            print(select(2, pcall(audiogram, { renderSize = { 640, 360 }, sound = "episode.m4a" })))
            print(select(2, pcall(audiogram, { renderSize = { 640, 360 } })))
            local card = audiogram{ renderSize = { 640, 360 }, sound = av.asset(arg[1]) }
            print(card.name, #card.sublayers)
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let run = try Moonreel.run(["run", script, try Self.silenceThenLoud()])
        try #require(run.status == 0, "\(run.err)")
        #expect(run.out.contains("effect \"audiogram\": parameter sound must be an asset (av.asset(path)), got \"episode.m4a\""), "\(run.out)")
        #expect(run.out.contains("effect \"audiogram\": parameter sound is required (an asset (av.asset(path)))"), "\(run.out)")
        #expect(run.out.contains("audiogram\t5"), "cover, title, track, fill and sound: \(run.out)")
    }

    @Test func measuringALongSoundStopsAtTheEffectsTimeLimit() throws {
        // An hour of sound: decoding it runs no Lua, so the count hook cannot stop it; the
        // call's deadline does (here the run's 0.5 s, less than the effect's own 5 s).
        let hour = Fixtures.scratchPath("hour.wav")
        try Tool.ffmpeg(["-f", "lavfi", "-i", "sine=f=220:d=3600:sample_rate=8000", "-c:a", "pcm_s16le", hour])
        let script = Fixtures.scratchPath("long.lua")
        try """
            require("effects.audiogram"){ renderSize = { 640, 360 }, sound = av.asset(arg[1]) }
            """.write(toFile: script, atomically: true, encoding: .utf8)
        let started = Date()
        let run = try Moonreel.run(["run", "--time-limit", "0.5", script, hour])
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds < 3, "stopped near its limit: \(seconds) s")
        // An optimised build may measure the hour in time; a debug one never does.
        #expect(run.status == 0 || (run.err.hasPrefix("effects/audiogram.lua:") && run.err.contains(
            ": audioWaveformLayer: measuring the sound took longer than this effect call may run (0.5 s); give it a shorter clip (minutes of sound, not hours)\n")),
            "\(run.err)")
    }
}
