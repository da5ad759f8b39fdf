import Granite
import GraniteTesting
import Synchronization
import XCTest

// Dependencies with an order: Theme ← Settings ← Session (Session needs both).
final class Theme: GraniteDependable, @unchecked Sendable {
    var name = "light"
}

final class Settings: GraniteDependable, @unchecked Sendable {
    static var dependencies: [any GraniteDependable.Type] { [Theme.self] }
    var scale = 1
}

final class Session: GraniteDependable, @unchecked Sendable {
    static var dependencies: [any GraniteDependable.Type] { [Settings.self, Theme.self] }
    var user = "nobody"
}

// A cycle: Alpha → Beta → Gamma → Alpha.
final class Alpha: GraniteDependable, @unchecked Sendable {
    static var dependencies: [any GraniteDependable.Type] { [Beta.self] }
}
final class Beta: GraniteDependable, @unchecked Sendable {
    static var dependencies: [any GraniteDependable.Type] { [Gamma.self] }
}
final class Gamma: GraniteDependable, @unchecked Sendable {
    static var dependencies: [any GraniteDependable.Type] { [Alpha.self] }
}

final class Undeclared: GraniteDependable, @unchecked Sendable {
    var value = 0
}

struct SessionState: GraniteState {
    var seenUser: String?
    var seenScale: Int?
    var failure: GraniteError?
    var updateFailure: GraniteError?
}

/// Writes the user name into Session with the event's lander, then reads it back.
struct SetUser: GraniteEvent {
    var user: String
    var lander: GraniteLander
    var behavior: GraniteEventBehavior { .quiet }
}

struct ReadUndeclared: GraniteEvent {
    var behavior: GraniteEventBehavior { .quiet }
}

struct SetUserExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: SetUser, state: inout SessionState, connection: GraniteConnection) {
        try! connection.update(\Session.user, value: event.user, event.lander)
        state.seenUser = try! connection.retrieve(\Session.user)
        state.seenScale = try! connection.retrieve(\Settings.scale)
    }
}

struct ReadUndeclaredExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: ReadUndeclared, state: inout SessionState, connection: GraniteConnection) {
        do {
            state.seenScale = try connection.retrieve(\Undeclared.value)
        } catch {
            state.failure = error
        }
        do {
            try connection.update(\Undeclared.value, value: 3, .here)   // neither written nor rendered
        } catch {
            state.updateFailure = error
        }
    }
}

class SessionCenter: GraniteCenter<SessionState> {
    @GraniteDependency var session: Session
    @GraniteDependency var settings: Settings
    override var expeditions: [GraniteBaseExpedition] { [SetUserExpedition.Discovery(), ReadUndeclaredExpedition.Discovery()] }
}

final class ObserverCenter: SessionCenter {}

final class CyclicCenter: GraniteCenter<SessionState> {
    @GraniteDependency var alpha: Alpha
}

struct SessionNode<C: GraniteCenter<SessionState>>: GraniteComponent {
    let command = GraniteCommand<C, SessionState>()
    var body: Int { state.seenScale ?? 0 }
}

final class DependencyLanderTests: XCTestCase {
    func testDependenciesResolveInDependencyOrderOnce() throws {
        let runtime = GraniteRuntime()
        let node = try SessionNode<SessionCenter>().mount(in: runtime)
        try SessionNode<ObserverCenter>().mount(in: runtime)
        XCTAssertEqual(runtime.configurationOrder.map { $0.components(separatedBy: ".").last! },
                       ["Theme", "Settings", "Session"])
        XCTAssertTrue(node.center.session === runtime.dependency(Session.self),
                      "both components share one Session")
    }

    func testCycleIsAnErrorNamingTheChain() {
        XCTAssertThrowsError(try SessionNode<CyclicCenter>().mount(in: GraniteRuntime())) { error in
            guard case let .dependencyCycle(chain)? = error as? GraniteError else {
                return XCTFail("expected a cycle error, got \(error)")
            }
            XCTAssertEqual(chain.map { $0.components(separatedBy: ".").last! }, ["Alpha", "Beta", "Gamma", "Alpha"])
            XCTAssertTrue("\(error)".contains("Alpha → "), "\(error)")
        }
    }

    func testUpdateAndRetrieveWithQuietLander() async throws {
        let store = try await GraniteTestStore(SessionNode<SessionCenter>())
        await store.send(SetUser(user: "ada", lander: .quiet), renders: 0) {
            $0.seenUser = "ada"
            $0.seenScale = 1
        }
        await store.finish()
    }

    func testHereLanderRendersOnlyTheCaller() async throws {
        let runtime = GraniteRuntime()
        let other = try SessionNode<ObserverCenter>().mount(in: runtime)
        let store = try await GraniteTestStore(SessionNode<SessionCenter>(), runtime: runtime)
        await store.send(SetUser(user: "bo", lander: .here), renders: 1) {
            $0.seenUser = "bo"
            $0.seenScale = 1
        }
        await store.finish()
        XCTAssertEqual(other.command.renderCount, 1)
    }

    func testTargetLanderRendersEveryComponentOfThatCenter() async throws {
        let runtime = GraniteRuntime()
        let observers = try (0..<3).map { _ in try SessionNode<ObserverCenter>().mount(in: runtime) }
        let store = try await GraniteTestStore(SessionNode<SessionCenter>(), runtime: runtime)
        await store.send(SetUser(user: "cy", lander: .target(ObserverCenter.self)), renders: 0) {
            $0.seenUser = "cy"
            $0.seenScale = 1
        }
        await store.finish()
        for observer in observers {
            await observer.command.settle()
            XCTAssertEqual(observer.command.renderCount, 2)
        }
    }

    func testHomeLanderRendersTheRootOfTheAttachChain() async throws {
        let root = Node<QuietCenter>()
        let child = SessionNode<SessionCenter>().attach(to: root.command)
        let runtime = GraniteRuntime()
        try root.mount(in: runtime)
        try child.sendEvent(SetUser(user: "di", lander: .home))
        await child.command.settle()
        await root.command.settle()
        XCTAssertEqual(root.command.renderCount, 2)
        XCTAssertEqual(child.command.renderCount, 1)
    }

    func testRetrievingAnUndeclaredDependencyThrowsATypedError() async throws {
        let store = try await GraniteTestStore(SessionNode<SessionCenter>())
        let missing = GraniteError.missingDependency(dependency: String(reflecting: Undeclared.self),
                                                     component: String(reflecting: SessionCenter.self))
        await store.send(ReadUndeclared(), renders: 0) {
            $0.failure = missing
            $0.updateFailure = missing
        }
        await store.finish()
    }
}
