import ArgumentParser
import MoonreelBindings

struct Docs: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the av API reference (Markdown, as docs/api.md), made from the bindings themselves.")

    func run() throws {
        let host = try MoonreelHost()
        print(APIReference.markdown(host.api), terminator: "")
    }
}
