#ifndef GRANITE_CDEFLATE_SHIM_H
#define GRANITE_CDEFLATE_SHIM_H
// libdeflate: its vectorised Adler-32 for the PNG row encoder's zlib streams (zlib's own
// adler32 is a scalar loop, ~5x slower on a 12 MP depth map's 24 MB of rows).
#include <libdeflate.h>
#endif
