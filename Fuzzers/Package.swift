// swift-tools-version:6.1
//
// libFuzzer targets for Granite's parsers, kept out of the main package so that ordinary builds
// never see an `LLVMFuzzerTestOneInput`. Built and run by `scripts/tiers/70-fuzz.sh`:
//
//   swift build --package-path Fuzzers --scratch-path .build-fuzz -Xswiftc -sanitize=fuzzer,address
//
// Every folder `Sources/fuzz-NAME/` is a target (one `main.swift`: `fuzzMain { bytes in ... }`), with
// seeds in `Seeds/NAME/` and an optional libFuzzer dictionary `Dictionaries/NAME.dict`. A new
// target needs only that file and that seed folder: it links GraniteCodecs and GraniteMedia
// unless `dependencies` below names other modules for it.
import Foundation
import PackageDescription

let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
/// SwiftPM names a path dependency after its folder: the checkout's name, whatever it is.
let granite = root.deletingLastPathComponent().lastPathComponent.lowercased()

/// Modules each target links beyond the default (GraniteCodecs, GraniteMedia). Keep these small:
/// every Swift module here is built with the address sanitizer and coverage, so linking a
/// network stack would make the tier's build several times slower.
let dependencies: [String: [Target.Dependency]] = [
    "onnx": [.product(name: "GraniteML", package: granite)],
    "v4l2": [.product(name: "GraniteCapture", package: granite)],
    "image": [.product(name: "GraniteCapture", package: granite)],
    "kubo": ["KuboParsing"],
]

let names = ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path)) ?? [])
    .filter { $0.hasPrefix("fuzz-") }
    .map { String($0.dropFirst("fuzz-".count)) }
    .sorted()

let package = Package(
    name: "GraniteFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "..")],
    targets: names.map { name in
        .executableTarget(
            name: "fuzz-\(name)",
            dependencies: [
                .product(name: "GraniteCodecs", package: granite),
                .product(name: "GraniteMedia", package: granite),
                "FuzzSupport",
            ] + (dependencies[name] ?? []))
    } + [
        // `fuzzMain` and `LLVMFuzzerTestOneInput`: hands libFuzzer's inputs to a target's body.
        .target(name: "FuzzSupport", dependencies: ["CFuzzer"]),
        .target(name: "CFuzzer"),
        // GraniteIPFS's pure Kubo answer parsing, compiled from the very same files (symbolic
        // links into Sources/GraniteIPFS) so the fuzzer need not link NIO and AsyncHTTPClient.
        .target(name: "KuboParsing"),
    ]
)
