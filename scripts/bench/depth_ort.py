#!/usr/bin/env python3
"""The Python side of scripts/bench-depth: what `granite depth` does, with Pillow and ONNX Runtime.

Usage: depth_ort.py MODEL OUTDIR PHOTO...
For each photo: decode (Pillow, with its JPEG draft mode to at least 2 x 224 as granite does),
antialiased bilinear resize to 224x224, FastDepth (ONNX Runtime, CPU), bilinear upscale of the
map to the photo's size, and write NAME.depth.png (16-bit gray, millimetres) and NAME.preview.png
(RGBA, viridis-like ramp), as granite does.
"""
import os
import sys

import numpy as np
import onnxruntime as ort
from PIL import Image

SCALE = 0.0716998  # metres per output step (Models/fastdepth-224-int8.json)


def ramp():
    # A viridis-like 256-entry ramp (dark blue -> green -> yellow), near = yellow.
    t = np.linspace(0, 1, 256)
    r = np.clip(1.6 * t - 0.6, 0, 1) * 253 + (1 - t) * 68 * (t < 0.4)
    g = t * 231
    b = np.clip(0.33 + 0.5 * np.sin(np.pi * t) - 0.3 * t, 0, 1) * 255
    return np.stack([r, g, b, np.full(256, 255)], axis=1).astype(np.uint8)


def main():
    model, out, photos = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    options = ort.SessionOptions()
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    feed = session.get_inputs()[0].name
    lut = ramp()
    for path in photos:
        stem = os.path.splitext(os.path.basename(path))[0]
        with Image.open(path) as im:
            size = im.size
            im.draft("RGB", (448, 448))
            x = np.asarray(im.convert("RGB").resize((224, 224), Image.Resampling.BILINEAR), dtype=np.uint8)[None]
        depth = session.run(None, {feed: x})[0].reshape(224, 224).astype(np.float32) * SCALE
        full = np.asarray(Image.fromarray(depth).resize(size, Image.Resampling.BILINEAR))
        mm = np.clip(full * 1000 + 0.5, 0, 65535).astype(np.uint16)
        Image.fromarray(mm).save(os.path.join(out, stem + ".depth.png"))
        lo, hi = float(full.min()), float(full.max())
        near = ((hi - full) / max(hi - lo, 1e-6) * 255).astype(np.uint8)
        Image.fromarray(lut[near]).save(os.path.join(out, stem + ".preview.png"))
    print(f"{len(photos)} photos done")


if __name__ == "__main__":
    main()
