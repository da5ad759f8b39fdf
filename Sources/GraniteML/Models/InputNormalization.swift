/// A per-channel normalisation `(x - mean[c]) / std[c]` that a model applies to its own input.
///
/// Some exports carry the preprocessing inside the graph (MiDaS's `tf/make_onnx_model.py`
/// wraps the network so that its first nodes subtract the ImageNet mean and divide by the
/// standard deviation), others expect it done by the caller. ``GraniteML`` looks for it so
/// that a description written for one kind of export does not normalise twice on the other.
public struct InputNormalization: Sendable, Equatable {
    /// What is subtracted, per channel (R, G, B).
    public var mean: [Float]
    /// What the difference is divided by, per channel.
    public var std: [Float]

    /// A normalisation with three values each.
    public init(mean: [Float], std: [Float]) {
        self.mean = mean
        self.std = std
    }

    /// True when both are within `tolerance` of the description's values.
    func matches(_ input: ModelDescription.Input, tolerance: Float = 1e-3) -> Bool {
        zip(mean, input.mean).allSatisfy { abs($0 - $1) <= tolerance }
            && zip(std, input.std).allSatisfy { abs($0 - $1) <= tolerance }
    }

    /// Finds `input → Sub(constant) → Div(constant) | Mul(constant)` at the start of `graph`,
    /// the input's only reader being the Sub and the Sub's only reader the Div/Mul, with
    /// per-channel (3 values) or scalar constants.
    static func detect(in graph: Graph, input: String) -> InputNormalization? {
        let uses = graph.useCounts()
        func onlyReader(of value: String) -> Node? {
            guard uses[value] == 1 else { return nil }
            return graph.nodes.first { $0.inputs.contains(value) }
        }
        func channels(_ name: String) -> [Float]? {
            guard let t = graph.constants[name], t.elementType == .float32 else { return nil }
            let nonUnit = t.shape.filter { $0 != 1 }
            switch (t.count, nonUnit.count) {
            case (1, _): return [Float](repeating: t.values[0], count: 3)
            case (3, 1): return t.values
            default: return nil
            }
        }
        guard let sub = onlyReader(of: input), sub.op == "Sub", sub.inputs.count == 2, sub.inputs[0] == input,
              let mean = channels(sub.inputs[1]),
              let scale = onlyReader(of: sub.outputs[0]), scale.inputs.count == 2, scale.inputs[0] == sub.outputs[0],
              let by = channels(scale.inputs[1]), by.allSatisfy({ $0 != 0 })
        else { return nil }
        switch scale.op {
        case "Div": return InputNormalization(mean: mean, std: by)
        case "Mul": return InputNormalization(mean: mean, std: by.map { 1 / $0 })
        default: return nil
        }
    }
}
