#ifndef GRANITE_CJXL_SHIM_H
#define GRANITE_CJXL_SHIM_H
// libjxl 0.7 (JPEG XL read and write; Debian 12's libjxl-dev): status codes, no longjmp.
#include <jxl/decode.h>
#include <jxl/encode.h>

static const int granite_jxl_true = JXL_TRUE;
static const int granite_jxl_false = JXL_FALSE;
#endif
