import Foundation
import Granite
import GraniteTesting
import GraniteSync
import Synchronization
import XCTest

// Lifetimes: an unmounted tree — components, their attached and listening children, their centers
// and the relays those centers own — is freed once the caller lets go; async work in flight holds
// what it touches until it finishes; a `.shared` relay lives as long as its registry entry.

/// Counts live instances of the lifetime fixtures' centers (each made in a `deinit`-counting class).
let liveCenters = Atomic<Int>(0)

struct LifeState: GraniteState {
    var count = 0
    var seen: [Int] = []
}

struct LifeBump: GraniteEvent {
    var behavior: GraniteEventBehavior { .quiet }
}

struct LifeBumpExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: LifeBump, state: inout LifeState, connection: GraniteConnection) {
        state.count += 1
        connection.request(Ping(), .rebound)
    }
}

/// Asks a component's own relay; the relay answers with `Pong` and broadcasts one too.
struct Ping: GraniteEvent {
    var behavior: GraniteEventBehavior { .quiet }
}

struct Pong: GraniteEvent {
    var behavior: GraniteEventBehavior { .quiet }
}

struct PingExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Ping, state: inout LifeState, connection: GraniteConnection) {
        state.count += 1
        connection.request(Pong(), .rebound)
        connection.request(Pong(), .broadcast)
    }
}

struct PongExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Pong, state: inout LifeState, connection: GraniteConnection) {
        state.seen.append(state.count)
    }
}

final class LifeRelayCenter: GraniteCenter<LifeState> {
    required init() {
        liveCenters.add(1, ordering: .relaxed)
        super.init()
    }
    deinit { liveCenters.subtract(1, ordering: .relaxed) }
    override var expeditions: [GraniteBaseExpedition] { [PingExpedition.Discovery()] }
}

struct LifeRelay: GraniteRelay {
    let command = GraniteService<LifeRelayCenter, LifeState>()
}

/// A center that owns its own relay (not shared) and takes broadcasts.
class LifeCenter: GraniteCenter<LifeState> {
    let relay = LifeRelay()
    required init() {
        liveCenters.add(1, ordering: .relaxed)
        super.init()
    }
    deinit { liveCenters.subtract(1, ordering: .relaxed) }
    override var expeditions: [GraniteBaseExpedition] { [LifeBumpExpedition.Discovery(), PongExpedition.Discovery()] }
    override var behavior: GraniteEventBehavior { .broadcastable }
}

final class LifeParentCenter: LifeCenter {}
final class LifeAttachedCenter: LifeCenter {}
final class LifeListeningCenter: LifeCenter {}

struct LifeNode<C: LifeCenter>: GraniteComponent {
    let command = GraniteCommand<C, LifeState>()
    var body: Int { state.count }
}

/// `@unchecked Sendable`: only ever read to compare with nil (under `Watch`'s lock).
private struct WeakRef: @unchecked Sendable { weak var object: AnyObject? }

/// Weak references to named objects, to see which are still alive.
final class Watch: Sendable {
    private let entries = Locked<[(name: String, ref: WeakRef)]>([])

    func add(_ name: String, _ object: AnyObject) {
        entries.withLock { $0.append((name, WeakRef(object: object))) }
    }

    /// The names of the watched objects not freed yet.
    var alive: [String] { entries.withLock { $0.filter { $0.ref.object != nil }.map(\.name) } }
}

/// Mounts a parent with an attached and a listening child (each center hosting its own relay),
/// sends each an event (which asks its relay, which answers and broadcasts), waits for the work
/// to finish, then unmounts the parent. Returns weak references to all of it.
@discardableResult
func mountSendUnmount(_ runtime: GraniteRuntime, watch: Watch? = nil) async throws -> Watch? {
    let parent = try LifeNode<LifeParentCenter>().mount(in: runtime)
    let attached = try LifeNode<LifeAttachedCenter>().attach(to: parent.command).mount(in: runtime)
    let listening = try LifeNode<LifeListeningCenter>().listen(to: parent.command).mount(in: runtime)
    try parent.sendEvent(LifeBump())
    try attached.sendEvent(LifeBump())
    try listening.sendEvent(LifeBump())
    await runtime.drain()
    if let watch {
        watch.add("parent", parent.command)
        watch.add("attached child", attached.command)
        watch.add("listening child", listening.command)
        watch.add("parent's relay", parent.center.relay.command)
        watch.add("attached child's relay", attached.center.relay.command)
        watch.add("listening child's relay", listening.center.relay.command)
        watch.add("parent's center", parent.center)
        watch.add("listening child's center", listening.center)
    }
    parent.unmount()
    return watch
}

final class LifetimeTests: XCTestCase {
    func testAnUnmountedTreeIsFreedWithItsChildrenCentersAndRelays() async throws {
        let runtime = GraniteRuntime()
        let watch = Watch()
        try await mountSendUnmount(runtime, watch: watch)
        let freed = await eventually { watch.alive.isEmpty }
        XCTAssertTrue(freed, "still alive after unmount: \(watch.alive)")
        XCTAssertEqual(runtime.errors, [])
    }

    func testTheTreeWorkedBeforeItWasFreed() async throws {
        // The same tree, kept: each relay answered its asker and broadcast to its host.
        let runtime = GraniteRuntime()
        let parent = try LifeNode<LifeParentCenter>().mount(in: runtime)
        let child = try LifeNode<LifeAttachedCenter>().attach(to: parent.command).mount(in: runtime)
        try parent.sendEvent(LifeBump())
        try child.sendEvent(LifeBump())
        await runtime.drain()
        XCTAssertEqual(parent.state.seen, [1, 1], "the rebound answer and the broadcast")
        XCTAssertEqual(child.state.seen, [1, 1])
        XCTAssertEqual(parent.center.relay.state.count, 1)
        parent.unmount()
    }

    func testUnmountUnmountsTheWholeSubtreeAttachedOrListening() async throws {
        let runtime = GraniteRuntime()
        let parent = try LifeNode<LifeParentCenter>().mount(in: runtime)
        let attached = try LifeNode<LifeAttachedCenter>().attach(to: parent.command).mount(in: runtime)
        let grandchild = try LifeNode<LifeListeningCenter>().attach(to: attached.command).mount(in: runtime)
        let listening = try LifeNode<LifeListeningCenter>().listen(to: parent.command).mount(in: runtime)
        XCTAssertEqual(attached.center.relay.command.hostCount, 1)
        parent.unmount()
        XCTAssertFalse(attached.command.isMounted, "an attach-only child is unmounted with its parent")
        XCTAssertFalse(grandchild.command.isMounted)
        XCTAssertFalse(listening.command.isMounted)
        XCTAssertEqual(attached.center.relay.command.hostCount, 0, "its relay lost its host")
        XCTAssertThrowsError(try attached.sendEvent(LifeBump())) { error in
            XCTAssertEqual(error as? GraniteError, .unmounted(component: String(reflecting: LifeAttachedCenter.self)))
        }
        await runtime.drain()
    }

    func testAChildUnmountedAloneLeavesItsParentAndIsFreed() async throws {
        let runtime = GraniteRuntime()
        let parent = try LifeNode<LifeParentCenter>().mount(in: runtime)
        let watch = Watch()
        do {
            let child = try LifeNode<LifeListeningCenter>().listen(to: parent.command).attach(to: parent.command)
                .mount(in: runtime)
            watch.add("child", child.command)
            child.unmount()
        }
        let freed = await eventually { watch.alive.isEmpty }
        XCTAssertTrue(freed, "the parent (still mounted) let go of its unmounted child")
        XCTAssertTrue(parent.command.isMounted)
        try parent.sendEvent(LifeBump())
        await runtime.drain()
        XCTAssertEqual(parent.state.count, 1)
        parent.unmount()
    }

    func testAWiredTreeThatNeverMountedIsFreedByUnmount() async throws {
        let watch = Watch()
        do {
            let parent = LifeNode<LifeParentCenter>()
            let child = LifeNode<LifeAttachedCenter>().attach(to: parent.command)
            watch.add("parent", parent.command)
            watch.add("child", child.command)
            parent.unmount()
        }
        let freed = await eventually { watch.alive.isEmpty }
        XCTAssertTrue(freed, "still alive: \(watch.alive)")
    }

    func testAComponentOnceUnmountedCannotMountAgain() throws {
        let node = LifeNode<LifeParentCenter>()
        try node.mount(in: GraniteRuntime())
        node.unmount()
        XCTAssertThrowsError(try node.mount(in: GraniteRuntime())) { error in
            XCTAssertEqual(error as? GraniteError, .unmounted(component: String(reflecting: LifeParentCenter.self)))
        }
    }

    func testASharedRelayLivesAsLongAsItsRegistryEntry() async throws {
        let watch = Watch()
        do {
            let relay = LifeRelay.shared
            watch.add("shared relay", relay.command)
            XCTAssertTrue(LifeRelay.shared.command === relay.command, "one instance per type")
            try relay.sendEvent(Ping())
            await relay.command.settle()
            XCTAssertEqual(relay.state.count, 1)
        }
        XCTAssertEqual(watch.alive, ["shared relay"], "the registry holds it")
        LifeRelay.releaseShared()
        let freed = await eventually { watch.alive.isEmpty }
        XCTAssertTrue(freed, "released from the registry, nobody holds it")
    }
}

// MARK: Async reducers

/// The parent's published count, read by a listening child while it reduces what it heard.
let publishedCount = Locked<(@Sendable () -> Int)?>(nil)

struct SlowBump: GraniteEvent {
    var fail = false
    var behavior: GraniteEventBehavior { .quiet }
}

struct Heard: GraniteEvent {
    var behavior: GraniteEventBehavior { .broadcastable }
}

struct SlowFailure: Error {}

struct SlowBumpExpedition: GraniteAsyncExpedition, GraniteDiscoverable {
    func reduce(event: SlowBump, state: inout AsyncLifeState, connection: GraniteConnection) async throws {
        state.count += 1
        await Task.yield()
        connection.hear(event: Heard())                // an effect: after the state is published
        try await Task.sleep(for: .milliseconds(20))   // on whatever thread it resumes
        connection.request(Heard(), .broadcast)
        if event.fail { throw SlowFailure() }
    }
}

/// Waits until cancelled (its component unmounts).
struct LifeHang: GraniteEvent {
    var behavior: GraniteEventBehavior { .quiet }
}

struct LifeHangExpedition: GraniteAsyncExpedition, GraniteDiscoverable {
    func reduce(event: LifeHang, state: inout AsyncLifeState, connection: GraniteConnection) async throws {
        try await Task.sleep(for: .seconds(600))
    }
}

struct HeardExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Heard, state: inout AsyncLifeState, connection: GraniteConnection) {
        state.seen.append(publishedCount.withLock { $0 }?() ?? -1)
    }
}

struct AsyncLifeState: GraniteState {
    var count = 0
    var seen: [Int] = []
}

final class AsyncParentCenter: GraniteCenter<AsyncLifeState> {
    let relay = LifeRelay()
    override var expeditions: [GraniteBaseExpedition] { [SlowBumpExpedition.Discovery(), LifeHangExpedition.Discovery()] }
}

final class HearingCenter: GraniteCenter<AsyncLifeState> {
    override var expeditions: [GraniteBaseExpedition] { [HeardExpedition.Discovery()] }
    override var behavior: GraniteEventBehavior { .broadcastable }
}

struct AsyncNode<C: GraniteCenter<AsyncLifeState>>: GraniteComponent {
    let command = GraniteCommand<C, AsyncLifeState>()
    var body: Int { state.count }
}

final class AsyncLifetimeTests: XCTestCase {
    override func tearDown() { publishedCount.withLock { $0 = nil } }

    func testAnAsyncReducersEffectsFollowItsPublishedState() async throws {
        let runtime = GraniteRuntime()
        let parent = try AsyncNode<AsyncParentCenter>().mount(in: runtime)
        let child = try AsyncNode<HearingCenter>().listen(to: parent.command).mount(in: runtime)
        let command = parent.command
        publishedCount.withLock { $0 = { command.state.count } }
        try parent.sendEvent(SlowBump())
        try parent.sendEvent(SlowBump())
        await runtime.drain()
        XCTAssertEqual(parent.state.count, 2)
        XCTAssertEqual(child.state.seen, [1, 1, 2, 2],
                       "whoever sees an effect sees the state change behind it (hear and broadcast)")
        parent.unmount()
    }

    func testAFailedAsyncReducerDropsItsEffectsWithItsState() async throws {
        let runtime = GraniteRuntime()
        let parent = try AsyncNode<AsyncParentCenter>().mount(in: runtime)
        let child = try AsyncNode<HearingCenter>().listen(to: parent.command).mount(in: runtime)
        let command = parent.command
        publishedCount.withLock { $0 = { command.state.count } }
        try parent.sendEvent(SlowBump(fail: true))
        await runtime.drain()
        XCTAssertEqual(parent.state.count, 0, "rolled back")
        XCTAssertEqual(child.state.seen, [], "no effect of a change that never happened")
        XCTAssertEqual(runtime.errorCount, 1)
        parent.unmount()
    }

    func testAComponentUnmountedDuringAnAsyncReducerIsFreedWhenItEnds() async throws {
        let runtime = GraniteRuntime()
        let watch = Watch()
        do {
            let parent = try AsyncNode<AsyncParentCenter>().mount(in: runtime)
            watch.add("component", parent.command)
            watch.add("its relay", parent.center.relay.command)
            try parent.sendEvent(LifeHang())
            try await Task.sleep(for: .milliseconds(5))
            parent.unmount()   // cancels the sleep
        }
        let freed = await eventually { watch.alive.isEmpty }
        XCTAssertTrue(freed, "cancelled work let go of its component; alive: \(watch.alive)")
    }
}

// MARK: Soak

/// Resident memory of this process in KiB (Linux `/proc/self/statm`).
func residentKiB() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
          let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
}

final class SoakTests: XCTestCase {
    /// 20,000 mount/send/unmount cycles of a parent with an attached and a listening child, each
    /// hosting its own relay: every center is freed, and resident memory stays flat.
    func testTwentyThousandMountsLeaveNothingBehind() async throws {
        let runtime = GraniteRuntime()
        func cycles(_ n: Int) async throws {
            for _ in 0..<n {
                try await mountSendUnmount(runtime)
            }
            let freed = await eventually({ liveCenters.load(ordering: .relaxed) == 0 }, timeout: .seconds(10))
            XCTAssertTrue(freed, "\(liveCenters.load(ordering: .relaxed)) centers still alive")
        }
        try await cycles(2_000)   // warm-up: allocator arenas, dispatch's thread pool
        let before = residentKiB()
        try await cycles(20_000)
        let after = residentKiB()
        let perThousand = Double(after - before) / 20
        print("soak: resident \(before) → \(after) KiB over 20,000 mounts (\(perThousand) KiB per 1,000)")
        XCTAssertLessThan(perThousand, 64, "resident memory grows \(perThousand) KiB per 1,000 mounts")
        XCTAssertEqual(runtime.errors, [])
    }
}
