// Run-time choice of the instruction set: CPUID for what the CPU has, XGETBV for what the OS
// saves on a context switch, GRANITE_ML_ISA to force a lower level (tests, comparisons).
#include "CGraniteKernels.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static uint64_t gk_xgetbv(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

int gk_cpu_level(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return GK_PORTABLE;
    int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1;
    if (!osxsave || !avx) return GK_PORTABLE;
    uint64_t xcr0 = gk_xgetbv();
    if ((xcr0 & 0x6) != 0x6) return GK_PORTABLE;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return GK_PORTABLE;
    int avx2 = (b >> 5) & 1;
    int avx512f = (b >> 16) & 1, avx512bw = (b >> 30) & 1, avx512vl = (b >> 31) & 1;
    int vnni = (c >> 11) & 1;
    if (avx512f && avx512bw && avx512vl && vnni && (xcr0 & 0xE0) == 0xE0) return GK_AVX512VNNI;
    if (avx2 && fma) return GK_AVX2;
    return GK_PORTABLE;
}
#else
int gk_cpu_level(void) { return GK_PORTABLE; }
#endif

int gk_detect_level(void) {
    int level = gk_cpu_level();
    const char *forced = getenv("GRANITE_ML_ISA");
    if (forced) {
        int cap = level;
        if (strcmp(forced, "portable") == 0) cap = GK_PORTABLE;
        else if (strcmp(forced, "avx2") == 0) cap = GK_AVX2;
        else if (strcmp(forced, "avx512vnni") == 0) cap = GK_AVX512VNNI;
        if (cap < level) level = cap;
    }
    return level;
}
