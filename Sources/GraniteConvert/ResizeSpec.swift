/// How `--resize` / `--fit` size the output.
public enum ResizeSpec: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Scale both sides by a factor (`50%` is 0.5).
    case scale(Double)
    /// Exactly this size (`800x600`), aspect ratio not kept.
    case exact(width: Int, height: Int)
    /// The largest size that fits inside the box, aspect ratio kept.
    case fit(width: Int, height: Int)

    /// Parses `50%`, `0.5x`, or `WxH` (as `exact`, or as `fit` when `fit` is true).
    public static func parse(_ text: String, fit: Bool = false) throws(ConvertError) -> ResizeSpec {
        let option = fit ? "--fit" : "--resize"
        if !fit, text.hasSuffix("%") {
            guard let p = Double(text.dropLast()), p > 0, p <= 1000 else {
                throw .badOption(option: option, value: text, reason: "expected a percentage in (0, 1000]")
            }
            return .scale(p / 100)
        }
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (1...65535).contains(w), (1...65535).contains(h) else {
            throw .badOption(option: option, value: text, reason: fit ? "expected WxH, e.g. 1024x768" : "expected N% or WxH, e.g. 50% or 1024x768")
        }
        return fit ? .fit(width: w, height: h) : .exact(width: w, height: h)
    }

    /// The output size for a source of `width`×`height` (at least 1×1).
    public func targetSize(width: Int, height: Int) -> (width: Int, height: Int) {
        switch self {
        case let .scale(s):
            return (max(1, Int((Double(width) * s).rounded())), max(1, Int((Double(height) * s).rounded())))
        case let .exact(w, h):
            return (w, h)
        case let .fit(w, h):
            let s = min(Double(w) / Double(width), Double(h) / Double(height))
            return (max(1, min(w, Int((Double(width) * s).rounded()))), max(1, min(h, Int((Double(height) * s).rounded()))))
        }
    }

    public var description: String {
        switch self {
        case let .scale(s): return "\(formatPercent(s * 100))%"
        case let .exact(w, h): return "\(w)x\(h)"
        case let .fit(w, h): return "fit \(w)x\(h)"
        }
    }
}

/// `50`, `12.5` — no trailing `.0`.
func formatPercent(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
}

extension ResizeSpec: Codable {
    /// Encoded as its text (`50%`, `800x600`, `fit 800x600`), the way the command line spells it.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            self = text.hasPrefix("fit ") ? try ResizeSpec.parse(String(text.dropFirst(4)), fit: true) : try ResizeSpec.parse(text)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
