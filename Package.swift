// swift-tools-version:6.1
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
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Granite", targets: ["Granite"]),
        .library(name: "GraniteTesting", targets: ["GraniteTesting"]),
        .library(name: "GraniteMedia", targets: ["GraniteMedia"]),
        .executable(name: "granite", targets: ["granite"]),
        .executable(name: "granite-sample", targets: ["granite-sample"]),
        .executable(name: "granite-cam", targets: ["granite-cam"]),
        .library(name: "GraniteGPU", targets: ["GraniteGPU"]),
        .library(name: "Marble", targets: ["Marble"]),
        .library(name: "GraniteCodecs", targets: ["GraniteCodecs"]),
        .library(name: "GraniteML", targets: ["GraniteML"]),
        .library(name: "GraniteMLVulkan", targets: ["GraniteMLVulkan"]),
        .library(name: "GraniteCapture", targets: ["GraniteCapture"]),
        .library(name: "GraniteIPFS", targets: ["GraniteIPFS"]),
    ],
    // Exact versions of the direct dependencies (what the project tested; transitive ones are in
    // Package.versions, checked by scripts/check-versions): they resolve the same from any clone,
    // also without the committed Package.resolved (whose commit ids are this machine's package
    // mirror's, not upstream's; no build forces it).
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
        .package(url: "https://github.com/apple/swift-collections", exact: "1.6.0"),
        .package(url: "https://github.com/pointfreeco/swift-custom-dump", exact: "1.7.3"),
        .package(url: "https://github.com/pointfreeco/xctest-dynamic-overlay", exact: "1.13.1"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),  // convert manifest, IPFS CIDs
        // IPFS (issue 7)
        // The trait exposes response trailers (Kubo reports late errors in `X-Stream-Error`); traits need tools 6.1.
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0", traits: ["UnstableHTTPAPIsSupport"]),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-protobuf", exact: "1.39.0"),  // ONNX (generated code committed)
        // IPFS Pinning Service client (issue 17): generated code committed (scripts/gen-pinning-client.sh).
        .package(url: "https://github.com/apple/swift-openapi-runtime", exact: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", exact: "1.5.0"),
    ],
    targets: [
        // The one lock (`Lock`, `Locked<Value>`: pthread mutexes, which ThreadSanitizer sees).
        .target(name: "GraniteSync"),
        // MARK: Event core (issue 2) — pure Swift, no C, no media.
        .target(name: "Granite", dependencies: [
            "GraniteSync",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "DequeModule", package: "swift-collections"),
        ]),
        // Runs other programs (tests, test servers, the benchmark): output, status, peak memory, CPU time.
        .target(name: "GraniteProcess", dependencies: ["GraniteMedia"]),
        .testTarget(name: "GraniteProcessTests", dependencies: ["GraniteProcess"]),
        .target(name: "GraniteTesting", dependencies: ["GraniteSync",
            "Granite", "GraniteProcess",
            .product(name: "CustomDump", package: "swift-custom-dump"),
            .product(name: "IssueReporting", package: "xctest-dynamic-overlay"),
            // Without it, on Linux, reportIssue in a Swift Testing test is only printed, never recorded.
            .product(name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay"),
        ]),
        .testTarget(name: "GraniteTests", dependencies: ["GraniteSync", "Granite", "GraniteTesting"]),
        .executableTarget(name: "granite-sample", dependencies: ["Granite"], path: "samples/counter"),

        // MARK: Shared media types (frames, images, pixel formats) — pure Swift.
        .target(name: "GraniteMedia", dependencies: ["GraniteSync"]),
        .testTarget(name: "GraniteMediaTests", dependencies: ["GraniteMedia", "GraniteCodecs", "GraniteTesting"]),

        // MARK: Programs — thin over the library.
        .executableTarget(name: "granite", dependencies: [
            "Granite", "GraniteMedia",
            "GraniteCodecs", "GraniteConvert",
            "Marble", "GraniteGPU",
            "GraniteIPFS", "GranitePinOptions",
            "GraniteML", "GraniteMLVulkan",
            "GraniteCapture",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .executableTarget(name: "granite-bench", dependencies: ["GraniteSync",
            "Granite", "GraniteMedia",
            "GraniteCodecs", "GraniteConvert",
            "Marble", "GraniteGPU",
            "GraniteIPFS", "GraniteIPFSTesting", "GraniteProcess",
            "GraniteML", "GraniteMLVulkan",
            "GraniteCam", "GraniteCapture",
            .product(name: "OpenCombine", package: "OpenCombine"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // MARK: Codecs and `granite convert` (issue 4) — TurboJPEG + libpng simplified API.
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg",
                       providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CPNG", pkgConfig: "libpng16", providers: [.apt(["libpng-dev"])]),
        // Color management and image metadata (issue 16): ICC transforms, PNG chunk (de)compression.
        .systemLibrary(name: "CLCMS2", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebp", providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(name: "CAVIF", pkgConfig: "libavif", providers: [.apt(["libavif-dev"])]),
        .systemLibrary(name: "CHEIF", pkgConfig: "libheif", providers: [.apt(["libheif-dev"])]),
        .systemLibrary(name: "CGIF", providers: [.apt(["libgif-dev"])]),
        .systemLibrary(name: "CTIFF", pkgConfig: "libtiff-4", providers: [.apt(["libtiff-dev"])]),
        .systemLibrary(name: "CJXL", pkgConfig: "libjxl", providers: [.apt(["libjxl-dev"])]),
        .target(name: "GraniteCodecs", dependencies: ["GraniteMedia", "CTurboJPEG", "CPNG", "CLCMS2", "CZlib", "CDeflate", "CWebP", "CAVIF",
                                                      "CHEIF", "CGIF", "CTIFF", "CJXL"]),
        .target(name: "GraniteConvert", dependencies: [
            "GraniteMedia", "GraniteCodecs", "Marble", "GraniteML", .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .testTarget(name: "GraniteCodecsTests", dependencies: ["GraniteCodecs", "GraniteMedia", "GraniteTesting"]),
        .testTarget(name: "GraniteConvertTests", dependencies: ["GraniteConvert", "GraniteCodecs", "GraniteMedia", "GraniteTesting", "CLCMS2",
                                                               "GraniteIPFS", "GraniteIPFSTesting"]),
        // MARK: Vulkan compute and the Marble filters (issue 3).
        .systemLibrary(name: "CVulkan", pkgConfig: "vulkan", providers: [.apt(["libvulkan-dev"])]),
        .target(name: "GraniteGPU", dependencies: ["CVulkan", "GraniteMedia"]),
        .plugin(name: "SPIRVEmbed", capability: .buildTool()),
        .target(name: "Marble", dependencies: ["GraniteSync", "GraniteGPU", "GraniteMedia", "GraniteCodecs"], plugins: ["SPIRVEmbed"]),
        .testTarget(name: "GraniteGPUTests", dependencies: ["GraniteGPU", "GraniteTesting"]),
        .testTarget(name: "MarbleTests", dependencies: ["Marble", "GraniteGPU", "GraniteMedia", "GraniteCodecs", "GraniteTesting"]),
        // MARK: IPFS (issue 7) — local CIDs, Kubo RPC client, pin journal.
        .target(name: "GraniteIPFS", dependencies: ["GraniteSync",
            "GraniteMedia",   // the one atomic writer (AtomicWriter) and EINTR helper (SystemCall)
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
        ], exclude: ["PinningService/openapi.yaml", "PinningService/openapi-generator-config.yaml"]),
        // The pin options (--api, --api-auth, --pin-journal, --pin-wait) shared by granite and granite-cam.
        .target(name: "GranitePinOptions", dependencies: [
            "GraniteIPFS", .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // Launches kubo-standin (loopback Kubo RPC) for the tests and granite-bench; no IPFS code.
        .target(name: "GraniteIPFSTesting", dependencies: ["GraniteProcess"]),
        .testTarget(name: "GraniteIPFSTests", dependencies: ["GraniteIPFS", "GraniteIPFSTesting", "GraniteTesting", "GranitePinOptions"]),

        // MARK: GraniteML (issue 5) — ONNX models on OpenBLAS, and the depth estimator.
        .systemLibrary(name: "CBLAS", pkgConfig: "openblas", providers: [.apt(["libopenblas-dev"])]),
        // C kernels (quantised GEMM / depthwise / upsampling), chosen at run time by CPUID. Always
        // optimised, also in debug builds, so the tests that run them stay quick.
        .target(name: "CGraniteKernels", cSettings: [.unsafeFlags(["-O2"])]),
        .target(name: "GraniteML", dependencies: ["GraniteSync",
            "CBLAS", "CGraniteKernels", "GraniteMedia",
            .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            .product(name: "Crypto", package: "swift-crypto"),  // the default model's SHA-256, checked at load
        ]),
        // The Vulkan execution provider: the same optimised graph as recorded compute dispatches
        // (its own module so GraniteML keeps no Vulkan dependency; shaders in Shaders/GraniteMLVulkan).
        .target(name: "GraniteMLVulkan", dependencies: ["GraniteSync", "GraniteML", "GraniteGPU", "GraniteMedia"], plugins: ["SPIRVEmbed"]),
        .testTarget(name: "GraniteMLVulkanTests", dependencies: ["GraniteMLVulkan", "GraniteML", "GraniteGPU", "GraniteTesting",
                                                               .product(name: "SwiftProtobuf", package: "swift-protobuf")]),
        .testTarget(name: "GraniteMLTests", dependencies: ["GraniteSync",
            "GraniteML", "CGraniteKernels", "GraniteMedia", "GraniteTesting", .product(name: "Crypto", package: "swift-crypto"),  // test models' SHA-256
        ]),

        // MARK: Capture (issue 6) — V4L2 through libv4l2, test pattern, folder; granite-cam.
        .systemLibrary(name: "CV4L2", path: "Sources/CV4L2", pkgConfig: "libv4l2",
                       providers: [.apt(["libv4l-dev"])]),
        // PipeWire camera in and out (libpipewire; SPA pods and method macros in a small shim).
        .systemLibrary(name: "CPipeWire", path: "Sources/CPipeWire", pkgConfig: "libpipewire-0.3",
                       providers: [.apt(["libpipewire-0.3-dev"])]),
        .systemLibrary(name: "CALSA", path: "Sources/CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .target(name: "GraniteCapture", dependencies: ["GraniteSync", "CV4L2", "CPipeWire", "CALSA", "GraniteMedia"]),
        .executableTarget(name: "granite-v4l2-check", dependencies: ["GraniteCapture"]),
        .executableTarget(name: "granite-pw-check", dependencies: ["GraniteCapture", "GraniteMedia"]),
        .testTarget(name: "GraniteCaptureTests", dependencies: ["GraniteCapture", "GraniteMedia", "GraniteTesting"]),
        // MARK: Recording (issue 36) — FFmpeg's libraries in-process (encoders, muxers, resampler),
        // opened when a recording starts (dlopen, Sources/CFFmpeg/loader.c), not linked: the programs
        // start without FFmpeg (issue 37). Headers: Debian's libavcodec-dev, libavformat-dev, ....
        .target(name: "CFFmpeg"),
        .target(name: "GraniteRecorder", dependencies: ["CFFmpeg", "GraniteMedia"]),
        .testTarget(name: "GraniteRecorderTests", dependencies: ["GraniteRecorder", "GraniteMedia", "GraniteProcess", "GraniteTesting"]),
        .systemLibrary(name: "CMalloc", path: "Sources/CMalloc"),
        .target(name: "GraniteCam", dependencies: ["GraniteSync",
            "CMalloc", "Granite", "GraniteCapture", "GraniteMedia", "GraniteCodecs", "Marble", "GraniteML", "GraniteMLVulkan", "GraniteIPFS",
            "GraniteRecorder",
            .product(name: "Crypto", package: "swift-crypto"),  // the preview page's CSP hashes
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),
        .executableTarget(name: "granite-cam", dependencies: [
            "GraniteCam", "GraniteCapture", "GraniteIPFS", "GranitePinOptions", "GraniteMLVulkan",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .testTarget(name: "GraniteCamTests", dependencies: ["GraniteSync", "GraniteCam", "GraniteCapture", "Granite", "GraniteMedia", "GraniteCodecs", "GraniteTesting",
                                                           "GraniteIPFS", "GraniteIPFSTesting", "GraniteProcess", "Marble", "GraniteGPU",
                                                           "GraniteML", "GraniteMLVulkan"]),
    ]
)

// `GRANITE_PACKAGE=core`: only the event core, what its tests need and its tests — what the
// sanitizer tier (scripts/tiers/25-sanitizers.sh) builds with ThreadSanitizer and AddressSanitizer.
if Context.environment["GRANITE_PACKAGE"] == "core" {
    let targets: Set<String> = ["GraniteSync", "Granite", "GraniteMedia", "GraniteProcess", "GraniteTesting", "GraniteTests"]
    let packages = ["swift-log", "swift-collections", "swift-custom-dump", "xctest-dynamic-overlay"]
    package.targets.removeAll { !targets.contains($0.name) }
    package.products.removeAll { !["Granite", "GraniteTesting"].contains($0.name) }
    package.dependencies.removeAll { dependency in
        guard case let .sourceControl(_, location, _) = dependency.kind else { return false }
        return !packages.contains { location.hasSuffix("/" + $0) }
    }
}

// `GRANITE_PACKAGE=cam`: granite-cam's library and its tests with everything they depend on, and
// the core's tests — what the sanitizer tier builds when it also checks granite-cam's components
// (`GRANITE_SANITIZE_CAM=1`; a longer build: NIO, swift-crypto, the codecs and Vulkan parts).
if Context.environment["GRANITE_PACKAGE"] == "cam" {
    var keep: Set<String> = []
    var next = ["GraniteCamTests", "GraniteTests"] + package.targets.filter { $0.type == .plugin }.map(\.name)
    while let name = next.popLast() {
        guard keep.insert(name).inserted, let target = package.targets.first(where: { $0.name == name }) else { continue }
        for dependency in target.dependencies {
            switch dependency {
            case let .targetItem(name, _), let .byNameItem(name, _): next.append(name)
            default: break
            }
        }
    }
    package.targets.removeAll { !keep.contains($0.name) }
    package.products.removeAll { !["Granite", "GraniteTesting"].contains($0.name) }
}
