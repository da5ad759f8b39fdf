import ArgumentParser
import Foundation
import GraniteIPFS

/// `granite pin`: pins files and folders on a Kubo node through the journal, CIDs checked locally.
struct PinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Add and pin files on IPFS (Kubo RPC), verifying every CID locally; nothing is lost.",
        discussion: """
            Each input is recorded in a journal before upload and marked done only once the node \
            pinned it with the locally computed CID. Jobs left by an earlier run (node down, \
            process killed) are finished by every run; --retry runs only those.
            Node: --api, else $IPFS_API, else $IPFS_PATH/api (or ~/.ipfs/api), else 127.0.0.1:5001.
            Auth: --api-auth or $IPFS_API_AUTH (bearer:TOKEN or basic:USER:PASSWORD).
            """)

    @Argument(help: "Files or folders to pin.")
    var paths: [String] = []

    @Option(help: "Kubo RPC API: multiaddr (/ip4/127.0.0.1/tcp/5001) or URL.")
    var api: String?

    @Option(name: .customLong("api-auth"), help: "bearer:TOKEN or basic:USER:PASSWORD (never printed).")
    var apiAuth: String?

    @Option(name: .customLong("cid-version"), help: "0 (dag-pb leaves) or 1 (raw leaves).")
    var cidVersion: Int = 1

    @Flag(help: "Wrap all inputs in one directory (one CID for the set).")
    var wrap = false

    @Option(help: "Also write the DAG as a CARv1 file (ipfs dag import), even if the node is down.")
    var car: String?

    @Flag(help: "Only finish jobs left pending by earlier runs.")
    var retry = false

    @Option(help: "Journal file (default $GRANITE_PIN_JOURNAL or ~/.local/state/granite/pins.jsonl).")
    var journal: String?

    @Option(help: "Uploads at once.")
    var concurrency: Int = 4

    @Option(help: "Attempts per request before a job is left pending (transient failures only).")
    var attempts: Int = 4

    @Flag(help: "Print the summary as JSON.")
    var json = false

    func validate() throws {
        guard cidVersion == 0 || cidVersion == 1 else { throw ValidationError("--cid-version must be 0 or 1") }
        guard !paths.isEmpty || retry else { throw ValidationError("give PATH... to pin, or --retry") }
        guard !(retry && !paths.isEmpty) else { throw ValidationError("--retry takes no PATH") }
        guard car == nil || !paths.isEmpty else { throw ValidationError("--car needs PATH...") }
        guard (1...64).contains(concurrency) else { throw ValidationError("--concurrency must be 1...64") }
        guard (1...20).contains(attempts) else { throw ValidationError("--attempts must be 1...20") }
    }

    func run() async throws {
        let pinner = try Self.makePinner(api: api, apiAuth: apiAuth, journal: self.journal, attempts: attempts,
                                         options: ImportOptions(cidVersion: cidVersion, wrapWithDirectory: wrap),
                                         concurrency: concurrency)
        let journal = pinner.journal
        if !paths.isEmpty { _ = try pinner.enqueue(paths: paths, carPath: car) }
        let pending = try journal.state().pending
        let bar = PinProgressBar(jobs: pending, enabled: !json && isatty(STDERR_FILENO) == 1)
        let report = try await pinner.process { bar.handle($0) }
        bar.finish()
        try PinSummary(report: report, car: car, journal: journal.path).print(json: json)
        if !report.problems.isEmpty { throw ExitCode(1) }
    }
}

extension PinCommand {
    /// The node (--api, $IPFS_API, the repo's api file), its auth and the journal, as `granite pin`
    /// and `granite convert --pin` resolve them.
    static func makePinner(api: String?, apiAuth: String?, journal: String?, attempts: Int,
                           options: ImportOptions, concurrency: Int) throws -> Pinner {
        var config = KuboClient.Configuration()
        config.maxAttempts = attempts
        let client = KuboClient(endpoint: try KuboEndpoint.resolve(option: api), auth: try KuboAuth.resolve(option: apiAuth),
                                configuration: config)
        let journal = try PinJournal(path: journal ?? PinJournal.defaultPath())
        return try Pinner(client: client, journal: journal, options: options, concurrency: concurrency)
    }
}
