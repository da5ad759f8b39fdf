#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import GraniteMedia

/// Why ``ChildProgram`` could not run a program, or why a program it ran failed.
public enum ChildProgramError: Error, Equatable, CustomStringConvertible {
    /// `posix_spawn` refused to start `program` (not found, not executable…): `errno`.
    case spawn(program: String, errno: Int32)
    /// A pipe to the child could not be made: `errno`.
    case pipe(program: String, errno: Int32)
    /// `program` ran but exited with `status` (128 + N for signal N); `stderr` is its last line.
    case failed(program: String, status: Int32, stderr: String)

    /// One line naming the program and what went wrong.
    public var description: String {
        switch self {
        case let .spawn(program, code): "cannot start \(program): \(String(cString: strerror(code)))"
        case let .pipe(program, code): "cannot make a pipe for \(program): \(String(cString: strerror(code)))"
        case let .failed(program, status, stderr):
            "\(program) exited with status \(status)" + (stderr.isEmpty ? "" : ": \(stderr)")
        }
    }
}

/// The one way the package's tests, test servers and benchmark run another program: the
/// package's own executables and outside tools (ffmpeg, ImageMagick, Python, a shell).
///
/// It spawns with `posix_spawnp` (so `PATH` is searched) and reaps with `wait4`, which, unlike
/// Foundation's `Process`, also reports the child's peak memory and CPU time: the same call serves
/// a test reading a child's output and a benchmark measuring it. Standard output and standard
/// error are read at the same time, so a child that writes a lot to one of them never blocks on a
/// full pipe while the caller waits on the other.
///
/// ```swift
/// let result = try ChildProgram.run("/usr/bin/ffprobe", ["-v", "error", file])
/// guard result.status == 0 else { … result.err … }
/// let timed = try ChildProgram.run("ffmpeg", args, stdout: .discard, stderr: .discard)
/// print(timed.seconds, timed.peakKiB, timed.cpuSeconds)
/// ```
public enum ChildProgram {
    /// Where a child's standard output or standard error goes.
    public enum Output: Sendable, Equatable {
        /// Into a pipe this process reads; the bytes come back in ``Result``.
        case capture
        /// To `/dev/null`.
        case discard
        /// Into the file at this path (created or truncated).
        case file(String)
        /// Wherever this process's own stream goes.
        case inherit
    }

    /// How a child ended.
    public enum Termination: Sendable, Equatable {
        /// It called `exit` (or returned from `main`).
        case exit
        /// A signal it did not handle ended it.
        case uncaughtSignal
    }

    /// What a finished child left: how it ended, what it wrote, what it cost.
    public struct Result: Sendable {
        /// The exit status, or the signal's number when ``reason`` is ``Termination/uncaughtSignal``.
        public let status: Int32
        /// Why it ended.
        public let reason: Termination
        /// Standard output, when captured.
        public let stdout: [UInt8]
        /// Standard error, when captured.
        public let stderr: [UInt8]
        /// Wall-clock seconds from the spawn to the reap.
        public let seconds: Double
        /// Peak resident memory of the child and the descendants it waited for, KiB (`ru_maxrss`).
        /// On Linux it is never below the spawning process's own peak: `posix_spawn` is a vfork and
        /// the kernel carries the parent's high-water mark through the `exec`. Measure from a small
        /// process (granite-bench is one), as GNU time does.
        public let peakKiB: Int
        /// CPU seconds it used, user + system (`ru_utime` + `ru_stime`).
        public let cpuSeconds: Double
        /// Standard output as UTF-8 text.
        public var out: String { String(decoding: stdout, as: UTF8.self) }
        /// Standard error as UTF-8 text.
        public var err: String { String(decoding: stderr, as: UTF8.self) }
        /// The status a shell would report: the exit status, or 128 + the signal's number.
        public var shellStatus: Int32 { reason == .exit ? status : 128 + status }
    }

    /// Starts `executable` (a path, or a name looked up in `PATH`) with `arguments`; its
    /// environment is this process's with `environment` laid over it (a `nil` value removes a
    /// variable). `stdin` bytes, when given, are written to its standard input from another thread
    /// (else it reads `/dev/null`). For callers that signal or watch a child while it runs;
    /// ``Running/finish()`` collects it.
    public static func launch(_ executable: String, _ arguments: [String], environment: [String: String?] = [:],
                              stdin: [UInt8]? = nil, stdout: Output = .capture,
                              stderr: Output = .capture) throws(ChildProgramError) -> Running {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [Int32] = [], childEnds: [Int32] = []
        defer { childEnds.forEach { close($0) } }
        func pipePair() throws(ChildProgramError) -> (read: Int32, write: Int32) {
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else {
                parentEnds.forEach { close($0) }
                throw .pipe(program: executable, errno: errno)
            }
            // Close-on-exec: the child gets its ends through dup2, and no other child keeps them open.
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return (fds[0], fds[1])
        }
        var input: Int32?
        if stdin != nil {
            let p = try pipePair()
            posix_spawn_file_actions_adddup2(&actions, p.read, 0)
            childEnds.append(p.read)
            parentEnds.append(p.write)
            input = p.write
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        var captured: [Int32?] = [nil, nil]
        for (index, (fd, output)) in [(Int32(1), stdout), (Int32(2), stderr)].enumerated() {
            switch output {
            case .capture:
                let p = try pipePair()
                posix_spawn_file_actions_adddup2(&actions, p.write, fd)
                childEnds.append(p.write)
                parentEnds.append(p.read)
                captured[index] = p.read
            case .discard: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0)
            case let .file(path): posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            case .inherit: break
            }
        }
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let start = monotonicNanos()
        let rc = posix_spawnp(&pid, executable, &actions, nil, argv, envp)
        guard rc == 0 else {
            parentEnds.forEach { close($0) }
            throw .spawn(program: executable, errno: rc)
        }
        return Running(program: executable, pid: pid, start: start, stdin: input.map { ($0, stdin ?? []) },
                       stdout: captured[0], stderr: captured[1])
    }

    /// Runs `executable` to the end and returns what it left (see
    /// ``launch(_:_:environment:stdin:stdout:stderr:)``); a non-zero status is not an error here.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String?] = [:],
                           stdin: [UInt8]? = nil, stdout: Output = .capture,
                           stderr: Output = .capture) throws(ChildProgramError) -> Result {
        try launch(executable, arguments, environment: environment, stdin: stdin, stdout: stdout, stderr: stderr).finish()
    }

    /// Runs `executable` and returns its standard output as text; a status other than 0 throws
    /// ``ChildProgramError/failed(program:status:stderr:)`` with its last line of standard error.
    public static func output(_ executable: String, _ arguments: [String],
                              environment: [String: String?] = [:]) throws(ChildProgramError) -> String {
        let result = try run(executable, arguments, environment: environment)
        guard result.reason == .exit, result.status == 0 else {
            let last = result.err.split(separator: "\n").last.map(String.init) ?? ""
            throw .failed(program: executable, status: result.shellStatus, stderr: last)
        }
        return result.out
    }

    /// Runs `script` with `/bin/bash -c` and returns what it left.
    public static func shell(_ script: String, environment: [String: String?] = [:]) throws(ChildProgramError) -> Result {
        try run("/bin/bash", ["-c", script], environment: environment)
    }

    /// A started child whose captured output is being read.
    public final class Running: @unchecked Sendable {
        /// The child's process id (for `kill`).
        public let pid: pid_t
        private let program: String
        private let start: UInt64
        private let stdoutBox: Box?, stderrBox: Box?
        private let lock = NSLock()
        private var result: Result?

        /// What a reader thread filled in, and a semaphore saying it is done.
        private final class Box: @unchecked Sendable {
            var bytes: [UInt8] = []
            let done = DispatchSemaphore(value: 0)
        }

        init(program: String, pid: pid_t, start: UInt64, stdin: (fd: Int32, bytes: [UInt8])?, stdout: Int32?, stderr: Int32?) {
            self.program = program
            self.pid = pid
            self.start = start
            if let stdin {
                Thread {
                    // A child that stops reading early must not end this process with SIGPIPE: with the
                    // signal blocked in this thread, the write fails with EPIPE instead.
                    var pipeSignal = sigset_t()
                    sigemptyset(&pipeSignal)
                    sigaddset(&pipeSignal, SIGPIPE)
                    pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
                    stdin.bytes.withUnsafeBytes { raw in
                        var offset = 0
                        while offset < raw.count {
                            let n = (try? SystemCall.retryingEINTR({ write(stdin.fd, raw.baseAddress! + offset, raw.count - offset) },
                                                                    failure: { ChildProgramError.pipe(program: program, errno: $0) })) ?? -1
                            if n <= 0 { break }  // the child closed its input: what it did not read is not ours to force
                            offset += n
                        }
                    }
                    close(stdin.fd)
                }.start()
            }
            func reader(_ fd: Int32?) -> Box? {
                guard let fd else { return nil }
                let box = Box()
                Thread {
                    var chunk = [UInt8](repeating: 0, count: 65536)
                    while true {
                        let n = chunk.withUnsafeMutableBytes { raw in
                            (try? SystemCall.retryingEINTR({ read(fd, raw.baseAddress!, raw.count) },
                                                        failure: { ChildProgramError.pipe(program: program, errno: $0) })) ?? -1
                        }
                        if n <= 0 { break }
                        box.bytes.append(contentsOf: chunk[0..<n])
                    }
                    close(fd)
                    box.done.signal()
                }.start()
                return box
            }
            stdoutBox = reader(stdout)
            stderrBox = reader(stderr)
        }

        /// Waits for the child to end and for its captured output to be read, and returns what it
        /// left. Calling it again returns the same result.
        public func finish() -> Result {
            lock.lock()
            defer { lock.unlock() }
            if let result { return result }
            var status: Int32 = 0
            var usage = rusage()
            while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
            let seconds = Double(monotonicNanos() - start) / 1e9
            stdoutBox?.done.wait()
            stderrBox?.done.wait()
            let signalled = (status & 0x7F) != 0
            let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
                + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
            let done = Result(status: signalled ? status & 0x7F : (status >> 8) & 0xFF,
                              reason: signalled ? .uncaughtSignal : .exit,
                              stdout: stdoutBox?.bytes ?? [], stderr: stderrBox?.bytes ?? [],
                              seconds: seconds, peakKiB: Int(usage.ru_maxrss), cpuSeconds: cpu)
            result = done
            return done
        }
    }
}
