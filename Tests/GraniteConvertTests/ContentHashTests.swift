import Foundation
import GraniteConvert
import GraniteTesting
import XCTest

final class ContentHashTests: XCTestCase {
    /// FIPS 180-4 example vectors.
    func testStandardVectors() {
        XCTAssertEqual(ContentHash.hex([]), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(ContentHash.hex(Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(ContentHash.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    /// Agrees with coreutils' sha256sum on lengths around every block boundary.
    func testMatchesSha256sum() throws {
        let dir = ConvertFixtures.folder("sha")
        var rng = SystemRandomNumberGenerator()
        for length in [55, 56, 63, 64, 65, 119, 120, 1000, 100_003] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let path = dir + "/\(length)"
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            let text = try ChildProgram.run("/usr/bin/sha256sum", [path]).out
            let expected = String(text.prefix(64))
            XCTAssertEqual(ContentHash.hex(bytes), expected, "length \(length)")
        }
    }
}
