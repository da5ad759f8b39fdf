import Foundation
import GraniteCodecs
import GraniteMedia

/// `manifest.json` in the output folder: what each output was made from, and how.
///
/// A re-run trusts an output only when its entry matches the input's SHA-256, the settings, and
/// the output file's own size and SHA-256; anything else is redone.
public struct Manifest: Codable, Sendable, Equatable {
    /// One output file.
    public struct Entry: Codable, Sendable, Equatable {
        /// The input as given on the command line (or found in an input folder).
        public var input: String
        /// The output's path relative to the output folder.
        public var output: String
        /// Input size in bytes.
        public var inputBytes: Int
        /// Input SHA-256, lowercase hex.
        public var inputSHA256: String
        /// Output size in bytes.
        public var outputBytes: Int
        /// Output SHA-256, lowercase hex.
        public var outputSHA256: String
        /// The settings the output was made with (`ConvertSettings.fingerprint`).
        public var settings: String
        /// Output width in pixels.
        public var width: Int
        /// Output height in pixels.
        public var height: Int
        /// The 16-bit depth PNG made beside the output (`--depth`), relative to the output folder.
        public var depth: String? = nil
        /// The colorised depth preview PNG made beside the output (`--depth`).
        public var depthPreview: String? = nil
        /// The metadata written into the output (`icc`, `exif`, `xmp`, `comment`); nil in manifests from
        /// before metadata was kept.
        public var metadata: [MetadataKind]? = nil
        /// What was wrong with the input but let it convert: decoder warnings `--fail-on` let
        /// through, metadata blocks or entries dropped (nil when none).
        public var warnings: [String]? = nil
        /// The output's IPFS CID (`--pin`); nil when the last run that wrote it did not pin.
        public var cid: String? = nil
        /// The depth PNG's CID (`--pin --depth`).
        public var depthCID: String? = nil
        /// The depth preview's CID (`--pin --depth`).
        public var depthPreviewCID: String? = nil
    }

    /// What wrote the manifest.
    public var tool: String = "granite convert"
    /// The manifest format's version.
    public var version: Int = 1
    /// The settings of the last run.
    public var settings: ConvertSettings?
    /// Every output, sorted by output path.
    public var entries: [Entry] = []
    /// In a shard's part (`manifest.shard-I-of-N.json`), which shard wrote it; nil in `manifest.json`.
    public var shard: ShardSpec? = nil
    /// The output folder's CID (`--pin`): `ipfs add -r` of the folder without the manifest files,
    /// so `ipfs://ROOT/OUTPUT` addresses each output. Written by a run that pinned, dropped by
    /// any later run that did not (its outputs may have changed).
    public var rootCID: String? = nil

    /// The file name inside the output folder.
    public static let fileName = "manifest.json"
    /// The append-only journal a running batch writes (folded into the manifest at the end).
    public static let journalName = "manifest.journal"

    /// An empty manifest.
    public init(settings: ConvertSettings? = nil, entries: [Entry] = []) {
        self.settings = settings
        self.entries = entries
    }
}

/// Holds the manifest while a batch runs: previous entries to check against, and a journal so a
/// killed run loses nothing that reached disk.
///
/// The journal line for an output is appended *before* the output is renamed into place, so
/// every file under a final name in the folder is one the manifest (or journal) knows about.
///
/// A shard (`--shard I/N`) keeps its own part and journal (`manifest.shard-I-of-N.json`,
/// `.journal`), so concurrent shards never write one file. Every run reads what all runs left in
/// the folder (`manifest.json`, parts, journals) to skip done outputs; a shard carries into its
/// part only its own earlier entries and those for the outputs it owns.
actor ManifestStore {
    nonisolated let directory: String
    /// The shard this run is, or nil for a whole run (`manifest.json`, `manifest.journal`).
    nonisolated let shard: ShardSpec?
    /// Entries from earlier runs (manifests, parts and journals left in the folder), by output path.
    nonisolated let previous: [String: Manifest.Entry]
    /// A warning about an unreadable earlier manifest, if any.
    nonisolated let loadWarning: String?
    private var current: [String: Manifest.Entry]
    private var journal: AppendLog<ConvertError>?

    /// The file this run writes at the end.
    nonisolated var manifestName: String { shard?.manifestName ?? Manifest.fileName }
    /// The journal this run appends to.
    nonisolated var journalName: String { shard?.journalName ?? Manifest.journalName }

    /// Loads what earlier runs left in `directory`; `owns` (for a shard) are the outputs its inputs make.
    init(directory: String, shard: ShardSpec? = nil, owns: Set<String> = []) {
        self.directory = directory
        self.shard = shard
        let manifestName = shard?.manifestName ?? Manifest.fileName
        let journalName = shard?.journalName ?? Manifest.journalName
        // Other runs' files first, so this run's own manifest and journal take precedence.
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
        var foreignManifests = [String](), foreignJournals = [String]()
        for name in names where name != manifestName && name != journalName {
            if name == Manifest.fileName { foreignManifests.insert(name, at: 0); continue }
            if name == Manifest.journalName { foreignJournals.append(name); continue }
            guard let part = ShardSpec.fromFileName(name) else { continue }
            if part.isJournal { foreignJournals.append(name) } else { foreignManifests.append(name) }
        }
        var entries = [String: Manifest.Entry]()
        var ownOutputs = Set<String>()
        var warnings = [String]()
        for name in foreignManifests + foreignJournals + [manifestName, journalName] {
            let path = directory + "/" + name
            let own = name == manifestName || name == journalName
            let loaded: [Manifest.Entry]
            if name.hasSuffix(".journal") {
                loaded = Self.journalEntries(path)
            } else {
                guard let data = FileManager.default.contents(atPath: path) else { continue }
                guard let manifest = try? JSONDecoder().decode(Manifest.self, from: data) else {
                    warnings.append("\(path): unreadable manifest ignored; existing outputs will be redone")
                    continue
                }
                loaded = manifest.entries
            }
            for e in loaded {
                entries[e.output] = e
                if own { ownOutputs.insert(e.output) }
            }
        }
        previous = entries
        current = shard == nil ? entries : entries.filter { ownOutputs.contains($0.key) || owns.contains($0.key) }
        loadWarning = warnings.isEmpty ? nil : warnings.joined(separator: "; ")
    }

    /// The whole lines of a journal (a killed run may leave a torn last line: lines that do not parse are skipped).
    static func journalEntries(_ path: String) -> [Manifest.Entry] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        let decoder = JSONDecoder()
        return data.split(separator: UInt8(ascii: "\n")).compactMap { try? decoder.decode(Manifest.Entry.self, from: Data($0)) }
    }

    /// Opens the journal for appending (a torn last line from a killed run is ended first).
    func open() throws(ConvertError) {
        // Synced per record: an output is renamed into place only once its line is on disk.
        journal = try AppendLog(path: directory + "/" + journalName, sync: .eachRecord) { path, operation, code in
            ConvertError.output(path: path, reason: "journal \(operation) failed: \(String(cString: strerror(code)))")
        }
    }

    /// Records an output about to be renamed into place; on disk when this returns, so after a
    /// crash every final file is known.
    func record(_ entry: Manifest.Entry) throws(ConvertError) {
        current[entry.output] = entry
        try journal?.appendLine(entry)
    }

    /// Writes this run's manifest (`manifest.json`, or the shard's part) atomically and removes its journal.
    func finish(settings: ConvertSettings) throws(ConvertError) {
        var manifest = Manifest(settings: settings, entries: current.values.sorted { $0.output < $1.output })
        manifest.shard = shard
        let path = directory + "/" + manifestName
        do {
            try AtomicFile.write(try Manifest.encode(manifest), to: path)
        } catch {
            throw .output(path: path, reason: "cannot write manifest: \(error)")
        }
        try? journal?.close()
        journal = nil
        unlink(directory + "/" + journalName)
    }
}

extension Manifest {
    /// True for the manifest's own files in an output folder (`manifest.json`, its journal, a
    /// shard's part or journal): not outputs, so not part of the folder's CID.
    public static func isManifestFile(_ name: String) -> Bool {
        name == fileName || name == journalName || ShardSpec.fromFileName(name) != nil
    }

    /// Records the output folder's CIDs in `directory`'s `manifest.json` (rewritten atomically):
    /// `rootCID`, and each entry's `cid`, `depthCID`, `depthPreviewCID` from `byPath` (paths
    /// relative to the folder); an entry whose file `byPath` lacks gets none.
    public static func recordCIDs(in directory: String, root: String, byPath: [String: String]) throws(ConvertError) {
        let path = directory + "/" + fileName
        guard let data = FileManager.default.contents(atPath: path),
              var manifest = try? JSONDecoder().decode(Manifest.self, from: data) else {
            throw .output(path: path, reason: "cannot read the manifest to record CIDs")
        }
        manifest.rootCID = root
        for i in manifest.entries.indices {
            let entry = manifest.entries[i]
            manifest.entries[i].cid = byPath[entry.output]
            manifest.entries[i].depthCID = entry.depth.flatMap { byPath[$0] }
            manifest.entries[i].depthPreviewCID = entry.depthPreview.flatMap { byPath[$0] }
        }
        do {
            try AtomicFile.write(try encode(manifest), to: path)
        } catch {
            throw .output(path: path, reason: "cannot write manifest: \(error)")
        }
    }

    /// The manifest as written to disk: pretty-printed JSON with sorted keys and a final newline.
    static func encode(_ manifest: Manifest) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return [UInt8](try encoder.encode(manifest)) + [UInt8(ascii: "\n")]
    }
}
