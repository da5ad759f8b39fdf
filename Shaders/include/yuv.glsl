// Integer BT.601 YUV to a packed RGBA8 pixel; range 0 limited (16..235), 1 full (0..255).
// Mirrors InputConversion.rgba(y:u:v:range:).
uint yuvPixel(int Y, int U, int V, int range) {
    int d = U - 128, e = V - 128;
    int r, g, b;
    if (range == 0) {
        int c = 298 * (Y - 16);
        r = (c + 409 * e + 128) >> 8;
        g = (c - 100 * d - 208 * e + 128) >> 8;
        b = (c + 516 * d + 128) >> 8;
    } else {
        int c = 256 * Y;
        r = (c + 359 * e + 128) >> 8;
        g = (c - 88 * d - 183 * e + 128) >> 8;
        b = (c + 454 * d + 128) >> 8;
    }
    return packPx(uvec4(clamp(ivec3(r, g, b), 0, 255), 255));
}

// Pixel `second` (0 or 1) of a YUYV word (Y0 U Y1 V, low byte first).
uint yuyvPixel(uint word, int second, int range) {
    return yuvPixel(int((word >> (second * 16)) & 255u), int((word >> 8) & 255u), int(word >> 24), range);
}
