import ArgumentParser
import Foundation

/// The arguments `granite depth` and `granite segment` share: inputs, output folder, model,
/// threads and photos in flight.
struct PhotoBatchOptions: ParsableArguments {
    @Argument(help: "Image files or folders.")
    var inputs: [String]

    @Option(name: .shortAndLong, help: ArgumentHelp("Output folder (created if missing).", valueName: "outdir"))
    var output: String

    @Option(help: ArgumentHelp("The ONNX model file (or a folder holding it).", valueName: "path"))
    var model: String?

    @Option(help: "Threads for inference (default: the number of cores).")
    var threads: Int?

    @Option(help: "Photos in flight at once (default 2, or 1 on one core: one photo's single-threaded steps, decoding and inference, overlap the other's PNG deflating).")
    var jobs: Int?

    func validate() throws {
        if let threads, !(1...256).contains(threads) { throw ValidationError("--threads must be in 1...256, got \(threads)") }
        if let jobs, !(1...256).contains(jobs) { throw ValidationError("--jobs must be in 1...256, got \(jobs)") }
    }
}

/// What `granite depth` and `granite segment` share: the input list (files and folders of JPEG
/// and PNG files) and the photos in flight, each reported as it finishes.
enum PhotoJobs {
    /// Files named directly, plus the JPEG and PNG files directly inside named folders (sorted);
    /// exit 66 naming the first input that does not exist.
    static func expand(_ inputs: [String], command: String) throws -> [String] {
        var files: [String] = []
        let fm = FileManager.default
        for input in inputs {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: input, isDirectory: &isDirectory) else {
                report("\(command): \(input): no such file or folder")
                throw ExitCode(66)
            }
            if !isDirectory.boolValue { files.append(input); continue }
            let names = (try? fm.contentsOfDirectory(atPath: input)) ?? []
            for name in names.sorted() where !name.hasPrefix(".") {
                let ext = (name as NSString).pathExtension.lowercased()
                if ["jpg", "jpeg", "jpe", "png"].contains(ext) { files.append((input as NSString).appendingPathComponent(name)) }
            }
        }
        return files
    }

    /// Runs `work` on each file, `jobs` at once (default 2, or 1 on one core: one photo's
    /// single-threaded steps, decoding and inference, overlap the other's PNG deflating), printing
    /// `FILE -> what work returned` or reporting the failure on stderr; returns the failures.
    static func run(_ files: [String], jobs: Int?, command: String,
                    work: @escaping @Sendable (String) throws -> String) async -> Int {
        let jobs = max(1, min(jobs ?? min(2, ProcessInfo.processInfo.activeProcessorCount), files.count))
        var failed = 0
        await withTaskGroup(of: (String, Result<String, any Error>).self) { group in
            var next = 0
            func start() {
                guard next < files.count else { return }
                let file = files[next]
                next += 1
                group.addTask { (file, Result { try work(file) }) }
            }
            for _ in 0..<jobs { start() }
            for await (file, result) in group {
                switch result {
                case let .success(written):
                    print("\(file) -> \(written)")
                case let .failure(error):
                    let message = "\(error)"  // codec errors already start with the path
                    report("\(command): " + (message.hasPrefix(file) ? message : "\(file): \(message)"))
                    failed += 1
                }
                start()
            }
        }
        return failed
    }

    /// A model-per-photo command from start to end: expands the inputs, creates the output
    /// folder and loads the model (exit 1 naming what failed), says where it runs (`announce`),
    /// runs `work` on every photo, prints the summary and exits 2 when some photos failed.
    static func runBatch<Runner: Sendable>(
        _ batch: PhotoBatchOptions, command: String, load: () throws -> Runner,
        modelPath: (Runner) -> String, announce: (Runner) -> Void,
        work: @escaping @Sendable (String, Runner) throws -> String
    ) async throws {
        let files = try expand(batch.inputs, command: command)
        let runner: Runner
        do {
            try FileManager.default.createDirectory(atPath: batch.output, withIntermediateDirectories: true)
            runner = try load()
        } catch {
            report("\(command): \(error)")
            throw ExitCode(1)
        }
        announce(runner)
        let failed = await run(files, jobs: batch.jobs, command: command) { try work($0, runner) }
        print("\(files.count - failed) of \(files.count) images done with \((modelPath(runner) as NSString).lastPathComponent)")
        if failed > 0 { throw ExitCode(2) }
    }

    static func report(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
