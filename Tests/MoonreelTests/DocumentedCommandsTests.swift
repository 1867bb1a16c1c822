import Foundation
import Testing
import TestSupport

/// Every `moonreel` command line in README.md, REPL.md and docs/ (issue 40 §2l: the docs put
/// `--set` after the script, where the parser took it for the script's argument). A line in a
/// code block is run for real, in a folder of stand-ins for the files it names (a clip for
/// clip.mp4, a template for tpl.lua…), and must exit 0; a synopsis (`[--jobs N]`, `FILE`,
/// `…`) and a command named in prose must name a real command and only options its --help
/// lists. So the docs cannot drift from the program.
@Suite(.serialized) struct DocumentedCommandsTests {
    struct Line: CustomStringConvertible {
        let file: String
        let number: Int
        let text: String
        let inCodeBlock: Bool

        var description: String { "\(file):\(number): \(text)" }
        var words: [String] { DocumentedCommandsTests.shellWords(text) }

        /// Written with placeholders or alternatives, or named in prose: to check, not to run.
        var isSynopsis: Bool {
            !inCodeBlock || text.contains("[") || text.contains("…") || text.contains("...") || text.contains("|")
                || words.contains { $0.count > 0 && $0 == $0.uppercased() && $0.contains(where: \.isLetter) && !$0.hasPrefix("-") }
        }
    }

    /// The documents users read.
    static let documents: [String] = {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: Moonreel.checkout + "/docs")) ?? []
        return ["README.md", "REPL.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }()

    /// Lines of code blocks that start with `moonreel ` (or `$ moonreel `; a trailing `\`
    /// joins the next line), and `moonreel …` in inline code. Output (`moonreel: …`),
    /// comments and shell redirections are left out.
    static func commandLines() throws -> [Line] {
        var found: [Line] = []
        for document in documents {
            let text = try String(contentsOfFile: Moonreel.checkout + "/" + document, encoding: .utf8)
            var inBlock = false
            var pending: (number: Int, text: String)?
            for (index, raw) in text.components(separatedBy: "\n").enumerated() {
                if raw.hasPrefix("```") {
                    inBlock.toggle()
                    continue
                }
                if inBlock {
                    var line = raw.trimmingCharacters(in: .whitespaces)
                    if let started = pending {
                        line = started.text + " " + line
                    } else {
                        if line.hasPrefix("$ ") { line.removeFirst(2) }
                        guard line.hasPrefix("moonreel ") else { continue }
                    }
                    let number = pending?.number ?? index + 1
                    if line.hasSuffix("\\") {
                        pending = (number, String(line.dropLast()).trimmingCharacters(in: .whitespaces))
                        continue
                    }
                    pending = nil
                    found.append(Line(file: document, number: number, text: withoutCommentOrRedirect(line), inCodeBlock: true))
                } else {
                    for match in raw.matches(of: /`(moonreel [^`]+)`/) {
                        found.append(Line(file: document, number: index + 1, text: String(match.1), inCodeBlock: false))
                    }
                }
            }
        }
        // "moonreel: batch: 3 of 4 rows…" and "moonreel studio: http://…" are output.
        return found.filter { line in !(line.words.dropFirst().first ?? ":").hasSuffix(":") && line.words.first == "moonreel" }
    }

    /// The line up to a `#` comment or a `>` redirection (the README's synopsis also runs
    /// on into a description after two spaces or more).
    static func withoutCommentOrRedirect(_ line: String) -> String {
        var kept = line
        for marker in ["  #", " > ", "   "] {
            if let cut = kept.range(of: marker) { kept = String(kept[..<cut.lowerBound]) }
        }
        return kept.trimmingCharacters(in: .whitespaces)
    }

    /// Words as sh splits them (single and double quotes; no expansions).
    static func shellWords(_ text: String) -> [String] {
        var words: [String] = [], word = "", quote: Character?, started = false
        for character in text {
            if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
            } else if character == "'" || character == "\"" {
                (quote, started) = (character, true)
            } else if character == " " {
                if started || !word.isEmpty { words.append(word) }
                (word, started) = ("", false)
            } else {
                word.append(character)
            }
        }
        if started || !word.isEmpty { words.append(word) }
        return words
    }

    /// The subcommands, as `moonreel --help` and each group's help list them.
    static let subcommands: [String: [String]] = [
        "": ["run", "repl", "studio", "batch", "info", "cues", "effects", "demo", "probe", "snapshot", "record", "docs", "proxy"],
        "cues": ["check"], "effects": ["list", "info", "show", "preview", "gallery", "new", "remove", "install", "pack", "outdated", "update"],
    ]

    /// The subcommand a line names (`["effects", "install"]`) and the words after it.
    static func command(of words: [String]) -> (path: [String], rest: [String]) {
        var path: [String] = [], rest = Array(words.dropFirst())
        while let next = rest.first, let known = subcommands[path.joined(separator: " ")], known.contains(next) {
            path.append(next)
            rest.removeFirst()
        }
        return (path, rest)
    }

    /// The options `moonreel PATH --help` lists.
    static func options(of path: [String]) throws -> Set<String> {
        let help = try Moonreel.run(path + ["--help"])
        #expect(help.status == 0, "moonreel \(path.joined(separator: " ")) --help: \(help.err)")
        return Set(help.out.matches(of: /(?:^|[\s,\[])(--?[a-zA-Z][a-zA-Z0-9-]*)/).map { String($0.1) })
    }

    @Test func everyDocumentedCommandNamesRealOptions() throws {
        let lines = try Self.commandLines()
        #expect(lines.count > 40, "\(lines.count) command lines found")
        var helps: [String: Set<String>] = [:]
        for line in lines {
            let (path, rest) = Self.command(of: line.words)
            guard let first = path.first else {
                #expect(rest.first == "--generate-completion-script", "\(line): no such command")
                continue
            }
            if Self.subcommands[first] != nil, path.count == 1, line.inCodeBlock, !line.text.contains("|") {
                Issue.record("\(line): \(first) needs a subcommand (\(Self.subcommands[first] ?? []))")
            }
            let key = path.joined(separator: " ")
            if helps[key] == nil { helps[key] = try Self.options(of: path) }
            // After `--`, the words are the script's own.
            let moonreels = rest.prefix { $0 != "--" && $0 != "[--]" }
            for word in moonreels.map({ $0.trimmingCharacters(in: CharacterSet(charactersIn: "[]")) }) where word.hasPrefix("-") && word != "--" {
                let option = String(word.split(separator: "=").first ?? Substring(word))
                #expect(helps[key]?.contains(option) == true, "\(line): moonreel \(key) has no option \(option)")
            }
        }
    }

    /// A folder holding a stand-in for each file the documented lines name.
    static func standIns() throws -> (folder: String, data: String) {
        let folder = (Fixtures.scratchPath("docs") as NSString).deletingLastPathComponent + "/docs-run"
        let fileManager = FileManager.default
        try fileManager.createDirectory(atPath: folder + "/clips", withIntermediateDirectories: true)
        try fileManager.createSymbolicLink(atPath: folder + "/scripts", withDestinationPath: Moonreel.checkout + "/scripts")
        let clip = try Fixtures.clip(seconds: 6)
        for name in ["clip.mp4", "song.mov", "concert.mov", "a.mov"] { try fileManager.copyItem(atPath: clip, toPath: folder + "/" + name) }
        let write = { (name: String, text: String) in try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8) }
        try write("lyrics.csv", "id,lyric,start_at,end_at\n1,Hello there,0.5,2.0\n2,and goodbye,2.2,3.5\n")
        try write("song.lrc", "[00:01.00]one\n[00:02.00]two\n")
        // A template as docs/scripting.md shows one: a clip, where to start, an output.
        let template = """
            local p = av.parameters{
              { name = "clip",   type = "string", required = true },
              { name = "start",  type = "number", default = 0, min = 0 },
              { name = "title",  type = "string", default = "" },
              { name = "output", type = "string", required = true },
            }
            local asset = av.asset(p.clip)
            local comp = av.composition()
            comp:insertTimeRange(av.range(p.start, 1), asset, 0)
            local session = av.exportSession(comp, "MediumQuality")
            session.outputURL = p.output
            assert(session:export())
            """
        for name in ["tpl.lua", "template.lua", "concert.lua"] { try write(name, template) }
        try write("rows.csv", "id,clip,start\nr1,clip.mp4,0.5\nr2,a.mov,1\n")
        try fileManager.copyItem(atPath: Moonreel.example("lyrics_template.lua"), toPath: folder + "/lyric-video.lua")
        try write("songs.csv", "id,video,lyrics\nsong1,song.mov,lyrics.csv\n")
        // docs/scripting.md's trim.lua only shows where arguments go.
        try write("trim.lua", "print(select('#', ...) .. ' arguments: ' .. table.concat({ ... }, ' '))\n")
        let data = folder + "/data"
        #expect(try Moonreel.run(["effects", "new", "caption", "--folder", folder]).status == 0)
        return (folder, data)
    }

    /// Lines that need what a test cannot start here, run in another form.
    static func runnable(_ words: [String]) -> [String]? {
        // `run --chunks --slurm` submits to a cluster (SlurmBatchTests runs it on a real one);
        // a batch's --slurm can write its job script without submitting it.
        if words.contains("--slurm") { return words.first == "batch" ? words + ["--emit"] : nil }
        return words
    }

    @Test func everyDocumentedCommandLineRuns() throws {
        let (folder, data) = try Self.standIns()
        let lines = try Self.commandLines().filter { !$0.isSynopsis }
        #expect(lines.count >= 12, "\(lines.map(\.description))")
        for line in lines {
            guard let words = Self.runnable(Array(line.words.dropFirst())) else { continue }
            if words.first == "studio" {
                let studio = try StudioProcess(script: folder + "/" + words[1], arguments: words.dropFirst(2).map { $0.contains(".") ? folder + "/" + $0 : $0 })
                #expect(studio.url.hasPrefix("http://127.0.0.1:"), "\(line)")
                studio.stop()
                continue
            }
            let result = try Tool.run("/bin/sh", ["-c", "cd \"$1\" && shift && exec \"$@\"", "sh", folder, Moonreel.executable] + words,
                                      environment: ["XDG_DATA_HOME": data, "XDG_CACHE_HOME": folder + "/cache"], timeout: 120)
            #expect(result.status == 0, "\(line) → exit \(result.status): \(result.err.suffix(600))")
            if words.first == "--generate-completion-script" { #expect(result.out.contains("moonreel"), "\(line)") }
        }
    }
}
