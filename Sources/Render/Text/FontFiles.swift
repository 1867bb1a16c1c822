import CMoonPangoCairo
import MoonreelMedia
import Synchronization

/// Font files used by path (`font = effect.asset("Inter-Bold.ttf")`): fontconfig reads a
/// file's family and adds the file to the process's fonts once, and text then names that
/// family. Font maps made earlier (a `TextLayout` kept by an API) learn of it through
/// `generation`: each checks it before laying text out.
package enum FontFiles {
    /// Real path → family, for the files added so far.
    private static let added = Mutex<[String: String]>([:])
    /// Grows each time a file is added.
    static let generation = Atomic<Int>(0)

    /// Whether a font name is a font file's path (it ends in .ttf, .otf or .ttc).
    package static func isFontFile(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower.hasSuffix(".ttf") || lower.hasSuffix(".otf") || lower.hasSuffix(".ttc")
    }

    /// The family of the font in the file at `path` (its first face), added to the fonts text
    /// can use. Throws `EngineError` when fontconfig cannot read it as a font.
    package static func family(registering path: String) throws -> String {
        if let known = added.withLock({ $0[path] }) { return known }
        let family = try path.withCString { raw in
            try raw.withMemoryRebound(to: FcChar8.self, capacity: path.utf8.count + 1) { file -> String in
                var faces: Int32 = 0
                guard let pattern = FcFreeTypeQuery(file, 0, nil, &faces) else {
                    throw EngineError("\(path.quotedForMessage(limit: 240)) is not a font file (TrueType or OpenType) that can be read", kind: .decode)
                }
                defer { FcPatternDestroy(pattern) }
                var name: UnsafeMutablePointer<FcChar8>?
                guard FcPatternGetString(pattern, "family", 0, &name) == FcResultMatch, let name else {
                    throw EngineError("\(path.quotedForMessage(limit: 240)) names no font family", kind: .decode)
                }
                let family = String(cString: name)
                // Into the process's current configuration: font maps made from now on have it.
                guard FcConfigAppFontAddFile(nil, file) == FcTrue else {
                    throw EngineError("\(path.quotedForMessage(limit: 240)): fontconfig could not add the font", kind: .decode)
                }
                return family
            }
        }
        added.withLock { $0[path] = family }
        generation.add(1, ordering: .relaxed)
        return family
    }
}
