import CFFmpeg

/// The sound a recording carries: interleaved 32-bit float PCM at its capture rate.
public struct AudioFormat: Sendable, Equatable {
    /// Samples per second per channel.
    public var sampleRate: Int
    /// Interleaved channels (1 or 2).
    public var channels: Int

    public init(sampleRate: Int, channels: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
    }
}

/// A recording's audio stream: PCM resampled (libswresample) to what the encoder takes, cut into
/// the encoder's frame size (an `AVAudioFifo`), encoded (Opus in Matroska/WebM, AAC in MP4/HLS).
///
/// ```
///  append(pcm, t) ─► swr_convert ─► fifo ─► frames of frame_size, pts = first capture time − origin + samples sent ─► encoder ─► packets
/// ```
/// The first block's capture time places the stream against the video (both on `CLOCK_MONOTONIC`);
/// after it the samples are counted, so the sound never jumps.
final class AudioTrack {
    let codec: UnsafeMutablePointer<AVCodecContext>
    let input: AudioFormat
    let codecName: String
    private var resampler: OpaquePointer?
    private var fifo: OpaquePointer?
    private var startPTS: Int64?
    private var sent: Int64 = 0
    private let path: String

    /// The audio encoder a container carries.
    static func codecName(for container: Container) -> String {
        container == .matroska || container == .webm ? "libopus" : "aac"
    }

    /// The encoder `name` (``codecName(for:)``) for `input`; `globalHeader`: its headers out of
    /// band (what Matroska and MP4 want). Its streams are added per output (``addStream(to:path:)``).
    init(codecName name: String, input: AudioFormat, globalHeader: Bool, path: String) throws(RecorderError) {
        guard input.channels == 1 || input.channels == 2, input.sampleRate >= 8000 else {
            throw .options("audio: \(input.channels) channels at \(input.sampleRate) Hz; a recording takes 1 or 2 channels at 8000 Hz or more")
        }
        guard let found = avcodec_find_encoder_by_name(name), let context = avcodec_alloc_context3(found) else {
            throw .encoder(name: name, reason: "not in this FFmpeg (libavcodec \(EncoderChoice.libavcodecVersion))")
        }
        codec = context
        self.input = input
        self.path = path
        codecName = name
        let rate = name == "libopus" ? 48_000 : input.sampleRate
        context.pointee.sample_rate = Int32(rate)
        context.pointee.sample_fmt = name == "libopus" ? AV_SAMPLE_FMT_FLT : AV_SAMPLE_FMT_FLTP
        av_channel_layout_default(&context.pointee.ch_layout, Int32(input.channels))
        context.pointee.bit_rate = Int64(64_000 * input.channels)
        context.pointee.time_base = AVRational(num: 1, den: Int32(rate))
        if globalHeader { context.pointee.flags |= cff_flag_global_header() }
        let status = avcodec_open2(context, nil, nil)
        guard status >= 0 else { throw .encoder(name: name, reason: ffmpegMessage(status)) }
        var inLayout = AVChannelLayout()
        av_channel_layout_default(&inLayout, Int32(input.channels))
        defer { av_channel_layout_uninit(&inLayout) }
        try ffmpeg("swr_alloc_set_opts2", path: path) {
            swr_alloc_set_opts2(&resampler, &context.pointee.ch_layout, context.pointee.sample_fmt, Int32(rate),
                                &inLayout, AV_SAMPLE_FMT_FLT, Int32(input.sampleRate), 0, nil)
        }
        try ffmpeg("swr_init", path: path) { swr_init(resampler) }
        fifo = av_audio_fifo_alloc(context.pointee.sample_fmt, Int32(input.channels), max(1, context.pointee.frame_size))
    }

    /// A stream for this sound in `format` (one output), its parameters the encoder's.
    func addStream(to format: UnsafeMutablePointer<AVFormatContext>, path: String) throws(RecorderError) -> UnsafeMutablePointer<AVStream> {
        guard let made = avformat_new_stream(format, nil) else { throw .encoder(name: codecName, reason: "no stream (out of memory?)") }
        try ffmpeg("avcodec_parameters_from_context", path: path) { avcodec_parameters_from_context(made.pointee.codecpar, codec) }
        made.pointee.time_base = codec.pointee.time_base
        return made
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = codec
        avcodec_free_context(&context)
        swr_free(&resampler)
        if let fifo { av_audio_fifo_free(fifo) }
    }

    /// Resamples `samples` (interleaved, captured from `timestampNanos`) into the fifo and hands
    /// every whole encoder frame to `encode`. `origin`: the recording's time zero.
    func append(_ samples: UnsafeBufferPointer<Float>, timestampNanos: UInt64, origin: UInt64,
                encode: (UnsafeMutablePointer<AVFrame>?) throws(RecorderError) -> Void) throws(RecorderError) {
        let rate = Int64(codec.pointee.sample_rate)
        if startPTS == nil {
            let offset = timestampNanos >= origin ? Double(timestampNanos - origin) : -Double(origin - timestampNanos)
            startPTS = Int64((offset * Double(rate) / 1e9).rounded())
        }
        let count = samples.count / input.channels
        let room = swr_get_out_samples(resampler, Int32(count))
        var converted: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?
        var lineSize: Int32 = 0
        try ffmpeg("av_samples_alloc_array_and_samples", path: path) {
            av_samples_alloc_array_and_samples(&converted, &lineSize, Int32(input.channels), max(1, room), codec.pointee.sample_fmt, 0)
        }
        defer {
            av_freep(converted)
            av_freep(&converted)
        }
        var source: UnsafePointer<UInt8>? = UnsafeRawPointer(samples.baseAddress!).assumingMemoryBound(to: UInt8.self)
        let made = try ffmpeg("swr_convert", path: path) { swr_convert(resampler, converted, max(1, room), &source, Int32(count)) }
        try ffmpeg("av_audio_fifo_write", path: path) {
            converted!.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: input.channels) {
                av_audio_fifo_write(fifo, $0, made)
            }
        }
        try flush(minimum: max(1, Int(codec.pointee.frame_size)), encode: encode)
    }

    /// Every fifo frame of `minimum` samples (at the end: the rest too), to `encode`; then, at the end, nil (drain).
    func flush(minimum: Int, encode: (UnsafeMutablePointer<AVFrame>?) throws(RecorderError) -> Void) throws(RecorderError) {
        let size = max(1, Int(codec.pointee.frame_size))
        while Int(av_audio_fifo_size(fifo)) >= minimum && av_audio_fifo_size(fifo) > 0 {
            let take = min(size, Int(av_audio_fifo_size(fifo)))
            var allocated = av_frame_alloc()
            guard let frame = allocated else { throw .frame(path: path, reason: "out of memory") }
            defer { av_frame_free(&allocated) }
            frame.pointee.nb_samples = Int32(take)
            frame.pointee.format = codec.pointee.sample_fmt.rawValue
            frame.pointee.sample_rate = codec.pointee.sample_rate
            av_channel_layout_copy(&frame.pointee.ch_layout, &codec.pointee.ch_layout)
            try ffmpeg("av_frame_get_buffer", path: path) { av_frame_get_buffer(frame, 0) }
            try ffmpeg("av_audio_fifo_read", path: path) {
                withUnsafeMutablePointer(to: &frame.pointee.data) {
                    $0.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 8) { av_audio_fifo_read(fifo, $0, Int32(take)) }
                }
            }
            frame.pointee.pts = (startPTS ?? 0) + sent
            sent += Int64(take)
            try encode(frame)
        }
    }
}
