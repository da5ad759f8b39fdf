import Foundation
import GraniteCodecs
import GraniteGPU
import GraniteMedia
import Testing
@testable import Marble

/// The `background` filter over time and over a photo (issue 38): the mask's moving average with
/// its scene-cut reset (GPU resident history against `MaskRefinement`'s CPU reference, frame after
/// frame), `image=PATH` (a photo scaled to cover, read when the chain is made), and
/// ``MaskStability``.
@Suite(.serialized) struct BackgroundTemporalTests {
    /// A 37×23 frame, a wider frame and the odd reference sizes.
    static let sizes = [(37, 23)] + GPUReferenceTests.sizes.filter { $0.0 * $0.1 < 10_000 }

    /// `image` with seeded noise of ±`amount` levels on every colour channel (a still camera's sensor noise).
    static func noisy(_ image: Image, amount: Int, seed: UInt64) -> Image {
        var random = SeededRandom(seed: seed)
        var bytes = image.bytes
        for i in bytes.indices where i % 4 != 3 {
            let noise = Int(random.next() % UInt64(2 * amount + 1)) - amount
            bytes[i] = UInt8(min(max(Int(bytes[i]) + noise, 0), 255))
        }
        return try! Image(width: image.width, height: image.height, format: .rgba8, bytes: bytes)
    }

    /// `BackgroundTests.mask` with its noise drawn afresh each frame (a model's flicker on a still scene).
    static func flickering(_ w: Int, _ h: Int, frame: Int) -> Image { BackgroundTests.mask(w, h, seed: 1000 + UInt64(frame)) }

    /// The frame with its luma turned around (a scene cut: mean change far above 24).
    static func inverted(_ image: Image) -> Image {
        let bytes = image.bytes.enumerated().map { $0.offset % 4 == 3 ? $0.element : 255 - $0.element }
        return try! Image(width: image.width, height: image.height, format: .rgba8, bytes: bytes)
    }

    /// A temporary folder, removed at the end of `body`.
    static func withFolder<T>(_ body: (URL) throws -> T) throws -> T {
        let folder = FileManager.default.temporaryDirectory.appending(path: "marble-background-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try body(folder)
    }

    /// Writes `image` as PNG into `folder`; returns the path.
    static func png(_ image: Image, _ folder: URL, _ name: String) throws -> String {
        let path = folder.appending(path: name).path
        try Codecs.encodePNG(image).withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: path)) }
        return path
    }

    // MARK: moving average

    /// GPU against the CPU reference over a sequence (flickering mask, noisy still frame, then a
    /// cut), every mode, smoothing on: each frame within 1 LSB, the histories never drift apart.
    @Test(arguments: ["background:mode=mask", "background:mode=blur,sigma=2", "background:mode=color,smooth=0.8,cut=10"])
    func sequenceMatchesReference(_ text: String) throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain([FilterSpec.parse(text)], context: context)
        for (w, h) in Self.sizes {
            let still = Fixtures.image(w, h)
            for frame in 0..<6 {
                let input = frame == 4 ? Self.inverted(still) : Self.noisy(still, amount: 2, seed: UInt64(frame))
                let mask = Self.flickering(w / 3 + 2, h / 3 + 2, frame: frame)
                let difference = Difference(try chain.apply(input, depth: mask), try chain.applyCPU(input, depth: mask))
                #expect(difference.maxDelta <= 1, "\(text) at \(w)x\(h), frame \(frame): \(difference)")
            }
        }
    }

    /// A still scene with a steady mask converges to that mask's stateless alpha; right after the
    /// mask changed, the average still shows the old one (it is smoothing).
    @Test func stillSceneConverges() throws {
        let context = try Fixtures.gpu()
        let (w, h) = (37, 23)
        let input = Fixtures.image(w, h)
        let (a, b) = (BackgroundTests.mask(15, 9, seed: 1), try Image(width: 15, height: 9, floats: [Float](repeating: 0, count: 135)))
        let smoothed = try FilterChain([FilterSpec.parse("background:mode=mask")], context: context)
        let target = try FilterChain([FilterSpec.parse("background:mode=mask,smooth=0")], context: context).apply(input, depth: b)
        for _ in 0..<3 { _ = try smoothed.apply(input, depth: a) }
        let first = try smoothed.apply(input, depth: b)
        #expect(Difference(first, target).maxDelta >= 60, "the person fades out over frames, not at once: \(Difference(first, target))")
        var last = first
        for _ in 0..<12 { last = try smoothed.apply(input, depth: b) }
        #expect(Difference(last, target).maxDelta <= 1, "converged after 13 frames (0.5^13 of the step): \(Difference(last, target))")
    }

    /// A scene cut (the frame's luma turned around) restarts the average at once: the first frame
    /// after it is the new mask's stateless alpha, on the device as in the reference — no ghost of
    /// the person before. With `cut=255` the same change is no cut and the old mask still weighs in.
    @Test func sceneCutResetsAtOnce() throws {
        let context = try Fixtures.gpu()
        let (w, h) = (37, 23)
        let before = Fixtures.image(w, h), after = Self.inverted(before)
        let (a, b) = (BackgroundTests.mask(15, 9, seed: 1), BackgroundTests.mask(15, 9, seed: 2))
        let fresh = try FilterChain([FilterSpec.parse("background:mode=mask,smooth=0")], context: context)
        let expected = try fresh.apply(after, depth: b), expectedCPU = try fresh.applyCPU(after, depth: b)
        for (spec, resets) in [("background:mode=mask,smooth=0.9", true), ("background:mode=mask,smooth=0.9,cut=255", false)] {
            let chain = try FilterChain([FilterSpec.parse(spec)], context: context)
            for _ in 0..<4 {
                _ = try chain.apply(before, depth: a)
                _ = try chain.applyCPU(before, depth: a)
            }
            let gpu = try chain.apply(after, depth: b), cpu = try chain.applyCPU(after, depth: b)
            if resets {
                #expect(cpu == expectedCPU, "the reference restarts on the cut")
                #expect(Difference(gpu, expected).maxDelta <= 1, "the device restarts on the cut: \(Difference(gpu, expected))")
            } else {
                #expect(Difference(cpu, expectedCPU).maxDelta > 20, "no cut: the old mask still weighs in")
                #expect(Difference(gpu, cpu).maxDelta <= 1, "\(Difference(gpu, cpu))")
            }
        }
    }

    /// The measure a benchmark uses: the smoothed mask (default `smooth`) changes at most half as
    /// much from frame to frame as the unsmoothed one on a still scene. Synthetic flicker: the
    /// model's output is stood in for by a person blob whose noise (±0.1) is drawn afresh every
    /// frame, on a still frame with ±2 levels of sensor noise (the model is not a Marble dependency).
    @Test func smoothingHalvesFlicker() throws {
        let context = try Fixtures.gpu()
        let (w, h) = (127, 63)
        let still = Fixtures.image(w, h)
        var change: [String: Double] = [:]
        for spec in ["background:mode=mask,smooth=0", "background:mode=mask"] {
            let chain = try FilterChain([FilterSpec.parse(spec)], context: context)
            var previous: Image?, total = 0.0
            for frame in 0..<16 {
                let out = try chain.apply(Self.noisy(still, amount: 2, seed: UInt64(frame)), depth: Self.flickering(45, 23, frame: frame))
                if let previous { total += try MaskStability.meanAbsoluteChange(previous: previous, current: out) }
                previous = out
            }
            change[spec] = total / 15
        }
        let raw = change["background:mode=mask,smooth=0"]!, smoothed = change["background:mode=mask"]!
        print("mask stability (mean absolute change a frame, 127x63, synthetic flicker): unsmoothed \(raw), smooth=0.5 \(smoothed)")
        #expect(raw > 0.002, "the unsmoothed mask flickers")
        #expect(smoothed <= 0.5 * raw)
    }

    @Test func stabilityMeasure() throws {
        #expect(try MaskStability.meanAbsoluteChange(previous: [0, 1, 0.5, 0.25], current: [0.5, 1, 0, 0.25]) == 0.25)
        let a = try Image(width: 2, height: 1, format: .gray8, bytes: [0, 255]), b = try Image(width: 2, height: 1, format: .gray8, bytes: [255, 255])
        #expect(try MaskStability.meanAbsoluteChange(previous: a, current: b) == 0.5)
        #expect(throws: MarbleError.self) { try MaskStability.meanAbsoluteChange(previous: [0], current: [0, 1]) }
        #expect(throws: MarbleError.self) {
            try MaskStability.meanAbsoluteChange(previous: a, current: Image(width: 1, height: 2, format: .gray8, bytes: [0, 0]))
        }
    }

    // MARK: image=PATH

    /// The photo, wider or taller than the frame, scaled to cover it: GPU against the CPU reference
    /// on odd sizes, and where the mask says background the output is the covering photo.
    @Test func imageMatchesReference() throws {
        let context = try Fixtures.gpu()
        try Self.withFolder { folder in
            for (pw, ph) in [(61, 97), (150, 40)] {
                let path = try Self.png(Fixtures.image(pw, ph, seed: 9), folder, "photo-\(pw)x\(ph).png")
                let chain = try FilterChain([FilterSpec.parse("background:image=\(path),feather=0.1")], context: context)
                let unsmoothed = try FilterChain([FilterSpec.parse("background:image=\(path),smooth=0")], context: context)
                for (w, h) in Self.sizes {
                    let input = Fixtures.image(w, h)
                    for frame in 0..<2 {
                        let mask = Self.flickering(w / 3 + 2, h / 3 + 2, frame: frame)
                        let gpu = try chain.apply(input, depth: mask), cpu = try chain.applyCPU(input, depth: mask)
                        #expect(Difference(gpu, cpu).maxDelta <= 1, "photo \(pw)x\(ph), frame \(w)x\(h): \(Difference(gpu, cpu))")
                        let kept = BackgroundTests.keptPixels(gpu, input)
                        #expect(kept > 0 && kept < input.pixelCount, "some person, some photo")
                    }
                    // All background: the covering photo itself (colour channels; alpha stays the frame's).
                    let none = try Image(width: 4, height: 3, floats: [Float](repeating: 0, count: 12))
                    let cover = try BackgroundState.cover(Codecs.decodeFile(path), width: w, height: h)
                    let out = try unsmoothed.apply(input, depth: none)
                    let expected = try Image(width: w, height: h, format: .rgba8, bytes: (0..<(w * h)).flatMap { i in
                        let p = cover.pixels[i]
                        return [UInt8(Px.r(p)), UInt8(Px.g(p)), UInt8(Px.b(p)), input.bytes[i * 4 + 3]]
                    })
                    #expect(Difference(out, expected).maxDelta <= 1, "photo \(pw)x\(ph) at \(w)x\(h): \(Difference(out, expected))")
                }
            }
        }
    }

    /// Cover keeps the aspect ratio and crops the centre: of a photo three frames wide in three
    /// coloured bands, only the middle band shows, exactly; of one three frames tall, the same.
    @Test func coverCropsTheCentre() throws {
        let (w, h) = (37, 23)
        func bands(_ pw: Int, _ ph: Int, horizontal: Bool) throws -> Image {
            let colours: [[UInt8]] = [[255, 0, 0, 255], [0, 200, 0, 255], [0, 0, 255, 255]]
            return try Image(width: pw, height: ph, format: .rgba8, bytes: (0..<(pw * ph)).flatMap { i in
                colours[horizontal ? (i % pw) * 3 / pw : (i / pw) * 3 / ph]
            })
        }
        for photo in [try bands(3 * w, h, horizontal: true), try bands(w, 3 * h, horizontal: false), try bands(6 * w, 2 * h, horizontal: true)] {
            let cover = try BackgroundState.cover(photo, width: w, height: h)
            #expect(cover.pixels.allSatisfy { $0 == Px.pack(0, 200, 0, 255) }, "\(photo.width)x\(photo.height): only the middle band")
        }
        // A photo of the frame's aspect at another size is only resized: its corners stay its corners.
        let quadrants = try Image(width: 74, height: 46, format: .rgba8, bytes: (0..<(74 * 46)).flatMap { i -> [UInt8] in
            [(i % 74) < 37 ? 255 : 0, (i / 74) < 23 ? 255 : 0, 0, 255]
        })
        let cover = try BackgroundState.cover(quadrants, width: w, height: h)
        #expect(cover.pixels[0] == Px.pack(255, 255, 0, 255) && cover.pixels[w * h - 1] == Px.pack(0, 0, 0, 255))
    }

    /// A photo that is missing or no image fails when the chain is made, naming the file; the
    /// spellings that cannot work are refused.
    @Test func unreadableImageFailsAtChainBuild() throws {
        try Self.withFolder { folder in
            let missing = folder.appending(path: "missing.jpg").path
            #expect { try FilterChain([FilterSpec.parse("background:image=\(missing)")]) } throws: { error in
                guard case let .unreadableImage(filter, path, reason) = error as? MarbleError else { return false }
                return filter == "background" && path == missing && reason.contains("io error")
                    && (error as! MarbleError).description.contains(missing)
            }
            let text = folder.appending(path: "notes.png")
            try Data("not a picture".utf8).write(to: text)
            #expect { try FilterChain([FilterSpec.parse("background:mode=image,image=\(text.path)")]) } throws: { error in
                guard case let .unreadableImage(_, path, reason) = error as? MarbleError else { return false }
                return path == text.path && reason.contains("header error")
            }
            #expect(throws: MarbleError.invalidValue(filter: "background", parameter: "image", value: "", valid: "a photo's path with mode=image")) {
                try FilterChain([FilterSpec.parse("background:mode=image")])
            }
            let photo = try Self.png(Fixtures.image(8, 8), folder, "photo.png")
            #expect(throws: MarbleError.self) { try FilterChain([FilterSpec.parse("background:mode=color,image=\(photo)")]) }
            // mode=mask with a photo shows the mask; the photo is not even needed for that.
            #expect(try FilterChain([FilterSpec.parse("background:mode=mask,image=\(photo)")]).specs.count == 1)
        }
    }

    @Test func textParameters() throws {
        let spec = try FilterSpec.parse("background:image=/photos/beach day.jpg,smooth=0.7,cut=30")
        #expect(spec.values["image"] == .text("/photos/beach day.jpg") && spec.values["smooth"] == .float(0.7))
        #expect(try FilterSpec.parse(spec.description) == spec, "the description parses back")
        #expect(try FilterSpec.parse("background").values["image"] == .text(""))
        #expect(throws: MarbleError.self) { try FilterSpec(name: "background", values: ["image": .text("a|b")]) }
        #expect(throws: MarbleError.self) { try FilterSpec.parse("background:image=a,b.jpg") }
        #expect(throws: MarbleError.self) { try FilterSpec.parse("background:smooth=1") }
        #expect(throws: MarbleError.self) { try FilterSpec(name: "background", values: ["image": .float(1)]) }
    }
}
