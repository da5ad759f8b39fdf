import GraniteGPU
import GraniteMedia
import Testing
@testable import Marble

/// Hand-computed values, so the GPU and the CPU reference cannot agree on a wrong answer.
struct KnownValueTests {
    static func run(_ chain: String, _ image: Image) throws -> [Image] {
        let filters = try FilterChain(FilterSpec.parseChain(chain))
        var results = [try filters.applyCPU(image)]
        _ = try Fixtures.gpu()
        results.append(try filters.apply(image))
        return results
    }

    static func rgba(_ pixels: [[UInt8]], width: Int) throws -> Image {
        try Image(width: width, height: pixels.count / width, format: .rgba8, bytes: pixels.flatMap { $0 })
    }

    @Test func invertAndGrayscale() throws {
        let image = try Self.rgba([[255, 0, 0, 255], [10, 20, 30, 0]], width: 2)
        for out in try Self.run("invert", image) { #expect(out.bytes == [0, 255, 255, 255, 245, 235, 225, 0]) }
        // (77*255 + 128) >> 8 = 77; (77*10 + 150*20 + 29*30 + 128) >> 8 = 18
        for out in try Self.run("grayscale", image) { #expect(out.bytes == [77, 77, 77, 255, 18, 18, 18, 0]) }
    }

    @Test func yuyvLimitedAndFullRange() throws {
        // Two pixels: Y0=16 (black in limited range), Y1=235 (white), neutral chroma.
        let image = try Image(width: 2, height: 1, format: .yuyv, bytes: [16, 128, 235, 128])
        let limited = try FilterChain([], range: .limited)
        let full = try FilterChain([], range: .full)
        #expect(try limited.applyCPU(image).bytes == [0, 0, 0, 255, 255, 255, 255, 255])
        #expect(try full.applyCPU(image).bytes == [16, 16, 16, 255, 235, 235, 235, 255])
        _ = try Fixtures.gpu()
        #expect(try limited.apply(image).bytes == [0, 0, 0, 255, 255, 255, 255, 255])
        #expect(try full.apply(image).bytes == [16, 16, 16, 255, 235, 235, 235, 255])
    }

    @Test func nv12PureRed() throws {
        // BT.601 limited red: Y=81, U=90, V=240 → about (255, 0, 0).
        let image = try Image(width: 2, height: 2, format: .nv12, bytes: [81, 81, 81, 81, 90, 240])
        _ = try Fixtures.gpu()
        for out in [try FilterChain([]).applyCPU(image)] + [try FilterChain([]).apply(image)] {
            #expect(out.bytes[0] >= 253 && out.bytes[1] <= 2 && out.bytes[2] <= 2 && out.bytes[3] == 255, "\(out.bytes)")
        }
    }

    @Test func rotateAndCropMovePixels() throws {
        // 3x2: pixel value = index.
        let pixels = (0..<6).map { [UInt8($0), 0, 0, 255] }
        let image = try Self.rgba(pixels, width: 3)
        for out in try Self.run("rotate:turns=1", image) {
            #expect(out.width == 2 && out.height == 3)
            #expect(stride(from: 0, to: 24, by: 4).map { out.bytes[$0] } == [3, 0, 4, 1, 5, 2])
        }
        for out in try Self.run("crop:x=1,y=1,width=2,height=1", image) {
            #expect(out.width == 2 && out.height == 1 && out.bytes[0] == 4 && out.bytes[4] == 5)
        }
    }

    @Test func blurKeepsFlatImagesAndSpreadsEdges() throws {
        let flat = try Image(width: 9, height: 5, format: .rgba8, bytes: [UInt8](repeating: 100, count: 180))
        for out in try Self.run("blur:sigma=3", flat) { #expect(out.bytes.allSatisfy { $0 == 100 }) }
        let edge = try Self.rgba((0..<18).map { $0 % 6 < 3 ? [0, 0, 0, 255] : [255, 255, 255, 255] }, width: 6)
        for out in try Self.run("blur:sigma=1", edge) {
            #expect(out.bytes[2 * 4] > 0 && out.bytes[2 * 4] < 128 && out.bytes[3 * 4] > 128 && out.bytes[3 * 4] < 255)
        }
    }

    @Test func crop_outside_the_image_is_a_typed_error() throws {
        let image = try Image(width: 4, height: 4, format: .rgba8)
        let chain = try FilterChain([FilterSpec.parse("crop:x=5")])
        #expect(throws: MarbleError.invalidGeometry(filter: "crop", reason: "origin 5,0 is outside the 4x4 image")) {
            try chain.applyCPU(image)
        }
        _ = try Fixtures.gpu()
        #expect(throws: MarbleError.self) { try chain.apply(image) }
    }

    @Test func unsupportedInputFormatIsATypedError() throws {
        let image = try Image(width: 4, height: 4, format: .gray16)
        let chain = try FilterChain([FilterSpec.parse("invert")])
        #expect(throws: MarbleError.unsupportedInput(.gray16)) { try chain.apply(image) }
        #expect(throws: MarbleError.unsupportedInput(.gray16)) { try chain.applyCPU(image) }
    }
}
