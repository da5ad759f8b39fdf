/// A CPU RGBA8 image as one packed `UInt32` a pixel (R in the low byte), the layout the shaders
/// use; the CPU reference filters work on it.
struct RGBAPlane: Equatable {
    var width: Int
    var height: Int
    var pixels: [UInt32]

    init(width: Int, height: Int, pixels: [UInt32]) {
        precondition(pixels.count == width * height)
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    init(width: Int, height: Int) {
        self.init(width: width, height: height, pixels: [UInt32](repeating: 0, count: width * height))
    }

    /// The pixel at (x, y) with coordinates clamped to the edges.
    @inline(__always)
    func at(_ x: Int, _ y: Int) -> UInt32 {
        pixels[min(max(y, 0), height - 1) * width + min(max(x, 0), width - 1)]
    }

    /// A same-size plane from a per-pixel function.
    func map(_ body: (Int, Int, UInt32) -> UInt32) -> RGBAPlane {
        var out = RGBAPlane(width: width, height: height)
        for y in 0..<height { for x in 0..<width { out.pixels[y * width + x] = body(x, y, pixels[y * width + x]) } }
        return out
    }

    /// A plane of another size from a per-pixel function of the output coordinates.
    static func generate(width: Int, height: Int, _ body: (Int, Int) -> UInt32) -> RGBAPlane {
        var out = RGBAPlane(width: width, height: height)
        for y in 0..<height { for x in 0..<width { out.pixels[y * width + x] = body(x, y) } }
        return out
    }
}

/// The packing helpers, mirroring `Shaders/include/common.glsl` operation for operation.
enum Px {
    @inline(__always) static func r(_ p: UInt32) -> UInt32 { p & 255 }
    @inline(__always) static func g(_ p: UInt32) -> UInt32 { (p >> 8) & 255 }
    @inline(__always) static func b(_ p: UInt32) -> UInt32 { (p >> 16) & 255 }
    @inline(__always) static func a(_ p: UInt32) -> UInt32 { p >> 24 }
    @inline(__always) static func pack(_ r: UInt32, _ g: UInt32, _ b: UInt32, _ a: UInt32) -> UInt32 {
        r | (g << 8) | (b << 16) | (a << 24)
    }
    /// `uvec4(clamp(c, 0, 1) * 255 + 0.5)` for one channel.
    @inline(__always) static func unit(_ value: Float) -> UInt32 {
        UInt32(min(max(value, 0), 1) * 255 + 0.5)
    }
    /// `uint(clamp(v, 0, 255) + 0.5)` for one channel on the 0...255 scale.
    @inline(__always) static func byte(_ value: Float) -> UInt32 {
        UInt32(min(max(value, 0), 255) + 0.5)
    }
    /// Integer BT.601 luma (`luma8` in the shaders).
    @inline(__always) static func luma(_ p: UInt32) -> Int {
        Int((77 * r(p) + 150 * g(p) + 29 * b(p) + 128) >> 8)
    }
    /// The shaders' `hash32`.
    @inline(__always) static func hash(_ value: UInt32) -> UInt32 {
        var x = value
        x ^= x >> 16; x = x &* 0x7feb_352d; x ^= x >> 15; x = x &* 0x846c_a68b; x ^= x >> 16
        return x
    }
    /// The four channels as floats on the 0...255 scale.
    @inline(__always) static func channels(_ p: UInt32) -> SIMD4<Float> {
        SIMD4(Float(r(p)), Float(g(p)), Float(b(p)), Float(a(p)))
    }
}
