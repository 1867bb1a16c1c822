import Foundation
import Testing
import TestSupport

/// `moonreel repl` driven as a person would (through a pseudo-terminal) and as a program
/// would (piped lines), and the example session of REPL.md replayed.
@Suite struct REPLTests {
    /// One step of a terminal session: keys to type, then a pattern to wait for in what
    /// the REPL printed since (or, without one, a pause).
    struct Step: Encodable {
        var send: String?
        var expect: String?
        var timeout: Double?
    }

    struct TerminalSession: Decodable {
        let ok: Bool
        let failed_step: Int?
        let status: Int?
        let transcript: String
    }

    /// Runs `moonreel repl` (or another command) in a pseudo-terminal of `columns`
    /// (Fixtures/pty_session.py) in `directory`.
    func terminalSession(_ steps: [Step], in directory: String, dataHome: String, command: [String] = ["repl"],
                         columns: Int = 80) throws -> TerminalSession {
        struct Spec: Encodable {
            let command: [String]
            let env: [String: String]
            let cwd: String
            let columns: Int
            let steps: [Step]
        }
        let spec = Spec(command: [Moonreel.executable] + command, env: ["XDG_DATA_HOME": dataHome], cwd: directory,
                        columns: columns, steps: steps)
        let input = String(decoding: try JSONEncoder().encode(spec), as: UTF8.self)
        let driver = Moonreel.checkout + "/Tests/MoonreelTests/Fixtures/pty_session.py"
        let result = try Tool.run("python3", [driver], stdin: input, timeout: 60)
        return try JSONDecoder().decode(TerminalSession.self, from: Data(result.out.utf8))
    }

    /// Pipes `lines` into `moonreel repl` run in `directory`.
    func pipedSession(_ lines: [String], in directory: String, arguments: [String] = []) throws -> (status: Int32, out: String, err: String) {
        let script = "cd \"$1\" && shift && exec \"$@\""
        return try Tool.run("/bin/sh", ["-c", script, "sh", directory, Moonreel.executable, "repl"] + arguments,
                            stdin: lines.joined(separator: "\n") + "\n", timeout: 60)
    }

    func scratchDirectory() -> String {
        (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
    }

    @Test func terminalSessionEditsCompletesInterruptsAndKeepsHistory() throws {
        let directory = scratchDirectory()
        let dataHome = directory + "/data"
        let clip = try Fixtures.clip(seconds: 6)
        let prompt = "> $"
        // A history file in libedit's own format (spaces as \\040) from an earlier version.
        try FileManager.default.createDirectory(atPath: dataHome + "/moonreel", withIntermediateDirectories: true)
        try "_HiStOrY_V2_\n'old'\\040..\\040'\\040entry'\n".write(toFile: dataHome + "/moonreel/history", atomically: true, encoding: .utf8)
        let first = try terminalSession([
            Step(expect: prompt),
            Step(send: "for i = 1, 2 do\r", expect: ">> $"),
            Step(send: "print(i * 10) end\r", expect: "10\r\n20\r\n> $"),
            Step(send: "6 *\r", expect: ">> $"),
            Step(send: "7\r", expect: "42\r\n> $"),
            Step(send: "comp = av.composition()\r", expect: prompt),
            Step(send: "comp:insertTimeRange(av.range(0, 2), av.asset('\(clip)'), 0)\r", expect: prompt),
            Step(send: "comp:insertT\t", expect: "imeRange"),
            Step(send: "\u{15}comp:ins\t\t", expect: "comp:insertEmptyTimeRange +comp:insertTimeRange"),
            Step(send: "\u{15}av.exportSess\t", expect: "ion"),
            Step(send: "\u{15}comp\r", expect: "Composition\\(2 tracks, 2.000 s, 320×240\\)\r\n> $"),
            Step(send: ":snapshot 1.5 still.png\r", expect: "wrote still.png \\(comp at 1.5 s\\)\r\n> $"),
            Step(send: "while true do end\r", expect: "while true do end\r\n"),
            Step(timeout: 0.3),
            Step(send: "\u{03}", expect: "interrupted\r\n> $"),
            Step(send: "'still ' .. 'here'\r", expect: "still here\r\n> $"),
            Step(send: "half a line\u{03}", expect: "\\^C\r\n> $"),
            Step(send: "'history ' .. 42\r", expect: "history 42\r\n> $"),
            Step(send: "\u{04}", timeout: 0.5),
        ], in: directory, dataHome: dataHome)
        #expect(first.ok, "step \(first.failed_step ?? -1) failed; transcript:\n\(first.transcript)")
        #expect(first.status == 0)
        let png = try Tool.ffprobe(directory + "/still.png")
        #expect(png.video?.codec_name == "png" && png.video?.width == 320 && png.video?.height == 240)

        // A second run finds the first one's statements with ↑.
        let second = try terminalSession([
            Step(expect: prompt),
            Step(send: "\u{1B}[A", expect: "'history ' .. 42"),
            Step(send: "\r", expect: "history 42\r\n> $"),
            Step(send: ":quit\r", timeout: 0.5),
        ], in: directory, dataHome: dataHome)
        #expect(second.ok, "step \(second.failed_step ?? -1) failed; transcript:\n\(second.transcript)")
        #expect(second.status == 0)
        let history = try String(contentsOfFile: dataHome + "/moonreel/history", encoding: .utf8)
        // Issue 25: a history people can read — no \\040 escapes; a statement typed over
        // several lines is one entry, its further lines indented by a tab.
        #expect(history.hasPrefix("'old' .. ' entry'\n"), "the old file, read and written anew: \(history)")
        #expect(history.contains("for i = 1, 2 do\n\tprint(i * 10) end\n") && !history.contains("\\040"), "\(history)")
    }

    @Test func ctrlCCancelsAnExportCleanlyAndTheNextExportWorks() throws {
        let directory = scratchDirectory()
        let clip = try Fixtures.clip(seconds: 6)
        let result = try terminalSession([
            Step(expect: "> $"),
            Step(send: "comp = av.composition() for i = 0, 29 do comp:insertTimeRange(av.range(0, 6), av.asset('\(clip)'), i * 6) end\r",
                 expect: "> $"),
            Step(send: "ex = av.exportSession(comp, 'HighestQuality') ex.outputURL = 'long.mp4' return ex:export()\r",
                 expect: "export\\(\\)\r\n"),
            Step(timeout: 1),
            Step(send: "\u{03}", expect: "\r\ninterrupted\r\n> $", timeout: 20),
            Step(send: "ex.status\r", expect: "cancelled\r\n> $"),
            Step(send: "ex2 = av.exportSession(comp, 'LowQuality') ex2.outputURL = 'short.mp4' ex2.timeRange = av.range(0, 1) return ex2:export()\r",
                 expect: "true\r\n> $", timeout: 30),
            Step(send: "\u{04}", timeout: 0.5),
        ], in: directory, dataHome: directory + "/data")
        #expect(result.ok, "step \(result.failed_step ?? -1) failed; transcript:\n\(result.transcript)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0 != "data" }.sorted()
        #expect(files == ["short.mp4"], "no partial long.mp4, no temporary file")
        #expect(try Tool.ffprobe(directory + "/short.mp4").duration > 0.9)
    }

    @Test func pipedInputPrintsResultsAndOneLineErrors() throws {
        let result = try pipedSession([
            "x = 1 +", "2", "x", "error('boom')", "av.asset('nope.mov')", "print('after', x)",
            "t = { 1, 'two', name = 'n' }", "t", ":nope", "local function f(", ") return 5 end", "f",
        ], in: scratchDirectory())
        #expect(result.status == 1, "a piped session with errors fails as a script would")
        #expect(result.out.hasPrefix("3\n"))
        #expect(result.out.contains("after\t3\n"))
        #expect(result.out.contains("{1, \"two\", name = \"n\"}\n"))
        #expect(!result.out.contains(">"), "no prompt noise when piped")
        let errors = result.err.split(separator: "\n").map(String.init)
        #expect(errors == ["stdin:1: boom",
                           "stdin:1: bad argument #1 to 'asset' (input \"nope.mov\": no such file)",
                           "unknown command :nope; :help lists the commands"], "\(result.err)")
    }

    /// Issue 25: did-you-mean for presets, constructor properties, effect parameters and
    /// help("…"), as for methods.
    @Test func nearMissesAreNamedEverywhere() throws {
        let result = try pipedSession([
            "help('Layr')", "av.exportSession(av.composition(), 'HighestQualty')", "av.layer{ backgroundColour = 'red' }",
            "require('effects.lyrics'){ cues = {}, renderSize = {1, 1}, fontSise = 3 }", "av.keyframeAnimation{ keyPath = 'opacity', valeus = {0, 1} }",
        ], in: scratchDirectory())
        #expect(result.out.contains("no av function or class named \"Layr\"; did you mean Layer?"), "\(result.out)")
        for hint in ["\"HighestQualty\"; did you mean HighestQuality?", "\"backgroundColour\"; did you mean backgroundColor?",
                     "unknown parameter fontSise; did you mean fontSize?", "\"valeus\"; did you mean values?"] {
            #expect(result.err.contains(hint), "\(hint): \(result.err)")
        }
    }

    /// Issue 25: `:save FILE` writes the statements that ran without an error as a script
    /// that does the same again; an existing file is replaced only by `:save!`.
    @Test func saveWritesTheAcceptedStatementsAsAScript() throws {
        let directory = scratchDirectory()
        let result = try pipedSession([
            "x = 6", "error('not this one')", "y = x *", "7", "x * y", "for i = 1, 2 do", "print('line ' .. i) end", ":save session.lua",
            ":save session.lua", "z = 1", ":save! session.lua",
        ], in: directory)
        #expect(result.out.contains("saved 4 statements to session.lua") && result.out.contains("saved 5 statements to session.lua"), "\(result.out)")
        #expect(result.err.contains(":save: session.lua exists; :save! session.lua replaces it"), "\(result.err)")
        let script = try String(contentsOfFile: directory + "/session.lua", encoding: .utf8)
        #expect(script.contains("x = 6\ny = x *\n7\nprint(x * y)\nfor i = 1, 2 do\nprint('line ' .. i) end\nz = 1\n") && !script.contains("not this one"), "\(script)")
        let again = try Moonreel.run(["run", directory + "/session.lua"])
        #expect(again.status == 0 && again.out == "252\nline 1\nline 2\n", "\(again.out) \(again.err)")
    }

    @Test func helpComesFromTheBindingTables() throws {
        let result = try pipedSession([
            "help()", "help(av.exportSession)", "comp = av.composition()", "help(comp)", "help('nothing')", "help(print)",
        ], in: scratchDirectory())
        #expect(result.status == 0)
        #expect(result.out.contains("  av.asset(path [, {try = true}]): open a media file; with try = true"))
        #expect(result.out.contains("classes: Animation, AnimationTool, Asset, AssetTrack,"))
        #expect(result.out.contains(":snapshot T [file.png]"))
        #expect(result.out.contains("av.exportSession(compositionOrAsset, preset)"))
        #expect(result.out.contains("ExportSession: Exports a composition to a file with a preset.\nproperties:\n"))
        #expect(result.out.contains("  outputURL "))
        #expect(result.out.contains("  ex:export{progress=function(fraction) end}"))
        #expect(result.out.contains("Composition: Tracks of segments cut from assets"))
        #expect(result.out.contains("  comp:insertTimeRange(range, asset, at): every track of the asset\n"))
        #expect(result.out.contains("no av function or class named \"nothing\""))
        #expect(result.out.contains("no help for this function"))
    }

    @Test func scriptLoadProbeAndReset() throws {
        let directory = scratchDirectory()
        let clip = try Fixtures.clip(seconds: 6)
        try "greeting = 'hello from ' .. arg[0]\ngiven = table.concat(arg, ' ')\n".write(toFile: directory + "/setup.lua", atomically: true, encoding: .utf8)
        try "second = 2 + #arg .. (arg[1] or '')\n".write(toFile: directory + "/more.lua", atomically: true, encoding: .utf8)
        let result = try pipedSession([
            "greeting", "given", ":load more.lua 'a b' c", "second", ":probe \(clip)", ":reset", "tostring(greeting)",
            "c2 = av.composition()", ":snapshot 1", ":quit", "'not reached'",
        ], in: directory, arguments: ["setup.lua", "first", "second"])
        #expect(result.status == 1, "the snapshot failed")
        #expect(result.out.contains("hello from setup.lua\nfirst second\n4a b\n"), "\(result.out)")
        #expect(result.out.contains("#1 video h264 320×240"))
        #expect(result.out.contains("fresh session: every global is gone\nnil\n"))
        #expect(!result.out.contains("not reached"))
        // An empty composition has no frame to draw: one clear line, naming the command's call.
        #expect(result.err.split(separator: "\n").count == 1, "\(result.err)")
    }

    /// REPL.md's example session, replayed: every line it shows as printed must be printed,
    /// in order, so the page cannot drift from what the REPL does.
    @Test func documentedSessionReplays() throws {
        let page = try String(contentsOfFile: Moonreel.checkout + "/REPL.md", encoding: .utf8)
        guard let start = page.range(of: "```repl-session\n"),
              let end = page.range(of: "\n```", range: start.upperBound..<page.endIndex) else {
            Issue.record("REPL.md has no ```repl-session block")
            return
        }
        var inputs: [String] = []
        var expected: [String] = []
        for line in page[start.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(">> ") { inputs.append(String(line.dropFirst(3))) }
            else if line.hasPrefix("> ") { inputs.append(String(line.dropFirst(2))) }
            else { expected.append(String(line)) }
        }
        // The clip is made with the command the page gives.
        let directory = scratchDirectory()
        guard let command = page.firstMatch(of: /`(ffmpeg [^`]+ clip\.mp4)`/)?.1 else {
            Issue.record("REPL.md no longer says how to make clip.mp4")
            return
        }
        let arguments = command.split(separator: " ").dropFirst().map { $0 == "clip.mp4" ? directory + "/clip.mp4" : String($0) }
        try Tool.ffmpeg(arguments)
        let result = try pipedSession(inputs, in: directory)
        #expect(result.status == 0)
        #expect(result.err.isEmpty, "\(result.err)")
        #expect(result.out.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) == expected)
        #expect(try Tool.ffprobe(directory + "/frame.png").video?.codec_name == "png")
        #expect(abs(try Tool.ffprobe(directory + "/cut.mp4").duration - 3) < 0.1)
    }

    /// A banner on a terminal; completion through indexes and object properties; `:snapshot`
    /// shows what the export will: the current composition through the current video
    /// composition, layers included.
    @Test func bannerIndexedCompletionAndSnapshotThroughTheVideoComposition() throws {
        let directory = scratchDirectory()
        let clip = try Fixtures.clip(seconds: 6)
        let prompt = "> $"
        let result = try terminalSession([
            Step(expect: "Moonreel [0-9.]+ \\(Lua 5\\.4\\) · help\\(\\) lists the API.*\r\n> $"),
            Step(send: "comp = av.composition() comp:insertTimeRange(av.range(0, 2), av.asset('\(clip)'), 0)\r", expect: prompt),
            Step(send: "vc = av.videoComposition(comp) strip = av.layer{ frame = {0, 0, 320, 40}, backgroundColor = 'red' }\r", expect: prompt),
            Step(send: "parent, video = av.layer{ frame = {0, 0, 320, 240} }, av.layer{ frame = {0, 0, 320, 240} }\r", expect: prompt),
            Step(send: "parent:addSublayer(video) parent:addSublayer(strip)\r", expect: prompt),
            Step(send: "vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }\r", expect: prompt),
            Step(send: "vc.instructions[1].layerIn\t", expect: "structions"),
            Step(send: "\u{15}:snapshot 1 through.png\r", expect: "wrote through.png \\(comp through vc at 1 s\\)\r\n> $"),
            Step(send: "\u{04}", timeout: 0.5),
        ], in: directory, dataHome: directory + "/data")
        #expect(result.ok, "step \(result.failed_step ?? -1) failed; transcript:\n\(result.transcript)")
        // Core Animation's origin is at the bottom: the red strip is the picture's last 40 rows.
        let frame = try Tool.rgbFrame(directory + "/through.png", at: 0)
        let strip = frame.mean(x: 20, y: 205, width: 280, height: 30), above = frame.mean(x: 20, y: 150, width: 280, height: 30)
        #expect(strip.r > 200 && strip.g < 60 && strip.b < 60, "\(strip)")
        #expect(!(above.r > 200 && above.g < 60 && above.b < 60), "\(above)")
    }

    /// The progress bar on a 50-column terminal: every redraw fits (no wrapping), it names
    /// the output, and what the script prints after the export starts on a line of its own.
    @Test func progressBarFitsANarrowTerminalAndEndsItsLine() throws {
        let directory = scratchDirectory()
        let clip = try Fixtures.clip(seconds: 6)
        try (Moonreel.cutScript(start: 0, duration: 6, preset: "MediumQuality") + "print('after the export')\n")
            .write(toFile: directory + "/bar.lua", atomically: true, encoding: .utf8)
        let result = try terminalSession([Step(expect: "after the export", timeout: 60)], in: directory, dataHome: directory + "/data",
                                         command: ["run", "bar.lua", clip, "a-rather-long-output-name-for-a-narrow-terminal.mp4"],
                                         columns: 50)
        #expect(result.ok, "transcript:\n\(result.transcript)")
        let redraws = result.transcript.unicodeScalars.split { $0 == "\r" || $0 == "\n" }.map { String(String.UnicodeScalarView($0)) }
        let bars = redraws.filter { $0.contains("%") }
        #expect(!bars.isEmpty && bars.allSatisfy { $0.count < 50 }, "\(bars)")
        #expect(bars.allSatisfy { $0.hasPrefix("a-rather") && $0.contains("…") }, "\(bars)")
        #expect(result.transcript.contains("\r\nafter the export"), "\(result.transcript)")
    }
}
