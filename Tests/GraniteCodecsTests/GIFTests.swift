import Foundation
import GraniteCodecs
import GraniteMedia
import XCTest

/// GIF reading (giflib): the first frame on the logical screen, transparency, interlacing;
/// ImageMagick makes the files and is the independent decoder.
final class GIFTests: XCTestCase {
    func testFirstFrameMatchesImageMagick() throws {
        let magick = try TestSupport.imageMagick()
        let dir = TestSupport.temporaryDirectory("gif")
        // A palette image with a transparent corner, interlaced and not.
        TestSupport.write(try Codecs.encodePNG(TestSupport.gradient(width: 40, height: 30)), dir + "/in.png")
        for interlace in ["None", "GIF"] {
            let gif = dir + "/g-\(interlace).gif"
            let r = try TestSupport.run(magick, [dir + "/in.png", "-colors", "64", "-fill", "none", "-draw", "color 0,0 reset",
                                                 "-region", "10x10+0+0", "-alpha", "transparent", "+region",
                                                 "-interlace", interlace, gif])
            XCTAssertEqual(r.status, 0)
            let bytes = try FileBytes.read(gif)
            XCTAssertEqual(Codecs.sniff(bytes), .gif)
            let ours = try Codecs.decode(bytes, path: gif)
            XCTAssertEqual([ours.width, ours.height], [40, 30])
            let theirs = try TestSupport.magickRGBA(gif + "[0]")
            // Transparent pixels: alpha 0 in both; colour there is not compared.
            var diff = 0, transparent = 0
            for p in 0..<ours.pixelCount {
                XCTAssertEqual(ours.bytes[p * 4 + 3], theirs[p * 4 + 3], "alpha at \(p)")
                if theirs[p * 4 + 3] == 0 { transparent += 1; continue }
                for c in 0..<3 { diff = max(diff, abs(Int(ours.bytes[p * 4 + c]) - Int(theirs[p * 4 + c]))) }
            }
            XCTAssertEqual(diff, 0, interlace)
            XCTAssertGreaterThan(transparent, 0, "the test file has transparent pixels")
        }
    }

    /// An animation: the first frame only.
    func testAnimatedGIFGivesItsFirstFrame() throws {
        let magick = try TestSupport.imageMagick()
        let dir = TestSupport.temporaryDirectory("gif-anim")
        let gif = dir + "/anim.gif"
        let r = try TestSupport.run(magick, ["-size", "16x12", "xc:red", "xc:blue", "xc:lime", "-loop", "0", gif])
        XCTAssertEqual(r.status, 0)
        let first = try Codecs.decode(try FileBytes.read(gif))
        XCTAssertEqual([first.width, first.height], [16, 12])
        let p = first.rgba(x: 8, y: 6)
        XCTAssertEqual([p.r, p.g, p.b, p.a], [255, 0, 0, 255])
        XCTAssertThrowsError(try Codecs.decode(Array(try FileBytes.read(gif).prefix(30)), path: "cut.gif")) { error in
            XCTAssertEqual((error as? CodecError)?.path, "cut.gif")
        }
    }
}
