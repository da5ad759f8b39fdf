import CLCMS2
import GraniteMedia

/// Color conversion through Little CMS: pixels tagged with an ICC profile into sRGB.
///
/// ```
/// Image (rgba8 | rgb24, in the profile's space) ─► lcms transform (8-bit, alpha copied) ─► Image in sRGB
/// ```
/// Each call uses its own lcms context, so calls on many threads at once share nothing.
public enum ColorTransform {
    /// An sRGB ICC profile made by lcms (`cmsCreate_sRGBProfile`, v4 matrix/TRC), as bytes: what
    /// `--colorspace srgb` outputs are tagged with.
    public static let sRGBProfile: [UInt8] = {
        let context = cmsCreateContext(nil, nil)
        defer { cmsDeleteContext(context) }
        guard let profile = cmsCreate_sRGBProfileTHR(context) else { return [] }
        defer { cmsCloseProfile(profile) }
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        guard bytes.withUnsafeMutableBytes({ cmsSaveProfileToMem(profile, $0.baseAddress, &size) }) != 0 else { return [] }
        // lcms stamps the creation time (header bytes 24-35); a fixed one keeps outputs, and so the
        // manifest's hashes, the same from run to run. The profile ID (84-99) is left zero by lcms.
        bytes.replaceSubrange(24..<36, with: [0x07, 0xEA, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0])  // 2026-01-01 00:00:00
        return bytes
    }()

    /// `image` (`rgba8` or `rgb24`, in the color space `profile` describes) converted to sRGB.
    ///
    /// Relative colorimetric intent (what matrix/TRC profiles give under any intent); alpha is
    /// copied unchanged. Throws `CodecError.encode` naming `path` when lcms refuses the profile
    /// (not RGB, or unreadable) or the image's format.
    public static func toSRGB(_ image: Image, profile: [UInt8], path: String = "(memory)") throws(CodecError) -> Image {
        let format: cmsUInt32Number
        switch image.format {
        case .rgba8: format = granite_cms_type_rgba_8
        case .rgb24: format = granite_cms_type_rgb_8
        default: throw .encode(path: path, reason: "color conversion needs rgba8 or rgb24 pixels, not \(image.format)")
        }
        guard let context = cmsCreateContext(nil, nil) else { throw .encode(path: path, reason: "lcms: cannot create a context") }
        defer { cmsDeleteContext(context) }
        let source = profile.withUnsafeBytes { cmsOpenProfileFromMemTHR(context, $0.baseAddress, cmsUInt32Number($0.count)) }
        guard let source else { throw .encode(path: path, reason: "lcms cannot read the embedded ICC profile") }
        defer { cmsCloseProfile(source) }
        guard cmsGetColorSpace(source) == cmsSigRgbData else {
            throw .encode(path: path, reason: "the embedded ICC profile is not for RGB data")
        }
        guard let target = cmsCreate_sRGBProfileTHR(context) else { throw .encode(path: path, reason: "lcms: cannot make an sRGB profile") }
        defer { cmsCloseProfile(target) }
        let transform = cmsCreateTransformTHR(context, source, format, target, format,
                                              granite_cms_intent_relative_colorimetric, granite_cms_flags_copy_alpha)
        guard let transform else { throw .encode(path: path, reason: "lcms cannot convert from the embedded ICC profile to sRGB") }
        defer { cmsDeleteTransform(transform) }
        var out = [UInt8](repeating: 0, count: image.bytes.count)
        image.bytes.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                cmsDoTransform(transform, src.baseAddress, dst.baseAddress, cmsUInt32Number(image.pixelCount))
            }
        }
        do {
            return try Image(width: image.width, height: image.height, format: image.format, bytes: out)
        } catch {
            throw .encode(path: path, reason: "\(error)")
        }
    }
}
