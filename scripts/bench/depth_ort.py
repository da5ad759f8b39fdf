#!/usr/bin/env python3
"""The Python side of scripts/bench-depth: what `granite depth` does, with Pillow and ONNX Runtime.

Usage: depth_ort.py MODEL OUTDIR PHOTO...
For each photo: decode (Pillow, with its JPEG draft mode to at least 4 x 224 as granite does),
antialiased bilinear resize to 224x224, FastDepth (ONNX Runtime, CPU), bilinear upscale of the
map to the photo's size, and write NAME.depth.png (16-bit gray, millimetres) and NAME.preview.png
(8-bit indexed, the same 256-entry viridis palette), as granite does; both PNGs at zlib level
LEVEL (environment DEPTH_PNG_LEVEL, default 1: granite's level; Pillow picks its own row filters).
"""
import os
import sys

import numpy as np
import onnxruntime as ort
from PIL import Image

SCALE = 0.0716998  # metres per output step (Models/fastdepth-224-int8.json)


STOPS = [
    (0.267, 0.005, 0.329), (0.283, 0.141, 0.458), (0.254, 0.265, 0.530), (0.207, 0.372, 0.553),
    (0.164, 0.471, 0.558), (0.128, 0.567, 0.551), (0.135, 0.659, 0.518), (0.267, 0.749, 0.441),
    (0.478, 0.821, 0.318), (0.741, 0.873, 0.150), (0.993, 0.906, 0.144),
]


def palette():
    # granite's ColorMap.palette: viridis at 256 points, interpolated between the stops.
    out = []
    for i in range(256):
        x = i / 255 * (len(STOPS) - 1)
        k = min(int(x), len(STOPS) - 2)
        f = x - k
        out += [round((a + (b - a) * f) * 255) for a, b in zip(STOPS[k], STOPS[k + 1])]
    return out


def main():
    model, out, photos = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    options = ort.SessionOptions()
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    feed = session.get_inputs()[0].name
    pal = palette()
    level = int(os.environ.get("DEPTH_PNG_LEVEL", "1"))
    for path in photos:
        stem = os.path.splitext(os.path.basename(path))[0]
        with Image.open(path) as im:
            size = im.size
            im.draft("RGB", (896, 896))
            x = np.asarray(im.convert("RGB").resize((224, 224), Image.Resampling.BILINEAR), dtype=np.uint8)[None]
        depth = session.run(None, {feed: x})[0].reshape(224, 224).astype(np.float32) * SCALE
        full = np.asarray(Image.fromarray(depth).resize(size, Image.Resampling.BILINEAR))
        mm = np.clip(full * 1000 + 0.5, 0, 65535).astype(np.uint16)
        Image.fromarray(mm).save(os.path.join(out, stem + ".depth.png"), compress_level=level)
        lo, hi = float(full.min()), float(full.max())
        near = np.rint((hi - full) / max(hi - lo, 1e-6) * 255).astype(np.uint8)
        preview = Image.frombuffer("P", size, near.tobytes(), "raw", "P", 0, 1)
        preview.putpalette(pal)
        preview.save(os.path.join(out, stem + ".preview.png"), compress_level=level)
    print(f"{len(photos)} photos done")


if __name__ == "__main__":
    main()
