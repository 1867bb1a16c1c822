import ArgumentParser
import Foundation
import MoonreelEngine
import MoonreelPlatform
import MoonreelScriptHost
import MoonreelBindings

extension Effects {
    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Install an effect (NAME.lua, a NAME folder with init.lua, a .moonfx package or git+URL@TAG) after applying it once in the sandbox (its example, else its defaults) and drawing one frame of it.",
            discussion: """
            It goes into this folder's effects/ (which `require` searches first) and is recorded in effects.lock \
            when an effects.lock is here or with --project; else into your effects folder. A package's files must \
            match its manifest's SHA-256s; what it requires (requires = { moonreel = ">=1.0", effects = { b = "^1.2" } }) \
            must be installed or bundled at a matching version.
              moonreel effects install caption-1.0.0.moonfx --project
              moonreel effects install git+https://example.com/fade.git@v1.0.0
              moonreel effects install --frozen          # exactly what effects.lock lists
            """,
            version: moonreelVersion)
        @Argument(help: "The effect file or folder, a .moonfx package, or git+URL@TAG / git+URL@COMMIT.",
                  completion: .file(extensions: ["lua", "moonfx"])) var source: String?
        @Flag(help: "Replace an installed effect of the same name.") var overwrite = false
        @Flag(help: "Also when that installs an older version, hides a bundled effect of the same name, breaks what another installed effect requires, or cannot be tried (no example).")
        var force = false
        @Flag(help: "Install into this folder's effects/ and record it in effects.lock (made if missing).") var project = false
        @Flag(help: "Install exactly what effects.lock lists, from its recorded sources; refuse any whose SHA-256 differs.") var frozen = false

        func run() throws {
            if frozen, source != nil { throw ValidationError("--frozen installs what effects.lock lists; give no SOURCE with it") }
            if !frozen, source == nil { throw ValidationError("name what to install: NAME.lua, a NAME folder, a .moonfx package or git+URL@TAG (or --frozen)") }
            let host = try makeEffectsHost()
            let here = Paths.workingFolder ?? "."
            let label = "effects install" + (source.map { " \($0)" } ?? " --frozen")
            do {
                let lock = try EffectLock.read(in: here)
                let inProject = frozen || project || lock != nil
                let folder = inProject ? here + "/effects" : try userEffectsFolder(for: "effects install")
                let installer = EffectPackageInstaller(host: host, folder: folder, overwrite: overwrite || frozen, force: force, allowDowngrade: frozen)
                let lines = try withScratchFolder { scratch in
                    if frozen {
                        return try installer.installLocked(try lock ?? EffectLock.existing(in: here), scratch: scratch)
                    }
                    let staged = try installer.stage(source ?? "", scratch: scratch)
                    var lines = try installer.install(staged)
                    if inProject {
                        var updated = lock ?? EffectLock()
                        updated.record(.init(name: staged.info.module, version: staged.info.version, source: staged.source, sha256: staged.sha256))
                        try updated.write(in: here)
                        lines.append("  recorded in \(EffectLock.fileName) (sha256 \(staged.sha256.prefix(16))…)")
                    }
                    return lines
                }
                print(lines.joined(separator: "\n"))
            } catch let exit as ExitCode {
                throw exit
            } catch {
                printError("moonreel: \(label): \(firstLine(of: error))")
                throw ExitCode(Exit.failed)
            }
        }
    }

    struct Pack: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write an effect (NAME.lua or a NAME folder) as one package to share: NAME-VERSION.moonfx, with a manifest of its name, version, licence, author, requirements and every file's SHA-256.",
            discussion: "The package is a ustar archive (`tar tf` lists it) whose first entry is moonfx.json.",
            version: moonreelVersion)
        @Argument(help: "The effect file or folder.", completion: .file(extensions: ["lua"])) var path: String
        @Option(name: [.short, .customLong("output")], help: "The package to write (default: NAME-VERSION.moonfx here).", completion: .file(extensions: ["moonfx"]))
        var output: String?
        @Flag(help: "Replace an existing package file (only once the new one is complete).") var overwrite = false

        func run() throws {
            let host = try makeEffectsHost()
            do {
                let source = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
                try EffectInstaller.refuseLinks(in: source)
                let info = try host.scripts.checkEffect(atPath: source)
                let package = try EffectPackage.make(from: source, info: info)
                let target = output ?? "\(info.module)-\(info.version).moonfx"
                if !overwrite, EffectInstaller.kindOf(target) != .missing {
                    throw EffectInstaller.Refusal(description: "\(target) already exists; pass --overwrite to replace it, or -o another name")
                }
                let bytes = try package.archive()
                do { try Paths.writeFile(bytes, to: target, replacing: overwrite) } catch {
                    throw EffectInstaller.Refusal(description: "\(error)")
                }
                let count = package.manifest.files.count
                print("packed effect \"\(info.module)\" \(info.version.oneLine) (\(count) file\(count == 1 ? "" : "s"), sha256 \(try FileDigest.sha256(of: bytes))) into \(target)")
            } catch {
                printError("moonreel: effects pack \(path): \(firstLine(of: error))")
                throw ExitCode(Exit.failed)
            }
        }
    }

    struct Outdated: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The effects in this folder's effects.lock installed from git with a newer version tag: name, locked and latest version.",
            version: moonreelVersion)

        func run() throws {
            let here = Paths.workingFolder ?? "."
            do {
                let lock = try EffectLock.existing(in: here)
                var rows: [[String]] = []
                for entry in lock.effects where entry.source.hasPrefix("git+") {
                    let (url, _) = try GitSource.parse(entry.source)
                    guard let locked = EffectVersion(entry.version), let latest = try GitSource.newerVersionTags(of: url, than: locked).first else { continue }
                    rows.append([entry.name, entry.version, latest.tag])
                }
                guard !rows.isEmpty else {
                    print("every effect in \(EffectLock.fileName) from git is at its newest version tag")
                    return
                }
                let table = [["name", "locked", "latest"]] + rows
                let widths = (0..<2).map { column in table.map { $0[column].count }.max() ?? 0 }
                for row in table {
                    print((0..<2).map { row[$0] + String(repeating: " ", count: widths[$0] - row[$0].count) }.joined(separator: "  ") + "  " + row[2])
                }
            } catch {
                printError("moonreel: effects outdated: \(firstLine(of: error))")
                throw ExitCode(Exit.failed)
            }
        }
    }

    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move effects installed from git (NAME, or every one in effects.lock) to their newest version tag that the other locked effects accept, updating effects.lock.",
            version: moonreelVersion)
        @Argument(help: "The effect to update (default: every one from git).", completion: .custom(effectNames)) var name: String?

        func run() throws {
            let host = try makeEffectsHost()
            let here = Paths.workingFolder ?? "."
            do {
                var lock = try EffectLock.existing(in: here)
                if let name, !lock.effects.contains(where: { $0.name == name && $0.source.hasPrefix("git+") }) {
                    throw EffectInstaller.Refusal(description: "\(EffectLock.fileName) has no effect \"\(name)\" installed from git; `moonreel effects outdated` lists what can be updated")
                }
                let installer = EffectPackageInstaller(host: host, folder: here + "/effects", overwrite: true)
                for entry in lock.effects where entry.source.hasPrefix("git+") && (name == nil || entry.name == name) {
                    let (url, _) = try GitSource.parse(entry.source)
                    // What the other locked effects accept of this one (one that cannot be read stops the update).
                    let ranges = try lock.effects.filter { $0.name != entry.name }.compactMap { other in
                        try host.scripts.effectInfo(named: other.name).requiresEffects[entry.name].flatMap(EffectVersionRange.init)
                    }
                    guard let locked = EffectVersion(entry.version),
                          let newest = try GitSource.newerVersionTags(of: url, than: locked).first(where: { tag in ranges.allSatisfy { $0.contains(tag.version) } }) else {
                        print("\(entry.name) \(entry.version.oneLine): no newer version tag it can move to")
                        continue
                    }
                    let source = "git+\(url)@\(newest.tag)"
                    let lines = try withScratchFolder { scratch in
                        let staged = try installer.stage(source, scratch: scratch)
                        let lines = try installer.install(staged)
                        lock.record(.init(name: staged.info.module, version: staged.info.version, source: source, sha256: staged.sha256))
                        try lock.write(in: here)
                        return lines
                    }
                    print("updated \(entry.name) \(entry.version.oneLine) → \(newest.tag) in \(EffectLock.fileName)")
                    print(lines.joined(separator: "\n"))
                }
            } catch {
                printError("moonreel: effects update\(name.map { " \($0)" } ?? ""): \(firstLine(of: error))")
                throw ExitCode(Exit.failed)
            }
        }
    }
}

extension EffectPackageInstaller {
    /// Installs every effect `lock` lists, from its source: all are fetched and checked
    /// against their recorded SHA-256 before any is installed, then installed each after
    /// the effects it requires.
    func installLocked(_ lock: EffectLock, scratch: String) throws -> [String] {
        let stage = try Self.makeFolder(scratch + "/effects")
        var fetched: [(EffectLock.Entry, Fetched)] = []
        for (index, entry) in lock.effects.enumerated() {
            do {
                fetched.append((entry, try fetch(entry.source, into: stage, work: try Self.makeFolder(scratch + "/work-\(index)"))))
            } catch {
                throw EffectInstaller.Refusal(description: "\(EffectLock.fileName): \"\(entry.name)\" from \(entry.source): \(firstLine(of: error))")
            }
        }
        // Loaded only once all are staged: one may require another as it loads.
        var staged: [Staged] = []
        for (entry, item) in fetched {
            let loaded: Staged
            do { loaded = try load(item) } catch {
                throw EffectInstaller.Refusal(description: "\(EffectLock.fileName): \"\(entry.name)\" from \(entry.source): \(firstLine(of: error))")
            }
            guard loaded.sha256 == entry.sha256, loaded.info.module == entry.name, loaded.info.version == entry.version else {
                throw EffectInstaller.Refusal(description: "\(EffectLock.fileName): \"\(entry.name)\" from \(entry.source) has SHA-256 \(loaded.sha256.prefix(16))… (\(loaded.info.module) \(loaded.info.version.oneLine)), "
                                              + "the lock records \(entry.sha256.prefix(16))… (\(entry.name) \(entry.version.oneLine)): it changed since it was locked; nothing was installed")
            }
            staged.append(loaded)
        }
        var lines: [String] = []
        for item in Self.dependenciesFirst(staged) { lines += try install(item) }
        lines.append("installed the \(staged.count) effect\(staged.count == 1 ? "" : "s") \(EffectLock.fileName) lists, each matching its SHA-256")
        return lines
    }
}

/// Runs `body` with a new temporary folder, removed afterwards.
func withScratchFolder<T>(_ body: (String) throws -> T) throws -> T {
    let scratch: String
    do { scratch = try Paths.makeTemporaryFolder(prefix: "moonreel-install") } catch {
        throw EffectInstaller.Refusal(description: "\(error)")
    }
    defer { EffectInstaller.remove(scratch) }
    return try body(scratch)
}

/// `effects list --json`: one object per effect found.
struct EffectListingJSON: Encodable {
    var name: String
    var version: String?
    var description: String?
    var author: String?
    var license: String?
    var location: String
    var shadowsBundled: Bool?
    var requires: EffectPackage.Manifest.Requires?
    var parameters: [Parameter]?
    var error: String?

    struct Parameter: Encodable {
        var name: String
        var type: String
        var required: Bool
        var `default`: String?
        var min: Double?
        var max: Double?
        var choices: [String]?
        var doc: String
    }

    static func text(_ listings: [EffectListing], bundled: [String: String]) throws -> String {
        let entries = listings.map { listing -> EffectListingJSON in
            switch listing.info {
            case .failure(let error):
                return EffectListingJSON(name: listing.module, location: listing.location, error: error.message.oneLine)
            case .success(let info):
                return EffectListingJSON(
                    name: info.module, version: info.version, description: info.description, author: info.author, license: info.license,
                    location: info.location, shadowsBundled: info.location != "bundled" && bundled[info.module] != nil,
                    requires: .init(moonreel: info.requiresMoonreel, effects: info.requiresEffects),
                    parameters: info.parameters.map { parameter in
                        Parameter(name: parameter.name, type: parameter.type, required: parameter.required, default: parameter.defaultValue,
                                  min: parameter.minimum, max: parameter.maximum, choices: parameter.choices.isEmpty ? nil : parameter.choices,
                                  doc: parameter.doc)
                    })
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(entries), as: UTF8.self)
    }
}
