import GraniteGPU

/// Integer pixel remaps (`remap.comp`): crop, flip, rotate by quarter turns, pixellate.
///
/// Source coordinates are `(a.x*x + a.y*y + a.z, b.x*x + b.y*y + b.z)`; exact everywhere.
struct Remap: FilterKernel {
    enum Kind { case crop(x: Int, y: Int, width: Int, height: Int), flip(horizontal: Bool), rotate(turns: Int), pixellate(Int) }
    let kind: Kind
    let name: String

    static let crop = FilterDescription(
        name: "crop", summary: "Cuts out a rectangle (width/height 0 = to the image's edge).",
        parameters: [
            .init("x", .int(min: 0, max: 16384, default: 0), "left edge"),
            .init("y", .int(min: 0, max: 16384, default: 0), "top edge"),
            .init("width", .int(min: 0, max: 16384, default: 0), "width, 0 = to the right edge"),
            .init("height", .int(min: 0, max: 16384, default: 0), "height, 0 = to the bottom edge"),
        ])
    static let flip = FilterDescription(
        name: "flip", summary: "Mirrors the image.",
        parameters: [.init("axis", .choice(["horizontal", "vertical"], default: "horizontal"), "horizontal mirrors left-right")])
    static let rotate = FilterDescription(
        name: "rotate", summary: "Rotates clockwise by quarter turns.",
        parameters: [.init("turns", .int(min: 1, max: 3, default: 1), "quarter turns clockwise")])
    static let pixellate = FilterDescription(
        name: "pixellate", summary: "Large square pixels, each the color at its block's centre.",
        parameters: [.init("size", .int(min: 1, max: 256, default: 8), "block size in pixels")])

    init(_ kind: Kind, name: String) {
        self.kind = kind
        self.name = name
    }

    func outputSize(width: Int, height: Int) throws(MarbleError) -> (width: Int, height: Int) {
        switch kind {
        case let .crop(x, y, w, h):
            guard x < width, y < height else {
                throw MarbleError.invalidGeometry(filter: name, reason: "origin \(x),\(y) is outside the \(width)x\(height) image")
            }
            let outW = w == 0 ? width - x : w, outH = h == 0 ? height - y : h
            guard x + outW <= width, y + outH <= height else {
                throw MarbleError.invalidGeometry(filter: name, reason: "\(outW)x\(outH) at \(x),\(y) does not fit in \(width)x\(height)")
            }
            return (outW, outH)
        case let .rotate(turns) where turns % 2 == 1: return (height, width)
        default: return (width, height)
        }
    }

    /// The affine map from output to source coordinates, for a source of `w`×`h`.
    func map(_ w: Int, _ h: Int) -> (a: SIMD4<Int32>, b: SIMD4<Int32>) {
        let w = Int32(w), h = Int32(h)
        switch kind {
        case let .crop(x, y, _, _): return ([1, 0, Int32(x), 0], [0, 1, Int32(y), 0])
        case .flip(horizontal: true): return ([-1, 0, w - 1, 0], [0, 1, 0, 0])
        case .flip(horizontal: false): return ([1, 0, 0, 0], [0, -1, h - 1, 0])
        case .rotate(1): return ([0, 1, 0, 0], [-1, 0, h - 1, 0])
        case .rotate(2): return ([-1, 0, w - 1, 0], [0, -1, h - 1, 0])
        case .rotate: return ([0, -1, w - 1, 0], [1, 0, 0, 0])
        case let .pixellate(size): return ([Int32(size), 0, 0, 0], .zero)
        }
    }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let size = try! outputSize(width: input.width, height: input.height)
        let (a, b) = map(input.width, input.height)
        return RGBAPlane.generate(width: size.width, height: size.height) { x, y in
            if case let .pixellate(s) = kind {
                return input.pixels[min((y / s) * s + s / 2, input.height - 1) * input.width + min((x / s) * s + s / 2, input.width - 1)]
            }
            let sx = Int(a.x) * x + Int(a.y) * y + Int(a.z), sy = Int(b.x) * x + Int(b.y) * y + Int(b.z)
            return input.pixels[sy * input.width + sx]
        }
    }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        let (a, b) = map(io.sourceSize.width, io.sourceSize.height)
        if case .pixellate = kind {
            try io.dispatch(&recorder, .remap, spec: [1], a: a)
        } else {
            try io.dispatch(&recorder, .remap, spec: [0], a: a, b: b)
        }
    }
}
