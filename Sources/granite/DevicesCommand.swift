import ArgumentParser
import GraniteCapture

/// `granite devices`: the V4L2 cameras of this machine with their formats, sizes and rates.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List video capture devices: path, card, driver, formats, sizes, frame rates and controls; then PipeWire video sources."
    )

    @Option(help: "Directory holding the device nodes.")
    var directory = "/dev"

    @Flag(help: "Also list formats libv4l2 converts to in software (marked 'emulated').")
    var emulated = false

    @Flag(name: .customLong("no-controls"), help: "Leave out the camera controls.")
    var noControls = false

    /// The controls as `v4l2-ctl -L` shows them; `granite-cam --ctrl NAME=VALUE` sets them.
    func printControls(of path: String) {
        do {
            let controls = try CaptureDevices.controls(of: path)
            print(controls.isEmpty ? "  no controls" : "  controls (granite-cam --ctrl NAME=VALUE):")
            for control in controls {
                print("    \(control)")
                for item in control.menu { print("      \(item.index): \(item.name)") }
            }
        } catch {
            print("  controls: \(error)")
        }
    }

    func run() throws {
        let devices = CaptureDevices.list(in: directory)
        let pipeWire = PipeWireDevices.describe()
        if devices.isEmpty {
            print("no video devices in \(directory)" + (pipeWire.sources ? "" : "; granite-cam falls back to its test pattern"))
            pipeWire.lines.forEach { print($0) }
            return
        }
        defer { pipeWire.lines.forEach { print($0) } }
        for (path, result) in devices {
            switch result {
            case let .failure(error):
                print("\(path): \(error)")
            case let .success(info):
                print("\(info.path): \(info.card) (driver \(info.driver), \(info.bus))")
                guard info.canCapture else {
                    print("  not a video capture node")
                    continue
                }
                for format in info.formats where emulated || !format.emulated {
                    let ours = format.format.map { " [\($0)]" } ?? ""
                    print("  \(format.code) \(format.name)\(ours)\(format.emulated ? " (emulated)" : "")")
                    for size in format.sizes {
                        let rates = size.rates.map { StreamFormat.describeRate($0) }.joined(separator: ", ")
                        print("    \(size.size)\(rates.isEmpty ? "" : " @ \(rates) fps")")
                    }
                }
                if !noControls { printControls(of: info.path) }
            }
        }
    }
}
