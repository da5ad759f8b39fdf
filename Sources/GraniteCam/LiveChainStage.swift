import GraniteCapture
import GraniteMedia
import GraniteSync

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
public final class LiveChainStage: FrameStage {
    /// Builds a stage from chain text (`blur:sigma=2 | sobel`; empty: no filter) and gives the
    /// chain back as text with every parameter spelled out (it parses back).
    public typealias Maker = @Sendable (String) throws -> (stage: any FrameStage, text: String)

    private let current: Locked<(stage: any FrameStage, text: String)>
    private let make: Maker

    /// A live chain starting from `text`; throws when `text` does not make a stage.
    public init(text: String, make: @escaping Maker) throws {
        current = Locked(try make(text))
        self.make = make
    }

    /// A live Marble chain: `text` as `--filter` takes it; empty text converts to `rgba8` only.
    public static func marble(_ text: String, gpu: Bool) throws -> LiveChainStage {
        try LiveChainStage(text: text) { text in
            if text.allSatisfy(\.isWhitespace) { return (ToRGBA(), "") }
            let stage = try MarbleStage(specs: [text], gpu: gpu)
            return (stage, stage.chain.specs.map(\.description).joined(separator: " | "))
        }
    }

    /// The stage in use now.
    public var stage: any FrameStage { current.withLock { $0.stage } }

    /// The chain as text (every parameter spelled out for a Marble chain; parses back).
    public var text: String { current.withLock { $0.text } }

    public var name: String { stage.name }

    /// Always true: the chain may become one that reads depth; ``process(_:)`` hands the map on
    /// only to a stage that uses it.
    public var usesDepth: Bool { true }

    /// Builds a stage from `text` and swaps it in; returns the new chain's text. On error the old
    /// chain stays and the error is rethrown.
    @discardableResult
    public func replace(with text: String) throws -> String {
        let made = try make(text)
        current.withLock { $0 = made }
        return made.text
    }

    /// The chain in use now does the job (a map only when it reads one).
    public func process(_ job: FrameJob) throws -> FrameResult { try start(job).result() }

    /// The chain in use now starts the job (a map only when it reads one).
    public func start(_ job: FrameJob) throws -> StartedFrame {
        let stage = self.stage
        var job = job
        if !stage.usesDepth {
            switch job.depth {
            case .map, .newest, .liveOnDevice: job.depth = .none
            case .none, .own: break
            }
        }
        return try stage.start(job)
    }

    /// Prepares the chain in use now.
    public func prepare(for size: FrameSize?, yuv: [YUVLayout]) throws -> [String] {
        try stage.prepare(for: size, yuv: yuv)
    }
}
