#ifndef GRANITE_CWEBP_SHIM_H
#define GRANITE_CWEBP_SHIM_H
// libwebp's simple encode/decode API, and the animation encoder (libwebpmux) and decoder
// (libwebpdemux); errors are return values, no callbacks into Swift.
#include <webp/decode.h>
#include <webp/encode.h>
#include <webp/mux.h>
#include <webp/demux.h>

/// WebPGetFeatures() is a static inline over a versioned internal call; wrap it once here.
static inline int granite_webp_features(const uint8_t *data, size_t size, int *width, int *height,
                                        int *has_alpha, int *has_animation) {
    WebPBitstreamFeatures f;
    if (WebPGetFeatures(data, size, &f) != VP8_STATUS_OK) return 0;
    *width = f.width; *height = f.height; *has_alpha = f.has_alpha; *has_animation = f.has_animation;
    return 1;
}
#endif
