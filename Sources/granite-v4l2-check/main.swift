// granite-v4l2-check: runs GraniteCapture's DeviceCheck against a real V4L2 device and prints
// one PASS/FAIL line per check; exit status 1 if any failed. The vivid VM tier runs it.
//
//   granite-v4l2-check [DEVICE] [--replug 'shell command'] [--fps N] [--frames N] [--basic]
import GraniteCapture

#if canImport(Glibc)
import Glibc
#endif

var arguments = Array(CommandLine.arguments.dropFirst())
var check = DeviceCheck(path: "/dev/video0")
var basicOnly = false
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--replug" where !arguments.isEmpty: check.replugCommand = arguments.removeFirst()
    case "--fps" where !arguments.isEmpty: check.fps = Double(arguments.removeFirst()) ?? check.fps
    case "--frames" where !arguments.isEmpty: check.rateFrames = Int(arguments.removeFirst()) ?? check.rateFrames
    case "--basic": basicOnly = true
    case let path where path.hasPrefix("/"): check.path = path
    default:
        print("usage: granite-v4l2-check [DEVICE] [--replug CMD] [--fps N] [--frames N] [--basic]")
        exit(64)
    }
}
print("granite-v4l2-check: \(check.path)")
let log: @Sendable (CheckResult) -> Void = { result in
    print(result)
    fflush(nil)   // the serial console should show progress even if the VM dies mid-check
}
let results = basicOnly ? await check.runBasic(log: log) : await check.runAll(log: log)
let failed = results.filter { !$0.passed }
print("granite-v4l2-check: \(results.count - failed.count)/\(results.count) passed")
exit(failed.isEmpty ? 0 : 1)
