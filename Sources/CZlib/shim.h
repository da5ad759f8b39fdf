#ifndef GRANITE_CZLIB_SHIM_H
#define GRANITE_CZLIB_SHIM_H
// zlib: deflate/inflate for PNG iCCP and compressed iTXt chunks, crc32 for PNG chunk CRCs.
#include <zlib.h>

/// inflateInit()/deflateInit() are macros over the *_ functions with the version and struct size.
static inline int granite_inflateInit(z_streamp stream) { return inflateInit(stream); }
static inline int granite_deflateInit(z_streamp stream, int level) { return deflateInit(stream, level); }
/// deflateInit2() is a macro too (raw deflate streams for PNG row bands compressed in parallel).
static inline int granite_deflateInit2(z_streamp stream, int level, int windowBits, int memLevel, int strategy) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, memLevel, strategy);
}
/// adler32_combine() may be a macro over adler32_combine64 (large-file builds).
static inline uLong granite_adler32_combine(uLong first, uLong second, long secondLength) {
    return adler32_combine(first, second, (z_off_t)secondLength);
}
#endif
