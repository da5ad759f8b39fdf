#if canImport(Glibc)
import Glibc
#endif
import CFFmpeg

/// The encoder a recording uses and why (printed at start: `encoder libx264 (auto: no NVIDIA GPU, no VA-API render node)`).
public struct EncoderChoice: Sendable, Equatable, CustomStringConvertible {
    /// What was chosen (never `.auto`).
    public let encoder: RecordingOptions.Encoder
    /// libavcodec's encoder name (`libx264`, `libvpx-vp9`, `libsvtav1`, `h264_nvenc`, `h264_vaapi`).
    public let codecName: String
    /// Why this one.
    public let reason: String

    public var description: String { "encoder \(codecName) (\(reason))" }

    /// What this machine offers, found once per choice.
    public struct Machine: Sendable, Equatable {
        /// Why NVENC can be used, or nil: an NVIDIA device node and the driver's libcuda.so.1 and
        /// libnvidia-encode.so.1 loadable.
        public var nvenc: String?
        /// The render node VA-API opened, or nil.
        public var vaapi: String?

        public init(nvenc: String?, vaapi: String?) {
            self.nvenc = nvenc
            self.vaapi = vaapi
        }

        /// Probes this machine (dlopen of the NVIDIA libraries; a VA-API device on each render node).
        public static func probe() -> Machine {
            Machine(nvenc: probeNVENC(), vaapi: probeVAAPI())
        }

        static func probeNVENC() -> String? {
            guard access("/dev/nvidiactl", F_OK) == 0 else { return nil }
            for library in ["libcuda.so.1", "libnvidia-encode.so.1"] {
                guard let handle = dlopen(library, RTLD_LAZY | RTLD_LOCAL) else { return nil }
                dlclose(handle)
            }
            return "NVIDIA GPU with libcuda.so.1 and libnvidia-encode.so.1"
        }

        static func probeVAAPI() -> String? {
            for n in 128..<136 {
                let node = "/dev/dri/renderD\(n)"
                guard access(node, R_OK | W_OK) == 0, (try? FFmpegLibraries.load()) != nil else { continue }
                var device: UnsafeMutablePointer<AVBufferRef>?
                cff_quiet(cff_log_quiet())
                let status = av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_VAAPI, node, nil, 0)
                cff_quiet(cff_log_error())
                if status >= 0 {
                    av_buffer_unref(&device)
                    if avcodec_find_encoder_by_name("h264_vaapi") != nil { return node }
                }
            }
            return nil
        }
    }

    /// The encoder for `options` into `container` on `machine`; throws when the one asked for
    /// cannot write that container or is not in this FFmpeg.
    public static func resolve(_ options: RecordingOptions, container: Container, machine: @autoclosure () -> Machine) throws(RecorderError) -> EncoderChoice {
        try FFmpegLibraries.load()
        let choice: EncoderChoice
        switch options.encoder {
        case .auto:
            if container == .webm {
                choice = EncoderChoice(encoder: .vp9, codecName: "libvpx-vp9", reason: "auto: WebM carries VP9 or AV1, VP9 encodes faster")
            } else {
                let found = machine()
                if let why = found.nvenc {
                    choice = EncoderChoice(encoder: .nvenc, codecName: "h264_nvenc", reason: "auto: \(why)")
                } else if let node = found.vaapi {
                    choice = EncoderChoice(encoder: .vaapi, codecName: "h264_vaapi", reason: "auto: VA-API encodes H.264 on \(node)")
                } else {
                    choice = EncoderChoice(encoder: .x264, codecName: "libx264", reason: "auto: no NVIDIA GPU with NVENC, no VA-API render node")
                }
            }
        case .x264: choice = EncoderChoice(encoder: .x264, codecName: "libx264", reason: "asked for")
        case .vp9: choice = EncoderChoice(encoder: .vp9, codecName: "libvpx-vp9", reason: "asked for")
        case .svtav1: choice = EncoderChoice(encoder: .svtav1, codecName: "libsvtav1", reason: "asked for")
        case .nvenc:
            guard let why = machine().nvenc else {
                throw .encoder(name: "h264_nvenc", reason: "needs an NVIDIA GPU (/dev/nvidiactl) and the driver's libcuda.so.1 and libnvidia-encode.so.1")
            }
            choice = EncoderChoice(encoder: .nvenc, codecName: "h264_nvenc", reason: "asked for: \(why)")
        case .vaapi:
            guard let node = machine().vaapi else {
                throw .encoder(name: "h264_vaapi", reason: "no render node (/dev/dri/renderD*) whose VA-API driver opens")
            }
            choice = EncoderChoice(encoder: .vaapi, codecName: "h264_vaapi", reason: "asked for: \(node)")
        }
        if container == .webm && !(choice.encoder == .vp9 || choice.encoder == .svtav1) {
            throw .options("WebM carries VP9 or AV1 only: --encoder vp9 or svtav1 (or write .mkv/.mp4 for \(choice.codecName))")
        }
        guard avcodec_find_encoder_by_name(choice.codecName) != nil else {
            throw .encoder(name: choice.codecName, reason: "not in this FFmpeg (libavcodec \(Self.libavcodecVersion))")
        }
        return choice
    }

    /// libavcodec's version, `59.37.100`.
    public static var libavcodecVersion: String {
        let v = avcodec_version()
        return "\(v >> 16).\((v >> 8) & 0xFF).\(v & 0xFF)"
    }

    /// The private options that put `quality` (0 best … 51, x264's CRF scale) on this encoder's
    /// own scale, and its speed settings for live use.
    func qualityOptions(quality: Int, preset: String) -> [(String, String)] {
        let q = min(51, max(0, quality))
        let on63 = String(Int((Double(q) * 63 / 51).rounded()))
        switch encoder {
        case .x264, .auto: return [("crf", String(q)), ("preset", preset)]
        case .vp9: return [("crf", on63), ("deadline", "realtime"), ("cpu-used", "8"), ("row-mt", "1")]
        case .svtav1: return [("crf", on63), ("preset", "10")]
        case .nvenc: return [("rc", "vbr"), ("cq", String(q)), ("preset", "p4")]
        case .vaapi: return [("rc_mode", "CQP")]
        }
    }
}
