import Foundation
import GraniteCodecs
import GraniteMedia
import GraniteML

/// Converts a batch of images into an output folder, a few at a time, resumably.
///
/// ```
///             ┌─ worker 1: read ─► SHA-256 ─► skip? ─► decode(scaled) ─► resize ─► color ─► processor ─► encode ─► metadata ─► journal ─► atomic write
/// WorkItems ──┼─ worker 2: ...                                                                          (jobs workers, one image each)
///             └─ worker N: ...
///                   │ outcomes
///                   ▼
///         collector: progress, failures, summary ─► manifest.json (atomic) at the end
/// ```
/// At most `jobs` images are in memory at once; decode, processing and encode of different
/// images overlap across cores. A bad input fails alone, the batch goes on.
///
/// With `shard` set, only the shard's inputs are converted (`ShardSpec`), and the journal and
/// manifest are the shard's own part (`manifest.shard-I-of-N.json`), so N processes, on one
/// machine or many, can share one output folder; `ManifestMerge` joins the parts.
public struct BatchConverter: Sendable {
    /// INPUT operands (files or folders).
    public let inputs: [String]
    /// The output folder (created if missing).
    public let outputDirectory: String
    /// What outputs look like.
    public let settings: ConvertSettings
    /// The filters between decode and encode.
    public let processor: any ImageProcessor
    /// Images in flight at once.
    public let jobs: Int
    /// Redo outputs the manifest vouches for, and replace files it does not know.
    public let overwrite: Bool
    /// When set, also write `NAME.depth.png` and `NAME.depth-preview.png` beside each output
    /// (one estimator shared by all workers; it is safe to share).
    public var depth: DepthEstimator?
    /// Called with the absolute paths of each output's files right after they are renamed into
    /// place (e.g. to queue them for pinning); it should return quickly.
    public var afterWrite: (@Sendable ([String]) async -> Void)?
    /// When set, convert only this shard's inputs and write its own manifest part.
    public var shard: ShardSpec?

    /// A converter; `jobs` defaults to the number of cores.
    public init(inputs: [String], outputDirectory: String, settings: ConvertSettings,
                processor: any ImageProcessor = FilterPipeline(), jobs: Int? = nil, overwrite: Bool = false) {
        self.inputs = inputs
        self.outputDirectory = outputDirectory
        self.settings = settings
        self.processor = processor
        self.jobs = max(1, jobs ?? ProcessInfo.processInfo.activeProcessorCount)
        self.overwrite = overwrite
    }

    /// Runs the batch; throws only when it cannot run at all (missing input, unwritable folder).
    public func run(progress makeProgress: (Int) -> ProgressDisplay? = { ProgressDisplay(total: $0) })
        async throws(ConvertError) -> ConvertSummary {
        var items = try InputPlan.expand(inputs, outputDirectory: outputDirectory, format: settings.format, name: settings.name)
        // Collisions are found over all inputs first, so every shard agrees on which input wins.
        var owned: Set<String>?
        if let shard {
            items = items.filter { shard.contains($0.relativePath) }
            owned = Set(items.filter { $0.collidesWith == nil }.map(\.output))
        }
        try makeDirectory(outputDirectory)
        removeLeftoverTemporaries(owned: owned)
        let store = ManifestStore(directory: outputDirectory, shard: shard, owns: owned ?? [])
        try await store.open()
        let progress = makeProgress(items.count)
        if let warning = store.loadWarning { progress?.message("granite convert: warning: \(warning)") }

        let start = monotonicNanos()
        var summary = ConvertSummary()
        await withTaskGroup(of: (ConvertOutcome, [String]).self) { group in
            var next = 0
            func submit() {
                guard next < items.count else { return }
                let item = items[next]
                next += 1
                group.addTask { await self.convert(item, store: store) }
            }
            for _ in 0..<min(jobs, items.count) { submit() }
            while let (outcome, warnings) = await group.next() {
                for warning in warnings { progress?.message("granite convert: warning: \(warning)") }
                summary.add(outcome)
                if case let .failed(path, reason) = outcome {
                    progress?.message("granite convert: failed: \(path): \(reason)")
                }
                progress?.update(done: summary.total, failed: summary.failed.count)
                submit()
            }
        }
        progress?.finish()
        try await store.finish(settings: settings)
        summary.seconds = Double(monotonicNanos() - start) / 1e9
        return summary
    }

    func convert(_ item: WorkItem, store: ManifestStore) async -> (ConvertOutcome, [String]) {
        var warnings = [String]()
        let outcome = await convert(item, store: store, warnings: &warnings)
        return (outcome, warnings)
    }

    /// Whether `known`'s output has the input's comments, or needs none: an output made before
    /// comments were kept lacks them while its settings fingerprint (all kinds kept) still
    /// matches, so a commented input is converted again, once.
    func commentsCarried(_ known: Manifest.Entry, _ bytes: [UInt8], _ format: ImageFormat) -> Bool {
        guard settings.keptKinds.contains(.comment), format.holdsComments, !(known.metadata ?? []).contains(.comment) else { return true }
        return ImageMetadata.read(bytes).metadata.comments.isEmpty
    }

    /// Converts one input; metadata problems (each dropping a block, not the image) go to `warnings`.
    func convert(_ item: WorkItem, store: ManifestStore, warnings: inout [String]) async -> ConvertOutcome {
        if let other = item.collidesWith {
            return .failed(path: item.input, reason: "output name \(item.output) is already used by \(other)")
        }
        do {
            let bytes = try FileBytes.read(item.input)
            guard let sourceFormat = Codecs.sniff(bytes) else {
                throw CodecError.header(path: item.input, reason: bytes.isEmpty ? "empty file" : "not a \(ImageFormat.readableNames)")
            }
            let format = settings.format ?? sourceFormat.defaultOutput
            let fingerprint = settings.fingerprint(for: format)
            let inputHash = ContentHash.hex(bytes)
            let outPath = outputDirectory + "/" + item.output
            let known = store.previous[item.output]
            if let known, !overwrite, known.inputSHA256 == inputHash, known.settings == fingerprint,
               outputMatches(outPath, known), depthDone(known), commentsCarried(known, bytes, format) {
                return .skipped(path: item.input)
            }
            if known == nil, !overwrite, FileManager.default.fileExists(atPath: outPath) {
                return .failed(path: item.input, reason: "\(outPath) exists and is not in the manifest (use --overwrite to replace it)")
            }
            var metadata = MetadataPlan(bytes: bytes, settings: settings)
            var decodeWarnings = [String]()
            defer { warnings += (decodeWarnings + metadata.warnings).map { "\(item.input): \($0)" } }
            let encoded = try process(bytes, item: item, format: format, metadata: &metadata, warnings: &decodeWarnings)
            var entry = Manifest.Entry(input: item.input, output: item.output, inputBytes: bytes.count, inputSHA256: inputHash,
                                       outputBytes: encoded.bytes.count, outputSHA256: ContentHash.hex(encoded.bytes),
                                       settings: fingerprint, width: encoded.width, height: encoded.height)
            entry.metadata = encoded.metadata
            let fileWarnings = decodeWarnings + metadata.warnings
            if !fileWarnings.isEmpty { entry.warnings = fileWarnings }
            var depthFiles: (images: DepthImages, depth: String, preview: String)?
            if let depth {
                let names = DepthImages.names(beside: item.output)
                let depthPath = outputDirectory + "/" + names.depth, previewPath = outputDirectory + "/" + names.preview
                guard let image = encoded.image else { throw ConvertError.output(path: outPath, reason: "no pixels for the depth map") }
                let map = try depth.estimate(image, size: .model)
                let scaled = try ScaledDepthMap(map, width: encoded.width, height: encoded.height)
                let images = try DepthImages(scaled, depthPath: depthPath, previewPath: previewPath)
                depthFiles = (images, depthPath, previewPath)
                entry.depth = names.depth
                entry.depthPreview = names.preview
            }
            try makeDirectory((outPath as NSString).deletingLastPathComponent)
            try await store.record(entry)
            try AtomicFile.write(encoded.bytes, to: outPath)
            var written = [outPath]
            if let depthFiles {
                try depthFiles.images.write(depthPath: depthFiles.depth, previewPath: depthFiles.preview)
                written += [depthFiles.depth, depthFiles.preview]
            }
            await afterWrite?(written)
            return .converted(path: item.input, output: item.output)
        } catch let error as CodecError {
            return .failed(path: item.input, reason: "\(error.phase) error: \(error.reason)")
        } catch {
            return .failed(path: item.input, reason: "\(error)")
        }
    }

    /// Decode (scaled down by the JPEG decoder when a resize allows it; the decoder's warnings
    /// that `--fail-on` lets through go to `warnings`), resize, filter, encode.
    func process(_ bytes: [UInt8], item: WorkItem, format: ImageFormat, metadata: inout MetadataPlan,
                 warnings: inout [String]) throws
        -> (bytes: [UInt8], width: Int, height: Int, image: Image?, metadata: [MetadataKind]) {
        var options = DecodeOptions(maxPixels: settings.maxPixels, applyEXIFOrientation: settings.autoOrients,
                                    failOn: settings.failOn ?? .default)
        var target: (width: Int, height: Int)?
        if let resize = settings.resize {
            let info = try Codecs.info(bytes, path: item.input, options: options)
            let size = resize.targetSize(width: info.width, height: info.height)
            target = size
            options.minimumSize = size
        }
        // JPEG resized into JPEG with nothing else to do to the pixels: the YCbCr planes go from
        // decoder to encoder, never RGB (nil: the file needs the usual path).
        if format == .jpeg, let target, processor.isIdentity, depth == nil, settings.colorspace != .sRGB,
           let out = try Codecs.transcodeJPEG(bytes, path: item.input, options: options, size: target,
                                              filter: settings.effectiveResizeFilter, quality: settings.quality,
                                              progressive: settings.progressive ?? false, outputPath: item.output, warnings: &warnings) {
            let (tagged, kept) = metadata.embed(in: out, size: target)
            return (tagged, target.width, target.height, nil, kept)
        }
        // An animated GIF or WebP stays animated into WebP (every frame resized and filtered); any
        // other output takes its first frame.
        // Its metadata goes along as a still's does (the frames are not turned, so an orientation
        // tag stays as the input had it).
        if format == .webp, let frames = try Codecs.decodeAnimation(bytes, path: item.input, options: options) {
            metadata.keepOrientationTag()
            var out = [AnimationFrame]()
            for frame in frames {
                var image = frame.image
                if let target {
                    image = try Resampler.resize(image, width: target.width, height: target.height, filter: settings.effectiveResizeFilter,
                                                 alpha: .premultiplied)
                }
                image = metadata.convertColor(image, path: item.input)
                out.append(AnimationFrame(image: try processor.process(image), durationMs: frame.durationMs))
            }
            let bytes = try Codecs.encodeAnimatedWebP(out, quality: settings.quality, lossless: settings.lossless ?? false, path: item.output)
            let (w, h) = (out[0].image.width, out[0].image.height)
            let (tagged, kept) = metadata.embed(in: bytes, size: (w, h))
            return (tagged, w, h, out[0].image, kept)
        }
        var image = try Codecs.decode(bytes, path: item.input, options: options, warnings: &warnings)
        if let target {
            image = try Resampler.resize(image, width: target.width, height: target.height, filter: settings.effectiveResizeFilter,
                                         alpha: .premultiplied)
        }
        image = metadata.convertColor(image, path: item.input)
        image = try processor.process(image)
        // JPEG has no alpha: transparent pixels show the background, not the colour stored under them.
        if !format.holdsAlpha { image = image.flattened(onto: settings.background ?? .white) }
        let out: [UInt8]
        switch format {
        case .jpeg:
            out = try Codecs.encodeJPEG(image, quality: settings.quality, progressive: settings.progressive ?? false, path: item.output)
        case .png: out = try Codecs.encodePNG(image, path: item.output)
        case .webp:
            out = try Codecs.encodeWebP(image, quality: settings.quality, lossless: settings.lossless ?? false, path: item.output)
        case .tiff:
            // TIFF keeps ICC, XMP and Exif as tags of its IFD (Exif's IFD a sub-IFD), set while encoding.
            let blocks = metadata.keptBlocks(size: (image.width, image.height), format: .tiff)
            let bytes = try Codecs.encodeTIFF(image, metadata: blocks, path: item.output)
            return (bytes, image.width, image.height, image, blocks.kinds.sorted())
        case .jxl:
            let blocks = metadata.keptBlocks(size: (image.width, image.height), format: .jxl)
            let bytes = try Codecs.encodeJXL(image, quality: settings.quality, metadata: blocks, path: item.output)
            return (bytes, image.width, image.height, image, blocks.kinds.sorted())
        case .heic, .gif:
            throw CodecError.encode(path: item.output, reason: "\(format) can be read but not written")
        case .avif:
            // AVIF takes its metadata inside the encoder call, not inserted afterwards.
            let blocks = metadata.keptBlocks(size: (image.width, image.height), format: .avif)
            let bytes = try Codecs.encodeAVIF(image, quality: settings.quality, metadata: blocks,
                                              threads: ProcessInfo.processInfo.activeProcessorCount, path: item.output)
            return (bytes, image.width, image.height, image, blocks.kinds.sorted())
        }
        let (tagged, kept) = metadata.embed(in: out, size: (image.width, image.height))
        return (tagged, image.width, image.height, image, kept)
    }

    func outputMatches(_ path: String, _ entry: Manifest.Entry) -> Bool {
        guard let bytes = try? FileBytes.read(path), bytes.count == entry.outputBytes else { return false }
        return ContentHash.hex(bytes) == entry.outputSHA256
    }

    /// True when depth is not asked for, or the entry's depth files are there.
    func depthDone(_ entry: Manifest.Entry) -> Bool {
        guard depth != nil else { return true }
        guard let d = entry.depth, let p = entry.depthPreview else { return false }
        let fm = FileManager.default
        return fm.fileExists(atPath: outputDirectory + "/" + d) && fm.fileExists(atPath: outputDirectory + "/" + p)
    }

    func makeDirectory(_ path: String) throws(ConvertError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            // Another shard may have made it in the meantime: that is success too.
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue { return }
            throw .output(path: path, reason: "cannot create folder: \(error.localizedDescription)")
        }
    }

    /// Removes `.NAME.tmp-*` files a killed run left behind (only names `AtomicFile` makes).
    ///
    /// A shard removes only those for files it writes itself (`owned` outputs, their depth files,
    /// its manifest part): another shard may be writing the others right now.
    func removeLeftoverTemporaries(owned: Set<String>?) {
        guard let walker = FileManager.default.enumerator(atPath: outputDirectory) else { return }
        var targets = Set<String>()
        if let owned, let shard {
            targets = owned.union([shard.manifestName])
            for output in owned {
                let names = DepthImages.names(beside: output)
                targets.formUnion([names.depth, names.preview])
            }
        }
        while let rel = walker.nextObject() as? String {
            let name = (rel as NSString).lastPathComponent
            guard name.hasPrefix("."), let marker = name.range(of: AtomicFile.temporaryMarker, options: .backwards) else { continue }
            if owned != nil {
                let target = ((rel as NSString).deletingLastPathComponent as NSString)
                    .appendingPathComponent(String(name[name.index(after: name.startIndex)..<marker.lowerBound]))
                guard targets.contains(target) else { continue }
            }
            unlink((outputDirectory as NSString).appendingPathComponent(rel))
        }
    }
}
