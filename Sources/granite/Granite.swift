import ArgumentParser

/// `granite`: batch tools over the Granite pipeline.
///
/// Each subcommand lives in its own file (`ConvertCommand.swift`, `PinCommand.swift`, ...) and
/// is a thin layer over a library module; add it to `subcommands` below.
@main
struct GraniteCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "granite",
        abstract: "Convert, filter, estimate depth and pin images with the Granite pipeline.",
        version: "0.1.0",
        subcommands: GraniteCLI.all
    )

    /// Every subcommand, in the order `--help` lists them.
    static let all: [any ParsableCommand.Type] = [
        ConvertCommand.self,
        ManifestCommand.self,
        FiltersCommand.self,
        PinCommand.self,
        DepthCommand.self,
        SegmentCommand.self,
        DevicesCommand.self,
    ]
}
