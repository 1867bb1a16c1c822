/// Where `require "effects.NAME"` looks, in this order:
/// 1. `scriptDirectory/effects` (the running user script's own folder),
/// 2. `ROOT/effects` for each ROOT in `libraryRoots` (env `MOONREEL_PATH`, colon-separated),
/// 3. `userEffectsDirectory` (`$XDG_DATA_HOME/moonreel/effects`, default
///    `~/.local/share/moonreel/effects`, where `moonreel effects install` copies to),
/// 4. the effects bundled with the embedder.
/// In each folder, `effects.a.b` is `a/b.lua` or `a/b/init.lua`.
public struct EffectSearchPath: Sendable, Equatable {
    /// The folder of the script being run (set by the host when it runs a file).
    public var scriptDirectory: String?
    /// Folders whose `effects` subfolder holds shared effects.
    public var libraryRoots: [String]
    /// Where the user's installed effects are.
    public var userEffectsDirectory: String?

    /// A search path of these folders (none by default: only bundled effects are found).
    public init(scriptDirectory: String? = nil, libraryRoots: [String] = [], userEffectsDirectory: String? = nil) {
        self.scriptDirectory = scriptDirectory
        self.libraryRoots = libraryRoots
        self.userEffectsDirectory = userEffectsDirectory
    }

    /// From `MOONREEL_PATH`, `XDG_DATA_HOME` and `HOME`, as the `moonreel` command uses.
    public static func fromEnvironment() -> EffectSearchPath {
        let roots = FileSystem.environment("MOONREEL_PATH")?.split(separator: ":").map(String.init) ?? []
        let dataHome = FileSystem.environment("XDG_DATA_HOME")
            ?? FileSystem.environment("HOME").map { $0 + "/.local/share" }
        return EffectSearchPath(libraryRoots: roots, userEffectsDirectory: dataHome.map { $0 + "/moonreel/effects" })
    }

    /// The effects folders, in search order.
    package var folders: [String] {
        (scriptDirectory.map { [$0 + "/effects"] } ?? []) + libraryRoots.map { $0 + "/effects" }
            + (userEffectsDirectory.map { [$0] } ?? [])
    }
}

/// An effect's source, as found on disk or among the bundled ones.
struct FoundEffect {
    let source: [UInt8]
    /// "@effects/NAME.lua": short, so Lua never truncates it (BUILD-NOTES pitfall 2).
    let chunkName: String
    /// The file's path, or "bundled".
    let location: String
}

/// Resolves effect module names to files, refusing anything that is not a plain name and
/// any file that a symlink leads out of its effects folder.
struct EffectLocator {
    /// The largest effect source file read: far beyond any real effect, and refused before
    /// reading, outside the memory limit the effect's own state has.
    static let maxSourceSize = 1 << 20
    let folders: [String]
    let bundled: [String: String]

    /// `module` is what follows "effects." in `require`; errors are worded like Lua's.
    func find(_ module: String) throws -> FoundEffect {
        let relative = try EffectLocator.relativePath(of: module)
        var searched: [String] = []
        for folder in folders {
            for candidate in [relative + ".lua", relative + "/init.lua"] {
                let path = folder + "/" + candidate
                guard FileSystem.kind(of: path) == .file else {
                    searched.append("no file '\(path)'")
                    continue
                }
                try EffectLocator.requireInside(folder: folder, path: path, module: module)
                let source: [UInt8]
                do {
                    source = try FileSystem.read(path, limit: EffectLocator.maxSourceSize) { size in
                        "effect \(module) (\(path)) is \(size) bytes; an effect's source file may be at most 1 MiB (\(EffectLocator.maxSourceSize) bytes)"
                    }
                } catch let error as ScriptError {
                    throw PositionedFromScript(error.message) // at the require, like "not found"
                }
                return FoundEffect(source: source, chunkName: "@effects/" + candidate, location: path)
            }
        }
        if let source = bundled[module] {
            return FoundEffect(source: Array(source.utf8), chunkName: "@effects/\(relative).lua", location: "bundled")
        }
        searched.append("no bundled effect '\(module)'")
        throw PositionedFromScript("module 'effects.\(module)' not found:\n\t" + searched.joined(separator: "\n\t"))
    }

    /// The module names available in each folder and among the bundled, in search order,
    /// each once (the one `require` would load).
    func availableModules() -> [(module: String, location: String)] {
        var seen: Set<String> = []
        var result: [(module: String, location: String)] = []
        for folder in folders {
            for entry in FileSystem.entries(of: folder) {
                let path = folder + "/" + entry
                let module: String
                if entry.hasSuffix(".lua"), FileSystem.kind(of: path) == .file {
                    module = String(entry.dropLast(4))
                } else if FileSystem.kind(of: path + "/init.lua") == .file {
                    module = entry
                } else {
                    continue
                }
                guard (try? EffectLocator.relativePath(of: module)) != nil, seen.insert(module).inserted else { continue }
                result.append((module, path))
            }
        }
        for module in bundled.keys.sorted() where seen.insert(module).inserted {
            result.append((module, "bundled"))
        }
        return result
    }

    /// "a.b" → "a/b"; anything that could name a path ("..", "/", absolute) is refused.
    static func relativePath(of module: String) throws -> String {
        let parts = module.split(separator: ".", omittingEmptySubsequences: false)
        let isWord: (Substring) -> Bool = { part in
            !part.isEmpty && part.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x5F || byte == 0x2D
            }
        }
        guard parts.allSatisfy(isWord) else {
            throw PositionedFromScript("module 'effects.\(module)' refused: effect names are words "
                                       + "(letters, digits, '_', '-') joined by dots, never paths")
        }
        return parts.joined(separator: "/")
    }

    /// Refuses a file whose real path (symlinks resolved) is not inside the real folder.
    static func requireInside(folder: String, path: String, module: String) throws {
        guard let realFolder = FileSystem.realPath(folder), let realFile = FileSystem.realPath(path),
              realFile.hasPrefix(realFolder.hasSuffix("/") ? realFolder : realFolder + "/") else {
            throw PositionedFromScript("module 'effects.\(module)' refused: \(path) leads outside \(folder)")
        }
    }
}
