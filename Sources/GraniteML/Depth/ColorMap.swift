/// A perceptual color map (viridis: dark purple → blue → green → yellow), sampled at nine
/// evenly spaced stops and interpolated linearly.
public enum ColorMap {
    private static let stops: [(Float, Float, Float)] = [
        (0.267, 0.005, 0.329), (0.283, 0.141, 0.458), (0.254, 0.265, 0.530), (0.207, 0.372, 0.553),
        (0.164, 0.471, 0.558), (0.128, 0.567, 0.551), (0.135, 0.659, 0.518), (0.267, 0.749, 0.441),
        (0.478, 0.821, 0.318), (0.741, 0.873, 0.150), (0.993, 0.906, 0.144),
    ]

    /// `viridis` at 256 evenly spaced points (768 bytes, RGB): entry i is `viridis(i / 255)`, the
    /// palette of the indexed preview PNGs and the colors of `DepthMap.colorized()`.
    public static let palette: [UInt8] = (0..<256).flatMap { i -> [UInt8] in
        let (r, g, b) = viridis(Float(i) / 255)
        return [r, g, b]
    }

    /// The RGB bytes for `t` in 0...1 (clamped).
    static func viridis(_ t: Float) -> (UInt8, UInt8, UInt8) {
        let x = min(max(t.isNaN ? 0 : t, 0), 1) * Float(stops.count - 1)
        let i = min(Int(x), stops.count - 2)
        let f = x - Float(i)
        let a = stops[i], b = stops[i + 1]
        func byte(_ u: Float, _ v: Float) -> UInt8 { UInt8(((u + (v - u) * f) * 255).rounded()) }
        return (byte(a.0, b.0), byte(a.1, b.1), byte(a.2, b.2))
    }
}
