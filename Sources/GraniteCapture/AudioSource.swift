/// Where `--audio` takes sound from, and what every sound source gives the recorder.
///
/// ```
///  "pipewire[:NODE]" ─► PipeWireAudioSource (a node of the session's daemon)  ┐
///  "alsa[:PCM]"      ─► ALSAAudioSource (libasound: hw:1,0, default, …)       ┴► start(deliver): AudioBlocks,
///        F32 interleaved, 1–2 channels, stamped on CLOCK_MONOTONIC (the frames' clock) ─► the record sinks
/// ```

/// A block of captured sound: interleaved 32-bit float samples and the capture time of the first.
public struct AudioBlock: Sendable {
    /// Interleaved samples (`channels` per instant), -1…1.
    public var samples: [Float]
    /// When the first sample was captured, on `CLOCK_MONOTONIC` (the clock video frames are stamped on).
    public var timestampNanos: UInt64
    /// Samples per second per channel.
    public var sampleRate: Int
    /// Interleaved channels.
    public var channels: Int

    public init(samples: [Float], timestampNanos: UInt64, sampleRate: Int, channels: Int) {
        self.samples = samples
        self.timestampNanos = timestampNanos
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// Instants (samples per channel).
    public var frames: Int { channels > 0 ? samples.count / channels : 0 }
    /// The capture time just after the last sample.
    public var endNanos: UInt64 { timestampNanos + UInt64(Double(frames) * 1e9 / Double(max(1, sampleRate))) }
}

extension AudioBlock {
    /// Interleaved signed 16-bit samples (little-endian, as both sources negotiate them) as -1…1 floats.
    static func floats(s16 data: UnsafeRawPointer, count: Int) -> [Float] {
        [Float](unsafeUninitializedCapacity: count) { out, made in
            for i in 0..<count { out[i] = Float(Int16(littleEndian: data.loadUnaligned(fromByteOffset: i * 2, as: Int16.self))) / 32768 }
            made = count
        }
    }

    /// Interleaved 32-bit floats copied out of a capture buffer.
    static func floats(f32 data: UnsafeRawPointer, count: Int) -> [Float] {
        [Float](unsafeUninitializedCapacity: count) { out, made in
            UnsafeMutableRawBufferPointer(out).copyMemory(from: UnsafeRawBufferPointer(start: data, count: count * 4))
            made = count
        }
    }
}

/// A source of sound for a recording (`granite-cam --audio`): found and heard in ``start(_:)``
/// (which throws, naming it, when it is missing, busy or silent), then handing every captured
/// block to `deliver` on its own thread until ``stop()``.
public protocol AudioCaptureSource: AnyObject, Sendable {
    /// How the source was asked for (`pipewire:NODE`, `alsa:hw:1,0`).
    var name: String { get }
    /// The sample rate and channels agreed on (after ``start(_:)``).
    var format: (sampleRate: Int, channels: Int)? { get }
    /// Samples (per channel) delivered so far.
    var samplesDelivered: Int { get }
    /// Why the sound stopped while it ran (the device went away, a read failed); nil while it flows.
    var failure: CaptureError? { get }
    /// Opens the source and waits until its first block has been delivered; `deliver` then gets
    /// every block (it must not block).
    func start(_ deliver: @escaping @Sendable (AudioBlock) -> Void) throws(CaptureError)
    /// Stops capturing and lets go of the device. Idempotent.
    func stop()
}

/// `--audio`'s value: `pipewire`, `pipewire:NODE`, `alsa` (ALSA's `default`) or `alsa:PCM`.
public enum AudioSourceSpec: Sendable, Hashable, CustomStringConvertible {
    /// A PipeWire `Audio/Source` (nil: the session's default source).
    case pipeWire(node: String?)
    /// An ALSA PCM by its ALSA name (`default`, `hw:1,0`, `plughw:CARD=Mic`, `pipewire`).
    case alsa(pcm: String)

    public init(parsing text: String) throws(CaptureError) {
        if text == "pipewire" {
            self = .pipeWire(node: nil)
        } else if text.hasPrefix("pipewire:"), text.count > 9 {
            self = .pipeWire(node: String(text.dropFirst(9)))
        } else if text == "alsa" {
            self = .alsa(pcm: "default")
        } else if text.hasPrefix("alsa:"), text.count > 5 {
            self = .alsa(pcm: String(text.dropFirst(5)))
        } else {
            throw .invalidRequest("--audio takes pipewire, pipewire:NODE, alsa or alsa:PCM (an ALSA name: default, hw:1,0, plughw:…), not \(text)")
        }
    }

    public var description: String {
        switch self {
        case let .pipeWire(node): return node.map { "pipewire:\($0)" } ?? "pipewire"
        case let .alsa(pcm): return "alsa:\(pcm)"
        }
    }

    /// The source, not started.
    public func makeSource(firstBlockTimeout: Double) -> any AudioCaptureSource {
        switch self {
        case let .pipeWire(node): return PipeWireAudioSource(target: node, firstBlockTimeout: firstBlockTimeout)
        case let .alsa(pcm): return ALSAAudioSource(pcm: pcm, firstBlockTimeout: firstBlockTimeout)
        }
    }
}
