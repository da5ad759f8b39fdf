import GraniteGPU
import GraniteMedia
import Testing
@testable import Marble

/// Marble's public API throws `MarbleError` (typed), and errors from the layers under it keep
/// their message inside a case that names the layer.
struct MarbleErrorTests {
    /// `catch` hands the caller a `MarbleError`, no cast (this compiles only with `throws(MarbleError)`).
    @Test func parsingThrowsMarbleErrorTyped() {
        do {
            _ = try FilterSpec.parseChain("blur | nope")
            Issue.record("an unknown filter must throw")
        } catch {
            let typed: MarbleError = error
            guard case let .unknownFilter(name, valid) = typed else {
                Issue.record("\(typed)")
                return
            }
            #expect(name == "nope")
            #expect(valid.contains("blur"))
        }
    }

    /// A GPU run on a format the chain cannot read is a typed error naming the format.
    @Test func applyThrowsMarbleErrorTyped() throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain(FilterSpec.parseChain("invert"), context: context)
        let image = try Image(width: 4, height: 4, format: .gray16)
        do {
            _ = try chain.apply(image)
            Issue.record("gray16 is not a chain input")
        } catch {
            let typed: MarbleError = error
            #expect(typed == .unsupportedInput(.gray16))
        }
    }

    @Test func foreignErrorsKeepTheirMessageInACaseNamingTheLayer() {
        let gpu = GPUError.vulkan(call: "vkCreateBuffer", result: -2)
        #expect(MarbleError.gpu(gpu).description == "vkCreateBuffer failed: VK_ERROR_OUT_OF_DEVICE_MEMORY (-2)")
        #expect(throws: MarbleError.gpu(gpu)) { try MarbleError.gpu { () throws(GPUError) in throw gpu } }
        let media = MediaError.invalidSize(width: 0, height: 3)
        #expect(MarbleError.image(media).description == media.description)
        #expect(throws: MarbleError.image(media)) { try MarbleError.image { () throws(MediaError) in throw media } }
    }
}
