import Foundation
import Testing
import TestSupport

/// Scripts see an error's kind (issue 22 §4): `err.kind`, `err.subject` and `err.message`,
/// while the error stays the same one-line string for everything scripts did with it.
@Suite struct ErrorKindScriptTests {
    func lines(_ script: String, arguments: [String] = []) throws -> [String] {
        let result = try Moonreel.runScript(script, name: "kinds.lua", arguments: arguments)
        #expect(result.status == 0, "\(result.err)")
        return result.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    @Test func aMissingFileIsNotFoundAndStillAString() throws {
        let out = try lines("""
            local ok, err = pcall(av.asset, "/no/such.mp4")
            print(ok, type(err), err.kind, err.subject)
            print(tostring(err))
            print(err.message == err, err:match("no such file"), string.find(err, "such.mp4", 1, true) ~= nil)
            print(("x" .. err):sub(1, 5), (err .. "|"):sub(-1), #err > 0)
            print(err == "bad argument #1 to 'asset' (input \\"/no/such.mp4\\": no such file)")
            local ok2, positioned = pcall(function() return av.asset("/no/such.mp4") end)
            print(positioned)
            print(positioned.kind, positioned.message)
            """)
        #expect(out[0] == "false\tstring\tnotFound\t/no/such.mp4")
        #expect(out[1] == "bad argument #1 to 'asset' (input \"/no/such.mp4\": no such file)")
        #expect(out[2] == "true\tno such file\ttrue")
        #expect(out[3] == "xbad \t|\ttrue")
        #expect(out[4] == "true")
        #expect(out[5].hasSuffix("/kinds.lua:7: bad argument #1 to 'asset' (input \"/no/such.mp4\": no such file)"), "\(out[5])")
        #expect(out[6] == "notFound\tbad argument #1 to 'asset' (input \"/no/such.mp4\": no such file)")
    }

    @Test func truncatedFilesBadArgumentsAndOtherStrings() throws {
        let out = try lines("""
            local _, truncated = pcall(av.asset, arg[1])
            print(truncated.kind, truncated.subject == arg[1])
            local _, bad = pcall(av.range, 0/0, 1)
            print(bad.kind, bad)
            local _, typed = pcall(av.asset, 42)
            print(typed.kind)
            local _, plain = pcall(error, "mine")
            print(plain.kind, ("hello").kind, ("hello"):upper(), ("kind"):len())
            local asset, message, kind = av.asset("/no/such.mp4", { try = true })
            print(asset, kind, type(message), message)
            """, arguments: [Fixtures.real("19_truncated_inside_moov.mp4")])
        #expect(out[0] == "decode\ttrue")
        #expect(out[1] == "invalidArgument\tbad argument #1 to 'range' (time must be a finite number of seconds, got nan)")
        #expect(out[2] == "invalidArgument")
        #expect(out[3] == "nil\tnil\tHELLO\t4")
        #expect(out[4].hasPrefix("nil\tnotFound\tstring\t") && out[4].hasSuffix("/kinds.lua:9: input \"/no/such.mp4\": no such file"), "\(out[4])")
    }

    /// Issue 39 §3: a source that could be opened but not decoded when the export read it
    /// (changed on disk in between, as on a shared drive) failed the export as
    /// `renderFailed`, and the script saw no kind (the returned text had none; raised, it
    /// read `encode`). The export keeps the failure under it: `err.kind` is the decoder's.
    @Test func aSourceThatCannotBeDecodedDuringAnExportIsADecodeFailure() throws {
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let source = folder + "/changed.mov"
        try? FileManager.default.removeItem(atPath: source)
        try FileManager.default.copyItem(atPath: Fixtures.real("01_iphone4s_portrait_h264_rot90.mov"), toPath: source)
        let out = try lines("""
            local asset = av.asset(arg[1])
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 1), asset, 0)
            local file = assert(io.open(arg[1], "wb")); file:write(string.rep("not a movie ", 4096)); file:close()
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL = arg[2]
            local ok, err = session:export()
            print(ok, session.errorKind, err.kind, err.subject == arg[1], err.message == session.error)
            print(err)
            """, arguments: [source, folder + "/never.mp4"])
        #expect(out[0] == "nil\trenderFailed\tdecode\ttrue\ttrue", "\(out)")
        #expect(out[1].contains("kinds.lua:7: input \"") && out[1].contains("changed.mov\": not a media file"), "\(out[1])")
        #expect(!FileManager.default.fileExists(atPath: folder + "/never.mp4"))
    }

    /// Issue 39 §3: the layer, animation and filter models threw errors of no kind, so a
    /// malformed LUT file and a layer tree too deep read as a wrong argument. They are the
    /// engine's errors now, with the kind of what went wrong.
    @Test func layerAndFilterRefusalsSayTheirKind() throws {
        let lut = Fixtures.scratchPath("broken.cube")
        try "LUT_3D_SIZE 2\n1 0\n".write(toFile: lut, atomically: true, encoding: .utf8)
        let out = try lines("""
            local _, cube = pcall(av.filter, "colorCube", { path = arg[1] })
            print(cube.kind, cube.subject == arg[1], cube.message)
            local root = av.layer{}
            local deepest, ok, deep = root, true, nil
            for _ = 1, 1001 do
              local inner = av.layer{}
              ok, deep = pcall(deepest.addSublayer, deepest, inner)
              if not ok then break end
              deepest = inner
            end
            print(deep.kind, deep.message)
            """, arguments: [lut])
        #expect(out[0].hasPrefix("decode\ttrue\tbad argument #2 to 'filter' (") && out[0].contains("broken.cube:2: a table line needs three numbers"), "\(out[0])")
        #expect(out[1] == "limit\taddSublayer: a layer tree may be at most 1000 layers deep", "\(out[1])")
    }

    /// Issue 39 §3: a remedy the engine names is said in Lua's terms to scripts.
    @Test func remediesAreSaidInLua() throws {
        let out = try lines("""
            local comp = av.composition()
            comp:insertTimeRange(av.range(0, 1), av.asset(arg[1]), 0)
            local session = av.exportSession(comp, "HighestQuality")
            session.outputURL = arg[2]
            session.videoComposition = av.videoComposition{}
            local _, err = session:export()
            print(err.kind, err.message)
            print(session.error == err.message)
            """, arguments: [try Fixtures.solid("0x404040", seconds: 1, size: "320x240"), Fixtures.scratchPath("never.mp4")])
        #expect(out[0].hasPrefix("invalidArgument\t") && out[0].contains("videoComposition.renderSize must be set (e.g. vc.renderSize = {1920, 1080}; av.videoComposition(comp) takes it from the composition)"), "\(out[0])")
        #expect(out[1] == "true", "session.error says it as err does")
    }

    @Test func theCommandLineStillPrintsOneLine() throws {
        let result = try Moonreel.runScript("local a = av.asset('/no/such.mp4')", name: "kinds.lua")
        #expect(result.status == 1)
        #expect(result.errorLines.count == 1, "\(result.err)")
        #expect(result.err.contains("kinds.lua:1: bad argument #1 to 'asset' (input \"/no/such.mp4\": no such file)"), "\(result.err)")
    }
}
