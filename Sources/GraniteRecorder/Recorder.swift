#if canImport(Glibc)
import Glibc
#endif
import CFFmpeg
import GraniteMedia
import Synchronization

/// Frames encoded and muxed in-process by FFmpeg's libraries into `.mkv`, `.mp4` or `.webm`, and/or
/// live segments (`.m3u8`): one encoder feeds every output.
///
/// ```
///  append(t, fill) ─► AVFrame (I420; NV12 → VA-API surface) ─► encoder ─► packets ─┬─► muxer ─► NAME.partial.EXT
///       pts = capture time − first capture time (1/90000 s): a dropped frame is a gap  └─► muxer ─► DIR/live.m3u8 + segments
///  finish: drain the encoder, trailer, fsync, rename ──────────────────────────────────────► NAME.EXT
/// ```
/// Each packet the encoder makes goes to every output as its own reference (no copy of the
/// data), its timestamps rescaled to that output's stream; the sound the same way (one audio
/// encoder per codec: Opus for Matroska/WebM, AAC for MP4 and segments). Outputs share an encoder
/// when they take the same one (``whyNotShared(_:options:machine:)`` says when they cannot: WebM
/// takes VP9 or AV1, segments H.264 under `auto`); the key frame interval is then the smallest any
/// output asks for (segments: at most one segment).
///
/// The file is written under a visible temporary name beside the final one (`clip.partial.mkv`)
/// and renamed only when it ends cleanly, so the final name only ever holds a complete file. The
/// partial file plays on its own up to its last few seconds: Matroska writes a cluster each
/// second, MP4 is fragmented (`empty_moov`, a fragment at each key frame or second), and every
/// packet goes to the kernel as it is muxed. A `kill -9` or a full disk leaves it under the
/// partial name; ``RecorderError/diskFull(path:kept:)`` says what it holds. An output that fails
/// (a full disk) is closed where it got to and the call that hit it throws; the others take every
/// packet of that call and end cleanly at ``finishEach()`` (which reports the failed one's error).
public final class Recorder {
    /// One file the encoded packets go to: its muxer, its streams, and how it ended.
    final class Output {
        let path: String
        /// Where it is written until it ends cleanly (the playlist itself for segments).
        let partialPath: String
        let container: Container
        var format: UnsafeMutablePointer<AVFormatContext>?
        var video: UnsafeMutablePointer<AVStream>?
        var audio: UnsafeMutablePointer<AVStream>?
        /// The encoder its sound comes from.
        var audioTrack: AudioTrack?
        /// Why it stopped taking packets (a full disk), with what it kept.
        var failure: RecorderError?
        var announced = 0
        var playlistStamp: (Int, Int) = (0, 0)

        init(path: String) throws(RecorderError) {
            container = try Container(path: path)
            self.path = path
            // A playlist is live by design: written in place, each segment renamed into place when it closes.
            partialPath = container == .hls ? path : Recorder.partialName(path)
        }

        var open: Bool { failure == nil && format != nil }
    }

    /// The outputs' final paths, in the order given.
    public let paths: [String]
    /// The first output's final path.
    public var path: String { outputs[0].path }
    /// Where the first output is written until it ends cleanly (`NAME.partial.EXT`).
    public var partialPath: String { outputs[0].partialPath }
    /// The encoder and why.
    public let choice: EncoderChoice
    /// The YUV layout ``append(timestampNanos:fill:)`` fills: unpadded I420, or NV12 for VA-API.
    public let layout: YUVLayout
    /// The frame size.
    public let width: Int, height: Int
    /// Frames encoded so far.
    public private(set) var frames = 0
    /// The first output's file kind.
    public var container: Container { outputs[0].container }

    static let ticks: Int32 = 90_000
    /// Video encoders opened in this process: one per recorder, whatever its outputs (the tests
    /// and granite-cam's summary read it).
    public static var videoEncodersOpened: Int { opened.load(ordering: .relaxed) }
    private static let opened = Atomic<Int>(0)
    private let outputs: [Output]
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    /// Each output's reference to the packet being written (the muxer takes it).
    private var reference: UnsafeMutablePointer<AVPacket>?
    private var hwFrames: UnsafeMutablePointer<AVBufferRef>?
    private var firstNanos: UInt64?
    private var lastPTS: Int64 = -1
    private var ended = false
    private var audioTracks: [AudioTrack] = []
    /// For segments (`.m3u8`): called with each file's path as it closes (the init segment, then
    /// each segment, in order), on the thread that appends.
    public var onSegmentClosed: ((String) -> Void)?
    /// Audio samples encoded so far.
    public private(set) var audioSamples = 0
    /// The capture time of the recording's time zero (the first frame's, or the first sound's when
    /// that came first); nil before either.
    public var firstFrameNanos: UInt64? { firstNanos }
    /// The first output's audio encoder (`libopus`, `aac`), when the recording has sound.
    public var audioCodecName: String? { outputs[0].audioTrack?.codecName }
    /// The outputs that failed (a full disk) and were closed where they got to.
    public var failedPaths: [String] { outputs.filter { $0.failure != nil && $0.format != nil }.map(\.path) }
    /// Each output's audio encoder, by path.
    public var audioCodecNames: [String: String] {
        Dictionary(outputs.compactMap { output in output.audioTrack.map { (output.path, $0.codecName) } }, uniquingKeysWith: { a, _ in a })
    }

    /// Why `paths` cannot share one video encoder (each output's encoder differs: `.webm` takes
    /// VP9 under `auto`, segments H.264), or nil when one encoder feeds them all. Throws what
    /// does not fit any one of them.
    public static func whyNotShared(_ paths: [String], options: RecordingOptions,
                                    machine: @autoclosure () -> EncoderChoice.Machine = .probe()) throws(RecorderError) -> String? {
        var found: EncoderChoice.Machine?
        func probed() -> EncoderChoice.Machine {
            if let found { return found }
            found = machine()
            return found!
        }
        var choices: [(path: String, choice: EncoderChoice)] = []
        for path in paths {
            choices.append((path, try EncoderChoice.resolve(options, container: try Container(path: path), machine: probed())))
        }
        guard let first = choices.first, let other = choices.first(where: { $0.choice.codecName != first.choice.codecName }) else { return nil }
        return "\(first.path) takes \(first.choice.codecName), \(other.path) \(other.choice.codecName) (\(other.choice.reason))"
    }

    /// Opens `path` (its extension picks the container) for `width`×`height` frames (even sides).
    public convenience init(path: String, width: Int, height: Int, options: RecordingOptions, audio: AudioFormat? = nil,
                            machine: @autoclosure () -> EncoderChoice.Machine = .probe()) throws(RecorderError) {
        try self.init(paths: [path], width: width, height: height, options: options, audio: audio, machine: machine())
    }

    /// Opens every one of `paths` (`.mkv`, `.mp4`, `.webm`, `.m3u8`; each extension picks its
    /// container) for `width`×`height` frames (even sides), fed by one video encoder; throws when
    /// they cannot share one (``whyNotShared(_:options:machine:)``: make one recorder each).
    public init(paths: [String], width: Int, height: Int, options: RecordingOptions, audio: AudioFormat? = nil,
                machine: @autoclosure () -> EncoderChoice.Machine = .probe()) throws(RecorderError) {
        guard !paths.isEmpty else { throw .options("no output to record into") }
        var outputs: [Output] = []
        for path in paths { outputs.append(try Output(path: path)) }
        guard width > 0, height > 0, width % 2 == 0, height % 2 == 0 else {
            throw .frame(path: paths[0], reason: "\(width)x\(height): 4:2:0 video needs even sides")
        }
        let found = machine()
        if let why = try Recorder.whyNotShared(paths, options: options, machine: found) {
            throw .options("one encoder cannot feed \(paths.joined(separator: " and ")): \(why)")
        }
        let choice = try EncoderChoice.resolve(options, container: outputs[0].container, machine: found)
        self.paths = paths
        self.outputs = outputs
        self.choice = choice
        self.layout = choice.encoder == .vaapi ? .nv12 : .i420
        self.width = width
        self.height = height
        cff_quiet(cff_log_error())

        do throws(RecorderError) {
            for output in outputs {
                let partial = output.partialPath
                var context: UnsafeMutablePointer<AVFormatContext>?
                try ffmpeg("avformat_alloc_output_context2", path: partial) {
                    avformat_alloc_output_context2(&context, nil, output.container.muxer, partial)
                }
                output.format = context
                guard let stream = avformat_new_stream(context, nil) else { throw .encoder(name: choice.codecName, reason: "no stream (out of memory?)") }
                output.video = stream
            }
            guard let codecInfo = avcodec_find_encoder_by_name(choice.codecName), let encoder = avcodec_alloc_context3(codecInfo),
                  let packet = av_packet_alloc(), let reference = av_packet_alloc() else {
                throw .encoder(name: choice.codecName, reason: "could not be set up (out of memory?)")
            }
            codec = encoder
            self.packet = packet
            self.reference = reference
            // The key frame interval every output can take (segments: at most one segment).
            let gop = outputs.map { options.keyFrameInterval(for: $0.container) }.min()!
            try configure(encoder, options: options, gop: gop)
            Recorder.opened.add(1, ordering: .relaxed)
            for output in outputs {
                let stream = output.video!, format = output.format!, partial = output.partialPath
                try ffmpeg("avcodec_parameters_from_context", path: partial) { avcodec_parameters_from_context(stream.pointee.codecpar, encoder) }
                stream.pointee.time_base = encoder.pointee.time_base
                if let audio {
                    // One audio encoder per codec, shared by the outputs that carry it.
                    let name = AudioTrack.codecName(for: output.container)
                    var track: AudioTrack
                    if let made = audioTracks.first(where: { $0.codecName == name }) {
                        track = made
                    } else {
                        track = try AudioTrack(codecName: name, input: audio, globalHeader: globalHeader, path: partial)
                        audioTracks.append(track)
                    }
                    output.audioTrack = track
                    output.audio = try track.addStream(to: format, path: partial)
                }
                if format.pointee.oformat.pointee.flags & cff_fmt_nofile() == 0 {   // the HLS muxer opens its files itself
                    try ffmpeg("avio_open", path: partial) { avio_open(&format.pointee.pb, partial, AVIO_FLAG_WRITE) }
                }
                var muxing: OpaquePointer?
                defer { av_dict_free(&muxing) }
                for (key, value) in Recorder.muxerOptions(output.container, options: options, path: output.path) { av_dict_set(&muxing, key, value, 0) }
                try ffmpeg("avformat_write_header", path: partial) { avformat_write_header(format, &muxing) }
            }
        } catch {
            release()
            for output in outputs where output.container != .hls { unlink(output.partialPath) }
            throw error
        }
    }

    /// Whether any output's muxer wants the codec's headers out of band (Matroska, MP4): the one
    /// encoder then puts them there for all.
    private var globalHeader: Bool {
        outputs.contains { $0.format.map { $0.pointee.oformat.pointee.flags & cff_fmt_globalheader() != 0 } ?? false }
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

    private func configure(_ encoder: UnsafeMutablePointer<AVCodecContext>, options: RecordingOptions, gop: Int) throws(RecorderError) {
        encoder.pointee.width = Int32(width)
        encoder.pointee.height = Int32(height)
        encoder.pointee.time_base = AVRational(num: 1, den: Recorder.ticks)
        let rate = FrameRate(options.fps)
        encoder.pointee.framerate = AVRational(num: rate.num, den: rate.den)
        encoder.pointee.gop_size = Int32(gop)
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
        if globalHeader { encoder.pointee.flags |= cff_flag_global_header() }
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
        guard outputs.contains(where: \.open) else { throw outputs[0].failure ?? .frame(path: path, reason: "the recording has ended") }
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

    /// Reads each playlist when it changed (a segment closed) and announces the segments it lists
    /// that were not announced yet; the muxer renames each segment into place before it lists it.
    private func announceSegments() {
        guard let onSegmentClosed else { return }
        for output in outputs where output.container == .hls {
            let path = output.path
            var info = stat()
            guard stat(path, &info) == 0 else { continue }
            let stamp = (Int(info.st_mtim.tv_nsec) ^ Int(info.st_mtim.tv_sec), Int(info.st_size))
            guard stamp != output.playlistStamp else { continue }
            output.playlistStamp = stamp
            guard let text = Recorder.read(path) else { continue }
            let dir = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
            var names: [String] = []
            for line in text.split(separator: "\n") {
                if line.hasPrefix("#EXT-X-MAP:URI=\""), let name = line.dropFirst(16).split(separator: "\"").first { names.append(String(name)) }
                if !line.hasPrefix("#") && !line.isEmpty { names.append(String(line)) }
            }
            while output.announced < names.count {
                onSegmentClosed("\(dir)/\(names[output.announced])")
                output.announced += 1
            }
        }
    }

    /// A small text file's content (the playlist), nil when it cannot be read.
    public static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
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
        guard !ended, !audioTracks.isEmpty else { throw .frame(path: path, reason: "the recording has no sound or has ended") }
        let origin = firstNanos ?? timestampNanos
        firstNanos = origin
        var failure: RecorderError?
        for track in audioTracks {
            do throws(RecorderError) {
                try track.append(samples, timestampNanos: timestampNanos, origin: origin) { (frame) throws(RecorderError) in
                    try encodeAudio(track, frame)
                }
            } catch { failure = failure ?? error }
        }
        audioSamples += samples.count / audioTracks[0].input.channels
        if let failure { throw failure }
    }

    private func encodeAudio(_ track: AudioTrack, _ frame: UnsafeMutablePointer<AVFrame>?) throws(RecorderError) {
        try ffmpeg("avcodec_send_frame", path: partialPath) { avcodec_send_frame(track.codec, frame) }
        try drain(track.codec, audio: track)
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

    /// Every packet the video encoder has ready, to every open output.
    private func drain() throws(RecorderError) {
        guard let codec else { return }
        try drain(codec, audio: nil)
    }

    /// Every packet `codec` has ready (the video's, or `audio`'s) to each open output that carries
    /// it: a reference each, its timestamps rescaled to that output's stream. An output whose write
    /// fails is closed where it got to (``Output/failure`` says what it kept); the others still get
    /// every packet, and the first failure is thrown at the end.
    private func drain(_ codec: UnsafeMutablePointer<AVCodecContext>, audio track: AudioTrack?) throws(RecorderError) {
        guard let packet, let reference else { return }
        var failure: RecorderError?
        while true {
            let status = avcodec_receive_packet(codec, packet)
            if status == cff_eagain() || status == cff_eof() { break }
            try ffmpeg("avcodec_receive_packet", path: partialPath) { status }
            defer { av_packet_unref(packet) }
            for output in outputs where output.open {
                guard let format = output.format, let stream = track == nil ? output.video : output.audioTrack === track ? output.audio : nil else { continue }
                let kept = self.kept, partial = output.partialPath
                do throws(RecorderError) {
                    try ffmpeg("av_packet_ref", path: partial) { av_packet_ref(reference, packet) }
                    if track != nil, output.container == .matroska || output.container == .webm {
                        Recorder.placeAfterCodecDelay(reference, padding: codec.pointee.initial_padding)
                    }
                    av_packet_rescale_ts(reference, codec.pointee.time_base, stream.pointee.time_base)
                    reference.pointee.stream_index = stream.pointee.index
                    // The muxer takes the reference (the packet is blank after, written or not).
                    try ffmpeg("av_interleaved_write_frame", path: partial, kept: { "kept \(kept) in \(partial); it plays up to its last complete second" }) {
                        av_interleaved_write_frame(format, reference)
                    }
                } catch {
                    av_packet_unref(reference)
                    output.failure = error
                    close(output)
                    failure = failure ?? error
                }
            }
        }
        if let failure { throw failure }
    }

    /// Matroska's sound with a codec delay (Opus's pre-skip: 312 samples at 48 kHz): the encoder
    /// stamps each packet `padding` samples early (its first packet before zero, as FFmpeg has it),
    /// and the file says `CodecDelay` — a player drops that many samples and subtracts the delay
    /// from each block's time, so a block's time must be its packet's plus the delay. libavformat
    /// 59 (FFmpeg 5.1, the one the loader opens) writes `CodecDelay` but not that offset (later
    /// versions add it themselves), which put the sound 6.5 ms early against the picture; it is
    /// added here, in the codec's time base (samples, exact).
    static func placeAfterCodecDelay(_ packet: UnsafeMutablePointer<AVPacket>, padding: Int32) {
        guard padding > 0 else { return }
        if packet.pointee.pts != cff_nopts() { packet.pointee.pts += Int64(padding) }
        if packet.pointee.dts != cff_nopts() { packet.pointee.dts += Int64(padding) }
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
    /// (a full disk) the partial file stays and the error says what it holds. With several
    /// outputs: every one is ended (``finishEach()``), and the first failure is thrown.
    @discardableResult
    public func finish() throws(RecorderError) -> Summary {
        guard !ended else { throw .frame(path: path, reason: "the recording has already ended") }
        let results = finishEach()
        for result in results { if case let .failure(error) = result { throw error } }
        return try results[0].get()
    }

    /// Drains the encoders into every output still open, writes each one's trailer and renames it
    /// to its final name; one result per output, in ``paths``' order. An output that failed
    /// earlier (or fails now) answers its error, saying what it kept under its partial name; the
    /// others end cleanly all the same.
    public func finishEach() -> [Result<Summary, RecorderError>] {
        guard !ended else { return outputs.map { .failure($0.failure ?? .frame(path: $0.path, reason: "the recording has already ended")) } }
        ended = true
        let keptNow = kept
        /// A failure no one output caused (the encoder's) ends them all.
        func settle(_ error: RecorderError) {
            guard !outputs.contains(where: { $0.failure == error }) else { return }
            for output in outputs where output.open {
                output.failure = error
                close(output)
            }
        }
        do throws(RecorderError) {
            try ffmpeg("avcodec_send_frame", path: partialPath) { avcodec_send_frame(codec, nil) }
            try drain()
        } catch { settle(error) }
        for track in audioTracks {
            do throws(RecorderError) {
                try track.flush(minimum: 1) { (frame) throws(RecorderError) in try encodeAudio(track, frame) }
                try encodeAudio(track, nil)
            } catch { settle(error) }
        }
        let seconds = Double(max(0, lastPTS)) / Double(Recorder.ticks)
        var results: [Result<Summary, RecorderError>] = []
        for output in outputs {
            guard output.open, let format = output.format else {
                results.append(.failure(output.failure ?? .frame(path: output.path, reason: "the recording has ended")))
                continue
            }
            let partial = output.partialPath
            let keep = { "kept \(keptNow) in \(partial); it plays up to its last complete second" }
            do throws(RecorderError) {
                try ffmpeg("av_write_trailer", path: partial, kept: keep) { av_write_trailer(format) }
                if format.pointee.pb != nil {
                    try ffmpeg("avio_closep", path: partial, kept: keep) { avio_closep(&format.pointee.pb) }
                }
                if output.container != .hls {
                    let fd = open(partial, O_RDONLY | O_CLOEXEC)
                    if fd >= 0 { fsync(fd); Glibc.close(fd) }
                    guard rename(partial, output.path) == 0 else {
                        throw .library(call: "rename", path: output.path, code: errno, message: String(cString: strerror(errno)) + "; \(keep())")
                    }
                }
                results.append(.success(Summary(path: output.path, frames: frames, seconds: seconds)))
            } catch {
                output.failure = error
                closeFile(output)
                results.append(.failure(error))
            }
        }
        announceSegments()
        return results
    }

    /// Ends without the clean rename: what was written stays under each output's partial name.
    public func abandon() {
        guard !ended else { return }
        ended = true
        for output in outputs where output.open { close(output) }
    }

    /// Ends `output` where it got to (a failure, or ``abandon()``): the trailer where the muxer can
    /// still write one (the segments' playlist ends), the file closed under its partial name.
    private func close(_ output: Output) {
        if let format = output.format, format.pointee.pb != nil || output.container == .hls { _ = av_write_trailer(format) }
        closeFile(output)
        if output.failure == nil { output.failure = .frame(path: output.path, reason: "the recording was abandoned; kept \(kept) in \(output.partialPath)") }
    }

    private func closeFile(_ output: Output) {
        if let format = output.format, format.pointee.pb != nil { avio_closep(&format.pointee.pb) }
    }

    private func release() {
        for output in outputs {
            closeFile(output)
            if let format = output.format { avformat_free_context(format); output.format = nil }
            output.audioTrack = nil
        }
        if codec != nil { avcodec_free_context(&codec) }
        audioTracks = []
        if packet != nil { av_packet_free(&packet) }
        if reference != nil { av_packet_free(&reference) }
        if hwFrames != nil { av_buffer_unref(&hwFrames) }
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
