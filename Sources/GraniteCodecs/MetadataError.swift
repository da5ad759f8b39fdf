/// Why a metadata block (Exif, XMP, ICC profile, comment) or the container around it could not be read or written.
///
/// Metadata problems never stop a conversion: the block is dropped and the error becomes a warning.
public enum MetadataError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The block is shorter than its fixed header.
    case tooShort(what: String, count: Int, needed: Int)
    /// A field holds a value the format does not allow (byte order, magic number, signature, type).
    case badField(what: String, reason: String)
    /// An offset or length points outside the block.
    case outOfBounds(what: String, offset: Int, length: Int, size: Int)
    /// IFDs link back to one already read.
    case loop(what: String, offset: Int)
    /// More entries, chunks or bytes than any real file has.
    case tooLarge(what: String, count: Int, limit: Int)
    /// Compressed data that does not inflate.
    case compression(what: String, reason: String)
    /// The output format has no standard place for the block (a comment in WebP).
    case noPlace(format: String, reason: String)

    public var description: String {
        switch self {
        case let .tooShort(what, count, needed): return "\(what): \(count) bytes, needs at least \(needed)"
        case let .badField(what, reason): return "\(what): \(reason)"
        case let .outOfBounds(what, offset, length, size):
            return "\(what): \(length) bytes at offset \(offset) run past the end (\(size) bytes)"
        case let .loop(what, offset): return "\(what): IFD at offset \(offset) is linked twice"
        case let .tooLarge(what, count, limit): return "\(what): \(count) is over the limit of \(limit)"
        case let .compression(what, reason): return "\(what): \(reason)"
        case let .noPlace(format, reason): return "\(format) has no place for it (\(reason))"
        }
    }
}
