import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import GraniteCodecs
import GraniteConvert
import GraniteIPFS
import GraniteML
import GranitePinOptions

/// `granite convert`: batch-convert images and folders into an output folder.
struct ConvertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert, resize and filter JPEG/PNG/WebP/AVIF/JXL/TIFF/HEIC/GIF images into JPEG/PNG/WebP/AVIF/JXL/TIFF in an output folder.",
        discussion: """
        INPUT may be files or folders; folders are walked recursively (files ending in .jpg, .jpeg, \
        .jpe, .png, .webp, .avif, .jxl, .tif, .tiff, .heic, .heif, .hif or .gif; hidden entries skipped) and their layout is \
        kept under OUTDIR. Formats are sniffed from the bytes; HEIC becomes JPEG and GIF (its first \
        frame) PNG unless --format says otherwise. Outputs are written atomically and recorded in OUTDIR/manifest.json; \
        a re-run skips outputs that are done and unchanged and redoes the rest. --depth also writes \
        NAME.depth.png (16-bit) and NAME.depth-preview.png beside each output; --pin queues every \
        file written for pinning on a Kubo node (as `granite pin` does) while the batch runs; what \
        is not pinned at the end stays journaled for `granite pin --retry`; then OUTDIR itself (without \
        the manifest files) is pinned as one directory, and manifest.json records its CID (rootCID, \
        so ipfs://ROOT/OUTPUT addresses each output) and each output's CID.

        --shard I/N converts only shard I (0...N-1) of the inputs, picked by a SHA-256 of each \
        input's path relative to its INPUT, so N processes or machines can split one folder into one \
        OUTDIR with no coordinator; each writes OUTDIR/manifest.shard-I-of-N.json, and `granite \
        manifest merge OUTDIR` joins them. auto/N takes I from JOB_COMPLETION_INDEX (Kubernetes \
        Indexed Job) or SLURM_ARRAY_TASK_ID (Slurm array numbered from 0).

        Metadata: the input's ICC profile, Exif, XMP and comments are kept by default (Exif without \
        its thumbnail, orientation set to 1 once the pixels are turned upright); --keep chooses, \
        --strip removes them all; broken metadata, and a comment the output format has no place \
        for (WebP, AVIF, TIFF, JPEG XL), is dropped with a warning.

        Damage: a warning from a decoder (and dropped metadata) is printed with the input's path \
        and recorded in the manifest entry, and the image converts; --fail-on chooses what fails \
        instead. Orientation (Exif in JPEG/PNG/WebP, else XMP tiff:Orientation) is applied to \
        the pixels unless --no-auto-orient.

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
            help: ArgumentHelp("A filter to apply, in order (repeatable): a Marble spec run on Vulkan, e.g. blur:sigma=2 or 'sharpen:amount=1.5 | sobel' (see `granite filters`); or resize=50%|WxH|fit:WxH, sized per image.",
                               valueName: "spec"))
    var filters: [String] = []

    @Flag(help: "Run Marble filters on their CPU reference implementation instead of Vulkan.")
    var cpu = false

    @Option(help: ArgumentHelp("Resize by a percentage or to an exact size: 50% or WxH.", valueName: "size"))
    var resize: String?

    @Option(help: ArgumentHelp("Resize to fit inside WxH, keeping the aspect ratio.", valueName: "WxH"))
    var fit: String?

    @Option(help: ArgumentHelp("Output format: jpg, png, webp, avif, tiff or jxl (default: the input's format; JPEG for HEIC, PNG for GIF).", valueName: "format"))
    var format: String?

    @Option(help: "JPEG, WebP, AVIF and JPEG XL quality, 1-100 (JPEG XL: 100 is lossless).")
    var quality: Int = 85

    @Option(help: ArgumentHelp("Output file names from a template ({stem}: the input's name without extension, {ext}: the output's extension), e.g. '{stem}_small.{ext}'; folders are kept.",
                               valueName: "template"))
    var name: String?

    @Option(help: ArgumentHelp("The resampling kernel of --resize/--fit: lanczos3 (default; sharpest), bilinear (antialiased) or box (area average).",
                               valueName: "filter"))
    var resizeFilter: String?

    @Flag(help: "Write progressive JPEGs.")
    var progressive = false

    @Flag(help: "Write lossless WebP (--quality is then ignored).")
    var lossless = false

    @Option(help: ArgumentHelp("Color space of the outputs: srgb converts the pixels from the input's ICC profile and tags them sRGB; keep leaves pixels and profile as they are.",
                               valueName: "srgb|keep"))
    var colorspace: String = "keep"

    @Option(help: ArgumentHelp("Metadata the outputs keep, comma-separated: icc, exif, xmp, comment, all or none (default: all).",
                               valueName: "list"))
    var keep: String?

    @Flag(help: "Remove all metadata from the outputs: ICC profile, Exif, XMP and comments (same as --keep none).")
    var strip = false

    @Option(help: ArgumentHelp("Which damage makes an input fail: none, truncated (default: a file cut short fails, warnings such as 'Corrupt JPEG data: extraneous bytes' are reported and the image converts), error, or warning (any warning fails).",
                               valueName: "level"))
    var failOn: String = FailOn.default.rawValue

    @Flag(help: "Keep pixels as stored and the Exif/XMP orientation tag as it is (default: turn pixels upright and reset the tag to 1).")
    var noAutoOrient = false

    @Option(help: ArgumentHelp("What transparent pixels become in outputs without alpha (JPEG): #RRGGBB, #RGB, R,G,B, white or black (default: white).",
                               valueName: "color"))
    var background: String?

    @Option(help: "Images in flight at once (default: the number of cores).")
    var jobs: Int?

    @Option(help: ArgumentHelp("Refuse inputs with more pixels than this (decompression bombs).", valueName: "n"))
    var maxPixels: Int = DecodeOptions.defaultMaxPixels

    @Flag(help: "Redo every output, and replace files the manifest does not know.")
    var overwrite = false

    @Flag(help: "Also write NAME.depth.png (16-bit depth) and NAME.depth-preview.png beside each output.")
    var depth = false

    @Option(help: ArgumentHelp("The depth model (ONNX file or folder) for --depth.", valueName: "path"))
    var model: String?

    @OptionGroup(title: "Pinning (--pin; the same options as `granite pin` and `granite-cam --pin`)")
    var pinning: PinOutputOptions

    @Option(help: ArgumentHelp("Convert only shard I of N (0-based), or auto/N from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID.",
                               valueName: "I/N"))
    var shard: String?

    func validate() throws {
        if resize != nil && fit != nil { throw ValidationError("--resize and --fit cannot be used together") }
        if strip && keep != nil { throw ValidationError("--strip and --keep cannot be used together") }
        guard (1...100).contains(quality) else { throw ValidationError("--quality must be in 1...100, got \(quality)") }
        if let jobs, !(1...256).contains(jobs) { throw ValidationError("--jobs must be in 1...256, got \(jobs)") }
        if model != nil && !depth { throw ValidationError("--model needs --depth") }
        guard maxPixels > 0 else { throw ValidationError("--max-pixels must be positive, got \(maxPixels)") }
        do {
            _ = try makeSettings()
            if let shard { _ = try ShardSpec.parse(shard) }
        } catch {
            throw ValidationError(error.description)
        }
    }

    func makeSettings() throws(ConvertError) -> (ConvertSettings, FilterPipeline) {
        let chain = try FilterPipeline(specs: filters, cpu: cpu)
        var settings = ConvertSettings(quality: quality, filters: chain.fingerprint, maxPixels: maxPixels)
        if let resize { settings.resize = try ResizeSpec.parse(resize) }
        if let fit { settings.resize = try ResizeSpec.parse(fit, fit: true) }
        if let format { settings.format = try ConvertSettings.parseFormat(format) }
        if let keep { settings.keep = try ConvertSettings.parseKeep(keep) }
        if strip { settings.keep = [] }
        settings.colorspace = try ConvertSettings.parseColorspace(colorspace)
        if let name { settings.name = try OutputName(name) }
        if let resizeFilter { settings.resizeFilter = try ConvertSettings.parseResizeFilter(resizeFilter) }
        if progressive { settings.progressive = true }
        if lossless { settings.lossless = true }
        let level = try ConvertSettings.parseFailOn(failOn)
        if level != .default { settings.failOn = level }
        if noAutoOrient { settings.autoOrient = false }
        if let background { settings.background = try ConvertSettings.parseBackground(background) }
        return (settings, chain)
    }

    func run() async throws {
        let summary: ConvertSummary
        var converter: BatchConverter
        do {
            let (settings, chain) = try makeSettings()
            converter = BatchConverter(inputs: inputs, outputDirectory: output, settings: settings,
                                       processor: chain, jobs: jobs, overwrite: overwrite)
            if let shard { converter.shard = try ShardSpec.parse(shard) }
        } catch {
            printError("granite convert: \(error.description)")
            throw ExitCode(error.exitCode)
        }
        if depth {
            do {
                converter.depth = try DepthEstimator(modelPath: model)
            } catch {
                printError("granite convert: --depth: \(error)")
                throw ExitCode(1)
            }
        }
        // --pin: the batch folder is pinned as one directory at the end (without the manifest
        // files); a shard's part covers only part of the folder, so a shard pins its files alone.
        let pins: PinSession?
        do {
            let started = try await pinning.start(folder: converter.shard == nil ? output : nil, excluding: Manifest.isManifestFile)
            if let warning = started?.warning { printError("granite convert: warning: \(warning)") }
            pins = started?.session
        } catch {
            printError("granite convert: --pin: \(error)")
            throw ExitCode(1)
        }
        if let pins {
            converter.afterWrite = { paths in
                do { try pins.submit(paths) } catch { printError("granite convert: warning: not queued for pinning: \(error)") }
            }
        }
        do {
            summary = try await converter.run()
        } catch {
            printError("granite convert: \(error.description)")
            throw ExitCode(error.exitCode)
        }
        print((converter.shard.map { "shard \($0): " } ?? "") + summary.line)
        if let pins {
            let outcome = await pins.finish()
            if let folder = outcome.folder {
                // Each output's CID and the folder's go into manifest.json.
                do {
                    try Manifest.recordCIDs(in: output, root: folder.root.description, byPath: folder.byPath.mapValues(\.description))
                } catch {
                    printError("granite convert: warning: folder CID not recorded: \(error)")
                }
            }
            let report = PinRunReport(outcome)
            for line in report.lines {
                if line.kind == .result { print(line.message) } else { printError("granite convert: " + line.message) }
            }
            if report.failed { throw ExitCode(1) }
        }
        if summary.exitCode != 0 { throw ExitCode(summary.exitCode) }
    }
}

/// Writes a line to stderr (one write, so lines from different sources do not interleave).
private func printError(_ text: String) {
    var bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
}
