import CGraniteKernels

/// Row-major `C = A·B` (A: m×k, B: k×n, no transposes), split into column blocks across
/// GraniteML's own threads, on GraniteML's GEMM (`gk_sgemm`): every instruction-set level sums
/// in ONNX Runtime's order with one rounding per multiply-add, so the bits do not depend on the
/// CPU (AVX-512 runs about twice OpenBLAS's speed on convolution shapes here).
///
/// Row `i` then gets `bias[i]` and the epilogue, inside the kernel tile by tile.
enum Gemm {
    static func multiply(m: Int, n: Int, k: Int, _ a: UnsafePointer<Float>, lda: Int, _ b: UnsafePointer<Float>, ldb: Int,
                         _ c: UnsafeMutablePointer<Float>, ldc: Int, threads: Int, bias: UnsafePointer<Float>? = nil,
                         epilogue: KernelEpilogue? = nil) {
        let level = Int32(KernelLevel.current)
        parallelColumns(n, work: m * n * k, threshold: 1 << 21, threads: threads) { cols in
            gk_sgemm(level, Int32(m), Int32(k), a, Int32(lda), b, Int32(ldb), c, Int32(ldc), Int32(cols.lowerBound),
                     Int32(cols.upperBound), bias, epilogue?.pointer)
            epilogue?.finish(c, rows: m, ldc: ldc, columns: cols)
        }
    }
}
