import Foundation
import GraniteCodecs

/// Joins the manifest parts that `granite convert --shard I/N` runs left in an output folder into
/// one `manifest.json`.
///
/// ```
/// manifest.shard-0-of-N.json ─┐
/// manifest.shard-1-of-N.json ─┼─► all N there? no journal left? each output once? one settings? ─► manifest.json (atomic)
///             …               ─┘                       any "no" ─► report, manifest.json left as it was
/// ```
/// The merged manifest is what one unsharded run over the same inputs writes: entries sorted by
/// output, the parts' settings, no shard field. The parts stay, so a shard can be re-run (it
/// resumes from its part) and merged again.
public enum ManifestMerge {
    /// An output listed by more than one part.
    public struct Duplicate: Sendable, Equatable {
        /// The output path, relative to the output folder.
        public var output: String
        /// The shards whose parts list it, ascending.
        public var shards: [Int]
    }

    /// What a merge found, and whether it wrote `manifest.json`.
    public struct Report: Sendable, Equatable {
        /// The output folder.
        public var directory: String
        /// The shard count N.
        public var count: Int
        /// Shards whose part was read, ascending.
        public var found: [Int] = []
        /// Shards with no part in the folder, ascending.
        public var missing: [Int] = []
        /// Shards that left a journal (killed, or still running): their part may lack outputs on disk.
        public var unfinished: [Int] = []
        /// Outputs listed by two parts or more, sorted by output.
        public var duplicates: [Duplicate] = []
        /// Shards whose settings differ from those of the lowest shard found.
        public var settingsDiffer: [Int] = []
        /// Entries in the merged manifest.
        public var entries = 0
        /// Whether `manifest.json` was written (only when the merge is clean).
        public var written = false

        /// True when every part is there and finished, no output is listed twice, and the settings agree.
        public var isClean: Bool { missing.isEmpty && unfinished.isEmpty && duplicates.isEmpty && settingsDiffer.isEmpty }

        /// `0` when clean, `ConvertExitCode.partialFailure` (2) otherwise.
        public var exitCode: Int32 { isClean ? ConvertExitCode.success : ConvertExitCode.partialFailure }

        /// One line per problem, naming the shard (I of N) or the output.
        public var problems: [String] {
            var lines = [String]()
            for i in missing {
                let name = ShardSpec(uncheckedIndex: i, count: count).manifestName
                lines.append("missing: shard \(i) of \(count) (no \(name)); run it with --shard \(i)/\(count)")
            }
            for i in unfinished {
                let name = ShardSpec(uncheckedIndex: i, count: count).journalName
                lines.append("unfinished: shard \(i) of \(count) left \(name) (killed, or still running); re-run it with --shard \(i)/\(count)")
            }
            for d in duplicates {
                lines.append("duplicate: \(d.output) is listed by shards \(d.shards.map(String.init).joined(separator: ", ")) of \(count)")
            }
            for i in settingsDiffer {
                lines.append("settings differ: shard \(i) of \(count) ran with other settings than shard \(found.first ?? 0)")
            }
            return lines
        }

        /// The line printed at the end.
        public var summary: String {
            written ? "merged \(found.count) of \(count) parts: \(entries) entries -> \(directory)/\(Manifest.fileName)"
                : "\(Manifest.fileName) not written: \(problems.count) problem\(problems.count == 1 ? "" : "s") (\(found.count) of \(count) parts found)"
        }
    }

    /// Merges the parts in `directory` and, when the merge is clean, writes `manifest.json` atomically.
    ///
    /// `count` picks the parts of N shards when the folder holds parts of several counts; without it
    /// the folder must hold parts of one count. Throws when there is nothing to merge, a part cannot
    /// be read, or `manifest.json` cannot be written; missing, unfinished or duplicated parts are in
    /// the report (and leave `manifest.json` as it was).
    public static func merge(directory: String, count: Int? = nil) throws(ConvertError) -> (manifest: Manifest, report: Report) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw .inputMissing(path: directory, reason: "cannot list folder: \(error.localizedDescription)")
        }
        var parts = [Int: Set<Int>](), journals = [Int: Set<Int>]()
        for name in names {
            guard let file = ShardSpec.fromFileName(name) else { continue }
            if file.isJournal {
                journals[file.shard.count, default: []].insert(file.shard.index)
            } else {
                parts[file.shard.count, default: []].insert(file.shard.index)
            }
        }
        let n: Int
        if let count {
            guard count >= 1 else { throw .badOption(option: "--shards", value: "\(count)", reason: "must be at least 1") }
            n = count
        } else {
            let counts = Set(parts.keys).union(journals.keys).sorted()
            guard let only = counts.first else {
                throw .inputMissing(path: directory, reason: "no manifest parts (manifest.shard-I-of-N.json) to merge")
            }
            guard counts.count == 1 else {
                throw .output(path: directory, reason: "holds parts of \(counts.map(String.init).joined(separator: ", ")) shards; pick one with --shards N")
            }
            n = only
        }

        var report = Report(directory: directory, count: n)
        report.found = (parts[n] ?? []).sorted()
        report.missing = (0..<n).filter { !(parts[n] ?? []).contains($0) }
        report.unfinished = (journals[n] ?? []).sorted()
        var listedBy = [String: [Int]]()
        var merged = [String: Manifest.Entry]()
        var settings: ConvertSettings?
        for i in report.found {
            let shard = ShardSpec(uncheckedIndex: i, count: n)
            let path = directory + "/" + shard.manifestName
            let part: Manifest
            do {
                part = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
            } catch {
                throw .output(path: path, reason: "unreadable manifest part: \(error)")
            }
            if let shardField = part.shard, shardField != shard {
                throw .output(path: path, reason: "the part says it is shard \(shardField), not \(shard)")
            }
            if i == report.found.first { settings = part.settings } else if part.settings != settings { report.settingsDiffer.append(i) }
            for entry in part.entries {
                listedBy[entry.output, default: []].append(i)
                merged[entry.output] = entry
            }
        }
        report.duplicates = listedBy.filter { $0.value.count > 1 }.map { Duplicate(output: $0.key, shards: $0.value) }
            .sorted { $0.output < $1.output }
        let manifest = Manifest(settings: settings, entries: merged.values.sorted { $0.output < $1.output })
        report.entries = manifest.entries.count
        guard report.isClean else { return (manifest, report) }
        let path = directory + "/" + Manifest.fileName
        do {
            try AtomicFile.write(try Manifest.encode(manifest), to: path)
        } catch {
            throw .output(path: path, reason: "cannot write manifest: \(error)")
        }
        report.written = true
        return (manifest, report)
    }
}
