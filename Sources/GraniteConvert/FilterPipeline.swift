import GraniteMedia
import Marble

/// The `--filter` chain of `granite convert`: Marble filters on the GPU layer (Vulkan; lavapipe
/// when there is no GPU), consecutive ones fused into one submission.
///
/// ```
///  decoded Image ─► [Marble chain: filter 1 | filter 2 | …] ─► [CPU stage] ─► [Marble chain] ─► encode
///                    one upload, one command buffer, one download per run of Marble filters
/// ```
/// Specs use Marble's syntax (`blur:sigma=2`, `sharpen:amount=1.5`, see `granite filters`). The
/// CPU spellings `sharpen=AMOUNT` and `resize=50%|WxH|fit:WxH` still work and run on the CPU.
public struct FilterPipeline: ImageProcessor {
    enum Stage: Sendable {
        case marble(FilterChain)
        case cpu(CPUFilter)
    }

    let stages: [Stage]
    /// What the pipeline does, for the manifest (a changed chain redoes outputs).
    public let fingerprint: String

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
            if let legacy = try FilterPipeline.legacy(text) {
                try flush()
                stages.append(.cpu(legacy))
                prints.append(legacy.description)
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

    private let useCPU: Bool

    /// A spec in the earlier CPU spelling (`sharpen=1.5`, `resize=50%`), or `nil`. A bare
    /// `sharpen` is Marble's.
    private static func legacy(_ text: String) throws(ConvertError) -> CPUFilter? {
        let lowered = text.lowercased()
        guard lowered.hasPrefix("sharpen=") || lowered.hasPrefix("resize=") else { return nil }
        return try CPUFilter.parse(text)
    }

    /// Runs the stages in order.
    public func process(_ image: Image) throws -> Image {
        var current = image
        for stage in stages {
            switch stage {
            case let .marble(chain):
                current = useCPU ? try chain.applyCPU(current) : try chain.apply(current)
            case let .cpu(filter):
                current = try filter.apply(current)
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
