import GraniteIPFS

/// `granite-cam --pin`: every file written is journaled through GraniteIPFS's ``PinSession`` (the
/// same session `granite pin` and `granite convert --pin` use); its queue's worker uploads in the
/// background, so capture never waits on the node, and ``PinSession/finish(onEvent:)`` ends the
/// run with the bounded wait of `--pin-wait`.
public typealias CamPinning = PinSession
