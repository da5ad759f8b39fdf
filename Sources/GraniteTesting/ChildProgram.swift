import Foundation
@_exported import GraniteProcess

/// Finding the package's own executables from a test. Running them (and outside tools) is
/// GraniteProcess's ``ChildProgram``, re-exported here, so a test imports only GraniteTesting:
///
/// ```swift
/// let granite = try ChildProgram.built("granite")
/// let result = try ChildProgram.run(granite, ["convert", input, "-o", out])
/// XCTAssertEqual(result.status, 0, result.err)
/// ```
extension ChildProgram {
    /// The folder holding the package's build products (the executables beside the test bundle).
    public static var productsFolder: URL {
        // The tests run as `.build/<config>/GranitePackageTests.xctest` (a file on Linux, a bundle
        // folder elsewhere): the products folder is the one holding the `.xctest`.
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = URL(fileURLWithPath: "/")
        for component in me.pathComponents.dropFirst() {
            if component.hasSuffix(".xctest") { return folder }
            folder.appendPathComponent(component)
        }
        return me.deletingLastPathComponent()
    }

    /// The path of the package's executable `name`, built beside the tests; a missing one is an unmet
    /// ``Prerequisite`` (a skip locally, a failure under `CI=true`) saying how to build it.
    public static func built(_ name: String, fileID: StaticString = #fileID, filePath: StaticString = #filePath,
                             line: UInt = #line, column: UInt = #column) throws -> String {
        let path = productsFolder.appendingPathComponent(name).path
        try Prerequisite.require(FileManager.default.isExecutableFile(atPath: path),
                                 "\(name) is not built beside the tests (\(path)); run `swift build --build-tests`",
                                 fileID: fileID, filePath: filePath, line: line, column: column)
        return path
    }
}
