import ArgumentParser
import MoonreelEngine
import MoonreelPlatform
import MoonreelScriptHost
import MoonreelBindings
#if canImport(Glibc)
import Glibc
#endif
import MoonreelPlatform

struct Effects: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The reusable effect scripts `require \"effects.NAME\"` can find, and installing new ones.",
        discussion: """
            Effects are searched in the script's own effects/ folder (here: the current folder's), each MOONREEL_PATH entry's \
            effects/ folder, $XDG_DATA_HOME/moonreel/effects (default ~/.local/share/moonreel/effects) \
            and the effects bundled with Moonreel.
            """,
        version: moonreelVersion,
        subcommands: [List.self, Info.self, Show.self, Preview.self, Gallery.self, Install.self, Remove.self, New.self, Pack.self,
                      Outdated.self, Update.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every effect found, with its parameters.", version: moonreelVersion)
        @Flag(help: "Print a JSON array for programs: each effect's name, version, location, requirements and parameters (or its error).")
        var json = false

        func run() throws {
            let host = try makeEffectsHost()
            let listings = host.scripts.listEffects()
            if json {
                print(try EffectListingJSON.text(listings, bundled: host.scripts.bundledEffects))
                return
            }
            var text: [String] = []
            for listing in listings {
                switch listing.info {
                case .success(let info):
                    var entry = EffectText.describe(info, detailed: false)
                    if info.location != "bundled", host.scripts.bundledEffects[info.module] != nil {
                        entry += "\n  shadows the bundled effect \"\(info.module)\" (remove this one to use it again)"
                    }
                    text.append(entry)
                case .failure(let error): text.append("\(listing.module) (cannot be loaded)\n  found: \(listing.location)\n  error: \(error.message)")
                }
            }
            print(text.isEmpty ? "no effects found" : text.joined(separator: "\n\n"))
        }
    }

    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One effect's metadata, parameters and how to call it.", version: moonreelVersion)
        @Argument(help: "The effect's name, as in require \"effects.NAME\".", completion: .custom(effectNames)) var name: String

        func run() throws {
            let host = try makeEffectsHost()
            do {
                print(EffectText.describe(try host.scripts.effectInfo(named: name), detailed: true))
            } catch {
                printError("moonreel: effect \"\(name)\": \(firstLine(of: error)); `moonreel effects list` shows what there is")
                throw ExitCode(Exit.failed)
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print an effect's source (the one require would load; bundled ones too).",
                                                        version: moonreelVersion)
        @Argument(help: "The effect's name, as in require \"effects.NAME\".", completion: .custom(effectNames)) var name: String

        func run() throws {
            let host = try makeEffectsHost()
            do {
                let found = try host.scripts.effectSource(named: name)
                printError("-- \(found.location)")
                print(found.text, terminator: found.text.hasSuffix("\n") ? "" : "\n")
            } catch {
                printError("moonreel: effect \"\(name)\": \(firstLine(of: error)); `moonreel effects list` shows what there is")
                throw ExitCode(Exit.failed)
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an installed effect from your effects folder.", version: moonreelVersion)
        @Argument(help: "The effect's name.", completion: .custom(effectNames)) var name: String

        func run() throws {
            let host = try makeEffectsHost()
            let folder = try userEffectsFolder(for: "effects remove")
            do {
                let removed = try EffectInstaller(folder: folder).remove(name)
                print("removed effect \"\(name)\" (\(removed))" + (host.scripts.bundledEffects[name] != nil ? "; the bundled one is used again" : ""))
            } catch {
                printError("moonreel: effects remove \(name): \(firstLine(of: error))")
                throw ExitCode(Exit.failed)
            }
        }
    }

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start a new effect: writes effects/NAME.lua from a template (metadata, parameters, apply) and says how to try it.",
            version: moonreelVersion)
        @Argument(help: "The effect's name (letters, digits, '_', '-').") var name: String
        @Option(help: "Folder to write it in.") var folder: String = "effects"

        func run() throws {
            guard EffectInstaller.isEffectName(name) else {
                printError("moonreel: effects new: effect names are one word of letters, digits, '_' and '-', got \(name.quotedForMessage())")
                throw ExitCode(Exit.usage)
            }
            let path = folder + "/" + name + ".lua"
            do {
                try EffectInstaller.writeNew(EffectTemplate.source(name: name), to: path)
            } catch {
                printError("moonreel: effects new \(name): \(firstLine(of: error))")
                throw ExitCode(Exit.failed)
            }
            print(EffectTemplate.nextSteps(name: name, path: path))
        }
    }

    struct Preview: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Render an effect applied with its example over a test pattern (or a file of yours): a still (.png, .jpg, .webp) or a clip (.mp4, .mov, .gif…).",
            discussion: """
            An effect returning a layer is drawn over the picture; one returning a list of filters \
            (a look) is applied to it. The example's renderSize, if the effect takes one, becomes \
            the preview's size.
              moonreel effects preview watermark -o watermark.png
              moonreel effects preview lowerThird --at 2 --with '{ name = "Ann Lee" }' --over talk.mp4 -o ann.mp4
            """,
            version: moonreelVersion)
        @Argument(help: "The effect, as require \"effects.NAME\" finds it from here.", completion: .custom(effectNames)) var name: String
        @Option(name: [.short, .customLong("output")], help: "The still or clip to write.", completion: .file()) var output: String
        @Option(help: "Seconds into the picture for a still (default: the effect's previewAt, else 1).") var at: Double?
        @Option(help: ArgumentHelp("The picture's size, WIDTHxHEIGHT.", valueName: "WxH")) var size = "1280x720"
        @Option(help: ArgumentHelp("Options over the effect's example, as a Lua table of plain values: '{ text = \"Hi\" }'.", valueName: "table"))
        var with: String?
        @Option(help: "A video or image to draw over instead of the generated test pattern (8 s, colour bars and a counter).", completion: .file())
        var over: String?
        @OptionGroup var common: CommonOptions

        func run() throws {
            let (width, height) = try Cues.Check.dimensions(size)
            if let at { guard at.isFinite, at >= 0 else { throw ValidationError("--at must be a number of seconds from 0, got \(at)") } }
            let folder: String
            do { folder = try Paths.makeTemporaryFolder(prefix: "moonreel-preview") } catch {
                printError("moonreel: effects preview: \(error)")
                throw ExitCode(Exit.failed)
            }
            defer { Paths.removeFolder(folder) }
            var background = over ?? folder + "/test-pattern.mp4"
            if over == nil {
                do { try TestPattern.write(to: background, seconds: 8, width: width, height: height) } catch {
                    printError("moonreel: effects preview: \(error)")
                    throw ExitCode(Exit.failed)
                }
            } else {
                background = Paths.absolute(background)
            }
            var session = ScriptSession(common)
            session.effectSearchPath = EffectSearchPath.seenFromCurrentFolder()
            try session.runBundled(EffectPreview.source, name: "effects preview",
                                   arguments: [name, background, output, at.map { String($0) } ?? "", String(width), String(height), with ?? ""])
        }
    }

    struct Gallery: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a page of every effect found (its still over the test pattern, parameters and the Lua that calls it): index.html, which works offline, README.md and a picture per effect.",
            version: moonreelVersion)
        @Option(name: [.short, .customLong("output")], help: "The folder to write into (made if missing).", completion: .directory) var output: String
        @Option(help: ArgumentHelp("The size of each still, WIDTHxHEIGHT.", valueName: "WxH")) var size = "640x360"
        @OptionGroup var common: CommonOptions

        func run() throws {
            let (width, height) = try Cues.Check.dimensions(size)
            let listings = try makeEffectsHost().scripts.listEffects()
            let pages = [output + "/index.html", output + "/README.md"]
            let pictures = listings.map { output + "/" + EffectsGallery.pictureName(for: $0.module) }
            if !common.overwrite, let taken = (pages + pictures).first(where: { EffectInstaller.kindOf($0) != .missing }) {
                printError("moonreel: effects gallery: \(taken) already exists; pass --overwrite to replace what the gallery writes there")
                throw ExitCode(Exit.failed)
            }
            let pattern: String
            do {
                try Paths.makeFolders(output)
                let folder = try Paths.makeTemporaryFolder(prefix: "moonreel-gallery")
                pattern = folder + "/test-pattern.mp4"
                try TestPattern.write(to: pattern, seconds: 8, width: width, height: height)
            } catch {
                printError("moonreel: effects gallery: \(error)")
                throw ExitCode(Exit.failed)
            }
            defer { Paths.removeFolder(Paths.parent(of: pattern)) }
            var entries: [EffectsGallery.Entry] = []
            var failures: [String] = []
            for (listing, picture) in zip(listings, pictures) {
                switch listing.info {
                case .failure(let error):
                    failures.append("\(listing.module) (\(listing.location)) cannot be loaded: \(error.message.oneLine)")
                case .success(let info):
                    do {
                        let drawn = try Self.draw(info.module, over: pattern, into: picture, width: width, height: height, common: common)
                        entries.append(.init(info: info, picture: Paths.name(of: picture), kind: drawn.kind, options: drawn.options, at: drawn.at, problem: nil))
                    } catch {
                        let problem = firstLine(of: error)
                        failures.append("\(info.module) not drawn: \(problem)")
                        entries.append(.init(info: info, picture: nil, kind: "layer", options: "{}", at: 0, problem: problem))
                    }
                }
            }
            let gallery = EffectsGallery(entries: entries)
            do {
                try Paths.writeFile(gallery.html(), to: pages[0], replacing: common.overwrite)
                try Paths.writeFile(gallery.markdown(), to: pages[1], replacing: common.overwrite)
            } catch {
                printError("moonreel: effects gallery: \(error)")
                throw ExitCode(Exit.failed)
            }
            for failure in failures { printError("moonreel: effects gallery: warning: \(failure)") }
            if !common.quiet { printError("moonreel: effects gallery: \(entries.count - failures.count) effects drawn; open \(pages[0])") }
            if !failures.isEmpty { throw ExitCode(Exit.failed) }
        }

        /// Draws one effect's still in a host of its own (one effect's failure or memory is
        /// not the next one's).
        static func draw(_ module: String, over pattern: String, into picture: String, width: Int, height: Int,
                         common: CommonOptions) throws -> EffectPreview {
            let host = try MoonreelHost(limits: common.limits, effectSearchPath: .seenFromCurrentFolder())
            host.overwriteOutputs = common.overwrite
            return try host.previewEffect(module, over: pattern, to: picture, width: width, height: height)
        }
    }

}

extension EffectSearchPath {
    /// Seen as by a script in the current folder: its effects/ folder comes first.
    static func seenFromCurrentFolder() -> EffectSearchPath {
        var searchPath = EffectSearchPath.fromEnvironment()
        searchPath.scriptDirectory = Paths.workingFolder ?? "."
        return searchPath
    }
}

/// Effect names for shell completion (found, not loaded).
@Sendable func effectNames(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
    ((try? makeEffectsHost())?.scripts.effectNames() ?? []).filter { $0.hasPrefix(prefix) }
}

func userEffectsFolder(for command: String) throws -> String {
    guard let folder = EffectSearchPath.fromEnvironment().userEffectsDirectory else {
        printError("moonreel: \(command): neither XDG_DATA_HOME nor HOME is set, so there is no effects folder")
        throw ExitCode(Exit.failed)
    }
    return folder
}

/// MAJOR[.MINOR[.PATCH]][-PRERELEASE], compared as semantic versions with missing parts 0
/// ("1" = "1.0" = "1.0.0"; a pre-release sorts before its release): one rule for the
/// bundled effects ("1.0") and installed ones.
struct EffectVersion: Comparable {
    let numbers: [Int]
    let prerelease: String?

    init?(_ text: String) {
        let parts = text.split(separator: "-", maxSplits: 1)
        guard let core = parts.first else { return nil }
        let numbers = core.split(separator: ".", omittingEmptySubsequences: false).map { Int($0) }
        guard (1...3).contains(numbers.count), numbers.allSatisfy({ ($0 ?? -1) >= 0 }) else { return nil }
        self.numbers = numbers.compactMap { $0 } + Array(repeating: 0, count: 3 - numbers.count)
        prerelease = parts.count > 1 ? String(parts[1]) : nil
    }

    static func < (a: EffectVersion, b: EffectVersion) -> Bool {
        if a.numbers != b.numbers { return a.numbers.lexicographicallyPrecedes(b.numbers) }
        switch (a.prerelease, b.prerelease) {
        case (nil, _): return false
        case (_, nil): return true
        case let (x?, y?): return x < y
        }
    }
}

/// What `effects new` writes.
enum EffectTemplate {
    /// The template (Bundled/templates/effect.lua) with NAME filled in.
    static func source(name: String) -> String {
        String(decoding: PackageResources.effect_lua, as: UTF8.self).replacingAll("{{name}}", with: name)
    }

    static func nextSteps(name: String, path: String) -> String {
        """
        wrote \(path)
        try it on moonreel's test pattern:
          moonreel demo --output demo                      # makes demo/test-pattern.mp4
          cat > try-\(name).lua <<'LUA'
          local asset = av.asset(arg[1])
          local comp = av.composition()
          comp:insertTimeRange(av.range(0, 4), asset, 0)
          local vc = av.videoComposition(comp)
          local parent, video = av.layer{ frame = { 0, 0, 1280, 720 } }, av.layer{ frame = { 0, 0, 1280, 720 } }
          parent:addSublayer(video)
          parent:addSublayer(require("effects.\(name)"){ renderSize = { 1280, 720 } })
          vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
          local session = av.exportSession(comp, "MediumQuality")
          session.videoComposition, session.outputURL = vc, arg[2]
          assert(session:export())
          LUA
          moonreel run try-\(name).lua demo/test-pattern.mp4 try-\(name).mp4
        then `moonreel effects install \(path)` makes it available to every script.
        """
    }
}

func makeEffectsHost() throws -> MoonreelHost {
    FFmpegLog.capture()
    do {
        return try MoonreelHost(effectSearchPath: .seenFromCurrentFolder())
    } catch {
        printError("moonreel: \(error)")
        throw ExitCode(Exit.failed)
    }
}

/// The message without the list of every place searched that module-not-found errors add.
func firstLine(of error: Error) -> String {
    let message = ((error as? ScriptError)?.message ?? "\(error)").oneLine
    guard let places = message.firstRange(of: " not found: ") else { return message }
    return String(message[..<places.lowerBound]) + " not found"
}

/// How `effects list` and `effects info` show an effect.
enum EffectText {
    /// What an effect says of itself, each field shown as one line with its control
    /// characters escaped: a stranger's metadata must not drive the terminal (clear it, set
    /// its title, or return the cursor to write "MIT" over "GPL-3.0").
    static func describe(_ info: EffectInfo, detailed: Bool) -> String {
        let title = [info.module, info.version].filter { !$0.isEmpty }.map(\.oneLine).joined(separator: " ")
        var lines = [info.description.isEmpty ? title : "\(title): \(info.description.oneLine)"]
        if detailed {
            if !info.author.isEmpty { lines.append("  author: \(info.author.oneLine)") }
            if !info.license.isEmpty { lines.append("  license: \(info.license.oneLine)") }
        }
        lines.append("  found: \(info.location.oneLine)")
        if info.parameters.isEmpty {
            lines.append("  parameters: none")
        } else {
            lines.append("  parameters:")
            let rows = info.parameters.map { parameter in [parameter.name, parameter.type, constraint(of: parameter), parameter.doc].map(\.oneLine) }
            let widths = (0..<3).map { column in rows.map { $0[column].count }.max() ?? 0 }
            for row in rows {
                let padded = (0..<3).map { row[$0] + String(repeating: " ", count: widths[$0] - row[$0].count) }
                lines.append("    " + (padded + [row[3]]).joined(separator: "  ").trimmingTrailingSpaces)
            }
        }
        if detailed {
            let required = info.parameters.filter(\.required).map { "\($0.name) = …" }.joined(separator: ", ")
            lines.append("  use:")
            lines.append("    local \(info.module) = require \"effects.\(info.module)\"")
            lines.append("    \(info.module){" + (required.isEmpty ? "}" : " \(required) }"))
        }
        return lines.joined(separator: "\n")
    }

    /// "required", "default 48", "1…1000", "bottom|middle|top", joined.
    static func constraint(of parameter: EffectParameter) -> String {
        var parts: [String] = []
        if parameter.required { parts.append("required") }
        if let value = parameter.defaultValue { parts.append("default \(value)") }
        if parameter.minimum != nil || parameter.maximum != nil {
            parts.append("\(parameter.minimum.map(number) ?? "")…\(parameter.maximum.map(number) ?? "")")
        }
        if !parameter.choices.isEmpty { parts.append(parameter.choices.joined(separator: "|")) }
        return parts.joined(separator: ", ")
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

private extension String {
    var trimmingTrailingSpaces: String {
        String(reversed().drop { $0 == " " }.reversed())
    }
}

/// Copies an effect into the user's effects folder: never through a symlink, never onto an
/// installed effect unless asked, and never half-copied (it is assembled under a temporary
/// name in the same folder, synced, and renamed into place).
struct EffectInstaller {
    let folder: String

    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// Refuses symlinks and special files anywhere inside an effect folder: what is
    /// installed must be exactly what was checked.
    static func refuseLinks(in path: String) throws {
        if kindOf(path) == .symlink {
            throw Refusal(description: "\(path) is a symbolic link; effects are installed as plain files and folders: install what it leads to")
        }
        guard kindOf(path) == .directory else { return }
        for entry in FileSystem.entries(of: path) {
            let child = path + "/" + entry
            switch kindOf(child) {
            case .file: continue
            case .directory: try refuseLinks(in: child)
            case .symlink: throw Refusal(description: "\(child) is a symbolic link; effects are installed as plain files and folders")
            case .other, .missing: throw Refusal(description: "\(child) is not a plain file or folder")
            }
        }
    }

    /// Installs `source` as `module` and returns where it now is.
    func install(_ source: String, as module: String, overwrite: Bool) throws -> String {
        try makeDirectories(folder)
        let isFolder = Self.kindOf(source) == .directory
        let target = folder + "/" + module + (isFolder ? "" : ".lua")
        // Either form of the same name is the same effect to `require`.
        let installed = [folder + "/" + module + ".lua", folder + "/" + module].filter { Self.kindOf($0) != .missing }
        if !installed.isEmpty && !overwrite {
            throw Refusal(description: "an effect \"\(module)\" is already installed at \(installed[0]); pass --overwrite to replace it")
        }
        let temporary = folder + "/.\(module).installing-\(getpid())"
        do {
            try copy(source, to: temporary)
            var retired: [String] = []
            for (index, old) in installed.enumerated() {
                let aside = folder + "/.\(module).replaced-\(getpid())-\(index)"
                guard rename(old, aside) == 0 else { throw systemError("cannot move aside \(old)") }
                retired.append(aside)
            }
            if installed.isEmpty {
                // Nothing there when checked: the move fails if something appeared since.
                try OutputFiles.moveIntoPlace(temporary, to: target)
            } else {
                guard rename(temporary, target) == 0 else { throw systemError("cannot rename into \(target)") }
            }
            try? Paths.sync(folder: folder)
            retired.forEach(EffectInstaller.remove)
        } catch {
            EffectInstaller.remove(temporary)
            throw error
        }
        return target
    }

    private func copy(_ source: String, to destination: String) throws {
        if Self.kindOf(source) == .directory {
            guard mkdir(destination, 0o755) == 0 else { throw systemError("cannot create \(destination)") }
            for entry in FileSystem.entries(of: source) {
                try copy(source + "/" + entry, to: destination + "/" + entry)
            }
            try? Paths.sync(folder: destination)
            return
        }
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw systemError("cannot read \(source)") }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw systemError("cannot create \(destination)") }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(input, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw systemError("cannot read \(source)") }
            if count == 0 { break }
            var written = 0
            while written < count {
                let step = buffer[written..<count].withUnsafeBytes { write(output, $0.baseAddress, $0.count) }
                guard step > 0 else { throw systemError("cannot write \(destination)") }
                written += step
            }
        }
        guard fsync(output) == 0 else { throw systemError("cannot sync \(destination)") }
    }

    /// Removes the effect installed as `module` (a file or a folder); returns its path.
    func remove(_ module: String) throws -> String {
        guard Self.isEffectName(module) else {
            throw Refusal(description: "effect names are words (letters, digits, '_', '-'), never paths")
        }
        let installed = [folder + "/" + module + ".lua", folder + "/" + module].filter { Self.kindOf($0) != .missing }
        guard let path = installed.first else {
            throw Refusal(description: "no effect \"\(module)\" is installed in \(folder) (bundled effects and a script's own effects/ folder are not removed here)")
        }
        let aside = folder + "/.\(module).removing-\(getpid())"
        guard rename(path, aside) == 0 else { throw systemError("cannot remove \(path)") }
        try? Paths.sync(folder: folder)
        EffectInstaller.remove(aside)
        return path
    }

    /// One word of letters, digits, '_' and '-': a name, never a path.
    static func isEffectName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
        }
    }

    /// Writes a new effect file, never over an existing one.
    static func writeNew(_ text: String, to path: String) throws {
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        if !directory.isEmpty { try EffectInstaller(folder: directory).makeDirectories(directory) }
        let file = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard file >= 0 else {
            throw Refusal(description: errno == EEXIST ? "\(path) already exists; choose another name or folder"
                                                        : "cannot create \(path): \(systemMessage(errno))")
        }
        defer { close(file) }
        var bytes = text
        let complete = bytes.withUTF8 { write(file, $0.baseAddress, $0.count) == $0.count }
        guard complete else { throw Refusal(description: "cannot write \(path): \(systemMessage(errno))") }
    }

    private func makeDirectories(_ path: String) throws {
        do { try Paths.makeFolders(path) } catch { throw Refusal(description: "\(error)") }
    }

    private func systemError(_ what: String) -> Refusal {
        Refusal(description: "\(what): \(systemMessage(errno))")
    }

    /// What is at `path` itself: symlinks are reported, not followed.
    static func kindOf(_ path: String) -> FileSystem.Kind { FileSystem.kind(of: path, followingSymlinks: false) }

    /// Removes a file, or a folder and everything in it (what cannot be removed stays).
    static func remove(_ path: String) {
        if kindOf(path) == .directory {
            for entry in FileSystem.entries(of: path) { remove(path + "/" + entry) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}
