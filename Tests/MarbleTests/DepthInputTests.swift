import Foundation
import GraniteGPU
import GraniteMedia
import Testing
@testable import Marble

/// Frames stay on the device (issue 14): a frame goes up once, the depth model's input is made
/// from it on the device, the map goes up once, the result comes down once.
struct DepthInputTests {
    /// A fake model for the test: the map is the model input's red channel, scaled up to the frame
    /// (nearest), so a wrong model input shows in the result.
    static func fakeEstimate(_ small: Image, width: Int, height: Int) throws -> Image {
        let values = (0..<(width * height)).map { i -> Float in
            let x = (i % width) * small.width / width, y = (i / width) * small.height / height
            return Float(small.bytes[(y * small.width + x) * 4]) / 255
        }
        return try Image(width: width, height: height, floats: values)
    }

    /// A frame whose map is made from it (granite-cam's non-live depth runs): the model's input
    /// from the device, `estimate`'s map back up, the result.
    static func withEstimate(_ chain: FilterChain, _ image: Image, _ size: (width: Int, height: Int),
                             _ estimate: (Image) -> Image?) throws -> Image {
        let frame = try chain.frame(image, depth: .estimated, modelInput: size)
        defer { frame.end() }
        let small = try frame.modelInput()
        try frame.run(depth: estimate(small))
        return try frame.rgba()
    }

    /// A live frame: the newest map resident (named by `version`), the model's input when asked.
    static func live(_ chain: FilterChain, _ image: Image, depth: Image?, version: UInt64,
                     depthInput: (width: Int, height: Int)?) throws -> (image: Image, modelInput: Image?) {
        let frame = try chain.frame(image, depth: depth.map { .resident($0, version: version) } ?? .none, modelInput: depthInput)
        defer { frame.end() }
        let small = depthInput == nil ? nil : try frame.modelInput()
        return (try frame.rgba(), small)
    }

    @Test(arguments: [PixelFormat.rgba8, .yuyv, .nv12, .rgb24])
    func modelInputIsTheSharedResamplersAndTheChainUsesTheMap(format: PixelFormat) throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain(FilterSpec.parseChain("blur:sigma=1 | depthmask:near=0,far=0.5"), context: context)
        let image = Fixtures.image(96, 64, format: format)
        var seen: Image?
        let out = try DepthInputTests.withEstimate(chain, image, (width: 28, height: 21)) { small in
            seen = small
            return try? DepthInputTests.fakeEstimate(small, width: image.width, height: image.height)
        }
        let small = try #require(seen)
        // What GraniteML's own resize makes of the converted frame: the same bytes.
        let rgba = try ColorConversion.rgba(image, range: chain.range)
        let expected = try Resampler.resize(rgba, width: 28, height: 21, filter: .bilinear)
        #expect(small.format == .rgba8 && small.width == 28 && small.height == 21)
        #expect(small.bytes == expected.bytes, "the device's model input equals the CPU resampler's")
        let map = try DepthInputTests.fakeEstimate(expected, width: image.width, height: image.height)
        let reference = try chain.applyCPU(image, depth: map)
        #expect(out == reference, "the chain ran with the map made from the model input")
        #expect(chain.transfers == {
            var t = TransferCounts()
            t.uploads = 2
            t.downloads = 2
            t.uploadBytes = image.bytes.count + image.pixelCount * 4
            t.downloadBytes = 28 * 21 * 4 + image.pixelCount * 4
            return t
        }(), "frame up, model input down, map up, result down")
    }

    @Test func transfersPerFrame() throws {
        let context = try Fixtures.gpu()
        let image = Fixtures.image(64, 48, format: .yuyv)
        // No depth filter: the model still gets its input, no map goes up.
        let plain = try FilterChain(FilterSpec.parseChain("blur:sigma=2 | sobel"), context: context)
        for _ in 0..<3 { _ = try plain.apply(image) }
        #expect((plain.transfers.uploads, plain.transfers.downloads) == (3, 3), "one upload and one download a frame")
        var calls = 0
        let out = try DepthInputTests.withEstimate(plain, image, (width: 16, height: 12)) { small in
            calls += 1
            return try? DepthInputTests.fakeEstimate(small, width: image.width, height: image.height)
        }
        let direct = try plain.apply(image)
        #expect(calls == 1 && out == direct)
        #expect((plain.transfers.uploads, plain.transfers.downloads) == (3 + 1 + 1, 3 + 2 + 1), "no map for a chain without depth filters")
        // A depth filter with no map from the model: the luma fallback, the frame sent again.
        let masked = try FilterChain(FilterSpec.parseChain("depthmask:near=0,far=0.5"), context: context)
        let fallback = try DepthInputTests.withEstimate(masked, image, (width: 16, height: 12)) { _ in nil }
        let luma = try masked.applyCPU(image)
        #expect(fallback == luma)
        // A map of the wrong size is a typed error.
        #expect(throws: MarbleError.self) {
            _ = try DepthInputTests.withEstimate(masked, image, (width: 16, height: 12)) { _ in Fixtures.depth(8, 8) }
        }
        // Frames in flight count the same: one up and one down a frame.
        let before = plain.transfers
        var previous: ChainFrame?
        for _ in 0..<4 {
            let frame = try plain.frame(image)
            try frame.run()
            _ = try previous?.rgba()
            previous?.end()
            previous = frame
        }
        _ = try previous?.rgba()
        previous?.end()
        #expect(plain.transfers.uploads - before.uploads == 4 && plain.transfers.downloads - before.downloads == 4)
    }

    /// Live frames (issue 14 item 2): one upload a frame; the model's input made on the device
    /// from it and read back only when asked; the newest map kept on the device and written again
    /// only when its version changes (also at another size), each result equal to the CPU reference.
    @Test func liveFramesSendEachMapUpOnce() throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain(FilterSpec.parseChain("blur:sigma=1 | depthmask:near=0,far=0.5"), context: context)
        let image = Fixtures.image(96, 64, format: .yuyv)
        let expectedSmall = try Resampler.resize(try ColorConversion.rgba(image, range: chain.range), width: 28, height: 21, filter: .bilinear)
        // No map yet: the luma fallback; the model's input asked for.
        let first = try DepthInputTests.live(chain, image, depth: nil, version: 0, depthInput: (width: 28, height: 21))
        #expect(first.modelInput?.bytes == expectedSmall.bytes, "the device's model input equals the CPU resampler's")
        #expect(first.image == (try chain.applyCPU(image)))
        let map = Fixtures.depth(96, 64)
        let mapped = try chain.applyCPU(image, depth: map)
        for i in 0..<3 {
            let out = try DepthInputTests.live(chain, image, depth: map, version: 1, depthInput: i == 1 ? (width: 28, height: 21) : nil)
            #expect(out.image == mapped, "frame \(i) read map 1")
            #expect((out.modelInput != nil) == (i == 1))
        }
        // A new map at another size: the resident buffer is replaced, the plans bound to it go.
        let small = Fixtures.depth(48, 32)
        let second = try DepthInputTests.live(chain, image, depth: small, version: 2, depthInput: nil)
        #expect(second.image == (try chain.applyCPU(image, depth: small)))
        let again = try DepthInputTests.live(chain, image, depth: small, version: 2, depthInput: nil)
        #expect(again.image == second.image)
        let t = chain.transfers
        #expect(t.uploads == 6 + 2, "six frames, two maps")
        #expect(t.downloads == 6 + 2, "six results, two model inputs")
        #expect(t.uploadBytes == 6 * image.bytes.count + (96 * 64 + 48 * 32) * 4)
        // A chain without depth filters never sends a map up.
        let plain = try FilterChain(FilterSpec.parseChain("blur:sigma=1"), context: context)
        for version in 0..<3 {
            _ = try DepthInputTests.live(plain, image, depth: map, version: UInt64(version), depthInput: nil)
        }
        #expect(plain.transfers.uploads == 3)
        // Nor a frame's own map, when the model's input is asked for too.
        let own = try plain.frame(image, depth: .map(map), modelInput: (width: 28, height: 21))
        let ownSmall = try own.modelInput()
        let ownResult = try own.rgba(), reference = try plain.applyCPU(image)
        #expect(ownSmall.width == 28 && ownResult == reference)
        own.end()
        #expect(plain.transfers.uploads == 4, "the frame, no map")
        // An empty model input size is a typed error.
        #expect(throws: MarbleError.self) { _ = try DepthInputTests.live(plain, image, depth: nil, version: 0, depthInput: (width: 0, height: 4)) }
    }
}
