import Foundation
import XCTest

/// GraniteCam's public surface is what a program needs (the pipeline recipe, stages, sinks, the
/// app and its summary, settings, the preview server), held by a checked-in list: a declaration
/// made public (or no longer public) shows here and must be a decision, reviewed in the diff of
/// `PublicAPI.txt`. `GRANITE_UPDATE_API=1 swift test --filter PublicAPITests` rewrites the list.
final class PublicAPITests: XCTestCase {
    static let module = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/GraniteCam")
    static let list = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("PublicAPI.txt")

    /// Every `public` declaration of the module, one per line (`File.swift: declaration`), sorted;
    /// a declaration's body and default values are left out, so only the signature counts.
    static func surface() throws -> [String] {
        let files = try FileManager.default.contentsOfDirectory(atPath: module.path).filter { $0.hasSuffix(".swift") }.sorted()
        var lines: [String] = []
        for file in files {
            let text = try String(contentsOf: module.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                guard trimmed.hasPrefix("public ") else { continue }
                var declaration = trimmed
                if let brace = declaration.firstIndex(of: "{") { declaration = String(declaration[..<brace]) }
                if let equals = declaration.range(of: " = ") { declaration = String(declaration[..<equals.lowerBound]) }
                lines.append("\(file): \(declaration.trimmingCharacters(in: .whitespaces))")
            }
        }
        return lines.sorted()
    }

    func testPublicSurfaceIsTheCheckedInList() throws {
        let current = try Self.surface()
        if ProcessInfo.processInfo.environment["GRANITE_UPDATE_API"] == "1" {
            try (current.joined(separator: "\n") + "\n").write(to: Self.list, atomically: true, encoding: .utf8)
        }
        let listed = try String(contentsOf: Self.list, encoding: .utf8).split(separator: "\n").map(String.init)
        let added = current.filter { !listed.contains($0) }, removed = listed.filter { !current.contains($0) }
        XCTAssertTrue(added.isEmpty && removed.isEmpty,
                      "GraniteCam's public API changed (GRANITE_UPDATE_API=1 rewrites Tests/GraniteCamTests/PublicAPI.txt):\n"
                        + added.map { "+ " + $0 }.joined(separator: "\n") + "\n" + removed.map { "- " + $0 }.joined(separator: "\n"))
        // 215: SegmentationStage (issue 38), the person-mask model stage beside DepthEstimatorStage;
        // 216: DepthStage.mapSize (a mask stays at the model's size) and its default.
        XCTAssertLessThan(current.count, 216, "the surface stays what programs need")
    }
}
