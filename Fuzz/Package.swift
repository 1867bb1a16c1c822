// swift-tools-version: 6.1
// Fuzz targets for Moonreel's parsers and boundaries, in one libFuzzer executable built
// with AddressSanitizer (FUZZ_TARGET picks the target; see Sources/MoonreelFuzz/Driver.swift):
//   tools/fuzz.sh            a short bounded run of each (CI)
//   tools/fuzz.sh 3600       an hour each
// Each target's seed corpus is in corpus/NAME; findings are written to .build-fuzz/findings.
import Foundation
import PackageDescription

// The package above, whatever its folder is called (its identity is the folder's name).
let moonreel = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "MoonreelFuzz",
    dependencies: [.package(path: "..")],
    targets: [
        .executableTarget(name: "MoonreelFuzz", dependencies: [
            .product(name: "MoonreelBindings", package: moonreel), .product(name: "MoonreelEngine", package: moonreel),
            .product(name: "MoonreelStudio", package: moonreel),
        ]),
    ]
)
