// swift-tools-version:6.0
//
// Granite for Linux — one module per concern.
//
//   V4L2 / folder / test pattern ─► GraniteCapture (relays) ─quiet─► Marble (Vulkan, GraniteGPU)
//        ─► GraniteML (ONNX on OpenBLAS) ─► GraniteCodecs (disk) / GraniteIPFS (Kubo RPC)
//   all wired by the `Granite` event core (Components, Centers, Expeditions, Relays).
//
// C lives only in `C*` targets. Programs (`granite`, `granite-cam`, `granite-bench`) are thin.
import PackageDescription

let package = Package(
    name: "Granite",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Granite", targets: ["Granite"]),
        .library(name: "GraniteTesting", targets: ["GraniteTesting"]),
        .library(name: "GraniteMedia", targets: ["GraniteMedia"]),
        .executable(name: "granite", targets: ["granite"]),
        .executable(name: "granite-sample", targets: ["granite-sample"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
    ],
    targets: [
        // MARK: Event core (issue 2) — pure Swift, no C, no media.
        .target(name: "Granite", dependencies: [.product(name: "Logging", package: "swift-log")]),
        .target(name: "GraniteTesting", dependencies: ["Granite"]),
        .testTarget(name: "GraniteTests", dependencies: ["Granite", "GraniteTesting"]),
        .executableTarget(name: "granite-sample", dependencies: ["Granite"], path: "samples/counter"),

        // MARK: Shared media types (frames, images, pixel formats) — pure Swift.
        .target(name: "GraniteMedia"),
        .testTarget(name: "GraniteMediaTests", dependencies: ["GraniteMedia"]),

        // MARK: Programs — thin over the library.
        .executableTarget(name: "granite", dependencies: [
            "Granite", "GraniteMedia",
            "GraniteCodecs", "GraniteConvert",
            "GraniteML",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "granite-bench", dependencies: [
            "Granite",
            "GraniteCodecs", "GraniteConvert",
            "GraniteMedia", "GraniteML",
            .product(name: "OpenCombine", package: "OpenCombine"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // MARK: Codecs and `granite convert` (issue 4) — TurboJPEG + libpng simplified API.
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg",
                       providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng16", providers: [.apt(["libpng-dev"])]),
        .target(name: "GraniteCodecs", dependencies: ["GraniteMedia", "CTurboJPEG", "CPNG"]),
        .target(name: "GraniteConvert", dependencies: ["GraniteMedia", "GraniteCodecs"]),
        .testTarget(name: "GraniteCodecsTests", dependencies: ["GraniteCodecs", "GraniteMedia"]),
        .testTarget(name: "GraniteConvertTests", dependencies: ["GraniteConvert", "GraniteCodecs", "GraniteMedia"]),

        // MARK: GraniteML (issue 5) — ONNX models on OpenBLAS, and the depth estimator.
        .systemLibrary(name: "CBLAS", pkgConfig: "openblas", providers: [.apt(["libopenblas-dev"])]),
        .target(name: "GraniteML", dependencies: [
            "CBLAS", "GraniteMedia",
            .product(name: "SwiftProtobuf", package: "swift-protobuf"),
        ]),
        .testTarget(name: "GraniteMLTests", dependencies: ["GraniteML", "GraniteMedia"]),
    ]
)
