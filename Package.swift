// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Moonreel",
    products: [
        // Pure Swift editing API (no Lua): compositions, video compositions, export.
        .library(name: "MoonreelEngine", targets: ["Engine"]),
        // Script host + `av` bindings + engine, for apps that run user scripts in-process.
        .library(name: "Moonreel", targets: ["MoonreelKit"]),
        .executable(name: "moonreel", targets: ["moonreel"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .systemLibrary(name: "CMoonLua", pkgConfig: "lua5.4",
                       providers: [.apt(["liblua5.4-dev"])]),
        // All of FFmpeg in one module, libavdevice (capture devices) included: the same
        // headers imported through two modules hide FFmpeg's enums from Swift code that sees
        // both (a test target that imports CMoonFFmpeg and the engine, say).
        .systemLibrary(name: "CMoonFFmpeg", pkgConfig: "libavformat",
                       providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev",
                                         "libswscale-dev", "libswresample-dev", "libavfilter-dev", "libavdevice-dev"])]),
        .systemLibrary(name: "CMoonPangoCairo", pkgConfig: "pangocairo",
                       providers: [.apt(["libpango1.0-dev", "libcairo2-dev"])]),
        .systemLibrary(name: "CMoonEdit", pkgConfig: "libedit",
                       providers: [.apt(["libedit-dev"])]),
        .target(name: "CMoonLuaShim", dependencies: ["CMoonLua"]),
        .target(name: "CMoonAVShim", dependencies: ["CMoonFFmpeg"]),
        .target(name: "Engine", dependencies: ["CMoonFFmpeg", "CMoonAVShim", "CMoonPangoCairo"]),
        .target(name: "ScriptHost", dependencies: ["CMoonLua", "CMoonLuaShim"]),
        .target(name: "Bindings", dependencies: ["Engine", "ScriptHost", "CMoonLua", "CMoonLuaShim"]),
        .target(name: "MoonreelKit", dependencies: ["Engine", "ScriptHost", "Bindings", "CMoonEdit"],
                resources: [.embedInCode("Bundled/effects")]),
        .executableTarget(name: "moonreel", dependencies: [
            "MoonreelKit",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], resources: [.embedInCode("Bundled/examples")]),
        .testTarget(name: "EngineTests", dependencies: ["Engine", "CMoonAVShim", "CMoonFFmpeg", "TestSupport"]),
        .testTarget(name: "ScriptHostTests", dependencies: ["ScriptHost"]),
        // The pty driver is run from the checkout by the REPL tests, not built.
        .testTarget(name: "MoonreelTests", dependencies: ["MoonreelKit", "Engine", "TestSupport"], exclude: ["Fixtures/pty_session.py"]),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
    ]
)
