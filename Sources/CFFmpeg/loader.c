// FFmpeg's libraries opened when a recording first needs them (see CFFmpeg.h): the one place
// that loads them. The forwards are hidden (the pragma at the end), so nothing outside the program
// (FFmpeg's own libraries included, which call each other) ever binds to them.
#include "CFFmpeg.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The libraries, in the order they depend on each other (a missing one is named, not its user):
// the sonames and Debian packages of the versions these headers are from.
enum { AVUTIL, SWRESAMPLE, AVCODEC, AVFORMAT, LIBRARIES };
static const struct { const char *soname, *package; } libraries[LIBRARIES] = {
    [AVUTIL] = {"libavutil.so." AV_STRINGIFY(LIBAVUTIL_VERSION_MAJOR), "libavutil" AV_STRINGIFY(LIBAVUTIL_VERSION_MAJOR)},
    [SWRESAMPLE] = {"libswresample.so." AV_STRINGIFY(LIBSWRESAMPLE_VERSION_MAJOR), "libswresample" AV_STRINGIFY(LIBSWRESAMPLE_VERSION_MAJOR)},
    [AVCODEC] = {"libavcodec.so." AV_STRINGIFY(LIBAVCODEC_VERSION_MAJOR), "libavcodec" AV_STRINGIFY(LIBAVCODEC_VERSION_MAJOR)},
    [AVFORMAT] = {"libavformat.so." AV_STRINGIFY(LIBAVFORMAT_VERSION_MAJOR), "libavformat" AV_STRINGIFY(LIBAVFORMAT_VERSION_MAJOR)},
};

// Every FFmpeg function the Swift code calls: its library, return type, name, parameters and the
// arguments passed on. FUNCTION returns a value, PROCEDURE does not. A definition whose
// parameters differ from the header's does not compile (conflicting types).
#define FFMPEG_FUNCTIONS(FUNCTION, PROCEDURE) \
    FUNCTION(AVUTIL, int, av_strerror, (int errnum, char *errbuf, size_t errbuf_size), (errnum, errbuf, errbuf_size)) \
    PROCEDURE(AVUTIL, av_log_set_level, (int level), (level)) \
    FUNCTION(AVUTIL, AVAudioFifo *, av_audio_fifo_alloc, (enum AVSampleFormat sample_fmt, int channels, int nb_samples), (sample_fmt, channels, nb_samples)) \
    PROCEDURE(AVUTIL, av_audio_fifo_free, (AVAudioFifo *af), (af)) \
    FUNCTION(AVUTIL, int, av_audio_fifo_read, (AVAudioFifo *af, void **data, int nb_samples), (af, data, nb_samples)) \
    FUNCTION(AVUTIL, int, av_audio_fifo_size, (AVAudioFifo *af), (af)) \
    FUNCTION(AVUTIL, int, av_audio_fifo_write, (AVAudioFifo *af, void **data, int nb_samples), (af, data, nb_samples)) \
    FUNCTION(AVUTIL, AVBufferRef *, av_buffer_alloc, (size_t size), (size)) \
    FUNCTION(AVUTIL, AVBufferRef *, av_buffer_ref, (const AVBufferRef *buf), (buf)) \
    PROCEDURE(AVUTIL, av_buffer_unref, (AVBufferRef **buf), (buf)) \
    FUNCTION(AVUTIL, int, av_channel_layout_copy, (AVChannelLayout *dst, const AVChannelLayout *src), (dst, src)) \
    PROCEDURE(AVUTIL, av_channel_layout_default, (AVChannelLayout *ch_layout, int nb_channels), (ch_layout, nb_channels)) \
    PROCEDURE(AVUTIL, av_channel_layout_uninit, (AVChannelLayout *channel_layout), (channel_layout)) \
    PROCEDURE(AVUTIL, av_dict_free, (AVDictionary **m), (m)) \
    FUNCTION(AVUTIL, int, av_dict_set, (AVDictionary **pm, const char *key, const char *value, int flags), (pm, key, value, flags)) \
    FUNCTION(AVUTIL, AVFrame *, av_frame_alloc, (void), ()) \
    PROCEDURE(AVUTIL, av_frame_free, (AVFrame **frame), (frame)) \
    FUNCTION(AVUTIL, int, av_frame_get_buffer, (AVFrame *frame, int align), (frame, align)) \
    PROCEDURE(AVUTIL, av_freep, (void *ptr), (ptr)) \
    FUNCTION(AVUTIL, int, av_hwdevice_ctx_create, (AVBufferRef **device_ctx, enum AVHWDeviceType type, const char *device, AVDictionary *opts, int flags), (device_ctx, type, device, opts, flags)) \
    FUNCTION(AVUTIL, AVBufferRef *, av_hwframe_ctx_alloc, (AVBufferRef *device_ctx), (device_ctx)) \
    FUNCTION(AVUTIL, int, av_hwframe_ctx_init, (AVBufferRef *ref), (ref)) \
    FUNCTION(AVUTIL, int, av_hwframe_get_buffer, (AVBufferRef *hwframe_ctx, AVFrame *frame, int flags), (hwframe_ctx, frame, flags)) \
    FUNCTION(AVUTIL, int, av_hwframe_transfer_data, (AVFrame *dst, const AVFrame *src, int flags), (dst, src, flags)) \
    FUNCTION(AVUTIL, int, av_opt_set, (void *obj, const char *name, const char *val, int search_flags), (obj, name, val, search_flags)) \
    FUNCTION(AVUTIL, int, av_samples_alloc_array_and_samples, (uint8_t ***audio_data, int *linesize, int nb_channels, int nb_samples, enum AVSampleFormat sample_fmt, int align), (audio_data, linesize, nb_channels, nb_samples, sample_fmt, align)) \
    FUNCTION(SWRESAMPLE, int, swr_alloc_set_opts2, (struct SwrContext **ps, AVChannelLayout *out_ch_layout, enum AVSampleFormat out_sample_fmt, int out_sample_rate, AVChannelLayout *in_ch_layout, enum AVSampleFormat in_sample_fmt, int in_sample_rate, int log_offset, void *log_ctx), (ps, out_ch_layout, out_sample_fmt, out_sample_rate, in_ch_layout, in_sample_fmt, in_sample_rate, log_offset, log_ctx)) \
    FUNCTION(SWRESAMPLE, int, swr_convert, (struct SwrContext *s, uint8_t **out, int out_count, const uint8_t **in, int in_count), (s, out, out_count, in, in_count)) \
    PROCEDURE(SWRESAMPLE, swr_free, (struct SwrContext **s), (s)) \
    FUNCTION(SWRESAMPLE, int, swr_get_out_samples, (struct SwrContext *s, int in_samples), (s, in_samples)) \
    FUNCTION(SWRESAMPLE, int, swr_init, (struct SwrContext *s), (s)) \
    FUNCTION(AVCODEC, AVPacket *, av_packet_alloc, (void), ()) \
    PROCEDURE(AVCODEC, av_packet_free, (AVPacket **pkt), (pkt)) \
    FUNCTION(AVCODEC, int, av_packet_ref, (AVPacket *dst, const AVPacket *src), (dst, src)) \
    PROCEDURE(AVCODEC, av_packet_unref, (AVPacket *pkt), (pkt)) \
    PROCEDURE(AVCODEC, av_packet_rescale_ts, (AVPacket *pkt, AVRational tb_src, AVRational tb_dst), (pkt, tb_src, tb_dst)) \
    FUNCTION(AVCODEC, AVCodecContext *, avcodec_alloc_context3, (const AVCodec *codec), (codec)) \
    FUNCTION(AVCODEC, const AVCodec *, avcodec_find_encoder_by_name, (const char *name), (name)) \
    PROCEDURE(AVCODEC, avcodec_free_context, (AVCodecContext **avctx), (avctx)) \
    FUNCTION(AVCODEC, int, avcodec_open2, (AVCodecContext *avctx, const AVCodec *codec, AVDictionary **options), (avctx, codec, options)) \
    FUNCTION(AVCODEC, int, avcodec_parameters_from_context, (AVCodecParameters *par, const AVCodecContext *codec), (par, codec)) \
    FUNCTION(AVCODEC, int, avcodec_receive_packet, (AVCodecContext *avctx, AVPacket *avpkt), (avctx, avpkt)) \
    FUNCTION(AVCODEC, int, avcodec_send_frame, (AVCodecContext *avctx, const AVFrame *frame), (avctx, frame)) \
    FUNCTION(AVCODEC, unsigned, avcodec_version, (void), ()) \
    FUNCTION(AVFORMAT, int, av_interleaved_write_frame, (AVFormatContext *s, AVPacket *pkt), (s, pkt)) \
    FUNCTION(AVFORMAT, int, av_write_trailer, (AVFormatContext *s), (s)) \
    FUNCTION(AVFORMAT, int, avformat_alloc_output_context2, (AVFormatContext **ctx, const AVOutputFormat *oformat, const char *format_name, const char *filename), (ctx, oformat, format_name, filename)) \
    PROCEDURE(AVFORMAT, avformat_free_context, (AVFormatContext *s), (s)) \
    FUNCTION(AVFORMAT, AVStream *, avformat_new_stream, (AVFormatContext *s, const AVCodec *c), (s, c)) \
    FUNCTION(AVFORMAT, int, avformat_write_header, (AVFormatContext *s, AVDictionary **options), (s, options)) \
    FUNCTION(AVFORMAT, int, avio_closep, (AVIOContext **s), (s)) \
    FUNCTION(AVFORMAT, int, avio_open, (AVIOContext **s, const char *url, int flags), (s, url, flags))

// The functions found, one pointer each (written once, under pthread_once, before any forward runs).
#define POINTER(library, type, name, parameters, arguments) static __typeof__(&name) found_##name;
#define PROCEDURE_POINTER(library, name, parameters, arguments) POINTER(library, void, name, parameters, arguments)
FFMPEG_FUNCTIONS(POINTER, PROCEDURE_POINTER)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static cff_load_failure_t failure;
static char reason[512];

static void fail(int library, const char *message) {
    snprintf(reason, sizeof reason, "%s", message ? message : "unknown reason");
    failure = (cff_load_failure_t){libraries[library].soname, libraries[library].package, reason};
}

static void load_once(void) {
    void *handles[LIBRARIES];
    const char *missing = getenv(CFF_FAULT_INJECTION_MISSING);
    for (int library = 0; library < LIBRARIES; library++) {
        const char *soname = libraries[library].soname;
        char injected[128];
        if (missing && strcmp(missing, soname) == 0) {   // fault injection: a name no system has
            snprintf(injected, sizeof injected, "%s.fault-injection-missing", soname);
            soname = injected;
        }
        handles[library] = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
        if (!handles[library]) {
            fail(library, dlerror());
            return;
        }
    }
#define RESOLVE(library, type, name, parameters, arguments) \
    found_##name = (__typeof__(&name))dlsym(handles[library], #name); \
    if (!found_##name) { \
        char message[256]; \
        snprintf(message, sizeof message, "%s has no %s", libraries[library].soname, #name); \
        fail(library, message); \
        return; \
    }
#define PROCEDURE_RESOLVE(library, name, parameters, arguments) RESOLVE(library, void, name, parameters, arguments)
    FFMPEG_FUNCTIONS(RESOLVE, PROCEDURE_RESOLVE)
    loaded = 1;   // the handles stay open for the life of the process
}

int cff_load(void) {
    pthread_once(&once, load_once);
    return loaded;
}

cff_load_failure_t cff_load_failure(void) {
    pthread_once(&once, load_once);
    return failure;
}

// A forward called before cff_load() succeeded: a programming error (the Swift side loads first),
// stopped with the reason rather than a jump to address 0.
static void require(const char *name) {
    if (cff_load()) return;
    fprintf(stderr, "granite: %s called without FFmpeg: %s did not load (%s); install %s\n",
            name, failure.soname, failure.reason, failure.package);
    abort();
}

#define FORWARD(library, type, name, parameters, arguments) \
    type name parameters { require(#name); return found_##name arguments; }
#define PROCEDURE_FORWARD(library, name, parameters, arguments) \
    void name parameters { require(#name); found_##name arguments; }
#pragma GCC visibility push(hidden)
FFMPEG_FUNCTIONS(FORWARD, PROCEDURE_FORWARD)
#pragma GCC visibility pop
