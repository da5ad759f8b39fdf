// ICC, Exif, XMP and comments as `granite convert` reads and re-writes them (issue 16): the
// containers (JPEG APP1/APP2 chunks and COM segments, PNG iCCP/eXIf/iTXt, `Comment` text chunks and
// ImageMagick's raw-profile text chunks, WebP RIFF chunks, TIFF tags and Exif IFD, GIF's XMP and
// comment extensions, JPEG XL boxes), each block's parser, the Exif salvage and sanitising (thumbnail dropped, orientation reset), the re-embedding into the same
// container, and an Exif block merged into a TIFF's tags. Seeds gif-xmp.gif, tiff-exif-gps.tif
// (ImageMagick + exiftool) and jxl-exif-xmp.jxl (pillow-jxl-plugin) come from other writers.
import FuzzSupport
import GraniteCodecs
import GraniteMedia

fuzzMain { data in
    let bytes = Array(data)
    let (metadata, _) = ImageMetadata.read(bytes)
    _ = metadata.embedded(in: bytes)
    if let exif = try? EXIFBlock.parse(bytes) {
        _ = exif.sanitized(resetOrientation: true, size: (width: 7, height: 5))
        // Merged into a TIFF's own tags: the result must read back as a TIFF.
        if let tiny = try? Image(width: 2, height: 1, format: .gray8, bytes: [0, 255]),
           let tiff = try? Codecs.encodeTIFF(tiny, metadata: ImageMetadata(exif: bytes)) {
            precondition((try? Codecs.decode(tiff)) != nil, "a TIFF with merged Exif does not decode")
        }
    }
    // Salvage keeps what it can read of a damaged block; what it returns must parse strictly.
    if let salvaged = EXIFBlock.salvage(bytes).bytes {
        precondition((try? EXIFBlock.parse(salvaged)) != nil, "a salvaged Exif block does not parse")
    }
    _ = try? ICCProfile.parse(bytes)
    _ = try? XMPPacket.parse(bytes).resettingOrientation()
}
