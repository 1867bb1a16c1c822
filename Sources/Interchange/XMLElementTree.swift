import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import MoonreelEngine

/// An XML document as a plain tree of elements, read with Foundation's XMLParser (libxml2's
/// SAX reader: XMLDocument's tree leaked its libxml2 nodes, some 30 KB for each FCPXML read).
struct XMLElementTree {
    /// The element's name.
    var name: String
    /// Its attributes.
    var attributes: [String: String]
    /// Its child elements, in order (text and comments left out).
    var children: [XMLElementTree] = []

    /// The root element of the document in `data`; throws libxml2's message when it is not
    /// well-formed XML.
    static func parse(_ data: [UInt8]) throws -> XMLElementTree {
        let parser = XMLParser(data: Data(data))
        let builder = Builder()
        parser.delegate = builder
        parser.shouldResolveExternalEntities = false
        guard parser.parse(), let root = builder.root else {
            throw EngineError(parser.parserError.map { "\($0.localizedDescription) (line \(parser.lineNumber))" } ?? "the document has no root element", kind: .decode)
        }
        return root
    }

    /// The children named `name`.
    func elements(named name: String) -> [XMLElementTree] { children.filter { $0.name == name } }

    /// Keeps the open elements on a stack and hangs each closed one on its parent.
    private final class Builder: NSObject, XMLParserDelegate {
        var open: [XMLElementTree] = []
        var root: XMLElementTree?

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            open.append(XMLElementTree(name: name, attributes: attributes))
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            guard let closed = open.popLast() else { return }
            if open.isEmpty { root = closed } else { open[open.count - 1].children.append(closed) }
        }
    }
}
