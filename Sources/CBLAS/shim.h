// OpenBLAS's CBLAS interface for GraniteML (Debian: libopenblas-dev).
#ifndef GRANITE_CBLAS_SHIM_H
#define GRANITE_CBLAS_SHIM_H
#include <cblas.h>

/// The number of threads OpenBLAS uses for its own kernels (process-wide).
static inline void granite_blas_set_threads(int n) { openblas_set_num_threads(n); }
/// The number of threads OpenBLAS currently uses.
static inline int granite_blas_threads(void) { return openblas_get_num_threads(); }
#endif
