// swift-tools-version: 6.1
// An app that embeds Moonreel: it hosts user scripts in-process (see docs/embedding.md).
import PackageDescription

let package = Package(
    name: "LyricJobs",
    dependencies: [
        // In your app: .package(url: "https://github.com/…/moonreel", from: "0.1.0")
        .package(name: "Moonreel", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "LyricJobs",
            dependencies: [
                .product(name: "MoonreelBindings", package: "Moonreel"),
                .product(name: "MoonreelEngine", package: "Moonreel"),
            ],
            resources: [.copy("scripts")]),
    ]
)
