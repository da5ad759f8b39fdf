// CPipeWire: the C surface GraniteCapture's PipeWire camera (in and out) and sound capture use, and nothing else.
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
#include <spa/pod/iter.h>
#include <spa/debug/types.h>
#include <spa/param/video/type-info.h>
#include <spa/param/audio/format-utils.h>

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

// ---- What a producer offers (its node's EnumFormat params), read the way a camera client reads them.

enum { CPW_OFFER_MAX = 64 };

// One EnumFormat pod, its choices flattened. Each *_kind is an SPA_CHOICE_* (None: values[0] is the
// one value; Range: default, min, max; Step: default, min, max, step; Enum: default, then the
// alternatives); a property that is absent or empty has count 0.
struct cpw_offer {
    uint32_t media_type, media_subtype;
    uint32_t format_kind, format_count;
    uint32_t formats[CPW_OFFER_MAX];
    uint32_t size_kind, size_count;
    struct spa_rectangle sizes[CPW_OFFER_MAX];
    uint32_t rate_kind, rate_count;
    struct spa_fraction rates[CPW_OFFER_MAX];
};

static inline void cpw_offer_values(const struct spa_pod_object *obj, uint32_t key, uint32_t type, uint32_t size,
                                    void *out, uint32_t *kind, uint32_t *count) {
    *kind = SPA_CHOICE_None;
    *count = 0;
    const struct spa_pod_prop *prop = spa_pod_object_find_prop(obj, NULL, key);
    if (prop == NULL) return;
    uint32_t n = 0, choice = SPA_CHOICE_None;
    const struct spa_pod *values = spa_pod_get_values(&prop->value, &n, &choice);
    if (values->type != type || values->size < size) return;
    *kind = choice;
    n = SPA_MIN(n, (uint32_t)CPW_OFFER_MAX);
    const uint8_t *body = (const uint8_t *)SPA_POD_BODY_CONST(values);
    for (uint32_t i = 0; i < n; i++) memcpy((uint8_t *)out + i * size, body + i * values->size, size);
    *count = n;
}

// Reads one EnumFormat (or Format) pod. 0, or -EINVAL when it is not a format object.
static inline int cpw_parse_offer(const struct spa_pod *param, struct cpw_offer *offer) {
    memset(offer, 0, sizeof *offer);
    if (param == NULL || !spa_pod_is_object_type(param, SPA_TYPE_OBJECT_Format)) return -EINVAL;
    if (spa_format_parse(param, &offer->media_type, &offer->media_subtype) < 0) return -EINVAL;
    const struct spa_pod_object *obj = (const struct spa_pod_object *)param;
    cpw_offer_values(obj, SPA_FORMAT_VIDEO_format, SPA_TYPE_Id, sizeof(uint32_t), offer->formats, &offer->format_kind, &offer->format_count);
    cpw_offer_values(obj, SPA_FORMAT_VIDEO_size, SPA_TYPE_Rectangle, sizeof(struct spa_rectangle), offer->sizes, &offer->size_kind, &offer->size_count);
    cpw_offer_values(obj, SPA_FORMAT_VIDEO_framerate, SPA_TYPE_Fraction, sizeof(struct spa_fraction), offer->rates, &offer->rate_kind, &offer->rate_count);
    return 0;
}

// SPA's short name of a raw video format (`YUY2`, `RGB`, …), NULL when SPA has none.
static inline const char *cpw_video_format_name(uint32_t format) {
    return spa_debug_type_find_short_name(spa_type_video_format, format);
}
static inline const char *cpw_media_subtype_name(uint32_t subtype) {
    return spa_debug_type_find_short_name(spa_type_media_subtype, subtype);
}

// Collects a node's params of one id (copies, freed by cpw_node_params_free) as they arrive.
struct cpw_node_params {
    struct spa_hook hook;
    struct pw_node_events events;
    struct pw_proxy *proxy;
    struct spa_pod *pods[CPW_OFFER_MAX];
    uint32_t count;
};

static inline void cpw_node_params_param(void *data, int seq, uint32_t id, uint32_t index, uint32_t next, const struct spa_pod *param) {
    struct cpw_node_params *p = (struct cpw_node_params *)data;
    (void)seq; (void)id; (void)index; (void)next;
    if (param == NULL || p->count >= CPW_OFFER_MAX) return;
    struct spa_pod *copy = spa_pod_copy(param);
    if (copy != NULL) p->pods[p->count++] = copy;
}

// Binds node `id` and asks for its params `param_id` (SPA_PARAM_EnumFormat); they arrive on the
// loop before the answer to a core sync made after this call. Call locked. 0 or -errno.
static inline int cpw_node_params_begin(struct pw_registry *registry, uint32_t id, uint32_t param_id, struct cpw_node_params *p) {
    memset(p, 0, sizeof *p);
    struct pw_node *node = (struct pw_node *)pw_registry_bind(registry, id, PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, 0);
    if (node == NULL) return -errno;
    p->proxy = (struct pw_proxy *)node;
    p->events.version = PW_VERSION_NODE_EVENTS;
    p->events.param = cpw_node_params_param;
    pw_node_add_listener(node, &p->hook, &p->events, p);
    return pw_node_enum_params(node, 0, param_id, 0, UINT32_MAX, NULL);
}

// Lets go of the node and the copies. Call locked.
static inline void cpw_node_params_free(struct cpw_node_params *p) {
    if (p->proxy != NULL) {
        spa_hook_remove(&p->hook);
        pw_proxy_destroy(p->proxy);
        p->proxy = NULL;
    }
    for (uint32_t i = 0; i < p->count; i++) free(p->pods[i]);
    p->count = 0;
}
static inline const struct spa_pod *cpw_node_param(struct cpw_node_params *p, uint32_t i) { return i < p->count ? p->pods[i] : NULL; }

// One EnumFormat pod with every property fixed: raw `format` (or, with subtype MJPEG, no format),
// size and rate: what a client that has chosen asks for. NULL when `buffer` is too small.
static inline const struct spa_pod *cpw_video_format_fixed(uint8_t *buffer, uint32_t size, uint32_t subtype, uint32_t format,
                                                           uint32_t width, uint32_t height, uint32_t num, uint32_t den) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_pod_frame f;
    spa_pod_builder_push_object(&b, &f, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat);
    spa_pod_builder_add(&b, SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
                        SPA_FORMAT_mediaSubtype, SPA_POD_Id(subtype), 0);
    if (subtype == SPA_MEDIA_SUBTYPE_raw) spa_pod_builder_add(&b, SPA_FORMAT_VIDEO_format, SPA_POD_Id(format), 0);
    spa_pod_builder_add(&b, SPA_FORMAT_VIDEO_size, SPA_POD_Rectangle(&SPA_RECTANGLE(width, height)),
                        SPA_FORMAT_VIDEO_framerate, SPA_POD_Fraction(&SPA_FRACTION(num, den)), 0);
    return (const struct spa_pod *)spa_pod_builder_pop(&b, &f);
}

// The media subtype and (raw) format, size and rate a Format param fixes. 0 or -EINVAL.
static inline int cpw_parse_fixed_format(const struct spa_pod *param, uint32_t *subtype, uint32_t *format, uint32_t *width,
                                         uint32_t *height, uint32_t *num, uint32_t *den) {
    struct cpw_offer offer;
    if (cpw_parse_offer(param, &offer) < 0 || offer.media_type != SPA_MEDIA_TYPE_video) return -EINVAL;
    if (offer.size_count == 0) return -EINVAL;
    *subtype = offer.media_subtype;
    *format = offer.format_count > 0 ? offer.formats[0] : 0;
    *width = offer.sizes[0].width;
    *height = offer.sizes[0].height;
    *num = offer.rate_count > 0 ? offer.rates[0].num : 0;
    *den = offer.rate_count > 0 ? offer.rates[0].denom : 0;
    return 0;
}

// The inverse of cpw_parse_offer: one EnumFormat pod offering raw `formats` (more than one: an Enum
// choice, the first the default) or, with format_count 0, MJPEG; sizes and rates as choices of
// `*_kind` laid out as struct cpw_offer says. What the tier's test producers offer. NULL when
// `buffer` is too small.
static inline const struct spa_pod *cpw_video_offer(uint8_t *buffer, uint32_t size, const uint32_t *formats, uint32_t format_count,
                                                    uint32_t size_kind, const struct spa_rectangle *sizes, uint32_t size_count,
                                                    uint32_t rate_kind, const struct spa_fraction *rates, uint32_t rate_count) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_pod_frame f, c;
    spa_pod_builder_push_object(&b, &f, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat);
    spa_pod_builder_add(&b, SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
                        SPA_FORMAT_mediaSubtype, SPA_POD_Id(format_count > 0 ? SPA_MEDIA_SUBTYPE_raw : SPA_MEDIA_SUBTYPE_mjpg), 0);
    if (format_count > 0) {
        spa_pod_builder_prop(&b, SPA_FORMAT_VIDEO_format, 0);
        spa_pod_builder_push_choice(&b, &c, format_count > 1 ? SPA_CHOICE_Enum : SPA_CHOICE_None, 0);
        if (format_count > 1) spa_pod_builder_id(&b, formats[0]);
        for (uint32_t i = 0; i < format_count; i++) spa_pod_builder_id(&b, formats[i]);
        spa_pod_builder_pop(&b, &c);
    }
    spa_pod_builder_prop(&b, SPA_FORMAT_VIDEO_size, 0);
    spa_pod_builder_push_choice(&b, &c, size_kind, 0);
    for (uint32_t i = 0; i < size_count; i++) spa_pod_builder_rectangle(&b, sizes[i].width, sizes[i].height);
    spa_pod_builder_pop(&b, &c);
    spa_pod_builder_prop(&b, SPA_FORMAT_VIDEO_framerate, 0);
    spa_pod_builder_push_choice(&b, &c, rate_kind, 0);
    for (uint32_t i = 0; i < rate_count; i++) spa_pod_builder_fraction(&b, rates[i].num, rates[i].denom);
    spa_pod_builder_pop(&b, &c);
    return (const struct spa_pod *)spa_pod_builder_pop(&b, &f);
}

// ---- Audio (granite-cam's --audio and the tier's audio producer).

// One EnumFormat pod for interleaved raw audio: `format` (SPA_AUDIO_FORMAT_F32 or _S16); rate and
// channels fixed when > 0, else a choice (48000 within 8000..192000; 2 within 1..2): what a
// capture stream accepts. NULL when `buffer` is too small.
static inline const struct spa_pod *cpw_audio_format(uint8_t *buffer, uint32_t size, uint32_t format, uint32_t rate, uint32_t channels) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_pod_frame f;
    spa_pod_builder_push_object(&b, &f, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat);
    spa_pod_builder_add(&b, SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_audio),
                        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
                        SPA_FORMAT_AUDIO_format, SPA_POD_Id(format), 0);
    if (rate > 0) spa_pod_builder_add(&b, SPA_FORMAT_AUDIO_rate, SPA_POD_Int((int32_t)rate), 0);
    else spa_pod_builder_add(&b, SPA_FORMAT_AUDIO_rate, SPA_POD_CHOICE_RANGE_Int(48000, 8000, 192000), 0);
    if (channels > 0) spa_pod_builder_add(&b, SPA_FORMAT_AUDIO_channels, SPA_POD_Int((int32_t)channels), 0);
    else spa_pod_builder_add(&b, SPA_FORMAT_AUDIO_channels, SPA_POD_CHOICE_RANGE_Int(2, 1, 2), 0);
    return (const struct spa_pod *)spa_pod_builder_pop(&b, &f);
}

// The raw audio format a Format param fixes: SPA_AUDIO_FORMAT_*, rate, channels. 0, or -ENOTSUP
// (not raw audio) / -EINVAL.
static inline int cpw_parse_audio_format(const struct spa_pod *param, uint32_t *format, uint32_t *rate, uint32_t *channels) {
    uint32_t media_type = 0, media_subtype = 0;
    struct spa_audio_info_raw info;
    if (param == NULL || spa_format_parse(param, &media_type, &media_subtype) < 0) return -EINVAL;
    if (media_type != SPA_MEDIA_TYPE_audio || media_subtype != SPA_MEDIA_SUBTYPE_raw) return -ENOTSUP;
    memset(&info, 0, sizeof info);
    if (spa_format_audio_raw_parse(param, &info) < 0) return -EINVAL;
    *format = info.format;
    *rate = info.rate;
    *channels = info.channels;
    return 0;
}
static const uint32_t cpw_audio_f32 = SPA_AUDIO_FORMAT_F32;
static const uint32_t cpw_audio_s16 = SPA_AUDIO_FORMAT_S16;

// The stream's timing at this graph cycle (pw_stream_get_time_n): the cycle's CLOCK_MONOTONIC time,
// the delay to the device in nanoseconds (the graph's rate converted), and the samples buffered
// in the stream's resampler. 0 or -errno.
static inline int cpw_stream_timing(struct pw_stream *stream, int64_t *now, int64_t *delay_ns, uint64_t *buffered) {
    struct pw_time t;
    memset(&t, 0, sizeof t);
    int r = pw_stream_get_time_n(stream, &t, sizeof t);
    if (r < 0) return r;
    *now = t.now;
    *delay_ns = t.rate.denom > 0 ? t.delay * (int64_t)SPA_NSEC_PER_SEC * (int64_t)t.rate.num / (int64_t)t.rate.denom : 0;
    *buffered = t.buffered;
    return 0;
}

// A Buffers param asking only for how many buffers (the stream's converter sizes them): a capture
// stream whose callback runs late keeps what arrived meanwhile. NULL when `buffer` is too small.
static inline const struct spa_pod *cpw_buffer_count_param(uint8_t *buffer, uint32_t size, int32_t wanted, int32_t least, int32_t most) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    return (const struct spa_pod *)spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int(wanted, least, most));
}

// The room (in bytes) of a dequeued buffer's first block and the samples the graph asks an output
// for this cycle (0: as many as fit). NULL when unmapped.
static inline uint8_t *cpw_buffer_room(struct pw_buffer *b, uint32_t *maxsize, uint64_t *requested) {
    if (b == NULL || b->buffer == NULL || b->buffer->n_datas < 1 || b->buffer->datas[0].data == NULL) return NULL;
    *maxsize = b->buffer->datas[0].maxsize;
    *requested = b->requested;
    return (uint8_t *)b->buffer->datas[0].data;
}

#endif
