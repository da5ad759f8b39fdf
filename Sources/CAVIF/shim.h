#ifndef GRANITE_CAVIF_SHIM_H
#define GRANITE_CAVIF_SHIM_H
// libavif (AVIF write through libaom): Debian 12's libavif-dev 0.11.1.
#include <avif/avif.h>

// Constants Swift does not import (#defines).
static const int granite_avif_quantizer_worst = AVIF_QUANTIZER_WORST_QUALITY;
static const int granite_avif_speed_fastest = AVIF_SPEED_FASTEST;
#endif
