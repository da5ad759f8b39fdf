"""libvips anchor for `granite-bench convert`: the same work as granite, in one process.

thumbnail (shrink-on-load, like granite's DCT-scaled decode) to half size, the same 3x3 unsharp
kernel granite's CPU sharpen uses (2*identity - binomial/16), JPEG Q=85.
Usage: vips_convert.py OUTDIR WIDTH HEIGHT FILE...
"""
import os
import sys

import pyvips

out, width, height, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
mask = pyvips.Image.new_from_array([[-1, -2, -1], [-2, 28, -2], [-1, -2, -1]], scale=16)
for f in files:
    image = pyvips.Image.thumbnail(f, width, height=height)
    sharpened = image.conv(mask, precision="integer").cast("uchar")
    name = os.path.splitext(os.path.basename(f))[0]
    sharpened.write_to_file(os.path.join(out, name + ".jpg"), Q=85)
