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

/// Animations: every frame of a GIF (disposal honoured) and of an animated WebP, and animated
/// WebP written; ImageMagick makes the GIF and reads our WebP back (`-coalesce`).
final class AnimationTests: XCTestCase {
    func testGIFAnimationBecomesAnimatedWebP() throws {
        let magick = try TestSupport.imageMagick()
        let dir = TestSupport.temporaryDirectory("anim")
        let gif = dir + "/a.gif"
        // Three frames: red, a blue square drawn over it (disposal none), then lime.
        XCTAssertEqual(try TestSupport.run(magick, ["-delay", "20", "-size", "16x12", "xc:red",
                                                    "(", "-size", "6x6", "xc:blue", "-repage", "16x12+2+3", ")",
                                                    "-delay", "50", "-size", "16x12", "xc:lime", "-loop", "0", gif]).status, 0)
        let frames = try XCTUnwrap(try Codecs.decodeAnimation(try FileBytes.read(gif)))
        XCTAssertEqual(frames.count, 3)
        XCTAssertEqual(frames.map(\.durationMs), [200, 200, 500])
        func px(_ f: AnimationFrame, _ x: Int, _ y: Int) -> [UInt8] { let p = f.image.rgba(x: x, y: y); return [p.r, p.g, p.b, p.a] }
        XCTAssertEqual(px(frames[1], 4, 5), [0, 0, 255, 255])
        XCTAssertEqual(px(frames[1], 0, 0), [255, 0, 0, 255], "the red frame stays under the blue square")
        XCTAssertEqual(px(frames[2], 4, 5), [0, 255, 0, 255])
        // Against ImageMagick's own compositing.
        let coalesced = try TestSupport.run(magick, [gif, "-coalesce", "-depth", "8", "rgba:-"]).stdout
        XCTAssertEqual(coalesced, frames.flatMap(\.image.bytes))

        let webp = try Codecs.encodeAnimatedWebP(frames, lossless: true)
        TestSupport.write(webp, dir + "/a.webp")
        let back = try XCTUnwrap(try Codecs.decodeAnimation(webp))
        XCTAssertEqual(back.map(\.image), frames.map(\.image))
        XCTAssertEqual(back.map(\.durationMs), [200, 200, 500])
        XCTAssertEqual(try TestSupport.run(magick, [dir + "/a.webp", "-coalesce", "-depth", "8", "rgba:-"]).stdout, coalesced)
        // A still decode takes the first frame; a still image is no animation.
        XCTAssertEqual(try Codecs.decode(webp), frames[0].image)
        XCTAssertNil(try Codecs.decodeAnimation(try Codecs.encodeWebP(frames[0].image)))
        XCTAssertThrowsError(try Codecs.decodeAnimation(try FileBytes.read(gif), options: DecodeOptions(maxPixels: 16 * 12 * 2)))
    }
}
