#ifndef GRANITE_CFUZZER_H
#define GRANITE_CFUZZER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt, linked by `-sanitize=fuzzer`): parses libFuzzer's flags from
/// argc/argv and calls `callback` for every input. SwiftPM gives executables their own `main`
/// (renamed per module), so the fuzzers call the driver from there instead of libFuzzer's `main`.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
