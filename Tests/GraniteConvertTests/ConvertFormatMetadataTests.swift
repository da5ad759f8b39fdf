import Foundation
import GraniteCodecs
import GraniteMedia
import GraniteTesting
import XCTest

/// Metadata of the formats beyond JPEG, PNG and WebP through `granite convert`: TIFF's Exif (its
/// IFD0 tags and Exif/GPS IFDs, read and written), GIF's XMP, JPEG XL's Exif and XMP boxes.
/// Inputs are written by independent tools (ImageMagick, exiftool, pillow-jxl-plugin) and outputs
/// read back by exiftool.
final class ConvertFormatMetadataTests: XCTestCase {
    typealias M = ConvertMetadataTests

    func exiftool() throws -> String { try M.tool("exiftool", package: "libimage-exiftool-perl") }

    /// `granite convert INPUT -o OUT --format FORMAT` (which must succeed), and exiftool's view of the output.
    func convertedTags(_ input: String, to out: String, format: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let r = try ConvertFixtures.runGranite(["convert", input, "-o", out, "--format", format])
        XCTAssertEqual(r.status, 0, r.stderr, file: file, line: line)
        let name = ((input as NSString).lastPathComponent as NSString).deletingPathExtension
        return try M.exiftool(out + "/" + name + "." + format)
    }

    /// The tags `taggedJPEG` carries, as exiftool reads them from an output whose pixels were turned.
    func assertCameraTags(_ tags: [String: Any], _ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(tags["IFD0:Make"] as? String, "Granite Camera Co", what, file: file, line: line)
        XCTAssertEqual(tags["IFD0:Model"] as? String, "GC-1 Mark II", what, file: file, line: line)
        XCTAssertEqual(tags["IFD0:Copyright"] as? String, "(c) 2026 Test Author", what, file: file, line: line)
        XCTAssertEqual(tags["ExifIFD:DateTimeOriginal"] as? String, "2026:11:24 14:30:00", what, file: file, line: line)
        XCTAssertEqual(try XCTUnwrap(tags["GPS:GPSLatitude"] as? Double, what, file: file, line: line), 48.8566, accuracy: 1e-4, file: file, line: line)
        XCTAssertEqual(tags["IFD0:Orientation"] as? Int, 1, "\(what): the pixels were turned upright", file: file, line: line)
        XCTAssertEqual(tags["XMP-dc:Creator"] as? String, "Test Author", what, file: file, line: line)
    }

    /// JPEG → TIFF writes the Exif as TIFF tags and an Exif IFD (exiftool reads them and finds the
    /// file valid; ImageMagick's libtiff reads its pixels), and that TIFF → JPEG reads them back.
    func testTIFFWritesAndReadsExif() throws {
        let dir = ConvertFixtures.folder("meta-tiff")
        let input = try M.taggedJPEG(dir, profile: M.displayP3)
        let tags = try convertedTags(input, to: dir + "/tif", format: "tif")
        let tiff = dir + "/tif/tagged.tif"
        try assertCameraTags(tags, "TIFF output")
        XCTAssertEqual(tags["IFD0:ImageWidth"] as? Int, 48)
        XCTAssertEqual(try M.run(try exiftool(), ["-b", "-ICC_Profile", tiff]), M.displayP3, "the profile, byte for byte")
        // exiftool -validate finds the structure sound (no error, no bad offset or directory); it does
        // warn about what TIFF's rules say of a camera's Exif (ComponentsConfiguration, the pixel
        // dimensions, GPSProcessingMethod) and of Deflate compression, which are not structural.
        let validate = String(decoding: try M.run(try exiftool(), ["-validate", "-warning", "-error", "-a", "-s3", tiff]), as: UTF8.self)
        for word in ["Error", "offset", "Bad", "directory"] {
            XCTAssertFalse(validate.contains(word), "exiftool -validate: \(validate)")
        }
        let magick = try M.tool("convert", package: "imagemagick")
        let pixels = try M.run(magick, [tiff, "-depth", "8", "rgba:-"])
        let ours = try Codecs.decode(try FileBytes.read(tiff))
        XCTAssertEqual(pixels, ours.bytes, "ImageMagick reads the same pixels")

        // And back: TIFF → JPEG keeps what the TIFF holds.
        try assertCameraTags(try convertedTags(tiff, to: dir + "/back", format: "jpg"), "TIFF → JPEG")
    }

    /// A TIFF scan as ImageMagick writes it, tagged by exiftool (IFD0 Make and Artist, an Exif IFD,
    /// GPS): its Exif reaches a PNG output, and its storage tags (strips, compression) do not.
    func testTIFFFromOtherToolsKeepsItsExif() throws {
        let dir = ConvertFixtures.folder("meta-tiff-in")
        try M.write(try Codecs.encodePNG(ConvertFixtures.photo(width: 40, height: 30, seed: 9)), dir + "/in.png")
        try M.run(try M.tool("convert", package: "imagemagick"), [dir + "/in.png", "-compress", "lzw", dir + "/scan.tif"])
        try M.run(try exiftool(), ["-q", "-overwrite_original", "-Make=Flatbed Inc", "-Artist=Scanner Person",
                                   "-DateTimeOriginal=2025:01:02 03:04:05", "-GPSLatitude=10.5", "-GPSLatitudeRef=S", dir + "/scan.tif"])
        let exif = try XCTUnwrap(ImageMetadata.read(try FileBytes.read(dir + "/scan.tif")).metadata.exif, "the TIFF's Exif is read")
        let block = try EXIFBlock.parse(exif)
        XCTAssertEqual(block.string(EXIFBlock.Tag.make), "Flatbed Inc")
        XCTAssertNil(block.ifd0.entry(0x0111), "no StripOffsets in the Exif block")
        let tags = try convertedTags(dir + "/scan.tif", to: dir + "/out", format: "png")
        XCTAssertEqual(tags["IFD0:Make"] as? String, "Flatbed Inc")
        XCTAssertEqual(tags["IFD0:Artist"] as? String, "Scanner Person")
        XCTAssertEqual(tags["ExifIFD:DateTimeOriginal"] as? String, "2025:01:02 03:04:05")
        XCTAssertEqual(try XCTUnwrap(tags["GPS:GPSLatitude"] as? Double), 10.5, accuracy: 1e-6)
        XCTAssertNil(tags["IFD0:StripOffsets"])
    }

    /// A GIF's XMP (exiftool writes it as the "XMP DataXMP" application extension) reaches JPEG and
    /// PNG outputs, and an animated GIF's reaches its animated WebP.
    func testGIFXMPIsKept() throws {
        let dir = ConvertFixtures.folder("meta-gif")
        try M.write(try Codecs.encodePNG(ConvertFixtures.photo(width: 32, height: 24, seed: 5)), dir + "/in.png")
        try M.run(try M.tool("convert", package: "imagemagick"), [dir + "/in.png", dir + "/anim.gif"])
        try M.run(try exiftool(), ["-q", "-overwrite_original", "-XMP-dc:Title=Granite GIF", "-XMP-dc:Creator=Gif Author", dir + "/anim.gif"])
        let xmp = try XCTUnwrap(ImageMetadata.read(try FileBytes.read(dir + "/anim.gif")).metadata.xmp)
        XCTAssertTrue(String(decoding: xmp, as: UTF8.self).hasSuffix("?>"), "the packet alone, without GIF's magic trailer")
        for format in ["jpg", "png"] {
            let tags = try convertedTags(dir + "/anim.gif", to: dir + "/" + format, format: format)
            XCTAssertEqual(tags["XMP-dc:Title"] as? String, "Granite GIF", format)
            XCTAssertEqual(tags["XMP-dc:Creator"] as? String, "Gif Author", format)
        }
        // An animated GIF stays animated into WebP, its XMP with it.
        try M.write(try Codecs.encodePNG(ConvertFixtures.photo(width: 32, height: 24, seed: 9)), dir + "/in2.png")
        try M.run(try M.tool("convert", package: "imagemagick"), ["-delay", "10", dir + "/in.png", dir + "/in2.png", dir + "/moving.gif"])
        try M.run(try exiftool(), ["-q", "-overwrite_original", "-XMP-dc:Title=Moving GIF", dir + "/moving.gif"])
        let tags = try convertedTags(dir + "/moving.gif", to: dir + "/webp", format: "webp")
        XCTAssertEqual(tags["XMP-dc:Title"] as? String, "Moving GIF", "animated WebP")
        let webp = try FileBytes.read(dir + "/webp/moving.webp")
        XCTAssertEqual(try Codecs.decodeAnimation(webp)?.count, 2, "still animated, two frames")
    }

    /// A JPEG XL written by pillow-jxl-plugin (its own libjxl) with Exif and XMP boxes: both reach
    /// a JPEG output.
    func testJXLExifAndXMPAreKept() throws {
        let python = try ConvertFixtures.venvPython(importing: "pillow_jxl", "pillow-jxl-plugin is the independent JPEG XL writer")
        let dir = ConvertFixtures.folder("meta-jxl")
        try M.write(try Codecs.encodePNG(ConvertFixtures.photo(width: 32, height: 24, seed: 6)), dir + "/in.png")
        let xmp = "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
            + "<rdf:Description rdf:about='' xmlns:dc='http://purl.org/dc/elements/1.1/'><dc:title><rdf:Alt>"
            + "<rdf:li xml:lang='x-default'>Granite JXL</rdf:li></rdf:Alt></dc:title></rdf:Description></rdf:RDF></x:xmpmeta>"
        let script = "import sys, pillow_jxl; from PIL import Image; e = Image.Exif(); e[0x010F] = 'JXL Maker'; e[0x8298] = 'JXL Copyright'; "
            + "Image.open(sys.argv[1]).save(sys.argv[2], quality=90, exif=e.tobytes(), xmp=sys.argv[3].encode())"
        let made = try ChildProgram.run(python, ["-c", script, dir + "/in.png", dir + "/p.jxl", xmp])
        XCTAssertEqual(made.status, 0, made.err)
        let read = ImageMetadata.read(try FileBytes.read(dir + "/p.jxl")).metadata
        XCTAssertEqual(try EXIFBlock.parse(try XCTUnwrap(read.exif)).string(EXIFBlock.Tag.make), "JXL Maker")
        XCTAssertNotNil(read.xmp)
        let tags = try convertedTags(dir + "/p.jxl", to: dir + "/out", format: "jpg")
        XCTAssertEqual(tags["IFD0:Make"] as? String, "JXL Maker")
        XCTAssertEqual(tags["IFD0:Copyright"] as? String, "JXL Copyright")
        XCTAssertEqual(tags["XMP-dc:Title"] as? String, "Granite JXL")
    }
}
