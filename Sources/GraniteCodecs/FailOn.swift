/// Which damage stops an image from decoding, as libvips' `fail_on`; from the most lenient.
///
/// Decoders meet two kinds of damage besides outright errors: a file cut short (`truncated`:
/// the JPEG has no end marker, libjpeg fills the missing rows with gray) and warnings (libjpeg's
/// `Corrupt JPEG data: N extraneous bytes before marker 0xdb`, a damaged ancillary PNG chunk)
/// after which the picture is complete. What is not stopped comes back as a warning.
public enum FailOn: String, Sendable, Codable, CaseIterable, Comparable, Hashable {
    /// Never stop on damage the decoder could get past; truncated JPEGs come back gray-filled.
    case none
    /// Stop on truncated files only (the default).
    case truncated
    /// Stop on errors and truncated files: the same as `truncated` today, as the codecs' errors
    /// are always fatal.
    case error
    /// Stop on anything, even a warning.
    case warning

    /// The default: a truncated file is an error, a warning is reported and the image converts.
    public static let `default` = FailOn.truncated

    public static func < (a: FailOn, b: FailOn) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// Parses `none`, `truncated`, `error` or `warning`.
    public init?(name: String) {
        self.init(rawValue: name.lowercased())
    }

    /// Throws `warning` as a decode error when this level stops it (`truncated` damage from
    /// `.truncated` up, other warnings at `.warning`); otherwise adds it to `warnings` once.
    func check(_ warning: String, truncated: Bool, path: String, into warnings: inout [String]) throws(CodecError) {
        if self >= (truncated ? .truncated : .warning) {
            throw .decode(path: path, reason: warning + " (fail-on \(rawValue))")
        }
        if !warnings.contains(warning) { warnings.append(warning) }
    }
}
