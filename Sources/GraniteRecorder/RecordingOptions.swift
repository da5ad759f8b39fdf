/// How a recording is encoded: which encoder, how well, how often a key frame.
public struct RecordingOptions: Sendable, Equatable {
    /// The encoder asked for (`--encoder`).
    public enum Encoder: String, Sendable, CaseIterable {
        /// NVENC on an NVIDIA GPU, VA-API where a render node offers it, else x264 (VP9 into WebM).
        case auto
        /// H.264 by libx264 (CPU).
        case x264
        /// AV1 by SVT-AV1 (CPU).
        case svtav1
        /// VP9 by libvpx (CPU).
        case vp9
        /// H.264 by NVENC (an NVIDIA GPU; the driver's libcuda and libnvidia-encode).
        case nvenc
        /// H.264 by VA-API (a render node whose driver encodes).
        case vaapi
    }

    /// The encoder asked for.
    public var encoder: Encoder
    /// One CRF-like scale for all encoders: 0 (best) … 51 (worst), x264's CRF; the others'
    /// scales are mapped onto it (``EncoderChoice/qualityOptions``). Default 20.
    public var quality: Int
    /// Frames between key frames; nil: two seconds' worth at ``fps``.
    public var gop: Int?
    /// The nominal frame rate (the encoder's rate control and the default GOP); timestamps come
    /// from the frames' capture times, not from this.
    public var fps: Double
    /// x264's preset (`veryfast` by default: a live camera must keep up).
    public var preset: String
    /// For an HLS playlist (`live.m3u8`): seconds per segment (each starts at a key frame, so the
    /// GOP defaults to one segment).
    public var segmentSeconds: Double = 4

    public init(encoder: Encoder = .auto, quality: Int = 20, gop: Int? = nil, fps: Double = 30, preset: String = "veryfast") {
        self.encoder = encoder
        self.quality = quality
        self.gop = gop
        self.fps = fps
        self.preset = preset
    }

    /// The GOP in frames (at least 1).
    public var keyFrameInterval: Int { max(1, gop ?? Int((fps * 2).rounded())) }

    /// The GOP for segments: at most one segment's worth, so every segment can start with a key frame.
    func keyFrameInterval(for container: Container) -> Int {
        guard container == .hls else { return keyFrameInterval }
        return max(1, min(gop ?? Int.max, Int((fps * segmentSeconds).rounded())))
    }
}

/// The file kinds a recording writes, by extension.
public enum Container: String, Sendable {
    case matroska = "mkv"
    case mp4
    case webm
    /// An HLS playlist of fragmented-MP4 segments beside it (`DIR/live.m3u8`, `init.mp4`, `segNNNNN.m4s`).
    case hls = "m3u8"

    /// The container for `path`'s extension; throws for any other.
    public init(path: String) throws(RecorderError) {
        let ext = path.split(separator: "/").last.flatMap { name in name.contains(".") ? name.split(separator: ".").last : nil }
        guard let ext, let kind = Container(rawValue: ext.lowercased()) else {
            throw .options("\(path): a recording ends in .mkv, .mp4 or .webm (or .m3u8: live segments)")
        }
        self = kind
    }

    /// libavformat's muxer name.
    var muxer: String {
        switch self {
        case .matroska: return "matroska"
        case .mp4: return "mp4"
        case .webm: return "webm"
        case .hls: return "hls"
        }
    }
}
