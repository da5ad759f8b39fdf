import Foundation
import GraniteCodecs

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
        /// The colourised depth preview PNG made beside the output (`--depth`).
        public var depthPreview: String? = nil
        /// The metadata written into the output (`icc`, `exif`, `xmp`); nil in manifests from
        /// before metadata was kept.
        public var metadata: [MetadataKind]? = nil
    }

    /// What wrote the manifest.
    public var tool: String = "granite convert"
    /// The manifest format's version.
    public var version: Int = 1
    /// The settings of the last run.
    public var settings: ConvertSettings?
    /// Every output, sorted by output path.
    public var entries: [Entry] = []

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
actor ManifestStore {
    nonisolated let directory: String
    /// Entries from an earlier run (manifest plus any journal it left), by output path.
    nonisolated let previous: [String: Manifest.Entry]
    /// A warning about an unreadable earlier manifest, if any.
    nonisolated let loadWarning: String?
    private var current: [String: Manifest.Entry]
    private var journal: Int32 = -1

    init(directory: String) {
        self.directory = directory
        var entries = [String: Manifest.Entry]()
        var warning: String?
        let decoder = JSONDecoder()
        let manifestPath = directory + "/" + Manifest.fileName
        if let data = FileManager.default.contents(atPath: manifestPath) {
            if let manifest = try? decoder.decode(Manifest.self, from: data) {
                for e in manifest.entries { entries[e.output] = e }
            } else {
                warning = "\(manifestPath): unreadable manifest ignored; existing outputs will be redone"
            }
        }
        if let data = FileManager.default.contents(atPath: directory + "/" + Manifest.journalName) {
            // A killed run may leave a torn last line: skip lines that do not parse.
            for line in data.split(separator: UInt8(ascii: "\n")) {
                if let e = try? decoder.decode(Manifest.Entry.self, from: Data(line)) { entries[e.output] = e }
            }
        }
        previous = entries
        current = entries
        loadWarning = warning
    }

    /// Opens the journal for appending.
    func open() throws(ConvertError) {
        let path = directory + "/" + Manifest.journalName
        journal = Glibc.open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard journal >= 0 else { throw .output(path: path, reason: "cannot open journal: \(String(cString: strerror(errno)))") }
        // A killed run may have left a torn last line: start ours on a fresh line.
        var st = stat()
        if fstat(journal, &st) == 0, st.st_size > 0 {
            var last: UInt8 = 0
            if pread(journal, &last, 1, st.st_size - 1) == 1, last != UInt8(ascii: "\n") {
                var newline = UInt8(ascii: "\n")
                _ = Glibc.write(journal, &newline, 1)
            }
        }
    }

    /// Records an output about to be renamed into place.
    func record(_ entry: Manifest.Entry) throws(ConvertError) {
        current[entry.output] = entry
        guard journal >= 0, var line = try? JSONEncoder().encode(entry) else { return }
        line.append(UInt8(ascii: "\n"))
        let n = line.withUnsafeBytes { Glibc.write(journal, $0.baseAddress, $0.count) }
        // Synced before the output is renamed into place, so after a crash every final file is known.
        guard n == line.count, fdatasync(journal) == 0 else {
            throw .output(path: directory + "/" + Manifest.journalName, reason: "journal write failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Writes `manifest.json` atomically and removes the journal.
    func finish(settings: ConvertSettings) throws(ConvertError) {
        let manifest = Manifest(settings: settings, entries: current.values.sorted { $0.output < $1.output })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let path = directory + "/" + Manifest.fileName
        do {
            let data = try encoder.encode(manifest)
            try AtomicFile.write([UInt8](data) + [UInt8(ascii: "\n")], to: path)
        } catch {
            throw .output(path: path, reason: "cannot write manifest: \(error)")
        }
        if journal >= 0 { close(journal); journal = -1 }
        unlink(directory + "/" + Manifest.journalName)
    }
}
