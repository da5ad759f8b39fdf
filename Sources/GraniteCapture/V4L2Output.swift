#if canImport(Glibc)
import Glibc
#endif
import CV4L2
import GraniteMedia

/// A V4L2 video *output* node — a virtual camera made by v4l2loopback, or vivid's output — that
/// frames are written to, already packed in the negotiated layout.
///
/// ```
///  open ─► QUERYCAP (video output?) ─► ENUM_FMT ─► S_FMT/G_FMT ─► S_PARM ─► REQBUFS ─► mmap×N
///   write(frame): take a free buffer (or DQBUF a displayed one: poll POLLOUT) ─► copy ─► QBUF
///                 ─► STREAMON after the first
///   (a node without streaming I/O: write() of the whole frame)
///  STREAMOFF ─► munmap ─► REQBUFS(0) ─► close
/// ```
/// Not thread-safe: one owner (the sink relay's executor) drives it.
public final class V4L2Output {
    /// The device node.
    public let path: String
    /// The card name QUERYCAP reported.
    public let card: String
    /// The negotiated layout.
    public private(set) var format: VideoOutputFormat
    /// The negotiated size.
    public private(set) var size: FrameSize
    /// Bytes per row the driver wants (≥ the packed row).
    public private(set) var bytesPerLine: Int
    /// Bytes per frame the driver wants.
    public private(set) var frameBytes: Int
    /// Whether frames go through an mmap ring (false: `write()`).
    public let streams: Bool
    /// Formats the node offers, as errors list them.
    public let offered: [String]

    private var fd: Int32
    private var ring: [MappedBuffer] = []
    private var free: [UInt32] = []
    private var streaming = false
    private var written: UInt64 = 0

    /// Opens `path`, checks it is a video output, and negotiates the first of `preference` it
    /// offers at `size` (an odd width is made even: v4l2loopback readers and YUYV need pairs).
    /// Throws ``CaptureError/notAnOutputDevice(device:card:capabilities:)``, `.deviceBusy`, or
    /// `.unsupportedFormat` listing what the node offers.
    public init(path: String, size wanted: FrameSize, fps: Double?,
                preference: [VideoOutputFormat] = VideoOutputFormat.allCases, bufferCount: Int = 3) throws(CaptureError) {
        self.path = path
        var st = stat()
        if stat(path, &st) != 0 { throw CaptureError.fromErrno(errno, call: "stat", device: path) }
        fd = try systemCall("open", device: path) { open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) }
        do throws(CaptureError) {
            var cap = v4l2_capability()
            do {
                try v4l2Ioctl(fd, CV4L2_VIDIOC_QUERYCAP, "VIDIOC_QUERYCAP", device: path, &cap)
            } catch .systemCall(_, _, ENOTTY) {
                throw .notAnOutputDevice(device: path, card: "(not a V4L2 device)", capabilities: 0)
            }
            let caps = (cap.capabilities & CV4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities
            card = cText(cap.card)
            guard caps & CV4L2_CAP_VIDEO_OUTPUT != 0 else {
                throw .notAnOutputDevice(device: path, card: card, capabilities: caps)
            }
            streams = caps & CV4L2_CAP_STREAMING != 0
            guard streams || caps & CV4L2_CAP_READWRITE != 0 else {
                throw .notAnOutputDevice(device: path, card: card, capabilities: caps)
            }
            let codes = try Self.enumerate(fd, path)
            offered = codes.map { FourCC.string($0) }
            // v4l2loopback lists no formats until a writer set one: then anything we write goes.
            let choices = codes.isEmpty ? preference : preference.filter { codes.contains($0.fourcc) }
            guard let first = choices.first else {
                throw .unsupportedFormat(device: path, requested: preference.map(\.description).joined(separator: " or "), offered: offered)
            }
            let even = FrameSize(width: max(2, wanted.width & ~1), height: wanted.height)
            var chosen: (VideoOutputFormat, v4l2_format)?
            for candidate in choices {
                var f = v4l2_format()
                f.type = CV4L2_BUF_TYPE_VIDEO_OUTPUT
                f.fmt.pix.width = UInt32(even.width)
                f.fmt.pix.height = UInt32(even.height)
                f.fmt.pix.pixelformat = candidate.fourcc
                f.fmt.pix.field = CV4L2_FIELD_NONE
                f.fmt.pix.bytesperline = 0
                f.fmt.pix.sizeimage = UInt32(candidate.frameBytes(width: even.width, height: even.height,
                                                                  bytesPerLine: candidate.minimumBytesPerLine(width: even.width)))
                try v4l2Ioctl(fd, CV4L2_VIDIOC_S_FMT, "VIDIOC_S_FMT(\(candidate))", device: path, &f)
                var back = v4l2_format()
                back.type = CV4L2_BUF_TYPE_VIDEO_OUTPUT
                try v4l2Ioctl(fd, CV4L2_VIDIOC_G_FMT, "VIDIOC_G_FMT", device: path, &back)
                if back.fmt.pix.pixelformat == candidate.fourcc { chosen = (candidate, back); break }
            }
            guard let (layout, back) = chosen else {
                throw .unsupportedFormat(device: path, requested: choices.map(\.description).joined(separator: " or ") + " (the driver chose another)",
                                         offered: offered)
            }
            format = layout
            size = FrameSize(width: Int(back.fmt.pix.width), height: Int(back.fmt.pix.height))
            bytesPerLine = max(Int(back.fmt.pix.bytesperline), layout.minimumBytesPerLine(width: size.width))
            frameBytes = max(Int(back.fmt.pix.sizeimage), layout.frameBytes(width: size.width, height: size.height, bytesPerLine: bytesPerLine))
            // YU12 with padded rows (bytesperline > width): the packer writes re-strided rows.
            setRate(fps)
            if streams { try mapRing(count: bufferCount) }
        } catch {
            _ = Glibc.close(fd)
            fd = -1
            throw error
        }
    }

    deinit { close() }

    private static func enumerate(_ fd: Int32, _ path: String) throws(CaptureError) -> [UInt32] {
        var codes: [UInt32] = []
        for index in 0..<UInt32(256) {
            var desc = v4l2_fmtdesc()
            desc.index = index
            desc.type = CV4L2_BUF_TYPE_VIDEO_OUTPUT
            do {
                try v4l2Ioctl(fd, CV4L2_VIDIOC_ENUM_FMT, "VIDIOC_ENUM_FMT", device: path, &desc)
            } catch let .systemCall(_, _, code) where code == EINVAL || code == ENOTTY {
                break
            }
            codes.append(desc.pixelformat)
        }
        return codes
    }

    /// S_PARM on the output queue: the rate readers of a loopback device see. Best effort.
    private func setRate(_ fps: Double?) {
        guard let fps, let interval = FrameInterval(fps: fps) else { return }
        var parm = v4l2_streamparm()
        parm.type = CV4L2_BUF_TYPE_VIDEO_OUTPUT
        guard (try? v4l2Ioctl(fd, CV4L2_VIDIOC_G_PARM, "VIDIOC_G_PARM", device: path, &parm)) != nil,
              parm.parm.output.capability & CV4L2_CAP_TIMEPERFRAME != 0 else { return }
        parm.parm.output.timeperframe.numerator = interval.numerator
        parm.parm.output.timeperframe.denominator = interval.denominator
        _ = try? v4l2Ioctl(fd, CV4L2_VIDIOC_S_PARM, "VIDIOC_S_PARM", device: path, &parm)
    }

    private func mapRing(count: Int) throws(CaptureError) {
        ring = try requestMappedRing(fd, device: path, type: CV4L2_BUF_TYPE_VIDEO_OUTPUT, count: count, mapping: .plain)
        free = Array(0..<UInt32(ring.count))
    }

    /// Writes one frame of ``frameBytes`` bytes (shorter is padded with zeros, longer cut);
    /// waits up to `timeoutMillis` for the device to hand a buffer back.
    public func write(_ bytes: [UInt8], timestampNanos: UInt64? = nil, timeoutMillis: Int32 = 2000) throws(CaptureError) {
        try write(byteCount: bytes.count, timestampNanos: timestampNanos, timeoutMillis: timeoutMillis) { buffer in
            bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<buffer.count])) }
        }
    }

    /// Writes one frame that `fill` draws straight into the device's buffer (mmap streaming: no
    /// copy of the frame) or into a scratch buffer for `write()`: `fill` gets `byteCount` bytes
    /// (fewer if the device's buffers are smaller) and must set all of them; the rest of the
    /// buffer, up to ``frameBytes``, is zeroed. Waits up to `timeoutMillis` for a free buffer.
    /// The buffer's time stamp is `timestampNanos` (`CLOCK_MONOTONIC`: the frame's capture time,
    /// which v4l2loopback hands to its readers, so they can tell capture-to-reader latency), else now.
    public func write(byteCount: Int, timestampNanos: UInt64? = nil, timeoutMillis: Int32 = 2000,
                      fill: (UnsafeMutableRawBufferPointer) -> Void) throws(CaptureError) {
        guard fd >= 0 else { throw .systemCall(device: path, call: "write (closed)", errno: EBADF) }
        if !streams {
            let bytes = [UInt8](unsafeUninitializedCapacity: byteCount) { buffer, count in
                fill(UnsafeMutableRawBufferPointer(buffer))
                count = byteCount
            }
            var offset = 0
            while offset < bytes.count {
                do {
                    let n = try systemCall("write", device: path) {
                        bytes.withUnsafeBytes { Int32(truncatingIfNeeded: Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset)) }
                    }
                    offset += Int(n)
                } catch let .systemCall(_, _, code) where code == EAGAIN {
                    try waitWritable(timeoutMillis)
                }
            }
            written += 1
            return
        }
        if free.isEmpty { try reclaim(timeoutMillis) }
        let index = free.removeFirst()
        let mapped = ring[Int(index)]
        let count = min(byteCount, mapped.length)
        fill(UnsafeMutableRawBufferPointer(start: mapped.pointer, count: count))
        if count < mapped.length { memset(mapped.pointer + count, 0, mapped.length - count) }
        var buf = mmapBuffer(type: CV4L2_BUF_TYPE_VIDEO_OUTPUT, index: index)
        buf.bytesused = UInt32(min(max(count, frameBytes), mapped.length))
        buf.field = CV4L2_FIELD_NONE
        let stamp = timestampNanos ?? monotonicNanos()
        buf.timestamp.tv_sec = Int(stamp / 1_000_000_000)
        buf.timestamp.tv_usec = Int(stamp % 1_000_000_000 / 1000)
        buf.sequence = UInt32(truncatingIfNeeded: written)
        try v4l2Ioctl(fd, CV4L2_VIDIOC_QBUF, "VIDIOC_QBUF", device: path, &buf)
        written += 1
        if !streaming {
            var type = Int32(CV4L2_BUF_TYPE_VIDEO_OUTPUT)
            try v4l2Ioctl(fd, CV4L2_VIDIOC_STREAMON, "VIDIOC_STREAMON", device: path, &type)
            streaming = true
        }
    }

    /// Frames written so far.
    public var framesWritten: UInt64 { written }

    /// DQBUF a buffer the device is done with (waiting for POLLOUT).
    private func reclaim(_ timeoutMillis: Int32) throws(CaptureError) {
        while true {
            var buf = mmapBuffer(type: CV4L2_BUF_TYPE_VIDEO_OUTPUT, index: 0)
            do {
                try v4l2Ioctl(fd, CV4L2_VIDIOC_DQBUF, "VIDIOC_DQBUF", device: path, &buf)
                free.append(buf.index)
                return
            } catch let .systemCall(_, _, code) where code == EAGAIN {
                try waitWritable(timeoutMillis)
            } catch let .systemCall(_, call, code) where code == EIO || code == EPIPE {
                throw .disconnected(device: path, detail: "\(call): \(CaptureError.message(for: code))")
            }
        }
    }

    private func waitWritable(_ timeoutMillis: Int32) throws(CaptureError) {
        var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let ready = try systemCall("poll", device: path) { poll(&pfd, 1, timeoutMillis) }
        if ready == 0 { throw .timedOut(device: path, seconds: Double(timeoutMillis) / 1000) }
        if pfd.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && pfd.revents & Int16(POLLOUT) == 0 {
            throw .disconnected(device: path, detail: "poll reported \(pfd.revents & Int16(POLLHUP) != 0 ? "hang-up" : "an error")")
        }
    }

    /// Stops streaming, unmaps, closes; safe to call twice.
    public func close() {
        guard fd >= 0 else { return }
        if streaming {
            var type = Int32(CV4L2_BUF_TYPE_VIDEO_OUTPUT)
            _ = try? v4l2Ioctl(fd, CV4L2_VIDIOC_STREAMOFF, "VIDIOC_STREAMOFF", device: path, &type)
            streaming = false
        }
        if !ring.isEmpty {
            releaseMappedRing(fd, device: path, type: CV4L2_BUF_TYPE_VIDEO_OUTPUT, ring: ring, mapping: .plain)
            ring.removeAll()
            free.removeAll()
        }
        _ = Glibc.close(fd)
        fd = -1
    }
}
