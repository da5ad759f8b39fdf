import Foundation
import IssueReporting
import Testing
#if canImport(XCTest)
import XCTest
#endif

/// Skip-or-fail for tests that need something outside the code under test (a Vulkan device, a
/// reference runtime in `.venv`, a test node, a built program): locally a missing prerequisite
/// skips the test, prints why, and is counted as a skip; under `CI=true` it is a failure, because
/// there every real tier must run. The one copy of this rule, for XCTest and Swift Testing alike.
///
/// ```swift
/// try Prerequisite.require(FileManager.default.fileExists(atPath: python), "no .venv (run scripts/tiers/pre-ml.sh)")
/// guard let context = try? GPUContext.shared() else { try Prerequisite.unmet("no Vulkan device") }
/// ```
public enum Prerequisite {
    /// True under CI (`CI=true`), where a missing prerequisite fails the test.
    public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// Returns when `condition` holds; otherwise skips (locally) or fails (CI) with `reason`.
    public static func require(_ condition: @autoclosure () throws -> Bool, _ reason: @autoclosure () -> String,
                               fileID: StaticString = #fileID, filePath: StaticString = #filePath,
                               line: UInt = #line, column: UInt = #column) throws {
        guard try !condition() else { return }
        try unmet(reason(), fileID: fileID, filePath: filePath, line: line, column: column)
    }

    /// Ends the running test: skipped locally (the reason printed and reported to the test
    /// framework as a skip), failed under `CI=true`.
    public static func unmet(_ reason: String, fileID: StaticString = #fileID, filePath: StaticString = #filePath,
                             line: UInt = #line, column: UInt = #column) throws -> Never {
        try unmet(reason, failing: isCI, fileID: fileID, filePath: filePath, line: line, column: column)
    }

    /// For hardware that CI machines do not have (a camera on this host): returns when `condition`
    /// holds; otherwise the test is skipped with `reason`, under `CI=true` too, but only while the
    /// tier script `coveredBy` (a path from the package root, e.g. the vivid VM tier) is in place
    /// to check the same code on an emulated device there; without it the test fails. A skip here is
    /// counted and listed with its reason like any other, never a silent pass.
    public static func requireHardware(_ condition: @autoclosure () throws -> Bool, _ reason: @autoclosure () -> String,
                                       coveredBy tier: String, packageRoot: URL,
                                       fileID: StaticString = #fileID, filePath: StaticString = #filePath,
                                       line: UInt = #line, column: UInt = #column) throws {
        guard try !condition() else { return }
        let script = packageRoot.appendingPathComponent(tier).standardized.path
        let covered = FileManager.default.isExecutableFile(atPath: script)
        let why = covered ? "\(reason()); covered by \(tier)" : "\(reason()), and \(script), which should cover it, is missing"
        try unmet(why, failing: !covered, fileID: fileID, filePath: filePath, line: line, column: column)
    }

    /// The one place a test ends for a missing prerequisite: `failing` reports an issue and throws
    /// ``Missing``; otherwise the test is skipped (Swift Testing: cancelled; XCTest: `XCTSkip`).
    static func unmet(_ reason: String, failing: Bool, fileID: StaticString, filePath: StaticString,
                      line: UInt, column: UInt) throws -> Never {
        if failing {
            reportIssue("CI=true and a prerequisite is missing: \(reason)", fileID: fileID, filePath: filePath, line: line, column: column)
            throw Missing(reason: reason)
        }
        print("skipped: \(reason)")
        if Test.current != nil {
            try Test.cancel(Comment(rawValue: "skipped: \(reason)"),
                            sourceLocation: SourceLocation(fileID: "\(fileID)", filePath: "\(filePath)",
                                                           line: Int(line), column: Int(column)))
        }
        #if canImport(XCTest)
        throw XCTSkip(reason, file: filePath, line: line)
        #else
        throw Missing(reason: reason)
        #endif
    }

    /// The error that ends a test whose prerequisite is missing under CI (already reported as a failure).
    public struct Missing: Error, CustomStringConvertible {
        /// What was missing.
        public let reason: String
        public var description: String { "prerequisite missing: \(reason)" }
    }
}
