/// The Marble filter catalog: every filter's description and how to make it.
///
/// `Marble.catalog` is what `granite filters` lists; `FilterSpec.parse` checks text against it;
/// `FilterChain` turns specs into GPU steps and CPU references.
public enum Marble {
    /// Every filter, everyday ones first, then the MarbleKit set.
    public static var catalog: [FilterDescription] { entries.map(\.description) }

    /// The description of the filter called `name`.
    public static func description(of name: String) -> FilterDescription? {
        entries.first { $0.description.name == name }?.description
    }

    struct Entry: Sendable {
        let description: FilterDescription
        let make: @Sendable (FilterSpec) throws(MarbleError) -> any FilterKernel
    }

    static func kernel(for spec: FilterSpec) throws(MarbleError) -> any FilterKernel {
        guard let entry = entries.first(where: { $0.description.name == spec.name }) else {
            throw MarbleError.unknownFilter(name: spec.name, valid: catalog.map(\.name))
        }
        return try entry.make(spec)
    }

    static let entries: [Entry] = everyday + marbleKit

    static let everyday: [Entry] = [
        Entry(description: AffineColor.brightness) { AffineColor(brightness: $0) },
        Entry(description: AffineColor.exposure) { AffineColor(exposure: $0) },
        Entry(description: PointColor.gamma) { PointColor(mode: .gamma, spec: $0) },
        Entry(description: AffineColor.colorMatrix) { AffineColor(colorMatrix: $0) },
        Entry(description: PointColor.grayscale) { PointColor(mode: .grayscale, spec: $0) },
        Entry(description: PointColor.invert) { PointColor(mode: .invert, spec: $0) },
        Entry(description: PointColor.threshold) { PointColor(mode: .threshold, spec: $0) },
        Entry(description: GaussianBlur.sharpen) { GaussianBlur(sigma: $0.float("sigma"), amount: $0.float("amount")) },
        Entry(description: Sobel.sobel) { Sobel(sobel: $0) },
        Entry(description: Resize.description) { Resize($0) },
        Entry(description: Remap.crop) {
            Remap(.crop(x: $0.int("x"), y: $0.int("y"), width: $0.int("width"), height: $0.int("height")), name: "crop")
        },
        Entry(description: Remap.flip) { Remap(.flip(horizontal: $0.choice("axis") == "horizontal"), name: "flip") },
        Entry(description: Remap.rotate) { Remap(.rotate(turns: $0.int("turns")), name: "rotate") },
        Entry(description: DepthMask.description) { (spec) throws(MarbleError) in try DepthMask(spec) },
        Entry(description: Background.description) { (spec) throws(MarbleError) in try Background(spec) },
    ]

    static let marbleKit: [Entry] = [
        Entry(description: Sobel.ink) { Sobel(ink: $0) },
        Entry(description: GodRay.description) { GodRay($0) },
        Entry(description: Analog.description) { Analog($0) },
        Entry(description: Remap.pixellate) { Remap(.pixellate($0.int("size")), name: "pixellate") },
        Entry(description: Disco.description) { Disco($0) },
        Entry(description: Drive.description) { Drive($0) },
        Entry(description: Vibes.description) { Vibes($0) },
        Entry(description: Bokeh.description) { Bokeh($0) },
        Entry(description: GaussianBlur.blur) { GaussianBlur(sigma: $0.float("sigma")) },
        Entry(description: Polka.description) { Polka($0) },
        Entry(description: Stars.description) { Stars($0) },
        Entry(description: PointCloud.description) { PointCloud($0) },
    ]
}
