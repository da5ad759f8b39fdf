import GraniteCapture
import GraniteMedia
import GraniteML
import Marble

/// The processing a frame goes through on its way out (a Marble filter chain on the GPU or its
/// CPU reference, a colour conversion): one job in, one result out.
///
/// ```
///  FrameJob { image, depth (none | newest map | this frame's own | a given map), modelInput?, yuv layouts }
///     └─► process ─► FrameResult { image, yuv bytes, model input, this frame's depth maps }
/// ```
/// A GPU chain does the whole job in one trip to the device (the frame up once; the model's input,
/// the YUV bytes and the result made there); a CPU stage does it with ``FrameJob/onCPU(range:_:)``.
public protocol FrameStage: Sendable {
    /// A short name for status and errors (`marble: blur(2) | sobel`).
    var name: String { get }
    /// Whether the stage reads a depth map (the run makes and keeps maps for it only then).
    var usesDepth: Bool { get }
    /// Processes one frame's job.
    func process(_ job: FrameJob) throws -> FrameResult
    /// Starts one frame's job and returns without waiting for its result where the stage can
    /// (a GPU chain: the frame is uploaded and the chain submitted; the read-back waits in
    /// ``StartedFrame/result()``), so the run can start the next frame while this one computes.
    /// Default: ``process(_:)`` now.
    func start(_ job: FrameJob) throws -> StartedFrame
    /// Opens what the stage needs before the first frame (the GPU device) and warms it for
    /// `size` frames (shaders compiled, buffers made), so the live clock does not start on a cold
    /// pipeline; `yuv` are the layouts the sinks take. Returns lines for the log. Throws when the
    /// stage cannot run.
    func prepare(for size: FrameSize?, yuv: [YUVLayout]) throws -> [String]
}

extension FrameStage {
    public var usesDepth: Bool { false }
    public func start(_ job: FrameJob) throws -> StartedFrame {
        let result = try process(job)
        return StartedFrame { result }
    }
    public func prepare(for size: FrameSize?, yuv: [YUVLayout]) throws -> [String] { [] }

    /// Processes `image` with `depth` (a `grayF32` map) when the stage reads one: a job with
    /// nothing else asked.
    public func process(_ image: Image, depth: Image? = nil) throws -> Image {
        try process(FrameJob(image: image, depth: depth.map(FrameDepth.map) ?? .none)).image
    }
}

/// A frame a stage has started (``FrameStage/start(_:)``): its result comes with ``result()``,
/// called once, by one owner (the frame's device work is waited for there).
public struct StartedFrame: @unchecked Sendable {
    private let finish: () throws -> FrameResult

    /// A started frame whose result `finish` waits for and returns.
    public init(_ finish: @escaping () throws -> FrameResult) { self.finish = finish }

    /// Waits for the frame's work and returns its result.
    public func result() throws -> FrameResult { try finish() }
}

/// Where a frame's depth map comes from.
public enum FrameDepth: Sendable {
    /// None: filters that read depth read the frame's luma.
    case none
    /// A map to use as it is (`grayF32`, any size).
    case map(Image)
    /// A live run's newest map and a version naming it (the sequence of the frame it was made
    /// from): a GPU chain keeps it on the device and sends it up once however many frames read it.
    case newest(Image, version: UInt64)
    /// This frame's own map, made by `model` before the filters run (non-live runs). A GPU chain
    /// gives the model the frame resized on the device; the maps come back in the result.
    case own(any DepthStage)
    /// A live run whose model runs on the chain's device (``DepthStage/runsOnDevice``): with a
    /// model (a frame due for depth), this frame makes the map the chain keeps on the device,
    /// inside its own submission order; without, the frame reads the map kept there (luma until
    /// one is). On the CPU reference a due frame's map is made on the host for that frame alone.
    case liveOnDevice((any DepthStage)?)
}

/// One frame's job: the frame and what the run wants done with it.
public struct FrameJob: Sendable {
    /// The frame as captured (any camera format).
    public var image: Image
    /// Where the depth map comes from.
    public var depth: FrameDepth
    /// The depth model's input size when the run wants the frame resized to it as well (a live
    /// frame due for depth: the depth relay estimates from it).
    public var modelInput: FrameSize?
    /// The YUV layouts the live sinks write: a stage that converts on the device hands them back.
    public var yuv: [YUVLayout]
    /// Whether anything reads the result as `rgba8` (files, the preview, a sink that takes RGB).
    /// False (a run whose only outlets take ``yuv``): a stage that makes those layouts on the
    /// device reads back only them, and ``FrameResult/image`` is the first unpadded one as an
    /// image (`yuyv`, `i420`, `nv12`) instead of `rgba8` — 1.5 or 2 bytes a pixel, not 4.
    public var rgba: Bool
    /// Whether the run reads this frame's own map (``FrameDepth/own(_:)``) on the host (a depth
    /// PNG, the preview's depth view). False: a stage whose model runs on its device leaves the
    /// map there, where its filters read it (``FrameResult/depthOnDevice``).
    public var depthOnHost: Bool
    /// Whether every sink that takes ``yuv`` reads it straight from the device into a buffer of
    /// its own (``FrameSink/readsDeviceYUV``): a stage that converts on the device then hands back
    /// ``FrameResult/deviceYUV`` instead of the bytes (when the job also wants ``rgba``).
    public var yuvInPlace: Bool = false

    /// A job.
    public init(image: Image, depth: FrameDepth = .none, modelInput: FrameSize? = nil, yuv: [YUVLayout] = [], rgba: Bool = true,
                depthOnHost: Bool = true) {
        (self.image, self.depth, self.modelInput, self.yuv, self.rgba) = (image, depth, modelInput, yuv, rgba)
        self.depthOnHost = depthOnHost
    }

    /// The job done on the CPU around `filter` (the image and the map it should read, nil for
    /// none): this frame's own maps from the model, the model's input resized by the shared
    /// resampler (`range`: how YUV frames are quantised), no YUV (the sinks convert).
    public func onCPU(range: ColorRange = .limited, _ filter: (Image, Image?) throws -> Image) throws -> FrameResult {
        var result = FrameResult(image: image)
        var map: Image?
        switch depth {
        case .none: break
        case let .map(given): map = given
        case let .newest(given, _): map = given
        case let .own(model), let .liveOnDevice(model?):
            do { result.depth = try model.estimateMaps(image) } catch { result.depthFailure = "\(error)" }
            map = result.depth?.map
        case .liveOnDevice(nil): break
        }
        if let size = modelInput {
            result.modelInput = try DepthModelInput.make(image, size: (size.width, size.height), range: range)
        }
        result.image = try filter(image, map)
        return result
    }
}

/// What processing a frame gave.
public struct FrameResult: Sendable {
    /// The processed frame: `rgba8` after a chain, or one of ``yuv``'s layouts as an image when
    /// the job did not want `rgba8` (``FrameJob/rgba``) and the stage made them on the device.
    public var image: Image
    /// The result in the YUV layouts the job asked for that the stage made (none: the sinks
    /// convert on the CPU).
    public var yuv: [YUVLayout: [UInt8]] = [:]
    /// The result's YUV left on the device for the sinks to read into their own buffers
    /// (``FrameJob/yuvInPlace``), in place of ``yuv``.
    public var deviceYUV: (any DeviceYUV)?
    /// The frame resized to the depth model's input, when the job asked for it (`rgba8`).
    public var modelInput: Image?
    /// This frame's own depth maps (``FrameDepth/own(_:)``), nil when the model failed or left
    /// the map on the device.
    public var depth: DepthEstimate?
    /// This frame's own map was made on the device and read there by the filters, never crossing
    /// to the host (a job that did not want it there, ``FrameJob/depthOnHost``).
    public var depthOnDevice = false
    /// Why the model failed, when it did (the frame was still processed, reading luma).
    public var depthFailure: String?

    /// A result.
    public init(image: Image) {
        self.image = image
    }
}

/// Encodes an image for disk: the seam to GraniteCodecs (PNG/JPEG).
public protocol FrameEncoder: Sendable {
    /// File extension without the dot (`ppm`, `png`, `jpg`).
    var fileExtension: String { get }
    /// Encodes one image.
    func encode(_ image: Image) throws -> [UInt8]
}

/// A model that makes a per-pixel map of a frame — depth (GraniteML's `DepthEstimator`), or a
/// person mask (`PersonSegmenter`, ``SegmentationStage``) — the map the chain's filters read
/// (`depthmask`, `depth`, `background`). The run makes, keeps and writes the model's map the same
/// way whichever it is; ``mapName`` names it in files, the preview and the status.
public protocol DepthStage: Sendable {
    /// What the map is: `depth` (the default) or `mask`; names the files (`mask-NNNNNNNN.png`,
    /// `mask.jsonl`) and the preview's view.
    var mapName: String { get }
    /// `map` (this stage's `grayF32` map) as the preview shows it. Default: ``depthMap(_:)``
    /// colourised (viridis, yellow = near).
    func previewImage(_ map: Image) throws -> Image
    /// Returns a depth map (`grayF32` by convention; `gray16` and `gray8` are read too).
    func estimate(_ image: Image) throws -> Image
    /// What `map`'s values mean — which way is near, whether they are metres — as GraniteML's
    /// `DepthMap`, the one place a map becomes 16-bit samples (millimetres, or relative with larger
    /// = farther) and preview colours. Default: relative depth, larger = farther.
    func depthMap(_ map: Image) throws -> DepthMap
    /// One estimate in both shapes (default: ``estimate(_:)`` once, the 16-bit image from
    /// ``depthMap(_:)``).
    func estimateMaps(_ image: Image) throws -> DepthEstimate
    /// The size of the map the chain reads for a frame of this size: the frame's (the default;
    /// depth filters sample it pixel for pixel), or the model's own (a person mask, which
    /// `background` upsamples on the frame's edges).
    func mapSize(frameWidth: Int, frameHeight: Int) -> (width: Int, height: Int)
    /// The size the model takes its input at, when it can be handed a picture already resized
    /// to it (a GPU chain makes it on the device, see ``FrameJob/modelInput``); nil by default.
    var modelInputSize: (width: Int, height: Int)? { get }
    /// One estimate from `modelInput` (`rgba8`, already ``modelInputSize``) for a `width`×`height`
    /// frame: the map at ``mapSize(frameWidth:frameHeight:)``, the file's image at the frame's size.
    /// Default: `modelInput` scaled up to the frame and ``estimateMaps(_:)``.
    func estimateMaps(modelInput: Image, width: Int, height: Int) throws -> DepthEstimate
    /// Runs the model on the device inside `frame` — from the picture the chain makes there
    /// (``ChainFrame/modelInputOnDevice()``), the map written where its filters read it
    /// (``ChainFrame/depthOnDevice``) — and returns true; returns false, doing nothing, when the
    /// model does not run on that device (the default).
    func estimate(onDevice frame: ChainFrame) throws -> Bool
    /// Whether the model runs on a GPU (``estimate(onDevice:)`` can keep its maps there); false
    /// by default.
    var runsOnDevice: Bool { get }
}

/// One depth estimate in the two shapes the run uses: the map the chain reads, and the image a
/// file holds — made only when a file is written (most live maps never are), on the writer's executor.
public struct DepthEstimate: Sendable {
    /// `grayF32`, for `depthmask` and the `depth` point cloud (at ``DepthStage/mapSize(frameWidth:frameHeight:)``).
    public var map: Image
    private let makePNG: @Sendable () throws -> Image

    /// The image written as PNG: `gray16` for depth (``DepthStage/depthMap(_:)``'s samples), `gray8`
    /// for a person mask, at the frame's size.
    public func png() throws -> Image { try makePNG() }

    /// Both shapes, made.
    public init(map: Image, png: Image) {
        self.map = map
        makePNG = { png }
    }

    /// The map, and how to make the file's image when one is written.
    package init(map: Image, png: @escaping @Sendable () throws -> Image) {
        self.map = map
        makePNG = png
    }
}

extension DepthStage {
    public var mapName: String { "depth" }

    public func previewImage(_ map: Image) throws -> Image { try depthMap(map).colorized() }

    public func depthMap(_ map: Image) throws -> DepthMap {
        try DepthMap(width: map.width, height: map.height, values: DepthModelInput.values(of: map), meaning: .depth, isMetric: false)
    }

    public func estimateMaps(_ image: Image) throws -> DepthEstimate {
        let map = try estimate(image)
        return DepthEstimate(map: map) { try depthMap(map).to16BitPNGImage() }
    }

    public func mapSize(frameWidth: Int, frameHeight: Int) -> (width: Int, height: Int) { (frameWidth, frameHeight) }

    public var modelInputSize: (width: Int, height: Int)? { nil }

    public func estimateMaps(modelInput: Image, width: Int, height: Int) throws -> DepthEstimate {
        try estimateMaps(try Resampler.resize(modelInput, width: width, height: height, filter: .bilinear))
    }

    public func estimate(onDevice frame: ChainFrame) throws -> Bool { false }

    public var runsOnDevice: Bool { false }
}

/// Camera formats to `rgba8` on the CPU (BT.601 limited range for YUV), the working format.
public struct ToRGBA: FrameStage {
    /// A converter.
    public init() {}

    public var name: String { "to-rgba" }

    public func process(_ job: FrameJob) throws -> FrameResult {
        try job.onCPU { image, _ in try ColorConversion.rgba(image) }
    }
}

/// Binary Netpbm output (`P6` from any color image, `P5` from gray): needs no codec library.
public struct NetpbmEncoder: FrameEncoder {
    /// An encoder.
    public init() {}

    public var fileExtension: String { "ppm" }

    public func encode(_ image: Image) throws -> [UInt8] {
        if image.format == .gray8 {
            return Array("P5\n\(image.width) \(image.height)\n255\n".utf8) + image.bytes
        }
        let rgba = try ColorConversion.rgba(image)
        var out = Array("P6\n\(image.width) \(image.height)\n255\n".utf8)
        out.reserveCapacity(out.count + image.pixelCount * 3)
        rgba.bytes.withUnsafeBufferPointer { p in
            for i in stride(from: 0, to: p.count, by: 4) {
                out.append(p[i]); out.append(p[i + 1]); out.append(p[i + 2])
            }
        }
        return out
    }
}
