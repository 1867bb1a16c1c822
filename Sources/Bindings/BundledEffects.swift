/// The effect scripts shipped inside the binary (scripts/effects, embedded by SwiftPM),
/// found by `require "effects.NAME"` after the user's own folders.
enum BundledEffects {
    static var sources: [String: String] {
        [
            "lyrics": String(decoding: PackageResources.lyrics_lua, as: UTF8.self),
            "watermark": String(decoding: PackageResources.watermark_lua, as: UTF8.self),
        ]
    }
}
