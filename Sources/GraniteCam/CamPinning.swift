import GraniteIPFS

/// `granite-cam --pin`: every file written is journaled through GraniteIPFS's `PinSession` (the
/// same session `granite pin` and `granite convert --pin` use); its queue's worker uploads in the
/// background, so capture never waits on the node, and its `finish(onEvent:)` ends the
/// run with the bounded wait of `--pin-wait`. A program makes the session with
/// GranitePinOptions' `PinOutputOptions.start(folder:excluding:)`, as `granite-cam` does.
public typealias CamPinning = PinSession
