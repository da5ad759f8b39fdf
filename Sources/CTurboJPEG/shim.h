#ifndef GRANITE_CTURBOJPEG_SHIM_H
#define GRANITE_CTURBOJPEG_SHIM_H
// TurboJPEG's API only (no libjpeg setjmp error handling crosses into Swift).
#include <stddef.h>
#include <turbojpeg.h>

// Flags are plain #defines; re-export them as typed constants for Swift.
static const int granite_tjflag_progressive = TJFLAG_PROGRESSIVE;
static const int granite_tjflag_noRealloc = TJFLAG_NOREALLOC;
static const int granite_tjflag_accurateDCT = TJFLAG_ACCURATEDCT;
static const int granite_tjflag_stopOnWarning = TJFLAG_STOPONWARNING;
static const int granite_tjflag_limitScans = TJFLAG_LIMITSCANS;

/// TJSCALED() is a function-like macro.
static inline int granite_tjScaled(int dimension, tjscalingfactor factor) {
    return TJSCALED(dimension, factor);
}
#endif
