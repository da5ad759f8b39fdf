import CV4L2
import Glibc

/// One memory-mapped V4L2 buffer of a streaming ring (capture or output).
struct MappedBuffer {
    let pointer: UnsafeMutableRawPointer
    let length: Int
}

/// How a node's buffers are mapped: through libv4l2 for a node opened with `v4l2_open` (the
/// capture device, whose conversions libv4l2 may emulate), plain `mmap` for one opened with
/// `open` (the output device).
enum BufferMapping {
    case libv4l2
    case plain

    /// Maps one buffer; nil when the kernel refused.
    func map(_ fd: Int32, length: Int, offset: Int) -> UnsafeMutableRawPointer? {
        switch self {
        case .libv4l2:
            guard let pointer = cv4l2_mmap(fd, length, offset), cv4l2_is_map_failed(pointer) == 0 else { return nil }
            return pointer
        case .plain:
            let pointer = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(offset))
            guard let pointer, pointer != MAP_FAILED else { return nil }
            return pointer
        }
    }

    /// Unmaps buffers mapped by ``map(_:length:offset:)``.
    func unmap(_ buffers: [MappedBuffer]) {
        for buffer in buffers {
            switch self {
            case .libv4l2: _ = cv4l2_munmap(buffer.pointer, buffer.length)
            case .plain: _ = munmap(buffer.pointer, buffer.length)
            }
        }
    }

    /// The call named in an error.
    var callName: String { self == .libv4l2 ? "v4l2_mmap" : "mmap" }
}

/// A `v4l2_buffer` describing MMAP buffer `index` of a ring of `type`.
func mmapBuffer(type: UInt32, index: UInt32) -> v4l2_buffer {
    var buf = v4l2_buffer()
    buf.index = index
    buf.type = type
    buf.memory = CV4L2_MEMORY_MMAP
    return buf
}

/// REQBUFS `count` MMAP buffers of `type` on `fd`, then QUERYBUF and map each, in index order.
/// A driver that grants no buffer is an error; when a QUERYBUF or a map fails, the ring is
/// released (``releaseMappedRing``) before the error is thrown.
func requestMappedRing(_ fd: Int32, device path: String, type: UInt32, count: Int,
                       mapping: BufferMapping) throws(CaptureError) -> [MappedBuffer] {
    var req = v4l2_requestbuffers()
    req.count = UInt32(count)
    req.type = type
    req.memory = CV4L2_MEMORY_MMAP
    try v4l2Ioctl(fd, CV4L2_VIDIOC_REQBUFS, "VIDIOC_REQBUFS", device: path, &req)
    guard req.count > 0 else { throw .systemCall(device: path, call: "VIDIOC_REQBUFS (0 buffers)", errno: ENOMEM) }
    var ring: [MappedBuffer] = []
    for index in 0..<req.count {
        var buf = mmapBuffer(type: type, index: index)
        do {
            try v4l2Ioctl(fd, CV4L2_VIDIOC_QUERYBUF, "VIDIOC_QUERYBUF", device: path, &buf)
        } catch {
            releaseMappedRing(fd, device: path, type: type, ring: ring, mapping: mapping)
            throw error
        }
        guard let pointer = mapping.map(fd, length: Int(buf.length), offset: Int(buf.m.offset)) else {
            let code = errno
            releaseMappedRing(fd, device: path, type: type, ring: ring, mapping: mapping)
            throw CaptureError.fromErrno(code, call: mapping.callName, device: path)
        }
        ring.append(MappedBuffer(pointer: pointer, length: Int(buf.length)))
    }
    return ring
}

/// Unmaps `ring` and frees the driver's buffers of `type` (REQBUFS 0), best effort: used on
/// close (also after the device vanished) and when setting a ring up failed half-way.
func releaseMappedRing(_ fd: Int32, device path: String, type: UInt32, ring: [MappedBuffer], mapping: BufferMapping) {
    mapping.unmap(ring)
    var req = v4l2_requestbuffers()
    req.type = type
    req.memory = CV4L2_MEMORY_MMAP
    _ = try? v4l2Ioctl(fd, CV4L2_VIDIOC_REQBUFS, "VIDIOC_REQBUFS", device: path, &req)
}
