#!/usr/bin/env python3
"""ONNX Runtime CPU timing for `granite-bench ml`: median ms per inference after warm-up.

usage: ort_bench.py MODEL INPUT_NAME SHAPE(1,3,640,640) DTYPE(float32|uint8) THREADS RUNS WARMUP OUT_JSON
"""
import json
import statistics
import sys
import time

import numpy as np
import onnxruntime as ort


def main():
    model, name, shape, dtype, threads, runs, warmup, out = sys.argv[1:9]
    shape = [int(s) for s in shape.split(",")]
    rng = np.random.default_rng(5)
    if dtype == "uint8":
        x = rng.integers(0, 256, shape, dtype=np.uint8)
    else:
        x = rng.uniform(-1, 1, shape).astype(np.float32)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = int(threads)
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    for _ in range(int(warmup)):
        sess.run(None, {name: x})
    times = []
    for _ in range(int(runs)):
        t = time.perf_counter()
        sess.run(None, {name: x})
        times.append((time.perf_counter() - t) * 1000)
    with open(out, "w") as f:
        json.dump({"median_ms": statistics.median(times), "min_ms": min(times), "version": ort.__version__}, f)


if __name__ == "__main__":
    main()
