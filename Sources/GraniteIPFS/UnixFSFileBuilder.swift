import Crypto

/// Receives each block of a DAG as it is built (a CAR file being written, a test).
protocol BlockSink: AnyObject {
    /// Stores `block` under `cid`; called children first, the root last.
    func put(cid: CID, block: UnsafeRawBufferPointer) throws(IPFSError)
}

extension BlockSink {
    /// Stores `block` under `cid` (an array; `withUnsafeBytes` does not carry typed errors).
    func put(cid: CID, bytes block: [UInt8]) throws(IPFSError) {
        let result = block.withUnsafeBytes { raw in Result { () throws(IPFSError) in try put(cid: cid, block: raw) } }
        try result.get()
    }
}

/// One built node: its CID, cumulative DAG size (`Tsize`) and the file bytes under it.
struct DAGEntry {
    var cid: CID
    var tsize: UInt64
    var fileSize: UInt64
}

/// Streams fixed-size chunks into a UnixFS file DAG in boxo's balanced layout.
///
/// ```
/// chunks ─► leaves (raw or dag-pb) ─► level 0 ─(174 full)─► node ─► level 1 ─► … ─► root
/// ```
/// A level is packed into a parent as soon as it holds 174 links; `finish()` packs what is
/// left level by level, so the tree matches Kubo's balanced builder for every file size.
struct UnixFSFileBuilder {
    private let options: ImportOptions
    private let sink: (any BlockSink)?
    private var levels: [[DAGEntry]] = [[]]
    private var leafCount = 0
    private var fullFrame: (prefix: [UInt8], suffix: [UInt8])

    init(options: ImportOptions, sink: (any BlockSink)?) {
        self.options = options
        self.sink = sink
        self.fullFrame = DagPB.fileLeafFrame(chunkLength: options.chunkSize)
    }

    /// Adds one chunk: `options.chunkSize` bytes, or fewer for the last one.
    mutating func addChunk(_ chunk: UnsafeRawBufferPointer) throws(IPFSError) {
        leafCount += 1
        let leaf: DAGEntry
        if options.rawLeaves {
            var hasher = SHA256()
            hasher.update(bufferPointer: chunk)
            let cid = CID(version: 1, codec: .raw, digest: Array(hasher.finalize()))
            try sink?.put(cid: cid, block: chunk)
            leaf = DAGEntry(cid: cid, tsize: UInt64(chunk.count), fileSize: UInt64(chunk.count))
        } else {
            let frame = chunk.count == options.chunkSize ? fullFrame : DagPB.fileLeafFrame(chunkLength: chunk.count)
            var hasher = SHA256()
            hasher.update(data: frame.prefix)
            hasher.update(bufferPointer: chunk)
            hasher.update(data: frame.suffix)
            let cid = CID(version: options.cidVersion, codec: .dagPB, digest: Array(hasher.finalize()))
            if let sink {
                let block = frame.prefix + Array(chunk) + frame.suffix
                try sink.put(cid: cid, bytes: block)
            }
            let length = frame.prefix.count + chunk.count + frame.suffix.count
            leaf = DAGEntry(cid: cid, tsize: UInt64(length), fileSize: UInt64(chunk.count))
        }
        try push(leaf, level: 0)
    }

    /// Completes the DAG and returns its root (an empty file is one empty leaf, as in Kubo).
    mutating func finish() throws(IPFSError) -> DAGEntry {
        if leafCount == 0 {
            try addChunk(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        var level = 0
        while true {
            if level == levels.count - 1, levels[level].count == 1 { return levels[level][0] }
            if !levels[level].isEmpty { try pack(level) }
            level += 1
        }
    }

    private mutating func push(_ entry: DAGEntry, level: Int) throws(IPFSError) {
        if level == levels.count { levels.append([]) }
        levels[level].append(entry)
        if levels[level].count == ImportOptions.maxLinks { try pack(level) }
    }

    private mutating func pack(_ level: Int) throws(IPFSError) {
        let children = levels[level]
        levels[level] = []
        let sizes = children.map(\.fileSize)
        let total = sizes.reduce(0, +)
        let data = DagPB.unixfs(.file, fileSize: total, blockSizes: sizes)
        let links = children.map { DagPB.Link(cid: $0.cid, name: [], tsize: $0.tsize) }
        let block = DagPB.node(links: links, data: data)
        let cid = CID(version: options.cidVersion, codec: .dagPB, block: block)
        try sink?.put(cid: cid, bytes: block)
        let tsize = UInt64(block.count) + children.reduce(0) { $0 + $1.tsize }
        try push(DAGEntry(cid: cid, tsize: tsize, fileSize: total), level: level + 1)
    }
}
