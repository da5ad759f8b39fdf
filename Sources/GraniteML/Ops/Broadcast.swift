/// NumPy-style broadcasting of two shapes, and the strides that read each input.
package struct Broadcast {
    package let shape: [Int]
    package let aStrides: [Int]
    package let bStrides: [Int]

    /// Broadcasts `a` against `b`, or nil when they are incompatible.
    package init?(_ a: [Int], _ b: [Int]) {
        let rank = max(a.count, b.count)
        let pa = [Int](repeating: 1, count: rank - a.count) + a
        let pb = [Int](repeating: 1, count: rank - b.count) + b
        var shape: [Int] = []
        for (x, y) in zip(pa, pb) {
            guard x == y || x == 1 || y == 1 else { return nil }
            shape.append(x == 1 ? y : x)
        }
        self.shape = shape
        self.aStrides = Broadcast.strides(pa, shape)
        self.bStrides = Broadcast.strides(pb, shape)
    }

    /// Row-major strides of `dims`, zero where a dimension of 1 is broadcast to `out`.
    static func strides(_ dims: [Int], _ out: [Int]) -> [Int] {
        var strides = [Int](repeating: 0, count: dims.count)
        var step = 1
        for i in stride(from: dims.count - 1, through: 0, by: -1) {
            strides[i] = dims[i] == 1 && out[i] != 1 ? 0 : step
            step *= dims[i]
        }
        return strides
    }

    /// Calls `body(outIndex, aIndex, bIndex, runLength, aStep, bStep)` over the output in runs
    /// along the last dimension.
    package func forEachRun(_ body: (Int, Int, Int, Int, Int, Int) -> Void) {
        let rank = shape.count
        guard rank > 0 else { body(0, 0, 0, 1, 0, 0); return }
        let inner = shape[rank - 1]
        let outer = shape.reduce(1, *) / max(inner, 1)
        guard inner > 0 else { return }
        var index = RowIndex()
        var ai = 0, bi = 0
        for run in 0..<outer {
            body(run * inner, ai, bi, inner, aStrides[rank - 1], bStrides[rank - 1])
            var d = rank - 2
            while d >= 0 {
                index[d] += 1
                ai += aStrides[d]
                bi += bStrides[d]
                if index[d] < shape[d] { break }
                ai -= aStrides[d] * shape[d]
                bi -= bStrides[d] * shape[d]
                index[d] = 0
                d -= 1
            }
        }
    }
}

/// Steps `index` to the next row of `shape` in row-major order: the leading `rank - 1` axes
/// count like an odometer (the last axis is the caller's inner loop).
@inline(__always)
func advanceRow(_ index: inout RowIndex, _ shape: [Int]) {
    var a = shape.count - 2
    while a >= 0 {
        index[a] += 1
        if index[a] < shape[a] { return }
        index[a] = 0
        a -= 1
    }
}

/// A multi-dimensional index of up to ``RowIndex/maxRank`` axes held inline (no heap
/// allocation inside kernels).
struct RowIndex {
    static let maxRank = 8
    private var storage: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)

    subscript(axis: Int) -> Int {
        @inline(__always) get {
            precondition(axis < Self.maxRank)
            return withUnsafeBytes(of: storage) { $0.load(fromByteOffset: axis * MemoryLayout<Int>.stride, as: Int.self) }
        }
        @inline(__always) set {
            precondition(axis < Self.maxRank)
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: newValue, toByteOffset: axis * MemoryLayout<Int>.stride, as: Int.self) }
        }
    }
}
