#ifndef GRANITE_CLCMS2_SHIM_H
#define GRANITE_CLCMS2_SHIM_H
// Little CMS 2: ICC profiles and color transforms (errors come back as NULL / FALSE, never longjmp).
#include <lcms2.h>

// TYPE_* and cmsFLAGS_* are #defines built from function-like macros; Swift sees these instead.
static const cmsUInt32Number granite_cms_type_rgba_8 = TYPE_RGBA_8;
static const cmsUInt32Number granite_cms_type_rgb_8 = TYPE_RGB_8;
static const cmsUInt32Number granite_cms_type_gray_8 = TYPE_GRAY_8;
static const cmsUInt32Number granite_cms_flags_copy_alpha = cmsFLAGS_COPY_ALPHA;
static const cmsUInt32Number granite_cms_intent_perceptual = INTENT_PERCEPTUAL;
static const cmsUInt32Number granite_cms_intent_relative_colorimetric = INTENT_RELATIVE_COLORIMETRIC;
#endif
