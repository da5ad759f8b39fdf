// CFFmpeg: the C surface GraniteRecorder uses from Debian's FFmpeg libraries (libavformat,
// libavcodec, libavutil, libswresample), and nothing else.
//
// The libraries are not linked: loader.c opens them (dlopen) when a recording first needs them,
// so a program that does not record starts, and a bundle runs, without FFmpeg and the ~40 MiB of
// codec libraries it pulls in (issue 37). loader.c defines each FFmpeg function the Swift code
// calls, under its own name and with the header's prototype (hidden: seen inside the program
// only), as a forward to the function found in the exact library these headers are from
// (libavcodec.so.59 for LIBAVCODEC_VERSION_MAJOR 59, ...). So the Swift call sites read as
// FFmpeg's API; call cff_load() (GraniteRecorder's FFmpegLibraries.load()) before any of them.
// A call to an FFmpeg function missing from loader.c's list fails to link ("undefined reference
// to av_..."): add it to the list there.
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

/// Loads FFmpeg's libraries and every function of loader.c's list, once per process (later calls
/// answer at once): 1 when they are there, else 0 and cff_load_failure() says why.
int cff_load(void);

/// Why cff_load() failed: the library that did not load (its soname, `libavcodec.so.59`), the
/// Debian package that has it (`libavcodec59`) and the loader's message; NULLs before a failure.
typedef struct {
    const char *soname;
    const char *package;
    const char *reason;
} cff_load_failure_t;
cff_load_failure_t cff_load_failure(void);

/// The environment variable that makes cff_load() ask for LIBRARY (a soname such as
/// `libavcodec.so.59`) under a name no system has, so it fails as on a machine without it
/// (fault injection, for the tests of that error).
#define CFF_FAULT_INJECTION_MISSING "GRANITE_FAULT_INJECTION_FFMPEG_MISSING"

#endif
