/// Scripts compiled into the binary (from scripts/examples, embedded by SwiftPM).
enum BundledScripts {
    static var demo: String { String(decoding: PackageResources.demo_lua, as: UTF8.self) }
}
