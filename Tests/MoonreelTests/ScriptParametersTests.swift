import Foundation
import Testing
import TestSupport

/// Templates with parameters (issue 23 §1, shown by the studio of issue 21): `av.parameters`
/// declares and checks them as effects do; `--set NAME=VALUE` fills them; `moonreel info`
/// lists them.
@Suite struct ScriptParametersTests {
    static let template = """
        local p = av.parameters{
          { name = "clip",   type = "string", required = true, doc = "the song's video" },
          { name = "start",  type = "number", default = 0, min = 0 },
          { name = "frames", type = "integer", default = 3, min = 1, max = 10 },
          { name = "title",  type = "string", default = "" },
          { name = "loud",   type = "boolean", default = false },
          { name = "tint",   type = "color", default = "white" },
          { name = "output", type = "string", required = true },
        }
        print(p.clip, p.start, p.frames, math.type(p.frames), p.title, p.loud, p.tint, p.output)
        """

    @Test func setFillsTheDeclaredParametersInTheirTypes() throws {
        let result = try Moonreel.runScript(Self.template, name: "tpl.lua",
                                            options: ["--set", "clip=a.mov", "--set", "start=2.5", "--set", "frames=4",
                                                      "--set", "loud=yes", "--set", "tint=#FF0000", "--set", "output=out/x.mp4",
                                                      "--set", "title=A = B"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == "a.mov\t2.5\t4\tinteger\tA = B\ttrue\t#FF0000\tout/x.mp4\n")
        let defaults = try Moonreel.runScript(Self.template, name: "tpl.lua", options: ["--set", "clip=a.mov", "--set", "output=o.mp4"])
        #expect(defaults.out == "a.mov\t0\t3\tinteger\t\tfalse\twhite\to.mp4\n", "\(defaults.err)")
    }

    @Test(arguments: [
        (["--set", "output=o.mp4"], "parameter clip is required (a string)"),
        (["--set", "clip=a", "--set", "output=o", "--set", "start=soon"], #"parameter start must be a number ≥ 0, got "soon""#),
        (["--set", "clip=a", "--set", "output=o", "--set", "start=-1"], "parameter start must be a number ≥ 0, got -1"),
        (["--set", "clip=a", "--set", "output=o", "--set", "frames=2.5"], #"parameter frames must be an integer in 1…10, got "2.5""#),
        (["--set", "clip=a", "--set", "output=o", "--set", "tint=blurple"], "parameter tint must be a color"),
        (["--set", "clip=a", "--set", "output=o", "--set", "strat=1"], "--set strat: the script has no parameter strat (it declares clip, start, frames, title, loud, tint, output)"),
    ])
    func aWrongOrMissingValueIsOneLineNamingIt(options: [String], message: String) throws {
        let result = try Moonreel.runScript(Self.template, name: "tpl.lua", options: options)
        #expect(result.status == 1)
        #expect(result.errorLines.count == 1, "\(result.err)")
        #expect(result.err.contains("tpl.lua:1:"), "\(result.err)")
        #expect(result.err.contains(message), "\(result.err)")
        #expect(result.out.isEmpty, "nothing ran past the declaration")
    }

    @Test func aBadDeclarationIsNamed() throws {
        let result = try Moonreel.runScript(#"av.parameters{ { name = "n", type = "number", default = "x" } }"#)
        #expect(result.status == 1)
        #expect(result.err.contains("av.parameters: default of parameter n must be a number, got \"x\""), "\(result.err)")
        let twice = try Moonreel.runScript("av.parameters{}\nav.parameters{}")
        #expect(twice.err.contains("test.lua:2: av.parameters: a script declares its parameters once"), "\(twice.err)")
    }

    @Test func aScriptWithoutDeclarationsKeepsArg() throws {
        let result = try Moonreel.runScript("print(arg[1])", arguments: ["hello"], options: ["--set", "x=1"])
        #expect(result.status == 0)
        #expect(result.out == "hello\n")
        #expect(result.err.contains("--set was given, but the script never called av.parameters"))
    }

    @Test func infoListsTheParameters() throws {
        let path = Fixtures.scratchPath("tpl.lua")
        try (Self.template + "\nerror('info must not run past the declaration')").write(toFile: path, atomically: true, encoding: .utf8)
        let result = try Moonreel.run(["info", path])
        #expect(result.status == 0, "\(result.err)")
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasSuffix("7 parameters (moonreel run --set NAME=VALUE … \(path))") == true, "\(result.out)")
        #expect(lines.contains { $0.contains("clip") && $0.contains("string") && $0.contains("required") && $0.contains("the song's video") })
        #expect(lines.contains { $0.contains("frames") && $0.contains("integer") && $0.contains("default 3") && $0.contains("1…10") })
        let none = try Moonreel.run(["info", Moonreel.example("cut.lua")])
        #expect(none.status == 1 && none.err.contains("stopped before declaring its parameters"), "\(none.err)")
    }
}
