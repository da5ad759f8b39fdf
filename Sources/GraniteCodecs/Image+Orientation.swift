import GraniteMedia

extension Image {
    /// The image turned upright according to `orientation` (any packed 8/16-bit format).
    func applying(_ orientation: EXIFOrientation) -> Image {
        if orientation == .up { return self }
        let bpp = format.minimumBytesPerRow(width: 1)
        let (ow, oh) = orientation.swapsAxes ? (height, width) : (width, height)
        var out = [UInt8](repeating: 0, count: bytes.count)
        let w = width, h = height
        bytes.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<oh {
                    for x in 0..<ow {
                        // (x, y) in the upright image comes from (sx, sy) in the stored one.
                        let sx: Int, sy: Int
                        switch orientation {
                        case .up: (sx, sy) = (x, y)
                        case .upMirrored: (sx, sy) = (w - 1 - x, y)
                        case .down: (sx, sy) = (w - 1 - x, h - 1 - y)
                        case .downMirrored: (sx, sy) = (x, h - 1 - y)
                        case .leftMirrored: (sx, sy) = (y, x)
                        case .right: (sx, sy) = (y, h - 1 - x)
                        case .rightMirrored: (sx, sy) = (w - 1 - y, h - 1 - x)
                        case .left: (sx, sy) = (w - 1 - y, x)
                        }
                        let s = (sy * w + sx) * bpp, d = (y * ow + x) * bpp
                        for c in 0..<bpp { dst[d + c] = src[s + c] }
                    }
                }
            }
        }
        // The byte count is unchanged and the sides are positive, so this cannot fail.
        return try! Image(width: ow, height: oh, format: format, bytes: out)
    }
}
