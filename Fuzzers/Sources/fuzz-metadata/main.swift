// ICC, Exif and XMP as `granite convert` reads and re-writes them (issue 16): the containers
// (JPEG APP1/APP2 chunks, PNG iCCP/eXIf/iTXt and ImageMagick's raw-profile text chunks, WebP RIFF
// chunks), each block's parser, the Exif salvage and sanitising (thumbnail dropped, orientation reset) and the re-embedding into the same container.
import FuzzSupport
import GraniteCodecs

fuzzMain { data in
    let bytes = Array(data)
    let (metadata, _) = ImageMetadata.read(bytes)
    _ = metadata.embedded(in: bytes)
    if let exif = try? EXIFBlock.parse(bytes) {
        _ = exif.sanitized(resetOrientation: true, size: (width: 7, height: 5))
    }
    // Salvage keeps what it can read of a damaged block; what it returns must parse strictly.
    if let salvaged = EXIFBlock.salvage(bytes).bytes {
        precondition((try? EXIFBlock.parse(salvaged)) != nil, "a salvaged Exif block does not parse")
    }
    _ = try? ICCProfile.parse(bytes)
    _ = try? XMPPacket.parse(bytes).resettingOrientation()
}
