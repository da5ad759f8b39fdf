import GraniteCapture
import GraniteCodecs
import GraniteMedia
import GraniteML
import GraniteMLVulkan
import Marble
import GraniteSync

/// A Marble filter chain as a pipeline stage (GPU through Vulkan, or its CPU reference).
/// Marble converts camera formats (YUYV, NV12, RGB24) itself, so no `ToRGBA` is needed before it.
///
/// On the GPU a job is one ``ChainFrame``: the frame goes up once; the depth model's input is
/// made from it on the device when asked (read back small); a live run's newest map stays on the
/// device; the result comes back as `rgba8` and, for the live sinks, as YUV converted there.
public struct MarbleStage: FrameStage {
    /// The chain.
    public let chain: FilterChain
    /// Whether to run on the GPU (Vulkan; lavapipe when there is no GPU) or the CPU reference.
    public let gpu: Bool

    /// A stage from filter specs (`blur:sigma=2`, `sobel`, or chains joined with `|`).
    public init(specs: [String], gpu: Bool = true) throws {
        chain = try FilterChain(specs.flatMap { try FilterSpec.parseChain($0) })
        self.gpu = gpu
    }

    public var name: String { "marble: " + chain.specs.map(\.description).joined(separator: " | ") }

    /// Whether a filter of the chain reads a depth map (`depthmask`, the `depth` point cloud).
    public var usesDepth: Bool { chain.specs.contains { Self.mapFilters.contains($0.name) } }

    /// The filters that read the chain's map: depth (`depthmask`, the `depth` point cloud) or the
    /// person mask (`background`).
    static let mapFilters: Set<String> = ["depthmask", "depth", "background"]

    /// Whether filter specs (as ``init(specs:gpu:)`` takes them) name a `background` filter;
    /// false for specs that do not parse (the stage reports those).
    public static func readsMask(specs: [String]) -> Bool {
        specs.contains { spec in ((try? FilterSpec.parseChain(spec)) ?? []).contains { $0.name == "background" } }
    }

    /// On the GPU: opens the device and runs one blank frame of `size` through the chain, so its
    /// pipelines are compiled before the first real frame. Says which device and memory model.
    public func prepare(for size: FrameSize?, yuv: [YUVLayout]) throws -> [String] {
        guard gpu else { return [] }
        var lines = ["filters on \(try chain.deviceDescription())"]
        if let size, size.width > 0, size.height > 0 {
            let blank = try Image(width: size.width, height: size.height, format: .rgba8,
                                  bytes: [UInt8](repeating: 0, count: size.width * size.height * 4))
            let frame = try chain.frame(blank)
            defer { frame.end() }
            _ = try frame.rgba()
            if !yuv.isEmpty && chain.convertsYUVOnDevice { _ = try frame.yuv(yuv) }
        }
        if !yuv.isEmpty && chain.convertsYUVOnDevice {
            lines.append("the chain's result is converted to \(yuv.map(\.description).joined(separator: ", ")) on the GPU")
        }
        return lines
    }

    public func process(_ job: FrameJob) throws -> FrameResult { try start(job).result() }

    /// On the GPU: the frame goes up and the chain is submitted (the model's input and this
    /// frame's own map made first when asked); the result — `rgba8`, the sinks' YUV made on the
    /// device, or only those when nothing reads `rgba8` — is read back in ``StartedFrame/result()``.
    public func start(_ job: FrameJob) throws -> StartedFrame {
        guard gpu else {
            let result = try job.onCPU(range: chain.range) { image, map in try chain.applyCPU(image, depth: usesDepth ? map : nil) }
            return StartedFrame { result }
        }
        let image = job.image
        var result = FrameResult(image: image)
        let frame: ChainFrame
        // A live run's model input, made here on a GPU; on a CPU device the depth relay resizes the
        // frame itself (FilterChain.makesModelInputOnDevice: the read-back would stall the capture loop).
        let modelInput = chain.makesModelInputOnDevice ? job.modelInput.map { ($0.width, $0.height) } : nil
        switch job.depth {
        case .none:
            frame = try chain.frame(image, modelInput: modelInput)
        case let .map(map):
            frame = try chain.frame(image, depth: .map(map), modelInput: modelInput)
        case let .newest(map, version):
            frame = try chain.frame(image, depth: .resident(map, version: version), modelInput: modelInput)
        case let .liveOnDevice(model):
            if let model, let size = model.modelInputSize {
                // Due: the model makes the kept map from this frame, inside it.
                frame = try chain.frame(image, depth: .onDevice(newMap: true), modelInput: size,
                                        mapSize: model.mapSize(frameWidth: image.width, frameHeight: image.height))
                do {
                    result.depthOnDevice = try model.estimate(onDevice: frame)
                    if !result.depthOnDevice && frame.depthOnDevice != nil { result.depthFailure = "the depth model does not run on the chain's device" }
                } catch {
                    result.depthFailure = "\(error)"
                }
            } else {
                frame = try chain.frame(image, depth: .onDevice(newMap: false))
            }
        case let .own(model):
            if let size = model.modelInputSize {
                frame = try chain.frame(image, depth: .estimated, modelInput: size,
                                        mapSize: model.mapSize(frameWidth: image.width, frameHeight: image.height))
                if !job.depthOnHost && frame.depthOnDevice != nil {
                    // The model on the device too: the picture and the map never leave it.
                    do { result.depthOnDevice = try model.estimate(onDevice: frame) } catch { result.depthFailure = "\(error)" }
                }
                if !result.depthOnDevice && result.depthFailure == nil {
                    // The model's input made from the frame on the device; its map goes back up.
                    let small = try frame.modelInput()
                    do {
                        result.depth = try model.estimateMaps(modelInput: small, width: image.width, height: image.height)
                    } catch {
                        result.depthFailure = "\(error)"
                    }
                }
            } else {
                do { result.depth = try model.estimateMaps(image) } catch { result.depthFailure = "\(error)" }
                frame = try chain.frame(image, depth: result.depth.map { .map($0.map) } ?? .none)
            }
        }
        do {
            if result.depthOnDevice {
                try frame.runWithDepthOnDevice()
            } else if case .liveOnDevice = job.depth {
                try frame.run()
            } else if case .own = job.depth {
                try frame.run(depth: result.depth?.map)
            } else {
                if modelInput != nil { result.modelInput = try frame.modelInput() }
                try frame.run()
            }
        } catch {
            frame.end()
            throw error
        }
        let yuvOnDevice = !job.yuv.isEmpty && chain.convertsYUVOnDevice
        let (width, height) = (frame.width, frame.height)
        let finish = {
            // The YUV left on the device for the sinks: the handle holds the frame until they read it.
            let inPlace = yuvOnDevice && job.yuvInPlace && job.rgba
            defer { if !inPlace { frame.end() } }
            if inPlace {
                result.deviceYUV = ChainYUV(frame, layouts: job.yuv)
            } else if yuvOnDevice {
                result.yuv = try frame.yuv(job.yuv)
            }
            if !job.rgba, yuvOnDevice, let (layout, format) = job.yuv.lazy.compactMap({ l in l.pixelFormat(width: width).map { (l, $0) } }).first,
               let bytes = result.yuv[layout] {
                result.image = try Image(width: width, height: height, format: format, bytes: bytes)
            } else {
                result.image = try frame.rgba()
            }
            return result
        }
        // On a CPU device the frame is finished here: overlapping frames does not pay there.
        guard chain.overlapsFrames else {
            let done = try finish()
            return StartedFrame { done }
        }
        return StartedFrame(finish)
    }
}

/// PNG or JPEG output through GraniteCodecs.
public struct CodecsEncoder: FrameEncoder {
    /// The container.
    public enum Kind: String, Sendable, CaseIterable {
        case png, jpg
    }

    /// Which one.
    public let kind: Kind
    /// JPEG quality (1–100).
    public let quality: Int

    /// An encoder.
    public init(_ kind: Kind, quality: Int = 90) {
        self.kind = kind
        self.quality = quality
    }

    public var fileExtension: String { kind.rawValue }

    public func encode(_ image: Image) throws -> [UInt8] {
        let ready = [.rgba8, .rgb24, .gray8].contains(image.format) ? image : try ColorConversion.rgba(image)
        switch kind {
        case .png: return try Codecs.encodePNG(ready)
        case .jpg: return try Codecs.encodeJPEG(ready, quality: quality)
        }
    }
}

/// JPEG and PNG decoding through GraniteCodecs, for folder sources and MJPEG cameras.
struct CodecsDecoder: ImageDecoder {
    /// A decoder.
    init() {}

    var fileExtensions: Set<String> { ["jpg", "jpeg", "png"] }

    func decode(_ bytes: [UInt8], path: String) throws(CaptureError) -> Image {
        do {
            return try Codecs.decode(bytes, path: path)
        } catch {
            throw .decodeFailed(path: path, reason: "\(error)")
        }
    }
}

extension DecoderSet {
    /// Everything this build reads: JPEG and PNG (GraniteCodecs), then Netpbm.
    public static var all: DecoderSet { DecoderSet([CodecsDecoder(), NetpbmDecoder()]) }
}

/// GraniteML's `DepthEstimator` (FastDepth by default) as the pipeline's depth stage.
public struct DepthEstimatorStage: DepthStage {
    /// The estimator (model loaded once).
    public let estimator: DepthEstimator

    /// Loads the model at `modelPath`, or the default depth model from the search path;
    /// `backend` runs it elsewhere than on the CPU (GraniteMLVulkan's `InferenceDevice`).
    public init(modelPath: String? = nil, backend: Backend? = nil) throws {
        estimator = try DepthEstimator(modelPath: modelPath, backend: backend)
    }

    public func estimate(_ image: Image) throws -> Image {
        let input = [.rgba8, .rgb24, .gray8].contains(image.format) ? image : try ColorConversion.rgba(image)
        return try estimator.estimate(input).floatImage()
    }

    /// The model's maps as GraniteML reads them: its output's meaning (MiDaS: larger is nearer)
    /// and metres when it has a metric scale.
    public func depthMap(_ map: Image) throws -> DepthMap {
        let output = estimator.description.output
        return try DepthMap(width: map.width, height: map.height, values: DepthModelInput.values(of: map),
                            meaning: output.meaning, isMetric: output.metricScale != nil)
    }

    /// The model's input size (FastDepth: 224×224).
    public var modelInputSize: (width: Int, height: Int)? { estimator.inputSize }

    /// One run of the model on a picture already at its input size; both maps at `width`×`height`.
    public func estimateMaps(modelInput: Image, width: Int, height: Int) throws -> DepthEstimate {
        let result = try estimator.estimate(modelInput, size: .exactly(width: width, height: height))
        return DepthEstimate(map: result.floatImage()) { result.to16BitPNGImage() }
    }

    /// On the device when the model runs on the frame's device (a `VulkanModel`: `--depth-device
    /// gpu`, or `auto` on a GPU): the chain's picture in, the map (metres, at the frame's size, as
    /// ``estimateMaps(modelInput:width:height:)`` makes it) left where the filters read it.
    public var runsOnDevice: Bool { estimator.runner is VulkanModel }

    public func estimate(onDevice frame: ChainFrame) throws -> Bool {
        guard let model = estimator.runner as? VulkanModel, model.context === frame.context,
              let target = frame.depthOnDevice else { return false }
        let picture = try frame.modelInputOnDevice()
        try model.run(picture: picture, feed: estimator.feed, output: estimator.outputName,
                      scale: estimator.description.output.metricScale, into: target.buffer, width: target.width, height: target.height)
        return true
    }

    /// One run of the model, as the float map and the 16-bit image GraniteML writes.
    public func estimateMaps(_ image: Image) throws -> DepthEstimate {
        let input = [.rgba8, .rgb24, .gray8].contains(image.format) ? image : try ColorConversion.rgba(image)
        let result = try estimator.estimate(input)
        return DepthEstimate(map: result.floatImage()) { result.to16BitPNGImage() }
    }
}

/// GraniteML's `PersonSegmenter` (MediaPipe's selfie segmentation) as the run's map model: its
/// map is the person mask (`grayF32`, 0 background … 1 person, at the model's size) that the
/// `background` filter reads where depth filters read depth. Made, kept and handed to the chain
/// as depth is (every n-th frame, the newest reused; on a GPU chain inside the frame, on the
/// device); written as 8-bit PNGs (`mask-NNNNNNNN.png`, 255 = person), shown gray in the preview.
public struct SegmentationStage: DepthStage {
    /// The segmenter (model loaded once).
    public let segmenter: PersonSegmenter

    /// Threads the model runs on, on the CPU, in a live stream: one. MediaPipe's selfie model is
    /// ~4.4 ms an inference on one core, and a second thread does not shorten it (`granite-bench ml
    /// --only selfie`: 4.35 ms on one thread, 4.48 ms on two, 2 cores) — its ops are too small to
    /// share — while in a live stream, whose filters share the cores, the second thread cost 4.6 ms
    /// of CPU a frame at the same masks a second and latency (`granite-bench segment
    /// --model-threads 1|2`: 40.1 against 44.7 ms CPU/frame, 29.0 and 29.4 masks/s).
    @usableFromInline package static let liveThreads = 1

    /// Loads the model at `modelPath`, or the built-in one for frames of `frameSize`
    /// (``model(for:)``); `backend` runs it elsewhere than on the CPU (`InferenceDevice`).
    public init(modelPath: String? = nil, frameSize: FrameSize? = nil, threads: Int = liveThreads, backend: Backend? = nil) throws {
        segmenter = try PersonSegmenter(modelPath: modelPath, description: Self.model(for: frameSize), threads: threads, backend: backend)
    }

    /// The built-in model for frames of `size`: the landscape one (256×144) for frames wider than
    /// tall (16:9 video), else the square 256×256.
    static func model(for size: FrameSize?) -> ModelDescription {
        guard let size, size.width > size.height else { return .selfieSegmentation256 }
        return .selfieSegmentationLandscape
    }

    public var mapName: String { "mask" }

    /// The mask as gray (white = person).
    public func previewImage(_ map: Image) throws -> Image { try Self.gray(map) }

    public func estimate(_ image: Image) throws -> Image { try estimateMaps(image).map }

    /// The model's input size (256×256, or 256×144 for the landscape model).
    public var modelInputSize: (width: Int, height: Int)? { segmenter.inputSize }

    /// The mask stays at the model's size (256×144 for the landscape model): `background`
    /// upsamples it on the frame's own edges (a guided filter), so a frame-size copy is never made
    /// for the chain.
    public func mapSize(frameWidth: Int, frameHeight: Int) -> (width: Int, height: Int) { segmenter.inputSize }

    /// One run of the model on a picture already at its input size: the mask at ``mapSize(frameWidth:frameHeight:)``;
    /// the file's image (when one is written) at `width`×`height`.
    public func estimateMaps(modelInput: Image, width: Int, height: Int) throws -> DepthEstimate {
        let size = mapSize(frameWidth: width, frameHeight: height)
        return Self.maps(try segmenter.segment(modelInput, size: .exactly(width: size.width, height: size.height)), frame: (width, height))
    }

    public func estimateMaps(_ image: Image) throws -> DepthEstimate {
        let input = [.rgba8, .rgb24, .gray8].contains(image.format) ? image : try ColorConversion.rgba(image)
        let size = mapSize(frameWidth: image.width, frameHeight: image.height)
        return Self.maps(try segmenter.segment(input, size: .exactly(width: size.width, height: size.height)), frame: (image.width, image.height))
    }

    /// On the device when the model runs on the frame's device (`--segment-device gpu`, or
    /// `auto` on a GPU): the chain's picture in, the mask (at the model's size, as
    /// ``estimateMaps(modelInput:width:height:)`` makes it) left where `background` reads it.
    public var runsOnDevice: Bool { segmenter.runner is VulkanModel }

    public func estimate(onDevice frame: ChainFrame) throws -> Bool {
        guard let model = segmenter.runner as? VulkanModel, model.context === frame.context,
              let target = frame.depthOnDevice else { return false }
        let picture = try frame.modelInputOnDevice()
        try model.run(picture: picture, feed: segmenter.feed, output: segmenter.outputName, scale: nil,
                      into: target.buffer, width: target.width, height: target.height)
        return true
    }

    /// The mask in the run's two shapes: the `grayF32` map and, when a file is written, the 8-bit
    /// image at the frame's size (the mask resized as depth maps are).
    static func maps(_ mask: PersonMask, frame: (width: Int, height: Int)) -> DepthEstimate {
        DepthEstimate(map: (try? Image(width: mask.width, height: mask.height, floats: mask.values))!) {
            guard (mask.width, mask.height) != frame else { return mask.grayImage() }
            let values = Resampler.resize(floats: mask.values, width: mask.width, height: mask.height, channels: 1,
                                          toWidth: frame.width, toHeight: frame.height, filter: DepthMap.scaleFilter)
            return try PersonMask(width: frame.width, height: frame.height, values: values).grayImage()
        }
    }

    /// A `grayF32` mask as `gray8` (255 = person), as `PersonMask` rounds it.
    static func gray(_ map: Image) throws -> Image {
        try PersonMask(width: map.width, height: map.height, values: DepthModelInput.values(of: map)).grayImage()
    }
}

/// A GPU chain's result left on the device for the sinks (`Frame.deviceYUV`): each read
/// converts it to the layout there and copies the bytes straight into the sink's buffer
/// (`ChainFrame.yuv(_:into:)`). The chain's plan stays the frame's until this goes.
final class ChainYUV: DeviceYUV, @unchecked Sendable {
    // @unchecked: the ChainFrame is driven by one caller at a time (the lock).
    private let frame: Locked<ChainFrame>
    let layouts: [YUVLayout]

    init(_ frame: ChainFrame, layouts: [YUVLayout]) {
        self.frame = Locked(frame)
        self.layouts = layouts
    }

    func read(_ layout: YUVLayout, into destination: UnsafeMutableRawBufferPointer) -> Bool {
        guard layouts.contains(layout) else { return false }
        return frame.withLock { frame in
            guard destination.count == layout.byteCount(width: frame.width, height: frame.height) else { return false }
            do { try frame.yuv(layout, into: destination) } catch { return false }
            return true
        }
    }

    deinit { frame.withLock { $0.end() } }
}
