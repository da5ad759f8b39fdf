import CLCMS2
import Foundation
import GraniteCodecs
import GraniteConvert
import GraniteMedia
import GraniteTesting
import XCTest

/// `granite convert` and metadata, checked with independent tools: exiftool writes the inputs'
/// Exif / XMP / ICC and reads the outputs'; ImageMagick (lcms inside) is the reference color
/// conversion for `--colorspace srgb`.
final class ConvertMetadataTests: XCTestCase {
    /// Wide-gamut RGB profiles made with lcms: Display P3-like (P3 primaries, D65, sRGB curve)
    /// and Adobe RGB-like (Adobe primaries, D65, gamma 563/256).
    static let displayP3 = makeProfile([(0.680, 0.320), (0.265, 0.690), (0.150, 0.060)], gamma: nil)
    static let adobeRGB = makeProfile([(0.64, 0.33), (0.21, 0.71), (0.15, 0.06)], gamma: 563.0 / 256.0)

    static func makeProfile(_ p: [(Double, Double)], gamma: Double?) -> [UInt8] {
        let context = cmsCreateContext(nil, nil)
        defer { cmsDeleteContext(context) }
        var white = cmsCIExyY(x: 0.3127, y: 0.3290, Y: 1)
        var primaries = cmsCIExyYTRIPLE(Red: cmsCIExyY(x: p[0].0, y: p[0].1, Y: 1), Green: cmsCIExyY(x: p[1].0, y: p[1].1, Y: 1),
                                        Blue: cmsCIExyY(x: p[2].0, y: p[2].1, Y: 1))
        let sRGBCurve: [Double] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
        let curve = gamma.map { cmsBuildGamma(context, $0) } ?? cmsBuildParametricToneCurve(context, 4, sRGBCurve)
        defer { cmsFreeToneCurve(curve) }
        var curves: [OpaquePointer?] = [curve, curve, curve]
        let profile = cmsCreateRGBProfileTHR(context, &white, &primaries, &curves)!
        defer { cmsCloseProfile(profile) }
        var size: cmsUInt32Number = 0
        _ = cmsSaveProfileToMem(profile, nil, &size)
        var bytes = [UInt8](repeating: 0, count: Int(size))
        _ = bytes.withUnsafeMutableBytes { cmsSaveProfileToMem(profile, $0.baseAddress, &size) }
        return bytes
    }

    static func tool(_ name: String, package: String) throws -> String {
        for dir in ["/usr/bin", "/usr/local/bin"] where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") {
            return "\(dir)/\(name)"
        }
        let why = "\(name) not found (Debian package \(package)): it is the independent reader/converter for these tests"
        try Prerequisite.unmet(why)
    }

    @discardableResult
    static func run(_ program: String, _ arguments: [String]) throws -> [UInt8] {
        let result = try ChildProgram.run(program, arguments)
        XCTAssertEqual(result.status, 0, "\(program) \(arguments.joined(separator: " ")) failed: \(result.err)")
        return result.stdout
    }

    /// exiftool's view of a file: tag (group:name, numeric values) to value.
    static func exiftool(_ path: String) throws -> [String: Any] {
        let json = try run(try tool("exiftool", package: "libimage-exiftool-perl"), ["-j", "-n", "-G1", "-a", path])
        let list = try JSONSerialization.jsonObject(with: Data(json)) as? [[String: Any]]
        return try XCTUnwrap(list?.first)
    }

    static func write(_ bytes: [UInt8], _ path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }

    /// A photo-like 64x48 JPEG carrying Exif (make, model, copyright, date, GPS, orientation 6,
    /// a thumbnail), XMP (creator, tiff:Orientation 6) and `profile`, all written by exiftool.
    static func taggedJPEG(_ dir: String, profile: [UInt8]) throws -> String {
        let exiftool = try tool("exiftool", package: "libimage-exiftool-perl")
        let path = dir + "/tagged.jpg"
        try write(try Codecs.encodeJPEG(ConvertFixtures.photo(width: 64, height: 48, seed: 3), quality: 92), path)
        try write(try Codecs.encodeJPEG(ConvertFixtures.photo(width: 16, height: 12, seed: 4), quality: 70), dir + "/thumb.jpg")
        try write(profile, dir + "/profile.icc")
        try run(exiftool, ["-q", "-overwrite_original", "-Make=Granite Camera Co", "-Model=GC-1 Mark II",
                           "-Copyright=(c) 2026 Test Author", "-DateTimeOriginal=2026:11:24 14:30:00",
                           "-ExifImageWidth=64", "-ExifImageHeight=48", "-GPSLatitude=48.8566", "-GPSLatitudeRef=N", "-GPSLongitude=2.3522", "-GPSLongitudeRef=E",
                           "-IFD0:Orientation#=6", "-ThumbnailImage<=\(dir)/thumb.jpg", "-XMP-dc:Creator=Test Author",
                           "-XMP-tiff:Orientation#=6", "-ICC_Profile<=\(dir)/profile.icc", path])
        let tags = try Self.exiftool(path)
        XCTAssertNotNil(tags["IFD1:ThumbnailImage"] ?? tags["IFD1:ThumbnailOffset"], "the fixture has a thumbnail")
        return path
    }

    func testKeptByDefault() throws {
        let dir = ConvertFixtures.folder("meta-keep"), out = dir + "/out"
        let input = try Self.taggedJPEG(dir, profile: Self.displayP3)
        for format in ["jpg", "png", "webp"] {
            let r = try ConvertFixtures.runGranite(["convert", input, "-o", out + format, "--format", format])
            let validate = try Self.run(try Self.tool("exiftool", package: "libimage-exiftool-perl"), ["-validate", "-warning", "-a", "-s3", out + format + "/tagged." + format])
            XCTAssertEqual(String(decoding: validate, as: UTF8.self), "OK\n", "exiftool -validate: \(format)")
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stderr.contains("warning"), false, r.stderr)
            let output = out + format + "/tagged." + format
            let tags = try Self.exiftool(output)
            XCTAssertEqual(tags["IFD0:Make"] as? String, "Granite Camera Co", format)
            XCTAssertEqual(tags["IFD0:Model"] as? String, "GC-1 Mark II")
            XCTAssertEqual(tags["IFD0:Copyright"] as? String, "(c) 2026 Test Author")
            XCTAssertEqual(tags["ExifIFD:DateTimeOriginal"] as? String, "2026:11:24 14:30:00")
            XCTAssertEqual(try XCTUnwrap(tags["GPS:GPSLatitude"] as? Double), 48.8566, accuracy: 1e-4)
            XCTAssertEqual(try XCTUnwrap(tags["GPS:GPSLongitude"] as? Double), 2.3522, accuracy: 1e-4)
            XCTAssertEqual(tags["IFD0:Orientation"] as? Int, 1, "the pixels were turned upright")
            XCTAssertEqual(tags["ExifIFD:ExifImageWidth"] as? Int, 48, "the output's size")
            XCTAssertEqual(tags["ExifIFD:ExifImageHeight"] as? Int, 64)
            XCTAssertEqual(tags["XMP-tiff:Orientation"] as? Int, 1)
            XCTAssertEqual(tags["XMP-dc:Creator"] as? String, "Test Author")
            XCTAssertEqual(tags.keys.filter { $0.hasPrefix("IFD1:") }, [], "no thumbnail IFD")
            XCTAssertEqual(try Codecs.info(try FileBytes.read(output)).width, 48, "turned upright")
            // The profile, byte for byte, by exiftool and by our reader.
            let exiftool = try Self.tool("exiftool", package: "libimage-exiftool-perl")
            XCTAssertEqual(try Self.run(exiftool, ["-b", "-ICC_Profile", output]), Self.displayP3)
            XCTAssertEqual(ImageMetadata.read(try FileBytes.read(output)).metadata.icc, Self.displayP3)
            let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + format + "/manifest.json"))) as? [String: Any]
            let entry = (manifest?["entries"] as? [[String: Any]])?.first
            XCTAssertEqual(entry?["metadata"] as? [String], ["icc", "exif", "xmp"])
        }
    }

    /// `--format avif`: the metadata goes into libavif before encoding; exiftool reads it back, and
    /// avifdec (dav1d) decodes pixels close to the input's (the AVIF test in GraniteCodecsTests
    /// checks the encoder itself).
    func testAVIFKeepsMetadataAndPixels() throws {
        let avifdec = try Self.tool("avifdec", package: "libavif-bin")
        let dir = ConvertFixtures.folder("meta-avif"), out = dir + "/out"
        let input = try Self.taggedJPEG(dir, profile: Self.displayP3)
        let r = try ConvertFixtures.runGranite(["convert", input, "-o", out, "--format", "avif", "--quality", "90"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let output = out + "/tagged.avif"
        XCTAssertEqual(Codecs.sniff(try FileBytes.read(output)), .avif)
        let tags = try Self.exiftool(output)
        XCTAssertEqual(tags["IFD0:Make"] as? String, "Granite Camera Co")
        XCTAssertEqual(tags["IFD0:Orientation"] as? Int, 1, "the pixels were turned upright")
        XCTAssertEqual(try XCTUnwrap(tags["GPS:GPSLatitude"] as? Double), 48.8566, accuracy: 1e-4)
        XCTAssertEqual(tags["XMP-dc:Creator"] as? String, "Test Author")
        let exiftool = try Self.tool("exiftool", package: "libimage-exiftool-perl")
        XCTAssertEqual(try Self.run(exiftool, ["-b", "-ICC_Profile", output]), Self.displayP3, "the profile, byte for byte")
        try Self.run(avifdec, [output, dir + "/back.png"])
        let back = try Codecs.decodeFile(dir + "/back.png")
        let upright = try Codecs.decodeFile(input)
        XCTAssertEqual([back.width, back.height], [48, 64])
        var total = 0
        for i in 0..<back.bytes.count where i % 4 != 3 { total += abs(Int(back.bytes[i]) - Int(upright.bytes[i])) }
        XCTAssertLessThan(Double(total) / Double(back.pixelCount * 3), 4, "mean difference from the decoded input")
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json"))) as? [String: Any]
        let entry = (manifest?["entries"] as? [[String: Any]])?.first
        XCTAssertEqual(entry?["metadata"] as? [String], ["icc", "exif", "xmp"])
        XCTAssertEqual((entry?["settings"] as? String)?.contains("format=avif;quality=90"), true)
        // --strip: nothing inside.
        XCTAssertEqual(try ConvertFixtures.runGranite(["convert", input, "-o", dir + "/strip", "--format", "avif", "--strip"]).status, 0)
        let info = String(decoding: try Self.run(avifdec, ["--info", dir + "/strip/tagged.avif"]), as: UTF8.self)
        for line in ["ICC Profile    : Absent", "XMP Metadata   : Absent", "Exif Metadata  : Absent"] { XCTAssertTrue(info.contains(line), info) }
    }

    func testStripAndKeep() throws {
        let dir = ConvertFixtures.folder("meta-strip")
        let input = try Self.taggedJPEG(dir, profile: Self.adobeRGB)
        var r = try ConvertFixtures.runGranite(["convert", input, "-o", dir + "/strip", "--strip"])
        XCTAssertEqual(r.status, 0, r.stderr)
        var tags = try Self.exiftool(dir + "/strip/tagged.jpg")
        XCTAssertEqual(tags.keys.filter { $0.hasPrefix("IFD") || $0.hasPrefix("XMP") || $0.hasPrefix("ICC") || $0.hasPrefix("GPS") }, [])
        XCTAssertEqual(ImageMetadata.read(try FileBytes.read(dir + "/strip/tagged.jpg")).metadata, ImageMetadata())
        r = try ConvertFixtures.runGranite(["convert", input, "-o", dir + "/keep", "--keep", "exif", "--format", "png"])
        XCTAssertEqual(r.status, 0, r.stderr)
        tags = try Self.exiftool(dir + "/keep/tagged.png")
        XCTAssertEqual(tags["IFD0:Make"] as? String, "Granite Camera Co")
        XCTAssertEqual(tags.keys.filter { $0.hasPrefix("XMP") || $0.hasPrefix("ICC") }, [])
        XCTAssertEqual(try ConvertFixtures.runGranite(["convert", input, "-o", dir + "/x", "--strip", "--keep", "icc"]).status, 64)
        XCTAssertEqual(try ConvertFixtures.runGranite(["convert", input, "-o", dir + "/x", "--keep", "gps"]).status, 64)
        XCTAssertEqual(try ConvertFixtures.runGranite(["convert", input, "-o", dir + "/x", "--colorspace", "p3"]).status, 64)
    }

    func testBrokenMetadataIsDroppedWithAWarning() throws {
        let dir = ConvertFixtures.folder("meta-broken")
        let jpeg = try Codecs.encodeJPEG(ConvertFixtures.photo(width: 32, height: 24, seed: 9), quality: 90)
        let badExif: [UInt8] = [0x49, 0x49, 42, 0, 0xFF, 0xFF, 0, 0] + [UInt8](repeating: 7, count: 40)
        let badICC = [UInt8](repeating: 0x41, count: 300)
        let tagged = ImageMetadata(icc: badICC, exif: badExif, xmp: Array("<x:xmpmeta/>".utf8)).embedded(in: jpeg).bytes
        try Self.write(tagged, dir + "/broken.jpg")
        let r = try ConvertFixtures.runGranite(["convert", dir + "/broken.jpg", "-o", dir + "/out"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("warning: \(dir)/broken.jpg: Exif dropped"), r.stderr)
        XCTAssertTrue(r.stderr.contains("warning: \(dir)/broken.jpg: ICC profile dropped"), r.stderr)
        let out = ImageMetadata.read(try FileBytes.read(dir + "/out/broken.jpg")).metadata
        XCTAssertEqual(out, ImageMetadata(xmp: Array("<x:xmpmeta/>".utf8)), "the good block is kept")
        XCTAssertEqual(try Codecs.decode(try FileBytes.read(dir + "/out/broken.jpg")).width, 32)
    }

    /// `--colorspace srgb` against ImageMagick's `-profile` (lcms): 8-bit PNG (Display P3-like),
    /// JPEG (Adobe RGB-like) and 16-bit PNG (Display P3-like) inputs.
    func testColorspaceSRGBMatchesImageMagick() throws {
        let magick = try Self.tool("convert", package: "imagemagick")
        let exiftool = try Self.tool("exiftool", package: "libimage-exiftool-perl")
        let dir = ConvertFixtures.folder("meta-srgb"), inputs = dir + "/in"
        try FileManager.default.createDirectory(atPath: inputs, withIntermediateDirectories: true)
        try Self.write(Self.displayP3, dir + "/p3.icc")
        try Self.write(Self.adobeRGB, dir + "/adobe.icc")
        try Self.write(ColorTransform.sRGBProfile, dir + "/srgb.icc")
        let photo = ConvertFixtures.photo(width: 96, height: 64, seed: 5)
        try Self.write(try Codecs.encodePNG(photo), inputs + "/p3-8.png")
        try Self.write(try Codecs.encodeJPEG(photo, quality: 95, subsampling: .s444), inputs + "/adobe.jpg")
        try Self.run(magick, [inputs + "/p3-8.png", "-depth", "16", "PNG48:" + inputs + "/p3-16.png"])
        for (name, icc) in [("p3-8.png", "p3.icc"), ("adobe.jpg", "adobe.icc"), ("p3-16.png", "p3.icc")] {
            // Our PNG encoder writes an sRGB chunk; ImageMagick would follow it rather than iCCP, so it goes.
            let srgb = name.hasSuffix(".png") ? ["-SRGBRendering="] : []
            try Self.run(exiftool, ["-q", "-overwrite_original", "-ICC_Profile<=\(dir)/\(icc)"] + srgb + [inputs + "/" + name])
        }
        let r = try ConvertFixtures.runGranite(["convert", inputs, "-o", dir + "/out", "--colorspace", "srgb", "--format", "png"])
        XCTAssertEqual(r.status, 0, r.stderr)
        for name in ["p3-8", "adobe", "p3-16"] {
            let input = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: inputs).first { $0.hasPrefix(name + ".") })
            let reference = try Self.run(magick, [inputs + "/" + input, "-profile", dir + "/srgb.icc", "-depth", "8", "rgb:-"])
            let output = try FileBytes.read(dir + "/out/\(name).png")
            let ours = try Codecs.decode(output)
            let original = try Codecs.decode(try FileBytes.read(inputs + "/" + input))
            var maxDiff = 0, total = 0, maxChange = 0
            for p in 0..<ours.pixelCount {
                for c in 0..<3 {
                    let d = abs(Int(ours.bytes[p * 4 + c]) - Int(reference[p * 3 + c]))
                    maxDiff = max(maxDiff, d)
                    total += d
                    maxChange = max(maxChange, abs(Int(ours.bytes[p * 4 + c]) - Int(original.bytes[p * 4 + c])))
                }
            }
            let mean = Double(total) / Double(ours.pixelCount * 3)
            print("colorspace srgb \(name): max |granite - ImageMagick| = \(maxDiff), mean \(mean), max change from input \(maxChange)")
            XCTAssertLessThanOrEqual(maxDiff, 2, name)
            XCTAssertGreaterThan(maxChange, 20, "\(name): the conversion moved saturated colors")
            XCTAssertEqual(ImageMetadata.read(output).metadata.icc, ColorTransform.sRGBProfile, "\(name): tagged sRGB")
            XCTAssertEqual(try Self.exiftool(dir + "/out/\(name).png")["ICC-header:ColorSpaceData"] as? String, "RGB ")
        }
    }
}
