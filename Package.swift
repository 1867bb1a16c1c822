// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Moonreel",
    products: [
        // Pure Swift editing API (no Lua): compositions, video compositions, layers, export
        // (and the platform module whose CancellationFlag its exports take).
        .library(name: "MoonreelEngine", targets: ["MoonreelEngine", "MoonreelMedia", "MoonreelComposition", "MoonreelRender",
                                                  "MoonreelAnalysis", "MoonreelInterchange", "MoonreelPlatform"]),
        // Runs user scripts in-process with the `av` API: the host (limits, sandboxed
        // effects, app functions) and the bindings; no REPL, no libedit.
        .library(name: "MoonreelBindings", targets: ["MoonreelBindings"]),
        // The live preview server and page (`moonreel studio`), for apps that want it; not
        // part of MoonreelBindings, so embedding scripts links no web server.
        .library(name: "MoonreelStudio", targets: ["MoonreelStudio"]),
        // Batches, chunked renders and Slurm as a library: the plans, job scripts, child
        // processes and row results behind `moonreel batch` and `moonreel run --chunks`.
        .library(name: "MoonreelFarm", targets: ["MoonreelFarm"]),
        .executable(name: "moonreel", targets: ["moonreel"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
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
        // Paths, folders, syncing and errno messages, once for every module.
        .target(name: "MoonreelPlatform", path: "Sources/Platform"),
        // The engine in layers, each a target that may use only the ones below it (as FFmpeg's
        // libavformat, libavcodec and libavfilter are libraries). Errors, media time and
        // geometry, and FFmpeg wrapped: assets, decoders, encoders, muxers, images.
        .target(name: "MoonreelMedia", dependencies: ["MoonreelPlatform", "CMoonFFmpeg", "CMoonAVShim", "CMoonPangoCairo"],
                path: "Sources/Media"),
        // The edit model from the inside out: timing, cues, filters, animation, layers and
        // the compositions, video compositions and audio mixes made of them.
        .target(name: "MoonreelComposition", dependencies: ["MoonreelMedia", "MoonreelPlatform", "CMoonFFmpeg"],
                path: "Sources/Composition"),
        // The render core: layer, text, filter and audio renderers and the compositor that
        // gives a composition's pictures and sound, with no file anywhere.
        .target(name: "MoonreelRender", dependencies: ["MoonreelComposition", "MoonreelMedia", "MoonreelPlatform", "CMoonFFmpeg", "CMoonAVShim", "CMoonPangoCairo"],
                path: "Sources/Render"),
        // Measures of sound and pictures (beats, onsets, loudness, scenes), cached by file.
        .target(name: "MoonreelAnalysis", dependencies: ["MoonreelRender", "MoonreelComposition", "MoonreelMedia", "MoonreelPlatform", "CMoonFFmpeg"],
                path: "Sources/Analysis"),
        // The top of the engine: edit helpers, export, capture and the library; re-exports
        // the targets below, so `import MoonreelEngine` brings them all.
        .target(name: "MoonreelEngine", dependencies: ["MoonreelAnalysis", "MoonreelRender", "MoonreelComposition", "MoonreelMedia",
                                                       "MoonreelPlatform", "CMoonFFmpeg", "CMoonAVShim"],
                path: "Sources/Engine"),
        // Timelines for editors (OpenTimelineIO, FCPXML, EDL) made from and into the engine's
        // compositions. A module of its own because it reads XML with FoundationXML, whose C
        // modules beside FFmpeg's in one module hide FFmpeg's enum constants from it.
        .target(name: "MoonreelInterchange", dependencies: ["MoonreelEngine", "MoonreelPlatform"], path: "Sources/Interchange"),
        // Lua with limits, sandboxed effects and typed app functions; knows nothing of video.
        .target(name: "MoonreelScriptHost", dependencies: ["MoonreelPlatform", "CMoonLua", "CMoonLuaShim"],
                path: "Sources/ScriptHost", resources: [.embedInCode("Lua")]),
        // The `av` module (AVFoundation-shaped bindings of the engine) and the host apps use.
        .target(name: "MoonreelBindings", dependencies: ["MoonreelEngine", "MoonreelInterchange", "MoonreelScriptHost", "CMoonLua", "CMoonLuaShim"],
                path: "Sources/Bindings", resources: [.embedInCode("Bundled/effects"), .embedInCode("Bundled/preview.lua"), .embedInCode("Bundled/transition.lua")]),
        .target(name: "MoonreelREPL", dependencies: ["MoonreelBindings", "MoonreelScriptHost", "MoonreelEngine", "MoonreelPlatform", "CMoonLua", "CMoonLuaShim", "CMoonEdit"],
                path: "Sources/REPL", resources: [.embedInCode("Lua")]),
        // The live preview (`moonreel studio`, the REPL's :studio): an HTTP and WebSocket
        // server on SwiftNIO and the page it serves. A target of its own so apps that embed
        // MoonreelBindings link no web server.
        .target(name: "MoonreelStudio", dependencies: [
            "MoonreelBindings", "MoonreelEngine", "MoonreelPlatform",
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOWebSocket", package: "swift-nio"),
        ], path: "Sources/Studio", resources: [.embedInCode("Page")]),
        // Plans batches and chunked renders, writes Slurm job scripts and runs child processes;
        // knows nothing of Lua (the command reads a template's parameters and hands them over).
        .target(name: "MoonreelFarm", dependencies: ["MoonreelEngine", "MoonreelPlatform"], path: "Sources/Farm"),
        .executableTarget(name: "moonreel", dependencies: [
            "MoonreelFarm", "MoonreelBindings", "MoonreelREPL", "MoonreelStudio", "MoonreelEngine", "MoonreelInterchange", "MoonreelScriptHost", "MoonreelPlatform",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], resources: [.embedInCode("Bundled/examples"), .embedInCode("Bundled/templates")],
        // The command keeps less of itself resident while it renders: packed relative
        // relocations (lld's RELR: 38 KiB instead of gold's 2.2 MiB table, read at every
        // start) and no dynamic symbol table of its own (nothing loads against the command;
        // 1.3 MiB less for the loader to search).
        linkerSettings: [.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                                       "-Xlinker", "--no-export-dynamic"])]),
        .testTarget(name: "EngineTests", dependencies: ["MoonreelEngine", "MoonreelAnalysis", "MoonreelRender", "MoonreelComposition", "MoonreelMedia", "MoonreelPlatform", "CMoonAVShim", "CMoonFFmpeg", "TestSupport"]),
        .testTarget(name: "ScriptHostTests", dependencies: ["MoonreelScriptHost"]),
        .testTarget(name: "FarmTests", dependencies: ["MoonreelFarm"]),
        // The av module's readers and errors in process: no binary, no media.
        .testTarget(name: "BindingsTests", dependencies: ["MoonreelBindings", "MoonreelScriptHost"]),
        // The studio's routes as a pure function of the request: no server, socket or script run.
        .testTarget(name: "StudioRoutesTests", dependencies: ["MoonreelStudio", .product(name: "NIOHTTP1", package: "swift-nio")]),
        // The pty driver is run from the checkout by the REPL tests, not built.
        .testTarget(name: "MoonreelTests", dependencies: ["MoonreelBindings", "MoonreelREPL", "MoonreelEngine", "MoonreelScriptHost", "TestSupport"], exclude: ["Fixtures/pty_session.py", "Fixtures/pieces.lua"]),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
    ]
)
