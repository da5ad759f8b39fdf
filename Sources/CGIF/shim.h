#ifndef GRANITE_CGIF_SHIM_H
#define GRANITE_CGIF_SHIM_H
// giflib (GIF read; Debian's libgif-dev 5.2): return codes, no longjmp. giflib ships no pkg-config file.
#include <stddef.h>
#include <string.h>
#include <gif_lib.h>

/// Bytes in memory that giflib reads from, through `granite_gif_read`.
typedef struct {
    const GifByteType *data;
    size_t size;
    size_t offset;
} granite_gif_source;

/// giflib's InputFunc over a granite_gif_source in UserData: copies what is left, up to `length`.
static inline int granite_gif_read(GifFileType *gif, GifByteType *out, int length) {
    granite_gif_source *source = (granite_gif_source *)gif->UserData;
    size_t left = source->size - source->offset;
    size_t n = length < 0 ? 0 : ((size_t)length < left ? (size_t)length : left);
    memcpy(out, source->data + source->offset, n);
    source->offset += n;
    return (int)n;
}

/// DGifOpen over `source` (which must outlive the handle).
static inline GifFileType *granite_gif_open(granite_gif_source *source, int *error) {
    return DGifOpen(source, granite_gif_read, error);
}

static const int granite_gif_graphics_ext = GRAPHICS_EXT_FUNC_CODE;
static const int granite_gif_no_transparent = NO_TRANSPARENT_COLOR;
#endif
