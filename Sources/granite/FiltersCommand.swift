import Foundation
import ArgumentParser
import GraniteGPU
import Marble

/// `granite filters`: lists the Marble filters with their parameters (range, default).
struct FiltersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "filters",
        abstract: "List the GPU filters and their parameters.",
        discussion: "Filters are written as name:key=value,key=value and chained with |, e.g. 'blur:sigma=2 | sobel'.")

    @Argument(help: "Only these filters (default: all).")
    var names: [String] = []

    @Flag(help: "Also show the Vulkan devices and which one the filters run on (GRANITE_VULKAN_DEVICE picks by name).")
    var device = false

    func validate() throws {
        let known = Set(Marble.catalog.map(\.name))
        for name in names where !known.contains(name) {
            throw ValidationError("\(MarbleError.unknownFilter(name: name, valid: Marble.catalog.map(\.name)))")
        }
    }

    func run() throws {
        if device {
            for (name, kind) in try GPUContext.availableDevices() { print("vulkan device: \(name) (\(kind))") }
            print("filters run on: \(try GPUContext.shared().deviceName)\n")
        }
        let chosen = Marble.catalog.filter { names.isEmpty || names.contains($0.name) }
        print(FiltersCommand.listing(chosen), terminator: "")
    }

    /// The text `run` prints: one block per filter, parameters indented and aligned.
    static func listing(_ filters: [FilterDescription]) -> String {
        var out = ""
        for filter in filters {
            out += "\(filter.name) — \(filter.summary)\n"
            let width = filter.parameters.map(\.name.count).max() ?? 0
            let kindWidth = filter.parameters.map { "\($0.kind)".count }.max() ?? 0
            for parameter in filter.parameters {
                let name = parameter.name.padding(toLength: width, withPad: " ", startingAt: 0)
                let kind = "\(parameter.kind)".padding(toLength: kindWidth, withPad: " ", startingAt: 0)
                out += "    \(name)  \(kind)  \(parameter.summary)\n"
            }
        }
        return out
    }
}
