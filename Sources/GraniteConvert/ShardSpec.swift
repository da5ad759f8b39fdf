import Crypto
import Foundation

/// One shard of N: the deterministic 1/N of the inputs that a `granite convert --shard I/N` run takes.
///
/// An input belongs to shard `I` when the first 4 bytes of the SHA-256 of its path relative to its
/// INPUT root (UTF-8, as found on disk; a file given directly is keyed by its name), read as a
/// big-endian integer, are `I` modulo `N`. That needs no coordinator and does not depend on where the
/// INPUT folder is mounted, so N machines can split one folder; a shell gives the same answer:
/// `echo $(( 0x$(printf %s "$REL" | sha256sum | cut -c1-8) % N ))`. Each shard writes its own
/// manifest part and journal (`manifest.shard-I-of-N.json`, `.journal`); `ManifestMerge` joins the parts.
public struct ShardSpec: Codable, Sendable, Hashable, CustomStringConvertible {
    /// This shard, `0..<count`.
    public let index: Int
    /// How many shards the inputs are split into (at least 1).
    public let count: Int

    /// The environment variables `auto/N` reads, in order: a Kubernetes Indexed Job's, then a
    /// Slurm job array's (used as is, so an array must be numbered from 0: `--array=0-3`).
    public static let indexVariables = ["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"]

    /// Shard `index` of `count`; throws when `count < 1` or `index` is not in `0..<count`.
    public init(index: Int, count: Int) throws(ConvertError) {
        guard count >= 1 else {
            throw .badOption(option: "--shard", value: "\(index)/\(count)", reason: "the shard count must be at least 1")
        }
        guard (0..<count).contains(index) else {
            throw .badOption(option: "--shard", value: "\(index)/\(count)",
                             reason: "the shard index must be in 0...\(count - 1) (shards are numbered from 0)")
        }
        self.index = index
        self.count = count
    }

    /// Shard `index` of `count`, both already known to be valid.
    init(uncheckedIndex index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// Parses `I/N`, or `auto/N` (I from `JOB_COMPLETION_INDEX`, else `SLURM_ARRAY_TASK_ID`).
    public static func parse(_ text: String,
                             environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConvertError) -> ShardSpec {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let count = Int(parts[1]) else {
            throw .badOption(option: "--shard", value: text, reason: "expected I/N or auto/N, e.g. 0/4 (shard 0 of 4)")
        }
        guard count >= 1 else { throw .badOption(option: "--shard", value: text, reason: "the shard count must be at least 1") }
        if parts[0] == "auto" {
            guard let name = indexVariables.first(where: { !(environment[$0] ?? "").isEmpty }), let value = environment[name] else {
                throw .badOption(option: "--shard", value: text,
                                 reason: "auto needs \(indexVariables.joined(separator: " or ")) in the environment (neither is set)")
            }
            guard let index = Int(value.trimmingCharacters(in: .whitespaces)) else {
                throw .badOption(option: "--shard", value: text, reason: "\(name)='\(value)' is not a number")
            }
            guard (0..<count).contains(index) else {
                let hint = name == "SLURM_ARRAY_TASK_ID" ? "; number the array from 0 (--array=0-\(count - 1))" : ""
                throw .badOption(option: "--shard", value: text, reason: "\(name)=\(index) is not in 0...\(count - 1)\(hint)")
            }
            return try ShardSpec(index: index, count: count)
        }
        guard let index = Int(parts[0]) else {
            throw .badOption(option: "--shard", value: text, reason: "expected I/N or auto/N, e.g. 0/4 (shard 0 of 4)")
        }
        return try ShardSpec(index: index, count: count)
    }

    /// The shard (of `count`) that the input at `relativePath` (relative to its INPUT root) belongs to.
    public static func index(of relativePath: String, count: Int) -> Int {
        let digest = SHA256.hash(data: Array(relativePath.utf8))
        var value: UInt64 = 0
        for byte in digest.prefix(4) { value = value << 8 | UInt64(byte) }
        return Int(value % UInt64(max(count, 1)))
    }

    /// True when the input at `relativePath` belongs to this shard.
    public func contains(_ relativePath: String) -> Bool {
        Self.index(of: relativePath, count: count) == index
    }

    /// `I/N`.
    public var description: String { "\(index)/\(count)" }

    /// This shard's manifest part in the output folder: `manifest.shard-I-of-N.json`.
    public var manifestName: String { "manifest.shard-\(index)-of-\(count).json" }

    /// This shard's journal in the output folder: `manifest.shard-I-of-N.journal`.
    public var journalName: String { "manifest.shard-\(index)-of-\(count).journal" }

    /// The shard a manifest part or journal file name belongs to (`manifest.shard-I-of-N.json`
    /// or `.journal`), with which of the two it is; nil for any other name.
    public static func fromFileName(_ name: String) -> (shard: ShardSpec, isJournal: Bool)? {
        let prefix = "manifest.shard-"
        guard name.hasPrefix(prefix) else { return nil }
        let isJournal: Bool
        let core: Substring
        if name.hasSuffix(".json") {
            isJournal = false
            core = name.dropFirst(prefix.count).dropLast(".json".count)
        } else if name.hasSuffix(".journal") {
            isJournal = true
            core = name.dropFirst(prefix.count).dropLast(".journal".count)
        } else {
            return nil
        }
        let numbers = core.split(separator: "-", omittingEmptySubsequences: false)
        guard numbers.count == 3, numbers[1] == "of", numbers[0].allSatisfy(\.isASCII), numbers[2].allSatisfy(\.isASCII),
              let i = Int(numbers[0]), let n = Int(numbers[2]), let shard = try? ShardSpec(index: i, count: n),
              shard.manifestName == prefix + core + ".json" else { return nil }
        return (shard, isJournal)
    }
}
