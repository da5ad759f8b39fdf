import Foundation
@testable import GraniteCodecs
import GraniteMedia
import XCTest

final class PNGTests: XCTestCase {
    func testLosslessRoundTripForEveryWritableFormat() throws {
        let rgba = TestSupport.gradient(width: 31, height: 17, alpha: true)
        let rgb = try Image(width: 31, height: 17, format: .rgb24,
                            bytes: rgba.bytes.enumerated().filter { $0.offset % 4 != 3 }.map(\.element))
        let gray = try Image(width: 31, height: 17, format: .gray8, bytes: stride(from: 0, to: rgba.bytes.count, by: 4).map { rgba.bytes[$0] })
        var depth = [UInt8]()
        for i in 0..<(31 * 17) {
            let v = UInt16(truncatingIfNeeded: i * 2477 + 13)
            withUnsafeBytes(of: v) { depth += $0 }  // native endianness, as gray16 stores it
        }
        let gray16 = try Image(width: 31, height: 17, format: .gray16, bytes: depth)

        let backRGBA = try Codecs.decode(try Codecs.encodePNG(rgba))
        XCTAssertEqual(backRGBA, rgba)
        let backRGB = try Codecs.decode(try Codecs.encodePNG(rgb))
        XCTAssertEqual(backRGB.format, .rgba8)
        for i in 0..<(31 * 17) {
            XCTAssertEqual(Array(backRGB.bytes[i * 4..<i * 4 + 3]), Array(rgb.bytes[i * 3..<i * 3 + 3]))
        }
        XCTAssertEqual(try Codecs.decode(try Codecs.encodePNG(gray), options: DecodeOptions(keepGray: true)), gray)
        XCTAssertEqual(try Codecs.decode(try Codecs.encodePNG(gray16), options: DecodeOptions(keepGray: true)), gray16)
        XCTAssertThrowsError(try Codecs.encodePNG(try Image(width: 2, height: 2, format: .yuyv))) { error in
            XCTAssertEqual((error as? CodecError)?.phase, "encode")
        }
    }

    /// 16-bit gray (depth maps) as ImageMagick reads it: the same big-endian sample values.
    func testGray16MatchesImageMagick() throws {
        let magick = try TestSupport.imageMagick()
        var samples = [UInt16]()
        for i in 0..<(20 * 10) { samples.append(UInt16(truncatingIfNeeded: i * 331 + 7)) }
        let image = try Image(width: 20, height: 10, format: .gray16, bytes: samples.withUnsafeBytes { Array($0) })
        let dir = TestSupport.temporaryDirectory("gray16")
        try AtomicFile.write(try Codecs.encodePNG(image), to: dir + "/d.png")
        let raw = try TestSupport.run(magick, [dir + "/d.png", "-depth", "16", "-endian", "MSB", "gray:-"]).stdout
        XCTAssertEqual(raw.count, samples.count * 2)
        let theirs = stride(from: 0, to: raw.count, by: 2).map { UInt16(raw[$0]) << 8 | UInt16(raw[$0 + 1]) }
        XCTAssertEqual(theirs, samples)
    }

    /// Files ImageMagick writes in every PNG color type and depth decode to the same RGBA as its own decoder.
    func testDecodesEveryColorTypeLikeImageMagick() throws {
        let magick = try TestSupport.imageMagick()
        let dir = TestSupport.temporaryDirectory("pngtypes")
        let source = dir + "/source.png"
        try AtomicFile.write(try Codecs.encodePNG(TestSupport.gradient(width: 33, height: 21, alpha: true)), to: source)
        let variants: [(String, [String])] = [
            ("gray8", ["-alpha", "off", "-colorspace", "Gray", "-depth", "8", "-define", "png:color-type=0", "PNG:"]),
            ("gray16", ["-alpha", "off", "-colorspace", "Gray", "-depth", "16", "-define", "png:color-type=0", "PNG:"]),
            ("grayalpha", ["-colorspace", "Gray", "-define", "png:color-type=4", "-depth", "8", "PNG:"]),
            ("rgb8", ["-alpha", "off", "PNG24:"]),
            ("rgba8", ["PNG32:"]),
            ("rgb16", ["-alpha", "off", "PNG48:"]),
            ("rgba16", ["PNG64:"]),
            ("palette", ["-alpha", "off", "-colors", "16", "PNG8:"]),
        ]
        for (name, args) in variants {
            var arguments = [source] + args.dropLast()
            arguments.append(args.last! + dir + "/\(name).png")
            XCTAssertEqual(try TestSupport.run(magick, arguments).status, 0, name)
            let path = dir + "/\(name).png"
            let ours = try Codecs.decodeFile(path)
            XCTAssertEqual(ours.format, .rgba8, name)
            let theirs = try TestSupport.magickRGBA(path)
            XCTAssertEqual(theirs.count, ours.bytes.count, name)
            XCTAssertLessThanOrEqual(TestSupport.meanAbsoluteError(theirs, ours.bytes), 1.0, name)
        }
        let kept16 = try Codecs.decodeFile(dir + "/gray16.png", options: DecodeOptions(keepGray: true))
        XCTAssertEqual(kept16.format, .gray16)
        let kept8 = try Codecs.decodeFile(dir + "/gray8.png", options: DecodeOptions(keepGray: true))
        XCTAssertEqual(kept8.format, .gray8)
    }

    func testEncoderOutputDecodesInImageMagick() throws {
        let image = TestSupport.gradient(width: 25, height: 19, alpha: true)
        let dir = TestSupport.temporaryDirectory("png-im")
        try AtomicFile.write(try Codecs.encodePNG(image), to: dir + "/x.png")
        XCTAssertEqual(try TestSupport.magickRGBA(dir + "/x.png"), image.bytes)
    }

    /// A 184-byte PNG whose text chunk declares 1.3 GB (found by the fuzzer: libpng allocated the
    /// declared length first): the chunk cannot be whole, so the file reads as ending there —
    /// a typed error or the picture, never the allocation.
    func testAChunkLongerThanTheFileIsNotAllocated() throws {
        let bytes = try XCTUnwrap(Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAAAAADRSSBWY0hSTXRFWHRSYXcgcHJvZmlsZSB0eXBlIGV4aWYACmV4aWYKICAgICAgzs31yzU3ODY5NjYwMDAwNTk0OTJhMDD/xDA4MDAwMDAwMDEwMDEyMDEwMzAwMDEwMDAwMDAwODAwMDAwMDAwMDAwMDAwCj32wwMAAAALSURBVHicYxBQAAAAQwAx6t2zzQAAAABJRU5ErkJggg==")).map { $0 }
        XCTAssertEqual(PNGCodec.cuttingOverrunningChunk(bytes).count, 33, "cut after IHDR, before the overlong chunk")
        let outcome = Result { () throws(CodecError) -> Image in try Codecs.decode(bytes, path: "overlong.png") }
        switch outcome {
        case let .success(image): XCTAssertEqual(image.width, 2)
        case let .failure(error): XCTAssertEqual(error.path, "overlong.png")
        }
    }
}
