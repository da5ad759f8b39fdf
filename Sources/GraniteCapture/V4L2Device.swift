#if canImport(Glibc)
import Glibc
#endif
import CV4L2
import GraniteMedia

/// One open V4L2 node through libv4l2: capabilities, format negotiation, an mmap ring, dequeue.
///
/// ```
///  open ─► QUERYCAP ─► S_FMT/G_FMT ─► S_PARM/G_PARM ─► REQBUFS ─► mmap×N ─► QBUF×N ─► STREAMON
///                                         ┌──────────── poll ─► DQBUF ─► copy out ─► QBUF ◄─┐
///                                         └─────────────────────────────────────────────────┘
///  STREAMOFF ─► munmap ─► REQBUFS(0) ─► close      (also after the device vanished)
/// ```
/// Not thread-safe: one owner (a source's capture loop) drives it.
final class V4L2Device {
    /// A frame as dequeued, before any decode.
    struct Dequeued {
        var payload: [UInt8]
        var sequence: UInt64
        var timestampNanos: UInt64
    }

    let path: String
    private var fd: Int32
    private var ring: [MappedBuffer] = []
    private var streaming = false
    private(set) var format: StreamFormat?

    /// Opens `path` (non-blocking; frames are waited for with poll).
    init(path: String) throws(CaptureError) {
        self.path = path
        var st = stat()
        if stat(path, &st) != 0 { throw CaptureError.fromErrno(errno, call: "stat", device: path) }
        do throws(CaptureError) {
            fd = try systemCall("v4l2_open", device: path) { cv4l2_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) }
        } catch .systemCall(_, _, ENOTTY) {
            // libv4l2 queries capabilities inside open: ENOTTY means no V4L2 device at all.
            throw .notACaptureDevice(device: path, card: "(not a V4L2 device)", capabilities: 0)
        }
    }

    deinit { close() }

    // MARK: Capabilities and formats

    /// QUERYCAP plus every format, size and rate (ENUM_FMT / ENUM_FRAMESIZES / ENUM_FRAMEINTERVALS).
    func describe() throws(CaptureError) -> DeviceInfo {
        var cap = v4l2_capability()
        try v4l2Ioctl(fd, CV4L2_VIDIOC_QUERYCAP, "VIDIOC_QUERYCAP", device: path, &cap)
        let caps = (cap.capabilities & CV4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities
        let canCapture = (caps & CV4L2_CAP_VIDEO_CAPTURE) != 0 && (caps & CV4L2_CAP_STREAMING) != 0
        return DeviceInfo(path: path, card: cText(cap.card), driver: cText(cap.driver), bus: cText(cap.bus_info),
                          capabilities: caps, canCapture: canCapture,
                          formats: canCapture ? try enumerateFormats() : [])
    }

    private func enumerateFormats() throws(CaptureError) -> [FormatInfo] {
        var result: [FormatInfo] = []
        var index: UInt32 = 0
        while true {
            var desc = v4l2_fmtdesc()
            desc.index = index
            desc.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
            guard try probe(CV4L2_VIDIOC_ENUM_FMT, "VIDIOC_ENUM_FMT", &desc) else { break }
            result.append(FormatInfo(fourcc: desc.pixelformat, name: cText(desc.description),
                                     compressed: desc.flags & CV4L2_FMT_FLAG_COMPRESSED != 0,
                                     emulated: desc.flags & CV4L2_FMT_FLAG_EMULATED != 0,
                                     sizes: try enumerateSizes(desc.pixelformat)))
            index += 1
        }
        return result
    }

    private func enumerateSizes(_ fourcc: UInt32) throws(CaptureError) -> [SizeInfo] {
        var sizes: [SizeInfo] = []
        var index: UInt32 = 0
        while index < 256 {
            var e = v4l2_frmsizeenum()
            e.index = index
            e.pixel_format = fourcc
            guard try probe(CV4L2_VIDIOC_ENUM_FRAMESIZES, "VIDIOC_ENUM_FRAMESIZES", &e) else { break }
            if e.type == CV4L2_FRMSIZE_TYPE_DISCRETE {
                let size = FrameSize(width: Int(e.discrete.width), height: Int(e.discrete.height))
                sizes.append(SizeInfo(size: size, rates: try enumerateRates(fourcc, size)))
            } else {
                for (w, h) in [(e.stepwise.min_width, e.stepwise.min_height), (e.stepwise.max_width, e.stepwise.max_height)] {
                    let size = FrameSize(width: Int(w), height: Int(h))
                    sizes.append(SizeInfo(size: size, rates: try enumerateRates(fourcc, size)))
                }
                break
            }
            index += 1
        }
        return sizes
    }

    private func enumerateRates(_ fourcc: UInt32, _ size: FrameSize) throws(CaptureError) -> [Double] {
        var rates: [Double] = []
        var index: UInt32 = 0
        while index < 256 {
            var e = v4l2_frmivalenum()
            e.index = index
            e.pixel_format = fourcc
            e.width = UInt32(size.width)
            e.height = UInt32(size.height)
            guard try probe(CV4L2_VIDIOC_ENUM_FRAMEINTERVALS, "VIDIOC_ENUM_FRAMEINTERVALS", &e) else { break }
            if e.type == CV4L2_FRMIVAL_TYPE_DISCRETE {
                if e.discrete.numerator > 0 { rates.append(Double(e.discrete.denominator) / Double(e.discrete.numerator)) }
            } else {
                for f in [e.stepwise.min, e.stepwise.max] where f.numerator > 0 {
                    rates.append(Double(f.denominator) / Double(f.numerator))
                }
                break
            }
            index += 1
        }
        return rates.sorted(by: >)
    }

    /// An enumeration ioctl: `false` at the end of the list (EINVAL), throws on anything else.
    private func probe<T>(_ request: UInt, _ name: String, _ arg: inout T) throws(CaptureError) -> Bool {
        do {
            try v4l2Ioctl(fd, request, name, device: path, &arg)
            return true
        } catch let .systemCall(_, _, code) where code == EINVAL || code == ENOTTY {
            return false
        }
    }

    // MARK: Negotiation

    /// S_FMT then S_PARM, and reads back what the driver chose (G_FMT, G_PARM).
    func negotiate(format: CaptureFormat, size: FrameSize?, fps: Double?, info: DeviceInfo) throws(CaptureError) -> StreamFormat {
        guard let fourcc = format.fourcc else { throw .invalidRequest("\(path): negotiate needs a concrete format, not auto") }
        var f = v4l2_format()
        f.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        try v4l2Ioctl(fd, CV4L2_VIDIOC_G_FMT, "VIDIOC_G_FMT", device: path, &f)
        f.fmt.pix.pixelformat = fourcc
        if let size {
            f.fmt.pix.width = UInt32(size.width)
            f.fmt.pix.height = UInt32(size.height)
        }
        f.fmt.pix.field = CV4L2_FIELD_NONE
        f.fmt.pix.bytesperline = 0
        try v4l2Ioctl(fd, CV4L2_VIDIOC_S_FMT, "VIDIOC_S_FMT", device: path, &f)
        var chosen = v4l2_format()
        chosen.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        try v4l2Ioctl(fd, CV4L2_VIDIOC_G_FMT, "VIDIOC_G_FMT", device: path, &chosen)
        var result = try StreamFormat(readBack: format, fourcc: chosen.fmt.pix.pixelformat, width: chosen.fmt.pix.width,
                                      height: chosen.fmt.pix.height, bytesPerLine: chosen.fmt.pix.bytesperline, info: info)
        result.fps = try setRate(fps)
        self.format = result
        return result
    }

    /// S_PARM when the driver supports frame intervals; returns the rate G_PARM reports.
    private func setRate(_ fps: Double?) throws(CaptureError) -> Double? {
        var parm = v4l2_streamparm()
        parm.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
        guard try probe(CV4L2_VIDIOC_G_PARM, "VIDIOC_G_PARM", &parm) else { return nil }
        let settable = parm.parm.capture.capability & CV4L2_CAP_TIMEPERFRAME != 0
        if let fps, settable, let interval = FrameInterval(fps: fps) {
            parm.parm.capture.timeperframe.numerator = interval.numerator
            parm.parm.capture.timeperframe.denominator = interval.denominator
            try v4l2Ioctl(fd, CV4L2_VIDIOC_S_PARM, "VIDIOC_S_PARM", device: path, &parm)
            parm = v4l2_streamparm()
            parm.type = CV4L2_BUF_TYPE_VIDEO_CAPTURE
            try v4l2Ioctl(fd, CV4L2_VIDIOC_G_PARM, "VIDIOC_G_PARM", device: path, &parm)
        }
        let t = parm.parm.capture.timeperframe
        return FrameInterval(numerator: t.numerator, denominator: t.denominator).fps
    }

    // MARK: Streaming

    /// REQBUFS, mmap a ring of `count` buffers, queue them all, STREAMON.
    func startStreaming(count: Int) throws(CaptureError) {
        ring = try requestMappedRing(fd, device: path, type: CV4L2_BUF_TYPE_VIDEO_CAPTURE, count: count, mapping: .libv4l2)
        for index in 0..<UInt32(ring.count) {
            var buf = mmapBuffer(type: CV4L2_BUF_TYPE_VIDEO_CAPTURE, index: index)
            try v4l2Ioctl(fd, CV4L2_VIDIOC_QBUF, "VIDIOC_QBUF", device: path, &buf)
        }
        var type = Int32(CV4L2_BUF_TYPE_VIDEO_CAPTURE)
        try v4l2Ioctl(fd, CV4L2_VIDIOC_STREAMON, "VIDIOC_STREAMON", device: path, &type)
        streaming = true
    }

    /// The number of buffers in the ring.
    var ringSize: Int { ring.count }

    /// Waits up to `timeoutMillis` for a frame; `nil` on timeout. The payload is copied out and
    /// the buffer re-queued at once, so the ring never starves while the consumer works.
    func dequeue(timeoutMillis: Int32) throws(CaptureError) -> Dequeued? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = try systemCall("poll", device: path) { poll(&pfd, 1, timeoutMillis) }
        if ready == 0 { return nil }
        if pfd.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && pfd.revents & Int16(POLLIN) == 0 {
            throw .disconnected(device: path, detail: "poll reported \(pfd.revents & Int16(POLLHUP) != 0 ? "hang-up" : "an error")")
        }
        var buf = mmapBuffer(type: CV4L2_BUF_TYPE_VIDEO_CAPTURE, index: 0)
        do {
            try v4l2Ioctl(fd, CV4L2_VIDIOC_DQBUF, "VIDIOC_DQBUF", device: path, &buf)
        } catch let .systemCall(_, _, code) where code == EAGAIN {
            return nil
        } catch let .systemCall(_, call, code) where code == EIO || code == EPIPE {
            throw .disconnected(device: path, detail: "\(call): \(CaptureError.message(for: code))")
        }
        guard Int(buf.index) < ring.count else {
            throw .systemCall(device: path, call: "VIDIOC_DQBUF (buffer index \(buf.index) outside the ring)", errno: EINVAL)
        }
        let mapped = ring[Int(buf.index)]
        let used = min(Int(buf.bytesused), mapped.length)
        let payload = [UInt8](UnsafeRawBufferPointer(start: mapped.pointer, count: used))
        let stamp: UInt64
        let given = buf.timestamp.tv_sec > 0 || buf.timestamp.tv_usec > 0
            ? UInt64(buf.timestamp.tv_sec) * 1_000_000_000 + UInt64(buf.timestamp.tv_usec) * 1_000 : 0
        if buf.flags & CV4L2_BUF_FLAG_TIMESTAMP_MASK == CV4L2_BUF_FLAG_TIMESTAMP_MONOTONIC, given > 0 {
            stamp = given
        } else {
            // No clock named (v4l2loopback hands on its writer's stamp, granite-cam's capture time,
            // without saying so): taken when it can be a monotonic time, else the dequeue time.
            stamp = CaptureClock.plausible(given, now: monotonicNanos())
        }
        let sequence = UInt64(buf.sequence)
        try v4l2Ioctl(fd, CV4L2_VIDIOC_QBUF, "VIDIOC_QBUF", device: path, &buf)
        return Dequeued(payload: payload, sequence: sequence, timestampNanos: stamp)
    }

    /// STREAMOFF, unmap, free the buffers. Errors are ignored: this also runs after the device
    /// vanished, when every ioctl fails with ENODEV and the only job left is to let go.
    func stopStreaming() {
        guard fd >= 0 else { return }
        if streaming {
            var type = Int32(CV4L2_BUF_TYPE_VIDEO_CAPTURE)
            _ = try? v4l2Ioctl(fd, CV4L2_VIDIOC_STREAMOFF, "VIDIOC_STREAMOFF", device: path, &type)
            streaming = false
        }
        if !ring.isEmpty {
            releaseMappedRing(fd, device: path, type: CV4L2_BUF_TYPE_VIDEO_CAPTURE, ring: ring, mapping: .libv4l2)
            ring.removeAll()
        }
    }

    /// Stops streaming and closes the node; safe to call twice.
    func close() {
        stopStreaming()
        if fd >= 0 {
            _ = cv4l2_close(fd)
            fd = -1
        }
    }

    /// The raw descriptor, for control ioctls on the same open file.
    var descriptor: Int32 { fd }
}

/// A fixed-size C char array (imported as a tuple) as a Swift string.
func cText<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
}
