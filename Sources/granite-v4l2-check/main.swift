// granite-v4l2-check: runs GraniteCapture's DeviceCheck against a real V4L2 device and prints
// one PASS/FAIL line per check; exit status 1 if any failed. The vivid VM tier runs it.
//
//   granite-v4l2-check [DEVICE] [--replug 'shell command'] [--fps N] [--frames N] [--basic]
//   granite-v4l2-check DEVICE --controls            every control, as `granite devices` lists them
//   granite-v4l2-check DEVICE --set NAME=VALUE...   set controls, print them read back
//   granite-v4l2-check DEVICE --loop-read WxH [--frames N] [--seconds S]
//                                                   read looped test-pattern counters (vivid Loop Video)
import GraniteCapture

#if canImport(Glibc)
import Glibc
#endif

var arguments = Array(CommandLine.arguments.dropFirst())
var check = DeviceCheck(path: "/dev/video0")
var basicOnly = false
var listControls = false
var settings: [ControlSetting] = []
var loopSize: FrameSize?
var seconds = 60.0
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--replug" where !arguments.isEmpty: check.replugCommand = arguments.removeFirst()
    case "--fps" where !arguments.isEmpty: check.fps = Double(arguments.removeFirst()) ?? check.fps
    case "--frames" where !arguments.isEmpty: check.rateFrames = Int(arguments.removeFirst()) ?? check.rateFrames
    case "--basic": basicOnly = true
    case "--controls": listControls = true
    case "--set" where !arguments.isEmpty:
        do { settings.append(try ControlSetting(parsing: arguments.removeFirst())) } catch { print("\(error)"); exit(64) }
    case "--loop-read" where !arguments.isEmpty: loopSize = FrameSize(parsing: arguments.removeFirst())
    case "--seconds" where !arguments.isEmpty: seconds = Double(arguments.removeFirst()) ?? seconds
    case let path where path.hasPrefix("/"): check.path = path
    default:
        print("usage: granite-v4l2-check [DEVICE] [--replug CMD] [--fps N] [--frames N] [--basic]")
        exit(64)
    }
}
print("granite-v4l2-check: \(check.path)")
if listControls || !settings.isEmpty {
    do {
        let controls = settings.isEmpty ? try CaptureDevices.controls(of: check.path)
                                        : try CaptureDevices.setControls(settings, on: check.path)
        for control in controls { print(control) }
        exit(0)
    } catch {
        print("granite-v4l2-check: error: \(error)")
        exit(2)
    }
}
if let loopSize {
    let result = await check.loopedCounters(size: loopSize, fps: check.fps, want: check.rateFrames, seconds: seconds)
    print(result)
    exit(result.passed ? 0 : 1)
}
let log: @Sendable (CheckResult) -> Void = { result in
    print(result)
    fflush(nil)   // the serial console should show progress even if the VM dies mid-check
}
let results = basicOnly ? await check.runBasic(log: log) : await check.runAll(log: log)
let failed = results.filter { !$0.passed }
print("granite-v4l2-check: \(results.count - failed.count)/\(results.count) passed")
exit(failed.isEmpty ? 0 : 1)
