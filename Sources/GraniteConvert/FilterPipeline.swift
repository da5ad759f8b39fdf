import GraniteMedia
import Marble

/// The `--filter` chain of `granite convert`: Marble filters on the GPU layer (Vulkan; lavapipe
/// when there is no GPU), consecutive ones fused into one submission, and relative resizes.
///
/// ```
///  decoded Image ─► [Marble chain: filter 1 | filter 2 | …] ─► [resize=50%] ─► [Marble chain] ─► encode
///                    one upload, one command buffer, one download per run of Marble filters
/// ```
/// Specs use Marble's syntax (`blur:sigma=2`, `sharpen:amount=1.5`, see `granite filters`); a
/// value without its name (`sharpen=1`) is refused with the spelling that runs it. `resize=50%|WxH|fit:WxH`
/// is the one step of its own: its size follows each image, where a Marble chain's is fixed, and it
/// is the shared resampler (GraniteMedia `Resampler`, alpha premultiplied), whose tables Marble's
/// `resize` shader reads too. With `cpu`, Marble filters run their CPU reference: the same
/// arithmetic and tables as their shaders (sharpen's Q8 gaussian weights, for one).
///
/// This is the one pipeline type: a Marble `FilterChain` is one run of GPU filters in it, and
/// frames kept in flight on the device are Marble's `ChainFrame`s, not a pipeline of their own.
public struct FilterPipeline: ImageProcessor {
    enum Stage: Sendable {
        case marble(FilterChain)
        case resize(ResizeSpec)
    }

    let stages: [Stage]
    private let useCPU: Bool
    /// What the pipeline does, for the manifest (a changed chain redoes outputs).
    public let fingerprint: String

    /// A pipeline that passes images through unchanged.
    public init() {
        (stages, useCPU, fingerprint) = ([], false, "")
    }

    /// Parses every spec; `cpu` runs Marble filters on their CPU reference instead of Vulkan.
    public init(specs: [String], cpu: Bool = false) throws(ConvertError) {
        var stages: [Stage] = []
        var pending: [FilterSpec] = []
        var prints: [String] = []
        func flush() throws(ConvertError) {
            guard !pending.isEmpty else { return }
            do {
                let chain = try FilterChain(pending)
                stages.append(.marble(chain))
                prints.append((cpu ? "cpu:" : "") + chain.fingerprint)
            } catch {
                throw .gpu(reason: "\(error)")
            }
            pending = []
        }
        for text in specs {
            if let size = try FilterPipeline.resize(text) {
                try flush()
                stages.append(.resize(size))
                prints.append("resize=\(size)")
                continue
            }
            do {
                pending.append(contentsOf: try FilterSpec.parseChain(text))
            } catch {
                throw .badOption(option: "--filter", value: text, reason: "\(error)")
            }
        }
        try flush()
        self.stages = stages
        self.useCPU = cpu
        fingerprint = prints.joined(separator: ",")
    }

    /// The size of a `resize=50%|WxH|fit:WxH` spec, or nil for any other spec.
    static func resize(_ text: String) throws(ConvertError) -> ResizeSpec? {
        guard text.lowercased().hasPrefix("resize=") else { return nil }
        let value = String(text.dropFirst("resize=".count))
        if value.lowercased().hasPrefix("fit:") { return try ResizeSpec.parse(String(value.dropFirst(4)), fit: true) }
        return try ResizeSpec.parse(value)
    }

    /// Runs the stages in order (a `gray8` image enters a Marble chain as `rgba8`, as the decoders
    /// hand gray pictures over anyway).
    public func process(_ image: Image) throws -> Image {
        var current = image
        for stage in stages {
            switch stage {
            case let .marble(chain):
                if current.format == .gray8 { current = try ColorConversion.rgba(current) }
                current = useCPU ? try chain.applyCPU(current) : try chain.apply(current)
            case let .resize(spec):
                let size = spec.targetSize(width: current.width, height: current.height)
                current = try Resampler.resize(current, width: size.width, height: size.height,
                                               filter: ConvertSettings.defaultResizeFilter, alpha: .premultiplied)
            }
        }
        return current
    }

    /// No stages: the pixels pass through unchanged.
    public var isIdentity: Bool { stages.isEmpty }

    /// Whether any stage runs on the GPU layer.
    public var usesGPU: Bool {
        !useCPU && stages.contains { if case .marble = $0 { true } else { false } }
    }
}
