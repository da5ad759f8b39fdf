import Foundation
import GraniteMedia
import XCTest
@testable import GraniteML

/// The depth estimator end to end on the real FastDepth model, the description files and the
/// depth-map helpers.
final class DepthEstimatorTests: XCTestCase {
    /// A rendered room: a far back wall, a floor in perspective and a box standing near the camera.
    static func renderScene(width: Int = 320, height: Int = 240) throws -> (Image, box: (Int, Int, Int, Int), wall: (Int, Int, Int, Int)) {
        var bytes = [UInt8](repeating: 255, count: width * height * 4)
        let horizon = height * 45 / 100
        let box = (width * 30 / 100, height * 50 / 100, width * 70 / 100, height * 95 / 100)
        func put(_ x: Int, _ y: Int, _ r: Float, _ g: Float, _ b: Float) {
            let i = (y * width + x) * 4
            bytes[i] = UInt8(min(max(r, 0), 255)); bytes[i + 1] = UInt8(min(max(g, 0), 255)); bytes[i + 2] = UInt8(min(max(b, 0), 255))
        }
        for y in 0..<height {
            for x in 0..<width {
                if y < horizon {
                    // Wall: pale, evenly lit, faint vertical panels.
                    let panel: Float = (x / 40) % 2 == 0 ? 0 : 8
                    put(x, y, 200 - panel, 196 - panel, 186 - panel)
                } else {
                    // Floor: boards converging to a vanishing point, brighter towards the camera.
                    let t = Float(y - horizon) / Float(height - horizon)
                    let u = (Float(x) - Float(width) / 2) / (0.2 + t)
                    let seam: Float = Int(u.magnitude) % 48 < 3 ? -40 : 0
                    put(x, y, 110 + 70 * t + seam, 80 + 50 * t + seam, 50 + 30 * t + seam)
                }
            }
        }
        // The box: front face, a lighter top and a shaded side, with a contact shadow.
        let (x0, y0, x1, y1) = box
        for y in y0..<y1 { for x in x0..<x1 { put(x, y, 150 - Float(y - y0) * 0.4, 60, 50) } }
        for y in (y0 - 14)..<y0 { for x in (x0 + (y0 - y))..<(x1 + (y0 - y)) where x < width { put(x, y, 205, 120, 105) } }
        for y in (y0 - 14)..<(y1 - 14) { for x in x1..<min(x1 + 14, width) where y >= y0 - (x - x1) { put(x, y, 95, 35, 30) } }
        for y in y1..<min(y1 + 5, height) { for x in x0..<min(x1 + 10, width) { put(x, y, 40, 30, 20) } }
        let image = try Image(width: width, height: height, format: .rgba8, bytes: bytes)
        let wall = (width * 10 / 100, height * 5 / 100, width * 90 / 100, horizon - 10)
        return (image, (x0 + 10, y0 + 10, x1 - 10, y1 - 10), wall)
    }

    private static func median(_ map: DepthMap, _ r: (Int, Int, Int, Int)) -> Float {
        var v: [Float] = []
        for y in r.1..<r.3 { for x in r.0..<r.2 { v.append(map[x, y]) } }
        return v.sorted()[v.count / 2]
    }

    func testNearBoxIsCloserThanFarWall() throws {
        let estimator = try DepthEstimator(modelPath: try TestEnvironment.model("fastdepth-224-int8.onnx"), threads: 1)
        let (image, box, wall) = try Self.renderScene()
        let map = try estimator.estimate(image)
        XCTAssertEqual(map.width, 320)
        XCTAssertEqual(map.height, 240)
        XCTAssertTrue(map.isMetric)
        let boxDepth = Self.median(map, box), wallDepth = Self.median(map, wall)
        print("rendered scene: box \(boxDepth) m, wall \(wallDepth) m")
        XCTAssertLessThan(boxDepth, wallDepth, "the box in front must be nearer than the back wall")
        XCTAssertTrue(map.values.allSatisfy { $0 >= 0 && $0 <= 18.3 }, "FastDepth's range is 0…18.3 m")
        // In the preview the near box is brighter (towards yellow) than the far wall.
        let preview = map.colorized()
        XCTAssertEqual(preview.format, .rgba8)
        // (Compared over the two regions, not single pixels: one pixel's color is one quantised depth.)
        func warmth(_ r: (Int, Int, Int, Int)) -> Double {
            var sum = 0, n = 0
            for y in r.1..<r.3 { for x in r.0..<r.2 { let p = preview.rgba(x: x, y: y); sum += Int(p.r) + Int(p.g); n += 1 } }
            return Double(sum) / Double(n)
        }
        XCTAssertGreaterThan(warmth(box), warmth(wall))
    }

    func testDescriptionFilesMatchTheBuiltIns() throws {
        for d in ModelDescription.builtIn {
            let path = TestEnvironment.root.appendingPathComponent("Models/\(d.name).json").path
            XCTAssertEqual(try ModelDescription.load(path: path), d, path)
        }
    }

    func testInvalidDescriptionIsATypedError() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("granite-bad-\(getpid()).json")
        try Data(#"{"name": "x", "file": "x.onnx", "input": {"width": 0}}"#.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        XCTAssertThrowsError(try ModelDescription.load(path: url.path)) { error in
            guard case .invalidDescription(path: url.path, _)? = error as? MLError else { return XCTFail("\(error)") }
        }
    }

    func testSearchPathOrder() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("granite-models-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent(ModelDescription.fastDepth224.file)
        try Data([1]).write(to: file)
        XCTAssertEqual(try ModelLocator.locate(.fastDepth224, environment: ["GRANITE_MODEL_PATH": "/nope:\(dir.path)"]), file.path)
        XCTAssertEqual(try ModelLocator.locate(.fastDepth224, explicit: dir.path), file.path)
        let environment = ["GRANITE_MODEL_PATH": dir.path, "HOME": "/home/nobody"]
        XCTAssertThrowsError(try ModelLocator.locate(.midasSmall, environment: environment,
                                                     executable: "/opt/granite/bin/granite")) { error in
            guard case let .modelNotFound(name, searched)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertEqual(name, "model-small.onnx")
            XCTAssertEqual(searched, [dir.appendingPathComponent("model-small.onnx").path,
                                      "/home/nobody/.local/share/granite/models/model-small.onnx",
                                      "/opt/granite/share/granite/models/model-small.onnx"])
            XCTAssertTrue("\(error)".contains("GRANITE_MODEL_PATH"), "the error says how to fix it: \(error)")
        }
        XCTAssertThrowsError(try ModelLocator.locate(.fastDepth224, explicit: "/no/such/model.onnx"))
    }

    /// XDG data home, an installed prefix and the checkout's Models/ are found from the executable,
    /// never from the working directory.
    func testSearchFindsUserPrefixAndCheckoutModels() throws {
        let fm = FileManager.default
        let root = fm.temporaryDirectory.appendingPathComponent("granite-locate-\(getpid())")
        defer { try? fm.removeItem(at: root) }
        func place(_ folder: String) throws -> String {
            let url = root.appendingPathComponent(folder)
            try fm.createDirectory(at: url, withIntermediateDirectories: true)
            let file = url.appendingPathComponent(ModelDescription.fastDepth224.file)
            try Data([2]).write(to: file)
            return file.path
        }
        // A checkout: Package.swift + Models/, the executable deep in .build.
        let checkoutModel = try place("checkout/Models")
        try Data().write(to: root.appendingPathComponent("checkout/Package.swift"))
        try fm.createDirectory(at: root.appendingPathComponent("checkout/.build/x86_64-unknown-linux-gnu/release"),
                               withIntermediateDirectories: true)
        let built = root.appendingPathComponent("checkout/.build/x86_64-unknown-linux-gnu/release/granite").path
        let bare = ["HOME": root.appendingPathComponent("home").path]
        XCTAssertEqual(try ModelLocator.locate(.fastDepth224, environment: bare, executable: built), checkoutModel)
        // An installed prefix comes before the checkout.
        let prefixModel = try place("prefix/share/granite/models")
        XCTAssertEqual(try ModelLocator.locate(.fastDepth224, environment: bare,
                                               executable: root.appendingPathComponent("prefix/bin/granite").path), prefixModel)
        // The user's folder (XDG_DATA_HOME, else ~/.local/share) comes before both.
        let userModel = try place("home/.local/share/granite/models")
        XCTAssertEqual(try ModelLocator.locate(.fastDepth224, environment: bare, executable: built), userModel)
        let xdgModel = try place("xdg/granite/models")
        XCTAssertEqual(try ModelLocator.locate(.fastDepth224, environment: bare.merging(["XDG_DATA_HOME": root.appendingPathComponent("xdg").path]) { $1 },
                                               executable: built), xdgModel)
        // A Models/ folder in the working directory alone is not searched.
        let cwd = fm.currentDirectoryPath
        defer { fm.changeCurrentDirectoryPath(cwd) }
        _ = try place("elsewhere/Models")
        XCTAssertTrue(fm.changeCurrentDirectoryPath(root.appendingPathComponent("elsewhere").path))
        XCTAssertThrowsError(try ModelLocator.locate(.fastDepth224, environment: ["HOME": "/home/nobody"],
                                                     executable: "/opt/granite/bin/granite"))
    }

    /// The default model ships in the repository and matches the hash its description records;
    /// a damaged copy under the described name is refused with the expected and actual hashes.
    func testDefaultModelShipsAndItsHashIsChecked() throws {
        let shipped = try ModelLocator.locate(.fastDepth224, environment: ["HOME": "/home/nobody"])
        XCTAssertTrue(shipped.hasSuffix("Models/fastdepth-224-int8.onnx"), shipped)
        XCTAssertNoThrow(try DepthEstimator(modelPath: shipped, threads: 1))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("granite-hash-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: shipped))
        bytes[bytes.count / 2] ^= 0x5A
        let damaged = dir.appendingPathComponent(ModelDescription.fastDepth224.file)
        try bytes.write(to: damaged)
        XCTAssertThrowsError(try DepthEstimator(modelPath: damaged.path, threads: 1)) { error in
            guard case let .modelHashMismatch(path, expected, actual)? = error as? MLError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, damaged.path)
            XCTAssertEqual(expected, ModelDescription.fastDepth224.sha256)
            XCTAssertNotEqual(actual, expected)
        }
    }

    func testSixteenBitAndPreviewConversions() throws {
        let metric = try DepthMap(width: 3, height: 1, values: [0.5, 2, 100], meaning: .depth, isMetric: true)
        let png = metric.to16BitPNGImage()
        XCTAssertEqual(png.format, .gray16)
        let mm = png.bytes.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
        XCTAssertEqual(mm, [500, 2000, 65535], "millimetres, saturating")
        let inverse = try DepthMap(width: 2, height: 1, values: [1, 3], meaning: .inverseDepth, isMetric: false)
        XCTAssertEqual(inverse.nearness(), [0, 1])
        let rel = inverse.to16BitPNGImage().bytes.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
        XCTAssertEqual(rel, [65535, 0], "relative maps: larger = farther")
        let colors = inverse.colorized()
        XCTAssertEqual(colors.rgba(x: 0, y: 0).b > colors.rgba(x: 0, y: 0).g, true, "far is purple")
        XCTAssertGreaterThan(colors.rgba(x: 1, y: 0).r, 200, "near is yellow")
        XCTAssertThrowsError(try DepthMap(width: 2, height: 2, values: [1], meaning: .depth, isMetric: true))
    }

    func testUnsupportedImageFormatIsATypedError() throws {
        let estimator = try DepthEstimator(modelPath: try TestEnvironment.model("fastdepth-224-int8.onnx"), threads: 1)
        let yuyv = try Image(width: 4, height: 2, format: .yuyv)
        XCTAssertThrowsError(try estimator.estimate(yuyv)) { error in
            guard case .unsupportedImage? = error as? MLError else { return XCTFail("\(error)") }
        }
    }
}
