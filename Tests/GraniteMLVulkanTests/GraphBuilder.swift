import Foundation
import GraniteGPU
import GraniteTesting
import SwiftProtobuf
@testable import GraniteML

/// Small ONNX graphs built in memory (any number of inputs, nodes and initializers), for
/// comparing the Vulkan backend with the CPU runtime op by op.
struct GraphBuilder {
    private var graph = Onnx_GraphProto()
    var opset = 13

    mutating func input(_ name: String, _ shape: [Int], type: Int32 = 1) {
        graph.input.append(Self.info(name, shape, type))
    }

    mutating func output(_ name: String) { graph.output.append(Self.info(name, nil, 1)) }

    mutating func constant(_ name: String, _ shape: [Int], _ values: [Float]) {
        graph.initializer.append(Onnx_TensorProto(name: name, shape: shape, floats: values))
    }

    mutating func integers(_ name: String, _ shape: [Int], _ values: [Int], type: Int32 = 7) {
        var t = Onnx_TensorProto()
        t.name = name
        t.dims = shape.map { Int64($0) }
        t.dataType = type
        if type == 7 { t.int64Data = values.map { Int64($0) } } else { t.int32Data = values.map { Int32($0) } }
        graph.initializer.append(t)
    }

    mutating func node(_ op: String, _ inputs: [String], _ outputs: [String], name: String? = nil, _ attributes: [Onnx_AttributeProto] = []) {
        var n = Onnx_NodeProto()
        n.name = name ?? "\(op.lowercased())_\(graph.node.count)"
        n.opType = op
        n.input = inputs
        n.output = outputs
        n.attribute = attributes
        graph.node.append(n)
    }

    func model(threads: Int = 1) throws -> Model {
        var m = Onnx_ModelProto()
        m.irVersion = 8
        var set = Onnx_OperatorSetIdProto()
        set.version = Int64(opset)
        m.opsetImport = [set]
        m.graph = graph
        return try Model(data: try m.serializedData(), name: "test", threads: threads)
    }

    private static func info(_ name: String, _ dims: [Int]?, _ type: Int32) -> Onnx_ValueInfoProto {
        var v = Onnx_ValueInfoProto()
        v.name = name
        var tt = Onnx_TypeProto.Tensor()
        tt.elemType = type
        if let dims { tt.shape.dim = dims.map { d in var dim = Onnx_TensorShapeProto.Dimension(); dim.dimValue = Int64(d); return dim } }
        v.type.tensorType = tt
        return v
    }
}

enum Attr {
    static func ints(_ name: String, _ values: [Int]) -> Onnx_AttributeProto {
        var a = Onnx_AttributeProto(); a.name = name; a.type = .ints; a.ints = values.map { Int64($0) }; return a
    }
    static func int(_ name: String, _ value: Int) -> Onnx_AttributeProto {
        var a = Onnx_AttributeProto(); a.name = name; a.type = .int; a.i = Int64(value); return a
    }
    static func float(_ name: String, _ value: Float) -> Onnx_AttributeProto {
        var a = Onnx_AttributeProto(); a.name = name; a.type = .float; a.f = value; return a
    }
    static func string(_ name: String, _ value: String) -> Onnx_AttributeProto {
        var a = Onnx_AttributeProto(); a.name = name; a.type = .string; a.s = Data(value.utf8); return a
    }
}

/// Seeded random values (the same every run), in -1...1.
struct SeededValues {
    private var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    mutating func next(_ count: Int) -> [Float] {
        (0..<count).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Float(state >> 40) / Float(1 << 23) - 1
        }
    }
}

enum GPUTest {
    /// The shared context; without a Vulkan device the test is skipped (a failure when CI=true).
    static func context() throws -> GPUContext {
        do { return try GPUContext.shared() } catch { try Prerequisite.unmet("no Vulkan device: \(error)") }
    }
}
