import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The debug switches: developer and test knobs that are not options of any program, in ONE
/// environment variable read once, when first asked (a frame never reads the environment).
///
/// `GRANITE_DEBUG` takes a comma-separated list:
///
/// | switch       | what it does                                                                      | old variable (still read) |
/// |--------------|-----------------------------------------------------------------------------------|---------------------------|
/// | `gpu-yuv`    | a GPU chain converts its result to YUV on the device even on a CPU driver (lavapipe) | `GRANITE_GPU_YUV=1`     |
/// | `overlap`    | start the next frame while this one computes even on a CPU driver                 | `GRANITE_GPU_OVERLAP=1`   |
/// | `no-overlap` | finish each frame before the next even on a GPU                                   | `GRANITE_GPU_OVERLAP=0`   |
/// | `staging`    | every upload and read-back goes through staging buffers (a discrete GPU's way)   | `GRANITE_GPU_STAGING=1`   |
/// | `yuv-copy`   | a sink's YUV comes back into an array and is copied, not read in place            | `GRANITE_YUV_IN_PLACE=0`  |
/// | `device-input` | a live run's model input is made on the device even on a CPU driver (lavapipe)  |                           |
///
/// Unknown names are ignored (listed by ``unknown``). Tests flip switches in-process with
/// ``override(_:)``.
public struct GraniteDebug: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Convert a GPU chain's result to YUV on the device even on a CPU driver.
    public static let gpuYUV = GraniteDebug(rawValue: 1 << 0)
    /// Overlap frames (submit the next before reading this one back) even on a CPU driver.
    public static let overlap = GraniteDebug(rawValue: 1 << 1)
    /// Never overlap frames, even on a GPU.
    public static let noOverlap = GraniteDebug(rawValue: 1 << 2)
    /// Every upload and read-back through staging buffers, as on a discrete GPU.
    public static let staging = GraniteDebug(rawValue: 1 << 3)
    /// A sink's YUV comes back into an array first (the way before sinks read in place).
    public static let yuvCopy = GraniteDebug(rawValue: 1 << 4)
    /// Make a live run's model input on the device even on a CPU driver.
    public static let deviceInput = GraniteDebug(rawValue: 1 << 5)

    /// Each switch's name in `GRANITE_DEBUG`.
    public static let names: [(name: String, value: GraniteDebug)] = [
        ("gpu-yuv", .gpuYUV), ("overlap", .overlap), ("no-overlap", .noOverlap), ("staging", .staging), ("yuv-copy", .yuvCopy),
        ("device-input", .deviceInput),
    ]

    /// The switches `GRANITE_DEBUG` and the old variables name. Pure: `environment` is a lookup.
    public static func parse(_ environment: (String) -> String?) -> (switches: GraniteDebug, unknown: [String]) {
        var switches: GraniteDebug = []
        var unknown: [String] = []
        for word in (environment("GRANITE_DEBUG") ?? "").split(separator: ",") {
            let name = String(word.filter { !$0.isWhitespace })
            guard !name.isEmpty else { continue }
            if let known = names.first(where: { $0.name == name }) { switches.insert(known.value) } else { unknown.append(name) }
        }
        if environment("GRANITE_GPU_YUV") == "1" { switches.insert(.gpuYUV) }
        switch environment("GRANITE_GPU_OVERLAP") {
        case "1": switches.insert(.overlap)
        case "0": switches.insert(.noOverlap)
        default: break
        }
        if environment("GRANITE_GPU_STAGING") == "1" { switches.insert(.staging) }
        if environment("GRANITE_YUV_IN_PLACE") == "0" { switches.insert(.yuvCopy) }
        return (switches, unknown)
    }

    private static let fromEnvironment = parse { name in getenv(name).map { String(cString: $0) } }
    private static let overridden = Atomic<UInt64>(0)   // bit 32: set; low 32 bits: the switches

    /// The switches in effect: `GRANITE_DEBUG` (and the old variables) as read at first use, or
    /// what ``override(_:)`` set. One atomic load after the first call.
    public static var current: GraniteDebug {
        let word = overridden.load(ordering: .relaxed)
        if word & (1 << 32) != 0 { return GraniteDebug(rawValue: UInt32(truncatingIfNeeded: word)) }
        return fromEnvironment.switches
    }

    /// Names in `GRANITE_DEBUG` that are no switch (a program may warn about them).
    public static var unknown: [String] { fromEnvironment.unknown }

    /// Sets the switches in effect (tests), nil: back to the environment's.
    package static func override(_ switches: GraniteDebug?) {
        overridden.store(switches.map { (1 << 32) | UInt64($0.rawValue) } ?? 0, ordering: .relaxed)
    }
}
