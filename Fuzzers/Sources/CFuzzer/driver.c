// Only the declaration in include/CFuzzer.h is needed; SwiftPM wants one source file per C target.
#include "CFuzzer.h"
