import GraniteMedia

/// Image ↔ tensor conversions for model input and output: bilinear resampling, normalisation
/// and layout.
enum ImageTensor {
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

    /// Bilinear resampling (pixel centres aligned) of a `channels`-interleaved plane.
    static func resize(_ src: [Float], width: Int, height: Int, channels: Int, toWidth dw: Int, toHeight dh: Int) -> [Float] {
        if width == dw && height == dh { return src }
        var out = [Float](repeating: 0, count: dw * dh * channels)
        let sx = Float(width) / Float(dw), sy = Float(height) / Float(dh)
        for y in 0..<dh {
            let fy = min(max((Float(y) + 0.5) * sy - 0.5, 0), Float(height - 1))
            let y0 = Int(fy), y1 = min(y0 + 1, height - 1), ty = fy - Float(y0)
            for x in 0..<dw {
                let fx = min(max((Float(x) + 0.5) * sx - 0.5, 0), Float(width - 1))
                let x0 = Int(fx), x1 = min(x0 + 1, width - 1), tx = fx - Float(x0)
                for c in 0..<channels {
                    let a = src[(y0 * width + x0) * channels + c], b = src[(y0 * width + x1) * channels + c]
                    let d = src[(y1 * width + x0) * channels + c], e = src[(y1 * width + x1) * channels + c]
                    let top = a + (b - a) * tx, bottom = d + (e - d) * tx
                    out[(y * dw + x) * channels + c] = top + (bottom - top) * ty
                }
            }
        }
        return out
    }

    /// The model input tensor for `image`, per the description.
    static func input(_ image: Image, _ d: ModelDescription.Input) throws(MLError) -> Tensor {
        let (w, h) = (d.width, d.height)
        let rgb = resize(try rgb(image), width: image.width, height: image.height, channels: 3, toWidth: w, toHeight: h)
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
        let dims = t.shape.filter { $0 != 1 }
        guard dims.count == 2 else { throw .unexpectedOutput(reason: "expected one image plane, got shape \(t.shape)") }
        let s = t.shape
        if s.count == 4 && s[3] == 1 { return (s[2], s[1], t.values) }
        return (s[s.count - 1], s[s.count - 2], t.values)
    }
}
