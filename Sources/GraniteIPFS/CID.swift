import Crypto

/// A content identifier: CIDv0 (dag-pb, base58btc) or CIDv1 (dag-pb or raw, base32), sha2-256 only.
public struct CID: Hashable, Sendable, CustomStringConvertible, Codable {
    /// The IPLD codec of the block a CID names.
    public enum Codec: UInt64, Sendable {
        /// dag-pb (0x70): UnixFS files' inner nodes and directories.
        case dagPB = 0x70
        /// raw (0x55): leaf bytes as they are (CIDv1 raw leaves).
        case raw = 0x55
    }

    /// 0 or 1.
    public let version: Int
    /// The codec of the named block.
    public let codec: Codec
    /// The 32-byte sha2-256 digest.
    public let digest: [UInt8]

    /// A CID for a block whose sha2-256 digest is `digest`.
    ///
    /// CIDv0 exists only for dag-pb; asking for v0 with `.raw` gives v1, as Kubo does.
    public init(version: Int, codec: Codec, digest: [UInt8]) {
        precondition(digest.count == 32, "sha2-256 digests are 32 bytes")
        self.version = (version == 0 && codec == .dagPB) ? 0 : 1
        self.codec = codec
        self.digest = digest
    }

    /// The CID of `block` (hashes it).
    public init(version: Int, codec: Codec, block: [UInt8]) {
        self.init(version: version, codec: codec, digest: Array(SHA256.hash(data: block)))
    }

    /// Parses `Qm…` (v0) or `b…` (v1 base32); throws ``IPFSError/invalidCID(_:reason:)`` otherwise.
    public init(_ text: String) throws(IPFSError) {
        if text.count == 46, text.hasPrefix("Qm") {
            guard let bytes = Multibase.decodeBase58(text), bytes.count == 34, bytes[0] == 0x12, bytes[1] == 0x20 else {
                throw IPFSError.invalidCID(text, reason: "not a base58btc sha2-256 multihash")
            }
            self.init(version: 0, codec: .dagPB, digest: Array(bytes[2...]))
            return
        }
        guard text.hasPrefix("b"), let bytes = Multibase.decodeBase32(String(text.dropFirst())) else {
            throw IPFSError.invalidCID(text, reason: "only CIDv0 (Qm…) and base32 CIDv1 (b…) are supported")
        }
        var i = 0
        guard Varint.read(bytes, at: &i) == 1, let codecValue = Varint.read(bytes, at: &i),
              let codec = Codec(rawValue: codecValue) else {
            throw IPFSError.invalidCID(text, reason: "not CIDv1 with the dag-pb or raw codec")
        }
        guard Varint.read(bytes, at: &i) == 0x12, Varint.read(bytes, at: &i) == 32, bytes.count - i == 32 else {
            throw IPFSError.invalidCID(text, reason: "multihash is not sha2-256")
        }
        self.init(version: 1, codec: codec, digest: Array(bytes[i...]))
    }

    /// The sha2-256 multihash: 0x12 0x20 + digest.
    public var multihash: [UInt8] { [0x12, 0x20] + digest }

    /// The binary CID (v0: the multihash; v1: version, codec, multihash).
    public var bytes: [UInt8] {
        version == 0 ? multihash : [0x01] + Varint.encode(codec.rawValue) + multihash
    }

    /// The canonical string: base58btc for v0, multibase base32 ('b') for v1.
    public var description: String {
        version == 0 ? Multibase.base58(multihash) : "b" + Multibase.base32(bytes)
    }

    /// Decodes from the CID's string form.
    public init(from decoder: any Decoder) throws {
        try self.init(try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes as the CID's string form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
