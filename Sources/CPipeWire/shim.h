// CPipeWire: the C surface GraniteCapture's PipeWire camera (in and out) uses, and nothing else.
//
// SPA pods are built with variadic macros (spa_pod_builder_add_object, SPA_POD_*) and the core
// and registry methods are function-like macros over interface tables; Swift imports neither, so
// they are wrapped here as static inline functions. Everything else (pw_thread_loop_*, pw_stream_*,
// the event tables) Swift calls directly.
#ifndef GRANITE_CPIPEWIRE_SHIM_H
#define GRANITE_CPIPEWIRE_SHIM_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/param/buffers.h>
#include <spa/param/param.h>
#include <spa/pod/builder.h>
#include <spa/buffer/meta.h>

static const uint32_t cpw_id_any = PW_ID_ANY;
static const uint32_t cpw_id_core = PW_ID_CORE;

static inline struct pw_properties *cpw_properties_new(void) { return pw_properties_new(NULL, NULL); }
static inline int cpw_errno(void) { return errno; }

// One EnumFormat pod per entry of `formats` (SPA_VIDEO_FORMAT_*) into `buffer`, pointers in `params`.
// width > 0: that size and num/den frames per second exactly (what an output offers);
// width == 0: any size up to 8192x8192 and any rate (what an input accepts).
// Returns the number built, or -ENOSPC when `buffer` is too small.
static inline int cpw_video_formats(uint8_t *buffer, uint32_t size, const uint32_t *formats, uint32_t count,
                                    uint32_t width, uint32_t height, uint32_t num, uint32_t den,
                                    const struct spa_pod **params) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    for (uint32_t i = 0; i < count; i++) {
        const struct spa_pod *pod;
        if (width > 0) {
            pod = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
                SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
                SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
                SPA_FORMAT_VIDEO_format, SPA_POD_Id(formats[i]),
                SPA_FORMAT_VIDEO_size, SPA_POD_Rectangle(&SPA_RECTANGLE(width, height)),
                SPA_FORMAT_VIDEO_framerate, SPA_POD_Fraction(&SPA_FRACTION(num, den)));
        } else {
            pod = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
                SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
                SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
                SPA_FORMAT_VIDEO_format, SPA_POD_Id(formats[i]),
                SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle(
                    &SPA_RECTANGLE(640, 480), &SPA_RECTANGLE(1, 1), &SPA_RECTANGLE(8192, 8192)),
                SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(
                    &SPA_FRACTION(30, 1), &SPA_FRACTION(0, 1), &SPA_FRACTION(1000, 1)));
        }
        if (pod == NULL) return -ENOSPC;
        params[i] = pod;
    }
    return (int)count;
}

// The raw video format a Format param fixes. 0, or -ENOTSUP (not raw video) / -EINVAL.
static inline int cpw_parse_video_format(const struct spa_pod *param, uint32_t *format, uint32_t *width,
                                         uint32_t *height, uint32_t *num, uint32_t *den) {
    uint32_t media_type = 0, media_subtype = 0;
    struct spa_video_info_raw info;
    if (param == NULL || spa_format_parse(param, &media_type, &media_subtype) < 0) return -EINVAL;
    if (media_type != SPA_MEDIA_TYPE_video || media_subtype != SPA_MEDIA_SUBTYPE_raw) return -ENOTSUP;
    memset(&info, 0, sizeof info);
    if (spa_format_video_raw_parse(param, &info) < 0) return -EINVAL;
    *format = info.format;
    *width = info.size.width;
    *height = info.size.height;
    *num = info.framerate.num;
    *den = info.framerate.denom;
    return 0;
}

// The Buffers param of an output (one block of `frame_bytes`, rows `stride` apart, shared memory:
// memfd, or plain memory when both ends are in one process) and the header Meta param (sequence
// and capture time). frame_bytes == 0: only the Meta param (an input). Returns the count.
static inline int cpw_buffer_params(uint8_t *buffer, uint32_t size, uint32_t frame_bytes, uint32_t stride,
                                    const struct spa_pod **params) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    int n = 0;
    if (frame_bytes > 0) {
        params[n] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
            SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int(4, 2, 16),
            SPA_PARAM_BUFFERS_blocks, SPA_POD_Int(1),
            SPA_PARAM_BUFFERS_size, SPA_POD_Int((int32_t)frame_bytes),
            SPA_PARAM_BUFFERS_stride, SPA_POD_Int((int32_t)stride),
            SPA_PARAM_BUFFERS_dataType, SPA_POD_CHOICE_FLAGS_Int((1 << SPA_DATA_MemFd) | (1 << SPA_DATA_MemPtr)));
        if (params[n] == NULL) return -ENOSPC;
        n++;
    }
    params[n] = spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Header),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_header)));
    if (params[n] == NULL) return -ENOSPC;
    return n + 1;
}

// Plane `i` of a dequeued buffer: its mapped memory from the chunk's offset, the chunk's size and
// stride, and (maxsize) the room an output may fill. NULL when unmapped (DMA-BUF) or absent.
static inline uint8_t *cpw_buffer_plane(struct pw_buffer *b, uint32_t i, uint32_t *size, int32_t *stride, uint32_t *maxsize) {
    if (b == NULL || b->buffer == NULL || i >= b->buffer->n_datas) return NULL;
    struct spa_data *d = &b->buffer->datas[i];
    if (d->data == NULL || d->chunk == NULL) return NULL;
    uint32_t offset = d->chunk->offset % (d->maxsize ? d->maxsize : 1);
    *size = SPA_MIN(d->chunk->size, d->maxsize - offset);
    *stride = d->chunk->stride;
    *maxsize = d->maxsize;
    return (uint8_t *)d->data + offset;
}
static inline uint32_t cpw_buffer_planes(struct pw_buffer *b) { return (b && b->buffer) ? b->buffer->n_datas : 0; }

// What an output wrote into plane 0: `size` bytes from the start, rows `stride` apart.
static inline void cpw_buffer_filled(struct pw_buffer *b, uint32_t size, int32_t stride) {
    struct spa_chunk *c = b->buffer->datas[0].chunk;
    c->offset = 0;
    c->size = size;
    c->stride = stride;
    c->flags = 0;
}

// The header meta (sequence number, capture time in ns on CLOCK_MONOTONIC) when negotiated.
static inline void cpw_buffer_set_header(struct pw_buffer *b, uint64_t seq, int64_t pts) {
    struct spa_meta_header *h = (struct spa_meta_header *)spa_buffer_find_meta_data(b->buffer, SPA_META_Header, sizeof(*h));
    if (h == NULL) return;
    h->flags = 0;
    h->offset = 0;
    h->pts = pts;
    h->dts_offset = 0;
    h->seq = seq;
}
// 1 and the header's fields when the buffer carries one, else 0.
static inline int cpw_buffer_header(struct pw_buffer *b, uint64_t *seq, int64_t *pts) {
    struct spa_meta_header *h = (struct spa_meta_header *)spa_buffer_find_meta_data(b->buffer, SPA_META_Header, sizeof(*h));
    if (h == NULL) return 0;
    *seq = h->seq;
    *pts = h->pts;
    return 1;
}

// Core and registry methods (macros over the interface tables).
static inline struct pw_registry *cpw_core_get_registry(struct pw_core *core) {
    return pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
}
static inline int cpw_registry_add_listener(struct pw_registry *registry, struct spa_hook *hook,
                                            const struct pw_registry_events *events, void *data) {
    return pw_registry_add_listener(registry, hook, events, data);
}
static inline int cpw_core_add_listener(struct pw_core *core, struct spa_hook *hook,
                                        const struct pw_core_events *events, void *data) {
    return pw_core_add_listener(core, hook, events, data);
}
static inline int cpw_core_sync(struct pw_core *core, int seq) { return pw_core_sync(core, PW_ID_CORE, seq); }
static inline void cpw_registry_destroy(struct pw_registry *registry) { pw_proxy_destroy((struct pw_proxy *)registry); }

#endif
