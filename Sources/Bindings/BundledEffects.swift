/// The effects shipped with Moonreel (scripts/effects, embedded by SwiftPM): what
/// `require "effects.NAME"` finds when no folder on the search path has NAME.
enum BundledEffects {
    static var sources: [String: String] {
        let files: [String: [UInt8]] = [
            "audiogram": PackageResources.audiogram_lua, "border": PackageResources.border_lua,
            "callout": PackageResources.callout_lua,
            "callToAction": PackageResources.callToAction_lua, "captions": PackageResources.captions_lua,
            "countdown": PackageResources.countdown_lua, "filmGrain": PackageResources.filmGrain_lua,
            "glitch": PackageResources.glitch_lua, "kenBurns": PackageResources.kenBurns_lua,
            "logoBug": PackageResources.logoBug_lua, "look": PackageResources.look_lua,
            "lowerThird": PackageResources.lowerThird_lua, "lyrics": PackageResources.lyrics_lua,
            "pipFrame": PackageResources.pipFrame_lua, "progressBar": PackageResources.progressBar_lua,
            "ticker": PackageResources.ticker_lua, "title": PackageResources.title_lua,
            "vignette": PackageResources.vignette_lua, "watermark": PackageResources.watermark_lua,
            "blurDissolve": PackageResources.blurDissolve_lua, "clockWipe": PackageResources.clockWipe_lua,
            "directionalWipe": PackageResources.directionalWipe_lua, "irisWipe": PackageResources.irisWipe_lua, "lumaWipe": PackageResources.lumaWipe_lua,
            "push": PackageResources.push_lua, "radialWipe": PackageResources.radialWipe_lua, "zoom": PackageResources.zoom_lua,
        ]
        return files.mapValues { String(decoding: $0, as: UTF8.self) }
    }
}
