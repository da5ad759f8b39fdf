#!/usr/bin/env python3
"""Reference outputs for the resampler and depth tests (issue 16), made with Pillow and ONNX Runtime.

Usage: make_fixtures.py OUT_DIR MODELS_DIR PHOTO...

PHOTOs are real photographs (Debian's lomiri-wallpapers-16.04/20.04, /usr/share/backgrounds).
Writes into OUT_DIR:
  resample/source.png            a 1200x900 crop of the first photo, its own pixels (no resampling)
  resample/FILTER-WxH.png        Pillow's resize of it (BOX, BILINEAR, LANCZOS; reducing_gap off)
  resample/area-517x388.png      ImageMagick's -scale of it (exact area averaging)
  photos/NAME.jpg                each photo scaled by Pillow (LANCZOS) to 2688 px on its long side, quality 95
  depth/NAME.f32                 FastDepth 224 (ONNX Runtime) on NAME.jpg resized by Pillow's antialiased
                                 BILINEAR to 224x224: 224*224 little-endian float32, raw model output
"""
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort
from PIL import Image

FILTERS = {"box": Image.Resampling.BOX, "bilinear": Image.Resampling.BILINEAR, "lanczos3": Image.Resampling.LANCZOS}
CASES = [("box", 300, 225), ("box", 517, 388), ("lanczos3", 517, 388), ("lanczos3", 150, 113),
         ("bilinear", 224, 224), ("bilinear", 640, 480), ("lanczos3", 1800, 1350)]


def main():
    out, models, photos = sys.argv[1], sys.argv[2], sys.argv[3:]
    for sub in ("resample", "photos", "depth"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    with Image.open(photos[0]) as im:
        im = im.convert("RGB")
        w, h = im.size
        x0, y0 = (w - 1200) // 2, (h - 900) // 2
        source = im.crop((x0, y0, x0 + 1200, y0 + 900))
    source.save(os.path.join(out, "resample", "source.png"))
    for name, tw, th in CASES:
        source.resize((tw, th), FILTERS[name]).save(os.path.join(out, "resample", f"{name}-{tw}x{th}.png"))
    # Exact area averaging (Pillow's BOX is not: it takes whole pixels by their centres): ImageMagick's -scale.
    subprocess.run(["/usr/bin/convert", os.path.join(out, "resample", "source.png"), "-scale", "517x388!",
                    os.path.join(out, "resample", "area-517x388.png")], check=True)

    session = ort.InferenceSession(os.path.join(models, "fastdepth-224-int8.onnx"), providers=["CPUExecutionProvider"])
    feed = session.get_inputs()[0].name
    for path in photos:
        stem = os.path.splitext(os.path.basename(path))[0]
        with Image.open(path) as im:
            im = im.convert("RGB")
            scale = 2688 / max(im.size)
            size = (round(im.size[0] * scale), round(im.size[1] * scale))
            photo = im.resize(size, Image.Resampling.LANCZOS)
        jpeg = os.path.join(out, "photos", stem + ".jpg")
        photo.save(jpeg, quality=95)
        with Image.open(jpeg) as im:
            x = np.asarray(im.convert("RGB").resize((224, 224), Image.Resampling.BILINEAR), dtype=np.uint8)[None]
        depth = session.run(None, {feed: x})[0].astype("<f4").reshape(-1)
        depth.tofile(os.path.join(out, "depth", stem + ".f32"))
    print(f"media fixtures: {len(CASES)} resample references, {len(photos)} photos with depth references in {out}")


if __name__ == "__main__":
    main()
