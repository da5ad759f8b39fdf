import XCTest
@testable import GraniteMedia

final class RecycledBytesTests: XCTestCase {
    private func address(_ bytes: [UInt8]) -> UnsafeRawPointer? { bytes.withUnsafeBytes { $0.baseAddress } }

    /// A slot whose array was let go is refilled in place: the same storage comes back.
    func testReusesStorageNobodyHolds() {
        var recycler = RecycledBytes(slots: 2)
        var first: [UInt8]? = recycler.make(count: 4096) { $0.initializeMemory(as: UInt8.self, repeating: 1) }
        let firstAddress = address(first!)
        first = nil
        _ = recycler.make(count: 4096) { $0.initializeMemory(as: UInt8.self, repeating: 2) }
        let third = recycler.make(count: 4096) { $0.initializeMemory(as: UInt8.self, repeating: 3) }
        XCTAssertEqual(address(third), firstAddress, "slot 0 again, and nobody held its array")
        XCTAssertEqual(third, [UInt8](repeating: 3, count: 4096))
        XCTAssertNil(first)
    }

    /// An array still held is never overwritten: the new one gets its own storage (copy-on-write).
    func testHeldArrayIsLeftIntact() {
        var recycler = RecycledBytes(slots: 1)
        let held = recycler.make(count: 64) { $0.initializeMemory(as: UInt8.self, repeating: 7) }
        let next = recycler.make(count: 64) { $0.initializeMemory(as: UInt8.self, repeating: 9) }
        XCTAssertEqual(held, [UInt8](repeating: 7, count: 64))
        XCTAssertEqual(next, [UInt8](repeating: 9, count: 64))
        XCTAssertNotEqual(address(held), address(next))
    }

    /// Another size gets storage of that size.
    func testSizeChange() {
        var recycler = RecycledBytes(slots: 1)
        XCTAssertEqual(recycler.make(count: 16) { $0.initializeMemory(as: UInt8.self, repeating: 1) }.count, 16)
        XCTAssertEqual(recycler.make(count: 40) { $0.initializeMemory(as: UInt8.self, repeating: 1) }.count, 40)
        XCTAssertEqual(recycler.make(count: 0) { _ in }.count, 0)
    }
}
