#if canImport(Glibc)
import Glibc
#endif
import CFFmpeg
import GraniteMedia

/// Frames encoded and muxed in-process by FFmpeg's libraries into `.mkv`, `.mp4` or `.webm`.
///
/// ```
///  append(t, fill) ─► AVFrame (I420; NV12 → VA-API surface) ─► encoder ─► packets ─► muxer ─► NAME.partial.EXT
///       pts = capture time − first capture time (1/90000 s): a dropped frame is a gap        │
///  finish: drain the encoder, trailer, fsync, rename ─────────────────────────────────────► NAME.EXT
/// ```
/// The file is written under a visible temporary name beside the final one (`clip.partial.mkv`)
/// and renamed only when it ends cleanly, so the final name only ever holds a complete file. The
/// partial file plays on its own up to its last few seconds: Matroska writes a cluster each
/// second, MP4 is fragmented (`empty_moov`, a fragment at each key frame or second), and every
/// packet goes to the kernel as it is muxed. A `kill -9` or a full disk leaves it under the
/// partial name; ``RecorderError/diskFull(path:kept:)`` says what it holds.
public final class Recorder {
    /// The final path.
    public let path: String
    /// Where the file is written until it ends cleanly (`NAME.partial.EXT`).
    public let partialPath: String
    /// The encoder and why.
    public let choice: EncoderChoice
    /// The YUV layout ``append(timestampNanos:fill:)`` fills: unpadded I420, or NV12 for VA-API.
    public let layout: YUVLayout
    /// The frame size.
    public let width: Int, height: Int
    /// Frames encoded so far.
    public private(set) var frames = 0
    /// The file kind.
    public let container: Container

    static let ticks: Int32 = 90_000
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var stream: UnsafeMutablePointer<AVStream>
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var hwFrames: UnsafeMutablePointer<AVBufferRef>?
    private var firstNanos: UInt64?
    private var lastPTS: Int64 = -1
    private var ended = false
    private var audioTrack: AudioTrack?
    /// For segments (`.m3u8`): called with each file's path as it closes (the init segment, then
    /// each segment, in order), on the thread that appends.
    public var onSegmentClosed: ((String) -> Void)?
    private var announced = 0
    private var playlistStamp: (Int, Int) = (0, 0)
    /// Audio samples encoded so far.
    public private(set) var audioSamples = 0
    /// The capture time of the recording's time zero (the first frame's, or the first sound's when
    /// that came first); nil before either.
    public var firstFrameNanos: UInt64? { firstNanos }
    /// The audio encoder (`libopus`, `aac`), when the recording has sound.
    public var audioCodecName: String? { audioTrack?.codecName }

    /// Opens `path` (its extension picks the container) for `width`×`height` frames (even sides).
    public init(path: String, width: Int, height: Int, options: RecordingOptions, audio: AudioFormat? = nil,
                machine: @autoclosure () -> EncoderChoice.Machine = .probe()) throws(RecorderError) {
        let container = try Container(path: path)
        guard width > 0, height > 0, width % 2 == 0, height % 2 == 0 else {
            throw .frame(path: path, reason: "\(width)x\(height): 4:2:0 video needs even sides")
        }
        let choice = try EncoderChoice.resolve(options, container: container, machine: machine())
        self.path = path
        // A playlist is live by design: written in place, each segment renamed into place when it closes.
        self.partialPath = container == .hls ? path : Recorder.partialName(path)
        self.container = container
        self.choice = choice
        self.layout = choice.encoder == .vaapi ? .nv12 : .i420
        self.width = width
        self.height = height
        cff_quiet(cff_log_error())

        let partial = partialPath
        var context: UnsafeMutablePointer<AVFormatContext>?
        try ffmpeg("avformat_alloc_output_context2", path: partial) {
            avformat_alloc_output_context2(&context, nil, container.muxer, partial)
        }
        format = context
        guard let codecInfo = avcodec_find_encoder_by_name(choice.codecName), let encoder = avcodec_alloc_context3(codecInfo),
              let stream = avformat_new_stream(context, nil), let packet = av_packet_alloc() else {
            avformat_free_context(context)
            throw .encoder(name: choice.codecName, reason: "could not be set up (out of memory?)")
        }
        codec = encoder
        self.stream = stream
        self.packet = packet
        do {
            try configure(encoder, options: options, container: container)
            try ffmpeg("avcodec_parameters_from_context", path: partial) { avcodec_parameters_from_context(stream.pointee.codecpar, encoder) }
            stream.pointee.time_base = encoder.pointee.time_base
            if let audio { audioTrack = try AudioTrack(format: context!, container: container, input: audio, path: partial) }
            if context!.pointee.oformat.pointee.flags & cff_fmt_nofile() == 0 {   // the HLS muxer opens its files itself
                try ffmpeg("avio_open", path: partial) { avio_open(&context!.pointee.pb, partial, AVIO_FLAG_WRITE) }
            }
            var muxing: OpaquePointer?
            defer { av_dict_free(&muxing) }
            for (key, value) in Recorder.muxerOptions(container, options: options, path: path) { av_dict_set(&muxing, key, value, 0) }
            try ffmpeg("avformat_write_header", path: partial) { avformat_write_header(context, &muxing) }
        } catch {
            release()
            unlink(partial)
            throw error
        }
    }

    deinit {
        if !ended { abandon() }
        release()
    }

    /// `clip.mkv` → `clip.partial.mkv`.
    public static func partialName(_ path: String) -> String {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        guard let dot = path[slash...].lastIndex(of: ".") else { return path + ".partial" }
        return String(path[..<dot]) + ".partial" + String(path[dot...])
    }

    static func muxerOptions(_ container: Container, options: RecordingOptions, path: String) -> [(String, String)] {
        switch container {
        case .hls:
            // fMP4 segments (an init segment and one .m4s per segment), each written as .tmp and
            // renamed when complete; the playlist lists every segment and ends with EXT-X-ENDLIST.
            let dir = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
            return [("hls_time", String(options.segmentSeconds)), ("hls_list_size", "0"), ("hls_segment_type", "fmp4"),
                    ("hls_fmp4_init_filename", "init.mp4"), ("hls_segment_filename", "\(dir)/seg%05d.m4s"),
                    ("hls_playlist_type", "event"), ("hls_flags", "independent_segments+temp_file"), ("flush_packets", "1")]
        case .matroska, .webm:
            // A cluster at least each second (or 2 MiB); every packet handed to the kernel at once.
            return [("cluster_time_limit", "1000"), ("cluster_size_limit", "2097152"), ("flush_packets", "1")]
        case .mp4:
            return [("movflags", "+frag_keyframe+empty_moov+default_base_moof"), ("frag_duration", "1000000"), ("flush_packets", "1")]
        }
    }

    private func configure(_ encoder: UnsafeMutablePointer<AVCodecContext>, options: RecordingOptions, container: Container) throws(RecorderError) {
        encoder.pointee.width = Int32(width)
        encoder.pointee.height = Int32(height)
        encoder.pointee.time_base = AVRational(num: 1, den: Recorder.ticks)
        let rate = FrameRate(options.fps)
        encoder.pointee.framerate = AVRational(num: rate.num, den: rate.den)
        encoder.pointee.gop_size = Int32(options.keyFrameInterval(for: container))
        encoder.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        // What the project's one YUV conversion makes: BT.601, limited range.
        encoder.pointee.color_range = AVCOL_RANGE_MPEG
        encoder.pointee.colorspace = AVCOL_SPC_SMPTE170M
        encoder.pointee.color_primaries = AVCOL_PRI_SMPTE170M
        encoder.pointee.color_trc = AVCOL_TRC_SMPTE170M
        encoder.pointee.thread_count = 0
        if choice.encoder == .vaapi {
            encoder.pointee.global_quality = Int32(min(51, max(0, options.quality)))
            try openVAAPIFrames(encoder)
        }
        if choice.encoder == .nvenc { encoder.pointee.bit_rate = 0 }
        if choice.encoder == .vp9 { encoder.pointee.bit_rate = 0 }
        if let oformat = format?.pointee.oformat, oformat.pointee.flags & cff_fmt_globalheader() != 0 {
            encoder.pointee.flags |= cff_flag_global_header()
        }
        for (key, value) in choice.qualityOptions(quality: options.quality, preset: options.preset) {
            let status = av_opt_set(encoder.pointee.priv_data, key, value, 0)
            if status < 0 && !(choice.encoder == .svtav1 && key == "crf") {
                throw .encoder(name: choice.codecName, reason: "option \(key)=\(value): \(ffmpegMessage(status))")
            }
            if status < 0 { _ = av_opt_set(encoder.pointee.priv_data, "qp", value, 0) }
        }
        let status = avcodec_open2(encoder, nil, nil)
        guard status >= 0 else { throw .encoder(name: choice.codecName, reason: ffmpegMessage(status)) }
    }

    private func openVAAPIFrames(_ encoder: UnsafeMutablePointer<AVCodecContext>) throws(RecorderError) {
        guard let node = EncoderChoice.Machine.probeVAAPI() else {
            throw .encoder(name: choice.codecName, reason: "no VA-API render node")
        }
        var device: UnsafeMutablePointer<AVBufferRef>?
        try ffmpeg("av_hwdevice_ctx_create", path: node) { av_hwdevice_ctx_create(&device, AV_HWDEVICE_TYPE_VAAPI, node, nil, 0) }
        defer { av_buffer_unref(&device) }
        var frames = av_hwframe_ctx_alloc(device)
        guard let framesRef = frames else { throw .encoder(name: choice.codecName, reason: "no frames context") }
        let info = UnsafeMutableRawPointer(framesRef.pointee.data!).assumingMemoryBound(to: AVHWFramesContext.self)
        info.pointee.format = AV_PIX_FMT_VAAPI
        info.pointee.sw_format = AV_PIX_FMT_NV12
        info.pointee.width = Int32(width)
        info.pointee.height = Int32(height)
        info.pointee.initial_pool_size = 8
        let status = av_hwframe_ctx_init(frames)
        guard status >= 0 else {
            av_buffer_unref(&frames)
            throw .encoder(name: choice.codecName, reason: "frames context: \(ffmpegMessage(status))")
        }
        encoder.pointee.pix_fmt = AV_PIX_FMT_VAAPI
        encoder.pointee.hw_frames_ctx = av_buffer_ref(frames)
        hwFrames = frames
    }

    /// What the file holds so far, for a message (`412 frames, 13.7 s`).
    public var kept: String {
        let seconds = Double(max(0, lastPTS)) / Double(Recorder.ticks)
        return "\(frames) frames, \(String(format1: seconds)) s"
    }

    /// Encodes one frame captured at `timestampNanos` (monotonic): `fill` writes ``layout``'s
    /// bytes (exactly `layout.byteCount(width:height:)`) straight into the encoder's frame.
    public func append(timestampNanos: UInt64, fill: (UnsafeMutableRawBufferPointer) -> Void) throws(RecorderError) {
        guard !ended, let codec else { throw .frame(path: path, reason: "the recording has ended") }
        let count = layout.byteCount(width: width, height: height)
        var allocated = av_frame_alloc()
        guard let frame = allocated else { throw .frame(path: path, reason: "out of memory") }
        defer { av_frame_free(&allocated) }
        guard let buffer = av_buffer_alloc(count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else { throw .frame(path: path, reason: "out of memory") }
        frame.pointee.buf.0 = buffer
        fill(UnsafeMutableRawBufferPointer(start: buffer.pointee.data, count: count))
        let base = buffer.pointee.data!
        let luma = width * height, chromaWidth = width / 2, chromaHeight = height / 2
        frame.pointee.width = Int32(width)
        frame.pointee.height = Int32(height)
        frame.pointee.data.0 = base
        frame.pointee.linesize.0 = Int32(width)
        if layout == .nv12 {
            frame.pointee.format = AV_PIX_FMT_NV12.rawValue
            frame.pointee.data.1 = base + luma
            frame.pointee.linesize.1 = Int32(width)
        } else {
            frame.pointee.format = AV_PIX_FMT_YUV420P.rawValue
            frame.pointee.data.1 = base + luma
            frame.pointee.data.2 = base + luma + chromaWidth * chromaHeight
            frame.pointee.linesize.1 = Int32(chromaWidth)
            frame.pointee.linesize.2 = Int32(chromaWidth)
        }
        frame.pointee.pts = pts(timestampNanos)
        var sent = frame
        var upload: UnsafeMutablePointer<AVFrame>?
        defer { if upload != nil { av_frame_free(&upload) } }
        if let hwFrames {
            upload = av_frame_alloc()
            guard let surface = upload else { throw .frame(path: path, reason: "out of memory") }
            try ffmpeg("av_hwframe_get_buffer", path: path) { av_hwframe_get_buffer(hwFrames, surface, 0) }
            try ffmpeg("av_hwframe_transfer_data", path: path) { av_hwframe_transfer_data(surface, frame, 0) }
            surface.pointee.pts = frame.pointee.pts
            sent = surface
        }
        try ffmpeg("avcodec_send_frame", path: partialPath) { avcodec_send_frame(codec, sent) }
        frames += 1
        try drain()
        announceSegments()
    }

    /// Reads the playlist when it changed (a segment closed) and announces the segments it lists
    /// that were not announced yet; the muxer renames each segment into place before it lists it.
    private func announceSegments() {
        guard container == .hls, let onSegmentClosed else { return }
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        let stamp = (Int(info.st_mtim.tv_nsec) ^ Int(info.st_mtim.tv_sec), Int(info.st_size))
        guard stamp != playlistStamp else { return }
        playlistStamp = stamp
        guard let text = Recorder.read(path) else { return }
        let dir = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        var names: [String] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("#EXT-X-MAP:URI=\""), let name = line.dropFirst(16).split(separator: "\"").first { names.append(String(name)) }
            if !line.hasPrefix("#") && !line.isEmpty { names.append(String(line)) }
        }
        while announced < names.count {
            onSegmentClosed("\(dir)/\(names[announced])")
            announced += 1
        }
    }

    /// A small text file's content (the playlist), nil when it cannot be read.
    public static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The frame's presentation time: its capture time after the first frame's, in 1/90000 s,
    /// strictly increasing.
    /// Encodes interleaved float samples whose first was captured at `timestampNanos` (the same
    /// clock as the frames'): the first block places the sound against the video, later ones follow on.
    public func appendAudio(_ samples: UnsafeBufferPointer<Float>, timestampNanos: UInt64) throws(RecorderError) {
        guard !ended, let audioTrack else { throw .frame(path: path, reason: "the recording has no sound or has ended") }
        let origin = firstNanos ?? timestampNanos
        firstNanos = origin
        try audioTrack.append(samples, timestampNanos: timestampNanos, origin: origin) { (frame) throws(RecorderError) in
            try encodeAudio(frame)
        }
        audioSamples += samples.count / audioTrack.input.channels
    }

    private func encodeAudio(_ frame: UnsafeMutablePointer<AVFrame>?) throws(RecorderError) {
        guard let audioTrack else { return }
        try ffmpeg("avcodec_send_frame", path: partialPath) { avcodec_send_frame(audioTrack.codec, frame) }
        try drain(audioTrack.codec, audioTrack.stream)
    }

    private func pts(_ nanos: UInt64) -> Int64 {
        let first = firstNanos ?? nanos
        firstNanos = first
        let offset = nanos >= first ? nanos - first : 0
        var value = Int64((Double(offset) * Double(Recorder.ticks) / 1e9).rounded())
        if value <= lastPTS { value = lastPTS + 1 }
        lastPTS = value
        return value
    }

    /// Every packet the encoder has ready, to the muxer.
    private func drain() throws(RecorderError) {
        guard let codec else { return }
        try drain(codec, stream)
    }

    private func drain(_ codec: UnsafeMutablePointer<AVCodecContext>, _ stream: UnsafeMutablePointer<AVStream>) throws(RecorderError) {
        guard let packet, let format else { return }
        while true {
            let status = avcodec_receive_packet(codec, packet)
            if status == cff_eagain() || status == cff_eof() { return }
            try ffmpeg("avcodec_receive_packet", path: partialPath) { status }
            av_packet_rescale_ts(packet, codec.pointee.time_base, stream.pointee.time_base)
            packet.pointee.stream_index = stream.pointee.index
            let kept = self.kept, partial = partialPath
            try ffmpeg("av_interleaved_write_frame", path: partial, kept: { "kept \(kept) in \(partial); it plays up to its last complete second" }) {
                av_interleaved_write_frame(format, packet)
            }
        }
    }

    /// What a finished recording holds.
    public struct Summary: Sendable, Equatable {
        /// The final path.
        public let path: String
        /// Frames in the file.
        public let frames: Int
        /// From the first frame's capture time to the last's.
        public let seconds: Double
    }

    /// Drains the encoder, writes the trailer and renames the file to ``path``. On a failure
    /// (a full disk) the partial file stays and the error says what it holds.
    @discardableResult
    public func finish() throws(RecorderError) -> Summary {
        guard !ended else { throw .frame(path: path, reason: "the recording has already ended") }
        ended = true
        let partial = partialPath, keptNow = kept
        let keep = { "kept \(keptNow) in \(partial); it plays up to its last complete second" }
        do {
            try ffmpeg("avcodec_send_frame", path: partial) { avcodec_send_frame(codec, nil) }
            try drain()
            if let audioTrack {
                try audioTrack.flush(minimum: 1) { (frame) throws(RecorderError) in try encodeAudio(frame) }
                try encodeAudio(nil)
            }
            try ffmpeg("av_write_trailer", path: partial, kept: keep) { av_write_trailer(format) }
            if format!.pointee.pb != nil {
                try ffmpeg("avio_closep", path: partial, kept: keep) { avio_closep(&format!.pointee.pb) }
            }
        } catch {
            closeFile()
            throw error
        }
        announceSegments()
        if container == .hls { return Summary(path: path, frames: frames, seconds: Double(max(0, lastPTS)) / Double(Recorder.ticks)) }
        let fd = open(partial, O_RDONLY | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
        guard rename(partial, path) == 0 else {
            throw .library(call: "rename", path: path, code: errno, message: String(cString: strerror(errno)) + "; \(keep())")
        }
        return Summary(path: path, frames: frames, seconds: Double(max(0, lastPTS)) / Double(Recorder.ticks))
    }

    /// Ends without the clean rename: what was written stays under ``partialPath``.
    public func abandon() {
        guard !ended else { return }
        ended = true
        if let format, format.pointee.pb != nil || container == .hls { _ = av_write_trailer(format) }
        closeFile()
    }

    private func closeFile() {
        if let format, format.pointee.pb != nil { avio_closep(&format.pointee.pb) }
    }

    private func release() {
        closeFile()
        if codec != nil { avcodec_free_context(&codec) }
        audioTrack = nil
        if packet != nil { av_packet_free(&packet) }
        if hwFrames != nil { av_buffer_unref(&hwFrames) }
        if let format { avformat_free_context(format); self.format = nil }
    }
}

/// A frame rate as a fraction (30000/1001 for 29.97).
struct FrameRate {
    let num: Int32, den: Int32
    init(_ fps: Double) {
        if abs(fps - fps.rounded()) < 0.001 { (num, den) = (Int32(max(1, fps.rounded())), 1) } else { (num, den) = (Int32((fps * 1001).rounded()), 1001) }
    }
}

extension String {
    /// One decimal.
    init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(abs(tenths % 10))"
    }
}
