import Synchronization

/// What the engine needs from the component or relay that owns it.
protocol EngineHost: GraniteNode {
    associatedtype State: GraniteState
    /// Called on the drainer after an event was reduced (render, links, observers).
    func didReduce(_ event: any GraniteEvent, fromLink: Bool, before: State?, after: State?, error: GraniteError?)
    /// Runs one render job.
    func performRender(fromLink: Bool)
    /// Whether anything wants the state before each event (observers, key-path links).
    var wantsBefore: Bool { get }
}

/// One unit of work in a node's mailbox.
enum Job: Sendable {
    case event(any GraniteEvent, EventKey, replyTo: (any GraniteNode)?, fromLink: Bool)
    case render(fromLink: Bool)
}

/// The reducing machinery shared by components and relays: routing table, state, mailbox.
///
/// ```
///  enqueue ─► Mailbox (serial, ordered) ─► reducer(event, &state, connection) ─► host.didReduce
///                                                                              (render? links? record)
/// ```
final class Engine<Host: EngineHost>: MailboxOwner, @unchecked Sendable {
    typealias State = Host.State

    /// The state; a synchronous reducer mutates it in place under this lock (no copy-on-write).
    let stateBox: Mutex<State>
    let table: ExpeditionTable<State>?
    let tableError: GraniteError?
    private(set) var mailbox: Mailbox<Engine<Host>>!
    /// Set once, before the first event; never changes after (read without a lock).
    unowned(unsafe) var host: Host!

    init(state: State, expeditions: [GraniteBaseExpedition], name: String, home: GraniteExecutor?) {
        stateBox = Mutex(state)
        do {
            table = try ExpeditionTable<State>(expeditions, component: name)
            tableError = nil
        } catch {
            table = nil
            tableError = error
        }
        mailbox = nil
        mailbox = Mailbox(owner: self, home: home)
    }

    @inline(__always)
    func handles(_ key: EventKey) -> Bool { table?.reducer(for: key) != nil }

    var state: State { stateBox.withLock { $0 } }

    // MARK: MailboxOwner

    func executor(for job: Job) -> GraniteExecutor? {
        if case let .event(event, _, _, _) = job { return event.executor }
        return nil
    }

    func isAsync(_ job: Job) -> Bool {
        if case let .event(_, key, _, _) = job { return table?.reducer(for: key)?.isAsync ?? false }
        return false
    }

    func run(_ job: Job) {
        switch job {
        case let .render(fromLink):
            host.performRender(fromLink: fromLink)
        case let .event(event, key, replyTo, fromLink):
            guard let reducer = table?.reducer(for: key), case let .sync(reduce) = reducer else {
                host.report(.noExpedition(event: String(reflecting: type(of: event)), component: host.nodeName))
                return
            }
            let connection = GraniteConnection(node: host, replyTo: replyTo)
            let wantsBefore = host.wantsBefore
            let (before, after): (State?, State?) = stateBox.withLock { state in
                let before = wantsBefore ? state : nil
                reduce(event, &state, connection)
                return (before, wantsBefore ? state : nil)
            }
            host.didReduce(event, fromLink: fromLink, before: before, after: after, error: nil)
        }
    }

    func runAsync(_ job: Job) async {
        guard case let .event(event, key, replyTo, fromLink) = job,
              let reducer = table?.reducer(for: key), case let .async(reduce) = reducer else { return }
        let connection = GraniteConnection(node: host, replyTo: replyTo)
        let before = stateBox.withLock { $0 }
        var working = before
        var failure: GraniteError?
        do {
            try await reduce(event, &working, connection)
        } catch {
            working = before  // roll back: an async reducer that fails changes nothing
            failure = .reducerFailed(event: String(reflecting: type(of: event)), component: host.nodeName,
                                     message: "\(error)")
        }
        let after = working
        stateBox.withLock { $0 = after }
        if let failure { host.report(failure) }
        host.didReduce(event, fromLink: fromLink, before: before, after: after, error: failure)
    }
}
