import Foundation
import SwiftProtobuf
@testable import GraniteML

/// Small ONNX models (one node, or a chain of nodes) built in memory with the generated protobuf types.
enum TestModels {
    /// An attribute with a list of ints.
    static func ints(_ name: String, _ values: [Int]) -> Onnx_AttributeProto {
        var a = Onnx_AttributeProto()
        a.name = name
        a.type = .ints
        a.ints = values.map { Int64($0) }
        return a
    }

    /// An attribute with one int.
    static func int(_ name: String, _ value: Int) -> Onnx_AttributeProto {
        var a = Onnx_AttributeProto()
        a.name = name
        a.type = .int
        a.i = Int64(value)
        return a
    }

    /// One node of a ``chain(inputShape:elemType:_:)``: its op, the float initializers it reads after
    /// the previous node's output, and its attributes.
    struct Step {
        var op: String
        var domain = ""
        var initializers: [(String, [Int], [Float])] = []
        var attributes: [Onnx_AttributeProto] = []
    }

    /// `y = op(x, weights...)` with float initializers; `x` of `inputShape`, output shape left free.
    static func oneNode(op: String, domain: String = "", inputShape: [Int], elemType: Int32 = 1,
                        initializers: [(String, [Int], [Float])] = [], attributes: [Onnx_AttributeProto] = []) throws -> Data {
        try chain(inputShape: inputShape, elemType: elemType,
                  [Step(op: op, domain: domain, initializers: initializers, attributes: attributes)])
    }

    /// Nodes in a row, each reading the previous one's output: `x` → … → `y`.
    static func chain(inputShape: [Int], elemType: Int32 = 1, _ steps: [Step]) throws -> Data {
        var m = Onnx_ModelProto()
        m.irVersion = 8
        var opset = Onnx_OperatorSetIdProto()
        opset.version = 13
        m.opsetImport = [opset]
        var g = Onnx_GraphProto()
        for (i, step) in steps.enumerated() {
            var node = Onnx_NodeProto()
            node.name = i == 0 ? "the_node" : "node_\(i)"
            node.opType = step.op
            node.domain = step.domain
            node.input = [i == 0 ? "x" : "v\(i)"] + step.initializers.map(\.0)
            node.output = [i == steps.count - 1 ? "y" : "v\(i + 1)"]
            node.attribute = step.attributes
            g.node.append(node)
            for (name, dims, values) in step.initializers {
                g.initializer.append(Onnx_TensorProto(name: name, shape: dims, floats: values))
            }
        }
        func info(_ name: String, _ dims: [Int]) -> Onnx_ValueInfoProto {
            var v = Onnx_ValueInfoProto()
            v.name = name
            var tt = Onnx_TypeProto.Tensor()
            tt.elemType = elemType
            tt.shape.dim = dims.map { d in var dim = Onnx_TensorShapeProto.Dimension(); dim.dimValue = Int64(d); return dim }
            v.type.tensorType = tt
            return v
        }
        g.input = [info("x", inputShape)]
        g.output = [info("y", [])]
        m.graph = g
        return try m.serializedData()
    }

    /// Deterministic values in -1...1 (a fixed-seed LCG).
    static func values(_ count: Int, seed: UInt64) -> [Float] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(state >> 40) / Float(1 << 23) - 1
        }
    }
}
