import ArgumentParser

/// `granite-bench`: prints benchmark numbers side by side with their anchors, in the same run.
@main
struct GraniteBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "granite-bench",
        abstract: "Benchmarks, each printed beside its anchor measured in the same run.",
        subcommands: GraniteBench.all
    )

    static let all: [any ParsableCommand.Type] = [
        EventsBench.self,
        ConvertBench.self,
        FiltersBench.self,
        CIDBench.self,
        RemotePinBench.self,
        MLBench.self,
        CamBench.self,
        OutputBench.self,
        RecordBench.self,
        SegmentBench.self,
    ]
}
