#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing
@testable import GraniteMedia

/// The one append-log writer: every record whole and in one piece, whatever `write(2)` does
/// (fault injection: a `write` that returns short counts and fails with EINTR), also with many
/// threads appending at once; a torn last line is ended before the next record.
@Suite struct AppendLogTests {
    struct Failure: Error, Equatable { let path: String, operation: String, code: Int32 }
    struct Record: Codable, Equatable { let thread: Int, index: Int, text: String }

    static func tempPath(_ name: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("granite-appendlog-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir + "/" + name
    }

    static func failure(_ path: String, _ operation: String, _ code: Int32) -> Failure { Failure(path: path, operation: operation, code: code) }

    static func lines(_ path: String) throws -> [String] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// Fault injection: every other call fails with EINTR, the others write at most 3 bytes.
    final class FaultInjectingWrite: Sendable {
        let calls = Atomic<Int>(0)
        let interrupted = Atomic<Int>(0)
        let short = Atomic<Int>(0)
        var call: AppendLog<Failure>.WriteCall {
            { [self] fd, buffer, count in
                if calls.add(1, ordering: .relaxed).newValue % 2 == 0 {
                    interrupted.add(1, ordering: .relaxed)
                    errno = EINTR
                    return -1
                }
                if count > 3 { short.add(1, ordering: .relaxed) }
                return write(fd, buffer, min(count, 3))
            }
        }
    }

    @Test func shortWritesAndEINTRStillWriteEveryRecordWhole() throws {
        let path = Self.tempPath("log.jsonl")
        let faults = FaultInjectingWrite()
        let log = try AppendLog(path: path, sync: .eachRecord, failure: Self.failure, faultInjection: faults.call)
        let records = (0..<20).map { Record(thread: 0, index: $0, text: "line \($0) with a / and a \n newline") }
        for record in records { try log.appendLine(record) }
        try log.close()
        #expect(faults.interrupted.load(ordering: .relaxed) > 20 && faults.short.load(ordering: .relaxed) > 20,
                "the hook did interrupt and shorten the writes")
        let lines = try Self.lines(path)
        #expect(lines.last == "", "the file ends with a newline")
        let decoded = try lines.dropLast().map { try JSONDecoder().decode(Record.self, from: Data($0.utf8)) }
        #expect(decoded == records)
        #expect(lines[0].hasPrefix(#"{"index":0,"text":"line 0 with a / and a \n newline","thread":0}"#),
                "one line per record: keys sorted, slashes plain, the newline escaped")
        #expect(throws: Failure(path: path, operation: "write after close", code: EBADF)) { try log.appendLine(records[0]) }
    }

    @Test func aFailedWriteIsTheOwnersTypedErrorNamingTheFile() throws {
        let path = Self.tempPath("full.jsonl")
        let log = try AppendLog(path: path, sync: .onRequest, failure: Self.failure, faultInjection: { _, _, _ in errno = ENOSPC; return -1 })
        #expect(throws: Failure(path: path, operation: "write", code: ENOSPC)) { try log.append(Array("x\n".utf8)) }
        #expect(throws: Failure(path: "/nonexistent-granite/log", operation: "open", code: ENOENT)) {
            try AppendLog(path: "/nonexistent-granite/log", sync: .onRequest, failure: Self.failure)
        }
    }

    @Test func concurrentAppendsNeverInterleave() async throws {
        let path = Self.tempPath("shared.jsonl")
        let faults = FaultInjectingWrite()   // short writes make interleaving likely if the lock were missing
        let log = try AppendLog(path: path, sync: .atClose, failure: Self.failure, faultInjection: faults.call)
        let (threads, each) = (8, 150)
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<threads {
                group.addTask {
                    for index in 0..<each { try? log.appendLine(Record(thread: thread, index: index, text: String(repeating: "g", count: index % 40))) }
                }
            }
        }
        try log.close()
        let decoded = try Self.lines(path).dropLast().map { try JSONDecoder().decode(Record.self, from: Data($0.utf8)) }
        #expect(decoded.count == threads * each)
        for thread in 0..<threads {
            #expect(decoded.filter { $0.thread == thread }.map(\.index) == Array(0..<each), "thread \(thread)'s records whole and in order")
        }
    }

    @Test func aTornLastLineIsEndedBeforeTheNextRecord() throws {
        let path = Self.tempPath("torn.jsonl")
        let whole = try AppendLog<Failure>.jsonLine(Record(thread: 1, index: 1, text: "kept"))
        try Data(whole + Array(#"{"index":2,"te"#.utf8)).write(to: URL(fileURLWithPath: path))   // a crash mid-append
        let log = try AppendLog(path: path, sync: .eachRecord, failure: Self.failure)
        try log.appendLine(Record(thread: 1, index: 3, text: "new"))
        try log.close()
        let lines = try Self.lines(path)
        #expect(lines == [String(decoding: whole.dropLast(), as: UTF8.self), #"{"index":2,"te"#,
                          #"{"index":3,"text":"new","thread":1}"#, ""])
        // Reopening a clean log adds nothing.
        try AppendLog(path: path, sync: .atClose, failure: Self.failure).close()
        #expect(try Self.lines(path).count == 4)
        // truncate starts empty.
        try AppendLog(path: path, truncate: true, sync: .onRequest, failure: Self.failure).append(Array("a\n".utf8))
        #expect(try Self.lines(path) == ["a", ""])
        try AppendLog.sync(path: path, failure: Self.failure)
    }
}
