import Foundation

/// The one way tests find and run a program: the package's own executables (built beside the
/// tests by `swift build --build-tests`) and outside tools (ImageMagick, ffmpeg, exiftool, a shell).
///
/// Standard output and standard error are read at the same time, so a child that writes a lot to
/// one of them never blocks on a full pipe while the test waits on the other.
///
/// ```swift
/// let granite = try ChildProgram.built("granite")
/// let result = try ChildProgram.run(granite, ["convert", input, "-o", out])
/// XCTAssertEqual(result.status, 0, result.err)
/// ```
public enum ChildProgram {
    /// What a finished child left: its exit status and everything it wrote.
    public struct Result: Sendable {
        /// The exit status (or the signal number, when it was killed).
        public let status: Int32
        /// Why it ended: a normal exit or an uncaught signal.
        public let reason: Process.TerminationReason
        /// Standard output, as bytes.
        public let stdout: [UInt8]
        /// Standard error, as bytes.
        public let stderr: [UInt8]
        /// Standard output as UTF-8 text.
        public var out: String { String(decoding: stdout, as: UTF8.self) }
        /// Standard error as UTF-8 text.
        public var err: String { String(decoding: stderr, as: UTF8.self) }
    }

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

    /// Starts `executable` with `arguments`, its environment being this process's with `environment`
    /// laid over it (a `nil` value removes a variable); standard output and error go to pipes.
    /// For tests that signal or watch a child while it runs; ``finish(_:)`` collects it.
    public static func launch(_ executable: String, _ arguments: [String], environment: [String: String?] = [:],
                              stdin: [UInt8]? = nil) throws -> Running {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = stdin.map { _ in Pipe() }
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
        let running = Running(process: process, out: out, err: err)
        if let input, let stdin {
            let writer = Thread {
                input.fileHandleForWriting.write(Data(stdin))
                try? input.fileHandleForWriting.close()
            }
            writer.start()
        }
        return running
    }

    /// Runs `executable` to the end and returns what it wrote (see ``launch(_:_:environment:stdin:)``).
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String?] = [:],
                           stdin: [UInt8]? = nil) throws -> Result {
        try launch(executable, arguments, environment: environment, stdin: stdin).finish()
    }

    /// Runs `script` with `/bin/bash -c` and returns what it wrote.
    public static func shell(_ script: String, environment: [String: String?] = [:]) throws -> Result {
        try run("/bin/bash", ["-c", script], environment: environment)
    }

    /// A started child whose output is being read.
    public final class Running: @unchecked Sendable {
        /// The child.
        public let process: Process
        private let lock = NSLock()
        private var errBytes: [UInt8]?
        private let out: Pipe
        private let errDone = DispatchSemaphore(value: 0)

        init(process: Process, out: Pipe, err: Pipe) {
            self.process = process
            self.out = out
            let reader = Thread { [lock, errDone] in
                let bytes = [UInt8](err.fileHandleForReading.readDataToEndOfFile())
                lock.lock()
                self.errBytes = bytes
                lock.unlock()
                errDone.signal()
            }
            reader.start()
        }

        /// The child's process id (for `kill`).
        public var pid: pid_t { process.processIdentifier }

        /// Reads standard output to its end, waits for the child, and returns what it left.
        public func finish() -> Result {
            let stdout = [UInt8](out.fileHandleForReading.readDataToEndOfFile())
            process.waitUntilExit()
            errDone.wait()
            lock.lock()
            defer { lock.unlock() }
            return Result(status: process.terminationStatus, reason: process.terminationReason,
                          stdout: stdout, stderr: errBytes ?? [])
        }
    }
}
