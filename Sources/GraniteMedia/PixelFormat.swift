/// The pixel layouts that move through the pipeline.
///
/// Packed camera formats (`yuyv`, `nv12`, `rgb24`) exist only at the capture edge; everything
/// after color conversion is `rgba8` (or a float format for depth and ML tensors).
public enum PixelFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// 8-bit R, G, B, A interleaved; the pipeline's working format.
    case rgba8
    /// 8-bit R, G, B interleaved (V4L2 `RGB3`).
    case rgb24
    /// 8-bit luma.
    case gray8
    /// 16-bit luma, native endianness in memory (PNG encoders write big-endian).
    case gray16
    /// 32-bit float, one channel (depth maps, probability maps).
    case grayF32
    /// 32-bit float R, G, B, A interleaved.
    case rgbaF32
    /// YUV 4:2:2 packed Y0 U Y1 V (V4L2 `YUYV`).
    case yuyv
    /// YUV 4:2:0, a Y plane then an interleaved UV plane at half resolution (V4L2 `NV12`).
    case nv12
    /// YUV 4:2:0 planar: a Y plane, then Cb, then Cr at half resolution (V4L2 `YU12`, the Y4M
    /// pipe's `C420jpeg`): a filter chain's result as read back for pipes and virtual cameras.
    case i420

    public var description: String { rawValue }

    /// Bytes a row of `width` pixels takes with no padding.
    public func minimumBytesPerRow(width: Int) -> Int {
        switch self {
        case .rgba8: return width * 4
        case .rgb24: return width * 3
        case .gray8: return width
        case .gray16: return width * 2
        case .grayF32: return width * 4
        case .rgbaF32: return width * 16
        case .yuyv: return ((width + 1) / 2) * 4
        case .nv12, .i420: return width
        }
    }

    /// Total bytes an unpadded image of this size takes.
    public func byteCount(width: Int, height: Int) -> Int {
        switch self {
        case .nv12:
            return width * height + ((width + 1) / 2) * 2 * ((height + 1) / 2)
        case .i420:
            return width * height + ((width + 1) / 2) * ((height + 1) / 2) * 2
        default:
            return minimumBytesPerRow(width: width) * height
        }
    }
}
