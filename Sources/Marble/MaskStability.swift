import GraniteMedia

/// How steady a person mask is over time (issue 38): the mean absolute change of the mask between
/// consecutive frames, 0…1 (0: not a pixel moved). On a still scene every change is flicker, so a
/// benchmark compares this for the model's raw masks and for the `background` filter's smoothed
/// ones (`background:mode=mask` shows them).
public enum MaskStability {
    /// The mean of |current − previous| over the pixels of two masks of one size (0…1 values).
    public static func meanAbsoluteChange(previous: [Float], current: [Float]) throws(MarbleError) -> Double {
        guard previous.count == current.count, !current.isEmpty else {
            throw .invalidDepth(reason: "masks of \(previous.count) and \(current.count) values cannot be compared")
        }
        var total: Double = 0
        for i in current.indices { total += Double(abs(current[i] - previous[i])) }
        return total / Double(current.count)
    }

    /// ``meanAbsoluteChange(previous:current:)`` of two masks as images of one size: `grayF32`
    /// (0…1), `gray8`, or `rgba8` with the mask in red (what `background:mode=mask` writes), the
    /// 8-bit ones read as value / 255.
    public static func meanAbsoluteChange(previous: Image, current: Image) throws(MarbleError) -> Double {
        guard previous.width == current.width, previous.height == current.height, previous.format == current.format else {
            throw .invalidDepth(reason: "a \(previous.width)x\(previous.height) \(previous.format) mask and a "
                + "\(current.width)x\(current.height) \(current.format) one cannot be compared")
        }
        return try meanAbsoluteChange(previous: values(previous), current: values(current))
    }

    static func values(_ mask: Image) throws(MarbleError) -> [Float] {
        switch mask.format {
        case .grayF32: return mask.floats()
        case .gray8: return mask.bytes.map { Float($0) / 255 }
        case .rgba8: return stride(from: 0, to: mask.bytes.count, by: 4).map { Float(mask.bytes[$0]) / 255 }
        default: throw .invalidDepth(reason: "a mask is grayF32, gray8 or rgba8, not \(mask.format)")
        }
    }
}
