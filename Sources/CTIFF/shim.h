#ifndef GRANITE_CTIFF_SHIM_H
#define GRANITE_CTIFF_SHIM_H
// libtiff 4.5 (TIFF read and write) over memory, with per-handle error and warning handlers
// (TIFFOpenOptions): nothing goes to stderr, no global state, no longjmp.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

/// A file in memory: read from `data`, or written into a buffer that grows (`owned`).
typedef struct {
    unsigned char *data;
    size_t size, capacity, offset;
    int owned;
    char error[512];
    char warning[512];
} granite_tiff_stream;

static inline tmsize_t granite_tiff_read(thandle_t h, void *buf, tmsize_t n) {
    granite_tiff_stream *s = (granite_tiff_stream *)h;
    if (n < 0 || s->offset >= s->size) return 0;
    size_t left = s->size - s->offset, k = (size_t)n < left ? (size_t)n : left;
    memcpy(buf, s->data + s->offset, k);
    s->offset += k;
    return (tmsize_t)k;
}

static inline tmsize_t granite_tiff_write(thandle_t h, void *buf, tmsize_t n) {
    granite_tiff_stream *s = (granite_tiff_stream *)h;
    if (!s->owned || n < 0) return -1;
    size_t end = s->offset + (size_t)n;
    if (end > s->capacity) {
        size_t capacity = s->capacity ? s->capacity : 65536;
        while (capacity < end) capacity *= 2;
        unsigned char *grown = (unsigned char *)realloc(s->data, capacity);
        if (!grown) return -1;
        memset(grown + s->capacity, 0, capacity - s->capacity);
        s->data = grown;
        s->capacity = capacity;
    }
    memcpy(s->data + s->offset, buf, (size_t)n);
    s->offset = end;
    if (end > s->size) s->size = end;
    return n;
}

static inline toff_t granite_tiff_seek(thandle_t h, toff_t off, int whence) {
    granite_tiff_stream *s = (granite_tiff_stream *)h;
    uint64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? s->offset : s->size;
    uint64_t to = base + off;
    if (to > ((uint64_t)1 << 40)) return (toff_t)-1;
    s->offset = (size_t)to;
    return to;
}

static inline int granite_tiff_close(thandle_t h) { (void)h; return 0; }
static inline toff_t granite_tiff_size(thandle_t h) { return ((granite_tiff_stream *)h)->size; }
static inline int granite_tiff_map(thandle_t h, void **base, toff_t *size) { (void)h; (void)base; (void)size; return 0; }
static inline void granite_tiff_unmap(thandle_t h, void *base, toff_t size) { (void)h; (void)base; (void)size; }

/// Keeps the first message of a kind: "module: text".
static inline void granite_tiff_note(char *buffer, size_t size, const char *module, const char *fmt, va_list ap) {
    if (buffer[0] != 0) return;
    int n = snprintf(buffer, size, "%s: ", module ? module : "libtiff");
    if (n >= 0 && (size_t)n < size) vsnprintf(buffer + n, size - (size_t)n, fmt, ap);
}

static inline int granite_tiff_on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
    (void)tif;
    granite_tiff_stream *s = (granite_tiff_stream *)user;
    granite_tiff_note(s->error, sizeof s->error, module, fmt, ap);
    return 1;
}

static inline int granite_tiff_on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
    (void)tif;
    granite_tiff_stream *s = (granite_tiff_stream *)user;
    granite_tiff_note(s->warning, sizeof s->warning, module, fmt, ap);
    return 1;
}

/// Opens `s` for reading ("r") or writing ("w"), messages into `s`; one allocation at most `max_alloc` bytes.
static inline TIFF *granite_tiff_open(granite_tiff_stream *s, const char *mode, tmsize_t max_alloc) {
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    if (!options) return NULL;
    TIFFOpenOptionsSetErrorHandlerExtR(options, granite_tiff_on_error, s);
    TIFFOpenOptionsSetWarningHandlerExtR(options, granite_tiff_on_warning, s);
    TIFFOpenOptionsSetMaxSingleMemAlloc(options, max_alloc);
    TIFF *tif = TIFFClientOpenExt("memory", mode, (thandle_t)s, granite_tiff_read, granite_tiff_write, granite_tiff_seek,
                                  granite_tiff_close, granite_tiff_size, granite_tiff_map, granite_tiff_unmap, options);
    TIFFOpenOptionsFree(options);
    return tif;
}

// TIFFGetField / TIFFSetField are variadic; one wrapper per value shape.
static inline int granite_tiff_get_u32(TIFF *t, uint32_t tag, uint32_t *v) { return TIFFGetField(t, tag, v); }
static inline int granite_tiff_get_u16(TIFF *t, uint32_t tag, uint16_t *v) { return TIFFGetField(t, tag, v); }
static inline int granite_tiff_get_u16_default(TIFF *t, uint32_t tag, uint16_t *v) { return TIFFGetFieldDefaulted(t, tag, v); }
static inline int granite_tiff_get_extrasamples(TIFF *t, uint16_t *count, uint16_t **types) {
    return TIFFGetFieldDefaulted(t, TIFFTAG_EXTRASAMPLES, count, types);
}
static inline int granite_tiff_get_bytes(TIFF *t, uint32_t tag, uint32_t *count, void **data) { return TIFFGetField(t, tag, count, data); }
static inline int granite_tiff_set_u32(TIFF *t, uint32_t tag, uint32_t v) { return TIFFSetField(t, tag, v); }
static inline int granite_tiff_set_u16(TIFF *t, uint32_t tag, uint16_t v) { return TIFFSetField(t, tag, (int)v); }
static inline int granite_tiff_set_bytes(TIFF *t, uint32_t tag, uint32_t count, const void *data) { return TIFFSetField(t, tag, count, data); }
static inline int granite_tiff_set_extrasample_unassociated(TIFF *t) {
    uint16_t type = EXTRASAMPLE_UNASSALPHA;
    return TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, &type);
}
#endif
