// glibc allocator statistics and tuning for GraniteCam's memory probe (malloc.h is not part of
// Swift's Glibc module). Only static inline wrappers; no unsafe pointers cross into Swift.
#ifndef GRANITE_CMALLOC_SHIM_H
#define GRANITE_CMALLOC_SHIM_H

#include <malloc.h>
#include <stddef.h>

/// What glibc's allocator holds, in bytes (from mallinfo2).
typedef struct {
    size_t arena;      // bytes obtained with sbrk/arena mmaps (non-mmapped heap space)
    size_t mmapped;    // bytes in chunks mmapped on their own (hblkhd)
    size_t inUse;      // bytes handed out and not freed (uordblks)
    size_t free;       // bytes free inside the heaps (fordblks)
    size_t releasable; // free bytes at the top of the main heap (keepcost)
} granite_malloc_info;

static inline granite_malloc_info granite_mallinfo(void) {
    struct mallinfo2 m = mallinfo2();
    granite_malloc_info info = { m.arena, m.hblkhd, m.uordblks, m.fordblks, m.keepcost };
    return info;
}

/// Gives free heap pages back to the kernel in every arena; 1 when memory was released.
static inline int granite_malloc_trim(void) { return malloc_trim(0); }

/// Sets the size from which allocations get their own mmap (fixing it also stops glibc raising it
/// after each free of a large block); 1 on success.
static inline int granite_malloc_set_mmap_threshold(int bytes) { return mallopt(M_MMAP_THRESHOLD, bytes); }

/// Caps the number of malloc arenas; 1 on success.
static inline int granite_malloc_set_arena_max(int count) { return mallopt(M_ARENA_MAX, count); }

#endif
