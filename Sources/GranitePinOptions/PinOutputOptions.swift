import ArgumentParser
import GraniteIPFS

/// `--pin` and the pin options, for the programs that pin the files they write while they run
/// (`granite convert --pin`, `granite-cam --pin`): one set of checks, one way to start the
/// session and one report at the end, so the two programs behave and read alike.
///
/// ```
/// validate() ─► start(folder:) ─► PinSession: journal, background worker, PinSession's one set of
///                │                 settings; the folder and the service queued for the end;
///                │                 the node probed once (down: a warning, files stay journaled)
/// the program writes files ─► session.submit(paths)      (journaled, uploaded in the background)
/// session.finish() ─► PinRunReport(outcome) ─► the same lines in both programs; failed: exit 1
/// ```
public struct PinOutputOptions: ParsableArguments, Sendable {
    /// `--pin`: pin every file written.
    @Flag(help: ArgumentHelp("Pin every file written, and the output folder as one directory, on a Kubo node: journaled "
                             + "first, uploaded in the background; the node being down is only a warning."))
    public var pin = false

    /// The node, journal and service options (`granite pin` takes the same).
    @OptionGroup public var options: PinOptions

    /// A group with nothing given.
    public init() {}

    /// The node and journal options make sense only when the run pins.
    public func validate() throws {
        if options.anyGiven && !isRequested {
            throw ValidationError("--api, --api-auth, --pin-journal, --pin-wait, --cid-version and --allow-insecure-http need --pin (or --service)")
        }
    }

    /// Whether the run pins: `--pin`, or `--service` alone (which pins on the node first: the
    /// service fetches the files from it).
    public var isRequested: Bool { pin || options.service != nil }

    /// A started session and what the program prints before it goes on.
    public struct Started: Sendable {
        /// The session the program submits its files to and finishes at the end.
        public let session: PinSession
        /// Set when the node did not answer the probe: the run goes on, the files are journaled.
        public let warning: String?
    }

    /// Starts pinning when the run pins (nil otherwise): resolves the node, credentials, journal
    /// and service, journals `folder` as one directory when the session finishes (its entries
    /// but the top-level names `excluding` accepts), probes the node once and starts the worker.
    /// Nothing waits on the node here but the one quick probe.
    public func start(folder: String?,
                      excluding: @escaping @Sendable (String) -> Bool = { $0.hasPrefix(".") }) async throws(PinStartError) -> Started? {
        guard isRequested else { return nil }
        let session: PinSession
        do { session = try options.session() } catch { throw .session(error) }
        if let folder { session.pinFolderAtFinish(folder, excluding: excluding) }
        do {
            if let remote = try options.remotePinner(journal: session.pinner.journal) { session.pinRemotelyAtFinish(remote) }
        } catch {
            throw .service(error)
        }
        let warning = await session.probe()
        await session.start()
        return Started(session: session, warning: warning)
    }
}

/// Why ``PinOutputOptions/start(folder:excluding:)`` could not start pinning: the program exits 1
/// before it writes anything.
public enum PinStartError: Error, Equatable, CustomStringConvertible {
    /// The node, its credentials or the journal.
    case session(PinError)
    /// The pinning service or its token.
    case service(PinningServiceError)

    /// The underlying error's text.
    public var description: String {
        switch self {
        case let .session(error): "\(error)"
        case let .service(error): "\(error)"
        }
    }
}
