import Foundation
import GraniteCodecs
import GraniteMedia
import GraniteConvert
import XCTest

/// Runs the built `granite` binary: golden help, exit codes, and a SIGKILL-and-resume run.
final class ConvertCLITests: XCTestCase {
    static let goldenHelp = """
    OVERVIEW: Convert, resize and filter JPEG/PNG/WebP/AVIF/JXL/TIFF/HEIC/GIF images into
    JPEG/PNG/WebP/AVIF/JXL/TIFF in an output folder.

    INPUT may be files or folders; folders are walked recursively (files ending in .jpg, .jpeg, .jpe,
    .png, .webp, .avif, .jxl, .tif, .tiff, .heic, .heif, .hif or .gif; hidden entries skipped) and
    their layout is kept under OUTDIR. Formats are sniffed from the bytes; HEIC becomes JPEG and GIF
    (its first frame) PNG unless --format says otherwise. Outputs are written atomically and recorded
    in OUTDIR/manifest.json; a re-run skips outputs that are done and unchanged and redoes the rest.
    --depth also writes NAME.depth.png (16-bit) and NAME.depth-preview.png beside each output; --pin
    queues every file written for pinning on a Kubo node (as `granite pin` does) while the batch runs;
    what is not pinned at the end stays journaled for `granite pin --retry`; then OUTDIR itself
    (without the manifest files) is pinned as one directory, and manifest.json records its CID
    (rootCID, so ipfs://ROOT/OUTPUT addresses each output) and each output's CID.

    --shard I/N converts only shard I (0...N-1) of the inputs, picked by a SHA-256 of each input's path
    relative to its INPUT, so N processes or machines can split one folder into one OUTDIR with no
    coordinator; each writes OUTDIR/manifest.shard-I-of-N.json, and `granite manifest merge OUTDIR`
    joins them. auto/N takes I from JOB_COMPLETION_INDEX (Kubernetes Indexed Job) or
    SLURM_ARRAY_TASK_ID (Slurm array numbered from 0).

    Metadata: the input's ICC profile, Exif, XMP and comments are kept by default (Exif without its
    thumbnail, orientation set to 1 once the pixels are turned upright); --keep chooses, --strip
    removes them all; broken metadata, and a comment the output format has no place for (WebP, AVIF,
    TIFF, JPEG XL), is dropped with a warning.

    Damage: a warning from a decoder (and dropped metadata) is printed with the input's path and
    recorded in the manifest entry, and the image converts; --fail-on chooses what fails instead.
    Orientation (Exif in JPEG/PNG/WebP, else XMP tiff:Orientation) is applied to the pixels unless
    --no-auto-orient.

    Exit status: 0 all converted or already done; 1 the batch could not run (OUTDIR or its manifest not
    writable); 2 some inputs failed (each reported on stderr with its path and reason), the others were
    converted; 64 usage error; 66 an INPUT does not exist.

    USAGE: granite convert [<options>] <inputs> ... --output <outdir>

    ARGUMENTS:
      <inputs>                Image files or folders to convert.

    PINNING (--PIN; THE SAME OPTIONS AS `GRANITE PIN` AND `GRANITE-CAM --PIN`):
      --pin                   Pin every file written, and the output folder as one directory, on a Kubo
                              node: journaled first, uploaded in the background; the node being down is
                              only a warning.
      --api <addr>            Kubo RPC API: multiaddr (/ip4/127.0.0.1/tcp/5001) or URL (default
                              $IPFS_API, the repo's api file, 127.0.0.1:5001).
      --api-auth <auth>       bearer:TOKEN or basic:USER:PASSWORD (default $IPFS_API_AUTH; never
                              printed).
      --pin-journal <file>    Pin journal (default $GRANITE_PIN_JOURNAL or
                              ~/.local/state/granite/pins.jsonl).
      --pin-wait <seconds>    Seconds to wait at the end while pinning makes no progress; the rest
                              stays journaled for `granite pin --retry`. (default: 30)
      --service, --pin-service <url>
                              IPFS Pinning Service API URL: also pin there (origins: the node's
                              addresses); request ids are journaled.
      --service-token-file, --pin-service-token-file <file>
                              File holding the service's access token (default
                              $GRANITE_PIN_SERVICE_TOKEN; never printed).
      --cid-version <0|1>     CID version: 0 (dag-pb leaves) or 1 (raw leaves). (default: 1)
      --allow-insecure-http   Send --api-auth credentials or the --service token over plain http:// to
                              a host other than loopback (refused otherwise).

    OPTIONS:
      -o, --output <outdir>   Output folder (created if missing).
      --filter <spec>         A filter to apply, in order (repeatable): a Marble spec run on Vulkan,
                              e.g. blur:sigma=2 or 'sharpen:amount=1.5 | sobel' (see `granite
                              filters`); or resize=50%|WxH|fit:WxH, sized per image.
      --cpu                   Run Marble filters on their CPU reference implementation instead of
                              Vulkan.
      --resize <size>         Resize by a percentage or to an exact size: 50% or WxH.
      --fit <WxH>             Resize to fit inside WxH, keeping the aspect ratio.
      --format <format>       Output format: jpg, png, webp, avif, tiff or jxl (default: the input's
                              format; JPEG for HEIC, PNG for GIF).
      --quality <quality>     JPEG, WebP, AVIF and JPEG XL quality, 1-100 (JPEG XL: 100 is lossless).
                              (default: 85)
      --name <template>       Output file names from a template ({stem}: the input's name without
                              extension, {ext}: the output's extension), e.g. '{stem}_small.{ext}';
                              folders are kept.
      --resize-filter <filter>
                              The resampling kernel of --resize/--fit: lanczos3 (default; sharpest),
                              bilinear (antialiased) or box (area average).
      --progressive           Write progressive JPEGs.
      --lossless              Write lossless WebP (--quality is then ignored).
      --colorspace <srgb|keep>
                              Color space of the outputs: srgb converts the pixels from the input's ICC
                              profile and tags them sRGB; keep leaves pixels and profile as they are.
                              (default: keep)
      --keep <list>           Metadata the outputs keep, comma-separated: icc, exif, xmp, comment, all
                              or none (default: all).
      --strip                 Remove all metadata from the outputs: ICC profile, Exif, XMP and comments
                              (same as --keep none).
      --fail-on <level>       Which damage makes an input fail: none, truncated (default: a file cut
                              short fails, warnings such as 'Corrupt JPEG data: extraneous bytes' are
                              reported and the image converts), error, or warning (any warning fails).
                              (default: truncated)
      --no-auto-orient        Keep pixels as stored and the Exif/XMP orientation tag as it is (default:
                              turn pixels upright and reset the tag to 1).
      --background <color>    What transparent pixels become in outputs without alpha (JPEG): #RRGGBB,
                              #RGB, R,G,B, white or black (default: white).
      --jobs <jobs>           Images in flight at once (default: the number of cores).
      --max-pixels <n>        Refuse inputs with more pixels than this (decompression bombs). (default:
                              100000000)
      --overwrite             Redo every output, and replace files the manifest does not know.
      --depth                 Also write NAME.depth.png (16-bit depth) and NAME.depth-preview.png
                              beside each output.
      --model <path>          The depth model (ONNX file or folder) for --depth.
      --shard <I/N>           Convert only shard I of N (0-based), or auto/N from JOB_COMPLETION_INDEX
                              or SLURM_ARRAY_TASK_ID.
      --version               Show the version.
      -h, --help              Show help information.


    """

    func testHelpIsGolden() throws {
        let r = try ConvertFixtures.runGranite(["convert", "--help"])
        XCTAssertEqual(r.status, 0)
        XCTAssertEqual(r.stdout, Self.goldenHelp)
    }

    static let goldenMergeHelp = """
    OVERVIEW: Join the parts of a sharded granite convert into OUTDIR/manifest.json.

    Reads OUTDIR/manifest.shard-I-of-N.json for I in 0...N-1 (written by `granite convert --shard I/N`)
    and writes OUTDIR/manifest.json atomically, as one unsharded run would have written it. A part that
    is missing, a shard that left its journal (killed, or still running), an output listed by two
    parts, or parts made with different settings is reported on stderr, and manifest.json is then left
    as it was. The parts are kept.

    Exit status: 0 merged; 1 a part is unreadable or manifest.json cannot be written; 2 parts missing,
    unfinished, duplicated or disagreeing (nothing written); 64 usage error; 66 no parts in OUTDIR.

    USAGE: granite manifest merge <outdir> [--shards <N>]

    ARGUMENTS:
      <outdir>                The output folder the shards wrote into.

    OPTIONS:
      --shards <N>            Merge the parts of N shards (needed only when OUTDIR holds parts of
                              several counts).
      --version               Show the version.
      -h, --help              Show help information.


    """

    func testMergeHelpIsGolden() throws {
        let r = try ConvertFixtures.runGranite(["manifest", "merge", "--help"])
        XCTAssertEqual(r.status, 0)
        XCTAssertEqual(r.stdout, Self.goldenMergeHelp)
    }

    func testExitCodes() throws {
        let input = ConvertFixtures.folder("cli-in")
        let out = ConvertFixtures.folder("cli-out")
        try ConvertFixtures.writeJPEGs(2, to: input)
        let ok = try ConvertFixtures.runGranite(["convert", input, "-o", out + "/a", "--resize", "50%", "--format", "png"])
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertTrue(ok.stdout.hasPrefix("converted 2, skipped 0, failed 0 in "), ok.stdout)
        XCTAssertTrue(ok.stderr.contains("2/2 done"), "plain progress lines when stderr is not a terminal: \(ok.stderr)")

        TestSupportFiles.write(Array("junk".utf8), input + "/junk.png")
        let partial = try ConvertFixtures.runGranite(["convert", input, "-o", out + "/b"])
        XCTAssertEqual(partial.status, ConvertExitCode.partialFailure)
        XCTAssertTrue(partial.stderr.contains("failed: \(input)/junk.png: header error: not a \(ImageFormat.readableNames)"), partial.stderr)
        XCTAssertTrue(partial.stdout.hasPrefix("converted 2, skipped 0, failed 1"), partial.stdout)

        for usage in [["convert", input, "-o", out, "--resize", "12"], ["convert", input, "-o", out, "--quality", "0"],
                      ["convert", input, "-o", out, "--resize", "50%", "--fit", "9x9"], ["convert", input, "-o", out, "--filter", "blur:sigma=-1"], ["convert", input, "-o", out, "--filter", "nope"],
                      ["convert", input], ["convert", input, "-o", out, "--bogus"], ["convert", input, "-o", out, "--format", "gif"],
                      ["convert", input, "-o", out, "--max-pixels", "0"]] {
            let r = try ConvertFixtures.runGranite(usage)
            XCTAssertEqual(r.status, ConvertExitCode.usage, usage.joined(separator: " "))
            XCTAssertTrue(r.stderr.contains("Error:"), r.stderr)
        }
        for spec in ["3/3", "a/2", "auto/4"] {
            let r = try ConvertFixtures.runGranite(["convert", input, "-o", out, "--shard", spec],
                                                   environment: ["JOB_COMPLETION_INDEX": "", "SLURM_ARRAY_TASK_ID": ""])
            XCTAssertEqual(r.status, ConvertExitCode.usage, spec)
            XCTAssertTrue(r.stderr.contains("--shard '\(spec)': "), r.stderr)
        }
        let auto = try ConvertFixtures.runGranite(["convert", input, "-o", out, "--shard", "auto/4"],
                                                  environment: ["JOB_COMPLETION_INDEX": "", "SLURM_ARRAY_TASK_ID": ""])
        XCTAssertTrue(auto.stderr.contains("auto needs JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID in the environment"), auto.stderr)
        let missing = try ConvertFixtures.runGranite(["convert", input + "/nope.jpg", "-o", out])
        XCTAssertEqual(missing.status, ConvertExitCode.noInput)
        XCTAssertTrue(missing.stderr.contains("nope.jpg: no such file or folder"), missing.stderr)

        let blocker = out + "/file"
        TestSupportFiles.write([0], blocker)
        let fatal = try ConvertFixtures.runGranite(["convert", input, "-o", blocker + "/sub"])
        XCTAssertEqual(fatal.status, ConvertExitCode.fatal)
        XCTAssertTrue(fatal.stderr.contains(blocker), fatal.stderr)
    }

    /// Kill a run with SIGKILL midway, re-run, and check the folder is complete and consistent.
    func testResumeAfterSIGKILL() throws {
        let input = ConvertFixtures.folder("kill-in")
        let out = ConvertFixtures.folder("kill-out")
        let count = 30
        var photos = [[UInt8]]()
        for seed in 0..<6 {
            photos.append(try Codecs.encodeJPEG(ConvertFixtures.photo(width: 640, height: 480, seed: UInt64(seed)), quality: 95).withUnsafeBufferPointer { Array($0) })
        }
        for i in 0..<count {
            // Distinct files: the same pictures re-encoded at different qualities.
            let image = try Codecs.decode(photos[i % 6])
            try AtomicFile.write(try Codecs.encodeJPEG(image, quality: 60 + i), to: input + "/p\(i).jpg")
        }
        let arguments = ["convert", input, "-o", out, "--resize", "90%", "--filter", "sharpen", "--jobs", "2"]

        let p = Process()
        p.executableURL = URL(fileURLWithPath: try ConvertFixtures.graniteBinary())
        p.arguments = arguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        let deadline = Date().addingTimeInterval(120)
        func outputs() -> [String] { ConvertFixtures.files(out).filter { $0.hasSuffix(".jpg") && !$0.hasPrefix(".") } }
        while p.isRunning && outputs().count < 4 && Date() < deadline { usleep(2000) }
        XCTAssertTrue(p.isRunning, "the run finished before it could be killed; make the inputs bigger")
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .uncaughtSignal)

        // Whatever is under a final name is a complete image.
        let survivors = outputs()
        XCTAssertLessThan(survivors.count, count)
        for name in survivors {
            XCTAssertNoThrow(try Codecs.decode(try FileBytes.read(out + "/" + name), path: name), "partial output \(name)")
        }

        let rerun = try ConvertFixtures.runGranite(arguments)
        XCTAssertEqual(rerun.status, 0, rerun.stderr)
        let skipped = Int(rerun.stdout.split(separator: ",")[1].split(separator: " ")[1]) ?? -1
        XCTAssertGreaterThanOrEqual(skipped, 1, rerun.stdout)
        XCTAssertTrue(rerun.stdout.contains("converted \(count - skipped), skipped \(skipped), failed 0"), rerun.stdout)

        // Complete and consistent: every input has its output, the manifest vouches for each, no leftovers.
        let files = ConvertFixtures.files(out)
        XCTAssertEqual(files, ((0..<count).map { "p\($0).jpg" } + ["manifest.json"]).sorted())
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json")))
        XCTAssertEqual(manifest.entries.count, count)
        for entry in manifest.entries {
            let bytes = try FileBytes.read(out + "/" + entry.output)
            XCTAssertEqual(ContentHash.hex(bytes), entry.outputSHA256, entry.output)
            XCTAssertEqual(bytes.count, entry.outputBytes)
            XCTAssertEqual([entry.width, entry.height], [576, 432])
            XCTAssertEqual(ContentHash.hex(try FileBytes.read(entry.input)), entry.inputSHA256)
        }
        let third = try ConvertFixtures.runGranite(arguments)
        XCTAssertTrue(third.stdout.hasPrefix("converted 0, skipped \(count), failed 0"), third.stdout)
    }

    /// 4 `granite convert --shard` processes at once into one folder (two take their index from a
    /// Kubernetes Indexed Job's variable, one from a Slurm array's), then `granite manifest merge`:
    /// the same files and the same manifest as one plain run.
    func testFourShardProcessesAndMergeMatchOneRun() throws {
        let input = ConvertFixtures.folder("cli-shard-in")
        try ConvertFixtures.writeJPEGs(16, to: input, width: 64, height: 48)
        let whole = ConvertFixtures.folder("cli-shard-whole")
        let split = ConvertFixtures.folder("cli-shard-split")
        let logs = ConvertFixtures.folder("cli-shard-logs")
        let common = ["convert", input, "--resize", "50%", "--filter", "sharpen", "--jobs", "1"]
        let plain = try ConvertFixtures.runGranite(common + ["-o", whole])
        XCTAssertEqual(plain.status, 0, plain.stderr)

        let shards: [(String, [String: String])] = [
            ("auto/4", ["JOB_COMPLETION_INDEX": "0"]), ("auto/4", ["JOB_COMPLETION_INDEX": "1"]),
            ("auto/4", ["JOB_COMPLETION_INDEX": "", "SLURM_ARRAY_TASK_ID": "2"]), ("3/4", [:]),
        ]
        var running = [Process]()
        for (i, (spec, environment)) in shards.enumerated() {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: try ConvertFixtures.graniteBinary())
            p.arguments = common + ["-o", split, "--shard", spec]
            p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            for stream in ["out", "err"] { TestSupportFiles.write([], logs + "/\(i).\(stream)") }
            p.standardOutput = FileHandle(forWritingAtPath: logs + "/\(i).out")
            p.standardError = FileHandle(forWritingAtPath: logs + "/\(i).err")
            try p.run()
            running.append(p)
        }
        var converted = 0
        for (i, p) in running.enumerated() {
            p.waitUntilExit()
            let out = String(decoding: try FileBytes.read(logs + "/\(i).out"), as: UTF8.self)
            let err = String(decoding: try FileBytes.read(logs + "/\(i).err"), as: UTF8.self)
            XCTAssertEqual(p.terminationStatus, 0, err)
            XCTAssertTrue(out.hasPrefix("shard \(i)/4: converted "), out)
            converted += Int(out.split(separator: " ")[3].dropLast()) ?? -100
        }
        XCTAssertEqual(converted, 16, "each input converted by exactly one shard")

        let merge = try ConvertFixtures.runGranite(["manifest", "merge", split])
        XCTAssertEqual(merge.status, 0, merge.stderr)
        XCTAssertEqual(merge.stdout, "merged 4 of 4 parts: 16 entries -> \(split)/manifest.json\n")
        let wholeFiles = ConvertFixtures.files(whole)
        let parts = (0..<4).map { "manifest.shard-\($0)-of-4.json" }
        XCTAssertEqual(ConvertFixtures.files(split), (wholeFiles + parts).sorted())
        for name in wholeFiles {
            XCTAssertEqual(try FileBytes.read(split + "/" + name), try FileBytes.read(whole + "/" + name), name)
        }
        var sizes = 0
        for name in parts {
            sizes += try JSONDecoder().decode(Manifest.self, from: Data(FileBytes.read(split + "/" + name))).entries.count
        }
        XCTAssertEqual(sizes, 16)

        // A missing part and a duplicated output are reported, with exit status 2 and nothing written.
        try FileManager.default.moveItem(atPath: split + "/" + parts[2], toPath: logs + "/part2")
        let missing = try ConvertFixtures.runGranite(["manifest", "merge", split])
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.stderr.contains("granite manifest merge: missing: shard 2 of 4 (no manifest.shard-2-of-4.json)"), missing.stderr)
        XCTAssertEqual(missing.stdout, "manifest.json not written: 1 problem (3 of 4 parts found)\n")
        var part2 = try JSONDecoder().decode(Manifest.self, from: Data(FileBytes.read(logs + "/part2")))
        let part3 = try JSONDecoder().decode(Manifest.self, from: Data(FileBytes.read(split + "/" + parts[3])))
        part2.entries.append(part3.entries[0])
        try JSONEncoder().encode(part2).write(to: URL(fileURLWithPath: split + "/" + parts[2]))
        let duplicate = try ConvertFixtures.runGranite(["manifest", "merge", split])
        XCTAssertEqual(duplicate.status, 2)
        XCTAssertTrue(duplicate.stderr.contains("duplicate: \(part3.entries[0].output) is listed by shards 2, 3 of 4"), duplicate.stderr)
        XCTAssertEqual(try FileBytes.read(split + "/manifest.json"), try FileBytes.read(whole + "/manifest.json"))

        let none = try ConvertFixtures.runGranite(["manifest", "merge", logs])
        XCTAssertEqual(none.status, ConvertExitCode.noInput)
        XCTAssertTrue(none.stderr.contains("no manifest parts"), none.stderr)
        XCTAssertEqual(try ConvertFixtures.runGranite(["manifest", "merge", split, "--shards", "0"]).status, ConvertExitCode.usage)
    }

    /// `--progressive` writes a progressive (SOF2) JPEG, and redoes outputs made without it.
    func testProgressive() throws {
        let input = ConvertFixtures.folder("cli-prog")
        let paths = try ConvertFixtures.writeJPEGs(1, to: input)
        func sof(_ path: String) throws -> UInt8? {
            let b = try FileBytes.read(path)
            return (2..<b.count - 1).first { b[$0] == 0xFF && (b[$0 + 1] == 0xC0 || b[$0 + 1] == 0xC2) }.map { b[$0 + 1] }
        }
        XCTAssertEqual(try ConvertFixtures.runGranite(["convert", paths[0], "-o", input + "/out"]).status, 0)
        XCTAssertEqual(try sof(input + "/out/img0.jpg"), 0xC0)
        let r = try ConvertFixtures.runGranite(["convert", paths[0], "-o", input + "/out", "--progressive"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("converted 1, skipped 0"), r.stdout)
        XCTAssertEqual(try sof(input + "/out/img0.jpg"), 0xC2)
    }

    /// `--resize-filter` picks the shared resampler's kernel (PNG output: the pixels are the
    /// resampler's exactly), redoes outputs made with another, and an unknown name is a usage error.
    func testResizeFilter() throws {
        let input = ConvertFixtures.folder("cli-resize-filter")
        let paths = try ConvertFixtures.writeJPEGs(1, to: input, width: 90, height: 60)
        // Decoded as the converter does: JPEG DCT scaling down to no less than the target (5/8 here).
        let decoded = try Codecs.decodeFile(paths[0], options: DecodeOptions(minimumSize: (45, 31)))
        for (name, filter) in [("box", ResizeFilter.box), ("bilinear", .bilinear), ("lanczos3", .lanczos3)] {
            let r = try ConvertFixtures.runGranite(["convert", paths[0], "-o", input + "/out", "--format", "png",
                                                    "--resize", "45x31", "--resize-filter", name])
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stdout.hasPrefix("converted 1, skipped 0"), "\(name): \(r.stdout)")
            let written = try Codecs.decodeFile(input + "/out/img0.png")
            let expected = try Resampler.resize(decoded, width: 45, height: 31, filter: filter)
            let worst = zip(written.bytes, expected.bytes).map { abs(Int($0) - Int($1)) }.max() ?? -1
            XCTAssertTrue(written.bytes.count == expected.bytes.count && worst == 0, "\(name): differs by up to \(worst) levels")
        }
        let bad = try ConvertFixtures.runGranite(["convert", paths[0], "-o", input + "/bad", "--resize", "50%", "--resize-filter", "cubic"])
        XCTAssertEqual(bad.status, ConvertExitCode.usage)
        XCTAssertTrue(bad.stderr.contains("--resize-filter") && bad.stderr.contains("cubic"), bad.stderr)
    }

    /// `--format webp` (lossy and `--lossless`), and WebP inputs found in folders and converted back.
    func testWebP() throws {
        let root = ConvertFixtures.folder("cli-webp"), input = root + "/in"
        try ConvertFixtures.writeJPEGs(2, to: input)
        var r = try ConvertFixtures.runGranite(["convert", input, "-o", root + "/webp-lossy", "--format", "webp", "--quality", "70"])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try ConvertFixtures.runGranite(["convert", input, "-o", root + "/webp-lossless", "--format", "webp", "--lossless"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let lossy = try FileBytes.read(root + "/webp-lossy/img0.webp")
        let lossless = try FileBytes.read(root + "/webp-lossless/img0.webp")
        XCTAssertEqual(Codecs.sniff(lossy), .webp)
        XCTAssertLessThan(lossy.count, lossless.count)
        // Lossless: the decoded JPEG's pixels exactly.
        XCTAssertEqual(try Codecs.decode(lossless), try Codecs.decodeFile(input + "/img0.jpg"))
        r = try ConvertFixtures.runGranite(["convert", root + "/webp-lossless", "-o", root + "/back", "--format", "png"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("converted 2,"), r.stdout)
        XCTAssertEqual(try Codecs.decodeFile(root + "/back/img0.png"), try Codecs.decode(lossless))
    }
}
