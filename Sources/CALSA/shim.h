// CALSA: the C surface GraniteCapture's ALSA sound capture (`--audio alsa[:PCM]`) uses, and nothing else.
//
// libasound's functions Swift calls directly; only its error hook is variadic, so the handler that
// keeps libasound's own messages off stderr (the capture's typed errors name the PCM and say what
// failed) is written here.
#ifndef GRANITE_CALSA_SHIM_H
#define GRANITE_CALSA_SHIM_H

#include <alsa/asoundlib.h>

static void calsa_quiet_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

/// libasound reports nothing on stderr from now on (errors still come back as return codes).
static inline void calsa_silence_errors(void) { snd_lib_error_set_handler(calsa_quiet_handler); }

static const int calsa_nonblock = SND_PCM_NONBLOCK;

#endif
