import Foundation
import GraniteGPU
import GraniteMedia
import Testing
@testable import Marble

struct FilterChainTests {
    @Test func recordedChainIsReusedAcrossFramesAndTimes() throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain(FilterSpec.parseChain("blur:sigma=1.5 | analog | stars:density=1"), context: context)
        let image = Fixtures.image(64, 40)
        let first = try chain.apply(image, time: 0.5)
        let again = try chain.apply(image, time: 0.5)
        let later = try chain.apply(image, time: 7.25)
        #expect(first == again, "same input and time give the same frame")
        #expect(first != later, "time-animated filters change with time")
        #expect(Difference(later, try chain.applyCPU(image, time: 7.25)).maxDelta <= 1)
        // A different size makes a second plan; the first is still correct afterwards.
        let other = Fixtures.image(33, 17)
        #expect(Difference(try chain.apply(other, time: 1), try chain.applyCPU(other, time: 1)).maxDelta <= 1)
        #expect(try chain.apply(image, time: 0.5) == first)
    }

    /// `profile` times every GPU command of the chain, labelled with the filter that recorded it
    /// (a fused color filter joins the name of the one it rides on), and leaves `apply` as it was.
    @Test func profileLabelsEveryCommandByFilter() throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain(FilterSpec.parseChain("sobel | colormatrix | godRay | invert"), context: context)
        // 44 wide: rows of whole quads but not of whole YUYV quads, so a conversion pass runs first.
        let image = Fixtures.image(44, 20, format: .yuyv)
        let before = try chain.apply(image, time: 2)
        let timings = try chain.profile(image, time: 2, runs: 3)
        // godRay: the light map, then march + add in one pass.
        #expect(timings.map(\.label) == ["convert yuyv: convert", "sobel + colormatrix: sobel_texels", "godRay: godray", "godRay: godray",
                                         "invert: color"])
        #expect(timings.allSatisfy { $0.seconds >= 0 })
        #expect(try chain.apply(image, time: 2) == before)
    }

    @Test func evictedPlansRecycleTheirBuffersSafely() throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain(FilterSpec.parseChain("blur:sigma=1 | godRay | depth:pointSize=1"), context: context)
        // More shapes than the chain keeps plans for: evicted plans hand buffers to the pool, new ones reuse them.
        for round in 0..<2 {
            for size in [(20, 10), (21, 10), (20, 11), (9, 9), (31, 7), (20, 10)] {
                let image = Fixtures.image(size.0, size.1, seed: UInt64(round))
                #expect(Difference(try chain.apply(image), try chain.applyCPU(image)).maxDelta <= 1, "\(size) round \(round)")
            }
        }
    }

    @Test func applyIsSafeFromSeveralThreads() async throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain(FilterSpec.parseChain("sobel | pixellate:size=3"), context: context)
        let images = (0..<6).map { Fixtures.image(40 + $0, 30, seed: UInt64($0)) }
        let expected = try images.map { try chain.applyCPU($0) }
        let results = try await withThrowingTaskGroup(of: (Int, Image).self) { group in
            for round in 0..<3 {
                for (index, image) in images.enumerated() {
                    group.addTask { (index, try chain.apply(image, time: Float(round))) }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 18)
        for (index, image) in results { #expect(image == expected[index]) }
    }

    /// Two frames in flight (frame N + 1 submitted before frame N is read back) give what `apply`
    /// gives frame by frame, also when `apply` runs on the same chain in between and the frame size
    /// changes: each frame holds its own plan.
    @Test func framesInFlightMatchApply() throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain(FilterSpec.parseChain("blur:sigma=1.5 | godRay | analog"), context: context)
        let frames = (0..<5).map { Fixtures.image(48, 20, format: .yuyv, seed: UInt64($0)) } + [Fixtures.image(13, 7, seed: 9)]
        let expected = try frames.indices.map { try chain.apply(frames[$0], time: Float($0) / 4) }
        var results: [Image] = []
        var previous: ChainFrame?
        for (index, image) in frames.enumerated() {
            let frame = try chain.frame(image, time: Float(index) / 4)
            try frame.run()
            if let previous {
                results.append(try previous.rgba())
                previous.end()
            }
            previous = frame
            if index == 2 { #expect(try chain.apply(frames[0]) == expected[0], "apply between frames in flight") }
        }
        if let previous {
            results.append(try previous.rgba())
            previous.end()
        }
        #expect(results == expected)
        #expect(Set(results.map(\.bytes)).count == frames.count, "different times and inputs give different frames")
    }

    @Test func fingerprintNamesEveryParameter() throws {
        let a = try FilterChain(FilterSpec.parseChain("blur:sigma=2 | sobel"))
        let b = try FilterChain(FilterSpec.parseChain("blur | sobel:scale=1"))
        let c = try FilterChain(FilterSpec.parseChain("blur:sigma=2.5 | sobel"))
        #expect(a.fingerprint == "blur:sigma=2 | sobel:scale=1 @limited")
        #expect(a.fingerprint == b.fingerprint, "defaults spelled out or not, same chain")
        #expect(a.fingerprint != c.fingerprint)
        #expect(try FilterChain([], range: .full).fingerprint == "none @full")
    }

    @Test func emptyChainConvertsOnly() throws {
        let image = Fixtures.image(5, 3, format: .rgb24)
        let out = try FilterChain([]).applyCPU(image)
        #expect(out.format == .rgba8 && out.bytes[0] == image.bytes[0] && out.bytes[3] == 255)
    }

    @Test func depthMapMustBeFloat() throws {
        let chain = try FilterChain([FilterSpec.parse("depthmask")])
        let image = Fixtures.image(4, 4)
        let wrong = try Image(width: 4, height: 4, format: .gray8)
        #expect(throws: MarbleError.invalidDepth(reason: "expected grayF32, got gray8")) { try chain.applyCPU(image, depth: wrong) }
    }
}
