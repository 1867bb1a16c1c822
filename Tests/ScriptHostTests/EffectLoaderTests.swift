import Testing
@testable import MoonreelScriptHost

let lyricsEffect = """
    return {
      name = "lyrics", version = "1.0", description = "Sung lines", author = "Ann", license = "MIT",
      parameters = {
        { name = "fontSize", type = "number", default = 48, min = 1, max = 1000, doc = "points" },
        { name = "color", type = "color", default = { 1, 1, 1, 1 } },
        { name = "lines", type = "integer", default = 2, min = 1 },
        { name = "text", type = "string", required = true },
        { name = "shadow", type = "boolean", default = false },
      },
      apply = function(params, extra)
        return string.format("%s %s %d %s %s %s", params.text, params.fontSize, params.lines,
                             tostring(params.shadow), type(params.color), tostring(extra))
      end,
    }
    """

@Suite struct EffectLoaderTests {
    let project: Project

    init() throws { project = try Project() }

    // MARK: Search

    @Test func searchOrderIsScriptFolderThenPathThenUserThenBundled() throws {
        let library = try Project()
        let user = try Project()
        try library.write("effects/a.lua", "return { apply = function() return 'library' end }")
        try library.write("effects/b.lua", "return { apply = function() return 'library' end }")
        try user.write("c/init.lua", "return { apply = function() return 'user' end }")
        try user.write("a.lua", "return { apply = function() return 'user' end }")
        try project.write("effects/a.lua", "return { apply = function() return 'script' end }")
        let host = try ScriptHost(
            limits: testLimits,
            searchPath: EffectSearchPath(scriptDirectory: project.root, libraryRoots: [library.root],
                                         userEffectsDirectory: user.root),
            bundledEffects: ["a": "return { apply = function() return 'bundled' end }",
                             "d": "return { apply = function() return 'bundled' end }"])
        let script = try project.write("main.lua", """
            result = require("effects.a")() .. require("effects.b")() .. require("effects.c")() .. require("effects.d")()
            """)
        try host.runScript(atPath: script)
        #expect(try host.string("return result") == "scriptlibraryuserbundled")
    }

    @Test func notFoundNamesTheModuleAndEveryPlace() throws {
        let host = try makeHost(project, bundled: ["other": "return {}"])
        let (error, _) = try failure(of: "\nlocal x = require 'effects.nope'", in: project, host: host)
        #expect(error.message == "main.lua:2: module 'effects.nope' not found: no file '\(project.root)/effects/nope.lua'; "
                + "no file '\(project.root)/effects/nope/init.lua'; no bundled effect 'nope'")
    }

    @Test(arguments: ["effects.../../x", "effects./etc/passwd", "effects.a..b", "effects.", "effects.a/b"])
    func pathsAreRefused(name: String) throws {
        let (error, _) = try failure(of: "require '\(name)'", in: project)
        let module = name.dropFirst("effects.".count)
        #expect(error.message == "main.lua:1: module 'effects.\(module)' refused: effect names are words "
                + "(letters, digits, '_', '-') joined by dots, never paths")
    }

    @Test func symlinksLeadingOutsideAreRefused() throws {
        let outside = try Project()
        let target = try outside.write("evil.lua", "return { apply = function() return 'escaped' end }")
        try project.link("effects/evil.lua", to: target)
        try project.write("effects/inside.lua", "return { apply = function() return 'inside' end }")
        try project.link("effects/alias.lua", to: project.root + "/effects/inside.lua")
        let (error, _) = try failure(of: "require 'effects.evil'", in: project)
        #expect(error.message == "main.lua:1: module 'effects.evil' refused: \(project.root)/effects/evil.lua "
                + "leads outside \(project.root)/effects")
        let host = try makeHost(project)
        #expect(try host.string("return require('effects.alias')()") == "inside")
    }

    @Test func effectsRequireOtherEffectsInTheSandboxButNeverPaths() throws {
        try project.write("effects/kit/util.lua", "shared = 'kit global'\nreturn { apply = function(p) return p.x * 2 end }")
        try project.write("effects/user.lua", """
            local util = require "effects.kit.util"
            local av = require "moonreel"
            return { apply = function() return util{ x = 21 } .. tostring(shared) .. tostring(pcall(function() return av.asset end)) end }
            """)
        let host = try makeHost(project)
        #expect(try host.string("return require('effects.user')()") == "42nilfalse")
        try project.write("effects/bad.lua", "require 'os'")
        let (error, _) = try failure(of: "require 'effects.bad'", in: project, host: host)
        #expect(error.message == "effects/bad.lua:1: effects can only require \"effects.NAME\" and \"moonreel\", not \"os\"")
    }

    @Test func requireMoonreelGivesTheScriptTheAvTable() throws {
        let host = try makeHost(project)
        #expect(try host.string("return tostring(require('moonreel') == av)") == "true")
    }

    @Test func effectsGetDeterministicRandomNumbers() throws {
        try project.write("effects/dice.lua", "return { apply = function() return math.random(1, 1000000) end }")
        let first = try makeHost(project)
        let second = try makeHost(project)
        let roll = "math.randomseed(os.time()); return tostring(require('effects.dice')())"
        #expect(try first.string(roll) == second.string(roll))
    }

    // MARK: Parameters

    @Test func wrapperFillsDefaultsAndPassesExtraArguments() throws {
        try project.write("effects/lyrics.lua", lyricsEffect)
        let host = try makeHost(project)
        try host.evaluate("lyrics = require 'effects.lyrics'")
        #expect(try host.string("return lyrics{ text = 'hi' }") == "hi 48 2 false table nil")
        #expect(try host.string("return lyrics.apply({ text = 'hi', lines = 3.0, fontSize = 12.5 }, 'x')") == "hi 12.5 3 false table x")
        #expect(try host.string("return lyrics:apply({ text = 'hi', shadow = true }, 7)") == "hi 48 2 true table 7")
        #expect(try host.string("return lyrics.name .. ' ' .. lyrics.version .. ' ' .. #lyrics.parameters .. ' ' .. tostring(lyrics)")
                == "lyrics 1.0 5 effect \"lyrics\" 1.0")
    }

    @Test(arguments: [
        ("lyrics{ text = 'a', fontSize = 'big' }", "parameter fontSize must be a number in 1…1000, got \"big\""),
        ("lyrics{ text = 'a', fontSize = 0/0 }", "parameter fontSize must be a number in 1…1000, got nan"),
        ("lyrics{ text = 'a', fontSize = 1e309 }", "parameter fontSize must be a number in 1…1000, got inf"),
        ("lyrics{ text = 'a', fontSize = -3 }", "parameter fontSize must be a number in 1…1000, got -3"),
        ("lyrics{ text = 'a', lines = 1.5 }", "parameter lines must be an integer ≥ 1, got 1.5"),
        ("lyrics{ text = 'a', color = 5 }", "parameter color must be a color (a name, \"#RRGGBB\" or {r, g, b, a}), got 5"),
        ("lyrics{ text = 'a', shadow = 'yes' }", "parameter shadow must be a boolean, got \"yes\""),
        ("lyrics{ text = 'a', lines = 'a\\0\\255' .. ('z'):rep(100) }",
         "parameter lines must be an integer ≥ 1, got \"a\\0\\255\(String(repeating: "z", count: 54))…\""),
        ("lyrics{ text = 'a', lines = ('あ'):rep(30) }", "parameter lines must be an integer ≥ 1, got \"\(String(repeating: "あ", count: 30))\""),
        ("lyrics{ text = {} }", "parameter text must be a string, got table"),
        ("lyrics{ fontSize = 20 }", "parameter text is required (a string)"),
        ("lyrics{ text = 'a', fontsize = 20 }", "unknown parameter fontsize; did you mean fontSize? (parameters: fontSize, color, lines, text, shadow)"),
        ("lyrics{ 'a' }", "options must be name = value pairs, got the number key 1"),
        ("lyrics('a')", "options must be a table of name = value, got \"a\""),
        ("lyrics.version = '2'", nil),
    ] as [(String, String?)])
    func invalidOptionsAreReportedAtTheCallersLine(call: String, message: String?) throws {
        try project.write("effects/lyrics.lua", lyricsEffect)
        let (error, _) = try failure(of: "local lyrics = require 'effects.lyrics'\n\(call)", in: project)
        if let message {
            #expect(error.message == "main.lua:2: effect \"lyrics\": \(message)")
        } else {
            #expect(error.message.hasPrefix("main.lua:2: effect \"lyrics\""))
            #expect(!error.message.contains("\n"))
        }
    }

    @Test func malformedMetadataIsReportedAtRequire() throws {
        try project.write("effects/broken.lua", """
            return { parameters = { { name = "size", type = "number", default = "x", min = 1 } } }
            """)
        let (error, _) = try failure(of: "require 'effects.broken'", in: project)
        #expect(error.message == "main.lua:1: effect \"broken\": default of parameter size must be a number ≥ 1, got \"x\"")
    }

    @Test func effectErrorsKeepTheEffectsPositionAndTraceback() throws {
        try project.write("effects/fails.lua", "return { apply = function(p)\n  return p.missing.field\nend }")
        let (error, _) = try failure(of: "local f = require 'effects.fails'\nf{}", in: project)
        #expect(error.message == "effects/fails.lua:2: attempt to index a nil value (field 'missing')")
        #expect(error.traceback?.contains("main.lua:2") == true)
    }

    // MARK: Metadata for the CLI

    @Test func listingShowsMetadataAndLoadErrors() throws {
        try project.write("effects/lyrics.lua", lyricsEffect)
        try project.write("effects/broken.lua", "return 42")
        try project.write("effects/watermark/init.lua", "return { name = 'watermark', apply = function() end }")
        try project.write("effects/notes.txt", "not an effect")
        let host = try makeHost(project, bundled: ["lyrics": "return {}", "extra": "return { version = '0.1' }"])
        let listing = host.listEffects()
        #expect(listing.map(\.module) == ["broken", "lyrics", "watermark", "extra"])
        let lyrics = try listing[1].info.get()
        #expect(lyrics.location == project.root + "/effects/lyrics.lua")
        #expect(lyrics.parameters.first == EffectParameter(name: "fontSize", type: "number", defaultValue: "48", minimum: 1,
                                                            maximum: 1000, required: false, doc: "points"))
        #expect(lyrics.parameters[1].defaultValue == "{1, 1, 1, 1}")
        #expect(lyrics.parameters[3].required)
        #expect((lyrics.name, lyrics.version, lyrics.author, lyrics.license) == ("lyrics", "1.0", "Ann", "MIT"))
        if case .failure(let error) = listing[0].info {
            #expect(error.message == "effect \"broken\" must return a table, got 42")
        } else {
            Issue.record("broken effect listed as fine")
        }
        #expect(try listing[3].info.get().location == "bundled")
    }

    @Test func installCheckLoadsACandidateInTheSandbox() throws {
        let candidates = try Project()
        let good = try candidates.write("fancy/init.lua", "local helper = require 'effects.fancy.helper'\nreturn { version = helper.version }")
        try candidates.write("fancy/helper.lua", "return { version = '2.0' }")
        let host = try makeHost(project)
        #expect(try host.checkEffect(atPath: String(good.dropLast("/init.lua".count))).version == "2.0")
        let hostile = try candidates.write("hostile.lua", "return io.open('/etc/passwd')")
        #expect(throws: ScriptError.self) { try host.checkEffect(atPath: hostile) }
        let misnamed = try candidates.write("my.effect.lua", "return {}")
        #expect { try host.checkEffect(atPath: misnamed) } throws: { error in
            (error as? ScriptError)?.message == "\(misnamed): effect names are one word (letters, digits, '_', '-')"
        }
    }
}
