/// How to decode: limits against decompression bombs, orientation, gray handling, scaled decoding.
public struct DecodeOptions: Sendable, Equatable, Hashable {
    /// The most pixels (width × height, from the header) a decode may allocate; larger is a header error.
    public var maxPixels: Int
    /// Rotate/flip images so they come out upright, following the Exif orientation tag (or XMP's
    /// `tiff:Orientation` when there is no Exif one), in every format.
    public var applyEXIFOrientation: Bool
    /// Which damage stops the decode (``FailOn``); the rest comes back as warnings.
    public var failOn: FailOn
    /// Keep gray images gray: `gray8`, or `gray16` for 16-bit gray PNGs. Otherwise everything is `rgba8`.
    public var keepGray: Bool
    /// When set, a JPEG may be decoded at a reduced scale (DCT scaling: 1/2, 1/4, 1/8...) as long as
    /// the result is at least this size (in upright orientation). The caller resizes the rest.
    public var minimumSize: (width: Int, height: Int)? {
        get { minimumSizeStorage.map { ($0.width, $0.height) } }
        set { minimumSizeStorage = newValue.map { SizePair(width: $0.width, height: $0.height) } }
    }
    var minimumSizeStorage: SizePair?

    /// The default pixel limit: 100 megapixels.
    public static let defaultMaxPixels = 100_000_000

    /// Options with the given limits; defaults: 100 MP, orientation applied, gray made `rgba8`,
    /// truncated files refused and warnings reported.
    public init(maxPixels: Int = DecodeOptions.defaultMaxPixels, applyEXIFOrientation: Bool = true,
                keepGray: Bool = false, minimumSize: (width: Int, height: Int)? = nil, failOn: FailOn = .default) {
        self.maxPixels = maxPixels
        self.applyEXIFOrientation = applyEXIFOrientation
        self.failOn = failOn
        self.keepGray = keepGray
        self.minimumSize = minimumSize
    }
}

/// A hashable pair (tuples are not).
struct SizePair: Sendable, Hashable {
    var width: Int
    var height: Int
}
