import ArgumentParser
import MoonreelKit
#if canImport(Glibc)
import Glibc
#endif

struct Effects: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The reusable effect scripts `require \"effects.NAME\"` can find, and installing new ones.",
        discussion: """
            Effects are searched in the script's own effects/ folder, each MOONREEL_PATH entry's \
            effects/ folder, $XDG_DATA_HOME/moonreel/effects (default ~/.local/share/moonreel/effects) \
            and the effects bundled with Moonreel.
            """,
        version: moonreelVersion,
        subcommands: [List.self, Info.self, Install.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every effect found, with its parameters.", version: moonreelVersion)

        func run() throws {
            let host = try makeEffectsHost()
            let listings = host.scripts.listEffects()
            var text: [String] = []
            for listing in listings {
                switch listing.info {
                case .success(let info): text.append(EffectText.describe(info, detailed: false))
                case .failure(let error): text.append("\(listing.module) (cannot be loaded)\n  found: \(listing.location)\n  error: \(error.message)")
                }
            }
            print(text.isEmpty ? "no effects found" : text.joined(separator: "\n\n"))
        }
    }

    struct Info: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One effect's metadata, parameters and how to call it.", version: moonreelVersion)
        @Argument(help: "The effect's name, as in require \"effects.NAME\".") var name: String

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

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy an effect (NAME.lua, or a NAME folder with init.lua) into your effects folder after checking it loads in the sandbox.",
            version: moonreelVersion)
        @Argument(help: "The effect file or folder.") var path: String
        @Flag(help: "Replace an installed effect of the same name.") var overwrite = false

        func run() throws {
            let host = try makeEffectsHost()
            guard let folder = EffectSearchPath.fromEnvironment().userEffectsDirectory else {
                printError("moonreel: effects install: neither XDG_DATA_HOME nor HOME is set, so there is no effects folder")
                throw ExitCode(Exit.failed)
            }
            do {
                let source = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
                try EffectInstaller.refuseLinks(in: source)
                let info = try host.scripts.checkEffect(atPath: source)
                let installed = try EffectInstaller(folder: folder).install(source, as: info.module, overwrite: overwrite)
                print("installed effect \"\(info.module)\" \(info.version) at \(installed)")
            } catch {
                printError("moonreel: effects install \(path): \(firstLine(of: error))")
                throw ExitCode(Exit.failed)
            }
        }
    }
}

private func makeEffectsHost() throws -> MoonreelHost {
    FFmpegLog.capture()
    do {
        return try MoonreelHost()
    } catch {
        printError("moonreel: \(error)")
        throw ExitCode(Exit.failed)
    }
}

/// The message without the list of every place searched that module-not-found errors add.
private func firstLine(of error: Error) -> String {
    let message = ((error as? LuaError)?.message ?? "\(error)").oneLine
    guard let places = message.firstRange(of: " not found: ") else { return message }
    return String(message[..<places.lowerBound]) + " not found"
}

/// How `effects list` and `effects info` show an effect.
enum EffectText {
    static func describe(_ info: EffectInfo, detailed: Bool) -> String {
        let title = [info.module, info.version].filter { !$0.isEmpty }.joined(separator: " ")
        var lines = [info.description.isEmpty ? title : "\(title): \(info.description)"]
        if detailed {
            if !info.author.isEmpty { lines.append("  author: \(info.author)") }
            if !info.license.isEmpty { lines.append("  license: \(info.license)") }
        }
        lines.append("  found: \(info.location)")
        if info.parameters.isEmpty {
            lines.append("  parameters: none")
        } else {
            lines.append("  parameters:")
            let rows = info.parameters.map { parameter in [parameter.name, parameter.type, constraint(of: parameter), parameter.doc] }
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

    /// "required", "default 48", "1…1000", joined.
    private static func constraint(of parameter: EffectParameter) -> String {
        var parts: [String] = []
        if parameter.required { parts.append("required") }
        if let value = parameter.defaultValue { parts.append("default \(value)") }
        if parameter.minimum != nil || parameter.maximum != nil {
            parts.append("\(parameter.minimum.map(number) ?? "")…\(parameter.maximum.map(number) ?? "")")
        }
        return parts.joined(separator: ", ")
    }

    private static func number(_ value: Double) -> String {
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
            syncDirectory(folder)
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
            syncDirectory(destination)
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

    private func makeDirectories(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST { throw systemError("cannot create \(prefix)") }
        }
    }

    private func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    private func systemError(_ what: String) -> Refusal {
        Refusal(description: "\(what): \(String(cString: strerror(errno)))")
    }

    /// What is at `path` itself: symlinks are reported, not followed.
    static func kindOf(_ path: String) -> FileSystem.Kind { FileSystem.kind(of: path, followingSymlinks: false) }

    private static func remove(_ path: String) {
        if kindOf(path) == .directory {
            for entry in FileSystem.entries(of: path) { remove(path + "/" + entry) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}
