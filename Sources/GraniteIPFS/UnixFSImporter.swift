import Foundation

/// One file, directory or symlink of an import, named as Kubo's `add` names it.
public struct ImportedEntry: Sendable, Hashable, Codable {
    /// Path inside the add: `photo.png`, `dir/a.png`, `dir`; "" for the wrapping directory.
    public var name: String
    /// Its CID.
    public var cid: CID
    /// Cumulative DAG size (Kubo's `Size`: blocks of this node and all below it).
    public var dagSize: UInt64
    /// File content bytes (the sum of all files below, for a directory).
    public var contentSize: UInt64
    /// True for directories (and the wrapper).
    public var isDirectory: Bool
}

/// What an import produced: every entry in Kubo's output order, and the roots `add` pins.
public struct ImportResult: Sendable {
    /// Files as they are read, directories after their contents, the wrapper last.
    public var entries: [ImportedEntry]
    /// The top-level entries (one per input path), or only the wrapper with `wrapWithDirectory`.
    public var roots: [ImportedEntry]
}

/// Computes UnixFS CIDs locally, with no node, exactly as Kubo's importer would.
///
/// ```
/// paths ─► directory walk (sorted) ─► UnixFSFileBuilder per file ─► dag-pb directories
///        └─► optional BlockSink (CAR export) receives every block
/// ```
public struct UnixFSImporter: Sendable {
    /// The DAG settings.
    public let options: ImportOptions

    /// An importer for `options`; throws ``IPFSError/invalidOptions(_:)`` if Kubo would refuse them.
    public init(options: ImportOptions) throws(IPFSError) {
        try options.validate()
        self.options = options
    }

    /// The CID of `data` as one file.
    public func cid(of data: some Collection<UInt8>) throws(IPFSError) -> CID {
        try fileEntry(of: Array(data), sink: nil).cid
    }

    /// Imports `paths` (files, directories, symlinks); with `carPath`, also writes a CARv1 of the DAG.
    ///
    /// - Parameter progress: called with the number of file bytes read so far.
    public func importPaths(_ paths: [String], carPath: String? = nil,
                            progress: ((UInt64) -> Void)? = nil) throws(IPFSError) -> ImportResult {
        let car = try carPath.map { path throws(IPFSError) in try CARWriter(path: path) }
        let result = try importPaths(paths, sink: car, progress: progress)
        try car?.finish(roots: result.roots.map(\.cid))
        return result
    }

    /// Imports `paths`, handing every block to `sink` (children first, the roots last).
    func importPaths(_ paths: [String], sink: (any BlockSink)?, progress: ((UInt64) -> Void)?) throws(IPFSError) -> ImportResult {
        var walk = Walk(options: options, sink: sink, progress: progress)
        var roots: [ImportedEntry] = []
        var names = Set<String>()
        for path in paths {
            let name = URL(fileURLWithPath: path).standardizedFileURL.lastPathComponent
            guard names.insert(name).inserted else { throw IPFSError.duplicateName(name) }
            let (entry, _) = try walk.add(path: path, name: name)
            roots.append(entry)
        }
        if options.wrapWithDirectory {
            let wrapper = try walk.directory(path: "(wrapper)", name: "", children: roots.map { ($0, $0.name) })
            roots = [wrapper]
        }
        return ImportResult(entries: walk.entries, roots: roots)
    }

    func fileEntry(of data: [UInt8], sink: (any BlockSink)?) throws(IPFSError) -> DAGEntry {
        var builder = UnixFSFileBuilder(options: options, sink: sink)
        let chunkSize = options.chunkSize
        // withUnsafeBytes does not carry typed errors: the chunks' outcome comes out in a Result.
        let added = data.withUnsafeBytes { all in
            Result { () throws(IPFSError) in
                var offset = 0
                while offset < all.count {
                    let end = min(offset + chunkSize, all.count)
                    try builder.addChunk(UnsafeRawBufferPointer(rebasing: all[offset..<end]))
                    offset = end
                }
            }
        }
        try added.get()
        return try builder.finish()
    }
}

/// The recursive part of an import: walks the file system and records entries.
private struct Walk {
    /// Name + CID bytes of a directory's links from which Kubo shards it (256 KiB).
    static let shardingThreshold = 262_144
    let options: ImportOptions
    let sink: (any BlockSink)?
    let progress: ((UInt64) -> Void)?
    var entries: [ImportedEntry] = []
    var bytesRead: UInt64 = 0

    init(options: ImportOptions, sink: (any BlockSink)?, progress: ((UInt64) -> Void)?) {
        self.options = options
        self.sink = sink
        self.progress = progress
    }

    /// Adds `path` under output name `name`; returns its entry and its base name.
    mutating func add(path: String, name: String) throws(IPFSError) -> (ImportedEntry, String) {
        let base = String(name.split(separator: "/").last ?? "")
        switch try FileKind(path: path) {
        case .regular:
            var reader = try ChunkReader(path: path, chunkSize: options.chunkSize)
            var builder = UnixFSFileBuilder(options: options, sink: sink)
            while let chunk = try reader.next() {
                try builder.addChunk(chunk)
                bytesRead += UInt64(chunk.count)
                progress?(bytesRead)
            }
            let root = try builder.finish()
            let entry = ImportedEntry(name: name, cid: root.cid, dagSize: root.tsize,
                                      contentSize: root.fileSize, isDirectory: false)
            entries.append(entry)
            return (entry, base)
        case let .symlink(target):
            let block = DagPB.node(links: [], data: DagPB.unixfs(.symlink, data: Array(target.utf8)))
            let cid = CID(version: options.cidVersion, codec: .dagPB, block: block)
            try sink?.put(cid: cid, bytes: block)
            let entry = ImportedEntry(name: name, cid: cid, dagSize: UInt64(block.count), contentSize: 0, isDirectory: false)
            entries.append(entry)
            return (entry, base)
        case .directory:
            let children = try FileKind.sortedChildren(of: path)
            var built: [(ImportedEntry, String)] = []
            for child in children {
                built.append(try add(path: path + "/" + child, name: name + "/" + child))
            }
            return (try directory(path: path, name: name, children: built), base)
        }
    }

    /// Builds the UnixFS directory of `children` (entry, link name): a basic one with links sorted
    /// by name bytes, or, as Kubo does once the name and CID bytes of its links reach 256 KiB
    /// (boxo's `HAMTShardingSize`), a HAMT-sharded one (``HAMTShard``).
    mutating func directory(path: String, name: String, children: [(ImportedEntry, String)]) throws(IPFSError) -> ImportedEntry {
        let sorted = children.sorted { $0.1.utf8.lexicographicallyPrecedes($1.1.utf8) }
        let estimate = sorted.reduce(0) { $0 + $1.1.utf8.count + $1.0.cid.bytes.count }
        let cid: CID, dagSize: UInt64
        if estimate >= Self.shardingThreshold {
            (cid, dagSize) = try HAMTShard.build(sorted.map { (Array($0.1.utf8), $0.0.cid, $0.0.dagSize) },
                                                 cidVersion: options.cidVersion, path: path, sink: sink)
        } else {
            let links = sorted.map { DagPB.Link(cid: $0.0.cid, name: Array($0.1.utf8), tsize: $0.0.dagSize) }
            let block = DagPB.node(links: links, data: DagPB.unixfs(.directory))
            cid = CID(version: options.cidVersion, codec: .dagPB, block: block)
            try sink?.put(cid: cid, bytes: block)
            dagSize = UInt64(block.count) + sorted.reduce(0) { $0 + $1.0.dagSize }
        }
        let entry = ImportedEntry(name: name, cid: cid, dagSize: dagSize,
                                  contentSize: sorted.reduce(0) { $0 + $1.0.contentSize }, isDirectory: true)
        entries.append(entry)
        return entry
    }
}

extension UnixFSImporter {
    /// The wrapping directory of one in-memory file named `name`.
    func wrap(name: String, data: [UInt8]) throws(IPFSError) -> ImportedEntry {
        let file = try fileEntry(of: data, sink: nil)
        let link = DagPB.Link(cid: file.cid, name: Array(name.utf8), tsize: file.tsize)
        let block = DagPB.node(links: [link], data: DagPB.unixfs(.directory))
        return ImportedEntry(name: "", cid: CID(version: options.cidVersion, codec: .dagPB, block: block),
                             dagSize: UInt64(block.count) + file.tsize, contentSize: file.fileSize, isDirectory: true)
    }
}
