import MoonreelScriptHost

/// The API reference (docs/api.md), written from the same tables that register the
/// bindings and drive the REPL's `help()` and completion, so it cannot drift from the API.
package enum APIReference {
    /// The whole reference as Markdown.
    package static func markdown(_ api: API) -> String {
        var out = """
            # The `av` API reference

            Generated from the binding tables by `moonreel docs` (the REPL's `help()` reads the same
            tables); a test fails when this file and the bindings disagree. The guides in this folder
            explain the rules behind it: [time and tracks](time-and-tracks.md),
            [porting iOS code](porting-from-ios.md) (geometry, and every Apple name Moonreel accepts),
            [colour and HDR](color-and-hdr.md), [filters](filters.md), [timed text and karaoke](timed-text.md),
            [edit helpers](edit-helpers.md) (joins with transitions, title cards, picture-in-picture, ducking, loudness),
            [export settings](export-settings.md), [recording](recording.md), [scripts, modules and
            files](scripting.md) and [reliability](reliability.md) (what shared effects may do).

            Conventions: times are seconds (Lua numbers) or exact `av.time` values; ranges are
            `av.range` values or `{start=, duration=}` tables; sizes `{width, height}`, rects
            `{x, y, width, height}`, points `{x, y}`; colours are names (`"white"`, `"systemRed"`),
            `"#RRGGBB[AA]"` or `{r, g, b, a}` in 0…1. Methods are called with `:`.

            ## Functions of `av`

            | function | what it does |
            |---|---|

            """
        for (name, doc) in api.functionHelp.sorted(by: { $0.name < $1.name }) {
            out += "| `\(name)` | \(cell(doc)) |\n"
        }
        for (name, example) in api.functionExamples.sorted(by: { $0.key < $1.key }) {
            out += "\n`av.\(name)`:\n\n```lua\n\(example)\n```\n"
        }
        out += "\nValues: `av.version`, `av.zero` and `av.kCMTimeZero` (time 0), `av.beginTimeAtZero` and `av.AVCoreAnimationBeginTimeAtZero` (Apple's 1e-100).\n"
        for luaClass in api.classes.all.sorted(by: { $0.name < $1.name }) {
            out += "\n## \(luaClass.name)\n\n\(luaClass.doc)\n"
            if let parent = luaClass.parent { out += "\nA kind of \(parent.name): it has all of its properties and methods too.\n" }
            if !luaClass.example.isEmpty { out += "\n```lua\n\(luaClass.example)\n```\n" }
            let properties = luaClass.properties.sorted { $0.key < $1.key }
            if !properties.isEmpty {
                out += "\n| property | | |\n|---|---|---|\n"
                for (name, property) in properties {
                    out += "| `\(name)` | \(property.set == nil ? "read-only" : "read, write") | \(cell(property.doc)) |\n"
                }
            }
            if !luaClass.methods.isEmpty {
                out += "\n| method | |\n|---|---|\n"
                for method in luaClass.methods.sorted(by: { $0.name < $1.name }) {
                    out += "| `:\(method.name)` | \(cell(method.doc)) |\n"
                }
            }
        }
        return out
    }

    /// What the reference lacks: classes without a description or example, properties and
    /// methods without a line of documentation.
    package static func missingDocumentation(_ api: API) -> [String] {
        var missing: [String] = []
        for (name, doc) in api.functionHelp where doc.isEmpty { missing.append(name) }
        for luaClass in api.classes.all {
            if luaClass.doc.isEmpty { missing.append("\(luaClass.name) (description)") }
            if luaClass.example.isEmpty { missing.append("\(luaClass.name) (example)") }
            for (name, property) in luaClass.properties where property.doc.isEmpty { missing.append("\(luaClass.name).\(name)") }
            for method in luaClass.methods where method.doc.isEmpty { missing.append("\(luaClass.name):\(method.name)") }
        }
        return missing.sorted()
    }

    private static func cell(_ text: String) -> String {
        text.replacingAll("|", with: "\\|").replacingAll("\n", with: " ")
    }
}
