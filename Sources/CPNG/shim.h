#ifndef GRANITE_CPNG_SHIM_H
#define GRANITE_CPNG_SHIM_H
// libpng's simplified API only (png_image_*): its setjmp stays inside libpng.
#include <png.h>

// PNG_FORMAT_* and PNG_IMAGE_* are #defines or function-like macros; Swift sees these instead.
static const unsigned granite_png_format_gray = PNG_FORMAT_GRAY;
static const unsigned granite_png_format_ga = PNG_FORMAT_GA;
static const unsigned granite_png_format_rgb = PNG_FORMAT_RGB;
static const unsigned granite_png_format_rgba = PNG_FORMAT_RGBA;
static const unsigned granite_png_format_linear_y = PNG_FORMAT_LINEAR_Y;
static const unsigned granite_png_format_flag_color = PNG_FORMAT_FLAG_COLOR;
static const unsigned granite_png_format_flag_alpha = PNG_FORMAT_FLAG_ALPHA;
static const unsigned granite_png_format_flag_linear = PNG_FORMAT_FLAG_LINEAR;
static const unsigned granite_png_format_flag_colormap = PNG_FORMAT_FLAG_COLORMAP;
static const unsigned granite_png_image_version = PNG_IMAGE_VERSION;
static const unsigned granite_png_image_flag_16bit_sRGB = PNG_IMAGE_FLAG_16BIT_sRGB;
static const unsigned granite_png_image_warning = PNG_IMAGE_WARNING;

/// PNG_IMAGE_FAILED() is a function-like macro.
static inline int granite_png_image_failed(const png_image *image) {
    return PNG_IMAGE_FAILED(*image);
}

/// PNG_IMAGE_PNG_SIZE_MAX() for an image whose rows are tightly packed.
static inline size_t granite_png_image_png_size_max(const png_image *image) {
    return PNG_IMAGE_PNG_SIZE_MAX(*image);
}

/// The bit depth the file stores (png_image keeps it only as the LINEAR flag).
static inline int granite_png_image_is_16bit(const png_image *image) {
    return (image->format & PNG_FORMAT_FLAG_LINEAR) != 0;
}
#endif
