import Foundation
import Testing
import TestSupport

/// Transitions drawn by effects (`kind = "transition"`), used by name in av.join and
/// av.cutToBeats beside the built-in ones, and the masks they are made of (layer.mask,
/// li.mask): each joins a red clip to a blue one (or a title card), and the picture is read
/// back with ffmpeg at known fractions of the transition, where the edge must be.
@Suite struct TransitionEffectTests {
    let red: String, blue: String
    init() throws {
        red = try Fixtures.solid("red", seconds: 2, size: "320x240", tone: nil)
        blue = try Fixtures.solid("blue", seconds: 2, size: "320x240", tone: nil)
    }

    /// Pictures of red → blue joined with `transition` (Lua) over 1 s (1 s to 2 s), at `times`.
    func stills(_ transition: String, at times: [Double], first: String = "av.asset(arg[1])", second: String = "av.asset(arg[2])",
                name: String = #function) throws -> [Image] {
        let prefix = Fixtures.scratchPath("transition-\(name.filter(\.isLetter))")
        let script = """
            local comp, vc = av.join({ \(first), \(second) }, { transitions = { \(transition) }, duration = 1 })
            local generator = av.imageGenerator(comp, { videoComposition = vc })
            for i, t in ipairs({ \(times.map { String($0) }.joined(separator: ", ")) }) do
              generator:copyImage(t, arg[3] .. i .. ".png", { overwrite = true })
            end
            """
        let result = try Moonreel.runScript(script, name: "transition.lua", arguments: [red, blue, prefix])
        guard result.status == 0 else { throw Tool.Failure(description: "the join failed: \(result.err)") }
        return try times.indices.map { try Tool.rgbFrame("\(prefix)\($0 + 1).png", at: 0) }
    }

    func isRed(_ p: (r: Int, g: Int, b: Int)) -> Bool { p.r > 200 && p.b < 60 }
    func isBlue(_ p: (r: Int, g: Int, b: Int)) -> Bool { p.b > 200 && p.r < 60 }

    /// Which quadrants (top-right, bottom-right, bottom-left, top-left) show blue.
    func blueQuadrants(_ image: Image) -> [Bool] {
        [(240, 60), (240, 180), (80, 180), (80, 60)].map { isBlue(image.pixel($0.0, $0.1)) }
    }

    @Test func aClockWipeSweepsClockwiseFromTwelve() throws {
        let shots = try stills("\"clockWipe\"", at: [1.2, 1.45, 1.7, 1.95])
        // A quarter turn takes 0.25 s: the quadrants fill in clockwise order from 12 o'clock.
        #expect(shots.map(blueQuadrants) == [[true, false, false, false], [true, true, false, false],
                                             [true, true, true, false], [true, true, true, true]])
        // At 1.2 s the hand is at 72°: blue just right of 12 o'clock, red just left of 3 o'clock's line at that angle.
        #expect(isBlue(shots[0].pixel(170, 40)) && isRed(shots[0].pixel(300, 110)))

        let backwards = try stills("{ \"clockWipe\", clockwise = false }", at: [1.2])
        #expect(blueQuadrants(backwards[0]) == [false, false, false, true])
    }

    @Test func aDirectionalWipesEdgeIsHalfWayAtHalfTime() throws {
        let hard = try stills("{ \"directionalWipe\", direction = \"left\" }", at: [1.5])[0]
        // Leftwards: the blue comes in from the right; at 50 % the edge is at x = 160.
        #expect(isRed(hard.pixel(150, 120)) && isBlue(hard.pixel(170, 120)))
        let soft = try stills("{ \"directionalWipe\", angle = 90, softness = 12 }", at: [1.5])[0]
        // Downwards with a 12 px blur: at 50 % the middle row is half and half.
        let middle = soft.pixel(160, 120)
        #expect(abs(middle.r - middle.b) < 50 && middle.r > 90 && middle.b > 90, "\(middle)")
        #expect(isBlue(soft.pixel(160, 60)) && isRed(soft.pixel(160, 200)))
    }

    /// A luma wipe through Kdenlive's real clock luma (Tests/Fixtures/lumas): dark at 12
    /// o'clock, lighter clockwise, so the blue sweeps round as the threshold rises.
    @Test func aLumaWipeShowsTheDarkestPartsFirst() throws {
        let luma = Moonreel.checkout + "/Tests/Fixtures/lumas/clock.pgm"
        let shots = try stills("{ \"lumaWipe\", image = av.image(\"\(luma)\"), softness = 0.05 }", at: [1.25, 1.75])
        #expect(isBlue(shots[0].pixel(200, 30)) && isRed(shots[0].pixel(80, 180)) && isRed(shots[0].pixel(240, 180)))
        #expect(isRed(shots[1].pixel(80, 60)) && isBlue(shots[1].pixel(240, 180)) && isBlue(shots[1].pixel(80, 200)))
        let inverted = try stills("{ \"lumaWipe\", image = av.image(\"\(luma)\"), invert = true }", at: [1.25])
        #expect(isBlue(inverted[0].pixel(80, 60)) && isRed(inverted[0].pixel(200, 30)))
    }

    @Test func anIrisOpensAndClosesAboutItsCentre() throws {
        let opening = try stills("{ \"irisWipe\", center = { 0.25, 0.5 } }", at: [1.3])[0]
        #expect(isBlue(opening.pixel(80, 120)) && isRed(opening.pixel(300, 20)) && isRed(opening.pixel(300, 220)))
        let closing = try stills("{ \"irisWipe\", closing = true, shape = \"rectangle\" }", at: [1.5])[0]
        // The red shrinks into the middle over the blue: at 50 % it still holds the centre.
        #expect(isRed(closing.pixel(160, 120)) && isBlue(closing.pixel(5, 5)) && isBlue(closing.pixel(315, 235)))
    }

    @Test func aPushMovesBothPicturesAndAZoomOrBlurFadesOver() throws {
        let push = try stills("{ \"push\", direction = \"up\" }", at: [1.5])[0]
        #expect(isRed(push.pixel(160, 100)) && isBlue(push.pixel(160, 140)))
        let blur = try stills("\"blurDissolve\"", at: [1.5])[0]
        let mixed = blur.pixel(160, 120)
        #expect(abs(mixed.r - mixed.b) < 30 && mixed.r > 90, "\(mixed)")
        // Eased in and out, a push is a quarter of the way at 0.33 of the time, not a third.
        let eased = try stills("{ \"push\", direction = \"up\" }", at: [1.333])[0]
        let linear = try stills("{ \"push\", direction = \"up\", easing = \"linear\" }", at: [1.333])[0]
        #expect(isRed(eased.pixel(160, 170)) && isBlue(eased.pixel(160, 195)), "eased: the edge near y = 240 · 0.75 = 180")
        #expect(isRed(linear.pixel(160, 150)) && isBlue(linear.pixel(160, 170)), "linear: the edge near y = 240 · 0.67 = 160")
        let zoom = try stills("\"zoom\"", at: [1.25])[0]
        let early = zoom.pixel(160, 120)
        #expect(early.r > early.b, "the red still shows more than the blue a quarter of the way: \(early)")
    }

    /// Title cards are drawn over clips: into a clip, a wipe shows the clip through the mask
    /// and the card through its inverse; into a card, the card through the mask.
    @Test func titleCardsTakeTheWipeOnEitherSide() throws {
        let card = "av.titleCard{ title = \"\", duration = 2, backgroundColor = \"lime\" }"
        let fromCard = try stills("\"clockWipe\"", at: [1.45], first: card)[0]
        let isLime = { (p: (r: Int, g: Int, b: Int)) in p.g > 200 && p.r < 60 && p.b < 60 }
        #expect(isBlue(fromCard.pixel(240, 60)) && isBlue(fromCard.pixel(240, 180)))
        #expect(isLime(fromCard.pixel(80, 180)) && isLime(fromCard.pixel(80, 60)))
        // A push draws the incoming clip on top; a card cannot be put under it, and that is said.
        let pushed = try Moonreel.runScript("""
            av.join({ \(card), av.asset(arg[1]) }, { transition = { "push", parallax = 0.5 }, duration = 1 })
            """, name: "push.lua", arguments: [red])
        #expect(pushed.status == 0 && pushed.errorLines.contains { $0.contains("push.lua:1: join 1: the transition draws the incoming clip over the title card") && $0.contains("[optionIgnored]") }, "\(pushed.err)")
        let intoCard = try stills("\"clockWipe\"", at: [1.45], second: card)[0]
        #expect(isLime(intoCard.pixel(240, 60)) && isLime(intoCard.pixel(240, 180)))
        #expect(isRed(intoCard.pixel(80, 180)) && isRed(intoCard.pixel(80, 60)))
    }

    /// The same drawing in an export (li.mask in the renderer's general path), read back from
    /// the encoded file; and a montage cut on beats with one.
    @Test func exportsAndMontagesDrawThem() throws {
        let output = Fixtures.scratchPath("radial.mp4"), montage = Fixtures.scratchPath("montage.mp4")
        let result = try Moonreel.runScript("""
            local comp, vc = av.join({ av.asset(arg[1]), av.asset(arg[2]) }, { transition = { "radialWipe", corner = "bottomLeft" }, duration = 1 })
            local session = av.exportSession(comp, "HighestQuality")
            session.videoComposition, session.outputURL = vc, arg[3]
            assert(session:export())
            local comp2, vc2 = av.cutToBeats({ av.asset(arg[1]), av.asset(arg[2]) }, { 0.5, 1.5 }, { transition = "irisWipe", transitionDuration = 0.5, duration = 2 })
            local session2 = av.exportSession(comp2, "HighestQuality")
            session2.videoComposition, session2.outputURL = vc2, arg[4]
            assert(session2:export())
            """, name: "export-transition.lua", arguments: [red, blue, output, montage])
        #expect(result.status == 0, "\(result.err)")
        // About the bottom-left corner from 12 o'clock: at 1.5 s the hand is at 45°.
        let half = try Tool.rgbFrame(output, at: 1.5)
        #expect(isBlue(half.pixel(20, 100)) && isRed(half.pixel(300, 230)))
        // Red, blue, then red again; the cut at 1.5 s (an iris from 1.25 s to 1.75 s) opens on
        // the red: a little at 1.4 s, nearly all at 1.7 s.
        let opening = try Tool.rgbFrame(montage, at: 1.4), open = try Tool.rgbFrame(montage, at: 1.7)
        #expect(isRed(opening.pixel(160, 120)) && isBlue(opening.pixel(5, 5)))
        #expect(isRed(open.pixel(60, 60)))
    }

    /// A timeline holds dissolves and wipes: a transition effect is written as a dissolve,
    /// and said to be.
    @Test func aTimelineSaysWhatItWritesInPlaceOfAnEffect() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let result = try Moonreel.runScript("""
            local comp, vc, mix = av.join({ av.asset(arg[1]), av.asset(arg[2]) }, { transition = "clockWipe", duration = 0.5 })
            av.writeTimeline(comp, vc, mix, arg[3])
            local comp2, vc2, mix2 = av.join({ av.asset(arg[1]), av.asset(arg[2]) }, { transition = "blurDissolve", duration = 0.5 })
            av.writeTimeline(comp2, vc2, mix2, arg[4])
            """, name: "timeline.lua", arguments: [red, blue, folder + "/wipe.otio", folder + "/blur.otio"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.errorLines.contains { $0.contains("timeline.lua:2: ") && $0.contains("[notInTimeline]") && $0.contains("drawn through a mask (a transition effect such as a clock or luma wipe); timelines hold dissolves and wipes, so it is written as a dissolve") }, "\(result.err)")
        #expect(result.errorLines.contains { $0.contains("timeline.lua:4: ") && $0.contains("filtered (a transition effect's blur)") }, "\(result.err)")
        let written = try String(contentsOfFile: folder + "/wipe.otio", encoding: .utf8)
        #expect(written.contains("\"Transition.1\"") && written.contains("SMPTE_Dissolve"), "a dissolve is written: \(written.prefix(400))")
    }

    @Test func mistakesAreOneLineNamingTheJoinAndTheEffect() throws {
        let base = Fixtures.scratchPath("transition-effects"), folder = base + "/effects"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try """
            return { name = "broken", kind = "transition", parameters = { { name = "renderSize", type = "table" },
              { name = "start", type = "number" }, { name = "duration", type = "number" } },
              apply = function(p) return { incoming = { scale = { 0, 1 } } } end }
            """.write(toFile: folder + "/broken.lua", atomically: true, encoding: .utf8)
        let cases: [(String, String)] = [
            ("\"fade\"", "unknown transition \"fade\" (use \"none\", \"dissolve\", \"slide\", \"wipe\", \"fadeThroughBlack\"; \"cut\" is \"none\"; or a transition effect's name"),
            ("\"vignette\"", "effect \"vignette\" is not a transition (it does not say kind = \"transition\")"),
            ("{ \"clockWipe\", spin = 2 }", "effect \"clockWipe\": unknown parameter spin"),
            ("{ \"irisWipe\", center = { 2, 0.5 } }", "effect \"irisWipe\": parameter center must be a point {x, y} in 0…1, got {2, 0.5}"),
            ("\"broken\"", "transition effect \"broken\" returned incoming.scale: "),
        ]
        for (transition, message) in cases {
            let script = base + "/join.lua"
            try "av.join({ av.asset(arg[1]), av.asset(arg[2]) }, { transitions = { \(transition) } })"
                .write(toFile: script, atomically: true, encoding: .utf8)
            let result = try Moonreel.run(["run", script, red, blue])
            #expect(result.status != 0 && result.errorLines.count == 1, "\(transition): \(result.err)")
            #expect(result.err.contains("join.lua:1: join: join 1: ") && result.err.contains(message), "\(transition): \(result.err)")
        }
    }

    /// Core Animation's mask on an overlay and a layer instruction's mask, from a script.
    @Test func layerAndLayerInstructionMasksFromAScript() throws {
        let (output, result) = try Moonreel.exportWithLayers(red, width: 320, height: 240, """
            local square = av.layer{ frame = { 0, 0, 320, 240 }, backgroundColor = "blue" }
            local circle = av.layer{ frame = { 110, 70, 100, 100 }, backgroundColor = "white", cornerRadius = 50 }
            square.mask = circle
            parent:addSublayer(square)
            assert(square.mask == circle and circle.superlayer == nil)
            local ok, problem = pcall(parent.addSublayer, parent, circle)
            assert(not ok and tostring(problem):find("a mask cannot be a sublayer"), problem)
            """)
        #expect(result.status == 0, "\(result.err)")
        let frame = try Tool.rgbFrame(output, at: 0.5)
        #expect(isBlue(frame.pixel(160, 120)) && isRed(frame.pixel(115, 75)) && isRed(frame.pixel(20, 20)))

        let wiped = try stills("\"dissolve\"", at: [1.5], name: "limask")
        #expect(!isBlue(wiped[0].pixel(20, 120)))   // a plain dissolve: mixed everywhere
        let masked = Fixtures.scratchPath("limask.png")
        let run = try Moonreel.runScript("""
            local comp, vc = av.join({ av.asset(arg[1]), av.asset(arg[2]) }, { transition = "dissolve", duration = 1 })
            local both = vc.instructions[2]
            local outgoing, incoming = both.layerInstructions[1], both.layerInstructions[2]
            outgoing:setOpacity(1, 1)
            incoming:setOpacity(1, 1)
            -- The left half of the frame only (y up: the mask's frame is from the bottom-left).
            incoming.mask = av.layer{ frame = { 0, 0, 160, 240 }, backgroundColor = "white" }
            both.layerInstructions = { incoming, outgoing }
            local generator = av.imageGenerator(comp, { videoComposition = vc })
            generator:copyImage(1.5, arg[3], { overwrite = true })
            """, name: "limask.lua", arguments: [red, blue, masked])
        #expect(run.status == 0, "\(run.err)")
        let half = try Tool.rgbFrame(masked, at: 0)
        #expect(isBlue(half.pixel(80, 120)) && isRed(half.pixel(240, 120)))
    }
}
