"""libvips anchor for `granite-bench convert`: the same work as granite, in one process.

thumbnail (shrink-on-load, like granite's DCT-scaled decode) to half size, the unsharp mask
granite's `--filter sharpen` computes (amount 1: 2·identity − a gaussian of sigma 1, radius 3, as one
7×7 integer kernel), JPEG Q=85.
Usage: vips_convert.py OUTDIR WIDTH HEIGHT FILE...
"""
import math
import os
import sys

import pyvips

out, width, height, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
SCALE = 4096
taps = [math.exp(-k * k / 2) for k in range(-3, 4)]
total = sum(taps)
gauss = [[a * b / (total * total) for b in taps] for a in taps]
kernel = [[round(SCALE * ((2 if (i, j) == (3, 3) else 0) - gauss[i][j])) for j in range(7)] for i in range(7)]
kernel[3][3] += SCALE - sum(map(sum, kernel))  # integer weights summing to exactly SCALE
mask = pyvips.Image.new_from_array(kernel, scale=SCALE)
for f in files:
    image = pyvips.Image.thumbnail(f, width, height=height)
    sharpened = image.conv(mask, precision="integer").cast("uchar")
    name = os.path.splitext(os.path.basename(f))[0]
    sharpened.write_to_file(os.path.join(out, name + ".jpg"), Q=85)
