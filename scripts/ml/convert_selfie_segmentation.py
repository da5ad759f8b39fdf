#!/usr/bin/env python3
"""Converts MediaPipe's selfie segmentation models (Apache-2.0) to ONNX, once, for Models/.

The .tflite files ship in the PyPI wheel mediapipe==0.10.21 (later wheels carry none):
mediapipe/modules/selfie_segmentation/selfie_segmentation.tflite (1x256x256x3) and
selfie_segmentation_landscape.tflite (1x144x256x3). tf2onnx 1.17 converts them at opset 17 (at 13
HardSwish is left invalid) except for MediaPipe's one custom op, Convolution2DTransposeBias (a
transposed convolution with bias); this script rewrites each of those as a standard ONNX
ConvTranspose, checks the result with onnx.checker, and compares ONNX Runtime's output with
MediaPipe's own (its selfie-segmentation solution, on the same RGB bytes at the model's size, so
MediaPipe's resize is the identity) on real photographs.

Not part of the build or the tests: run by hand in a throw-away venv (it is large):

    python3 -m venv /tmp/segvenv
    /tmp/segvenv/bin/pip install tensorflow-cpu==2.15.1 numpy==1.26.4 onnx==1.16.2 tf2onnx==1.17.0 \
        mediapipe==0.10.21 onnxruntime
    /tmp/segvenv/bin/python scripts/ml/convert_selfie_segmentation.py Models PHOTO...

usage: convert_selfie_segmentation.py OUT_DIR [PHOTO...]
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

MODELS = [
    # (tflite name in the wheel, ONNX name in Models/, input height, width)
    ("selfie_segmentation.tflite", "selfie-segmentation-256", 256, 256),
    ("selfie_segmentation_landscape.tflite", "selfie-segmentation-landscape-144x256", 144, 256),
]


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def flatbuffer_options(node):
    """The custom op's options, as tf2onnx keeps them (a bytes attribute), for the record."""
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def rewrite_transpose_conv(model):
    """Each Convolution2DTransposeBias(x NHWC, w [C_out, kH, kW, C_in], b) → ConvTranspose on the
    NCHW value tf2onnx transposed x from (else a Transpose to NCHW first), with w as
    [C_in, C_out, kH, kW], kernel 2×2, stride 2 (MediaPipe's only use: "same" padding, output
    twice the input), then a Transpose back to NHWC for the nodes after it."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    nodes = []
    count = 0
    for node in g.node:
        if node.op_type not in ("Convolution2DTransposeBias", "TFL_Convolution2DTransposeBias"):
            nodes.append(node)
            continue
        x, w_name, b_name = node.input
        w = numpy_helper.to_array(inits[w_name])  # TFLite: [C_out, kH, kW, C_in]
        b = numpy_helper.to_array(inits[b_name])
        assert w.ndim == 4 and b.shape == (w.shape[0],), (w.shape, b.shape)
        kh, kw = w.shape[1], w.shape[2]
        assert (kh, kw) == (2, 2), f"{node.name}: kernel {kh}x{kw} (only MediaPipe's 2x2 stride-2 form is known)"
        weights = np.ascontiguousarray(w.transpose(3, 0, 1, 2))  # [C_in, C_out, kH, kW]
        wt = numpy_helper.from_array(weights.astype(np.float32), node.name + "/weights_iohw")
        bt = numpy_helper.from_array(b.astype(np.float32), node.name + "/bias")
        g.initializer.extend([wt, bt])
        nchw_in, nchw_out = node.name + "/nchw_in", node.name + "/nchw_out"
        before = producer.get(x)
        if before is not None and before.op_type == "Transpose" and list(helper.get_attribute_value(before.attribute[0])) == [0, 2, 3, 1]:
            nchw_in = before.input[0]  # tf2onnx made x NHWC from an NCHW value: read that one
        else:
            nodes.append(helper.make_node("Transpose", [x], [nchw_in], name=node.name + "/to_nchw", perm=[0, 3, 1, 2]))
        nodes.append(helper.make_node("ConvTranspose", [nchw_in, wt.name, bt.name], [nchw_out], name=node.name,
                                      kernel_shape=[kh, kw], strides=[2, 2], pads=[0, 0, 0, 0]))
        nodes.append(helper.make_node("Transpose", [nchw_out], [node.output[0]], name=node.name + "/to_nhwc",
                                      perm=[0, 2, 3, 1]))
        print(f"  {node.name}: Convolution2DTransposeBias {flatbuffer_options(node)} -> ConvTranspose "
              f"{list(weights.shape)}, stride 2")
        count += 1
    del g.node[:]
    g.node.extend(nodes)
    # Drop the now unused TFLite-layout weights and a transpose left unread.
    used = {i for n in g.node for i in n.input} | {o.name for o in g.output}
    kept = [n for n in g.node if n.op_type != "Transpose" or n.output[0] in used]
    del g.node[:]
    g.node.extend(kept)
    used = {i for n in g.node for i in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    # The custom domain's opset import is no longer needed.
    keep_ops = [o for o in model.opset_import if o.domain in ("", "ai.onnx")]
    del model.opset_import[:]
    model.opset_import.extend(keep_ops)
    return count


def photo(path, h, w):
    convert = shutil.which("convert") or sys.exit("needs ImageMagick's convert")
    raw = subprocess.run([convert, path, "-resize", f"{w}x{h}!", "-depth", "8", "rgb:-"],
                         check=True, capture_output=True).stdout
    return np.frombuffer(raw, dtype=np.uint8).reshape(h, w, 3)


def compare(onnx_path, landscape, h, w, photos):
    import mediapipe as mp
    import onnxruntime as ort
    session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    worst = 0.0
    with mp.solutions.selfie_segmentation.SelfieSegmentation(model_selection=1 if landscape else 0) as seg:
        for p in photos:
            rgb = photo(p, h, w)
            ours = session.run(None, {name: (rgb.astype(np.float32) / 255.0)[None]})[0].reshape(h, w)
            theirs = seg.process(rgb).segmentation_mask.reshape(h, w)
            diff = float(np.abs(ours - theirs).max())
            a, b = ours > 0.5, theirs > 0.5
            iou = float((a & b).sum()) / float((a | b).sum()) if (a | b).any() else 1.0  # both empty: agree
            print(f"  {os.path.basename(p)}: max |ORT - mediapipe| {diff:.2e}, mask IoU {iou:.4f}, "
                  f"person {a.mean() * 100:.1f} %")
            worst = max(worst, diff)
    return worst


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    photos = sys.argv[2:]
    import mediapipe
    import tf2onnx
    folder = os.path.join(os.path.dirname(mediapipe.__file__), "modules", "selfie_segmentation")
    for tflite, stem, h, w in MODELS:
        src = os.path.join(folder, tflite)
        print(f"{tflite}: {os.path.getsize(src)} bytes, sha256 {sha256(src)}")
        model, _ = tf2onnx.convert.from_tflite(src, opset=17)
        n = rewrite_transpose_conv(model)
        model.producer_name = "tf2onnx " + tf2onnx.__version__ + " + convert_selfie_segmentation.py"
        onnx.checker.check_model(model, full_check=True)
        dst = os.path.join(out, stem + ".onnx")
        onnx.save(model, dst)
        ops = {}
        for node in model.graph.node:
            ops[node.op_type] = ops.get(node.op_type, 0) + 1
        print(f"  -> {dst}: {os.path.getsize(dst)} bytes, sha256 {sha256(dst)}, {n} ConvTranspose rewritten")
        print(f"  input {model.graph.input[0].name}, output {model.graph.output[0].name}; ops {json.dumps(ops)}")
        if photos:
            worst = compare(dst, "landscape" in tflite, h, w, photos)
            print(f"  worst max |diff| {worst:.2e}")


if __name__ == "__main__":
    main()
