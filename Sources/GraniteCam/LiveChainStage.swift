import GraniteCapture
import GraniteMedia
import Synchronization

/// The filter chain of a running pipeline, replaceable while frames flow (the preview page's
/// chain box, through `CamEvents.ChangeChain`).
///
/// A replacement is built (parsed, checked) before it is swapped in: a chain that does not parse
/// throws and the old one stays. The frame in flight finishes with the chain it started with.
///
/// ```
///  ChangeChain(text) ─► make(text) ─ok─► swap ─► next frame runs the new chain
///                                  └─throws─► old chain kept, error to the page
/// ```
public final class LiveChainStage: DepthInputStage {
    /// Builds a stage from chain text (`blur:sigma=2 | sobel`; empty: no filter).
    public typealias Maker = @Sendable (String) throws -> any FrameStage

    private let current: Mutex<(stage: any FrameStage, text: String)>
    private let make: Maker

    /// A live chain starting from `text`; throws when `text` does not make a stage.
    public init(text: String, make: @escaping Maker) throws {
        let stage = try make(text)
        current = Mutex((stage, LiveChainStage.canonical(text, stage)))
        self.make = make
    }

    /// A live Marble chain: `text` as `--filter` takes it; empty text converts to `rgba8` only.
    public static func marble(_ text: String, gpu: Bool) throws -> LiveChainStage {
        try LiveChainStage(text: text) { text in
            if text.allSatisfy(\.isWhitespace) { return ToRGBA() }
            return try MarbleStage(specs: [text], gpu: gpu)
        }
    }

    /// The stage in use now.
    public var stage: any FrameStage { current.withLock { $0.stage } }

    /// The chain as text (every parameter spelled out for a Marble chain; parses back).
    public var text: String { current.withLock { $0.text } }

    public var name: String { stage.name }

    /// Always true: the chain may become one that reads depth; ``process(_:depth:)`` hands the map
    /// on only to a stage that uses it.
    public var usesDepth: Bool { true }

    /// Builds a stage from `text` and swaps it in; returns the new chain's text. On error the old
    /// chain stays and the error is rethrown.
    @discardableResult
    public func replace(with text: String) throws -> String {
        let stage = try make(text)
        let canonical = LiveChainStage.canonical(text, stage)
        current.withLock { $0 = (stage, canonical) }
        return canonical
    }

    public func process(_ image: Image) throws -> Image {
        try stage.process(image)
    }

    public func process(_ image: Image, depth: Image?) throws -> Image {
        let stage = self.stage
        return try stage.process(image, depth: stage.usesDepth ? depth : nil)
    }

    /// The chain in use makes the model's input when it can (a GPU chain); otherwise the frame is
    /// resized on the CPU and the chain gets the map.
    public func process(_ image: Image, depthInput: (width: Int, height: Int), estimate: (Image) -> Image?) throws -> Image {
        let stage = self.stage
        if let inputStage = stage as? any DepthInputStage {
            return try inputStage.process(image, depthInput: depthInput, estimate: estimate)
        }
        let map = estimate(try DepthImage.modelInput(image, size: depthInput))
        return try stage.process(image, depth: stage.usesDepth ? map : nil)
    }

    /// The chain in use, as ``DepthInputStage/process(_:depth:depthVersion:depthInput:)`` (a chain
    /// that is not a depth-input stage gets the model's input made on the CPU).
    public func process(_ image: Image, depth: Image?, depthVersion: UInt64,
                        depthInput: (width: Int, height: Int)?) throws -> (image: Image, modelInput: Image?) {
        let stage = self.stage
        if let inputStage = stage as? any DepthInputStage {
            return try inputStage.process(image, depth: depth, depthVersion: depthVersion, depthInput: depthInput)
        }
        let small = try depthInput.map { try DepthImage.modelInput(image, size: $0) }
        return (try stage.process(image, depth: stage.usesDepth ? depth : nil), small)
    }

    static func canonical(_ text: String, _ stage: any FrameStage) -> String {
        if let marble = stage as? MarbleStage { return marble.chain.specs.map(\.description).joined(separator: " | ") }
        return String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
