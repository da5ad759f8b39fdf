import Granite
import GraniteTesting
import XCTest

/// Events sent to a component before it mounts: they wait, unreduced, and are reduced once it
/// mounts — after the mount's render and appear links (dependencies resolved, relays hosted),
/// in the order sent. Unmounting drops what still waits.
final class MountTests: XCTestCase {
    func testEventsSentBeforeMountWaitForItThenFollowTheAppearLinksInOrder() async throws {
        let node = LinkNode<LinkCenter>()
        try node.sendEvent(SetValue(value: 7))
        try node.sendEvent(SetValue(value: 8))
        await node.command.settle()
        XCTAssertEqual(node.state, LinkState(), "nothing is reduced before the component mounts")
        XCTAssertEqual(node.command.renderCount, 0, "nor rendered")
        XCTAssertEqual(node.command.waitingForMount, 2)
        let store = try await GraniteTestStore(node)
        XCTAssertEqual(node.command.waitingForMount, 0)
        await store.receive(Prepare.self, renders: 0) { $0.prepared = 1 }
        await store.receive(Appeared.self, renders: 0) { $0.appeared = 1 }
        await store.receive(SetValue.self, renders: 1) { $0.value = 7 }
        await store.receive(SetValue.self, renders: 1) { $0.value = 8 }
        await store.receive(ValueChanged.self, renders: 0) { $0.valueChanges = 1 }
        await store.receive(ValueChanged.self, renders: 0) { $0.valueChanges = 2 }
        await store.finish()
    }

    /// Async reducers queued before mounting keep their order with the ones sent after it.
    func testOrderHoldsAcrossTheMount() async throws {
        let node = OrderNode()
        func send(_ i: Int) throws {
            if i % 2 == 0 { try node.sendEvent(FastAppend(tag: i)) } else { try node.sendEvent(SlowAppend(tag: i, maxDelayMicros: 300)) }
        }
        for i in 0..<20 { try send(i) }
        try node.mount(in: GraniteRuntime())
        for i in 20..<40 { try send(i) }
        await node.command.settle()
        XCTAssertEqual(node.state.log, Array(0..<40))
    }

    /// A component unmounted before it ever mounted drops what waited and refuses more.
    func testUnmountBeforeMountDropsWhatWaited() async throws {
        let node = OrderNode()
        try node.sendEvent(FastAppend(tag: 1))
        node.unmount()
        XCTAssertEqual(node.command.waitingForMount, 0)
        XCTAssertThrowsError(try node.sendEvent(FastAppend(tag: 2))) { error in
            XCTAssertEqual(error as? GraniteError, .unmounted(component: String(reflecting: OrderCenter.self)))
        }
        XCTAssertThrowsError(try node.mount(in: GraniteRuntime()), "an unmounted component stays closed") { error in
            XCTAssertEqual(error as? GraniteError, .unmounted(component: String(reflecting: OrderCenter.self)))
        }
        await node.command.settle()
        XCTAssertEqual(node.state.log, [])
    }
}
