import Foundation
import GraniteCodecs
import GraniteGPU
import GraniteMedia

/// What one `background` filter of a chain keeps between frames, per frame size: the moving
/// average's history (per frame and mask size: on the CPU for the reference, in a resident device
/// buffer for the GPU path) and the photo of `image=PATH` scaled to cover that size (on the CPU,
/// and uploaded once as a resident device buffer). Plans of one size share it; the filter's kernel
/// owns it, so it lives as long as the chain.
///
/// ```
///  resident history (device, n mask cells): [sum low, sum high, no history, fresh] [fit a, b × n] [last luma sum × n]
///     background_guide.comp step 0: sum |cell luma sum − last|, store the sums
///                           step 2: cut? this frame's fits : average them into the history
/// ```
final class BackgroundState: @unchecked Sendable {  // every field behind `lock`
    struct Size: Hashable {
        var width: Int
        var height: Int
    }

    private let lock = NSLock()
    private var cpuHistory: [Size: MaskRefinement] = [:]
    private var deviceHistory: [HistoryKey: GPUBuffer] = [:]

    /// A device history's frame and mask sizes.
    struct HistoryKey: Hashable {
        var frame: Size
        var mask: Size
    }
    private var photoPlanes: [Size: RGBAPlane] = [:]
    private var photoBuffers: [Size: GPUBuffer] = [:]

    /// The decoded photo (`rgba8`, upright) of `image=PATH`, or nil.
    let photo: Image?

    init(photo: Image?) {
        self.photo = photo
    }

    /// Decodes the photo at `path` (any format GraniteCodecs reads; `rgba8`, upright).
    static func load(_ path: String, filter: String) throws(MarbleError) -> Image {
        do throws(CodecError) {
            return try Codecs.decodeFile(path)
        } catch {
            throw .unreadableImage(filter: filter, path: path, reason: "\(error.phase) error: \(error.reason)")
        }
    }

    /// `photo` scaled to cover `width`×`height`: the centred crop of the photo with the frame's
    /// aspect ratio, resized by the shared resampler (Lanczos-3), aspect preserved.
    static func cover(_ photo: Image, width: Int, height: Int) throws(MarbleError) -> RGBAPlane {
        let (sw, sh) = (photo.width, photo.height)
        // The crop's size: the photo's full height when it is wider than the frame, else its full width.
        var (cw, ch) = (sw, sh)
        if sw * height > sh * width {
            cw = min(sw, max(1, Int((Double(sh) * Double(width) / Double(height)).rounded())))
        } else {
            ch = min(sh, max(1, Int((Double(sw) * Double(height) / Double(width)).rounded())))
        }
        let (x0, y0) = ((sw - cw) / 2, (sh - ch) / 2)
        var bytes = [UInt8](repeating: 0, count: cw * ch * 4)
        for y in 0..<ch {
            let from = ((y0 + y) * sw + x0) * 4
            bytes.replaceSubrange(y * cw * 4..<(y + 1) * cw * 4, with: photo.bytes[from..<from + cw * 4])
        }
        let scaled = try MarbleError.image { () throws(MediaError) in
            try Resampler.resize(Image(width: cw, height: ch, format: .rgba8, bytes: bytes), width: width, height: height, filter: .lanczos3)
        }
        return try InputConversion.plane(scaled, range: .limited)
    }

    /// The photo covering a `size` frame (made once per size); nil without a photo.
    func photoPlane(_ size: Size) -> RGBAPlane? {
        guard let photo else { return nil }
        return lock.withLock {
            if let made = photoPlanes[size] { return made }
            // Cannot fail: the photo is a decoded rgba8 image and the frame is not empty.
            guard let made = try? Self.cover(photo, width: size.width, height: size.height) else { return nil }
            photoPlanes[size] = made
            return made
        }
    }

    /// The covering photo as a resident device buffer (uploaded once per size).
    func photoBuffer(_ context: GPUContext, _ size: Size) throws(GPUError) -> GPUBuffer? {
        guard let plane = photoPlane(size) else { return nil }
        return try lock.locked { () throws(GPUError) -> GPUBuffer in
            if let made = photoBuffers[size] { return made }
            let device = try GPUBuffer(context: context, size: plane.pixels.count * 4, role: .device)
            let staging = context.memoryPolicy.needsStaging
                ? try GPUBuffer(context: context, size: device.size, role: .upload) : nil
            try StagedBuffer(device: device, staging: staging, direction: .upload).uploadNow(plane.pixels)
            photoBuffers[size] = device
            return device
        }
    }

    /// The moving average's resident history for `mask`-sized masks on `frame`-sized frames: made
    /// once per pair, filled with 0xffffffff (its "fresh" word set, so the first frame restarts the average).
    func deviceHistory(_ context: GPUContext, frame: Size, mask: Size) throws(GPUError) -> GPUBuffer {
        try lock.locked { () throws(GPUError) -> GPUBuffer in
            let key = HistoryKey(frame: frame, mask: mask)
            if let made = deviceHistory[key] { return made }
            let buffer = try GPUBuffer(context: context, size: (4 + 3 * mask.width * mask.height) * 4, role: .device)
            let fill = try CommandSequence(context: context)
            try fill.record { (recorder) throws(GPUError) in
                recorder.fill(BufferSlice(buffer), value: 0xFFFF_FFFF)
                recorder.barrier()
            }
            try fill.run()
            deviceHistory[key] = buffer
            return buffer
        }
    }

    /// The CPU reference's alpha for `mask` on a `size` frame whose luma is `luma`, averaged with
    /// the history of `size` frames (``MaskRefinement/refined(_:luma:width:height:)``).
    func refined(_ mask: DepthPlane?, luma: [UInt8], size: Size, refinement: MaskRefinement) -> [Float] {
        lock.withLock {
            var history = cpuHistory[size] ?? refinement
            defer { cpuHistory[size] = history }
            return history.refined(mask, luma: luma, width: size.width, height: size.height)
        }
    }
}
