/// dag-pb blocks carrying UnixFS data, encoded byte for byte as Kubo (boxo, go-codec-dagpb) does.
///
/// ```
/// PBNode { repeated PBLink Links = 2; optional bytes Data = 1; }   // links first on the wire
/// PBLink { optional bytes Hash = 1; optional string Name = 2; optional uint64 Tsize = 3; }
/// UnixFS Data { Type = 1; Data = 2; filesize = 3; repeated blocksizes = 4 (unpacked); hashType = 5; fanout = 6 }
/// ```
enum DagPB {
    /// UnixFS `Data.DataType` values used here.
    enum UnixFSType: UInt64 {
        case directory = 1
        case file = 2
        case symlink = 4
        case hamtShard = 5
    }

    /// One outgoing link: its CID, name ("" inside files) and cumulative DAG size.
    struct Link {
        var cid: CID
        var name: [UInt8]
        var tsize: UInt64
    }

    /// The UnixFS `Data` message. `data` is left out when nil or empty, as Kubo does; `hashType`
    /// and `fanout` only for HAMT shards.
    static func unixfs(_ type: UnixFSType, data: [UInt8]? = nil, fileSize: UInt64? = nil, blockSizes: [UInt64] = [],
                       hashType: UInt64? = nil, fanout: UInt64? = nil) -> [UInt8] {
        var w = ProtobufWriter(capacity: 16 + (data?.count ?? 0) + blockSizes.count * 5)
        w.field(1, type.rawValue)
        if let data, !data.isEmpty { w.field(2, bytes: data) }
        if let fileSize { w.field(3, fileSize) }
        for size in blockSizes { w.field(4, size) }
        if let hashType { w.field(5, hashType) }
        if let fanout { w.field(6, fanout) }
        return w.bytes
    }

    /// A dag-pb block with `links` (in the given order) and `data`.
    static func node(links: [Link], data: [UInt8]) -> [UInt8] {
        var w = ProtobufWriter(capacity: links.count * 48 + data.count + 8)
        for link in links {
            var l = ProtobufWriter(capacity: 48 + link.name.count)
            l.field(1, bytes: link.cid.bytes)
            l.field(2, bytes: link.name)  // written even when empty, as go-merkledag does
            l.field(3, link.tsize)
            w.field(2, bytes: l.bytes)
        }
        w.field(1, bytes: data)
        return w.bytes
    }

    /// The bytes of a non-raw file leaf that come before and after its chunk.
    ///
    /// A leaf is `PBNode{Data: UnixFS{Type: File, Data: chunk, filesize: n}}`; splitting it lets
    /// the importer hash the chunk in place without copying it into a new block.
    static func fileLeafFrame(chunkLength n: Int) -> (prefix: [UInt8], suffix: [UInt8]) {
        let size = UInt64(n)
        var suffix = ProtobufWriter(capacity: 12)
        suffix.field(3, size)
        var inner = ProtobufWriter(capacity: 12)
        inner.field(1, UnixFSType.file.rawValue)
        if n > 0 {
            inner.varint(2 << 3 | 2)
            inner.varint(size)
        }
        let unixfsLength = inner.bytes.count + n + suffix.bytes.count
        var prefix = ProtobufWriter(capacity: 16)
        prefix.varint(1 << 3 | 2)
        prefix.varint(UInt64(unixfsLength))
        return (prefix.bytes + inner.bytes, suffix.bytes)
    }
}
