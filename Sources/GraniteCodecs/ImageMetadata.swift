/// The kinds of metadata `granite convert` carries from input to output.
public enum MetadataKind: String, Sendable, Hashable, CaseIterable, Codable, Comparable {
    /// The ICC color profile.
    case icc
    /// The Exif block (TIFF structure).
    case exif
    /// The XMP packet.
    case xmp
    /// Comments: JPEG COM segments, GIF comment extensions, PNG text chunks with keyword `Comment`.
    case comment

    public static func < (a: MetadataKind, b: MetadataKind) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// The metadata blocks of an image, as bytes: ICC profile, Exif (TIFF structure, without the
/// JPEG `Exif\0\0` prefix), XMP packet and comments.
///
/// ```
/// JPEG: APP1 Exif\0\0 · APP1 http://ns.adobe.com/xap/1.0/\0 · APP2 ICC_PROFILE\0 seq count (chunked) · COM (split at 65533 bytes)
/// PNG:  eXIf · iTXt XML:com.adobe.xmp · iCCP (name, zlib) · tEXt/iTXt/zTXt Comment
/// WebP: RIFF chunks ICCP · EXIF · XMP (extended format, flagged in VP8X); no comment
/// GIF (read): application extension XMP DataXMP · comment extensions (0x21 0xFE)
///  bytes ─► read (scan markers / chunks, bounds-checked; each block validated) ─► ImageMetadata + problems
///  ImageMetadata ─► embedded(in: encoded bytes) ─► markers after SOI/APP0, chunks after IHDR
/// ```
public struct ImageMetadata: Sendable, Equatable {
    /// The ICC profile's bytes.
    public var icc: [UInt8]?
    /// The Exif TIFF structure's bytes.
    public var exif: [UInt8]?
    /// The XMP packet's bytes.
    public var xmp: [UInt8]?
    /// The comments, in file order, each as the file holds it: the bytes are not re-encoded
    /// (JPEG COM is any bytes, GIF's are meant to be ASCII but are Latin-1 or UTF-8 in real files,
    /// PNG tEXt is Latin-1 and iTXt UTF-8). Empty when there are none.
    public var comments: [[UInt8]]

    /// Metadata with the given blocks.
    public init(icc: [UInt8]? = nil, exif: [UInt8]? = nil, xmp: [UInt8]? = nil, comments: [[UInt8]] = []) {
        self.icc = icc
        self.exif = exif
        self.xmp = xmp
        self.comments = comments
    }

    /// The kinds present, in `icc, exif, xmp, comment` order.
    public var kinds: [MetadataKind] {
        var k = [MetadataKind]()
        if icc != nil { k.append(.icc) }
        if exif != nil { k.append(.exif) }
        if xmp != nil { k.append(.xmp) }
        if !comments.isEmpty { k.append(.comment) }
        return k
    }

    /// Only the kinds in `keep`.
    public func keeping(_ keep: Set<MetadataKind>) -> ImageMetadata {
        ImageMetadata(icc: keep.contains(.icc) ? icc : nil, exif: keep.contains(.exif) ? exif : nil,
                      xmp: keep.contains(.xmp) ? xmp : nil, comments: keep.contains(.comment) ? comments : [])
    }

    /// A block that could not be read or written, and why.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// Which block.
        public var kind: MetadataKind
        /// What was wrong.
        public var error: MetadataError
        /// Whether only the part `error` names was dropped and the rest of the block kept
        /// (an Exif entry salvaged around).
        public var partial = false

        /// A problem that dropped the whole block (or, with `partial`, only the part it names).
        public init(kind: MetadataKind, error: MetadataError, partial: Bool = false) {
            self.kind = kind
            self.error = error
            self.partial = partial
        }

        public var description: String {
            partial ? "\(kind.label) entry dropped, the rest kept: \(error)" : "\(kind.label) dropped: \(error)"
        }
    }

    /// Reads the metadata of JPEG, PNG or WebP bytes. Each block is validated (`ICCProfile.parse`,
    /// `EXIFBlock.parse`, `XMPPacket.parse`); a broken one is left out and reported in `problems`,
    /// except Exif, which keeps every entry ``EXIFBlock/salvage(_:)`` can read (each one dropped
    /// reported with `partial`). Comments are any bytes; only one whose container is damaged
    /// (a bad CRC, a sub-block running past the end) is left out and reported.
    /// Never throws: metadata problems never stop an image from converting.
    public static func read(_ bytes: [UInt8]) -> (metadata: ImageMetadata, problems: [Problem]) {
        let raw = readRaw(bytes)
        var m = raw.metadata
        var problems = raw.problems
        if let icc = m.icc {
            do { _ = try ICCProfile.parse(icc) } catch { problems.append(Problem(kind: .icc, error: error)); m.icc = nil }
        }
        if let exif = m.exif {
            do { _ = try EXIFBlock.parse(exif) } catch {
                // Keep every entry that can be read, in a block laid out afresh.
                let (salvaged, dropped) = EXIFBlock.salvage(exif)
                if let salvaged, (try? EXIFBlock.parse(salvaged)) != nil {
                    m.exif = salvaged
                    problems += dropped.map { Problem(kind: .exif, error: $0, partial: true) }
                } else {
                    problems.append(Problem(kind: .exif, error: error))
                    m.exif = nil
                }
            }
        }
        if let xmp = m.xmp {
            do { _ = try XMPPacket.parse(xmp) } catch { problems.append(Problem(kind: .xmp, error: error)); m.xmp = nil }
        }
        return (m, problems)
    }

    /// The blocks as the container holds them, not yet validated.
    static func readRaw(_ bytes: [UInt8]) -> (metadata: ImageMetadata, problems: [Problem]) {
        switch ImageFormat.sniff(bytes) {
        case .jpeg: return readJPEG(bytes)
        case .png: return readPNG(bytes)
        case .webp: return readWebP(bytes)
        case .avif: return (AVIFCodec.metadata(bytes), [])
        case .heic: return (HEIFCodec.metadata(bytes), [])
        case .tiff: return (TIFFCodec.metadata(bytes), [])
        case .gif: return GIFCodec.metadata(bytes)
        case .jxl: return (JXLCodec.metadata(bytes), [])
        case nil: return (ImageMetadata(), [])
        }
    }

    /// `encoded` (JPEG, PNG or WebP bytes from this module's encoders) with these blocks inserted.
    /// Blocks the container cannot hold (an Exif block over 64 KB in JPEG, a comment in WebP) are
    /// left out and reported.
    public func embedded(in encoded: [UInt8]) -> (bytes: [UInt8], written: [MetadataKind], problems: [Problem]) {
        switch ImageFormat.sniff(encoded) {
        case .jpeg: return embeddedJPEG(encoded)
        case .png: return embeddedPNG(encoded)
        case .webp:
            let (held, dropped) = held(by: .webp)
            let written = held.embeddedWebP(encoded)
            return (written.bytes, written.written, dropped + written.problems)
        // AVIF takes its metadata at encoding (`Codecs.encodeAVIF(_:quality:metadata:threads:path:)`).
        // AVIF, TIFF and JPEG XL take their metadata at encoding (`Codecs.encodeAVIF`, `encodeTIFF`, `encodeJXL`).
        case .avif, .tiff, .jxl, .heic, .gif, nil: return (encoded, [], [])
        }
    }
}

extension MetadataKind {
    /// How messages name the block.
    var label: String {
        switch self {
        case .icc: return "ICC profile"
        case .exif: return "Exif"
        case .xmp: return "XMP"
        case .comment: return "comment"
        }
    }
}
