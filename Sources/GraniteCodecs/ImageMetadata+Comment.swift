/// Comments: which output formats hold them, and the bound on their size.
///
/// ```
/// read:  JPEG COM (a full 65533-byte segment followed by another COM continues it) · GIF comment
///        extensions (sub-blocks joined) · PNG tEXt / zTXt / iTXt with keyword "Comment"
/// write: JPEG COM (split at 65533 bytes) · PNG tEXt (ASCII or Latin-1) or iTXt (UTF-8)
///        WebP, AVIF, TIFF, JPEG XL: none ─► dropped and reported (held(by:))
/// ```
extension ImageMetadata {
    /// The largest comment read from a compressed PNG text chunk (a sanity bound against zlib bombs;
    /// JPEG and GIF comments are bounded by the file itself).
    public static let commentMaxBytes = 16 << 20

    /// These blocks less the ones `format` has no place for (comments in WebP, AVIF, TIFF and
    /// JPEG XL), each one left out reported.
    public func held(by format: ImageFormat) -> (metadata: ImageMetadata, problems: [Problem]) {
        guard !comments.isEmpty, let reason = format.noCommentPlace else { return (self, []) }
        var held = self
        held.comments = []
        let error = MetadataError.noPlace(format: format.displayName, reason: reason)
        return (held, [Problem(kind: .comment, error: error)])
    }
}

extension ImageFormat {
    /// Whether an output in this format carries comments (JPEG COM, PNG text chunks).
    public var holdsComments: Bool { noCommentPlace == nil }

    /// Why the format cannot carry a comment; nil for JPEG (COM) and PNG (text chunks).
    ///
    /// A comment is not moved into XMP (`dc:description` is a caption, shown as one) or Exif
    /// (`UserComment` would rewrite a block kept byte for byte): either would change what another
    /// field says, and would not come back as a comment.
    var noCommentPlace: String? {
        switch self {
        case .jpeg, .png, .gif: return nil
        case .webp: return "its RIFF chunks have none"
        case .avif, .heic: return "HEIF defines no comment item"
        case .jxl: return "its container defines no comment box"
        case .tiff: return "ImageDescription is a caption, not a comment"
        }
    }
}
