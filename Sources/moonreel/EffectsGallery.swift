import MoonreelPlatform
import MoonreelScriptHost
import MoonreelBindings

/// `moonreel effects gallery`: each effect's preview still, what it says of itself, its
/// parameters and the Lua that calls it, as a page that works offline (index.html: no
/// script, no font or style from elsewhere) and as Markdown (README.md) for a repository.
/// Everything an effect says of itself is a stranger's text: escaped for each format.
struct EffectsGallery {
    struct Entry {
        let info: EffectInfo
        /// The still's file name beside the page; nil when the effect could not be drawn.
        let picture: String?
        /// "layer" (drawn over the video), "look" (filters for the whole picture) or "transition".
        let kind: String
        /// The options the still was drawn with, as Lua.
        let options: String
        /// Seconds into the preview the still shows.
        let at: Double
        /// Why it could not be drawn.
        let problem: String?
    }

    let entries: [Entry]

    /// The file name of a module's still: letters, digits, ".", "-" and "_" only.
    static func pictureName(for module: String) -> String {
        String(module.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" }) + ".jpg"
    }

    /// How a script uses it.
    static func usage(_ entry: Entry) -> String {
        EffectPreview(kind: entry.kind, options: entry.options, at: 0).usage(of: entry.info.module)
    }

    func html() -> String {
        var page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Moonreel effects</title>
            <style>
            body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 70em; padding: 0 1em; color: #222; }
            section { border-top: 1px solid #ddd; padding: 1.2em 0; display: grid; grid-template-columns: minmax(0, 26em) minmax(0, 1fr); gap: 1.5em; }
            img { width: 100%; height: auto; border: 1px solid #ccc; }
            h2 { margin: 0 0 .2em; font-size: 1.2em; } .meta { color: #666; font-size: .9em; }
            table { border-collapse: collapse; font-size: .9em; margin-top: .6em; } td, th { text-align: left; padding: .15em .6em .15em 0; vertical-align: top; }
            pre { background: #f4f4f4; padding: .6em; overflow-x: auto; font-size: .85em; } .problem { color: #a00; }
            @media (max-width: 50em) { section { grid-template-columns: 1fr; } }
            </style></head><body>
            <h1>Moonreel effects</h1>
            <p>\(entries.count) effects, each drawn with its example over the test pattern. \
            <code>moonreel effects preview NAME --over your.mp4 -o still.png</code> draws one over your own video.</p>

            """
        for entry in entries {
            let info = entry.info
            page += "<section id=\"\(Self.html(info.module))\"><div>"
            if let picture = entry.picture {
                page += "<img src=\"\(Self.html(picture))\" alt=\"\(Self.html(info.module)) at \(Self.seconds(entry.at))\">"
            } else {
                page += "<p class=\"problem\">not drawn: \(Self.html(entry.problem ?? ""))</p>"
            }
            page += "</div><div><h2>\(Self.html(info.module))</h2><p>\(Self.html(info.description))</p>"
            page += "<p class=\"meta\">\(Self.html(Self.byline(info)))</p>"
            page += "<pre><code>\(Self.usage(entry).split(separator: "\n").map { Self.html(String($0)) }.joined(separator: "\n"))</code></pre>"
            if !info.parameters.isEmpty {
                page += "<table><tr><th>parameter</th><th>type</th><th>values</th><th></th></tr>"
                for parameter in info.parameters {
                    page += "<tr><td><code>\(Self.html(parameter.name))</code></td><td>\(Self.html(parameter.type))</td>"
                        + "<td>\(Self.html(EffectText.constraint(of: parameter)))</td><td>\(Self.html(parameter.doc))</td></tr>"
                }
                page += "</table>"
            }
            page += "</div></section>\n"
        }
        return page + "</body></html>\n"
    }

    func markdown() -> String {
        var text = """
            # Moonreel effects

            \(entries.count) effects, each drawn with its example over the test pattern \
            (`moonreel effects gallery` made this page; `moonreel effects preview NAME --over your.mp4 -o still.png` \
            draws one over your own video).

            """
        for entry in entries {
            let info = entry.info
            text += "\n## \(Self.markdown(info.module))\n\n"
            if let picture = entry.picture {
                text += "![\(Self.markdown(info.module)) at \(Self.seconds(entry.at))](\(picture))\n\n"
            } else {
                text += "Not drawn: \(Self.markdown(entry.problem ?? ""))\n\n"
            }
            if !info.description.isEmpty { text += Self.markdown(info.description) + "\n\n" }
            text += "_\(Self.markdown(Self.byline(info)))_\n\n"
            let code = Self.usage(entry).split(separator: "\n").map { String($0).oneLine.replacingAll("```", with: "` ` `") }
            text += "```lua\n\(code.joined(separator: "\n"))\n```\n"
            if !info.parameters.isEmpty {
                text += "\n| parameter | type | values | |\n|---|---|---|---|\n"
                for parameter in info.parameters {
                    let cells = [parameter.name, parameter.type, EffectText.constraint(of: parameter), parameter.doc].map { Self.markdown($0) }
                    text += "| `\(cells[0])` | \(cells[1]) | \(cells[2]) | \(cells[3]) |\n"
                }
            }
        }
        return text
    }

    private static func byline(_ info: EffectInfo) -> String {
        [info.version.isEmpty ? nil : "version \(info.version)", info.author.isEmpty ? nil : "by \(info.author)",
         info.license.isEmpty ? nil : info.license, "found: \(info.location)"].compactMap { $0 }.joined(separator: " · ")
    }

    private static func seconds(_ value: Double) -> String { EffectText.number((value * 100).rounded() / 100) + " s" }

    static func html(_ text: String) -> String { text.oneLine.markupEscaped }

    /// Text for a Markdown line or table cell: no HTML, links, emphasis or cell breaks of its own.
    static func markdown(_ text: String) -> String {
        var escaped = ""
        for character in text.oneLine {
            if "\\`*_[]()<>|#!&".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
