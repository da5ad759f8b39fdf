import GraniteMedia

/// The processing seam of ``BatchConverter``: what happens to each image between decode and encode.
///
/// ``FilterPipeline`` (the `--filter` chain) is what `granite convert` plugs in; the seam is a
/// protocol so that a caller can measure or replace the whole step (the concurrency tests put a
/// probe here that counts the calls in flight). It is one level above Marble's filters: a step of
/// the batch takes a whole decoded image of any size and format, where a Marble filter is a pass
/// recorded into a chain's command buffer (with its CPU reference) and never seen from here.
/// Implementations are called from several worker tasks at once, so they must be thread-safe.
public protocol ImageProcessor: Sendable {
    /// Processes one image.
    func process(_ image: Image) throws -> Image
    /// A stable description of what the processor does; goes into the manifest so changed filters redo outputs.
    var fingerprint: String { get }
    /// Whether `process` returns its input unchanged (then `granite convert` may skip RGB pixels
    /// altogether, as a JPEG resized into JPEG does).
    var isIdentity: Bool { get }
}

extension ImageProcessor {
    public var isIdentity: Bool { false }
}
<<<<<<< HEAD
=======

/// One CPU filter, parsed from a `--filter` spec.
public enum CPUFilter: Sendable, Equatable, CustomStringConvertible {
    /// Unsharp mask (`sharpen` or `sharpen=AMOUNT`, amount in 0...10, default 1).
    case sharpen(amount: Double)
    /// Resize (`resize=50%`, `resize=WxH`, `resize=fit:WxH`).
    case resize(ResizeSpec)

    /// The filter names this stopgap understands.
    public static let names = ["sharpen", "resize"]

    /// Parses `name` or `name=value`.
    public static func parse(_ spec: String) throws(ConvertError) -> CPUFilter {
        let parts = spec.split(separator: "=", maxSplits: 1).map(String.init)
        let name = parts.first?.lowercased() ?? ""
        let value = parts.count > 1 ? parts[1] : nil
        switch name {
        case "sharpen":
            guard let value else { return .sharpen(amount: 1) }
            guard let a = Double(value), (0...10).contains(a) else {
                throw .badOption(option: "--filter", value: spec, reason: "sharpen amount must be a number in 0...10")
            }
            return .sharpen(amount: a)
        case "resize":
            guard let value else {
                throw .badOption(option: "--filter", value: spec, reason: "resize needs a size: resize=50%, resize=WxH or resize=fit:WxH")
            }
            if value.hasPrefix("fit:") { return .resize(try ResizeSpec.parse(String(value.dropFirst(4)), fit: true)) }
            return .resize(try ResizeSpec.parse(value))
        default:
            throw .badOption(option: "--filter", value: spec,
                             reason: "unknown filter '\(name)'; available now: \(names.joined(separator: ", "))")
        }
    }

    public var description: String {
        switch self {
        case let .sharpen(a): return "sharpen=\(a)"
        case let .resize(r): return "resize=\(r)"
        }
    }

    /// Runs this filter on the CPU.
    public func apply(_ image: Image) throws -> Image {
        switch self {
        case let .sharpen(amount):
            return try CPUSharpen.sharpen(image, amount: amount)
        case let .resize(spec):
            let size = spec.targetSize(width: image.width, height: image.height)
            return try Resampler.resize(image, width: size.width, height: size.height, filter: ConvertSettings.defaultResizeFilter,
                                        alpha: .premultiplied)
        }
    }
}

/// The stopgap filter chain: CPU filters applied in order.
public struct CPUFilterChain: ImageProcessor {
    /// The filters, in the order they run.
    public let filters: [CPUFilter]

    /// A chain of already-parsed filters.
    public init(_ filters: [CPUFilter]) { self.filters = filters }

    /// Parses each `--filter` spec.
    public init(specs: [String]) throws(ConvertError) {
        var filters = [CPUFilter]()
        for spec in specs { filters.append(try CPUFilter.parse(spec)) }
        self.filters = filters
    }

    /// Runs every filter in order.
    public func process(_ image: Image) throws -> Image {
        var current = image
        for filter in filters { current = try filter.apply(current) }
        return current
    }

    /// The filters' specs, comma-separated (`resize=50%,sharpen=1.0`).
    public var fingerprint: String { filters.map(\.description).joined(separator: ",") }

    public var isIdentity: Bool { filters.isEmpty }
}
>>>>>>> s10-convert
