import ArgumentParser
import GraniteCam
import GraniteCapture
import GraniteRecorder

#if canImport(Glibc)
import Glibc
#endif

/// `--record FILE` and its encoder settings: every processed frame into a video file, in-process.
struct RecordOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Record every processed frame into FILE (.mkv, .mp4 or .webm), encoded in-process. It is written as FILE's name with .partial before the extension and renamed at a clean end; a killed recording stays there and plays up to its last second.", valueName: "file"))
    var record: String?

    @Option(help: ArgumentHelp("Encoder for --record: auto (NVENC on an NVIDIA GPU, VA-API on a render node that encodes, else x264; VP9 for .webm), x264, svtav1, vp9, nvenc, vaapi.", valueName: "name"))
    var encoder: String = "auto"

    @Option(help: ArgumentHelp("Recording quality on one CRF-like scale for every encoder: 0 (best) to 51 (x264's CRF; the others mapped onto it).", valueName: "0-51"))
    var quality: Int = 20

    @Option(help: ArgumentHelp("Frames between key frames in the recording (default: two seconds' worth).", valueName: "frames"))
    var gop: Int?

    @Option(name: .customLong("record-preset"), help: ArgumentHelp("x264's preset for --record.", valueName: "preset"))
    var recordPreset: String = "veryfast"

    @Option(help: ArgumentHelp("Write live segments into DIR: fragmented-MP4 segments and an HLS playlist DIR/live.m3u8, updated as each segment closes (#EXT-X-ENDLIST at the end). Same encoder options as --record.", valueName: "dir"))
    var segments: String?

    @Option(name: .customLong("segment-seconds"), help: ArgumentHelp("Seconds per --segments segment (each starts at a key frame).", valueName: "seconds"))
    var segmentSeconds: Double = 4

    @Option(help: ArgumentHelp("Record sound with the picture: pipewire (the session's default source), pipewire:NODE (an Audio/Source by node.name, description, id or serial; `pw-cli ls Node` lists them), alsa (ALSA's default PCM) or alsa:PCM (an ALSA name: hw:1,0, plughw:CARD=Mic, pipewire…; `arecord -L` lists them). Opus in .mkv/.webm, AAC in .mp4 and segments; stamped on the capture clock the frames are. A missing or busy source, or no sound within --first-frame-timeout, ends the run before the camera starts.", valueName: "source"))
    var audio: String?

    /// Where `--audio` takes sound from; nil without `--audio` (or one that does not parse: `validate` says so).
    var audioSource: AudioSourceSpec? { audio.flatMap { try? AudioSourceSpec(parsing: $0) } }

    func validate() throws {
        if let audio {
            do { _ = try AudioSourceSpec(parsing: audio) } catch { throw ValidationError("\(error)") }
            if record == nil && segments == nil { throw ValidationError("--audio needs --record FILE or --segments DIR") }
        }
        if !(segmentSeconds > 0) { throw ValidationError("--segment-seconds must be positive") }
        guard RecordingOptions.Encoder(rawValue: encoder) != nil else {
            throw ValidationError("--encoder takes \(RecordingOptions.Encoder.allCases.map(\.rawValue).joined(separator: ", ")), not \(encoder)")
        }
        if !(0...51).contains(quality) { throw ValidationError("--quality takes 0 (best) to 51") }
        if let gop, gop < 1 { throw ValidationError("--gop takes 1 or more frames") }
        if let record {
            do { _ = try Container(path: record) } catch { throw ValidationError("--record: \(error)") }
        } else if segments == nil && (encoder != "auto" || gop != nil || quality != 20) {
            throw ValidationError("--encoder, --quality and --gop need --record FILE or --segments DIR")
        }
    }

    /// The sinks for `--record` and `--segments` (none without them), each encoder chosen; throws
    /// what does not fit. With both, one sink (one encoder) feeds the two when they take the same
    /// encoder; else two, and `twoEncoders` says why.
    func sinks(fps: Double) throws(RecorderError) -> (sinks: [RecordSink], twoEncoders: String?) {
        var options = RecordingOptions(encoder: RecordingOptions.Encoder(rawValue: encoder) ?? .auto, quality: quality, gop: gop,
                                       fps: fps, preset: recordPreset)
        options.segmentSeconds = segmentSeconds
        // FFmpeg first: without it nothing is made (not even the --segments folder).
        if record != nil || segments != nil { try FFmpegLibraries.load() }
        var paths: [String] = []
        if let record { paths.append(record) }
        if let segments {
            // The folder and any missing parents (`--out run --segments run/live` on a first run).
            var made = segments.hasPrefix("/") ? "" : "."
            for part in segments.split(separator: "/") {
                made += "/" + part
                if mkdir(made, 0o755) != 0 && errno != EEXIST {
                    throw .options("--segments \(segments): cannot create the folder \(made): \(String(cString: strerror(errno)))")
                }
            }
            var isFolder = stat()
            guard stat(segments, &isFolder) == 0, (isFolder.st_mode & S_IFMT) == S_IFDIR else {
                throw .options("--segments \(segments): not a folder")
            }
            paths.append(segments + "/live.m3u8")
        }
        guard !paths.isEmpty else { return ([], nil) }
        let machine = EncoderChoice.Machine.probe()
        if let why = try Recorder.whyNotShared(paths, options: options, machine: machine) {
            var sinks: [RecordSink] = []
            for path in paths { sinks.append(try RecordSink(path: path, options: options, machine: machine)) }
            return (sinks, why)
        }
        return ([try RecordSink(paths: paths, options: options, machine: machine)], nil)
    }

    /// `--audio`: opens the source (a PipeWire node, an ALSA PCM) and waits for its first sound
    /// (throws naming it when it is missing, busy or silent), tells every sink its format and hands them each block from then on.
    func startSound(into sinks: [RecordSink], firstBlockTimeout: Double) throws(CaptureError) -> (any AudioCaptureSource)? {
        guard let spec = audioSource else { return nil }
        let source = spec.makeSource(firstBlockTimeout: firstBlockTimeout)
        try source.start { block in
            for sink in sinks { sink.takeSound(block) }
        }
        // Known once the first block came (start waits for it), before any frame reaches the sinks.
        if let format = source.format {
            for sink in sinks { sink.addSound(AudioFormat(sampleRate: format.sampleRate, channels: format.channels)) }
        }
        return source
    }

    /// The lines at the end of the run (one per output), and whether the recording failed.
    static func report(_ sink: RecordSink) -> (lines: [String], failed: Bool) {
        sink.finish()   // idempotent: the sink relay finished it when the run unmounted
        guard let outcomes = sink.outcomes else { return (["error: --record: the recording did not end"], true) }
        var lines: [String] = [], failed = false
        for (path, outcome) in zip(sink.paths, outcomes) {
            switch outcome {
            case let .success(summary):
                if summary.path.hasSuffix(".m3u8") {
                    lines.append("segments: \(summary.frames) frames, \(CamStateFormat.seconds(summary.seconds)) s, playlist \(summary.path)")
                    continue
                }
                lines.append("recorded \(summary.frames) frames, \(CamStateFormat.seconds(summary.seconds)) s to \(summary.path)"
                             + (sink.deviceReads > 0 ? " (\(sink.deviceReads) read from the device)" : ""))
                if let sound = sink.sound {
                    let (encoded, gaps, dropped) = sink.soundCounts
                    let rate = Double(sound.format.sampleRate)
                    lines.append("sound: \(CamStateFormat.seconds(Double(encoded) / rate)) s of \(sink.soundCodecs[path] ?? sound.codec), "
                                 + "\(sound.format.sampleRate) Hz, \(sound.format.channels) channel\(sound.format.channels == 1 ? "" : "s")"
                                 + (gaps > 0 ? ", \(CamStateFormat.seconds(Double(gaps) / rate)) s of gaps in the capture filled with silence" : "")
                                 + (dropped > 0 ? ", \(dropped) samples dropped (the encoder fell behind)" : ""))
                }
            case let .failure(error):
                lines.append("error: \(path.hasSuffix(".m3u8") ? "--segments" : "--record"): \(error)")
                failed = true
            }
        }
        return (lines, failed)
    }
}
