import Foundation
#if canImport(Glibc)
import Glibc
#endif
import GraniteMedia

/// Writes a CARv1 file (`ipfs dag import` compatible) as blocks arrive, atomically.
///
/// ```
/// put(cid, block) ─► FILE.blocks.partial (AppendLog; varint | cid | block, deduplicated)
/// finish(roots)   ─► AtomicWriter (GraniteMedia): header(roots) + blocks ─fsync─► rename ─► FILE
/// ```
/// The roots are only known at the end and the header comes first, so blocks wait in a side
/// file. Nothing appears under the final name unless the whole CAR was written.
final class CARWriter: BlockSink {
    private let path: String
    private let blocksPath: String
    private var blocks: AppendLog<IPFSError>?
    private var seen = Set<[UInt8]>()

    init(path: String) throws(IPFSError) {
        self.path = path
        self.blocksPath = path + ".blocks.partial"
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
                throw IPFSError.carWrite(path: path, reason: "cannot create its folder: \(error.localizedDescription)")
            }
        }
        // A scratch file, copied into the CAR (which is synced) at the end: never synced itself.
        blocks = try AppendLog(path: blocksPath, truncate: true, sync: .onRequest) { _, operation, code in
            IPFSError.carWrite(path: path, reason: "\(operation) \(path).blocks.partial: \(String(cString: strerror(code)))")
        }
    }

    deinit {
        blocks = nil
        unlink(blocksPath)
    }

    func put(cid: CID, block: UnsafeRawBufferPointer) throws(IPFSError) {
        let cidBytes = cid.bytes
        guard seen.insert(cidBytes).inserted, let blocks else { return }
        var head = Varint.encode(UInt64(cidBytes.count + block.count))
        head += cidBytes
        try blocks.append(head)
        try blocks.append(block)
    }

    /// Writes the header with `roots`, then the blocks, and moves the file to its final name.
    func finish(roots: [CID]) throws(IPFSError) {
        guard blocks != nil else { return }
        let path = self.path
        let header = Self.header(roots: roots)
        let out = try AtomicWriter(path: path) { IPFSError.carWrite(path: path, reason: "\($1) \($0): \(String(cString: strerror($2)))") }
        try out.append(Varint.encode(UInt64(header.count)) + header)
        try out.append(contentsOf: blocksPath)
        try out.commit()
        self.blocks = nil
        unlink(blocksPath)
    }

    /// The dag-cbor header `{"roots": [CID…], "version": 1}` (keys in length-first order).
    static func header(roots: [CID]) -> [UInt8] {
        var out: [UInt8] = [0xA2, 0x65] + Array("roots".utf8)
        cborHead(major: 4, roots.count, into: &out)
        for root in roots {
            out += [0xD8, 0x2A]  // tag 42: CID
            let cid = [0x00] + root.bytes  // multibase identity prefix
            cborHead(major: 2, cid.count, into: &out)
            out += cid
        }
        out += [0x67] + Array("version".utf8) + [0x01]
        return out
    }

    private static func cborHead(major: UInt8, _ count: Int, into out: inout [UInt8]) {
        switch count {
        case ..<24: out.append(major << 5 | UInt8(count))
        case ..<256: out += [major << 5 | 24, UInt8(count)]
        default: out += [major << 5 | 25, UInt8(count >> 8), UInt8(count & 0xFF)]
        }
    }
}
