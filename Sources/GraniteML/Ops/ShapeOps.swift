/// Ops that only change a tensor's shape or type: Reshape, Flatten, Squeeze, Unsqueeze,
/// Identity, Cast and Shape.
enum ShapeOps {
    static func build(_ c: BuildContext) throws(MLError) -> Prepared {
        let x = try c.input(0)
        let node = c.node
        switch node.op {
        case "Shape":
            var dims = x.shape
            let start = normalise(node.int("start", 0), dims.count, clampTo: true)
            let end = normalise(node.int("end", dims.count), dims.count, clampTo: true)
            dims = start < end ? Array(dims[start..<end]) : []
            return .constant([try Tensor(shape: [dims.count], integers: dims.map { Int64($0) })])
        case "Cast":
            guard let to = Tensor.ElementType(onnxCode: node.int("to", 1)) else {
                throw c.unsupported("cast to element type \(node.int("to", 1))")
            }
            let n = x.count
            return .single(x.shape, to) { io in
                let s = io.input(0), d = io.outputs[0]
                switch to {
                case .float32, .float64: d.update(from: s, count: n)
                case .bool: for i in 0..<n { d[i] = s[i] != 0 ? 1 : 0 }
                default:
                    let range = to.range
                    for i in 0..<n {
                        let v = s[i].rounded(.towardZero)
                        d[i] = range.map { r in min(max(v, r.lowerBound), r.upperBound) } ?? v
                    }
                }
            }
        case "Identity":
            return copy(x, shape: x.shape)
        case "Flatten":
            let axis = normalise(node.int("axis", 1), x.shape.count, clampTo: false)
            guard axis >= 0, axis <= x.shape.count else { throw c.invalid("axis out of range for shape \(x.shape)") }
            return copy(x, shape: [x.shape[..<axis].reduce(1, *), x.shape[axis...].reduce(1, *)])
        case "Reshape":
            let spec = try c.constant(1).intValues
            let allowZero = node.int("allowzero", 0) != 0
            var shape = spec.enumerated().map { i, d in d == 0 && !allowZero ? (i < x.shape.count ? x.shape[i] : -2) : d }
            guard !shape.contains(-2), shape.filter({ $0 == -1 }).count <= 1, shape.allSatisfy({ $0 >= -1 }) else {
                throw c.invalid("invalid target shape \(spec) for input \(x.shape)")
            }
            if let free = shape.firstIndex(of: -1) {
                guard let known = Tensor.elementCount(shape.filter { $0 != -1 }), known > 0, x.count % known == 0 else {
                    throw c.invalid("cannot reshape \(x.shape) to \(spec)")
                }
                shape[free] = x.count / known
            }
            guard Tensor.elementCount(shape) == x.count else { throw c.invalid("cannot reshape \(x.shape) to \(spec)") }
            return copy(x, shape: shape)
        case "Squeeze", "Unsqueeze":
            let axes = try (c.opset >= 13 ? c.optionalConstant(1)?.intValues : node.ints("axes"))
            if node.op == "Squeeze" {
                let rank = x.shape.count
                let drop = Set((axes ?? x.shape.indices.filter { x.shape[$0] == 1 }).map { normalise($0, rank, clampTo: false) })
                guard drop.allSatisfy({ $0 >= 0 && $0 < rank && x.shape[$0] == 1 }) else {
                    throw c.invalid("cannot squeeze axes \(axes ?? []) of \(x.shape)")
                }
                return copy(x, shape: x.shape.indices.filter { !drop.contains($0) }.map { x.shape[$0] })
            }
            guard let axes else { throw c.invalid("axes are required") }
            let rank = x.shape.count + axes.count
            let add = Set(axes.map { normalise($0, rank, clampTo: false) })
            guard add.count == axes.count, add.allSatisfy({ $0 >= 0 && $0 < rank }) else { throw c.invalid("invalid axes \(axes)") }
            var shape: [Int] = []
            var next = 0
            for i in 0..<rank {
                if add.contains(i) { shape.append(1) } else { shape.append(x.shape[next]); next += 1 }
            }
            return copy(x, shape: shape)
        default:
            throw c.unsupported("not a shape op")
        }
    }

    /// A kernel that copies the values under a new shape.
    private static func copy(_ x: OpInput, shape: [Int]) -> Prepared {
        let n = x.count
        return .single(shape, x.type) { io in io.outputs[0].update(from: io.input(0), count: n) }
    }

    /// Turns a negative axis or index into a non-negative one; clamps to 0...rank when asked.
    static func normalise(_ value: Int, _ rank: Int, clampTo clamp: Bool) -> Int {
        let v = value < 0 ? value + rank : value
        return clamp ? min(max(v, 0), rank) : v
    }
}
