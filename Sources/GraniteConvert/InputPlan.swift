import Foundation
import GraniteCodecs

/// One input file and where its output goes (relative to the output folder).
struct WorkItem: Sendable, Equatable {
    var input: String
    /// Output path relative to the output folder, extension already set when `--format` is given.
    var output: String
    /// Another input that already claims `output` (the later one fails instead of overwriting).
    var collidesWith: String?
    /// The input's path relative to its INPUT root (its name for a file given directly): what
    /// `ShardSpec` hashes, so the split does not depend on where the INPUT is mounted.
    var relativePath: String
}

/// Expands INPUT operands: files as given, folders recursively (image extensions only, hidden
/// entries and the output folder itself skipped), keeping the folder's relative layout.
enum InputPlan {
    static let imageExtensions: Set<String> = ["jpg", "jpeg", "jpe", "png", "webp", "avif", "heic", "heif", "hif", "gif", "tif", "tiff", "jxl"]
    /// Extensions of formats that are read only, and what their outputs become without `--format`.
    static let readOnlyExtensions: [String: ImageFormat] = ["heic": .jpeg, "heif": .jpeg, "hif": .jpeg, "gif": .png]

    static func expand(_ inputs: [String], outputDirectory: String, format: ImageFormat?, name: OutputName? = nil) throws(ConvertError) -> [WorkItem] {
        let fm = FileManager.default
        let template = name
        let outReal = URL(fileURLWithPath: outputDirectory).resolvingSymlinksInPath().path
        var items = [WorkItem]()
        for input in inputs {
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: input, isDirectory: &isDir) else {
                throw .inputMissing(path: input, reason: "no such file or folder")
            }
            if !isDir.boolValue {
                let name = (input as NSString).lastPathComponent
                items.append(WorkItem(input: input, output: rename(name, format, name: template), relativePath: name))
                continue
            }
            // The walker does not descend into a symlink, so a linked INPUT folder is walked at its target.
            let root = URL(fileURLWithPath: input).resolvingSymlinksInPath().path
            guard let walker = fm.enumerator(atPath: root) else {
                throw .inputMissing(path: input, reason: "cannot list folder")
            }
            var found = [String]()
            while let rel = walker.nextObject() as? String {
                let full = (root as NSString).appendingPathComponent(rel)
                let name = (rel as NSString).lastPathComponent
                if name.hasPrefix(".") {
                    walker.skipDescendants()
                    continue
                }
                if walker.fileAttributes?[.type] as? FileAttributeType == .typeDirectory {
                    if URL(fileURLWithPath: full).resolvingSymlinksInPath().path == outReal { walker.skipDescendants() }
                    continue
                }
                if imageExtensions.contains((name as NSString).pathExtension.lowercased()) { found.append(rel) }
            }
            for rel in found.sorted() {
                items.append(WorkItem(input: (input as NSString).appendingPathComponent(rel), output: rename(rel, format, name: template), relativePath: rel))
            }
        }
        var claimed = [String: String]()
        for i in items.indices {
            if let first = claimed[items[i].output] {
                items[i].collidesWith = first
            } else {
                claimed[items[i].output] = items[i].input
            }
        }
        return items
    }

    /// `rel` named by the `--name` template, else with its extension replaced by the format's (kept as is without `--format`).
    static func rename(_ rel: String, _ format: ImageFormat?, name: OutputName? = nil) -> String {
        let format = format ?? readOnlyExtensions[(rel as NSString).pathExtension.lowercased()]
        if let name { return name.apply(rel, format: format) }
        guard let format else { return rel }
        return ((rel as NSString).deletingPathExtension as NSString).appendingPathExtension(format.fileExtension) ?? rel
    }
}
