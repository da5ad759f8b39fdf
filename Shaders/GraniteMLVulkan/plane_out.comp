#version 450
#include "bridge.glsl"
// The model's output plane scaled (metres, when metric) and resized to the frame with the shared
// resampler's tables, in the order Resampler.FloatRows sums: each source row across (taps from 0,
// starting at 0), then down (zero weights skipped). An axis whose size does not change is copied.
// One invocation per output value, written as float bits to the other user's plane.
// P: 0 plane's offset in the arena, 1 W, 2 H, 3 OW, 4 OH, 5 column taps (0: same width),
//    6 row taps (0: same height), 7 scale (float bits), 8 column weights at, 9 row starts at,
//    10 row weights at (the column starts are at 0 in the tables)
layout(local_size_x = 64) in;

float source(int y, int x) { return act[P(0) + y * P(1) + x] * PF(7); }

float across(int y, int x) {
    int taps = P(5);
    if (taps == 0) return source(y, x);
    int start = TI(x);
    precise float sum = 0.0;
    for (int k = 0; k < taps; k++) sum += source(y, start + k) * tab[P(8) + x * taps + k];
    return sum;
}

void main() {
    int i = int(gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * 65535u * 64u);
    int OW = P(3), OH = P(4);
    if (i >= OW * OH) return;
    int y = i / OW, x = i - y * OW;
    int taps = P(6);
    precise float v = 0.0;
    if (taps == 0) {
        v = across(y, x);
    } else {
        int start = TI(P(9) + y);
        for (int k = 0; k < taps; k++) {
            float w = tab[P(10) + y * taps + k];
            if (w == 0.0) continue;
            v += across(start + k, x) * w;
        }
    }
    ext[i] = floatBitsToUint(v);
}
