import Foundation
import GraniteCodecs
import GraniteTesting
import Testing
@testable import GraniteMedia

/// The one resampler: exact properties, and agreement with an independent implementation
/// (Pillow 12; ImageMagick's `-scale`, exact area averaging, for box at a non-integer factor, which
/// Pillow's BOX does not do: it averages the pixels whose centres fall inside. References made by
/// scripts/tiers/pre-media.sh from a real photograph).
@Suite struct ResamplerTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let fixtures = root.appendingPathComponent(".build-media-fixtures/resample")

    /// Largest and mean absolute channel difference.
    static func difference(_ a: Image, _ b: Image) -> (max: Int, mean: Double) {
        var worst = 0, total = 0
        for (x, y) in zip(a.bytes, b.bytes) { let d = abs(Int(x) - Int(y)); worst = max(worst, d); total += d }
        return (worst, Double(total) / Double(a.bytes.count))
    }

    static func noise(_ w: Int, _ h: Int, channels: Int, seed: UInt64) throws -> Image {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        let bytes = (0..<(w * h * channels)).map { _ -> UInt8 in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 32)
        }
        let format: PixelFormat = channels == 4 ? .rgba8 : channels == 3 ? .rgb24 : .gray8
        return try Image(width: w, height: h, format: format, bytes: bytes)
    }

    @Test(arguments: [("box", 300, 225), ("box", 517, 388), ("lanczos3", 517, 388), ("lanczos3", 150, 113),
                      ("bilinear", 224, 224), ("bilinear", 640, 480), ("lanczos3", 1800, 1350)])
    func matchesPillow(_ name: String, _ width: Int, _ height: Int) throws {
        let source = Self.fixtures.appendingPathComponent("source.png").path
        try Prerequisite.require(FileManager.default.fileExists(atPath: source),
                                 "no Pillow references in \(Self.fixtures.path) (run scripts/tiers/pre-media.sh)")
        let filter = try #require(ResizeFilter(name: name))
        for channels in [3, 4] {
            var input = try Codecs.decodeFile(source)  // rgba8
            if channels == 3 { input = try Image(width: input.width, height: input.height, format: .rgb24,
                                                 bytes: (0..<input.pixelCount).flatMap { i in input.bytes[(i * 4)..<(i * 4 + 3)] }) }
            let ours = try Resampler.resize(input, width: width, height: height, filter: filter)
            let exactArea = name == "box" && (900 % height != 0 || 1200 % width != 0)
            var reference = try Codecs.decodeFile(Self.fixtures.appendingPathComponent("\(exactArea ? "area" : name)-\(width)x\(height).png").path)
            if channels == 3 { reference = try Image(width: width, height: height, format: .rgb24,
                                                     bytes: (0..<reference.pixelCount).flatMap { i in reference.bytes[(i * 4)..<(i * 4 + 3)] }) }
            let d = Self.difference(ours, reference)
            print("resampler \(name) 1200x900 -> \(width)x\(height) (\(channels) channels) vs \(exactArea ? "ImageMagick -scale" : "Pillow"): max \(d.max), mean \(d.mean)")
            #expect(d.max <= 2, "\(name) \(width)x\(height): max difference \(d.max) levels against Pillow")
            #expect(d.mean < 0.6, "\(name) \(width)x\(height): mean difference \(d.mean) levels against Pillow")
        }
    }

    /// RGBA shrinks (four taps or more) take the 16-lane horizontal pass: the same integers as the
    /// pixel-at-a-time pass, on every output (windows at the row's end take the plain loop).
    @Test(arguments: [(1280, 256, ResizeFilter.bilinear), (1280, 256, .lanczos3), (517, 150, .lanczos3), (100, 7, .box),
                      (37, 9, .bilinear), (64, 16, .box), (41, 10, .lanczos3)])
    func quadTapsMatchThePlainPass(_ source: Int, _ target: Int, _ filter: ResizeFilter) throws {
        let axis = ResampleAxis(source: source, target: target, filter: filter)
        let quads = try #require(Resampler.QuadTaps(axis, channels: 4), "\(source) -> \(target) has \(axis.taps) taps")
        let row = try Self.noise(source, 1, channels: 4, seed: UInt64(source * 31 + target)).bytes
        var fast = [Int32](repeating: -1, count: target * 4), plain = fast
        row.withUnsafeBufferPointer { src in
            axis.starts.withUnsafeBufferPointer { starts in
                axis.weights.withUnsafeBufferPointer { weights in
                    quads.horizontal(src.baseAddress!, &fast, sourceWidth: source, starts: starts.baseAddress!, weights: weights.baseAddress!, round: 64)
                    Resampler.horizontal(src.baseAddress!, &plain, channels: 4, width: target, taps: axis.taps,
                                         starts: starts.baseAddress!, weights: weights.baseAddress!, round: 64)
                }
            }
        }
        #expect(fast == plain)
        #expect(Resampler.QuadTaps(ResampleAxis(source: 10, target: 20, filter: .bilinear), channels: 4) == nil, "an enlargement has two taps")
        #expect(Resampler.QuadTaps(axis, channels: 3) == nil)
    }

    @Test(arguments: ResizeFilter.allCases)
    func flatStaysFlatAndSameSizeIsIdentity(_ filter: ResizeFilter) throws {
        let flat = try Image(width: 37, height: 23, format: .rgb24, bytes: [UInt8](repeating: 0, count: 37 * 23 * 3).enumerated().map {
            UInt8([201, 7, 99][$0.offset % 3]) })
        for (w, h) in [(5, 3), (36, 22), (38, 24), (111, 70), (1, 1)] {
            let out = try Resampler.resize(flat, width: w, height: h, filter: filter)
            #expect(out.bytes == (0..<(w * h)).flatMap { _ in [UInt8(201), 7, 99] }, "\(filter) to \(w)x\(h)")
        }
        let noise = try Self.noise(29, 17, channels: 4, seed: 1)
        #expect(try Resampler.resize(noise, width: 29, height: 17, filter: filter) == noise)
    }

    @Test func boxUpscaleByIntegersReplicatesPixels() throws {
        let noise = try Self.noise(13, 9, channels: 1, seed: 2)
        let out = try Resampler.resize(noise, width: 39, height: 18, filter: .box)
        for y in 0..<18 { for x in 0..<39 { #expect(out.bytes[y * 39 + x] == noise.bytes[(y / 2) * 13 + x / 3]) } }
    }

    @Test func boxHalvingAveragesPairs() throws {
        let noise = try Self.noise(8, 6, channels: 3, seed: 3)
        let out = try Resampler.resize(noise, width: 4, height: 3, filter: .box)
        for y in 0..<3 { for x in 0..<4 { for c in 0..<3 {
            let sum = [(0, 0), (1, 0), (0, 1), (1, 1)].reduce(0) { $0 + Int(noise.bytes[((2 * y + $1.1) * 8 + 2 * x + $1.0) * 3 + c]) }
            #expect(abs(Int(out.bytes[(y * 4 + x) * 3 + c]) * 4 - sum) <= 2)
        } } }
    }

    @Test(arguments: ResizeFilter.allCases)
    func floatsAgreeWithBytes(_ filter: ResizeFilter) throws {
        let noise = try Self.noise(61, 47, channels: 1, seed: 4)
        let bytes = try Resampler.resize(noise, width: 20, height: 90, filter: filter)
        let floats = Resampler.resize(floats: noise.bytes.map(Float.init), width: 61, height: 47, channels: 1,
                                      toWidth: 20, toHeight: 90, filter: filter)
        for (b, f) in zip(bytes.bytes, floats) { #expect(abs(Float(b) - min(max(f, 0), 255)) <= 1) }
    }

    @Test func badSizesAndFormatsAreTypedErrors() throws {
        let noise = try Self.noise(4, 4, channels: 4, seed: 5)
        #expect(throws: MediaError.self) { try Resampler.resize(noise, width: 0, height: 3, filter: .box) }
        let floats = try Image(width: 2, height: 2, floats: [0, 1, 2, 3])
        #expect(throws: MediaError.self) { try Resampler.resize(floats, width: 1, height: 1, filter: .lanczos3) }
        #expect(ResizeFilter(name: "nearest") == nil)
        #expect(ResizeFilter(name: "Lanczos") == .lanczos3 && ResizeFilter(name: "area") == .box)
    }
}
