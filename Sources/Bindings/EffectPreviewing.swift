import MoonreelEngine

/// An effect drawn with its example over a picture: what `moonreel effects preview`, the
/// gallery and the studio's effects panel show (Bundled/preview.lua does the drawing).
package struct EffectPreview: Sendable {
    /// "layer" (drawn over the video) or "look" (filters for the whole picture).
    package let kind: String
    /// The options it was drawn with, as a script would write them (renderSize 1920×1080).
    package let options: String
    /// Seconds into the picture the still shows.
    package let at: Double

    package init(kind: String, options: String, at: Double) { (self.kind, self.options, self.at) = (kind, options, at) }

    /// How a script uses effect `module` drawn so: a layer goes over the video, a look onto
    /// the picture, a transition by name into a join (its options are then the join's entry).
    package func usage(of module: String) -> String {
        let variable = module.split(separator: ".").last.map(String.init) ?? module
        let identifier = variable.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") } && !(variable.first?.isNumber ?? true) ? variable : "effect"
        if kind == "transition" {
            return "-- a transition: by name in av.join or av.cutToBeats\n"
                + "local comp, vc, mix = av.join({ clip, nextClip }, { transitions = { \(options) }, duration = 1 })"
        }
        let call = identifier + (options.hasPrefix("{") ? options : "(" + options + ")")
        let require = "local \(identifier) = require \"effects.\(module.luaEscaped)\""
        return require + "\n" + (kind == "look" ? "vc.filters = \(call)" : "parent:addSublayer(\(call))")
    }

    /// The drawing script: arguments name, picture, output, at ("" for the effect's own),
    /// width, height, extra options ("" or a Lua table's text).
    package static var source: String { String(decoding: PackageResources.preview_lua, as: UTF8.self) }
}

extension MoonreelHost {
    /// Draws effect `name` with its example (and `options`, a Lua table's text) over
    /// `picture` (a video or still) at `width`×`height` into `output`: a still at `at`
    /// seconds (nil: the effect's `previewAt`, else 1) for .png, .jpg or .webp, else a clip.
    /// Throws the effect's own one-line `ScriptError`.
    package func previewEffect(_ name: String, over picture: String, to output: String, at: Double? = nil,
                               width: Int, height: Int, options: String? = nil) throws -> EffectPreview {
        let returned = try run(source: EffectPreview.source, name: "effects preview",
                               arguments: [name, picture, output, at.map { String($0) } ?? "", String(width), String(height), options ?? ""])
        guard case .table(let fields)? = returned.first, case .string(let kind)? = fields["kind"], case .string(let shown)? = fields["options"] else {
            throw ScriptError(kind: .runtime, message: "effect \"\(name)\": the preview returned no description")
        }
        switch fields["at"] {
        case .number(let seconds)?: return EffectPreview(kind: kind, options: shown, at: seconds)
        case .integer(let seconds)?: return EffectPreview(kind: kind, options: shown, at: Double(seconds))
        default: return EffectPreview(kind: kind, options: shown, at: 1)
        }
    }
}

private extension String {
    /// As a Lua double-quoted string's contents.
    var luaEscaped: String { replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"") }
}
