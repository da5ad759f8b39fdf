#ifndef GRANITE_CHEIF_SHIM_H
#define GRANITE_CHEIF_SHIM_H
// libheif (HEIC/HEIF read; Debian 12's libheif-dev 1.15 decodes HEVC through libde265).
// Its errors are returned structs, never longjmp.
#include <libheif/heif.h>
#endif
