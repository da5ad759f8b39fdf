#!/usr/bin/env python3
"""Reference outputs from ONNX Runtime for GraniteML's model tests.

Writes, for each case, CASE.json (model, input and output names, shapes, dtypes) and raw
little-endian .bin files into the fixture folder (default: .build-ml-fixtures in the repo
root, git-ignored). Inputs are deterministic synthetic images (gradients, boxes, stripes and
seeded noise), and with --photo a real photograph for FastDepth (fastdepth-224-photo), so
Swift reads exactly what ONNX Runtime saw.

CASE.json's "exact_int8" says whether ONNX Runtime's u8×s8 GEMM sums exactly on this CPU: with
VNNI it does; without, its AVX2 kernel adds byte-pair products in saturating 16-bit lanes
(vpmaddubsw), so an int8 model's reference departs from exact integer arithmetic.

With --segment PHOTO (repeatable), MediaPipe's selfie segmentation (Models/) sees each photo,
as selfie-256-STEM (256×256) and selfie-landscape-STEM (144×256), fed 0…1 floats NHWC.

usage: make_fixtures.py [--photo JPEG] [--segment PHOTO]... OUT_DIR MODEL_DIR...   (each model is taken from the first folder that has it)
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnxruntime as ort


def scene(h, w, seed):
    """An RGB float image in [0, 1]: gradients, rectangles, text-like stripes and noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.stack([x / w, y / h, 0.5 + 0.5 * np.sin((x + y) / 17.0)], axis=-1)
    for _ in range(6):
        y0, x0 = rng.integers(0, h - 8), rng.integers(0, w - 8)
        y1, x1 = y0 + rng.integers(4, max(5, h // 3)), x0 + rng.integers(4, max(5, w // 3))
        img[y0:y1, x0:x1] = rng.random(3)
    unit = max(1, w // 256)  # glyph-like dashes at the same size relative to the image
    for k in range(3):
        row = int(h * (0.2 + 0.25 * k))
        for col in range(int(w * 0.1), int(w * 0.9), 6 * unit):
            img[row:row + max(2, h // 40), col:col + 3 * unit] = 0.05
    img += rng.normal(0, 0.03, img.shape)
    return np.clip(img, 0, 1).astype(np.float32)


def ort_int8_exact():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return False
    return "avx512_vnni" in flags or "avx_vnni" in flags


def photo(path, size, width=None):
    """A photograph squeezed to size×size (or size×width) RGB bytes by ImageMagick (a plain
    resize; the test feeds ONNX Runtime's very bytes, so only the picture's content matters)."""
    width = width or size
    convert = shutil.which("convert") or sys.exit("make_fixtures: --photo needs ImageMagick's convert")
    raw = subprocess.run([convert, path, "-resize", f"{width}x{size}!", "-depth", "8", "rgb:-"],
                         check=True, capture_output=True).stdout
    return np.frombuffer(raw, dtype=np.uint8).reshape(size, width, 3)


def case(out_dir, name, model_path, feeds):
    sess_opts = ort.SessionOptions()
    sess_opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model_path, sess_opts, providers=["CPUExecutionProvider"])
    outputs = sess.run(None, feeds)
    manifest = {"model": os.path.basename(model_path), "exact_int8": ort_int8_exact(), "inputs": [], "outputs": []}
    for key, arrays in (("inputs", feeds.items()), ("outputs", zip([o.name for o in sess.get_outputs()], outputs))):
        for i, (tensor_name, array) in enumerate(arrays):
            file = f"{name}.{key}.{i}.bin"
            np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tofile(os.path.join(out_dir, file))
            manifest[key].append({"name": tensor_name, "shape": list(array.shape), "dtype": str(array.dtype), "file": file})
    with open(os.path.join(out_dir, f"{name}.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"fixture {name}: outputs {[list(o.shape) for o in outputs]}")


def find(name, folders):
    for folder in folders:
        if os.path.exists(os.path.join(folder, name)):
            return os.path.join(folder, name)
    sys.exit(f"make_fixtures: {name} is in none of {folders}")


def main():
    args = sys.argv[1:]
    picture = None
    segment = []
    while args[:1] in (["--photo"], ["--segment"]):
        if args[0] == "--photo":
            picture = args[1]
        else:
            segment.append(args[1])
        args = args[2:]
    out_dir, folders = args[0], args[1:]
    os.makedirs(out_dir, exist_ok=True)
    fastdepth = find("fastdepth-224-int8.onnx", folders)
    depth = (scene(224, 224, 1) * 255).round().astype(np.uint8)[None]
    case(out_dir, "fastdepth-224", fastdepth, {"serving_default_input_1:0": depth})
    if picture:
        case(out_dir, "fastdepth-224-photo", fastdepth, {"serving_default_input_1:0": photo(picture, 224)[None]})
    for size in (256, 640):
        x = ((scene(size, size, size) - 0.5) / 0.5).transpose(2, 0, 1)[None].astype(np.float32)
        case(out_dir, f"ppocr-det-{size}", find("ppocr-v4-det.onnx", folders), {"x": x})
    cls = ((scene(48, 192, 7) - 0.5) / 0.5).transpose(2, 0, 1)[None].astype(np.float32)
    case(out_dir, "ppocr-cls", find("ppocr-mobile-v2-cls.onnx", folders), {"x": cls})
    for path in segment:
        stem = os.path.splitext(os.path.basename(path))[0]
        for name, file, h, w in (("selfie-256", "selfie-segmentation-256.onnx", 256, 256),
                                 ("selfie-landscape", "selfie-segmentation-landscape-144x256.onnx", 144, 256)):
            x = (photo(path, h, w).astype(np.float32) / 255)[None]
            case(out_dir, f"{name}-{stem}", find(file, folders), {"input_1": x})


if __name__ == "__main__":
    main()
