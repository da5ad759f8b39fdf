import ArgumentParser
import GraniteConvert

/// `granite manifest`: work on the manifests `granite convert` leaves in an output folder.
struct ManifestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "manifest",
        abstract: "Work on the manifests granite convert writes.",
        subcommands: [MergeCommand.self]
    )

    /// `granite manifest merge OUTDIR`: joins the shards' parts into `manifest.json` (`ManifestMerge`).
    struct MergeCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "merge",
            abstract: "Join the parts of a sharded granite convert into OUTDIR/manifest.json.",
            discussion: """
            Reads OUTDIR/manifest.shard-I-of-N.json for I in 0...N-1 (written by `granite convert \
            --shard I/N`) and writes OUTDIR/manifest.json atomically, as one unsharded run would have \
            written it. A part that is missing, a shard that left its journal (killed, or still \
            running), an output listed by two parts, or parts made with different settings is \
            reported on stderr, and manifest.json is then left as it was. The parts are kept.

            Exit status: 0 merged; 1 a part is unreadable or manifest.json cannot be written; 2 parts \
            missing, unfinished, duplicated or disagreeing (nothing written); 64 usage error; 66 no \
            parts in OUTDIR.
            """
        )

        @Argument(help: ArgumentHelp("The output folder the shards wrote into.", valueName: "outdir"))
        var directory: String

        @Option(help: ArgumentHelp("Merge the parts of N shards (needed only when OUTDIR holds parts of several counts).",
                                   valueName: "N"))
        var shards: Int?

        func validate() throws {
            if let shards, shards < 1 { throw ValidationError("--shards must be at least 1, got \(shards)") }
        }

        func run() throws {
            let report: ManifestMerge.Report
            do {
                report = try ManifestMerge.merge(directory: directory, count: shards).report
            } catch {
                ProgressDisplay.standardError("granite manifest merge: \(error.description)\n")
                throw ExitCode(error.exitCode)
            }
            for line in report.problems { ProgressDisplay.standardError("granite manifest merge: \(line)\n") }
            print(report.summary)
            if report.exitCode != 0 { throw ExitCode(report.exitCode) }
        }
    }
}
