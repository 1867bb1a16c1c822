import Foundation
import MoonreelEngine
import MoonreelPlatform
import MoonreelBindings
import Synchronization

/// The studio's effects panel: every effect the script could `require` (as `moonreel effects
/// list` finds them from the script's folder), each drawn once with its example over the test
/// pattern, as `moonreel effects preview` draws it. One still at a time; each is kept.
final class StudioEffects: Sendable {
    /// A drawn still and the call that makes it.
    struct Still: Sendable {
        let jpeg: [UInt8]
        /// The Lua that uses the effect as drawn (`EffectPreview.usage(of:)`).
        let usage: String
    }

    /// The stills' size: the panel shows them a column wide.
    static let size = (width: 480, height: 270)

    private let limits: ScriptLimits
    private let searchPath: EffectSearchPath
    private let drawing = Mutex<(folder: String?, stills: [String: Still])>((nil, [:]))

    init(limits: ScriptLimits, searchPath: EffectSearchPath) {
        (self.limits, self.searchPath) = (limits, searchPath)
    }

    deinit {
        if let folder = drawing.withLock({ $0.folder }) { Paths.removeFolder(folder) }
    }

    /// Every effect found, with what it says of itself, or why it cannot be loaded (`GET effects`).
    func listJSON() throws -> Data {
        let host = try MoonreelHost(limits: limits, effectSearchPath: searchPath)
        let effects: [[String: Any]] = host.scripts.listEffects().map { listing in
            switch listing.info {
            case .failure(let error):
                return ["name": listing.module, "location": listing.location, "error": error.message.oneLine]
            case .success(let info):
                let parameters: [[String: Any]] = info.parameters.map { parameter in
                    var fields: [String: Any] = ["name": parameter.name, "type": parameter.type, "doc": parameter.doc, "required": parameter.required]
                    if let value = parameter.defaultValue { fields["default"] = value }
                    if !parameter.choices.isEmpty { fields["choices"] = parameter.choices }
                    return fields
                }
                return ["name": info.module, "version": info.version, "description": info.description, "author": info.author,
                        "license": info.license, "location": info.location, "parameters": parameters]
            }
        }
        return try JSONSerialization.data(withJSONObject: ["effects": effects])
    }

    /// Effect `name` drawn with its example (`GET effect-still?name=`); only a name the list
    /// has is drawn.
    func still(named name: String) throws -> Still {
        try drawing.withLock { drawing in
            if let kept = drawing.stills[name] { return kept }
            let host = try MoonreelHost(limits: limits, effectSearchPath: searchPath)
            guard host.scripts.effectNames().contains(name) else { throw StudioError("no effect \(name.quotedForMessage()) is found here") }
            let folder = try drawing.folder ?? {
                let made = try Paths.makeTemporaryFolder(prefix: "moonreel-studio-effects")
                try TestPattern.write(to: made + "/test-pattern.mp4", seconds: 8, width: Self.size.width, height: Self.size.height)
                return made
            }()
            drawing.folder = folder
            let picture = folder + "/still.jpg"
            defer { unlink(picture) }
            let drawn = try host.previewEffect(name, over: folder + "/test-pattern.mp4", to: picture, width: Self.size.width, height: Self.size.height)
            let still = Still(jpeg: Array(try Data(contentsOf: URL(fileURLWithPath: picture))), usage: drawn.usage(of: name))
            drawing.stills[name] = still
            return still
        }
    }
}
