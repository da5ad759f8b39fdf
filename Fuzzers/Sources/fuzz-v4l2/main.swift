// V4L2 negotiation against whatever a driver might offer and answer, decoded from the bytes:
//
//   offers (formats × sizes × frame intervals) + request ─► DeviceInfo.choose
//   driver's G_FMT answer ─► StreamFormat(readBack:) ─► a dequeued buffer unpacked (image(from:))
//   frame intervals both ways (FrameInterval)
//
// Layout (Fuzzers/make-seeds.py writes it): a little-endian stream read field by field; past
// the end, fields read as 0.
import FuzzSupport
@testable import GraniteCapture
import GraniteMedia

/// Reads fixed-size fields off the fuzzer's bytes.
struct Fields {
    let bytes: UnsafeBufferPointer<UInt8>
    var at = 0

    mutating func u8() -> UInt8 {
        defer { at += 1 }
        return at < bytes.count ? bytes[at] : 0
    }

    mutating func u16() -> UInt16 { UInt16(u8()) | UInt16(u8()) << 8 }
    mutating func u32() -> UInt32 { UInt32(u16()) | UInt32(u16()) << 16 }
    mutating func u64() -> UInt64 { UInt64(u32()) | UInt64(u32()) << 32 }

    /// A fourcc: one of ours (or a common foreign one) by index, or four raw bytes.
    mutating func fourcc() -> UInt32 {
        let known = ["YUYV", "MJPG", "NV12", "RGB3", "H264", "GREY", "BA81", "UYVY"]
        let pick = u8()
        return Int(pick) < known.count ? FourCC.make(known[Int(pick)]) : u32()
    }

    /// The rest of the bytes.
    mutating func rest() -> [UInt8] {
        defer { at = bytes.count }
        return at < bytes.count ? Array(bytes[at...]) : []
    }
}

fuzzMain { data in
    var f = Fields(bytes: data)
    // What the driver offers (ENUM_FMT / ENUM_FRAMESIZES / ENUM_FRAMEINTERVALS as V4L2Device reads them).
    var formats: [FormatInfo] = []
    for _ in 0..<(f.u8() % 6) {
        let fourcc = f.fourcc(), flags = f.u8()
        var sizes: [SizeInfo] = []
        for _ in 0..<(f.u8() % 5) {
            let frame = FrameSize(width: Int(f.u32()), height: Int(f.u32()))
            var rates: [Double] = []
            for _ in 0..<(f.u8() % 4) {
                let interval = FrameInterval(numerator: f.u32(), denominator: f.u32())
                if interval.numerator > 0 { rates.append(Double(interval.denominator) / Double(interval.numerator)) }
            }
            sizes.append(SizeInfo(size: frame, rates: rates.sorted(by: >)))
        }
        formats.append(FormatInfo(fourcc: fourcc, name: FourCC.string(fourcc), compressed: flags & 1 != 0,
                                  emulated: flags & 2 != 0, sizes: sizes))
    }
    let info = DeviceInfo(path: "/dev/video-fuzz", card: "fuzz", driver: "fuzz", bus: "fuzz",
                          capabilities: f.u32(), canCapture: true, formats: formats)
    // What the caller asks for: any format, maybe a size, maybe a rate (any double: it comes from a flag).
    let flags = f.u8()
    let wanted = CaptureFormat.allCases[Int(flags & 7) % CaptureFormat.allCases.count]
    let requestSize = flags & 0x10 != 0 ? FrameSize(width: Int(f.u32()), height: Int(f.u32())) : nil
    let requestFPS = flags & 0x20 != 0 ? Double(bitPattern: f.u64()) : nil
    let request = CaptureRequest(format: wanted, size: requestSize, fps: requestFPS)
    guard let chosen = try? info.choose(request, allowMJPEG: flags & 0x40 != 0) else { return }
    precondition(chosen != .auto && info.formats.contains { $0.format == chosen })
    if let fps = requestFPS, let interval = FrameInterval(fps: fps) {
        precondition(interval.fps != nil)
    }
    // The driver's answer to S_FMT/G_FMT: usually the chosen fourcc, any size and stride.
    let answer = flags & 0x80 != 0 ? f.fourcc() : chosen.fourcc!
    guard var stream = try? StreamFormat(readBack: chosen, fourcc: answer, width: f.u32(), height: f.u32(),
                                         bytesPerLine: f.u32(), info: info) else { return }
    stream.fps = FrameInterval(numerator: f.u32(), denominator: f.u32()).fps
    _ = stream.description
    // A dequeued buffer: the rest of the bytes (MJPEG through the Netpbm decoder, which refuses it).
    if let image = try? stream.image(from: f.rest(), device: "/dev/video-fuzz", decoder: NetpbmDecoder()),
       chosen != .mjpeg {
        precondition(image.width == stream.size.width && image.height == stream.size.height)
    }
}
