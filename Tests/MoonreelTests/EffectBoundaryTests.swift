import Foundation
import Testing
import TestSupport

/// The boundary around a shared effect, with the real `av` API, each case in its own
/// `moonreel run`: objects the script hands to an effect are read-only views, and memory
/// the engine allocates for a script or an effect counts against its limit.
@Suite struct EffectBoundaryTests {
    /// Runs `main` beside `effects/probe.lua` holding `effect` (and `others`, by name), in that folder.
    func run(main: String, effect: String, others: [String: String] = [:], options: [String] = []) throws -> (result: Moonreel.Result, directory: String) {
        let script = Fixtures.scratchPath("main.lua")
        let directory = (script as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory + "/effects", withIntermediateDirectories: true)
        try effect.write(toFile: directory + "/effects/probe.lua", atomically: true, encoding: .utf8)
        for (name, source) in others { try source.write(toFile: directory + "/effects/\(name).lua", atomically: true, encoding: .utf8) }
        try main.write(toFile: script, atomically: true, encoding: .utf8)
        let result = try Tool.run("/bin/sh", ["-c", "cd \"$1\" && shift && exec \"$@\"", "sh", directory,
                                              Moonreel.executable, "run"] + options + ["main.lua"], timeout: 300)
        return (Moonreel.Result(status: result.status, out: result.out, err: result.err), directory)
    }

    @Test func objectsPassedToAnEffectCanBeReadButNotChangedOrWritten() throws {
        let clip = try Fixtures.clip(seconds: 1)
        let attempts = [
            "p.session:export()", "p.session.outputURL = 'other.mp4'", "p.image:write('copy.png')",
            "p.layer.opacity = 0", "p.layer:addSublayer(av.layer{})", "av.layer{}:addSublayer(p.layer)",
            "p.comp:insertEmptyTimeRange(av.range(0, 1))", "p.layer:addAnimation(av.basicAnimation{ keyPath = 'opacity' }, 'a')",
            "p.layer.sublayers[1]:removeFromSuperlayer()",
        ]
        let (result, directory) = try run(main: """
            local probe = require "effects.probe"
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 1), av.asset("\(clip)"), 0)
            local session = av.exportSession(comp, "LowQuality")
            session.outputURL = "out.mp4"
            local frame = av.imageGenerator(comp):copyCGImageAtTime(0)
            local layer = av.layer{ opacity = 0.5 }
            layer:addSublayer(av.layer{})
            print(probe{ session = session, image = frame, layer = layer, comp = comp })
            print(layer.opacity, #layer.sublayers, #layer.animationKeys, comp.duration, session.status)
            """, effect: """
            local attempts = {
            \(attempts.map { "  function(p) \($0) end," }.joined(separator: "\n"))
            }
            return { apply = function(p)
              local refused = {}
              for i, attempt in ipairs(attempts) do
                local ok, message = pcall(attempt, p)
                if not ok and message:find("read-only in this effect", 1, true) then refused[#refused + 1] = i end
              end
              -- Reading works: properties, read-only methods, and what they reach.
              return table.concat({ #refused, p.image.size.width, p.layer.opacity, #p.layer.sublayers[1].sublayers,
                                    #p.comp:tracksWithMediaType("video"), p.session.status }, " ")
            end }
            """)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "\(attempts.count) 320.0 0.5 0 1 waiting\n0.5\t1\t0\t1.0\twaiting\n", "\(result.out)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(left == ["effects", "main.lua"], "the effect wrote \(left)")
    }

    /// The attack from the issue: an effect building animations of a million keyframes in a
    /// loop grew the process to 7 GB; now the engine's keyframes count against the effect's cap.
    @Test func portedEffectsHaveAVsConstantsButNoFiles() throws {
        // Code ported from iOS writes AVCoreAnimationBeginTimeAtZero; it was "not available".
        let (result, _) = try run(main: """
            local layer = require("effects.probe"){}
            print(layer.animationKeys[1])
            """, effect: """
            return { name = "probe", apply = function()
              local layer = av.layer{ frame = { 0, 0, 10, 10 } }
              layer:addAnimation(av.basicAnimation{ keyPath = "opacity", fromValue = 0, toValue = 1,
                                                    beginTime = av.AVCoreAnimationBeginTimeAtZero, duration = 1 }, "fade")
              assert(av.beginTimeAtZero == av.AVCoreAnimationBeginTimeAtZero and av.zero ~= nil and av.version ~= nil)
              assert(not pcall(function() return av.asset end), "no files")
              return layer
            end }
            """)
        #expect(result.status == 0 && result.out.contains("fade"), "\(result.out) \(result.err)")
    }

    @Test func anEffectsOwnTablesCrossBackWhole() throws {
        // A script reads the effect's example (a read-only view of the effect's table) and
        // hands it back: the view used to cross as an empty table, so `size` arrived as {}.
        let (result, _) = try run(main: """
            local probe = require "effects.probe"
            print(probe(probe.example))
            print(probe{ size = { 1, 2 }, passAv = true })
            """, effect: """
            return { name = "probe", parameters = { { name = "size", type = "table", required = true }, { name = "passAv", type = "boolean" } },
              example = { size = { 640, 360, nested = { 7 } } },
              apply = function(p)
                -- An effect's av is a view of part of the script's: refused whole, never sent empty.
                if p.passAv then return select(2, pcall(require("effects.inner"), { value = av })) end
                return p.size[1] .. "x" .. p.size[2] .. " " .. tostring(p.size.nested and p.size.nested[1])
              end }
            """, others: ["inner": "return { name = \"inner\", apply = function(p) return type(p.value) end }"])
        #expect(result.out.hasPrefix("640x360 7\n"), "\(result.out) \(result.err)")
        #expect(result.out.contains("a read-only view of part of a table (such as av) cannot be passed between"), "\(result.out) \(result.err)")
    }

    @Test func engineObjectsCountAgainstTheEffectsMemory() throws {
        let (result, _) = try run(main: "require('effects.probe')()", effect: """
            return { apply = function()
              local values = {}
              for i = 1, 1000000 do values[i] = i % 2 end
              local kept = {}
              for i = 1, 1000 do kept[i] = av.keyframeAnimation{ keyPath = "opacity", values = values } end
            end }
            """, options: ["--memory-limit", "200", "--time-limit", "60"])
        #expect(result.status == 1)
        #expect(result.errorLines.count == 1 && result.err.contains("script exceeded its memory limit (200 MiB)"), "\(result.err)")
    }

    /// Keyframe values for the memory tests, on lines 1 and 2.
    static let keyframeValues = """
        local values = {}
        for i = 1, 100000 do values[i] = i % 2 end

        """

    @Test func engineObjectsCountAgainstTheScriptsMemoryToo() throws {
        let (result, _) = try run(main: Self.keyframeValues + """
            local kept = {}
            for i = 1, 10000 do
              local layer = av.layer{}
              layer:addAnimation(av.keyframeAnimation{ keyPath = "opacity", values = values }, "fade")
              kept[i] = layer
            end
            """, effect: "return {}", options: ["--memory-limit", "100"])
        #expect(result.status == 1)
        // Line 7 when the call charging the keyframes' values goes over, line 6 when the next
        // layer does: which one depends on a few bytes of the heap (the script's path is in it).
        #expect(result.errorLines.count == 1 && (result.err.contains("main.lua:6: script exceeded its memory limit (100 MiB)")
                                                 || result.err.contains("main.lua:7: script exceeded its memory limit (100 MiB)")), "\(result.err)")
    }

    @Test func garbageEngineObjectsAreFreedNotCounted() throws {
        let (result, _) = try run(main: Self.keyframeValues + """
            for i = 1, 200 do av.keyframeAnimation{ keyPath = "opacity", values = values } end
            print("done")
            """, effect: "return {}", options: ["--memory-limit", "64"])
        #expect(result.status == 0 && result.out == "done\n", "\(result.err)")
    }
}
