#if canImport(Glibc)
import Glibc
#endif
import Foundation
import GraniteProcess
import XCTest

/// ChildProgram against real programs from Debian's coreutils, bash and python3.
final class ChildProgramTests: XCTestCase {
    func testCapturesBothStreamsAndTheStatus() throws {
        let result = try ChildProgram.shell("printf out; printf err >&2; exit 3")
        XCTAssertEqual(result.out, "out")
        XCTAssertEqual(result.err, "err")
        XCTAssertEqual(result.status, 3)
        XCTAssertEqual(result.reason, .exit)
        XCTAssertEqual(result.shellStatus, 3)
    }

    func testLargeOutputOnBothStreamsAndLargeInputDoNotBlock() throws {
        // 4 MiB in, the same 4 MiB back on stdout and 1 MiB on stderr: far past a pipe's 64 KiB.
        let input = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 13) }
        let result = try ChildProgram.run("/bin/bash", ["-c", "head -c 1048576 /dev/zero >&2; cat"], stdin: input)
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.stdout, input)
        XCTAssertEqual(result.stderr.count, 1 << 20)
    }

    func testAChildThatStopsReadingEndsCleanly() throws {
        // head reads 10 bytes and exits; writing the rest must not raise SIGPIPE in this process.
        let result = try ChildProgram.run("/usr/bin/head", ["-c", "10"], stdin: [UInt8](repeating: 65, count: 8 << 20))
        XCTAssertEqual(result.out, String(repeating: "A", count: 10))
        XCTAssertEqual(result.status, 0)
    }

    func testASignalIsReportedAsSuch() throws {
        let running = try ChildProgram.launch("/bin/sleep", ["30"])
        kill(running.pid, SIGKILL)
        let result = running.finish()
        XCTAssertEqual(result.reason, .uncaughtSignal)
        XCTAssertEqual(result.status, SIGKILL)
        XCTAssertEqual(result.shellStatus, 128 + SIGKILL)
        XCTAssertLessThan(result.seconds, 10)
        XCTAssertEqual(running.finish().status, SIGKILL, "finish() twice gives the same result")
    }

    func testEnvironmentIsLaidOverOurs() throws {
        setenv("GRANITE_PROCESS_TEST_REMOVED", "1", 1)
        let result = try ChildProgram.shell("echo \"$GRANITE_PROCESS_TEST_SET:${GRANITE_PROCESS_TEST_REMOVED-unset}:$HOME\"",
                                            environment: ["GRANITE_PROCESS_TEST_SET": "yes", "GRANITE_PROCESS_TEST_REMOVED": nil])
        XCTAssertEqual(result.out, "yes:unset:\(ProcessInfo.processInfo.environment["HOME"] ?? "")\n")
    }

    func testOutputToAFileAndDiscarded() throws {
        let path = NSTemporaryDirectory() + "granite-childprogram-\(getpid()).txt"
        defer { unlink(path) }
        let result = try ChildProgram.run("/bin/bash", ["-c", "echo to-file; echo gone >&2"], stdout: .file(path), stderr: .discard)
        XCTAssertEqual(result.stdout, [])
        XCTAssertEqual(result.stderr, [])
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "to-file\n")
    }

    func testPathIsSearchedAndAMissingProgramIsATypedError() throws {
        XCTAssertEqual(try ChildProgram.output("echo", ["found"]), "found\n")
        XCTAssertThrowsError(try ChildProgram.run("granite-no-such-program", [])) { error in
            XCTAssertEqual(error as? ChildProgramError, .spawn(program: "granite-no-such-program", errno: ENOENT))
            XCTAssertTrue("\(error)".contains("granite-no-such-program"), "\(error)")
        }
    }

    func testOutputThrowsOnAFailureWithItsLastErrorLine() throws {
        XCTAssertThrowsError(try ChildProgram.output("/bin/bash", ["-c", "echo first >&2; echo 'why it failed' >&2; exit 4"])) { error in
            XCTAssertEqual(error as? ChildProgramError, .failed(program: "/bin/bash", status: 4, stderr: "why it failed"))
        }
    }

    func testPeakMemoryAndCPUTimeAreTheChilds() throws {
        // python3 touches 96 MiB and spins 0.3 s of CPU. Its peak is at least that; above, it is never
        // below this process's peak (posix_spawn is a vfork: Linux carries our high-water mark through
        // the exec), so the upper bound is whichever is larger, plus python's own.
        let result = try ChildProgram.run("/usr/bin/python3", ["-c", """
            import time
            b = bytearray(96 << 20)
            for i in range(0, len(b), 4096): b[i] = 1
            end = time.process_time() + 0.3
            while time.process_time() < end: pass
            """])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertGreaterThan(result.peakKiB, 96 << 10)
        var mine = rusage()
        getrusage(RUSAGE_SELF.rawValue, &mine)
        XCTAssertLessThan(result.peakKiB, max(Int(mine.ru_maxrss), 96 << 10) + (64 << 10))
        XCTAssertGreaterThanOrEqual(result.cpuSeconds, 0.3)
        XCTAssertGreaterThanOrEqual(result.seconds, result.cpuSeconds * 0.5)
    }
}
