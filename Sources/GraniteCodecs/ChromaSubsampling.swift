import CTurboJPEG

/// Chroma subsampling for JPEG encoding.
public enum ChromaSubsampling: String, Sendable, Hashable, CaseIterable, Codable {
    /// No subsampling (best color, biggest files).
    case s444 = "444"
    /// Half horizontal chroma resolution.
    case s422 = "422"
    /// Half horizontal and vertical chroma resolution (the usual photo setting).
    case s420 = "420"

    var tj: Int32 {
        switch self {
        case .s444: return Int32(TJSAMP_444.rawValue)
        case .s422: return Int32(TJSAMP_422.rawValue)
        case .s420: return Int32(TJSAMP_420.rawValue)
        }
    }
}
