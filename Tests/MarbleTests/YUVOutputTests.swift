import GraniteGPU
import GraniteMedia
import Testing
@testable import Marble

/// RGB → YUV on the device (`yuv_out.comp`, issue 15): the bytes GraniteMedia's CPU conversion
/// writes (its scalar reference formulas), for odd and even sizes and padded strides.
struct YUVOutputTests {
    /// Padded strides of whole words (the shader's ROWS path, one invocation per word of a row)
    /// and not (a byte's place found by division); chroma rows longer than luma rows too.
    static let layouts: [YUVLayout] = [.i420, .planar444, .yuyv(stride: 0),
                                       .planar420(lumaStride: 40, chromaStride: 24), .yuyv(stride: 84),
                                       .planar420(lumaStride: 37, chromaStride: 21), .planar420(lumaStride: 36, chromaStride: 44)]

    /// The largest difference between two byte arrays of one size (-1: the sizes differ).
    static func maxDiff(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard a.count == b.count else { return -1 }
        return zip(a, b).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
    }

    @Test(arguments: [(33, 17), (32, 18), (1, 1), (3, 2), (37, 1)])
    func deviceConversionEqualsTheCPUReference(size: (Int, Int)) throws {
        let context = try Fixtures.gpu()
        let (w, h) = size
        let image = Fixtures.image(w, h)
        // An empty chain: the rgba8 frame goes up, is converted there, only the YUV comes down.
        let chain = try FilterChain([], context: context)
        let frame = try chain.frame(image)
        defer { frame.end() }
        let yuv = try frame.yuv(YUVOutputTests.layouts)
        #expect(frame.width == w && frame.height == h)
        for layout in YUVOutputTests.layouts {
            let gpu = try #require(yuv[layout])
            let cpu = ColorConversion.yuv(image, layout: layout, vectorised: false)
            let diff = YUVOutputTests.maxDiff(gpu, cpu)
            // Integer formulas on both sides: equal, not merely within a level.
            #expect(diff == 0, "\(layout) at \(w)x\(h): max diff \(diff) (byte counts \(gpu.count) / \(cpu.count))")
        }
        #expect(chain.transfers.downloadBytes == YUVOutputTests.layouts.map { $0.byteCount(width: w, height: h) }.reduce(0, +),
                "only the YUV bytes come back")
    }

    @Test func afterAFilterChainWithTheRGBAResult() throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain(FilterSpec.parseChain("blur:sigma=1.5 | brightness:amount=0.1"), context: context)
        let frame = Fixtures.image(65, 31, format: .yuyv)
        for _ in 0..<2 {
            let gpuFrame = try chain.frame(frame)
            defer { gpuFrame.end() }
            let rgba = try gpuFrame.rgba()
            let yuv = try gpuFrame.yuv([.i420, .yuyv(stride: 136)])
            #expect(rgba == (try chain.apply(frame)), "the RGBA result is the chain's")
            #expect(yuv.count == 2)
            for (layout, bytes) in yuv {
                let cpu = ColorConversion.yuv(rgba, layout: layout, vectorised: false)
                #expect(YUVOutputTests.maxDiff(bytes, cpu) == 0, "\(layout)")
            }
        }
    }

    /// The read-back straight into a caller's buffer (a PipeWire buffer shared with a consumer):
    /// the same bytes as the array, every byte of the destination's layout written, one download.
    @Test func readBackIntoACallersBuffer() throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain(FilterSpec.parseChain("grayscale"), context: context)
        let image = Fixtures.image(34, 20)
        let frame = try chain.frame(image)
        defer { frame.end() }
        let rgba = try frame.rgba()
        for layout in [YUVLayout.yuyv(stride: 0), .i420, .planar420(lumaStride: 40, chromaStride: 24)] {
            let count = layout.byteCount(width: 34, height: 20)
            let before = chain.transfers.downloadBytes
            // One byte past the layout's end stays as it was.
            var destination = [UInt8](repeating: 0xA5, count: count + 1)
            try destination.withUnsafeMutableBytes { try frame.yuv(layout, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<count])) }
            #expect(Array(destination[..<count]) == ColorConversion.yuv(rgba, layout: layout, vectorised: false), "\(layout)")
            #expect(destination[count] == 0xA5)
            #expect(chain.transfers.downloadBytes - before == count, "\(layout): only its bytes come back")
        }
        var short = [UInt8](repeating: 0, count: 10)
        #expect(throws: MarbleError.self) {
            try short.withUnsafeMutableBytes { try frame.yuv(.i420, into: $0) }
        }
    }

    @Test func vectorisedAndScalarCPUAgree() {
        let image = Fixtures.image(53, 9)
        for layout in YUVOutputTests.layouts {
            #expect(ColorConversion.yuv(image, layout: layout, vectorised: true) == ColorConversion.yuv(image, layout: layout, vectorised: false), "\(layout)")
        }
    }

    /// Two frames of one chain in flight at once keep their own results (each holds its own plan):
    /// the second frame's run does not overwrite what the first reads back, as RGBA or as YUV.
    @Test func framesInFlightKeepTheirOwnResults() throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain(FilterSpec.parseChain("invert"), context: context)
        let a = Fixtures.image(40, 24), b = try ColorConversion.rgba(Fixtures.image(40, 24, format: .yuyv))
        let first = try chain.frame(a), second = try chain.frame(b)
        try first.run()
        try second.run()
        let firstRGBA = try first.rgba(), secondRGBA = try second.rgba()
        let expectedA = try chain.applyCPU(a), expectedB = try chain.applyCPU(b)
        #expect(firstRGBA == expectedA && secondRGBA == expectedB)
        #expect(try first.yuv([.i420])[.i420] == ColorConversion.yuv(firstRGBA, layout: .i420, vectorised: false))
        first.end()
        second.end()
    }

    @Test func halfTheDownloadFor420() throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain(FilterSpec.parseChain("sobel"), context: context)
        let frame = Fixtures.image(64, 48)
        let before = chain.transfers.downloadBytes
        let gpuFrame = try chain.frame(frame)
        _ = try gpuFrame.yuv([.i420])
        gpuFrame.end()
        #expect(chain.transfers.downloadBytes - before == 64 * 48 * 3 / 2, "4:2:0 reads 1.5 bytes a pixel back, not 4")
    }
}
