import ArgumentParser
import GraniteCam
import GraniteRecorder

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

    func validate() throws {
        guard RecordingOptions.Encoder(rawValue: encoder) != nil else {
            throw ValidationError("--encoder takes \(RecordingOptions.Encoder.allCases.map(\.rawValue).joined(separator: ", ")), not \(encoder)")
        }
        if !(0...51).contains(quality) { throw ValidationError("--quality takes 0 (best) to 51") }
        if let gop, gop < 1 { throw ValidationError("--gop takes 1 or more frames") }
        if let record {
            do { _ = try Container(path: record) } catch { throw ValidationError("--record: \(error)") }
        } else if encoder != "auto" || gop != nil || quality != 20 {
            throw ValidationError("--encoder, --quality and --gop need --record FILE")
        }
    }

    /// The sink for `--record` (nil without it), its encoder chosen; throws what does not fit.
    func sink(fps: Double) throws(RecorderError) -> RecordSink? {
        guard let record else { return nil }
        let options = RecordingOptions(encoder: RecordingOptions.Encoder(rawValue: encoder) ?? .auto, quality: quality, gop: gop,
                                       fps: fps, preset: recordPreset)
        return try RecordSink(path: record, options: options)
    }

    /// The lines at the end of the run, and whether the recording failed.
    static func report(_ sink: RecordSink) -> (lines: [String], failed: Bool) {
        sink.finish()   // idempotent: the sink relay finished it when the run unmounted
        switch sink.outcome {
        case let .success(summary)?:
            return (["recorded \(summary.frames) frames, \(CamStateFormat.seconds(summary.seconds)) s to \(summary.path)"
                     + (sink.deviceReads > 0 ? " (\(sink.deviceReads) read from the device)" : "")], false)
        case let .failure(error)?:
            return (["error: --record: \(error)"], true)
        case nil:
            return (["error: --record: the recording did not end"], true)
        }
    }
}
