/// The effect scripts shipped inside the binary (scripts/effects, embedded by SwiftPM),
/// found by `require "effects.NAME"` after the user's own folders.
enum BundledEffects {
    static var sources: [String: String] { [:] }
}
