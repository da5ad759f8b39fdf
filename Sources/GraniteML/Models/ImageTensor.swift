import GraniteMedia

/// Image → tensor conversion for model input: antialiased resize (the shared ``Resampler``,
/// bilinear as Pillow's), normalisation and layout.
package enum ImageTensor {
    /// The image's pixels as interleaved R, G, B floats in 0...255.
    static func rgb(_ image: Image) throws(MLError) -> [Float] {
        let n = image.pixelCount
        var out = [Float](repeating: 0, count: n * 3)
        let bytes = image.bytes
        switch image.format {
        case .rgba8:
            for i in 0..<n { for c in 0..<3 { out[i * 3 + c] = Float(bytes[i * 4 + c]) } }
        case .rgb24:
            for i in 0..<(n * 3) { out[i] = Float(bytes[i]) }
        case .gray8:
            for i in 0..<n { let v = Float(bytes[i]); out[i * 3] = v; out[i * 3 + 1] = v; out[i * 3 + 2] = v }
        default:
            throw .unsupportedImage(reason: "pixel format \(image.format); use rgba8, rgb24 or gray8")
        }
        return out
    }

    /// The model input tensor for `image`, per the description.
    static func input(_ image: Image, _ d: ModelDescription.Input) throws(MLError) -> Tensor {
        let (w, h) = (d.width, d.height)
        guard [.rgba8, .rgb24, .gray8].contains(image.format) else {
            throw .unsupportedImage(reason: "pixel format \(image.format); use rgba8, rgb24 or gray8")
        }
        // Resized as 8-bit pixels first: never a float buffer of the whole photo.
        let small: Image
        do { small = try Resampler.resize(image, width: w, height: h, filter: .bilinear) } catch {
            throw .unsupportedImage(reason: "\(error)")
        }
        let rgb = try rgb(small)
        var values = [Float](repeating: 0, count: w * h * 3)
        let range = d.dtype.range
        for i in 0..<(w * h) {
            for c in 0..<3 {
                var v = (rgb[i * 3 + c] * d.pixelScale - d.mean[c]) / d.std[c]
                if let range { v = min(max(v.rounded(.toNearestOrEven), range.lowerBound), range.upperBound) }
                values[d.layout == .nhwc ? i * 3 + c : c * w * h + i] = v
            }
        }
        let shape = d.layout == .nhwc ? [1, h, w, 3] : [1, 3, h, w]
        return try Tensor(shape: shape, values: values, elementType: d.dtype)
    }

    /// The single plane of a [1, H, W], [1, 1, H, W] or [1, H, W, 1] output as (width, height, values).
    static func plane(_ t: Tensor) throws(MLError) -> (width: Int, height: Int, values: [Float]) {
        let (w, h) = try planeSize(t.shape)
        return (w, h, t.values)
    }

    /// The width and height of an output of `shape` read as one image plane (as ``plane(_:)``
    /// reads it; a GPU backend writing the plane on its device asks the same).
    package static func planeSize(_ s: [Int]) throws(MLError) -> (width: Int, height: Int) {
        guard s.filter({ $0 != 1 }).count == 2 else { throw .unexpectedOutput(reason: "expected one image plane, got shape \(s)") }
        if s.count == 4 && s[3] == 1 { return (s[2], s[1]) }
        return (s[s.count - 1], s[s.count - 2])
    }
}
