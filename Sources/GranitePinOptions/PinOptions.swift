import ArgumentParser
import Foundation
import GraniteIPFS

/// The pin options every program takes, with the same names, types and defaults: `granite pin`
/// includes this group (`@OptionGroup`); `granite convert` and `granite-cam` include it through
/// ``PinOutputOptions``, which adds `--pin` and the one way those two start and end pinning.
///
/// It lives in its own small target because an option group needs ArgumentParser, which the
/// GraniteIPFS library should not depend on (it is used without a command line too), and both
/// executables must link the same declaration: `granite` and `granite-cam` share no other module
/// that has ArgumentParser.
public struct PinOptions: ParsableArguments, Sendable {
    /// `--api`: the Kubo RPC API.
    @Option(help: ArgumentHelp("Kubo RPC API: multiaddr (/ip4/127.0.0.1/tcp/5001) or URL "
                               + "(default $IPFS_API, the repo's api file, 127.0.0.1:5001).", valueName: "addr"))
    public var api: String?

    /// `--api-auth`: credentials for the node.
    @Option(name: .customLong("api-auth"),
            help: ArgumentHelp("bearer:TOKEN or basic:USER:PASSWORD (default $IPFS_API_AUTH; never printed).", valueName: "auth"))
    public var apiAuth: String?

    /// `--pin-journal`: the journal file.
    @Option(name: .customLong("pin-journal"),
            help: ArgumentHelp("Pin journal (default $GRANITE_PIN_JOURNAL or ~/.local/state/granite/pins.jsonl).", valueName: "file"))
    public var pinJournal: String?

    /// `--pin-wait`: seconds without progress before the rest is left journaled.
    @Option(name: .customLong("pin-wait"),
            help: ArgumentHelp("Seconds to wait at the end while pinning makes no progress; the rest stays journaled "
                               + "for `granite pin --retry`. (default: 30)", valueName: "seconds"))
    public var pinWait: Double?

    /// `--service` (also spelled `--pin-service`): a pinning service to pin on as well.
    @Option(name: [.customLong("service"), .customLong("pin-service")],
            help: ArgumentHelp("IPFS Pinning Service API URL: also pin there (origins: the node's addresses); "
                               + "request ids are journaled.", valueName: "url"))
    public var service: String?

    /// `--service-token-file` (also `--pin-service-token-file`): the service's access token.
    @Option(name: [.customLong("service-token-file"), .customLong("pin-service-token-file")],
            help: ArgumentHelp("File holding the service's access token (default $GRANITE_PIN_SERVICE_TOKEN; never printed).",
                               valueName: "file"))
    public var serviceTokenFile: String?

    /// `--cid-version`: 0 (dag-pb leaves) or 1 (raw leaves, the default).
    @Option(name: .customLong("cid-version"), help: ArgumentHelp("CID version: 0 (dag-pb leaves) or 1 (raw leaves). (default: 1)",
                                                                 valueName: "0|1"))
    public var cidVersion: Int?

    /// `--allow-insecure-http`: send `--api-auth` credentials over cleartext http:// to a remote host.
    @Flag(name: .customLong("allow-insecure-http"),
          help: "Send --api-auth credentials or the --service token over plain http:// to a host other than loopback (refused otherwise).")
    public var allowInsecureHTTP = false

    /// A group with nothing given.
    public init() {}

    /// Checks `--pin-wait`, `--cid-version` and that a token file comes with a service.
    public func validate() throws {
        if let cidVersion, cidVersion != 0 && cidVersion != 1 { throw ValidationError("--cid-version must be 0 or 1") }
        if let pinWait, !(pinWait.isFinite && pinWait >= 0) {
            throw ValidationError("--pin-wait must be 0 or more seconds, got \(pinWait)")
        }
        if serviceTokenFile != nil && service == nil { throw ValidationError("--service-token-file needs --service URL") }
    }

    /// True when any of the options was given (programs where they need `--pin` say so).
    public var anyGiven: Bool {
        api != nil || apiAuth != nil || pinJournal != nil || pinWait != nil || service != nil || serviceTokenFile != nil
            || cidVersion != nil || allowInsecureHTTP
    }

    /// The pinning service `--service` names, recording into `journal`; nil without `--service`.
    /// The token comes from `--service-token-file` or `$GRANITE_PIN_SERVICE_TOKEN`.
    public func remotePinner(journal: PinJournal, configuration: PinningServiceClient.Configuration = .init(),
                             environment: [String: String] = ProcessInfo.processInfo.environment) throws(PinningServiceError) -> RemotePinner? {
        guard let service else { return nil }
        var configuration = configuration
        configuration.allowInsecureHTTP = configuration.allowInsecureHTTP || allowInsecureHTTP
        let token = try PinningServiceToken.resolve(file: serviceTokenFile, service: service, environment: environment)
        return RemotePinner(client: try PinningServiceClient(service: service, token: token, configuration: configuration),
                            journal: journal)
    }

    /// `--pin-wait` as a duration (default 30 s).
    public var wait: Duration {
        pinWait.map { .milliseconds(Int(($0 * 1000).rounded())) } ?? PinSession.defaultWait
    }

    /// How files are imported: `--cid-version` (default 1), wrapped in a directory or not.
    public func importOptions(wrapWithDirectory: Bool = false) -> ImportOptions {
        ImportOptions(cidVersion: cidVersion ?? 1, wrapWithDirectory: wrapWithDirectory)
    }

    /// The pinning session these options name (node, credentials, journal, wait, CID version),
    /// with GraniteIPFS `PinSession`'s one set of settings unless `granite pin` asks for other
    /// attempts or concurrency.
    public func session(wrapWithDirectory: Bool = false, attempts: Int = PinSession.defaultAttempts,
                        concurrency: Int = PinSession.defaultConcurrency) throws(PinError) -> PinSession {
        try PinSession.resolve(api: api, apiAuth: apiAuth, journal: pinJournal, wait: wait, attempts: attempts,
                               options: importOptions(wrapWithDirectory: wrapWithDirectory), concurrency: concurrency,
                               allowInsecureHTTP: allowInsecureHTTP)
    }
}
