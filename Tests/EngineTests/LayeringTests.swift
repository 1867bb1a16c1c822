import Foundation
import Testing

/// The engine's folders are layers that read bottom-up, each allowed to use only the folders
/// below it — errors, then media, then the edit model from the inside out (timing → cues →
/// filters → animation → layers → composition), then the render core, the edit helpers,
/// export and capture, and the library — so no file uses a type that a folder above its own
/// declares (a renderer that knew about export files, say, could not serve a preview) and
/// no two folders use each other.
///
/// The layers are grouped into targets (MoonreelMedia, MoonreelComposition, MoonreelRender,
/// MoonreelAnalysis, MoonreelEngine), so the compiler holds the order between targets; this
/// test holds it between the folders within one.
@Suite struct LayeringTests {
    /// By folder under Sources (a target's own folder holds its lowest layer).
    static let layers: [String: Int] = [
        "Media/Errors": 0, "Media": 1, "Media/Encoding": 1,
        "Composition/Timing": 2, "Composition/Cues": 3, "Composition/Filters": 4, "Composition/Animation": 5,
        "Composition/Layers": 6, "Composition": 7,
        "Render": 8, "Render/Text": 8, "Render/Compositor": 9,
        "Engine": 10, "Engine/Edit": 10,
        "Engine/Export": 11, "Engine/Capture": 11, "Analysis": 11,
        "Engine/Library": 12,
    ]
    static let targets = ["Media", "Composition", "Render", "Analysis", "Engine"]

    static var sources: URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("Sources")
    }

    @Test func noFolderUsesATypeOfAFolderAboveIt() throws {
        let root = Self.sources.path
        var paths: [String] = []
        for target in Self.targets {
            let files = try #require(FileManager.default.enumerator(atPath: root + "/" + target)?.allObjects as? [String])
            paths += files.filter { $0.hasSuffix(".swift") }.map { target + "/" + $0 }
        }
        var sources: [(path: String, layer: Int, text: String)] = []
        for path in paths {
            let folder = (path as NSString).deletingLastPathComponent
            let layer = try #require(Self.layers[folder], "\(path): a folder with no layer; add it to LayeringTests.layers")
            let text = try String(contentsOfFile: root + "/" + path, encoding: .utf8)
            // Comments may name anything.
            let code = text.split(separator: "\n", omittingEmptySubsequences: false)
                .map { line in line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line) }.joined(separator: "\n")
            sources.append((path, layer, code))
        }
        // Top-level type declarations (nested ones belong to their type).
        let declaration = /^(?:@\w+\s+)*(?:(?:public|package|internal|final|indirect)\s+)*(?:struct|class|enum|protocol|typealias|actor)\s+([A-Z]\w*)/
            .anchorsMatchLineEndings()
        var owners: [String: (layer: Int, path: String)] = [:]
        for source in sources {
            for match in source.text.matches(of: declaration) { owners[String(match.1)] = (source.layer, source.path) }
        }
        #expect(owners.count > 100, "\(owners.count) types found")
        var violations: [String] = []
        for source in sources {
            let words = Set(source.text.split { !$0.isLetter && !$0.isNumber && $0 != "_" }.map(String.init))
            for (name, owner) in owners where owner.layer > source.layer && words.contains(name) {
                violations.append("\(source.path) uses \(name) from \(owner.path)")
            }
        }
        #expect(violations.isEmpty, "\(violations.sorted().joined(separator: "\n"))")
    }
}
