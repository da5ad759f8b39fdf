import CPipeWire
import GraniteMedia

/// A value a PipeWire producer offers for one property of a format: one value, a list, or a
/// range (with a step), as its `EnumFormat` pods say (`SPA_CHOICE_None`, `Enum`, `Range`, `Step`).
public enum PipeWireChoice<Value: Sendable & Hashable>: Sendable, Hashable {
    /// Exactly this.
    case one(Value)
    /// Any of these (the producer's default first).
    case list([Value])
    /// Anything from `min` to `max`, in `step`s from `min` when there is one.
    case range(default: Value, min: Value, max: Value, step: Value?)

    /// The producer's own pick.
    public var preferred: Value {
        switch self {
        case let .one(v): return v
        case let .list(values): return values[0]
        case let .range(v, _, _, _): return v
        }
    }
}

/// A frame rate as PipeWire states it (frames per `den` seconds; 0/1: variable, as screen casts say).
public struct PipeWireRate: Sendable, Hashable, CustomStringConvertible {
    /// Frames…
    public var num: UInt32
    /// …per this many seconds.
    public var den: UInt32

    /// A rate.
    public init(num: UInt32, den: UInt32) {
        self.num = num
        self.den = den
    }

    /// Frames per second (0 for a variable rate).
    public var fps: Double { den == 0 ? 0 : Double(num) / Double(den) }

    public var description: String { den == 1 ? "\(num)" : "\(num)/\(den)" }
}

/// One `EnumFormat` pod of a PipeWire producer: what it can send.
public struct PipeWireOffer: Sendable, Hashable, CustomStringConvertible {
    /// How the pictures are carried.
    public enum Kind: Sendable, Hashable {
        /// Raw video, in the formats listed (SPA ids; some may be ones granite does not read).
        case raw(formats: [UInt32])
        /// Motion JPEG.
        case mjpeg
        /// Another media subtype (H.264, …), by SPA's name.
        case other(String)
    }

    /// Raw (and which formats), MJPEG, or something else.
    public var kind: Kind
    /// The sizes offered (nil: the producer says nothing).
    public var sizes: PipeWireChoice<FrameSize>?
    /// The rates offered (nil: the producer says nothing).
    public var rates: PipeWireChoice<PipeWireRate>?

    /// An offer.
    public init(kind: Kind, sizes: PipeWireChoice<FrameSize>?, rates: PipeWireChoice<PipeWireRate>?) {
        self.kind = kind
        self.sizes = sizes
        self.rates = rates
    }

    /// `YUY2/NV12 320x240 @ 30`, `MJPEG 1x1..8192x8192 @ 0..1000`, `raw (no format PipeWire names) 320x240 @ 30`.
    public var description: String {
        let what: String
        switch kind {
        case let .raw(formats):
            what = formats.isEmpty ? "raw (no format PipeWire names)" : formats.map(PipeWireOffer.formatName).joined(separator: "/")
        case .mjpeg: what = "MJPEG"
        case let .other(name): what = name
        }
        return what + (sizes.map { " " + PipeWireOffer.describe($0) } ?? "") + (rates.map { " @ " + PipeWireOffer.describe($0) } ?? "")
    }

    /// SPA's name of a raw video format (`YUY2`, `RGB`, …), or `format #N`.
    public static func formatName(_ id: UInt32) -> String {
        PipeWireVideoFormat(spaID: id)?.rawValue ?? cpw_video_format_name(id).map { String(cString: $0) } ?? "format #\(id)"
    }

    static func describe<V>(_ choice: PipeWireChoice<V>) -> String {
        switch choice {
        case let .one(v): return "\(v)"
        case let .list(values): return values.map { "\($0)" }.joined(separator: ",")
        case let .range(_, lo, hi, step): return "\(lo)..\(hi)" + (step.map { " step \($0)" } ?? "")
        }
    }

    /// The offer an `EnumFormat` pod (read by the C shim) describes; nil when it is not video.
    init?(_ c: cpw_offer) {
        guard c.media_type == SPA_MEDIA_TYPE_video.rawValue else { return nil }
        var offer = c
        if offer.media_subtype == SPA_MEDIA_SUBTYPE_raw.rawValue {
            let formats = withUnsafeBytes(of: &offer.formats) { Array($0.bindMemory(to: UInt32.self).prefix(Int(c.format_count))) }
            // An Enum lists the default, then the alternatives (which repeat it): keep each once.
            var seen: [UInt32] = []
            for f in formats where !seen.contains(f) && f != SPA_VIDEO_FORMAT_UNKNOWN.rawValue { seen.append(f) }
            kind = .raw(formats: seen)
        } else if offer.media_subtype == SPA_MEDIA_SUBTYPE_mjpg.rawValue {
            kind = .mjpeg
        } else {
            kind = .other(cpw_media_subtype_name(offer.media_subtype).map { String(cString: $0) } ?? "subtype #\(offer.media_subtype)")
        }
        let sizes = withUnsafeBytes(of: &offer.sizes) {
            $0.bindMemory(to: spa_rectangle.self).prefix(Int(c.size_count)).map { FrameSize(width: Int($0.width), height: Int($0.height)) }
        }
        let rates = withUnsafeBytes(of: &offer.rates) {
            $0.bindMemory(to: spa_fraction.self).prefix(Int(c.rate_count)).map { PipeWireRate(num: $0.num, den: $0.denom) }
        }
        self.sizes = PipeWireOffer.choice(kind: c.size_kind, sizes)
        self.rates = PipeWireOffer.choice(kind: c.rate_kind, rates)
    }

    static func choice<V>(kind: UInt32, _ values: [V]) -> PipeWireChoice<V>? {
        guard let first = values.first else { return nil }
        switch kind {
        case SPA_CHOICE_Range.rawValue where values.count >= 3:
            return .range(default: first, min: values[1], max: values[2], step: nil)
        case SPA_CHOICE_Step.rawValue where values.count >= 4:
            return .range(default: first, min: values[1], max: values[2], step: values[3])
        case SPA_CHOICE_Enum.rawValue:
            var seen: [V] = []
            for v in values where !seen.contains(v) { seen.append(v) }
            return seen.count == 1 ? .one(first) : .list(seen)
        default:
            return .one(first)
        }
    }
}

extension PipeWireOffer {
    /// What `node` offers: its `EnumFormat` params, asked of the daemon (a bound node proxy and a
    /// round trip). Errors name `label`.
    static func offers(of node: PipeWireNode, loop: PipeWireLoop, label: String) throws(CaptureError) -> [PipeWireOffer] {
        let params = UnsafeMutablePointer<cpw_node_params>.allocate(capacity: 1)
        defer { params.deallocate() }
        return try loop.locked { () throws(CaptureError) -> [PipeWireOffer] in
            guard let registry = cpw_core_get_registry(loop.core) else {
                throw .pipeWire(node: label, detail: "cannot get the registry: \(CaptureError.message(for: cpw_errno()))")
            }
            defer { cpw_registry_destroy(registry) }
            let code = cpw_node_params_begin(registry, node.id, SPA_PARAM_EnumFormat.rawValue, params)
            defer { cpw_node_params_free(params) }
            guard code >= 0 else { throw .pipeWire(node: label, detail: "cannot ask the node for its formats: \(CaptureError.message(for: -code))") }
            guard loop.roundTrip() else { throw .pipeWire(node: label, detail: "the daemon did not list the node's formats within 5 s") }
            var offers: [PipeWireOffer] = []
            var parsed = cpw_offer()
            for i in 0..<params.pointee.count {
                guard cpw_parse_offer(cpw_node_param(params, i), &parsed) == 0, let offer = PipeWireOffer(parsed) else { continue }
                offers.append(offer)
            }
            return offers
        }
    }
}

extension PipeWireChoice {
    /// The `SPA_CHOICE_*` kind and the values laid out as the C shim's `cpw_offer` says.
    var flattened: (kind: UInt32, values: [Value]) {
        switch self {
        case let .one(v): return (SPA_CHOICE_None.rawValue, [v])
        case let .list(values): return (SPA_CHOICE_Enum.rawValue, [values[0]] + values)
        case let .range(d, lo, hi, step?): return (SPA_CHOICE_Step.rawValue, [d, lo, hi, step])
        case let .range(d, lo, hi, nil): return (SPA_CHOICE_Range.rawValue, [d, lo, hi])
        }
    }
}

extension PipeWireOffer {
    /// This offer as an `EnumFormat` pod built in `buffer` (what a producer offers), nil when it
    /// does not fit or says no size and rate. Raw formats not in ``PipeWireVideoFormat`` cannot be made.
    func pod(in buffer: UnsafeMutableRawBufferPointer) -> UnsafePointer<spa_pod>? {
        guard let sizes, let rates else { return nil }
        let formats: [UInt32]
        switch kind {
        case let .raw(ids): formats = ids
        case .mjpeg: formats = []
        case .other: return nil
        }
        let s = sizes.flattened, r = rates.flattened
        let rectangles = s.values.map { spa_rectangle(width: UInt32($0.width), height: UInt32($0.height)) }
        let fractions = r.values.map { spa_fraction(num: $0.num, denom: $0.den) }
        return cpw_video_offer(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(buffer.count), formats, UInt32(formats.count),
                               s.kind, rectangles, UInt32(rectangles.count), r.kind, fractions, UInt32(fractions.count))
    }
}
