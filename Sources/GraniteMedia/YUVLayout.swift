/// A YUV byte layout an output writes (BT.601 limited range, the formulas of
/// ``ColorConversion/luma(_:_:_:)``, ``ColorConversion/cb(_:_:_:)`` and ``ColorConversion/cr(_:_:_:)``):
/// what the Y4M pipe, a V4L2 output's YUYV and YU12 and a PipeWire camera's YUY2, I420 and NV12 take.
///
/// The CPU writes it with ``ColorConversion/yuv(_:layout:vectorised:)``; Marble's GPU conversion
/// (`yuv_out.comp`) writes the same bytes from a chain's final image, and its tests compare the two.
/// Padding bytes (a stride beyond the row) are zero.
public enum YUVLayout: Hashable, Sendable, CustomStringConvertible {
    /// Packed 4:2:2 `Y0 U Y1 V` (V4L2 `YUYV`), rows `stride` bytes apart (0: 4·⌈w/2⌉, unpadded);
    /// each pair's chroma the mean of its two pixels, an odd last column paired with itself.
    case yuyv(stride: Int)
    /// Planar 4:2:0 (I420, V4L2 `YU12`): Y rows `lumaStride` apart, then Cb, then Cr rows
    /// `chromaStride` apart (0: unpadded, w and ⌈w/2⌉); chroma the mean of each 2×2 block.
    case planar420(lumaStride: Int, chromaStride: Int)
    /// Planar 4:4:4, unpadded: Y, Cb, Cr, `w`×`h` each.
    case planar444
    /// Semi-planar 4:2:0 (NV12): Y rows `lumaStride` apart, then one plane of interleaved Cb, Cr
    /// pairs, rows `chromaStride` apart (0: unpadded, w and 2·⌈w/2⌉); chroma as ``planar420(lumaStride:chromaStride:)``.
    case semiPlanar420(lumaStride: Int, chromaStride: Int)

    /// Unpadded 4:2:0 (the Y4M pipe's `C420jpeg`).
    public static let i420 = YUVLayout.planar420(lumaStride: 0, chromaStride: 0)
    /// Unpadded NV12.
    public static let nv12 = YUVLayout.semiPlanar420(lumaStride: 0, chromaStride: 0)

    public var description: String {
        switch self {
        case let .yuyv(stride): return "YUYV" + (stride > 0 ? " stride \(stride)" : "")
        case let .planar420(l, c): return "I420" + (l > 0 || c > 0 ? " strides \(l)/\(c)" : "")
        case .planar444: return "4:4:4 planar"
        case let .semiPlanar420(l, c): return "NV12" + (l > 0 || c > 0 ? " strides \(l)/\(c)" : "")
        }
    }

    /// Row strides for a `width`-wide image: luma (YUYV: the packed row) and chroma (YUYV: 0),
    /// never less than the row itself.
    public func strides(width: Int) -> (luma: Int, chroma: Int) {
        switch self {
        case let .yuyv(stride): return (max(stride, ((width + 1) / 2) * 4), 0)
        case let .planar420(l, c): return (max(l, width), max(c, (width + 1) / 2))
        case .planar444: return (width, width)
        case let .semiPlanar420(l, c): return (max(l, width), max(c, (width + 1) / 2 * 2))
        }
    }

    /// Chroma rows of a `height`-tall image (0 for YUYV, whose chroma is inside the rows).
    public func chromaRows(height: Int) -> Int {
        switch self {
        case .yuyv: return 0
        case .planar420, .semiPlanar420: return (height + 1) / 2
        case .planar444: return height
        }
    }

    /// Whether a `width`-wide row has padding (a stride beyond the row) in this layout.
    public func isPadded(width: Int) -> Bool {
        let unpadded: YUVLayout
        switch self {
        case .yuyv: unpadded = .yuyv(stride: 0)
        case .planar420: unpadded = .i420
        case .planar444: unpadded = .planar444
        case .semiPlanar420: unpadded = .nv12
        }
        return strides(width: width) != unpadded.strides(width: width)
    }

    /// The pixel format whose unpadded bytes this layout writes for a `width`-wide image (YUYV,
    /// I420, NV12), so those bytes are an ``Image`` as they are; nil for padded rows and 4:4:4.
    public func pixelFormat(width: Int) -> PixelFormat? {
        guard !isPadded(width: width) else { return nil }
        switch self {
        case .yuyv: return .yuyv
        case .planar420: return .i420
        case .semiPlanar420: return .nv12
        case .planar444: return nil
        }
    }

    /// Bytes of a `width`×`height` image in this layout.
    public func byteCount(width: Int, height: Int) -> Int {
        let (luma, chroma) = strides(width: width)
        let chromaPlanes = if case .semiPlanar420 = self { 1 } else { 2 }
        return luma * height + chromaPlanes * chroma * chromaRows(height: height)
    }
}

extension ColorConversion {
    /// `rgba` (`rgba8`) in `layout`, padding zero: the vectorised rows, or with `vectorised`
    /// false the scalar reference formulas (bit-identical; debug builds take these, as Swift's
    /// SIMD types are slow unoptimised).
    public static func yuv(_ rgba: Image, layout: YUVLayout, vectorised: Bool = true) -> [UInt8] {
        let count = layout.byteCount(width: rgba.width, height: rgba.height)
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialised in
            yuv(rgba, layout: layout, into: buffer.baseAddress!, vectorised: vectorised)
            initialised = count
        }
    }

    /// ``yuv(_:layout:vectorised:)`` into `out` (`layout.byteCount` bytes, e.g. a reused buffer or
    /// a device's mmap buffer): every byte is set, padding zero.
    public static func yuv(_ rgba: Image, layout: YUVLayout, into out: UnsafeMutablePointer<UInt8>, vectorised: Bool = true) {
        precondition(rgba.format == .rgba8, "yuv(_:layout:) needs an rgba8 image")
        let (luma, chroma) = layout.strides(width: rgba.width)
        if layout.isPadded(width: rgba.width) {
            out.initialize(repeating: 0, count: layout.byteCount(width: rgba.width, height: rgba.height))
        }
        switch (layout, vectorised) {
        case (.yuyv, true): packedYUYV(rgba, into: out, stride: luma)
        case (.yuyv, false): packedYUYVReference(rgba, into: out, stride: luma)
        case (.semiPlanar420, _): semiPlanarYUV(rgba, into: out, lumaStride: luma, chromaStride: chroma, vectorised: vectorised)
        case (_, true): planarYUV(rgba, subsampled: layout != .planar444, into: out, lumaStride: luma, chromaStride: chroma)
        case (_, false): planarYUVReference(rgba, subsampled: layout != .planar444, into: out, lumaStride: luma, chromaStride: chroma)
        }
    }
}
