#!/usr/bin/env python3
"""ONNX Runtime CPU timing server for `granite-bench ml`.

usage: ort_bench.py MODEL INPUT_NAME SHAPE(1,3,640,640) DTYPE(float32|uint8) THREADS WARMUP

Loads the model, runs WARMUP untimed inferences, prints "ready", then for each line N read on
stdin runs N timed inferences and prints their times in ms as one JSON list. The benchmark
alternates rounds between GraniteML and this process, so both see the same machine load.
"""
import json
import sys
import time

import numpy as np
import onnxruntime as ort


def main():
    model, name, shape, dtype, threads, warmup = sys.argv[1:7]
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
    print(json.dumps({"ready": True, "version": ort.__version__}), flush=True)
    for line in sys.stdin:
        times = []
        for _ in range(int(line)):
            t = time.perf_counter()
            sess.run(None, {name: x})
            times.append((time.perf_counter() - t) * 1000)
        print(json.dumps(times), flush=True)


if __name__ == "__main__":
    main()
