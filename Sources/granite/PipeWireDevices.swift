import GraniteCapture

/// The PipeWire part of `granite devices`: the session's video sources, as `--source pipewire:NODE` names them.
enum PipeWireDevices {
    /// Lines to print, and whether there was any source. No daemon is one line, not an error.
    static func describe() -> (lines: [String], sources: Bool) {
        do {
            let nodes = try PipeWireDirectory.videoSources()
            if nodes.isEmpty { return (["PipeWire: no video sources"], false) }
            return (["PipeWire video sources (granite-cam --source pipewire:NAME or :ID):"] + nodes.map { "  \($0)" }, true)
        } catch {
            return (["PipeWire: \(error)"], false)
        }
    }
}
