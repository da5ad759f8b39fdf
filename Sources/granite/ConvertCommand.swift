import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import GraniteCodecs
import GraniteConvert

/// `granite convert`: batch-convert images and folders into an output folder.
struct ConvertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert, resize and filter JPEG/PNG images into an output folder.",
        discussion: """
        INPUT may be files or folders; folders are walked recursively (files ending in .jpg, .jpeg, \
        .jpe or .png; hidden entries skipped) and their layout is kept under OUTDIR. Formats are \
        sniffed from the bytes. Outputs are written atomically and recorded in OUTDIR/manifest.json; \
        a re-run skips outputs that are done and unchanged and redoes the rest.

        Exit status: 0 all converted or already done; 1 the batch could not run (OUTDIR or its \
        manifest not writable); 2 some inputs failed (each reported on stderr with its path and \
        reason), the others were converted; 64 usage error; 66 an INPUT does not exist.
        """
    )

    @Argument(help: "Image files or folders to convert.")
    var inputs: [String]

    @Option(name: .shortAndLong, help: ArgumentHelp("Output folder (created if missing).", valueName: "outdir"))
    var output: String

    @Option(name: .customLong("filter"),
            help: ArgumentHelp("A filter to apply, in order (repeatable): sharpen[=AMOUNT], resize=50%|WxH|fit:WxH.",
                               valueName: "spec"))
    var filters: [String] = []

    @Option(help: ArgumentHelp("Resize by a percentage or to an exact size: 50% or WxH.", valueName: "size"))
    var resize: String?

    @Option(help: ArgumentHelp("Resize to fit inside WxH, keeping the aspect ratio.", valueName: "WxH"))
    var fit: String?

    @Option(help: ArgumentHelp("Output format: jpg or png (default: the input's format).", valueName: "format"))
    var format: String?

    @Option(help: "JPEG quality, 1-100.")
    var quality: Int = 85

    @Option(help: "Images in flight at once (default: the number of cores).")
    var jobs: Int?

    @Flag(help: "Redo every output, and replace files the manifest does not know.")
    var overwrite = false

    func validate() throws {
        if resize != nil && fit != nil { throw ValidationError("--resize and --fit cannot be used together") }
        guard (1...100).contains(quality) else { throw ValidationError("--quality must be in 1...100, got \(quality)") }
        if let jobs, !(1...256).contains(jobs) { throw ValidationError("--jobs must be in 1...256, got \(jobs)") }
        do {
            _ = try makeSettings()
        } catch {
            throw ValidationError(error.description)
        }
    }

    func makeSettings() throws(ConvertError) -> (ConvertSettings, CPUFilterChain) {
        let chain = try CPUFilterChain(specs: filters)
        var settings = ConvertSettings(quality: quality, filters: chain.fingerprint)
        if let resize { settings.resize = try ResizeSpec.parse(resize) }
        if let fit { settings.resize = try ResizeSpec.parse(fit, fit: true) }
        if let format { settings.format = try ConvertSettings.parseFormat(format) }
        return (settings, chain)
    }

    func run() async throws {
        let summary: ConvertSummary
        do {
            let (settings, chain) = try makeSettings()
            let converter = BatchConverter(inputs: inputs, outputDirectory: output, settings: settings,
                                           processor: chain, jobs: jobs, overwrite: overwrite)
            summary = try await converter.run()
        } catch {
            printError("granite convert: \(error.description)")
            throw ExitCode(error.exitCode)
        }
        print(summary.line)
        if summary.exitCode != 0 { throw ExitCode(summary.exitCode) }
    }
}

/// Writes a line to stderr (one write, so lines from different sources do not interleave).
private func printError(_ text: String) {
    var bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
}
