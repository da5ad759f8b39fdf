import GraniteMedia

/// The processing seam of ``BatchConverter``: what happens to each image between decode and encode.
///
/// ``FilterPipeline`` (the `--filter` chain) is what `granite convert` plugs in; the seam is a
/// protocol so that a caller can measure or replace the whole step (the concurrency tests put a
/// probe here that counts the calls in flight). It is one level above Marble's filters: a step of
/// the batch takes a whole decoded image of any size and format, where a Marble filter is a pass
/// recorded into a chain's command buffer (with its CPU reference) and never seen from here.
/// Implementations are called from several worker tasks at once, so they must be thread-safe.
public protocol ImageProcessor: Sendable {
    /// Processes one image.
    func process(_ image: Image) throws -> Image
    /// A stable description of what the processor does; goes into the manifest so changed filters redo outputs.
    var fingerprint: String { get }
    /// Whether `process` returns its input unchanged (then `granite convert` may skip RGB pixels
    /// altogether, as a JPEG resized into JPEG does).
    var isIdentity: Bool { get }
}

extension ImageProcessor {
    public var isIdentity: Bool { false }
}
