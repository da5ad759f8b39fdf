// A counter relay broadcasting to three components — the event core's smallest real program.
//
//   CounterRelay (own executor) ──.quiet broadcast Tick──► DisplayComponent × 3 (0 renders a tick)
//        ▲ start(): a producer thread sends Increment                  │ every `--every` ticks: Show (.none) → render
//        │                                                            └─.contact Done──► Dashboard (attach)
//
// Usage: granite-sample [--ticks N] [--every K]
import Dispatch
import Foundation
import Granite

// MARK: The relay

struct CounterRelayState: GraniteState { var count = 0 }

/// Sent by the producer thread; the relay counts and broadcasts.
struct Increment: GraniteEvent { var behavior: GraniteEventBehavior { .quiet } }

/// What every display hears: the new count. Quiet: no render per tick.
struct Tick: GraniteEvent {
    let count: Int
    var behavior: GraniteEventBehavior { .quiet }
    var beam: GraniteBeamType { .broadcast }
}

struct IncrementExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Increment, state: inout CounterRelayState, connection: GraniteConnection) {
        state.count += 1
        connection.request(Tick(count: state.count))
    }
}

final class CounterRelayCenter: GraniteCenter<CounterRelayState> {
    override var expeditions: [GraniteBaseExpedition] { [IncrementExpedition.Discovery()] }
}

struct CounterRelay: GraniteRelay {
    let command = GraniteService<CounterRelayCenter, CounterRelayState>()

    /// Starts the producer once every display is hosting the relay (so none misses a tick).
    func start() {
        let ticks = Options.ticks
        Thread.detachNewThread { [self] in
            for _ in 0..<ticks { try? self.sendEvent(Increment()) }
        }
    }
}

// MARK: A display

struct DisplayState: GraniteState {
    var name = ""
    var seen = 0
    var last = 0
}

/// Shows the current count (renders).
struct Show: GraniteEvent {}
/// Tells the dashboard this display saw every tick.
struct Done: GraniteEvent {
    let name: String
    let seen: Int
    var beam: GraniteBeamType { .contact }
}

struct TickExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Tick, state: inout DisplayState, connection: GraniteConnection) {
        state.seen += 1
        state.last = event.count
        if event.count % Options.every == 0 { connection.send(Show()) }
        if event.count == Options.ticks { connection.request(Done(name: state.name, seen: state.seen)) }
    }
}

struct ShowExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Show, state: inout DisplayState, connection: GraniteConnection) {}
}

final class DisplayCenter: GraniteCenter<DisplayState> {
    let counter = CounterRelay.shared
    override var expeditions: [GraniteBaseExpedition] { [TickExpedition.Discovery(), ShowExpedition.Discovery()] }
    override var behavior: GraniteEventBehavior { .broadcastable }
}

struct DisplayComponent: GraniteComponent {
    let command: GraniteCommand<DisplayCenter, DisplayState>
    init(name: String) { command = .init(state: DisplayState(name: name)) }

    /// The render step: one status line.
    var body: Void {
        print("  display \(state.name): count \(state.last), ticks seen \(state.seen), renders \(command.renderCount)")
    }
}

// MARK: The dashboard

struct DashboardState: GraniteState { var done: [String: Int] = [:] }

struct DoneExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Done, state: inout DashboardState, connection: GraniteConnection) {
        state.done[event.name] = event.seen
    }
}

final class DashboardCenter: GraniteCenter<DashboardState> {
    override var expeditions: [GraniteBaseExpedition] { [DoneExpedition.Discovery()] }
}

struct Dashboard: GraniteComponent {
    let command = GraniteCommand<DashboardCenter, DashboardState>()
    var body: Void {}
}

// MARK: Main

enum Options {
    nonisolated(unsafe) static var ticks = 3_000
    nonisolated(unsafe) static var every = 1_000
}

var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--ticks": Options.ticks = Int(arguments.next() ?? "") ?? Options.ticks
    case "--every": Options.every = max(1, Int(arguments.next() ?? "") ?? Options.every)
    default:
        FileHandle.standardError.write("usage: granite-sample [--ticks N] [--every K]\n".data(using: .utf8)!)
        exit(64)
    }
}

print("granite-sample: a counter relay broadcasting \(Options.ticks) quiet ticks to three components")
let dashboard = Dashboard()
let displays = ["A", "B", "C"].map { DisplayComponent(name: $0).attach(to: dashboard.command) }
let started = ContinuousClock.now
do {
    try dashboard.mount()
} catch {
    print("granite-sample: \(error)")
    exit(1)
}
CounterRelay.shared.start()
let deadline = started + .seconds(60)
while dashboard.state.done.count < displays.count, ContinuousClock.now < deadline {
    Thread.sleep(forTimeInterval: 0.005)
}
let elapsed = ContinuousClock.now - started
let expectedRenders = 1 + Options.ticks / Options.every
var ok = dashboard.state.done.count == displays.count
for display in displays {
    let good = display.state.seen == Options.ticks && display.command.renderCount == expectedRenders
    ok = ok && good
    print("display \(display.state.name): \(display.state.seen)/\(Options.ticks) ticks, \(display.command.renderCount) renders (expected \(expectedRenders)) \(good ? "ok" : "WRONG")")
}
print("relay count \(CounterRelay.shared.state.count); \(String(format: "%.1f", Double(Options.ticks * displays.count) / (Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds)))) deliveries/s")
dashboard.unmount()
exit(ok ? 0 : 1)
