import Foundation
import Testing

/// The engine's folders are layers that read bottom-up — platform → media → the edit model
/// → the render core → export and capture → the library — and no file uses a type that a
/// folder above its own declares (a renderer that knew about export files, say, could not
/// serve a preview).
@Suite struct LayeringTests {
    static let layers: [String: Int] = [
        "Platform": 0, "Media": 1,
        "Composition": 2, "Animation": 2, "Layers": 2, "Cues": 2, "Filters": 2, "Edit": 2,
        "Render": 3, "Compositor": 3,
        "Export": 4, "Capture": 4, "Analysis": 4,
        "Library": 5,
    ]

    static var engine: URL {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("Sources/Engine")
    }

    @Test func noFolderUsesATypeOfAFolderAboveIt() throws {
        let root = Self.engine.path
        let paths = try #require(FileManager.default.enumerator(atPath: root)?.allObjects as? [String]).filter { $0.hasSuffix(".swift") }
        var sources: [(path: String, layer: Int, text: String)] = []
        for path in paths {
            let folder = path.contains("/") ? String(path.prefix { $0 != "/" }) : "Media" // MediaTime, Geometry
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
