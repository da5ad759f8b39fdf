import ArgumentParser
import Foundation
import GraniteIPFS
import GranitePinOptions

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
            Auth: --api-auth or $IPFS_API_AUTH (bearer:TOKEN or basic:USER:PASSWORD). The node and \
            journal options are the same in `granite convert --pin` and `granite-cam --pin`.
            Remote: --service URL also pins every CID on an IPFS Pinning Service (token from \
            --service-token-file or $GRANITE_PIN_SERVICE_TOKEN), once it is pinned on the node, and \
            follows it queued → pinning → pinned | failed for up to --pin-wait s without a change; \
            the request ids are journaled, so a later run (--retry) asks for their status instead \
            of requesting them again. --service URL --ls lists the service's pins, --rm CID removes them.
            """)

    @Argument(help: "Files or folders to pin.")
    var paths: [String] = []

    @OptionGroup(title: "Node and journal")
    var pinOptions: PinOptions

    @Flag(help: "Wrap all inputs in one directory (one CID for the set).")
    var wrap = false

    @Option(help: "Also write the DAG as a CARv1 file (ipfs dag import), even if the node is down.")
    var car: String?

    @Flag(help: "Only finish jobs left pending by earlier runs.")
    var retry = false

    @Option(help: "Uploads at once.")
    var concurrency: Int = PinSession.defaultConcurrency

    @Option(help: "Attempts per request before a job is left pending (transient failures only).")
    var attempts: Int = PinSession.defaultAttempts

    @Flag(help: "Print the summary as JSON.")
    var json = false

    @Flag(help: "With --service: list the service's pin requests (every status) and exit.")
    var ls = false

    @Option(help: ArgumentHelp("With --service: remove the service's pin requests for CID and exit.", valueName: "cid"))
    var rm: String?

    func validate() throws {
        if ls || rm != nil {
            guard pinOptions.service != nil else { throw ValidationError("--ls and --rm need --service URL") }
            guard paths.isEmpty, !retry, !(ls && rm != nil) else { throw ValidationError("--ls and --rm take no PATH, --retry or each other") }
            if let rm { do { _ = try CID(rm) } catch { throw ValidationError("--rm: \(error)") } }
            return
        }
        guard !paths.isEmpty || retry else { throw ValidationError("give PATH... to pin, or --retry") }
        guard !(retry && !paths.isEmpty) else { throw ValidationError("--retry takes no PATH") }
        guard car == nil || !paths.isEmpty else { throw ValidationError("--car needs PATH...") }
        guard (1...64).contains(concurrency) else { throw ValidationError("--concurrency must be 1...64") }
        guard (1...20).contains(attempts) else { throw ValidationError("--attempts must be 1...20") }
    }

    func run() async throws {
        let session = try pinOptions.session(wrapWithDirectory: wrap, attempts: attempts, concurrency: concurrency)
        let journal = session.pinner.journal
        // The token is resolved before anything is uploaded: a missing one stops the run here.
        let remote = try pinOptions.remotePinner(journal: journal)
        if let remote, ls || rm != nil {
            try await RemotePinCommands(client: remote.client, json: json).run(remove: rm.map { try CID($0) })
            return
        }
        if !paths.isEmpty { try session.submit(paths, carPath: car) }
        try session.adoptPending()
        let bar = PinProgressBar(jobs: try journal.state().pending, enabled: !json && isatty(STDERR_FILENO) == 1)
        let outcome = await session.finish { bar.handle($0) }
        bar.finish()
        var report = outcome.report ?? PinReport()
        if outcome.report == nil, outcome.remaining > 0 {
            // No pass ended (node down, or no progress for --pin-wait): what is left stays pending.
            let reason = outcome.problem ?? "not pinned"
            for job in try journal.state().pending {
                report.problems.append(.init(paths: job.paths, cid: job.cid, reason: reason, willRetry: true))
            }
        }
        var remoteOutcome: RemoteOutcome?
        if let remote {
            let bar = json ? nil : RemotePinLines()
            remoteOutcome = await session.finishRemote(remote) { bar?.handle($0) }
        }
        try PinSummary(report: report, car: car, journal: journal.path, remote: remoteOutcome).print(json: json)
        if !report.problems.isEmpty || outcome.remaining > 0 { throw ExitCode(1) }
        if let remoteOutcome, !remoteOutcome.pending.isEmpty || !remoteOutcome.failed.isEmpty { throw ExitCode(1) }
    }
}
