/// HAMT-sharded UnixFS directories, block for block as Kubo 0.22 builds them (boxo `unixfs/hamt`,
/// fanout 256, names hashed with the first 64 bits of MurmurHash3 x64_128).
///
/// ```
/// entries ─► hash(name) ─► slot = byte `depth` of the hash ─┬─ one entry:  link "XX" + name ─► entry
///                                                           └─ several:    link "XX" ─► child shard, depth + 1
/// shard block: links in slot order; Data = UnixFS{HAMTShard, bitfield of used slots, murmur3, 256}
/// ```
/// Insertion-only, so the shape depends on the set of names alone: the DAG Kubo makes when a
/// directory's links pass its 256 KiB estimate (the Kubo test node's own core is the oracle).
enum HAMTShard {
    /// A directory entry to place: its name's hash, name, CID and cumulative DAG size.
    struct Item {
        var hash: UInt64
        var name: [UInt8]
        var cid: CID
        var tsize: UInt64
    }

    /// Slots per shard.
    static let fanout = 256
    /// The multicodec of murmur3-x64-64, the shard's `hashType`.
    static let murmur3x64_64: UInt64 = 0x22

    /// The root shard of `entries` (link name, entry); blocks go to `sink`, children first.
    static func build(_ entries: [(name: [UInt8], cid: CID, tsize: UInt64)], cidVersion: Int, path: String,
                      sink: (any BlockSink)?) throws(IPFSError) -> (cid: CID, tsize: UInt64) {
        let items = entries.map { Item(hash: murmur3(ArraySlice($0.name)), name: $0.name, cid: $0.cid, tsize: $0.tsize) }
        return try shard(items, depth: 0, cidVersion: cidVersion, path: path, total: entries.count, sink: sink)
    }

    private static func shard(_ items: [Item], depth: Int, cidVersion: Int, path: String, total: Int,
                              sink: (any BlockSink)?) throws(IPFSError) -> (cid: CID, tsize: UInt64) {
        var slots = [[Item]](repeating: [], count: fanout)
        for item in items { slots[Int(truncatingIfNeeded: (item.hash >> (56 - 8 * UInt64(depth))) & 0xFF)].append(item) }
        var links: [DagPB.Link] = []
        var bitfield = [UInt8](repeating: 0, count: fanout / 8)
        for (slot, group) in slots.enumerated() where !group.isEmpty {
            bitfield[bitfield.count - 1 - slot / 8] |= 1 << (slot % 8)
            let prefix = hex(slot)
            if group.count == 1 {
                links.append(DagPB.Link(cid: group[0].cid, name: prefix + group[0].name, tsize: group[0].tsize))
            } else {
                // 64 bits of hash are eight levels; names that agree on all of them cannot be placed.
                guard depth < 7 else { throw IPFSError.directoryNeedsSharding(path: path, links: total) }
                let child = try shard(group, depth: depth + 1, cidVersion: cidVersion, path: path, total: total, sink: sink)
                links.append(DagPB.Link(cid: child.cid, name: prefix, tsize: child.tsize))
            }
        }
        // go-bitfield's Bytes(): big-endian, leading zero bytes dropped (as big.Int.Bytes() was).
        let used = Array(bitfield.drop(while: { $0 == 0 }))
        let block = DagPB.node(links: links, data: DagPB.unixfs(.hamtShard, data: used, hashType: murmur3x64_64,
                                                                fanout: UInt64(fanout)))
        let cid = CID(version: cidVersion, codec: .dagPB, block: block)
        try sink?.put(cid: cid, bytes: block)
        return (cid, UInt64(block.count) + links.reduce(0) { $0 + $1.tsize })
    }

    /// Upper-case two-digit hex, the slot's link-name prefix.
    private static func hex(_ slot: Int) -> [UInt8] {
        let digits = Array("0123456789ABCDEF".utf8)
        return [digits[slot >> 4], digits[slot & 15]]
    }

    /// The first 64 bits of MurmurHash3 x64_128 with seed 0 (what Go's `murmur3.New64` sums).
    static func murmur3(_ data: ArraySlice<UInt8>) -> UInt64 {
        let c1: UInt64 = 0x87c3_7b91_1142_53d5, c2: UInt64 = 0x4cf5_ad43_2745_937f
        func load(_ at: Int, _ count: Int) -> UInt64 {
            var value: UInt64 = 0
            for i in 0..<count { value |= UInt64(data[data.startIndex + at + i]) << (8 * UInt64(i)) }
            return value
        }
        func fmix(_ k: UInt64) -> UInt64 {
            var k = k
            k ^= k >> 33
            k = k &* 0xff51_afd7_ed55_8ccd
            k ^= k >> 33
            k = k &* 0xc4ce_b9fe_1a85_ec53
            return k ^ (k >> 33)
        }
        var h1: UInt64 = 0, h2: UInt64 = 0
        let whole = data.count / 16 * 16
        for at in stride(from: 0, to: whole, by: 16) {
            h1 ^= (load(at, 8) &* c1).rotated(31) &* c2
            h1 = (h1.rotated(27) &+ h2) &* 5 &+ 0x52dc_e729
            h2 ^= (load(at + 8, 8) &* c2).rotated(33) &* c1
            h2 = (h2.rotated(31) &+ h1) &* 5 &+ 0x3849_5ab5
        }
        let tail = data.count - whole
        if tail > 8 { h2 ^= (load(whole + 8, tail - 8) &* c2).rotated(33) &* c1 }
        if tail > 0 { h1 ^= (load(whole, min(tail, 8)) &* c1).rotated(31) &* c2 }
        h1 ^= UInt64(data.count)
        h2 ^= UInt64(data.count)
        h1 = h1 &+ h2
        h2 = h2 &+ h1
        h1 = fmix(h1)
        h2 = fmix(h2)
        return h1 &+ h2
    }
}

private extension UInt64 {
    func rotated(_ r: UInt64) -> UInt64 { (self << r) | (self >> (64 - r)) }
}
