#!/usr/bin/env python3
"""The anchor of `granite-bench segment` (issue 38): background blur for a video call as Linux users
run it today (Linux-Fake-Background-Webcam, backscrub, obs-backgroundremoval's CPU path) — the same
MediaPipe selfie model on ONNX Runtime (CPU, every core), OpenCV's Gaussian blur, a float composite,
and the result converted to I420 and written out as a virtual camera takes it (to /dev/null).

Usage: segment_anchor.py --frame PPM --model ONNX [--fps 30] [--seconds 10] [--sigma 12] [--every 1]

Live like a camera: frame i is due at start + i/fps; when the work falls behind, the frames due
meanwhile are dropped and the newest is taken (latest wins, as granite-cam's live source does).
Latency is from the frame's due time to its I420 written. Prints one JSON line: frames, dropped,
latency_p50_ms, latency_p99_ms, setup_cpu_s (this process's CPU before the first frame: imports and
the session, which the caller subtracts from the child's total).
"""
import argparse
import json
import os
import time

import cv2
import numpy as np
import onnxruntime as ort


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frame", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--fps", type=float, default=30)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--sigma", type=float, default=12)
    ap.add_argument("--every", type=int, default=1)
    a = ap.parse_args()
    frame = cv2.imread(a.frame, cv2.IMREAD_COLOR)
    if frame is None:
        raise SystemExit(f"segment_anchor: cannot read {a.frame}")
    h, w = frame.shape[:2]
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    session = ort.InferenceSession(a.model, options, providers=["CPUExecutionProvider"])
    feed = session.get_inputs()[0]
    _, mh, mw, _ = feed.shape  # NHWC: 1x144x256x3 (landscape) or 1x256x256x3
    null = os.open("/dev/null", os.O_WRONLY)
    setup_cpu = time.process_time()

    start = time.perf_counter()
    total = int(a.seconds * a.fps)
    period = 1 / a.fps
    latencies, dropped, frames, index, mask = [], 0, 0, 0, None
    while index < total:
        due = start + index * period
        now = time.perf_counter()
        if now < due:
            time.sleep(due - now)
        camera = frame.copy()  # the camera's new frame
        if frames % a.every == 0 or mask is None:
            rgb = cv2.cvtColor(camera, cv2.COLOR_BGR2RGB)
            small = cv2.resize(rgb, (mw, mh), interpolation=cv2.INTER_AREA)
            x = (small.astype(np.float32) / 255.0)[None]
            m = session.run(None, {feed.name: x})[0].reshape(mh, mw)
            mask = cv2.resize(m, (w, h), interpolation=cv2.INTER_LINEAR)[..., None]
        blurred = cv2.GaussianBlur(camera, (0, 0), a.sigma)
        out = (camera.astype(np.float32) * mask + blurred.astype(np.float32) * (1 - mask)).astype(np.uint8)
        yuv = cv2.cvtColor(out, cv2.COLOR_BGR2YUV_I420)
        os.write(null, yuv.tobytes())
        done = time.perf_counter()
        latencies.append((done - due) * 1000)
        frames += 1
        # Latest wins: of the frames that came due while this one was made, the newest is taken
        # next and the others are dropped.
        latest = int((done - start) / period)
        if latest > index:
            dropped += min(latest, total) - index - 1
            index = latest
        else:
            index += 1
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]
    print(json.dumps({"frames": frames, "dropped": dropped, "latency_p50_ms": pick(0.5), "latency_p99_ms": pick(0.99),
                      "setup_cpu_s": setup_cpu}))


if __name__ == "__main__":
    main()
