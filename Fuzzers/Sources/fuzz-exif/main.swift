// Exif metadata: the orientation tag read from a JPEG's APP1 segment (every offset untrusted).
// ICC and XMP readers get their own targets beside this one (a folder `fuzz-NAME` and seeds).
import FuzzSupport
import GraniteCodecs

fuzzMain { data in
    _ = EXIFOrientation.read(jpeg: Array(data))
    // Any container: Exif in JPEG/PNG/WebP (or a PNG text profile), else XMP's tiff:Orientation.
    _ = EXIFOrientation.read(Array(data))
}
