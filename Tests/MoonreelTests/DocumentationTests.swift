import Foundation
import MoonreelEngine
import MoonreelScriptHost
import MoonreelBindings
import Testing
import TestSupport

/// The API reference in docs/ is made from the binding tables: every binding documented,
/// with an example per class, and the committed file the same as what the bindings say.
@Suite struct DocumentationTests {
    @Test func everyBindingHasDocumentation() throws {
        let host = try MoonreelHost()
        let missing = APIReference.missingDocumentation(host.api)
        #expect(missing.isEmpty, "undocumented: \(missing.joined(separator: ", "))")
    }

    @Test func committedReferenceMatchesTheBindings() throws {
        let committed = try String(contentsOfFile: Moonreel.checkout + "/docs/api.md", encoding: .utf8)
        let generated = try Moonreel.run(["docs"])
        #expect(generated.status == 0)
        #expect(committed == generated.out, "docs/api.md is out of date: run `moonreel docs > docs/api.md`")
    }
}
