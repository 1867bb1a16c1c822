import Foundation
import MoonreelFarm
import MoonreelBindings
import MoonreelEngine
import MoonreelPlatform
import MoonreelScriptHost
#if canImport(Glibc)
import Glibc
#endif

/// A set of versions an effect accepts of another (or of Moonreel): comparators joined by
/// spaces or commas, all of which must hold: `>=1.2`, `<2`, `>1`, `<=1.4`, `=1.2.3` or a bare
/// `1.2.3` (exactly that), `^1.2` (1.2 up to 2, not 2; `^0.3`: 0.3 up to 0.4), `~1.2` (1.2 up
/// to 1.3), `*` (any).
struct EffectVersionRange {
    let text: String
    private let tests: [(EffectVersion) -> Bool]

    init?(_ text: String) {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "," })
        guard !words.isEmpty else { return nil }
        var tests: [(EffectVersion) -> Bool] = []
        for word in words where word != "*" {
            let operators = [">=", "<=", ">", "<", "=", "^", "~"]
            let op = operators.first { word.hasPrefix($0) } ?? "="
            guard let version = EffectVersion(String(word.dropFirst(word.hasPrefix(op) ? op.count : 0))) else { return nil }
            let n = version.numbers
            switch op {
            case ">=": tests.append({ $0 >= version })
            case "<=": tests.append({ $0 <= version })
            case ">": tests.append({ $0 > version })
            case "<": tests.append({ $0 < version })
            case "^", "~":
                let next = op == "~" ? [n[0], n[1] + 1, 0] : n[0] > 0 ? [n[0] + 1, 0, 0] : n[1] > 0 ? [0, n[1] + 1, 0] : [0, 0, n[2] + 1]
                // Below the next release, and not its pre-releases: ^1.0 does not take 2.0.0-beta.
                tests.append({ $0 >= version && $0.numbers.lexicographicallyPrecedes(next) })
            default: tests.append({ $0 == version })
            }
        }
        self.text = text
        self.tests = tests
    }

    func contains(_ version: EffectVersion) -> Bool { tests.allSatisfy { $0(version) } }
}

/// What an effect declares it needs (`requires = { moonreel = ">=1.0", effects = { b = "^1.2" } }`),
/// checked against this Moonreel and the effects `require` finds, each failure one line.
enum EffectRequirements {
    /// Refuses a range that does not parse, at pack and install time.
    static func checkRanges(of info: EffectInfo) throws {
        let ranges = [("Moonreel", info.requiresMoonreel)].filter { !$0.1.isEmpty } + info.requiresEffects.sorted { $0.key < $1.key }
        for (name, range) in ranges where EffectVersionRange(range) == nil {
            throw EffectInstaller.Refusal(description: "it requires \(name) \(range.quotedForMessage()), which is not a version range; "
                                          + "write one such as \">=1.2\", \"^1.2\" or \">=1.0 <2\"")
        }
    }

    /// Refuses `info` unless this Moonreel and every effect it requires (found as
    /// `require` would find it, bundled ones too) are at versions it accepts.
    static func check(_ info: EffectInfo, host: MoonreelHost) throws {
        try checkRanges(of: info)
        if let range = EffectVersionRange(info.requiresMoonreel), let current = EffectVersion(moonreelVersion), !range.contains(current) {
            throw EffectInstaller.Refusal(description: "it requires Moonreel \(range.text.oneLine), and this is Moonreel \(moonreelVersion); update Moonreel or install a version of \"\(info.module)\" made for this one")
        }
        for (name, text) in info.requiresEffects.sorted(by: { $0.key < $1.key }) {
            guard let range = EffectVersionRange(text) else { continue }
            let found: EffectInfo
            do { found = try host.scripts.effectInfo(named: name) } catch {
                throw EffectInstaller.Refusal(description: "it requires the effect \"\(name)\" \(text.oneLine), which is not installed (nor bundled); install \(name) first")
            }
            guard let version = EffectVersion(found.version), range.contains(version) else {
                throw EffectInstaller.Refusal(description: "it requires the effect \"\(name)\" \(text.oneLine), but \(name) \(found.version.oneLine) is installed (\(found.location.oneLine)); install a \(name) matching \(text.oneLine) first")
            }
        }
    }

    /// Refuses installing `module` at `version` when an effect in `folder` requires a
    /// version of it that this is not.
    static func checkDependents(of module: String, version: String, in folder: String, host: MoonreelHost) throws {
        guard let new = EffectVersion(version) else { return }
        for listing in host.scripts.listEffects() where listing.location.hasPrefix(folder + "/") {
            guard case .success(let other) = listing.info, other.module != module, let text = other.requiresEffects[module],
                  let range = EffectVersionRange(text), !range.contains(new) else { continue }
            throw EffectInstaller.Refusal(description: "\"\(other.module)\" \(other.version.oneLine) (\(other.location.oneLine)) requires \(module) \(text.oneLine), and this is \(module) \(version.oneLine); pass --force to install it anyway")
        }
    }
}

/// `effects.lock`: the effects a project installed, each with its version, where it came
/// from and the SHA-256 of its package (of the archive, or of the manifest of a folder or a
/// git checkout), as sorted, indented JSON (one field a line: diffs stay small).
struct EffectLock: Codable, Equatable {
    var lockVersion = 1
    var effects: [Entry] = []

    struct Entry: Codable, Equatable {
        var name: String
        var version: String
        var source: String
        var sha256: String
    }

    static let fileName = "effects.lock"

    /// The lock in `folder`, nil when there is none.
    static func read(in folder: String) throws -> EffectLock? {
        let path = folder + "/" + fileName
        guard EffectInstaller.kindOf(path) != .missing else { return nil }
        do {
            let bytes = try FileSystem.read(path, limit: 4 << 20) { size in "\(path) is \(size) bytes" }
            let lock = try JSONDecoder().decode(EffectLock.self, from: Data(bytes))
            guard lock.lockVersion == 1 else { throw EffectInstaller.Refusal(description: "lockVersion \(lock.lockVersion) is newer than this Moonreel reads") }
            return lock
        } catch {
            let reason = (error as? ScriptError)?.message ?? "\(error)"
            throw EffectInstaller.Refusal(description: "\(path) cannot be read (\(reason.oneLine.prefix(160))); fix it, or remove it and install the effects again")
        }
    }

    /// The versions the lock in `folder` records, by effect; nil without a lock. A lock that
    /// cannot be read is refused (a script must not run unlocked because its lock is damaged).
    @Sendable static func versions(in folder: String) throws -> [String: String]? {
        guard let lock = try read(in: folder) else { return nil }
        return Dictionary(lock.effects.map { ($0.name, $0.version) }, uniquingKeysWith: { first, _ in first })
    }

    /// The lock in `folder`; refused in one line when there is none.
    static func existing(in folder: String) throws -> EffectLock {
        guard let lock = try read(in: folder) else {
            throw EffectInstaller.Refusal(description: "there is no \(fileName) in \(folder); run this in the project's folder (`moonreel effects install --project SOURCE` makes one)")
        }
        return lock
    }

    /// Writes the lock whole (a temporary file beside it, renamed over it).
    func write(in folder: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var sorted = self
        sorted.effects.sort { $0.name < $1.name }
        let text = String(decoding: try encoder.encode(sorted), as: UTF8.self) + "\n"
        do { try Paths.writeFile(text, to: folder + "/" + Self.fileName, replacing: true) } catch {
            throw EffectInstaller.Refusal(description: "\(error); the effect is installed but \(Self.fileName) is not updated")
        }
    }

    mutating func record(_ entry: Entry) {
        effects.removeAll { $0.name == entry.name }
        effects.append(entry)
        effects.sort { $0.name < $1.name }
    }
}

/// `git+URL@REF` sources: cloned with the `git` program, checked out at exactly REF (a tag
/// or a commit).
enum GitSource {
    /// ("file:///srv/fade.git", "v1.0.0") from "git+file:///srv/fade.git@v1.0.0".
    static func parse(_ source: String) throws -> (url: String, ref: String) {
        let rest = source.dropFirst(4)
        guard let at = rest.lastIndex(of: "@"), at != rest.startIndex, rest.index(after: at) != rest.endIndex else {
            throw EffectInstaller.Refusal(description: "name the tag or commit to install: git+URL@TAG or git+URL@COMMIT")
        }
        let (url, ref) = (String(rest[..<at]), String(rest[rest.index(after: at)...]))
        guard !url.hasPrefix("-"), !ref.hasPrefix("-"), !ref.contains(where: \.isWhitespace) else {
            throw EffectInstaller.Refusal(description: "\(source.quotedForMessage()) is not a git source: git+URL@TAG")
        }
        return (url, ref)
    }

    /// The effect's name: the repository's last path component without ".git".
    static func name(of url: String) -> String {
        let last = Paths.name(of: url.hasSuffix("/") ? String(url.dropLast()) : url)
        return last.hasSuffix(".git") ? String(last.dropLast(4)) : last
    }

    /// Clones `url` into `folder` and checks out `ref` exactly.
    static func checkout(_ url: String, _ ref: String, into folder: String) throws {
        // No ext:: transport: a URL must not name a command to run.
        try git(["-c", "protocol.ext.allow=never", "clone", "--quiet", "--no-checkout", "--", url, folder], doing: "cannot clone \(url)")
        let commit = try git(["-C", folder, "rev-parse", "--verify", "--quiet", ref + "^{commit}"],
                             doing: "\(url) has no tag or commit \(ref.quotedForMessage())")
        try git(["-C", folder, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", commit.trimmingCharacters(in: .whitespacesAndNewlines)],
                doing: "cannot check out \(ref) of \(url)")
    }

    /// The tags of `url` that are semantic versions newer than `locked`, newest first; a
    /// pre-release (`2.0.0-beta.1`) only when `locked` is one, as npm's latest leaves them out.
    static func newerVersionTags(of url: String, than locked: EffectVersion) throws -> [(tag: String, version: EffectVersion)] {
        try versionTags(of: url).filter { $0.version > locked && ($0.version.prerelease == nil || locked.prerelease != nil) }
    }

    /// The tags of `url` that are semantic versions (`v1.2.0` or `1.2.0`), newest first.
    static func versionTags(of url: String) throws -> [(tag: String, version: EffectVersion)] {
        let listing = try git(["ls-remote", "--tags", "--refs", "--", url], doing: "cannot list the tags of \(url)")
        let tags = listing.split(separator: "\n").compactMap { line -> (String, EffectVersion)? in
            guard let ref = line.split(separator: "\t").last, ref.hasPrefix("refs/tags/") else { return nil }
            let tag = String(ref.dropFirst("refs/tags/".count))
            return EffectVersion(tag.hasPrefix("v") ? String(tag.dropFirst()) : tag).map { (tag, $0) }
        }
        return tags.sorted { $0.1 > $1.1 }
    }

    @discardableResult
    private static func git(_ arguments: [String], doing what: String) throws -> String {
        let ended = Subprocess.runCommand("git", arguments)
        guard ended.status == 0 else {
            let reason = ended.errors.split(separator: "\n").first.map(String.init) ?? "git exited with \(ended.status)"
            throw EffectInstaller.Refusal(description: "\(what) (\(reason.oneLine))")
        }
        return ended.output
    }
}

/// Installs effects from any source `effects install` takes (a NAME.lua file, a NAME
/// folder, a .moonfx package, git+URL@REF) into `folder`: each is staged as an effect on
/// disk, loaded in the sandbox, its requirements checked, applied once with its example and
/// copied in by `EffectInstaller`.
struct EffectPackageInstaller {
    let host: MoonreelHost
    let folder: String
    var overwrite = false
    var force = false
    /// --frozen installs what the lock says, an older version too.
    var allowDowngrade = false

    /// An effect ready to check and copy.
    struct Staged {
        /// As the lock records it.
        let source: String
        /// The NAME.lua or NAME folder to install.
        let path: String
        let info: EffectInfo
        /// Of the archive, or of the manifest.
        let sha256: String
    }

    /// An effect's files put on disk, not yet loaded.
    struct Fetched {
        let source: String
        let path: String
        let kind: String
        let contents: [String: [UInt8]]
        /// The SHA-256 of a .moonfx archive, with what its manifest says.
        let archive: (sha256: String, manifest: EffectPackage.Manifest)?
    }

    /// Reads `source`, and puts the effect in `stage` (a NAME.lua file or NAME folder there,
    /// where the sandbox loads it and the effects staged beside it); a git source is cloned
    /// into `work` first.
    func fetch(_ source: String, into stage: String, work: String) throws -> Fetched {
        if source.hasPrefix("git+") {
            let (url, ref) = try GitSource.parse(source)
            let clone = work + "/clone"
            try GitSource.checkout(url, ref, into: clone)
            var contents = try EffectPackage.files(of: clone, skipping: [".git"])
            var (name, kind) = (GitSource.name(of: url), "folder")
            if contents["init.lua"] == nil {
                let scripts = contents.keys.filter { !$0.contains("/") && $0.hasSuffix(".lua") }
                guard scripts.count == 1, let script = scripts.first else {
                    throw EffectInstaller.Refusal(description: "\(url) at \(ref) has no init.lua at its root (nor a single NAME.lua); it is not an effect")
                }
                (name, kind) = (String(script.dropLast(4)), "file")
                contents = [script: contents[script] ?? []]
            }
            guard EffectInstaller.isEffectName(name) else {
                throw EffectInstaller.Refusal(description: "\(url) names no effect (\(name.quotedForMessage()) is not a name of letters, digits, '_', '-')")
            }
            let path = try EffectPackage.write(contents, name: name, kind: kind, into: stage)
            return Fetched(source: source, path: path, kind: kind, contents: contents, archive: nil)
        }
        if source.hasSuffix(".moonfx") {
            let bytes: [UInt8]
            do {
                bytes = try FileSystem.read(source, limit: EffectPackage.maxTotalSize + (2 << 20)) { size in
                    "\(source) is \(size) bytes, more than an effect package may be"
                }
            } catch let error as ScriptError { throw EffectInstaller.Refusal(description: error.message) }
            let package = try EffectPackage.read(archive: bytes, path: source)
            return Fetched(source: source, path: try package.extract(into: stage), kind: package.manifest.kind, contents: package.contents,
                           archive: (try FileDigest.sha256(of: bytes), package.manifest))
        }
        let path = source.count > 1 && source.hasSuffix("/") ? String(source.dropLast()) : source
        try EffectInstaller.refuseLinks(in: path)
        let (module, kind) = try EffectPackage.module(at: path)
        let contents = kind == "folder" ? try EffectPackage.files(of: path) : [module + ".lua": try EffectPackage.readLimited(path)]
        return Fetched(source: source, path: try EffectPackage.write(contents, name: module, kind: kind, into: stage),
                       kind: kind, contents: contents, archive: nil)
    }

    /// Loads a fetched effect in the sandbox and hashes it.
    func load(_ fetched: Fetched) throws -> Staged {
        let info = try host.scripts.checkEffect(atPath: fetched.path)
        let package = try EffectPackage(info: info, kind: fetched.kind, contents: fetched.contents)
        guard let archive = fetched.archive else {
            return Staged(source: fetched.source, path: fetched.path, info: info, sha256: try FileDigest.sha256(of: package.manifestBytes()))
        }
        var said = archive.manifest
        said.format = package.manifest.format
        guard said == package.manifest else {
            throw EffectInstaller.Refusal(description: "\(fetched.source): its manifest does not match the effect it holds (\(info.module) \(info.version.oneLine): its name, version, requirements or files); make it again with `moonreel effects pack`")
        }
        return Staged(source: fetched.source, path: fetched.path, info: info, sha256: archive.sha256)
    }

    /// `fetch` and `load`, in a staging folder under `scratch`.
    func stage(_ source: String, scratch: String) throws -> Staged {
        try load(fetch(source, into: try Self.makeFolder(scratch + "/effects"), work: scratch))
    }

    static func makeFolder(_ path: String) throws -> String {
        do { try Paths.makeFolders(path) } catch { throw EffectInstaller.Refusal(description: "\(error)") }
        return path
    }

    /// Checks `staged` (requirements, versions, one trial) and copies it into `folder`;
    /// returns what to print.
    func install(_ staged: Staged) throws -> [String] {
        let info = staged.info
        try EffectRequirements.check(info, host: host)
        let replaced = try installedVersion(of: info.module, in: folder, host: host)
        if !force {
            if !allowDowngrade, let replaced, let old = EffectVersion(replaced), let new = EffectVersion(info.version), new < old {
                throw EffectInstaller.Refusal(description: "it would replace \"\(info.module)\" \(replaced.oneLine) with the older \(info.version.oneLine); pass --force to downgrade")
            }
            if host.scripts.bundledEffects[info.module] != nil {
                throw EffectInstaller.Refusal(description: "it would hide the bundled effect \"\(info.module)\" from every script; pass --force to install it anyway")
            }
            try EffectRequirements.checkDependents(of: info.module, version: info.version, in: folder, host: host)
        }
        let tried = try host.tryEffect(atPath: staged.path)
        let required = info.parameters.filter(\.required).map(\.name)
        let lacking = "\(required.joined(separator: ", ")) \(required.count == 1 ? "has" : "have") no default and it declares no example"
        if tried == nil, !force {
            throw EffectInstaller.Refusal(description: "it cannot be tried: \(lacking); "
                                          + "add example = { … } (options that make it draw) to the effect, or pass --force to install it untried")
        }
        let installed = try EffectInstaller(folder: folder).install(staged.path, as: info.module, overwrite: overwrite)
        let note = replaced.map { " (replacing \($0.isEmpty ? "an unversioned one" : $0))" } ?? ""
        var lines = ["installed effect \"\(info.module)\" \(info.version.oneLine) at \(installed)\(note.oneLine)"]
        if let tried {
            let with = tried.trial == .example ? "its example" : "its defaults"
            lines.append(tried.drawn ? "  applied once with \(with) and one frame of its layer drawn: it works"
                                     : "  applied once with \(with): it works (it returned no layer to draw)")
        } else {
            lines.append("  not tried (--force): \(lacking)")
        }
        return lines
    }

    /// `staged` ordered so that each comes after the effects it requires among them.
    static func dependenciesFirst(_ staged: [Staged]) -> [Staged] {
        var ordered: [Staged] = [], placed: Set<String> = [], visiting: Set<String> = []
        let byName = Dictionary(staged.map { ($0.info.module, $0) }, uniquingKeysWith: { first, _ in first })
        func place(_ item: Staged) {
            guard !placed.contains(item.info.module), visiting.insert(item.info.module).inserted else { return }
            for name in item.info.requiresEffects.keys.sorted() { if let needed = byName[name] { place(needed) } }
            placed.insert(item.info.module)
            ordered.append(item)
        }
        staged.forEach(place)
        return ordered
    }
}

/// The version of the effect installed as `module` in `folder`, if one is ("" when it has none).
func installedVersion(of module: String, in folder: String, host: MoonreelHost) throws -> String? {
    for candidate in [folder + "/" + module + ".lua", folder + "/" + module] where EffectInstaller.kindOf(candidate) != .missing {
        return (try? host.scripts.checkEffect(atPath: candidate))?.version ?? ""
    }
    return nil
}
