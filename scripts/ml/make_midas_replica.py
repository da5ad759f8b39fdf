#!/usr/bin/env python3
"""A structural replica of MiDaS v2.1 small, for GraniteML's tests (issue 5).

The trained `model-small.onnx` cannot be fetched where the tests run (no network), so this
builds the same network — EfficientNet-Lite3 encoder (TF "same" padding as static Pad
nodes, ReLU6, no squeeze-excitation), the four `scratch.layerN_rn` projections, the
`FeatureFusionBlock_custom` decoder with residual conv units and ×2 bilinear upsampling,
the output head and the final squeeze — with seeded random weights, in the two ways a user's
file is likely to be exported:

- `opset9`:  as MiDaS's own `tf/make_onnx_model.py` does (opset 9, ImageNet mean/std
  subtracted and divided *inside* the model, `Upsample` linear, `Clip` and `Pad` with
  attributes, BatchNormalization left as nodes);
- `opset13`: as `torch.onnx.export` of the hub model does today (BatchNorm folded, `Resize`
  linear with `align_corners` in the decoder and `half_pixel` in the head, one `Resize` whose
  `sizes` come from `Shape`→`Slice`→`Concat`, `Clip`/`Pad`/`Squeeze` with tensor inputs).

Each variant is written as models/MODEL.onnx plus an ONNX Runtime reference (the fixture format of
make_fixtures.py). Not the trained weights: the test checks the runtime's coverage and
numerics on this architecture, not the depth it predicts.

usage: make_midas_replica.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(__file__))
from make_fixtures import case, scene  # noqa: E402

MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)

# EfficientNet-Lite3 after width ×1.2 / depth ×1.4 scaling (first and last stage fixed):
# (block kind, repeats, kernel, stride, expansion, output channels); MiDaS taps the
# encoder after stages 1, 2, 4 and 6.
STAGES = [("ds", 1, 3, 1, 1, 24), ("ir", 3, 3, 2, 6, 32), ("ir", 3, 5, 2, 6, 48), ("ir", 5, 3, 2, 6, 96),
          ("ir", 5, 5, 1, 6, 136), ("ir", 6, 5, 2, 6, 232), ("ir", 1, 3, 1, 6, 384)]
TAPS = {1: 0, 2: 1, 4: 2, 6: 3}


class Builder:
    def __init__(self, opset, seed):
        self.opset = opset
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, stem):
        self.count += 1
        return f"{stem}_{self.count}"

    def const(self, array, stem="c"):
        n = self.name(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(array), n))
        return n

    def op(self, op, inputs, stem=None, **attrs):
        out = self.name(stem or op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def conv(self, x, cin, cout, k, stride=1, groups=1, pad=None, bias=True, bn=False, act=None, gain=1.0):
        fan_in = cin // groups * k * k
        w = self.rng.normal(0, gain * np.sqrt(2.0 / fan_in), (cout, cin // groups, k, k)).astype(np.float32)
        inputs = [x, self.const(w, "w")]
        if bias and not bn:
            inputs.append(self.const(self.rng.normal(0, 0.05, cout).astype(np.float32), "b"))
        p = (k // 2,) * 4 if pad is None else pad
        y = self.op("Conv", inputs, kernel_shape=[k, k], strides=[stride, stride], pads=list(p), group=groups)
        if bn:
            y = self.batchnorm(y, cout)
        return self.activation(y, act)

    def batchnorm(self, x, c):
        r = self.rng
        params = [r.uniform(0.6, 1.1, c), r.normal(0, 0.05, c), r.normal(0, 0.05, c), r.uniform(0.6, 1.4, c)]
        if self.opset >= 13:  # what torch does: fold it into the conv before export
            return self.fold_last_bn(x, [p.astype(np.float32) for p in params])
        return self.op("BatchNormalization", [x] + [self.const(p.astype(np.float32), "bn") for p in params], epsilon=1e-3)

    def fold_last_bn(self, y, params):
        gamma, beta, mean, var = params
        node = self.nodes[-1]
        assert node.op_type == "Conv" and node.output[0] == y
        scale = gamma / np.sqrt(var + 1e-3)
        w_init = next(i for i in self.inits if i.name == node.input[1])
        w = numpy_helper.to_array(w_init) * scale[:, None, None, None]
        w_init.CopyFrom(numpy_helper.from_array(w.astype(np.float32), w_init.name))
        node.input.append(self.const((beta - mean * scale).astype(np.float32), "b"))
        return y

    def activation(self, x, act):
        if act == "relu":
            return self.op("Relu", [x])
        if act == "relu6":
            if self.opset < 11:
                return self.op("Clip", [x], min=0.0, max=6.0)
            return self.op("Clip", [x, self.const(np.float32(0)), self.const(np.float32(6))])
        return x

    def same_pad(self, x, size, k, stride):
        """TF 'same' padding for a stride-2 conv as timm's exportable models do: a static Pad node."""
        out = -(-size // stride)
        total = max((out - 1) * stride + k - size, 0)
        lo, hi = total // 2, total - total // 2
        pads = [0, 0, lo, lo, 0, 0, hi, hi]
        if self.opset < 11:
            return self.op("Pad", [x], mode="constant", pads=pads, value=0.0), out
        return self.op("Pad", [x, self.const(np.array(pads, np.int64))], mode="constant"), out

    def upsample2(self, x, align_corners):
        scales = np.array([1, 1, 2, 2], np.float32)
        if self.opset < 11:
            return self.op("Upsample", [x, self.const(scales)], mode="linear")
        mode = "align_corners" if align_corners else "half_pixel"
        return self.op("Resize", [x, self.const(np.zeros(0, np.float32)), self.const(scales)],
                       mode="linear", coordinate_transformation_mode=mode)

    def upsample2_by_shape(self, x, size):
        """×2 with `sizes` computed from the tensor's shape, as torch exports `size=` arguments."""
        shape = self.op("Shape", [x])
        nc = self.op("Slice", [shape, self.const(np.array([0], np.int64)), self.const(np.array([2], np.int64))])
        sizes = self.op("Concat", [nc, self.const(np.array([2 * size, 2 * size], np.int64))], axis=0)
        empty = self.const(np.zeros(0, np.float32))
        return self.op("Resize", [x, empty, empty, sizes], mode="linear", coordinate_transformation_mode="align_corners")

    def block(self, x, kind, cin, cout, k, stride, expand, size):
        y = x
        if kind == "ir":
            y = self.conv(y, cin, cin * expand, 1, pad=(0, 0, 0, 0), bn=True, act="relu6")
        mid = cin * expand if kind == "ir" else cin
        pad = None
        if stride == 2:
            y, size = self.same_pad(y, size, k, stride)
            pad = (0, 0, 0, 0)
        y = self.conv(y, mid, mid, k, stride, groups=mid, pad=pad, bn=True, act="relu6")
        y = self.conv(y, mid, cout, 1, pad=(0, 0, 0, 0), bn=True, gain=0.5)
        if stride == 1 and cin == cout:
            y = self.op("Add", [y, x])
        return y, size

    def residual_unit(self, x, c):
        y = self.op("Relu", [x])
        y = self.conv(y, c, c, 3, act="relu", gain=0.5)
        y = self.conv(y, c, c, 3, gain=0.5)
        return self.op("Add", [y, x])

    def fusion(self, x, skip, c, out_c, size, by_shape=False):
        if skip is not None:
            x = self.op("Add", [x, self.residual_unit(skip, c)])
        x = self.residual_unit(x, c)
        x = self.upsample2_by_shape(x, size) if by_shape else self.upsample2(x, align_corners=True)
        return self.conv(x, c, out_c, 1, pad=(0, 0, 0, 0))


def build(opset, seed):
    b = Builder(opset, seed)
    x = "input"
    if opset < 11:  # MidasNet_preprocessing: x.sub_(mean).div_(std) inside the graph
        x = b.op("Sub", [x, b.const(MEAN.reshape(1, 3, 1, 1))])
        x = b.op("Div", [x, b.const(STD.reshape(1, 3, 1, 1))])
    x, size = b.same_pad(x, 256, 3, 2)
    x = b.conv(x, 3, 32, 3, 2, pad=(0, 0, 0, 0), bn=True, act="relu6")
    cin, taps = 32, [None] * 4
    for index, (kind, repeats, k, stride, expand, cout) in enumerate(STAGES):
        for r in range(repeats):
            x, size = b.block(x, kind, cin, cout, k, stride if r == 0 else 1, expand, size)
            cin = cout
        if index in TAPS:
            taps[TAPS[index]] = (x, cin)
    rn = [b.conv(t, c, o, 3, bias=False) for (t, c), o in zip(taps, (64, 128, 256, 512))]
    path = b.fusion(rn[3], None, 512, 256, 8)
    path = b.fusion(path, rn[2], 256, 128, 16)
    path = b.fusion(path, rn[1], 128, 64, 32, by_shape=opset >= 11)
    path = b.fusion(path, rn[0], 64, 64, 64)  # refinenet1 is not expanded
    y = b.conv(path, 64, 32, 3)
    y = b.upsample2(y, align_corners=False)
    y = b.conv(y, 32, 32, 3, act="relu")
    y = b.conv(y, 32, 1, 1, pad=(0, 0, 0, 0), act="relu")
    head = next(i for i in b.inits if i.name == b.nodes[-2].input[1])  # a trained head's output is mostly positive
    head.CopyFrom(numpy_helper.from_array(np.abs(numpy_helper.to_array(head)), head.name))
    if opset < 13:
        b.nodes.append(helper.make_node("Squeeze", [y], ["depth"], name="squeeze", axes=[1]))
    else:
        b.nodes.append(helper.make_node("Squeeze", [y, b.const(np.array([1], np.int64))], ["depth"], name="squeeze"))
    graph = helper.make_graph(b.nodes, f"midas_small_replica_opset{opset}",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 256, 256])],
                              [helper.make_tensor_value_info("depth", TensorProto.FLOAT, [1, 256, 256])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="granite-replica")
    model.ir_version = 7
    onnx.checker.check_model(model)
    return model


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    image = scene(256, 256, 21)
    for opset in (9, 13):
        name = f"midas-small-replica-opset{opset}"
        # In a folder of their own: a sibling NAME.json would be read as the model's description.
        os.makedirs(os.path.join(out_dir, "models"), exist_ok=True)
        path = os.path.join(out_dir, "models", f"{name}.onnx")
        onnx.save(build(opset, seed=opset), path)
        # What DepthEstimator feeds: pixels / 255, normalised by us unless the graph does it.
        x = image if opset < 11 else (image - MEAN) / STD
        case(out_dir, name, path, {"input": x.transpose(2, 0, 1)[None].astype(np.float32)})


if __name__ == "__main__":
    main()
