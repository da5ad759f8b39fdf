import Foundation
import GraniteIPFS
import GraniteMedia
import GraniteRecorder
import GraniteSync
import Synchronization

/// `--segments DIR --pin`: each live segment journaled and pinned the moment it closes (through
/// the run's ``CamPinning`` session: journal first, the worker uploads, capture never waits), and
/// `live.ipfs.m3u8` kept beside `live.m3u8`: the same playlist with every segment (and the init
/// segment) at its `ipfs://CID` address, rewritten as each one closes.
///
/// ```
///  segment renamed into place ─► live.m3u8 lists it ─► closed(path) ─► submit (journal, local CID) ─► live.ipfs.m3u8
/// ```
package final class SegmentPinner: Sendable {
    private let pins: CamPinning
    /// The relative playlist (`DIR/live.m3u8`).
    package let playlist: String
    private struct State {
        var addresses: [String: String] = [:]
        var failures: [String] = []
    }
    private let state = Locked(State())

    package init(pins: CamPinning, playlist: String) {
        self.pins = pins
        self.playlist = playlist
    }

    /// The playlist with `ipfs://` addresses (`DIR/live.ipfs.m3u8`).
    package var ipfsPlaylist: String { String(playlist.dropLast(".m3u8".count)) + ".ipfs.m3u8" }

    /// Segments journaled so far, by file name, with their CIDs.
    package var addresses: [String: String] { state.withLock { $0.addresses } }
    /// What could not be journaled.
    package var failures: [String] { state.withLock { $0.failures } }

    /// Journals the closed file and rewrites the `ipfs://` playlist.
    package func closed(_ path: String) {
        let name = String(path.split(separator: "/").last ?? Substring(path))
        do throws(PinError) {
            guard let job = try pins.submit([path]).first else { return }
            state.withLock { $0.addresses[name] = job.cid.description }
        } catch {
            state.withLock { $0.failures.append("\(path): \(error)") }
            return
        }
        rewrite()
    }

    /// `live.m3u8` with each known name replaced by its `ipfs://` address.
    static func ipfsText(_ text: String, addresses: [String: String]) -> String {
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = String(line)
            if line.hasPrefix("#EXT-X-MAP:URI=\""), let name = line.dropFirst(16).split(separator: "\"").first,
               let cid = addresses[String(name)] {
                line = "#EXT-X-MAP:URI=\"ipfs://\(cid)\"" + line.dropFirst(16 + name.count + 1)
            } else if !line.hasPrefix("#"), let cid = addresses[line] {
                line = "ipfs://\(cid)"
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// How to play the pinned stream over HTTP, for the summary: `live.m3u8` (relative names) inside
    /// the run's root `root` — the `--out` folder `folder`, pinned as one directory whose entries are
    /// `paths` — through the node's gateway (the API's host at Kubo's default gateway port 8080) and
    /// through a public one. A browser or player fetches the segments beside the playlist by their
    /// paths under the root; `live.ipfs.m3u8`'s `ipfs://` addresses are for IPFS-aware players.
    /// Nil when the playlist is not in the root (the segments folder outside `--out`).
    package static func gatewayLine(root: String, folder: String, paths: some Collection<String>, playlist: String, node: String) -> String? {
        func parts(_ path: String) -> [Substring] {
            let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
            var out: [Substring] = []
            for part in absolute.split(separator: "/") where part != "." {
                if part == ".." { _ = out.popLast() } else { out.append(part) }
            }
            return out
        }
        let base = parts(folder), file = parts(playlist)
        guard file.count > base.count, Array(file.prefix(base.count)) == base else { return nil }
        let relative = file.dropFirst(base.count).joined(separator: "/")
        guard paths.contains(relative) else { return nil }
        var host = "127.0.0.1"
        if let url = URL(string: node), url.scheme == "http" || url.scheme == "https", let h = url.host, !h.isEmpty {
            host = h.contains(":") ? "[\(h)]" : h
        }
        return "segments: play them through a gateway: http://\(host):8080/ipfs/\(root)/\(relative) (your node's, Kubo's default port) "
            + "or a public one once the node is reachable: https://ipfs.io/ipfs/\(root)/\(relative)"
    }

    private func rewrite() {
        guard let text = Recorder.read(playlist) else { return }
        let out = SegmentPinner.ipfsText(text, addresses: addresses)
        do {
            try AtomicWriter.write(Array(out.utf8), to: ipfsPlaylist) { path, what, code in
                RecorderError.library(call: what, path: path, code: code, message: "errno \(code)")
            }
        } catch {
            state.withLock { $0.failures.append("\(ipfsPlaylist): \(error)") }
        }
    }
}
