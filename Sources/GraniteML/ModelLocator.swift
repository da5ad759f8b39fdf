import Foundation

/// Finds a model file and its description along the search path: an explicit path, then
/// `GRANITE_MODEL_PATH` (folders or files, `:`-separated), then `Models/`, then `../shared/models`
/// (both relative to the working directory).
public enum ModelLocator {
    /// The environment variable that names extra model folders or files.
    public static let environmentVariable = "GRANITE_MODEL_PATH"

    /// The folders searched after an explicit path, in order.
    public static func searchFolders(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        let fromEnvironment = (environment[environmentVariable] ?? "").split(separator: ":").map(String.init)
        return fromEnvironment + ["Models", "../shared/models"]
    }

    /// The path of `description.file`, or of `explicit` when given.
    public static func locate(_ description: ModelDescription, explicit: String? = nil,
                              environment: [String: String] = ProcessInfo.processInfo.environment) throws(MLError) -> String {
        let fm = FileManager.default
        var searched: [String] = []
        if let explicit {
            var isDirectory: ObjCBool = false
            if fm.fileExists(atPath: explicit, isDirectory: &isDirectory) {
                if !isDirectory.boolValue { return explicit }
                let inside = (explicit as NSString).appendingPathComponent(description.file)
                if fm.fileExists(atPath: inside) { return inside }
                searched.append(inside)
            } else {
                searched.append(explicit)
            }
            throw .modelNotFound(name: description.file, searched: searched)
        }
        for folder in searchFolders(environment: environment) {
            var isDirectory: ObjCBool = false
            if fm.fileExists(atPath: folder, isDirectory: &isDirectory), !isDirectory.boolValue {
                if (folder as NSString).lastPathComponent == description.file { return folder }
                searched.append(folder)
                continue
            }
            let candidate = (folder as NSString).appendingPathComponent(description.file)
            if fm.fileExists(atPath: candidate) { return candidate }
            searched.append(candidate)
        }
        throw .modelNotFound(name: description.file, searched: searched)
    }

    /// The description of the model file at `path`: a sibling `NAME.json`, a `Models/*.json` whose
    /// `file` matches, or a built-in one; nil when none is known.
    public static func description(forModelAt path: String) throws(MLError) -> ModelDescription? {
        let fm = FileManager.default
        let sidecar = ((path as NSString).deletingPathExtension as NSString).appendingPathExtension("json")!
        if fm.fileExists(atPath: sidecar) { return try ModelDescription.load(path: sidecar) }
        let file = (path as NSString).lastPathComponent
        if let names = try? fm.contentsOfDirectory(atPath: "Models") {
            for name in names.sorted() where name.hasSuffix(".json") {
                let d = try ModelDescription.load(path: "Models/\(name)")
                if d.file == file { return d }
            }
        }
        return ModelDescription.builtIn.first { $0.file == file }
    }
}
