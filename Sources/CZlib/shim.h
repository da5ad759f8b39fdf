#ifndef GRANITE_CZLIB_SHIM_H
#define GRANITE_CZLIB_SHIM_H
// zlib: deflate/inflate for PNG iCCP and compressed iTXt chunks, crc32 for PNG chunk CRCs.
#include <zlib.h>

/// inflateInit()/deflateInit() are macros over the *_ functions with the version and struct size.
static inline int granite_inflateInit(z_streamp stream) { return inflateInit(stream); }
static inline int granite_deflateInit(z_streamp stream, int level) { return deflateInit(stream, level); }
#endif
