import XCTest
@testable import Granite
final class PlaceholderTests: XCTestCase { func testNothing() { XCTAssertTrue(true) } }
