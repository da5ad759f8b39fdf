import GraniteMedia

/// Turns buffers dequeued from a V4L2 device into frames: unpacks raw formats, decodes MJPEG,
/// keeps sequence numbers increasing across reopens and timestamps monotonic.
///
/// `V4L2Source`'s capture loop hands every dequeued buffer to ``deliver(_:format:runner:)``;
/// tests feed it buffers directly (real JPEG bytes for MJPEG), so the path is the same.
struct FrameAssembler {
    /// The device node, for frames' `source` and error messages.
    let device: String
    /// Decodes MJPEG buffers.
    let decoder: (any ImageDecoder)?
    /// Added to the driver's sequence numbers (they restart at 0 after a reopen).
    var sequenceBase: UInt64 = 0
    private var lastStamp: UInt64 = 0

    init(device: String, decoder: (any ImageDecoder)?) {
        self.device = device
        self.decoder = decoder
    }

    /// Emits the buffer as a frame, or reports a fault when it cannot be unpacked or decoded (the
    /// frame is lost; the next frame's sequence gap counts it as dropped). Returns whether a frame left.
    @discardableResult
    mutating func deliver(_ raw: V4L2Device.Dequeued, format: StreamFormat, runner: SourceRunner) -> Bool {
        let image: Image
        do {
            image = try format.image(from: raw.payload, device: device, decoder: decoder)
        } catch {
            runner.fault(.decodeFailed(path: "\(device) (frame \(sequenceBase + raw.sequence))", reason: Self.reason(error)))
            return false
        }
        guard image.width == format.size.width && image.height == format.size.height else {
            runner.fault(.decodeFailed(path: "\(device) (frame \(sequenceBase + raw.sequence))",
                                       reason: "decoded \(image.width)x\(image.height), but the stream was negotiated at \(format.size)"))
            return false
        }
        // Some drivers write the timestamp after handing the buffer back (vivid sets it after
        // vb2_buffer_done), so a fast reader can see the buffer's previous time. Frames promise
        // monotonic times: replace a backwards one with the dequeue time.
        var stamp = raw.timestampNanos
        if stamp <= lastStamp {
            stamp = max(monotonicNanos(), lastStamp + 1)
            runner.repairedTimestamp()
        }
        lastStamp = stamp
        runner.emit(Frame(image: image, sequence: sequenceBase + raw.sequence, timestampNanos: stamp, source: device))
        return true
    }

    private static func reason(_ error: CaptureError) -> String {
        if case let .decodeFailed(_, reason) = error { return reason }
        return error.description
    }
}
