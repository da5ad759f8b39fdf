import ArgumentParser
import Granite
import GraniteCam  // MemoryProbe
import OpenCombine

/// `granite-bench events`: the event core's costs beside OpenCombine's `PassthroughSubject.send`.
struct EventsBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Quiet/.none events, hear fan-out and relay broadcast vs OpenCombine, same run.")

    @Option(help: "Events per measurement.")
    var events = 200_000

    @Option(help: "Subscribers/children for fan-out and broadcast.")
    var fanout = 100

    @Option(help: "Repetitions; the median is printed.")
    var runs = 7

    @Option(help: "Run only the cases whose name contains this text.")
    var only: String?

    func run() throws {
        print("granite-bench events: ns per event (lower is better); median of \(runs) interleaved runs, best run in ()")
        print(pad("case", 44) + pad("granite", 16) + pad("opencombine", 16) + pad("ratio", 15) + "renders")
        let fan = max(1, events / fanout)
        try row("quiet event, 1 component", n: events,
                granite: { n in try quietGranite(n) }, combine: { n in combineSend(n, subscribers: 1) })
        try row(".none event (render each), 1 component", n: events,
                granite: { n in try noneGranite(n) }, combine: { n in combineSend(n, subscribers: 1) })
        try row("hear fan-out to \(fanout) children (per send)", n: fan,
                granite: { n in try hearGranite(n, children: fanout) }, combine: { n in combineSend(n, subscribers: fanout) })
        try row("relay broadcast to \(fanout) hosts (per send)", n: fan,
                granite: { n in try broadcastGranite(n, hosts: fanout) }, combine: { n in combineSend(n, subscribers: fanout) })
        try mountRow(n: max(1, events / 20))
    }

    /// Mount, one event each, unmount: a parent with an attached and a listening child, each
    /// center hosting its own relay (per tree) — and how much resident memory the trees leave
    /// behind, which must be none once they are unmounted.
    private func mountRow(n: Int) throws {
        let name = "mount+send+unmount, 3 nodes + 3 relays (per tree)"
        if let only, !name.contains(only) { return }
        var g: [Double] = [], c: [Double] = []
        var firstResident = 0
        for run in 0..<runs {
            g.append(nanos(try mountGranite(n)) / Double(n))
            if run == 0 { firstResident = MemoryProbe.residentKiB() }
            c.append(nanos(combineTrees(n)) / Double(n))
        }
        let growth = Double(MemoryProbe.residentKiB() - firstResident) / Double(n * (runs - 1)) * 1000
        let gm = median(g), cm = median(c), gb = g.min() ?? .nan, cb = c.min() ?? .nan
        print(pad(name, 44) + pad("\(format(gm)) (\(format(gb)))", 16) + pad("\(format(cm)) (\(format(cb)))", 16)
              + pad("\(format(gm / cm))x (\(format(gb / cb))x)", 15)
              + (runs > 1 ? "resident +\(format(growth)) KiB per 1,000 trees" : ""))
    }

    private func row(_ name: String, n: Int, granite: (Int) throws -> (Duration, Int), combine: (Int) -> Duration) throws {
        if let only, !name.contains(only) { return }
        var g: [Double] = [], c: [Double] = []
        var renders = 0
        for _ in 0..<runs {
            let (d, r) = try granite(n)
            g.append(nanos(d) / Double(n))
            renders = r
            c.append(nanos(combine(n)) / Double(n))
        }
        let gm = median(g), cm = median(c), gb = g.min() ?? .nan, cb = c.min() ?? .nan
        print(pad(name, 44) + pad("\(format(gm)) (\(format(gb)))", 16) + pad("\(format(cm)) (\(format(cb)))", 16)
              + pad("\(format(gm / cm))x (\(format(gb / cb))x)", 15) + "\(renders)")
    }

    // MARK: Granite cases

    private func quietGranite(_ n: Int) throws -> (Duration, Int) {
        let node = try PlainNode().mount(in: GraniteRuntime())
        let start = ContinuousClock.now
        for i in 0..<n { try node.sendEvent(QuietBump(value: i)) }
        let elapsed = ContinuousClock.now - start
        precondition(node.state.count == n)
        return (elapsed, node.command.renderCount - 1)
    }

    private func noneGranite(_ n: Int) throws -> (Duration, Int) {
        let node = try PlainNode().mount(in: GraniteRuntime())
        let start = ContinuousClock.now
        for i in 0..<n { try node.sendEvent(LoudBump(value: i)) }
        let elapsed = ContinuousClock.now - start
        precondition(node.state.count == n)
        return (elapsed, node.command.renderCount - 1)
    }

    private func hearGranite(_ n: Int, children: Int) throws -> (Duration, Int) {
        let parent = PlainNode()
        let kids = (0..<children).map { _ in ListenerNode().listen(to: parent.command) }
        try parent.mount(in: GraniteRuntime())
        let start = ContinuousClock.now
        for i in 0..<n { try parent.sendEvent(Shout(value: i)) }
        let elapsed = ContinuousClock.now - start
        precondition(kids.allSatisfy { $0.state.count == n })
        return (elapsed, kids.reduce(0) { $0 + $1.command.renderCount - 1 })
    }

    private func broadcastGranite(_ n: Int, hosts: Int) throws -> (Duration, Int) {
        let relay = BenchRelay()
        BenchHostCenter.next = relay
        let nodes = (0..<hosts).map { _ in HostNode() }
        BenchHostCenter.next = nil
        let runtime = GraniteRuntime()
        for node in nodes { try node.mount(in: runtime) }
        let start = ContinuousClock.now
        for i in 0..<n { relay.command.broadcast(QuietBump(value: i)) }
        let elapsed = ContinuousClock.now - start
        precondition(nodes.allSatisfy { $0.state.count == n })
        return (elapsed, nodes.reduce(0) { $0 + $1.command.renderCount - 1 })
    }

    private func mountGranite(_ n: Int) throws -> Duration {
        let runtime = GraniteRuntime()
        let start = ContinuousClock.now
        for i in 0..<n {
            let parent = try HostNode().mount(in: runtime)
            let attached = try HostNode().attach(to: parent.command).mount(in: runtime)
            let listening = try HostNode().listen(to: parent.command).mount(in: runtime)
            try parent.sendEvent(QuietBump(value: i))
            try attached.sendEvent(QuietBump(value: i))
            try listening.sendEvent(QuietBump(value: i))
            precondition(listening.state.count == 1)
            parent.unmount()
        }
        return ContinuousClock.now - start
    }

    // MARK: The anchor

    /// The same shape in Combine: three subjects, each with a subscriber, one value each, cancelled.
    private func combineTrees(_ n: Int) -> Duration {
        let start = ContinuousClock.now
        for i in 0..<n {
            let subjects = (0..<3).map { _ in PassthroughSubject<Int, Never>() }
            let sinks = (0..<3).map { _ in CombineSink() }
            let cancellables = zip(subjects, sinks).map { subject, sink in subject.sink { sink.count += 1; sink.last = $0 } }
            for subject in subjects { subject.send(i) }
            precondition(sinks[2].count == 1)
            for cancellable in cancellables { cancellable.cancel() }
        }
        return ContinuousClock.now - start
    }

    private func combineSend(_ n: Int, subscribers: Int) -> Duration {
        let subject = PassthroughSubject<Int, Never>()
        let sinks = (0..<subscribers).map { _ in CombineSink() }
        let cancellables = sinks.map { sink in subject.sink { sink.count += 1; sink.last = $0 } }
        let start = ContinuousClock.now
        for i in 0..<n { subject.send(i) }
        let elapsed = ContinuousClock.now - start
        precondition(sinks.allSatisfy { $0.count == n })
        withExtendedLifetime(cancellables) {}
        return elapsed
    }
}

private final class CombineSink { var count = 0; var last = 0 }


private func nanos(_ d: Duration) -> Double {
    Double(d.components.seconds) * 1e9 + Double(d.components.attoseconds) / 1e9
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

func format(_ value: Double) -> String {
    value >= 100 ? String(Int(value.rounded())) : String((value * 100).rounded() / 100)
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
}

// MARK: Bench components

struct BenchState: GraniteState {
    var count = 0
    var last = 0
}

struct QuietBump: GraniteEvent {
    let value: Int
    var behavior: GraniteEventBehavior { .quiet }
}

struct LoudBump: GraniteEvent {
    let value: Int
}

struct Shout: GraniteEvent {
    let value: Int
    var behavior: GraniteEventBehavior { .quiet }
}

struct QuietBumpExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: QuietBump, state: inout BenchState, connection: GraniteConnection) {
        state.count += 1
        state.last = event.value
    }
}

struct LoudBumpExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: LoudBump, state: inout BenchState, connection: GraniteConnection) {
        state.count += 1
        state.last = event.value
    }
}

struct ShoutExpedition: GraniteExpedition, GraniteDiscoverable {
    func reduce(event: Shout, state: inout BenchState, connection: GraniteConnection) {
        connection.hear(event: QuietBump(value: event.value))
    }
}

class BenchCenter: GraniteCenter<BenchState> {
    override var expeditions: [GraniteBaseExpedition] {
        [QuietBumpExpedition.Discovery(), LoudBumpExpedition.Discovery(), ShoutExpedition.Discovery()]
    }
}

final class BroadcastableBenchCenter: BenchCenter {
    override var behavior: GraniteEventBehavior { .broadcastable }
}

struct BenchRelayState: GraniteState {}
final class BenchRelayCenter: GraniteCenter<BenchRelayState> {}
struct BenchRelay: GraniteRelay {
    let command = GraniteService<BenchRelayCenter, BenchRelayState>()
}

final class BenchHostCenter: BenchCenter {
    nonisolated(unsafe) static var next: BenchRelay?
    let relay: BenchRelay
    required init() { relay = BenchHostCenter.next ?? BenchRelay() }
    override var behavior: GraniteEventBehavior { .broadcastable }
}

// Concrete components, as an app writes them (a generic component pays Swift's generic metadata
// lookups in every `body`, which is the harness's cost, not the event core's).
struct PlainNode: GraniteComponent {
    let command = GraniteCommand<BenchCenter, BenchState>()
    var body: Int { state.last }
}

struct ListenerNode: GraniteComponent {
    let command = GraniteCommand<BroadcastableBenchCenter, BenchState>()
    var body: Int { state.last }
}

struct HostNode: GraniteComponent {
    let command = GraniteCommand<BenchHostCenter, BenchState>()
    var body: Int { state.last }
}
