/// The format a ``PipeWireSource`` asks a producer for, picked among its `EnumFormat` offers the
/// way a camera client picks: the request's format (or, for `auto`, the chain's preference), then
/// the size nearest the request's, then the rate nearest the request's. Asking for one fixed
/// format is what makes a producer with choices (a camera behind WirePlumber, a screen cast)
/// link; a pure function of the offers, so it is tested without a daemon.
public struct PipeWireChosenFormat: Sendable, Hashable, CustomStringConvertible {
    /// The raw format, or nil for MJPEG (decoded per frame).
    public var format: PipeWireVideoFormat?
    /// The size asked for.
    public var size: FrameSize
    /// The rate asked for.
    public var rate: PipeWireRate

    /// A choice.
    public init(format: PipeWireVideoFormat?, size: FrameSize, rate: PipeWireRate) {
        self.format = format
        self.size = size
        self.rate = rate
    }

    /// `YUY2 320x240 @ 30 fps`, `MJPEG 640x480 @ 30 fps`.
    public var description: String {
        "\(format?.rawValue ?? "MJPEG") \(size) @ " + (rate.num == 0 ? "variable rate" : "\(StreamFormat.describeRate(rate.fps)) fps")
    }

    /// The raw formats granite reads, in the chain's order of preference (YUV a camera sends as
    /// it is before RGB); MJPEG comes after all of them.
    public static let preference: [PipeWireVideoFormat] = [.yuy2, .nv12, .i420, .rgbx, .bgrx, .rgba, .bgra]

    /// What `format` asks for, in order (nil: MJPEG).
    static func wanted(_ format: CaptureFormat, mjpeg: Bool) -> [PipeWireVideoFormat?] {
        switch format {
        case .auto: return preference.map { $0 } + (mjpeg ? [nil] : [])
        case .yuyv: return [.yuy2]
        case .nv12: return [.nv12, .i420]   // both arrive as an nv12 image
        case .rgb24: return [.rgbx, .bgrx, .rgba, .bgra]
        case .mjpeg: return [nil]
        }
    }

    /// Picks among `offers` for `request` (its format strictly, its size and rate as the nearest
    /// offered); `mjpeg`: whether MJPEG can be decoded. Throws ``CaptureError/unsupportedFormat(device:requested:offered:)``
    /// naming `node` and listing every offer when nothing fits.
    public static func choose(among offers: [PipeWireOffer], for request: CaptureRequest, mjpeg: Bool,
                              node: String) throws(CaptureError) -> PipeWireChosenFormat {
        for format in wanted(request.format, mjpeg: mjpeg) {
            let fitting = offers.filter { offer in
                switch offer.kind {
                case let .raw(formats): return format.map { formats.contains($0.spaID) } ?? false
                case .mjpeg: return format == nil
                case .other: return false
                }
            }
            // The offer whose size comes nearest; its rate nearest the request.
            var best: (offer: PipeWireOffer, size: FrameSize, distance: Int)?
            for offer in fitting {
                guard let size = nearest(size: request.size, in: offer.sizes) else { continue }
                let distance = request.size.map { abs($0.width - size.width) + abs($0.height - size.height) } ?? 0
                if best == nil || distance < best!.distance { best = (offer, size, distance) }
            }
            guard let best else { continue }
            return PipeWireChosenFormat(format: format, size: best.size, rate: nearest(fps: request.fps, in: best.offer.rates))
        }
        let readable = wanted(request.format, mjpeg: mjpeg).map { $0?.rawValue ?? "MJPEG" }.joined(separator: ", ")
        let requested = request.format == .auto ? "auto (one of \(readable))" : "\(request.format) (\(readable))"
        throw .unsupportedFormat(device: node, requested: requested,
                                 offered: offers.isEmpty ? ["nothing (the node lists no EnumFormat)"] : offers.map(\.description))
    }

    /// The offered size nearest `wanted` (nil: the producer's own), or nil when none is stated.
    static func nearest(size wanted: FrameSize?, in choice: PipeWireChoice<FrameSize>?) -> FrameSize? {
        guard let choice else { return nil }
        guard let wanted else { return choice.preferred.width > 0 ? choice.preferred : nil }
        switch choice {
        case let .one(v): return v.width > 0 && v.height > 0 ? v : nil
        case let .list(values):
            return values.filter { $0.width > 0 && $0.height > 0 }
                .min { abs($0.width - wanted.width) + abs($0.height - wanted.height) < abs($1.width - wanted.width) + abs($1.height - wanted.height) }
        case let .range(_, lo, hi, step):
            func fit(_ want: Int, _ lo: Int, _ hi: Int, _ step: Int?) -> Int {
                let clamped = min(max(want, lo), hi)
                guard let step, step > 1 else { return clamped }
                let snapped = lo + ((clamped - lo) + step / 2) / step * step
                return snapped > hi ? snapped - step : snapped
            }
            let size = FrameSize(width: fit(wanted.width, max(lo.width, 1), hi.width, step?.width),
                                 height: fit(wanted.height, max(lo.height, 1), hi.height, step?.height))
            return size.width > 0 && size.height > 0 ? size : nil
        }
    }

    /// The offered rate nearest `fps` (nil: the producer's own); 0/1 (variable) when none is stated.
    static func nearest(fps: Double?, in choice: PipeWireChoice<PipeWireRate>?) -> PipeWireRate {
        guard let choice else { return PipeWireRate(num: 0, den: 1) }
        guard let fps, let asked = FrameInterval(fps: fps) else { return choice.preferred }
        // FrameInterval states fps as a fraction (seconds per frame); a rate is its inverse.
        let wanted = PipeWireRate(num: asked.denominator, den: asked.numerator)
        switch choice {
        case let .one(v): return v
        case let .list(values): return values.min { abs($0.fps - fps) < abs($1.fps - fps) } ?? values[0]
        case let .range(_, lo, hi, _):
            if wanted.fps < lo.fps { return lo }
            if wanted.fps > hi.fps { return hi }
            return wanted
        }
    }
}
