// Image decoding as `granite convert` and the folder source do it: the header alone
// (`Codecs.info`, default limits), a full decode (JPEG, PNG, WebP, AVIF, HEIC, GIF or TIFF by signature, Exif orientation,
// gray kept or not, DCT-scaled JPEG, each --fail-on level: warnings and truncation let through), and the Netpbm decoder the folder source uses by default.
// Any typed error is fine; a crash, leak or hang is a bug.
import FuzzSupport
import GraniteCapture
import GraniteCodecs

fuzzMain { data in
    let bytes = Array(data)
    _ = try? Codecs.info(bytes)
    // 4 MP keeps one run quick; the limit itself is checked from the header, as above.
    let variant = bytes.last ?? 0
    let options = DecodeOptions(maxPixels: 4_000_000, applyEXIFOrientation: variant & 1 == 0,
                                keepGray: variant & 2 != 0,
                                minimumSize: variant & 4 != 0 ? (width: 16, height: 16) : nil,
                                failOn: FailOn.allCases[Int(variant >> 3) % FailOn.allCases.count])
    var warnings = [String]()
    if let image = try? Codecs.decode(bytes, options: options, warnings: &warnings) {
        precondition(image.bytes.count == image.format.byteCount(width: image.width, height: image.height))
    }
    _ = try? NetpbmDecoder().decode(bytes, path: "fuzz.ppm")
}
