#if canImport(Glibc)
import Glibc
#endif
import GraniteMedia

/// A finished child process: exit status, wall time and its peak resident memory.
struct ChildRun {
    var status: Int32
    var seconds: Double
    /// Peak RSS in KiB of the child and the descendants it waited for (`wait4`'s `ru_maxrss`).
    var peakKiB: Int
    /// CPU seconds (user + system) of the child and the descendants it waited for.
    var cpuSeconds: Double = 0
}

/// Spawns a program with `posix_spawn` and reaps it with `wait4`, which (unlike Foundation's
/// `Process`) reports the child's peak memory.
enum ChildProcess {
    enum Failure: Error, CustomStringConvertible {
        case spawn(String, Int32)
        var description: String {
            switch self {
            case let .spawn(program, code): return "cannot start \(program): \(String(cString: strerror(code)))"
            }
        }
    }

    static func run(_ program: String, _ arguments: [String], quiet: Bool = true) throws -> ChildRun {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if quiet {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let start = monotonicNanos()
        let rc = posix_spawnp(&pid, program, &actions, nil, argv, environ)
        guard rc == 0 else { throw Failure.spawn(program, rc) }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let seconds = Double(monotonicNanos() - start) / 1e9
        let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        var run = ChildRun(status: exit, seconds: seconds, peakKiB: Int(usage.ru_maxrss))
        run.cpuSeconds = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return run
    }
}
