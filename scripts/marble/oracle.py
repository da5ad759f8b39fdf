#!/usr/bin/env python3
"""Marble's filters as OpenCV computes them: the independent reference for MarbleOracleTests.

Usage: oracle.py FILTER WIDTH HEIGHT IN.rgba OUT.rgba [KEY=VALUE...]

Reads raw 8-bit RGBA, writes raw 8-bit RGBA. Built from the filters' definitions (what each one is
meant to compute), with OpenCV's own colour conversion, Sobel and Gaussian kernels, never from
Marble's code:
  sobel   scale=S              grey = |∇ luma| · S (3×3 Sobel, edges replicated), alpha kept
  sharpen amount=A sigma=S     unsharp mask: o + A · (o − GaussianBlur(o, σ = S, radius ⌈3σ⌉)), alpha kept
  ink     threshold=T levels=N ink colour (28, 22, 40) where |∇ luma| > T · 1020, elsewhere each
                               channel posterised to N levels and mixed 3:1 with paper (246, 238, 220)
"""
import math
import sys

import cv2
import numpy as np

INK = (28, 22, 40)
PAPER = (246, 238, 220)


def gradient(rgba):
    grey = cv2.cvtColor(np.ascontiguousarray(rgba[:, :, :3]), cv2.COLOR_RGB2GRAY)
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3, borderType=cv2.BORDER_REPLICATE)
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3, borderType=cv2.BORDER_REPLICATE)
    return np.sqrt(gx * gx + gy * gy)


def sobel(rgba, scale=1.0):
    out = rgba.copy()
    m = np.clip(np.rint(gradient(rgba) * scale), 0, 255).astype(np.uint8)
    out[:, :, 0] = out[:, :, 1] = out[:, :, 2] = m
    return out


def sharpen(rgba, amount=1.0, sigma=1.0):
    radius = max(1, math.ceil(3 * sigma))
    rgb = rgba[:, :, :3].astype(np.float32)
    blurred = cv2.GaussianBlur(rgb, (2 * radius + 1, 2 * radius + 1), sigma, sigma, borderType=cv2.BORDER_REPLICATE)
    out = rgba.copy()
    out[:, :, :3] = np.clip(np.rint(rgb + amount * (rgb - blurred)), 0, 255).astype(np.uint8)
    return out


def ink(rgba, threshold=0.2, levels=4):
    edge = gradient(rgba) > threshold * 1020
    out = rgba.copy()
    for c in range(3):
        channel = rgba[:, :, c].astype(np.int32)
        level = channel * levels // 256                      # which of the N bands
        value = level * 255 // (levels - 1)                   # that band's value
        out[:, :, c] = np.where(edge, INK[c], (value * 3 + PAPER[c]) // 4).astype(np.uint8)
    return out


def main():
    name, width, height, source, target = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    params = {}
    for item in sys.argv[6:]:
        key, value = item.split("=", 1)
        params[key] = int(value) if key == "levels" else float(value)
    rgba = np.fromfile(source, dtype=np.uint8).reshape(height, width, 4)
    result = {"sobel": sobel, "sharpen": sharpen, "ink": ink}[name](rgba, **params)
    np.ascontiguousarray(result, dtype=np.uint8).tofile(target)


if __name__ == "__main__":
    main()
