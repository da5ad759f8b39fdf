import Foundation
import GraniteMedia
import Testing
@testable import GraniteGPU
@testable import Marble

/// Compiled pipelines are kept on disk: a second context on the same folder starts with the first
/// one's data, and a folder that cannot be written costs nothing but compile time.
struct PipelineCacheTests {
    @Test func aSecondRunStartsWarm() throws {
        _ = try Fixtures.gpu()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("granite-cache-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try GPUContext(cacheDirectory: folder)
        #expect(first.pipelineCache.loadedBytes == 0, "a cold cache")
        let file = try #require(first.pipelineCacheFile)
        #expect(file.hasPrefix(folder + "/vulkan-"))
        _ = try FilterChain(FilterSpec.parseChain("blur:sigma=2 | sobel"), context: first).apply(Fixtures.image(40, 9))
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        #expect(size > 0, "written after the pipelines were made")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).allSatisfy { !$0.contains(".tmp-") }, "no temporary left")
        let second = try GPUContext(cacheDirectory: folder)
        #expect(second.pipelineCache.loadedBytes == size, "the second context starts from the first's data")
        let image = Fixtures.image(40, 9)
        #expect(try FilterChain(FilterSpec.parseChain("blur:sigma=2 | sobel"), context: second).apply(image)
                == (try FilterChain(FilterSpec.parseChain("blur:sigma=2 | sobel"), context: first).apply(image)))
    }

    @Test func anUnwritableFolderCostsNothing() throws {
        _ = try Fixtures.gpu()
        let context = try GPUContext(cacheDirectory: "/proc/granite-no-such-folder")
        let image = Fixtures.image(13, 7)
        let chain = try FilterChain(FilterSpec.parseChain("invert"), context: context)
        #expect(try chain.apply(image) == (try chain.applyCPU(image)))
        #expect(try GPUContext(cacheDirectory: nil).pipelineCacheFile == nil)
    }
}
