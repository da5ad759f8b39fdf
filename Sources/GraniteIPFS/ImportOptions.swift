/// How files become a DAG: the settings that decide every CID, sent explicitly to the node too.
public struct ImportOptions: Sendable, Hashable, Codable {
    /// 0 or 1.
    public var cidVersion: Int
    /// Leaves as raw blocks (CIDv1 codec raw) instead of dag-pb UnixFS nodes.
    public var rawLeaves: Bool
    /// Fixed chunk size in bytes (Kubo's `size-N` chunker); at most 1 MiB.
    public var chunkSize: Int
    /// Put the added paths inside one directory (`wrap-with-directory`).
    public var wrapWithDirectory: Bool

    /// Maximum links in a file node of the balanced layout (boxo's `DefaultLinksPerBlock`).
    public static let maxLinks = 174
    /// Kubo's default chunk size, 256 KiB.
    public static let defaultChunkSize = 262_144

    /// Options for `cidVersion`; raw leaves default to on with CIDv1, as Kubo does.
    public init(cidVersion: Int = 1, rawLeaves: Bool? = nil, chunkSize: Int = ImportOptions.defaultChunkSize,
                wrapWithDirectory: Bool = false) {
        self.cidVersion = cidVersion
        self.rawLeaves = rawLeaves ?? (cidVersion == 1)
        self.chunkSize = chunkSize
        self.wrapWithDirectory = wrapWithDirectory
    }

    /// Throws ``IPFSError/invalidOptions(_:)`` unless these are settings Kubo accepts.
    public func validate() throws(IPFSError) {
        guard cidVersion == 0 || cidVersion == 1 else {
            throw IPFSError.invalidOptions("cid-version must be 0 or 1, not \(cidVersion)")
        }
        guard chunkSize > 0, chunkSize <= 1 << 20 else {
            throw IPFSError.invalidOptions("chunk size must be 1 B to 1 MiB, not \(chunkSize)")
        }
    }

    /// The `chunker` parameter value.
    var chunker: String { "size-\(chunkSize)" }
}
