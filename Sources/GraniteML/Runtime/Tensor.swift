/// An n-dimensional array of numbers: a model's input or output.
///
/// Values are held as `Float` whatever the element type; 8-bit types are exact in `Float`, and
/// integer shape tensors keep their exact 64-bit values beside (``Tensor/integers``).
public struct Tensor: Sendable, Equatable {
    /// The ONNX element types GraniteML reads and writes.
    public enum ElementType: String, Sendable, Hashable, CustomStringConvertible {
        case float32, float64, uint8, int8, int16, uint16, int32, int64, bool

        /// The ONNX `TensorProto.DataType` code.
        public var onnxCode: Int {
            switch self {
            case .float32: return 1
            case .uint8: return 2
            case .int8: return 3
            case .uint16: return 4
            case .int16: return 5
            case .int32: return 6
            case .int64: return 7
            case .bool: return 9
            case .float64: return 11
            }
        }

        /// The type for an ONNX `TensorProto.DataType` code, or nil for one GraniteML lacks.
        public init?(onnxCode: Int) {
            switch onnxCode {
            case 1: self = .float32
            case 2: self = .uint8
            case 3: self = .int8
            case 4: self = .uint16
            case 5: self = .int16
            case 6: self = .int32
            case 7: self = .int64
            case 9: self = .bool
            case 11: self = .float64
            default: return nil
            }
        }

        public var description: String { rawValue }

        /// True for the integer types (and bool).
        public var isInteger: Bool { self != .float32 && self != .float64 }

        /// The representable range of an integer type, for saturating casts.
        package var range: ClosedRange<Float>? {
            switch self {
            case .uint8: return 0...255
            case .int8: return -128...127
            case .uint16: return 0...65535
            case .int16: return -32768...32767
            case .bool: return 0...1
            default: return nil
            }
        }
    }

    /// The extent of each dimension.
    public let shape: [Int]
    /// The element type.
    public let elementType: ElementType
    /// Values in row-major order, as `Float`.
    public var values: [Float]
    /// Exact values of an integer tensor (nil for float tensors), so 64-bit shape and index
    /// values and 32-bit biases survive loading unrounded.
    public let integers: [Int64]?

    /// A tensor of `values` with `shape`; throws when the count does not match.
    public init(shape: [Int], values: [Float], elementType: ElementType = .float32) throws(MLError) {
        guard Tensor.elementCount(shape) == values.count else {
            throw .tensorSizeMismatch(shape: shape, count: values.count)
        }
        self.shape = shape
        self.elementType = elementType
        self.values = values
        // Saturating and NaN-safe: a bad value must not trap.
        self.integers = elementType.isInteger ? values.map { $0.isNaN ? 0 : Int64(max(min($0, 9.0e18), -9.0e18)) } : nil
    }

    /// A `uint8` tensor (for quantised models' raw inputs).
    public init(shape: [Int], uint8 bytes: [UInt8]) throws(MLError) {
        try self.init(shape: shape, values: bytes.map { Float($0) }, elementType: .uint8)
    }

    /// An integer tensor from exact 64-bit values.
    public init(shape: [Int], integers: [Int64], elementType: ElementType = .int64) throws(MLError) {
        guard Tensor.elementCount(shape) == integers.count else {
            throw .tensorSizeMismatch(shape: shape, count: integers.count)
        }
        self.shape = shape
        self.elementType = elementType
        self.values = integers.map { Float($0) }
        self.integers = integers
    }

    /// The number of elements.
    public var count: Int { values.count }

    /// The number of elements of `shape`; nil when a dimension is negative or the product does
    /// not fit an `Int` (shapes read from a model are untrusted).
    static func elementCount(_ shape: [Int]) -> Int? {
        var count = 1
        for dimension in shape {
            guard dimension >= 0 else { return nil }
            let (product, overflow) = count.multipliedReportingOverflow(by: dimension)
            guard !overflow else { return nil }
            count = product
        }
        return count
    }

    /// Values converted to `Int` (exact for integer tensors; float values are truncated).
    package var intValues: [Int] {
        if let integers { return integers.map { Int(clamping: $0) } }
        return values.map { $0.isFinite ? Int(max(min($0, 9.0e18), -9.0e18)) : 0 }
    }

    /// Values as `Double`, exact for integers up to 2^53 (used when folding constants).
    var doubleValues: [Double] {
        if let integers { return integers.map { Double($0) } }
        return values.map { Double($0) }
    }
}
