import Foundation
import SwiftProtobuf

/// Reads an ONNX file into a ``Graph``: nodes, constants (initializers and `Constant` nodes) and
/// the declared inputs and outputs.
enum OnnxLoader {
    /// Parses the model at `path`.
    static func load(path: String) throws(MLError) -> Graph {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadableFile(path: path, reason: (error as NSError).localizedDescription)
        }
        return try parse(data, path: path)
    }

    /// Parses model bytes; `path` names them in errors.
    static func parse(_ data: Data, path: String) throws(MLError) -> Graph {
        let model: Onnx_ModelProto
        do {
            model = try Onnx_ModelProto(serializedBytes: data)
        } catch {
            throw .malformedModel(path: path, reason: "not a protobuf ModelProto (\(error))")
        }
        guard model.hasGraph, !model.graph.node.isEmpty else {
            throw .malformedModel(path: path, reason: "the model has no graph or no nodes")
        }
        let opset = model.opsetImport.first(where: { $0.domain.isEmpty || $0.domain == "ai.onnx" })
            .map { Int($0.version) } ?? 1
        let g = model.graph
        var constants: [String: Tensor] = [:]
        for initializer in g.initializer {
            constants[initializer.name] = try tensor(from: initializer, path: path, what: "initializer '\(initializer.name)'")
        }
        var nodes: [Node] = []
        nodes.reserveCapacity(g.node.count)
        for (index, proto) in g.node.enumerated() {
            let name = proto.name.isEmpty ? "\(proto.opType)#\(index)" : proto.name
            guard proto.output.contains(where: { !$0.isEmpty }) else {
                throw .invalidNode(node: name, op: proto.opType, reason: "the node has no outputs")
            }
            var attributes: [String: Attribute] = [:]
            for attribute in proto.attribute {
                attributes[attribute.name] = try convert(attribute, node: name, op: proto.opType, path: path)
            }
            let node = Node(name: name, op: proto.opType, domain: proto.domain, inputs: proto.input,
                            outputs: proto.output, attributes: attributes)
            if node.op == "Constant" && (node.domain.isEmpty || node.domain == "ai.onnx") {
                guard node.outputs.count == 1 else { throw node.invalid("a Constant needs exactly one output") }
                constants[node.outputs[0]] = try constantValue(node)
                continue
            }
            nodes.append(node)
        }
        let initializerNames = Set(g.initializer.map(\.name))
        let inputs = try g.input.filter { !initializerNames.contains($0.name) }.map { info throws(MLError) in
            try valueInfo(info, path: path)
        }
        let outputs = try g.output.map { info throws(MLError) in try valueInfo(info, path: path) }
        guard !outputs.isEmpty else { throw .malformedModel(path: path, reason: "the graph declares no outputs") }
        for (kind, values) in [("input", inputs), ("output", outputs)] {
            var seen: Set<String> = []
            for value in values where !seen.insert(value.name).inserted {
                throw .malformedModel(path: path, reason: "graph \(kind) '\(value.name)' is declared twice")
            }
        }
        return Graph(nodes: nodes, constants: constants, inputs: inputs, outputs: outputs, opset: opset, path: path)
    }

    /// The value of a `Constant` node (any of its attribute spellings).
    private static func constantValue(_ node: Node) throws(MLError) -> Tensor {
        switch (node.attributes["value"], node.attributes["value_float"], node.attributes["value_floats"],
                node.attributes["value_int"], node.attributes["value_ints"]) {
        case let (.tensor(t)?, _, _, _, _): return t
        case let (_, .float(f)?, _, _, _): return try Tensor(shape: [], values: [f])
        case let (_, _, .floats(fs)?, _, _): return try Tensor(shape: [fs.count], values: fs)
        case let (_, _, _, .int(i)?, _): return try Tensor(shape: [], integers: [Int64(i)])
        case let (_, _, _, _, .ints(v)?): return try Tensor(shape: [v.count], integers: v.map { Int64($0) })
        default: throw node.unsupported("a Constant needs a tensor, float(s) or int(s) value")
        }
    }

    private static func valueInfo(_ info: Onnx_ValueInfoProto, path: String) throws(MLError) -> ValueInfo {
        guard case let .tensorType(tensorType)? = info.type.value else {
            throw .malformedModel(path: path, reason: "graph value '\(info.name)' is not a tensor")
        }
        guard let type = Tensor.ElementType(onnxCode: Int(tensorType.elemType)) else {
            throw .malformedModel(path: path, reason: "graph value '\(info.name)' has unsupported element type \(tensorType.elemType)")
        }
        let dims: [Int?] = tensorType.shape.dim.map { dim in
            if case let .dimValue(v)? = dim.value, v > 0 { return Int(v) }
            return nil
        }
        return ValueInfo(name: info.name, elementType: type, dimensions: dims)
    }

    private static func convert(_ a: Onnx_AttributeProto, node: String, op: String, path: String) throws(MLError) -> Attribute {
        switch a.type {
        case .float: return .float(a.f)
        case .int: return .int(Int(a.i))
        case .string: return .string(String(decoding: a.s, as: UTF8.self))
        case .tensor: return .tensor(try tensor(from: a.t, path: path, what: "attribute '\(a.name)' of node '\(node)'"))
        case .floats: return .floats(a.floats)
        case .ints: return .ints(a.ints.map { Int($0) })
        case .strings: return .strings(a.strings.map { String(decoding: $0, as: UTF8.self) })
        default:
            // Graph-valued attributes (If, Loop, Scan) and sparse tensors are outside the op set.
            throw .unsupportedOp(node: node, op: op, reason: "attribute '\(a.name)' has unsupported type \(a.type)")
        }
    }

    /// Decodes a TensorProto from its typed fields or its little-endian `raw_data`.
    static func tensor(from t: Onnx_TensorProto, path: String, what: String) throws(MLError) -> Tensor {
        guard t.dataLocation != .external else {
            throw .malformedModel(path: path, reason: "\(what) uses external data, which GraniteML does not load")
        }
        guard let type = Tensor.ElementType(onnxCode: Int(t.dataType)) else {
            throw .malformedModel(path: path, reason: "\(what) has unsupported element type \(t.dataType)")
        }
        let shape = t.dims.map { Int($0) }
        guard shape.allSatisfy({ $0 >= 0 }) else {
            throw .malformedModel(path: path, reason: "\(what) has negative dimensions \(shape)")
        }
        guard let count = Tensor.elementCount(shape) else {
            throw .malformedModel(path: path, reason: "\(what) has more elements than an Int counts (shape \(shape))")
        }
        let raw = t.rawData
        let bad = MLError.malformedModel(path: path, reason: "\(what) holds the wrong number of values for shape \(shape)")
        if !raw.isEmpty {
            let width: Int
            switch type {
            case .float32, .int32: width = 4
            case .float64, .int64: width = 8
            case .uint8, .int8, .bool: width = 1
            case .int16, .uint16: width = 2
            }
            guard raw.count % width == 0, raw.count / width == count else { throw bad }
            return raw.withUnsafeBytes { bytes in
                switch type {
                case .float32: return unchecked(shape, (0..<count).map { Float(bitPattern: bytes.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self).littleEndian) }, type)
                case .float64: return unchecked(shape, (0..<count).map { Float(Double(bitPattern: bytes.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self).littleEndian)) }, type)
                case .uint8, .bool: return exact(shape, (0..<count).map { Int64(bytes[$0]) }, type)
                case .int8: return exact(shape, (0..<count).map { Int64(Int8(bitPattern: bytes[$0])) }, type)
                case .int16: return exact(shape, (0..<count).map { Int64(Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self))) }, type)
                case .uint16: return exact(shape, (0..<count).map { Int64(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 2, as: UInt16.self))) }, type)
                case .int32: return exact(shape, (0..<count).map { Int64(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 4, as: Int32.self))) }, type)
                case .int64: return exact(shape, (0..<count).map { Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 8, as: Int64.self)) }, type)
                }
            }
        }
        switch type {
        case .float32:
            guard t.floatData.count == count else { throw bad }
            return unchecked(shape, t.floatData, type)
        case .float64:
            guard t.doubleData.count == count else { throw bad }
            return unchecked(shape, t.doubleData.map { Float($0) }, type)
        case .int64:
            guard t.int64Data.count == count else { throw bad }
            return exact(shape, t.int64Data, type)
        default:
            // int32_data carries every type narrower than 32 bits, and int32 itself.
            guard t.int32Data.count == count else { throw bad }
            return exact(shape, t.int32Data.map { Int64($0) }, type)
        }
    }

    private static func unchecked(_ shape: [Int], _ values: [Float], _ type: Tensor.ElementType) -> Tensor {
        // Counts were checked above, so this cannot throw.
        (try? Tensor(shape: shape, values: values, elementType: type))!
    }

    private static func exact(_ shape: [Int], _ values: [Int64], _ type: Tensor.ElementType) -> Tensor {
        (try? Tensor(shape: shape, integers: values, elementType: type))!
    }
}
