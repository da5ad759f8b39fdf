import GraniteMedia
import Testing

@testable import Marble

/// The `depth` point cloud draws the frame's geometry: a near box lands in front of a far wall.
struct PointCloudGeometryTests {
    static let (width, height) = (96, 64)
    static let wall: [UInt8] = [40, 200, 60, 255], box: [UInt8] = [230, 30, 30, 255]

    /// A green wall with a red box in the middle third.
    static func scene() throws -> Image {
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let inBox = x >= width / 3 && x < 2 * width / 3 && y >= height / 3 && y < 2 * height / 3
                bytes.replaceSubrange((y * width + x) * 4..<(y * width + x + 1) * 4, with: inBox ? box : wall)
            }
        }
        return try Image(width: width, height: height, format: .rgba8, bytes: bytes)
    }

    /// The depth map: the wall at `wallDepth`, the box at `boxDepth` (larger is farther).
    static func depth(wall wallDepth: Float, box boxDepth: Float) throws -> Image {
        var values = [Float](repeating: wallDepth, count: width * height)
        for y in height / 3..<2 * height / 3 { for x in width / 3..<2 * width / 3 { values[y * width + x] = boxDepth } }
        return try Image(width: width, height: height, format: .grayF32, bytes: values.withUnsafeBytes { Array($0) })
    }

    static func count(_ color: [UInt8], in image: Image) -> Int {
        stride(from: 0, to: image.bytes.count, by: 4).filter { Array(image.bytes[$0..<$0 + 4]) == color }.count
    }

    @Test func nearBoxCoversMoreAndHidesTheWallBehindIt() throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain(FilterSpec.parseChain("depth:yaw=20,pitch=0,pointSize=2,depthScale=2"), context: context)
        let scene = try Self.scene()
        let flat = try chain.apply(scene, depth: try Self.depth(wall: 0.9, box: 0.9))
        let near = try chain.apply(scene, depth: try Self.depth(wall: 0.9, box: 0.1))
        #expect(near == (try chain.applyCPU(scene, depth: try Self.depth(wall: 0.9, box: 0.1))), "GPU equals the CPU reference")
        let flatBox = Self.count(Self.box, in: flat), nearBox = Self.count(Self.box, in: near)
        let flatWall = Self.count(Self.wall, in: flat), nearWall = Self.count(Self.wall, in: near)
        #expect(flatBox > 0 && flatWall > 0)
        // Nearer means larger on screen: the box is magnified and covers wall it used to sit beside.
        #expect(Double(nearBox) > 1.5 * Double(flatBox), "box \(nearBox) px near vs \(flatBox) px at the wall's depth")
        #expect(nearWall < flatWall, "the box hides wall behind it: \(nearWall) vs \(flatWall) wall px")
        // The centre of the picture, where box and wall points compete, shows the box.
        let centre = ((Self.height / 2) * Self.width + Self.width / 2) * 4
        #expect(Array(near.bytes[centre..<centre + 4]) == Self.box)
    }
}
