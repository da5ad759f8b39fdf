import Foundation
@testable import GraniteCodecs
import GraniteMedia
import XCTest

/// The row-streaming PNG writer: every layout, filter and band count decodes to the same pixels
/// in libpng (our decoder) and ImageMagick, and its joined zlib stream inflates with a valid Adler-32.
final class PNGRowEncoderTests: XCTestCase {
    /// Row bytes of a test pattern: smooth ramps plus a seeded noise term, so every filter has work.
    static func pattern(width: Int, height: Int, bytesPerPixel: Int, modulo: Int = 256) -> [UInt8] {
        var random = TestSupport.Random(state: 7)
        var bytes = [UInt8](repeating: 0, count: width * height * bytesPerPixel)
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<bytesPerPixel {
                    let v = (x * 3 + y * 5 + c * 40 + random.below(7)) % modulo
                    bytes[(y * width + x) * bytesPerPixel + c] = UInt8(v)
                }
            }
        }
        return bytes
    }

    static func encode(_ bytes: [UInt8], width: Int, height: Int, layout: PNGRowEncoder.Layout,
                       filter: PNGRowEncoder.RowFilter, bands: Int, level: Int32 = 1,
                       strategy: PNGRowEncoder.Strategy = .default) throws -> [UInt8] {
        var encoder = try PNGRowEncoder(width: width, height: height, layout: layout)
        encoder.filter = filter
        encoder.strategy = strategy
        encoder.bands = bands
        encoder.level = level
        let n = encoder.rowBytes
        return try encoder.encode { y, out in
            bytes.withUnsafeBufferPointer { out.update(from: $0.baseAddress! + y * n, count: n) }
        }
    }

    /// The concatenated IDAT data of a PNG.
    static func idat(_ png: [UInt8]) -> [UInt8] {
        var i = 8, data = [UInt8]()
        while i + 12 <= png.count {
            let length = Int(png[i]) << 24 | Int(png[i + 1]) << 16 | Int(png[i + 2]) << 8 | Int(png[i + 3])
            if png[i + 4..<i + 8].elementsEqual("IDAT".utf8) { data += png[i + 8..<i + 8 + length] }
            i += 12 + length
        }
        return data
    }

    func testEveryLayoutFilterAndBandCountRoundTrips() throws {
        let width = 37, height = 70  // 70 rows: 1, 2 and 3 bands of uneven sizes
        for filter in [PNGRowEncoder.RowFilter.none, .sub, .up] {
            for bands in [1, 2, 3] {
                let what = "filter \(filter), \(bands) bands"
                let rgba = Self.pattern(width: width, height: height, bytesPerPixel: 4)
                let png = try Self.encode(rgba, width: width, height: height, layout: .rgba8, filter: filter, bands: bands)
                XCTAssertEqual(try Codecs.decode(png).bytes, rgba, "rgba8, \(what)")
                // zlib itself checks the joined stream and its combined Adler-32.
                let raw = try Zlib.inflate(Self.idat(png), limit: 1 << 24, what: "IDAT")
                XCTAssertEqual(raw.count, height * (width * 4 + 1), what)

                let rgb = Self.pattern(width: width, height: height, bytesPerPixel: 3)
                let back = try Codecs.decode(try Self.encode(rgb, width: width, height: height, layout: .rgb8, filter: filter, bands: bands))
                XCTAssertEqual(back.bytes.enumerated().filter { $0.offset % 4 != 3 }.map(\.element), rgb, "rgb8, \(what)")

                let gray = Self.pattern(width: width, height: height, bytesPerPixel: 1)
                let g = try Codecs.decode(try Self.encode(gray, width: width, height: height, layout: .gray8, filter: filter, bands: bands),
                                          options: DecodeOptions(keepGray: true))
                XCTAssertEqual(g.bytes, gray, "gray8, \(what)")

                let big = Self.pattern(width: width, height: height, bytesPerPixel: 2)  // big-endian samples
                let g16 = try Codecs.decode(try Self.encode(big, width: width, height: height, layout: .gray16, filter: filter, bands: bands),
                                            options: DecodeOptions(keepGray: true))
                let native = g16.bytes.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
                let expected = stride(from: 0, to: big.count, by: 2).map { UInt16(big[$0]) << 8 | UInt16(big[$0 + 1]) }
                XCTAssertEqual(native, expected, "gray16, \(what)")
            }
        }
    }

    func testEveryStrategyRoundTrips() throws {
        let width = 53, height = 70
        let gray = Self.pattern(width: width, height: height, bytesPerPixel: 1, modulo: 5)  // short runs
        for strategy in [PNGRowEncoder.Strategy.default, .filtered, .huffmanOnly, .rle] {
            for filter in [PNGRowEncoder.RowFilter.none, .up] {
                for bands in [1, 3] {
                    let what = "strategy \(strategy), filter \(filter), \(bands) bands"
                    let png = try Self.encode(gray, width: width, height: height, layout: .gray8, filter: filter, bands: bands, strategy: strategy)
                    XCTAssertEqual(try Codecs.decode(png, options: DecodeOptions(keepGray: true)).bytes, gray, what)
                    let raw = try Zlib.inflate(Self.idat(png), limit: 1 << 24, what: "IDAT")
                    XCTAssertEqual(raw.count, height * (width + 1), what)
                }
            }
        }
    }

    func testIndexedAndGray16DecodeInImageMagick() throws {
        let width = 41, height = 90
        let dir = TestSupport.temporaryDirectory("pngrows")
        var palette = [UInt8]()
        for i in 0..<200 { palette += [UInt8(i), UInt8(255 - i), UInt8(i / 2)] }
        let indices = Self.pattern(width: width, height: height, bytesPerPixel: 1, modulo: 200)
        try AtomicFile.write(try Self.encode(indices, width: width, height: height, layout: .indexed(palette: palette),
                                             filter: .up, bands: 2, strategy: .rle), to: dir + "/p.png")
        let theirs = try TestSupport.magickRGBA(dir + "/p.png")
        var expected = [UInt8]()
        for i in indices {
            let p = Int(i) * 3
            expected += [palette[p], palette[p + 1], palette[p + 2], 255]
        }
        XCTAssertEqual(theirs, expected)
        XCTAssertEqual(try Codecs.decodeFile(dir + "/p.png").bytes, expected)

        let big = Self.pattern(width: width, height: height, bytesPerPixel: 2)
        try AtomicFile.write(try Self.encode(big, width: width, height: height, layout: .gray16, filter: .sub, bands: 3, level: 6),
                             to: dir + "/d.png")
        let raw = try TestSupport.run(try TestSupport.imageMagick(), [dir + "/d.png", "-depth", "16", "-endian", "MSB", "gray:-"]).stdout
        XCTAssertEqual(raw, big)
    }

    func testImagesEncodedTogetherMatchTheirSeparateEncodings() throws {
        let width = 45, height = 70
        var palette = [UInt8]()
        for i in 0..<256 { palette += [UInt8(i), UInt8(255 - i), UInt8(i / 3)] }
        let big = Self.pattern(width: width, height: height, bytesPerPixel: 2)
        let indices = Self.pattern(width: width, height: height, bytesPerPixel: 1, modulo: 9)
        for bands in [1, 2, 3] {
            var depth = try PNGRowEncoder(width: width, height: height, layout: .gray16)
            depth.level = 2
            depth.bands = bands
            var preview = try PNGRowEncoder(width: width, height: height, layout: .indexed(palette: palette))
            preview.filter = .up
            preview.strategy = .rle
            let asked = Counter()
            let pngs = try PNGRowEncoder.encode([depth, preview], paths: ["d.png", "p.png"]) { y, outs in
                asked.add()
                big.withUnsafeBufferPointer { outs[0].update(from: $0.baseAddress! + y * 2 * width, count: 2 * width) }
                indices.withUnsafeBufferPointer { outs[1].update(from: $0.baseAddress! + y * width, count: width) }
            }
            XCTAssertEqual(pngs.count, 2)
            // Each row once, plus the row above each later band's first (the preview's Up filter).
            XCTAssertEqual(asked.value, height + bands - 1, "\(bands) bands")
            let g16 = try Codecs.decode(pngs[0], options: DecodeOptions(keepGray: true))
            let native = g16.bytes.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
            XCTAssertEqual(native, stride(from: 0, to: big.count, by: 2).map { UInt16(big[$0]) << 8 | UInt16(big[$0 + 1]) })
            XCTAssertEqual(try Zlib.inflate(Self.idat(pngs[1]), limit: 1 << 24, what: "IDAT").count, height * (width + 1))
            var expected = [UInt8]()
            for i in indices { expected += [palette[Int(i) * 3], palette[Int(i) * 3 + 1], palette[Int(i) * 3 + 2], 255] }
            XCTAssertEqual(try Codecs.decode(pngs[1]).bytes, expected, "\(bands) bands")
            // The same bytes as each image encoded alone.
            XCTAssertEqual(pngs[0], try Self.encode(big, width: width, height: height, layout: .gray16, filter: .sub, bands: bands, level: 2))
            XCTAssertEqual(pngs[1], try Self.encode(indices, width: width, height: height, layout: .indexed(palette: palette),
                                                    filter: .up, bands: bands, strategy: .rle))
        }
        let short = try PNGRowEncoder(width: width, height: height - 1, layout: .gray8)
        XCTAssertThrowsError(try PNGRowEncoder.encode([try PNGRowEncoder(width: width, height: height, layout: .gray8), short],
                                                      paths: ["a.png", "b.png"]) { _, _ in }) { error in
            XCTAssertEqual((error as? CodecError)?.path, "b.png")
        }
    }

    /// Counts calls from several threads.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() { lock.lock(); count += 1; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return count }
    }

    func testBadParametersAreTypedErrors() throws {
        XCTAssertThrowsError(try PNGRowEncoder(width: 0, height: 4, layout: .gray8)) { error in
            XCTAssertEqual((error as? CodecError)?.phase, "encode")
        }
        XCTAssertThrowsError(try PNGRowEncoder(width: 4, height: 4, layout: .indexed(palette: [1, 2]), path: "x.png")) { error in
            XCTAssertEqual((error as? CodecError)?.path, "x.png")
        }
        var encoder = try PNGRowEncoder(width: 4, height: 4, layout: .gray8)
        encoder.level = 12
        XCTAssertThrowsError(try encoder.encode { _, _ in }) { error in
            XCTAssertEqual((error as? CodecError)?.phase, "encode")
        }
    }
}
