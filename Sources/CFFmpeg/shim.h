// CFFmpeg: the C surface GraniteRecorder uses from Debian's FFmpeg libraries (libavformat,
// libavcodec, libavutil, libswresample), and nothing else.
//
// Error codes, "no timestamp" and a few flags are function-like or casting macros Swift does not
// import; they are wrapped here as static inline functions.
#ifndef GRANITE_CFFMPEG_SHIM_H
#define GRANITE_CFFMPEG_SHIM_H

#include <errno.h>
#include <stdint.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/opt.h>
#include <libavutil/hwcontext.h>
#include <libavutil/channel_layout.h>
#include <libavutil/audio_fifo.h>
#include <libswresample/swresample.h>

static inline int cff_averror(int code) { return AVERROR(code); }
static inline int cff_eagain(void) { return AVERROR(EAGAIN); }
static inline int cff_eof(void) { return AVERROR_EOF; }
static inline int64_t cff_nopts(void) { return AV_NOPTS_VALUE; }
static inline int cff_fmt_globalheader(void) { return AVFMT_GLOBALHEADER; }
static inline int cff_fmt_nofile(void) { return AVFMT_NOFILE; }
static inline int cff_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int cff_pkt_flag_key(void) { return AV_PKT_FLAG_KEY; }

/// FFmpeg's message for `code` (av_strerror into `buffer`).
static inline const char *cff_error_string(int code, char *buffer, size_t size) {
    av_strerror(code, buffer, size);
    return buffer;
}

/// Stops libav* from printing to standard error below `level` (AV_LOG_*).
static inline void cff_quiet(int level) { av_log_set_level(level); }
static inline int cff_log_error(void) { return AV_LOG_ERROR; }
static inline int cff_log_fatal(void) { return AV_LOG_FATAL; }
static inline int cff_log_quiet(void) { return AV_LOG_QUIET; }

#endif
