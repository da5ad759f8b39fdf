import CBLAS
import CGraniteKernels

/// Row-major `C = A·B` (A: m×k, B: k×n, no transposes), split into column blocks across
/// GraniteML's own threads: GraniteML's AVX-512 kernel where the CPU has it (about twice
/// OpenBLAS's speed on convolution shapes here), else `cblas_sgemm`. OpenBLAS itself runs
/// single-threaded (set by ``Model``), so one pool of workers serves both GEMMs and the other
/// kernels instead of two pools spinning against each other on a small machine.
///
/// Row `i` then gets `bias[i]` and the epilogue: inside the AVX-512 kernel tile by tile, after
/// a BLAS call block by block in the same thread.
enum Gemm {
    static func multiply(m: Int, n: Int, k: Int, _ a: UnsafePointer<Float>, lda: Int, _ b: UnsafePointer<Float>, ldb: Int,
                         _ c: UnsafeMutablePointer<Float>, ldc: Int, threads: Int, bias: UnsafePointer<Float>? = nil,
                         epilogue: KernelEpilogue? = nil) {
        let level = Int32(KernelLevel.current)
        let own = gk_sgemm_available(level) != 0
        parallelColumns(n, work: m * n * k, threshold: 1 << 21, threads: threads) { cols in
            let (lo, hi) = (cols.lowerBound, cols.upperBound)
            if own {
                gk_sgemm(level, Int32(m), Int32(k), a, Int32(lda), b, Int32(ldb), c, Int32(ldc), Int32(lo), Int32(hi),
                         bias, epilogue?.pointer)
            } else {
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Int32(m), Int32(hi - lo), Int32(k), 1,
                            a, Int32(lda), b + lo, Int32(ldb), 0, c + lo, Int32(ldc))
            }
            if let epilogue {
                epilogue.finish(c, rows: m, ldc: ldc, columns: cols, bias: bias, kernelDone: own)
            } else if !own, let bias {
                for i in 0..<m { gk_epilogue_apply(level, nil, bias[i], c + i * ldc + lo, hi - lo) }
            }
        }
    }
}
