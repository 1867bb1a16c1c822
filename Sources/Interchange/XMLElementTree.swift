import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import MoonreelEngine
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An XML document as a plain tree of elements, read with Foundation's XMLDocument (libxml2).
struct XMLElementTree {
    /// The element's name.
    let name: String
    /// Its attributes.
    let attributes: [String: String]
    /// Its child elements, in order (text and comments left out).
    let children: [XMLElementTree]

    /// The root element of the document in `data`; throws libxml2's message when it is not
    /// well-formed XML.
    static func parse(_ data: [UInt8]) throws -> XMLElementTree {
        let document = try XMLDocument(data: Data(data), options: [])
        guard let root = document.rootElement() else { throw EngineError("the document has no root element", kind: .decode) }
        return XMLElementTree(root)
    }

    private init(_ element: XMLElement) {
        name = element.name ?? ""
        attributes = Dictionary((element.attributes ?? []).compactMap { node in node.name.map { ($0, node.stringValue ?? "") } },
                                uniquingKeysWith: { first, _ in first })
        children = (element.children ?? []).compactMap { $0 as? XMLElement }.map(XMLElementTree.init)
    }

    /// The children named `name`.
    func elements(named name: String) -> [XMLElementTree] { children.filter { $0.name == name } }
}
