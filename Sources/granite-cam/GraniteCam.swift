import ArgumentParser
import Dispatch
import GraniteCam
import GraniteCapture
import GraniteMLVulkan
import GraniteMedia
import GranitePinOptions
import GraniteRecorder

#if canImport(Glibc)
import Glibc
#endif

/// `granite-cam`: live processing — a camera (or the test pattern, or a folder) through the
/// pipeline to disk, with fps, latency and drops on a status line. Thin over `GraniteCam`.
@main
struct GraniteCamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "granite-cam",
        abstract: "Capture frames live, process them, and write them out; runs on a test pattern when there is no camera."
    )

    @Option(help: "V4L2 device node (default: the first camera, else the test pattern).")
    var device: String?

    @Option(help: "Source: testpattern, folder:PATH, pipewire[:NODE] (a PipeWire video source; `granite devices` lists them), or a device path.")
    var source: String?

    @Option(help: "Frame size WxH (drivers may adjust; the status line shows what was chosen).")
    var size = "640x480"

    @Option(help: "Frames per second to ask for.")
    var fps: Double = 30

    @Option(help: "Capture format: auto, yuyv, mjpeg, nv12, rgb24.")
    var format = "auto"

    @Option(name: .customLong("filter"), help: "Marble filter spec (repeatable, or joined with |), e.g. blur:sigma=2.")
    var filters: [String] = []

    @Flag(help: "Run filters on the CPU reference instead of Vulkan.")
    var cpuFilters = false

    @Option(help: "Image files written: png, jpg, ppm.")
    var imageFormat = "png"

    @Flag(help: "Estimate depth.")
    var depth = false

    @Option(help: "Estimate depth on every N-th frame.")
    var depthEvery: Int = 1

    @Flag(inversion: .prefixedNo, help: ArgumentHelp("Beside each 16-bit depth map (depth-SEQ.png, millimetres or relative, larger = farther) write its colour view depth-SEQ.preview.png (8-bit, viridis, yellow = near) that any image viewer shows."))
    var depthPreview = true

    @Option(help: "Depth model (.onnx); default: the built-in FastDepth from the model search path.")
    var depthModel: String?

    @Option(help: ArgumentHelp("Where the depth model runs: gpu (Vulkan), cpu, or auto (the GPU on discrete and integrated GPUs, the CPU on CPU drivers such as lavapipe).",
                               valueName: "auto|gpu|cpu"))
    var depthDevice: InferenceDevice = .auto

    @Flag(help: "Segment people (MediaPipe's selfie segmentation; on by itself when a filter is background): the mask the background filter reads.")
    var segment = false

    @Option(help: "Make the person mask on every N-th frame (the last mask serves the frames between).")
    var segmentEvery: Int = 1

    @Option(help: "Segmentation model (.onnx); default: the built-in selfie segmentation, the landscape 144x256 one for frames wider than tall.")
    var segmentModel: String?

    @Option(help: ArgumentHelp("Where the segmentation model runs: gpu (Vulkan; inside the frame on the filters' device), cpu, or auto (the GPU on discrete and integrated GPUs, the CPU on CPU drivers such as lavapipe).",
                               valueName: "auto|gpu|cpu"))
    var segmentDevice: InferenceDevice = .auto

    @Option(help: "Write frames into this folder (atomic files + frames.jsonl).")
    var out: String?

    @Option(help: "Which frames to write: every, N (every N-th), none (default: every with --out). SIGUSR1 writes the next frame (snapshot).")
    var save: String?

    @Option(help: "Stop after N frames.")
    var frames: UInt64?

    @Option(help: "Stop after S seconds.")
    var duration: Double?

    @Option(help: "Serve the preview page on this port (loopback): live picture, depth, status, snapshot button, filter chain box.")
    var preview: Int?

    @Option(name: .customLong("preview-bind"), help: "Address the preview listens on (default 127.0.0.1; requests must name it in Host).")
    var previewBind: String?

    @OptionGroup(title: "Pinning (--pin; the same options as `granite pin` and `granite convert --pin`)")
    var pinning: PinOutputOptions

    @Option(name: .customLong("ctrl"), help: "Set a camera control after the format is negotiated (and after a reconnect): name=value, names as `granite devices` lists them (repeatable).")
    var controls: [String] = []

    @Option(name: .customLong("v4l2-out"), help: "Write every processed frame to this V4L2 output device (a v4l2loopback virtual camera).")
    var v4l2Out: String?

    @Option(name: .customLong("v4l2-out-format"), help: "Pixel format for --v4l2-out: yuyv, yu12, rgb24 or bgr24 (default: the first of these the device offers).")
    var v4l2OutFormat: String?

    @Option(name: .customLong("pipewire-out"), help: ArgumentHelp("Publish every processed frame as a PipeWire camera node with this description (default granite-cam); consumers negotiate YUY2, NV12, I420, BGRx or RGBx.", valueName: "name"))
    var pipeWireOut: String?

    @Option(name: .customLong("pipewire-out-format"), help: "Formats --pipewire-out offers, comma-separated in order of preference (default: yuy2,nv12,i420,bgrx,rgbx).")
    var pipeWireOutFormat: String?

    @OptionGroup(title: "Recording (--record)")
    var recording: RecordOptions

    @Option(help: "Write every processed frame to standard output as YUV4MPEG2: y4m (4:2:0) or y4m:444. Status and the summary go to stderr; a reader that goes away ends the run cleanly.")
    var pipe: String?

    @Flag(help: "Take test-pattern/folder frames as fast as the pipeline can (no pacing).")
    var unpaced = false

    @Flag(inversion: .prefixedNo, help: "Live: drop frames at the source when the pipeline is behind (latest wins); --no-live: make the source wait, lose nothing. Default: live for a camera and the paced test pattern, non-live for a folder and --unpaced.")
    var live: Bool?

    @Option(name: .customLong("reconnect-timeout"), help: ArgumentHelp("How long a source that went away (a PipeWire node whose producer stopped, an unplugged camera) is waited for before the run ends with an error (default: 30 for a PipeWire node; a V4L2 camera is waited for without end).", valueName: "seconds"))
    var reconnectTimeout: Double?

    @Option(name: .customLong("first-frame-timeout"), help: ArgumentHelp("How long a camera or PipeWire node that is open (linked) may take to send its first frame, at the start and after a reconnect, before the run ends with an error naming it and what was negotiated.", valueName: "seconds"))
    var firstFrameTimeout: Double = 10

    @Option(help: "Status renders per second.")
    var statusHz: Double = 4

    @Option(name: .customLong("capture-log"), help: ArgumentHelp("Test pattern: log each frame's drawn counter and time to this file (latency measurements join it with a consumer's log; default: $GRANITE_CAPTURE_LOG).", valueName: "file"))
    var captureLog: String?

    func validate() throws {
        if device != nil && source != nil { throw ValidationError("give --device or --source, not both") }
        if frames != nil && duration != nil { throw ValidationError("give --frames or --duration, not both") }
        if FrameSize(parsing: size) == nil { throw ValidationError("--size must be WxH with positive sides, not \(size)") }
        if CaptureFormat(rawValue: format) == nil {
            throw ValidationError("--format must be one of \(CaptureFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if fps <= 0 { throw ValidationError("--fps must be positive") }
        if depthEvery < 1 { throw ValidationError("--depth-every must be at least 1") }
        if segmentEvery < 1 { throw ValidationError("--segment-every must be at least 1") }
        if depth && segments {
            throw ValidationError("--depth and segmentation (--segment, or a background filter) cannot run together: the chain has one map, depth or the person mask")
        }
        if !["png", "jpg", "ppm"].contains(imageFormat) { throw ValidationError("--image-format must be png, jpg or ppm") }
        if let preview, !(0...65535).contains(preview) { throw ValidationError("--preview takes a port number 0-65535") }
        if save != nil && out == nil { throw ValidationError("--save needs --out DIR") }
        if pinning.isRequested && out == nil { throw ValidationError("--pin needs --out DIR") }
        for control in controls {
            do { _ = try ControlSetting(parsing: control) } catch { throw ValidationError("\(error)") }
        }
        if let v4l2OutFormat, VideoOutputFormat(rawValue: v4l2OutFormat) == nil {
            throw ValidationError("--v4l2-out-format must be one of \(VideoOutputFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if v4l2OutFormat != nil && v4l2Out == nil { throw ValidationError("--v4l2-out-format needs --v4l2-out /dev/videoN") }
        if let pipe, Self.chroma(pipe) == nil { throw ValidationError("--pipe takes y4m or y4m:444, not \(pipe)") }
        if let pipeWireOutFormat, Self.pipeWireFormats(pipeWireOutFormat) == nil {
            throw ValidationError("--pipewire-out-format takes a comma-separated list of \(PipeWireVideoFormat.outputFormats.map { $0.rawValue.lowercased() }.joined(separator: ", "))")
        }
        if pipeWireOutFormat != nil && pipeWireOut == nil { throw ValidationError("--pipewire-out-format needs --pipewire-out NAME") }
        if previewBind != nil && preview == nil { throw ValidationError("--preview-bind needs --preview PORT") }
        if let reconnectTimeout, !(reconnectTimeout >= 0) { throw ValidationError("--reconnect-timeout takes seconds, 0 or more") }
        if !(firstFrameTimeout > 0) || !firstFrameTimeout.isFinite { throw ValidationError("--first-frame-timeout takes seconds, more than 0") }
    }

    func settings() throws -> CamSettings {
        var s = CamSettings()
        if let device {
            s.source = .device(device)
        } else if let source {
            s.source = try SourceSpec(parsing: source)
        } else {
            s.source = CaptureDevices.firstCamera().map { .device($0) } ?? .testPattern
        }
        s.request = CaptureRequest(format: CaptureFormat(rawValue: format)!, size: FrameSize(parsing: size), fps: fps,
                                   controls: try controls.map { try ControlSetting(parsing: $0) })
        if !controls.isEmpty {
            guard case .device = s.source else {
                throw ValidationError("--ctrl needs a camera (--device /dev/videoN); the source is \(s.source)")
            }
        }
        s.outputDirectory = out
        s.save = try out == nil ? .none : SavePolicy(parsing: save ?? "every")
        s.frameLimit = frames
        s.duration = duration
        s.statusHz = statusHz
        s.paced = !unpaced
        s.live = live
        s.depthEvery = depth ? depthEvery : segments ? segmentEvery : nil
        s.depthPreview = depthPreview
        s.reconnectTimeout = reconnectTimeout
        // The option, or the variable the benchmarks set before it existed (read once, here).
        s.captureLog = captureLog ?? getenv("GRANITE_CAPTURE_LOG").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        s.firstFrameTimeout = firstFrameTimeout
        return s
    }

    /// Whether the run segments people: `--segment`, or a `background` filter in the chain.
    var segments: Bool {
        segment || MarbleStage.readsMask(specs: filters)
    }

    /// The formats a `--pipewire-out-format` list names (nil when one is unknown or not offered).
    static func pipeWireFormats(_ list: String) -> [PipeWireVideoFormat]? {
        let formats = list.split(separator: ",").map { PipeWireVideoFormat(name: String($0)) }
        guard !formats.isEmpty, formats.allSatisfy({ $0.map(PipeWireVideoFormat.outputFormats.contains) ?? false }) else { return nil }
        return formats.compactMap { $0 }
    }

    /// The Y4M chroma a `--pipe` value asks for.
    static func chroma(_ pipe: String) -> Y4MSink.Chroma? {
        switch pipe {
        case "y4m", "y4m:420": return .s420
        case "y4m:444": return .s444
        default: return nil
        }
    }

    func run() async throws {
        let tty = isatty(2) != 0
        // A reader that goes away is EPIPE from write (a clean end), not a fatal signal.
        signal(SIGPIPE, SIG_IGN)
        let unknownSwitches = GraniteDebug.unknown
        if !unknownSwitches.isEmpty {
            let known = GraniteDebug.names.map(\.name).joined(separator: ", ")
            writeStandardError("granite-cam: warning: GRANITE_DEBUG: no switch \(unknownSwitches.joined(separator: ", ")) (known: \(known))\n")
        }
        // A file size limit (ulimit -f) is a write error (EFBIG) the recording reports, not a fatal signal.
        signal(SIGXFSZ, SIG_IGN)
        // With --pipe, standard output carries the video: everything else goes to stderr.
        let toStandardError = pipe != nil
        let say: @Sendable (String) -> Void = { line in
            if toStandardError { writeStandardError(line + "\n") } else {
                // Flushed at once: in a log (stdout to a file or pipe, buffered) each line stays in
                // its place among stderr's, and "sound from …" shows before the run ends.
                print(line)
                fflush(nil)   // every output stream: standard output is the one written
            }
        }
        var sinks: [any FrameSink] = []
        if let pipe, let chroma = Self.chroma(pipe) { sinks.append(Y4MSink(fd: 1, chroma: chroma, fps: fps)) }
        if let v4l2Out {
            do {
                let sink = try V4L2OutputSink(path: v4l2Out, size: FrameSize(parsing: size) ?? FrameSize(width: 640, height: 480), fps: fps,
                                              preference: v4l2OutFormat.flatMap { VideoOutputFormat(rawValue: $0) }.map { [$0] } ?? VideoOutputFormat.allCases)
                say("granite-cam: writing \(sink.negotiated) to \(v4l2Out)")
                sinks.append(sink)
            } catch {
                writeStandardError("granite-cam: error: --v4l2-out: \(error)\n")
                throw ExitCode(1)
            }
        }
        let recordSinks: [RecordSink]
        do {
            let (made, twoEncoders) = try recording.sinks(fps: fps)
            recordSinks = made
            for sink in recordSinks {
                let outputs = sink.paths.map { path in
                    path.hasSuffix(".m3u8") ? "segments \(path)" : "\(path) (written as \(Recorder.partialName(path)) until it ends)"
                }
                say("granite-cam: recording to \(outputs.joined(separator: " and "))" + ", \(sink.choice)"
                    + (sink.paths.count > 1 ? "; one encoder for both" : ""))
            }
            if let twoEncoders { say("granite-cam: two encoders for --record and --segments: \(twoEncoders)") }
        } catch {
            writeStandardError("granite-cam: error: --record: \(error)\n")
            throw ExitCode(1)
        }
        sinks += recordSinks as [any FrameSink]
        var pipeWireSink: PipeWireOutputSink?
        if let pipeWireOut {
            do {
                let sink = try PipeWireOutputSink(description: pipeWireOut.isEmpty ? "granite-cam" : pipeWireOut,
                                                  size: FrameSize(parsing: size) ?? FrameSize(width: 640, height: 480), fps: fps,
                                                  formats: pipeWireOutFormat.flatMap(Self.pipeWireFormats) ?? PipeWireVideoFormat.outputFormats)
                say("granite-cam: publishing PipeWire camera \"\(pipeWireOut)\" (\(sink.summary))")
                sinks.append(sink)
                pipeWireSink = sink
            } catch {
                writeStandardError("granite-cam: error: --pipewire-out: \(error)\n")
                throw ExitCode(1)
            }
        }
        let stages: [any FrameStage]
        do {
            // With --preview the chain is live: the page's chain box replaces it while frames flow.
            if preview != nil {
                stages = [try LiveChainStage.marble(filters.joined(separator: " | "), gpu: !cpuFilters)]
            } else {
                stages = filters.isEmpty ? [ToRGBA()] : [try MarbleStage(specs: filters, gpu: !cpuFilters)]
            }
        } catch {
            throw ValidationError("\(error)")
        }
        // Every stage opens what it needs (the Vulkan device) and compiles its pipelines before
        // the first frame: no usable device stops the run here instead of failing every frame.
        let gpuLayouts = sinks.compactMap(\.gpuLayout)
        let warming = ContinuousClock.now
        let warms = !cpuFilters && stages.contains(where: { !($0 is ToRGBA) })
        if warms { say("granite-cam: warming up: opening the device and compiling the filter chain before the first frame") }
        for stage in stages {
            do {
                for line in try stage.prepare(for: FrameSize(parsing: size), yuv: gpuLayouts) { say("granite-cam: \(line)") }
            } catch {
                writeStandardError("granite-cam: error: \(error)\n"
                    + "granite-cam: the filters need a Vulkan device; --cpu-filters runs Marble's CPU reference instead (much slower)\n")
                throw ExitCode(1)
            }
        }
        if warms {
            let took = ContinuousClock.now - warming
            let seconds = Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18
            say("granite-cam: warm in \(CamStateFormat.seconds(seconds)) s")
        }
        let depthStage: (any DepthStage)?
        do {
            depthStage = depth ? try DepthEstimatorStage(modelPath: depthModel, backend: try depthDevice.backend()) : nil
            if let stage = depthStage as? DepthEstimatorStage, depthDevice != .cpu {
                say("granite-cam: depth runs on the \(InferenceDevice.describe(stage.estimator.runner))")
            }
        } catch {
            throw ValidationError("--depth: \(error)")
        }
        // Segmentation: the person mask is the run's map, made and kept as depth is.
        let mapStage: (any DepthStage)?
        do {
            if segments {
                let stage = try SegmentationStage(modelPath: segmentModel, frameSize: FrameSize(parsing: size), backend: try segmentDevice.backend())
                let model = stage.segmenter.modelPath.split(separator: "/").last.map(String.init) ?? stage.segmenter.modelPath
                say("granite-cam: segmenting people with \(model) (\(stage.segmenter.inputSize.width)x\(stage.segmenter.inputSize.height))"
                      + " on the \(InferenceDevice.describe(stage.segmenter.runner)), every \(segmentEvery == 1 ? "frame" : "\(segmentEvery) frames")")
                mapStage = stage
            } else {
                mapStage = depthStage
            }
        } catch {
            throw ValidationError("--segment: \(error)")
        }
        let encoder: any FrameEncoder = imageFormat == "ppm" ? NetpbmEncoder() : CodecsEncoder(imageFormat == "png" ? .png : .jpg)
        // --pin: capture never waits on the node; at exit the whole --out folder is pinned as one
        // directory (one address for the run).
        let pins: CamPinning?
        do {
            let started = try await pinning.start(folder: out)
            if let warning = started?.warning { writeStandardError("granite-cam: warning: \(warning)\n") }
            pins = started?.session
        } catch {
            writeStandardError("granite-cam: --pin: \(error)\n")
            throw ExitCode(1)
        }
        // --segments with --pin: each segment journaled and pinned as it closes, live.ipfs.m3u8 beside live.m3u8.
        var segmentPinner: SegmentPinner?
        if let pins, let segmentSink = recordSinks.first(where: { $0.playlist != nil }), let playlist = segmentSink.playlist {
            let pinner = SegmentPinner(pins: pins, playlist: playlist)
            segmentSink.notifySegments { pinner.closed($0) }
            segmentPinner = pinner
        }
        let server = try preview.map { port in try PreviewServer(port: port, bind: previewBind ?? "127.0.0.1") }
        if let server {
            let host = server.address.contains(":") ? "[\(server.address)]" : server.address
            say("granite-cam: preview at http://\(host):\(server.port)/")
            // --segments: the page plays the live playlist where the browser plays HLS itself.
            if let playlist = recordSinks.lazy.compactMap(\.playlist).first {
                server.serveLive(folder: String(playlist.dropLast("/live.m3u8".count)))
                say("granite-cam: live playlist at http://\(host):\(server.port)/live/live.m3u8")
            }
        }
        defer { server?.close() }
        // --audio: the sound source is found and heard before the camera starts (a missing or
        // silent node ends the run here, naming it); its blocks queue in the record sinks.
        let sound: (any AudioCaptureSource)?
        do {
            sound = try recording.startSound(into: recordSinks, firstBlockTimeout: firstFrameTimeout)
            if let sound, let format = sound.format {
                say("granite-cam: sound from \(sound.name): \(format.sampleRate) Hz, \(format.channels) channel\(format.channels == 1 ? "" : "s")")
            }
        } catch {
            writeStandardError("granite-cam: error: --audio: \(error)\n")
            throw ExitCode(1)
        }
        defer { sound?.stop() }
        let pipeline = try CamPipeline(settings: try settings(), stages: stages, encoder: encoder, depth: mapStage,
                                       decoder: DecoderSet.all, preview: server, pins: pins, sinks: sinks, statusSink: { line in
            let text = tty ? "\r\u{1B}[K" + line : line + "\n"
            writeStandardError(text)
        })
        let app = CamApp(pipeline: pipeline)
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler { app.stop() }
        interrupt.resume()
        defer { interrupt.cancel() }
        signal(SIGUSR1, SIG_IGN)
        let snapshot = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .global())
        snapshot.setEventHandler { app.requestSnapshot() }
        snapshot.resume()
        defer { snapshot.cancel() }
        // A sound source that fails mid-run (an unplugged card, a PipeWire node that went away)
        // ends the run at once, naming it: the recording is closed cleanly with the picture and
        // sound up to there, and the run exits 1.
        // The watch cancels itself when it has said so (on its serial queue; see the summary below).
        let watchQueue = DispatchQueue(label: "granite-cam.sound-watch")
        let soundWatch = sound.map { sound in
            let watch = DispatchSource.makeTimerSource(queue: watchQueue)
            watch.schedule(deadline: .now() + 0.2, repeating: 0.2)
            watch.setEventHandler {
                guard let failure = sound.failure else { return }
                watch.cancel()
                writeStandardError((tty ? "\n" : "") + "granite-cam: error: --audio: \(failure); the recording ends here\n")
                app.stop()
            }
            watch.resume()
            return watch
        }
        defer { soundWatch?.cancel() }
        var lostFrames: String?
        var pinningFailed = false
        var recordFailed = false
        var sourceFailed: String?
        do {
            let summary = try await app.run()
            if tty { writeStandardError("\n") }
            say("granite-cam: \(summary.frames) frames in \(CamStateFormat.seconds(summary.seconds)) s, "
                  + "\(summary.saved) saved, \(summary.dropped) dropped, \(summary.renders) status renders")
            say("granite-cam: \(summary.modeLine)")
            if let stats = pipeWireSink?.stats {
                say("granite-cam: PipeWire camera: \(stats.sent) frames sent, \(stats.noConsumer) with no consumer, "
                      + "\(stats.busy) skipped while the consumer held every buffer, \(stats.negotiations) formats negotiated, "
                      + "\(pipeWireSink?.deviceReads ?? 0) read from the device straight into the consumer's buffer")
            }
            if summary.depthFrames > 0 {
                say("granite-cam: \(summary.depthFrames) \(mapStage?.mapName == "mask" ? "person masks" : "depth maps"), \(summary.depthSaved) written")
            }
            if let outcome = summary.pinning {
                let report = PinRunReport(outcome)
                for line in report.lines {
                    if line.kind == .result { say("granite-cam: " + line.message) } else { writeStandardError("granite-cam: \(line.message)\n") }
                }
                if report.failed { pinningFailed = true }
            }
            // Whether the watch said it already (a failure in its last fifth of a second is said here).
            let said = soundWatch.map { watch in watchQueue.sync { () -> Bool in
                defer { watch.cancel() }
                return watch.isCancelled
            } } ?? false
            if let failure = sound?.failure {
                if !said { writeStandardError("granite-cam: error: --audio: \(failure)\n") }
                recordFailed = true
            }
            sound?.stop()
            if let alsa = sound as? ALSAAudioSource, alsa.overruns > 0 {
                say("granite-cam: \(alsa.name): \(alsa.overruns) overrun\(alsa.overruns == 1 ? "" : "s") (the reader fell behind the card and the PCM restarted; the sound lost is silence in the file)")
            }
            for sink in recordSinks {
                let (lines, failed) = RecordOptions.report(sink)
                for line in lines { line.hasPrefix("error:") ? writeStandardError("granite-cam: \(line)\n") : say("granite-cam: \(line)") }
                if failed { recordFailed = true }
            }
            if !recordSinks.isEmpty {
                let outputs = recordSinks.reduce(0) { $0 + $1.paths.count }, opened = Recorder.videoEncodersOpened
                say("granite-cam: \(opened) video encoder\(opened == 1 ? "" : "s") opened for \(outputs) output\(outputs == 1 ? "" : "s")")
            }
            if let segmentPinner {
                say("granite-cam: segments: \(segmentPinner.addresses.count) files journaled for pinning as they closed; "
                      + "playlist with ipfs:// addresses: \(segmentPinner.ipfsPlaylist)")
                for failure in segmentPinner.failures { writeStandardError("granite-cam: segments: pin: \(failure)\n") }
                if let folder = summary.pinning?.folder, let out,
                   let line = SegmentPinner.gatewayLine(root: folder.root.description, folder: out, paths: folder.byPath.keys,
                                                        playlist: segmentPinner.playlist, node: summary.pinning?.node ?? "") {
                    say("granite-cam: " + line)
                }
            }
            if let closed = summary.closedSink, !recordSinks.contains(where: { $0.name == closed }) { say("granite-cam: \(closed): the reader went away; stopped") }
            if summary.reconnects > 0 {
                say("granite-cam: the source went away \(summary.reconnects) time\(summary.reconnects == 1 ? "" : "s") and came back "
                      + "(the longest gap \(CamStateFormat.seconds(summary.longestGap)) s)")
            }
            if let failure = summary.failure {
                say("granite-cam: source ended: \(failure)")
                // A camera or PipeWire node never ends by itself: it went away for good, or failed.
                switch pipeline.settings.source {
                case .device, .pipeWire: sourceFailed = failure
                case .testPattern, .folder: break
                }
            }
            // A run that lost frames to faults fails when every frame was meant to arrive (non-live),
            // or when none came through at all.
            if summary.lostToFaults > 0 && (!summary.live || summary.frames == 0) {
                lostFrames = "\(summary.lostToFaults) frame\(summary.lostToFaults == 1 ? "" : "s") lost to faults"
                    + (summary.firstLoss.map { " (first: \($0))" } ?? "")
            }
        } catch {
            if tty { writeStandardError("\n") }
            writeStandardError("granite-cam: error: \(error)\n")
            throw ExitCode(1)
        }
        if let lostFrames {
            writeStandardError("granite-cam: error: \(lostFrames)\n")
            throw ExitCode(1)
        }
        if pinningFailed || recordFailed { throw ExitCode(1) }
        if let sourceFailed {
            writeStandardError("granite-cam: error: \(sourceFailed)\n")
            throw ExitCode(1)
        }
    }
}

/// Writes to file descriptor 2 directly (unbuffered; the status line is rewritten in place).
func writeStandardError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}

/// Number formatting for the final line.
enum CamStateFormat {
    static func seconds(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let frac = hundredths % 100
        return "\(hundredths / 100).\(frac < 10 ? "0" : "")\(frac)"
    }
}

extension InferenceDevice: ExpressibleByArgument {}
