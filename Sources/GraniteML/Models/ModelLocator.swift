import Foundation

/// Finds a model file and its description along the search path. Never relative to the
/// working directory alone, so `granite depth photo.jpg` works from any folder:
///
/// 1. an explicit path (`--model PATH`, `DepthEstimator(modelPath:)`), a file or a folder;
/// 2. `GRANITE_MODEL_PATH` (folders or files, `:`-separated);
/// 3. `$XDG_DATA_HOME/granite/models` (default `~/.local/share/granite/models`): the user's models;
/// 4. `PREFIX/share/granite/models` for an executable installed as `PREFIX/bin/NAME`
///    (`scripts/install` puts the default model there);
/// 5. the repository's `Models/`, found by walking up from the executable (`.build/release/granite`
///    or a test bundle inside the checkout) to the folder holding `Package.swift` and `Models/`.
public enum ModelLocator {
    /// The environment variable that names extra model folders or files.
    public static let environmentVariable = "GRANITE_MODEL_PATH"

    /// The folders (or files) searched after an explicit path, in order.
    public static func searchFolders(environment: [String: String] = ProcessInfo.processInfo.environment,
                                     executable: String? = currentExecutable()) -> [String] {
        var folders = (environment[environmentVariable] ?? "").split(separator: ":").map(String.init)
        folders.append(userModelFolder(environment: environment))
        if let executable {
            let bin = URL(fileURLWithPath: executable).deletingLastPathComponent()
            folders.append(bin.deletingLastPathComponent().appendingPathComponent("share/granite/models").path)
            if let repository = repositoryModels(above: bin) { folders.append(repository) }
        }
        var seen = Set<String>()
        return folders.filter { seen.insert($0).inserted }
    }

    /// `$XDG_DATA_HOME/granite/models`, or `~/.local/share/granite/models` when it is unset.
    public static func userModelFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return (xdg as NSString).appendingPathComponent("granite/models")
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return (home as NSString).appendingPathComponent(".local/share/granite/models")
    }

    /// The running executable's resolved path (`/proc/self/exe`).
    public static func currentExecutable() -> String? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first
    }

    /// The `Models/` folder of the SwiftPM checkout that contains `folder`, if any.
    static func repositoryModels(above folder: URL) -> String? {
        let fm = FileManager.default
        var dir = folder.standardizedFileURL
        while dir.path != "/" {
            let models = dir.appendingPathComponent("Models")
            if fm.fileExists(atPath: dir.appendingPathComponent("Package.swift").path), fm.fileExists(atPath: models.path) {
                return models.path
            }
            dir.deleteLastPathComponent()
        }
        return nil
    }

    /// The path of `description.file`, or of `explicit` when given.
    public static func locate(_ description: ModelDescription, explicit: String? = nil,
                              environment: [String: String] = ProcessInfo.processInfo.environment,
                              executable: String? = currentExecutable()) throws(MLError) -> String {
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
        for folder in searchFolders(environment: environment, executable: executable) {
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

    /// The description of the model file at `path`: a sibling `NAME.json`, a `*.json` in a search
    /// folder whose `file` matches, or a built-in one; nil when none is known.
    public static func description(forModelAt path: String) throws(MLError) -> ModelDescription? {
        let fm = FileManager.default
        let sidecar = ((path as NSString).deletingPathExtension as NSString).appendingPathExtension("json")!
        if fm.fileExists(atPath: sidecar) { return try ModelDescription.load(path: sidecar) }
        let file = (path as NSString).lastPathComponent
        for folder in searchFolders() {
            guard let names = try? fm.contentsOfDirectory(atPath: folder) else { continue }
            for name in names.sorted() where name.hasSuffix(".json") {
                let d = try ModelDescription.load(path: (folder as NSString).appendingPathComponent(name))
                if d.file == file { return d }
            }
        }
        return ModelDescription.builtIn.first { $0.file == file }
    }
}
