/// A device-local buffer and the staging buffer the host reaches it through, on devices that need
/// one (``MemoryPolicy/needsStaging``); on unified memory the device buffer is mapped and is its
/// own host side, and the copy commands are left out.
///
/// ```
///  upload:   host ─write─► host (staging) ─recordCopy: copy + barrier─► device ─► shaders
///  readback: shaders ─► device ─recordCopy: barrier + copy─► host (staging) ─wait, read─► host
/// ```
/// The copies are recorded in the frame's own command buffer, so a frame is one submission.
public final class StagedBuffer: @unchecked Sendable {
    /// Which way the bytes go.
    public enum Direction: Sendable {
        /// Host to device (frames, depth maps).
        case upload
        /// Device to host (results, model inputs).
        case readback
    }

    /// The buffer shaders bind.
    public let device: GPUBuffer
    /// The host-visible staging buffer (nil on unified memory).
    public let staging: GPUBuffer?
    /// Which way the bytes go.
    public let direction: Direction

    /// A copy sequence for ``uploadNow(_:)`` (made on first use).
    private var oneShot: CommandSequence?

    /// `device` reached through `staging` (nil: `device` is host-visible and is its own host side).
    public init(device: GPUBuffer, staging: GPUBuffer?, direction: Direction) {
        precondition(staging != nil || device.isHostVisible, "a \(device.role) buffer the host cannot see needs a staging buffer")
        precondition(staging?.isHostVisible ?? true, "a staging buffer the host cannot see")
        (self.device, self.staging, self.direction) = (device, staging, direction)
    }

    /// The buffer the host writes (upload) or reads (read-back).
    public var host: GPUBuffer { staging ?? device }

    /// Whether the bytes cross with a copy command (false on unified memory).
    public var copies: Bool { staging != nil }

    /// Writes `values` into the device buffer now, outside any frame's submission (a depth map that
    /// changes now and then): into the mapping on unified memory, else through the staging buffer
    /// and a copy submitted and waited for here. The device buffer must not be in use by the GPU.
    public func uploadNow<T: BitwiseCopyable>(_ values: [T]) throws(GPUError) {
        precondition(direction == .upload, "uploadNow on a read-back buffer")
        try host.write(values: values)
        guard let staging else { return }
        let sequence: CommandSequence
        if let oneShot {
            sequence = oneShot
        } else {
            sequence = try CommandSequence(context: device.context)
            let device = self.device
            try sequence.record { (recorder) throws(GPUError) in
                try recorder.copy(from: staging, to: device, size: min(device.size, staging.size))
                recorder.hostBarrier()
            }
            oneShot = sequence
        }
        try sequence.run()
    }

    /// Records the copy of the first `size` bytes (by default as many as both buffers hold): an upload's copy and a barrier
    /// before the shaders read it; a read-back's barrier after the shaders wrote it, then the copy
    /// (the submission's fence makes it visible to the host). Nothing on unified memory.
    public func recordCopy(_ recorder: inout CommandRecorder, size: Int? = nil) throws(GPUError) {
        guard let staging else {
            if direction == .readback { recorder.hostBarrier() }  // shader writes, read in place
            return
        }
        let size = size ?? min(device.size, staging.size)
        switch direction {
        case .upload:
            try recorder.copy(from: staging, to: device, size: size)
            recorder.barrier()
        case .readback:
            recorder.barrier()
            try recorder.copy(from: device, to: staging, size: size)
            recorder.hostBarrier()
        }
    }
}
