#!/usr/bin/env python3
"""Marble's filters as OpenCV and numpy compute them: the independent reference for MarbleOracleTests.

Usage: oracle.py FILTER WIDTH HEIGHT IN.rgba OUT.rgba [KEY=VALUE...]

Reads raw 8-bit RGBA, writes raw 8-bit RGBA. Built from the filters' definitions (what each one is
meant to compute), with OpenCV's own colour conversion, Sobel and Gaussian kernels, never from
Marble's code:
  sobel   scale=S              grey = |∇ luma| · S (3×3 Sobel, edges replicated), alpha kept
  gaussian sigma=S             the colour channels blurred by GaussianBlur(σ = S, radius ⌈3σ⌉, edges
                               replicated) in floats, alpha kept
  sharpen amount=A sigma=S     unsharp mask: o + A · (o − GaussianBlur(o, σ = S, radius ⌈3σ⌉)), alpha kept
  ink     threshold=T levels=N ink colour (28, 22, 40) where |∇ luma| > T · 1020, elsewhere each
                               channel posterised to N levels and mixed 3:1 with paper (246, 238, 220)
  godray  x= y= decay= weight= exposure= density= wobble= time=
                               light shafts, in floating point with numpy from the definition in
                               Marble's GodRay documentation (see godray below)
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


def gaussian(rgba, sigma=2.0):
    radius = max(1, math.ceil(3 * sigma))
    rgb = rgba[:, :, :3].astype(np.float32)
    out = rgba.copy()
    blurred = cv2.GaussianBlur(rgb, (2 * radius + 1, 2 * radius + 1), sigma, sigma, borderType=cv2.BORDER_REPLICATE)
    out[:, :, :3] = np.clip(np.rint(blurred), 0, 255).astype(np.uint8)
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


def godray(rgba, x=0.5, y=0.25, decay=0.95, weight=0.6, exposure=1.0, density=0.6, wobble=0.03, time=0.0):
    """Light shafts: a half-resolution light map (colour times luma squared), marched towards the
    light with decaying weights, added to the image. Floating point throughout: Marble's
    fixed-point positions are its own business, the definition is the continuous one."""
    samples = 24
    height, width = rgba.shape[:2]
    half_w, half_h = (width + 1) // 2, (height + 1) // 2
    # The light, in half-resolution pixels.
    light_x = (x + wobble * math.sin(time)) * width / 2
    light_y = (y + wobble * math.cos(0.7 * time)) * height / 2
    rows = np.minimum(2 * np.arange(half_h), height - 1)
    cols = np.minimum(2 * np.arange(half_w), width - 1)
    colour = rgba[rows][:, cols, :3].astype(np.float64)
    luma = (0.299 * colour[:, :, 0] + 0.587 * colour[:, :, 1] + 0.114 * colour[:, :, 2]) / 255
    light = np.floor(colour * (luma * luma)[:, :, None] + 0.5)
    ty, tx = np.mgrid[0:half_h, 0:half_w].astype(np.float64)
    step_x = (tx - light_x) * density / samples
    step_y = (ty - light_y) * density / samples
    total = np.zeros_like(light)
    for k in range(1, samples + 1):
        sx = np.clip(np.floor(tx - k * step_x), 0, half_w - 1).astype(np.int64)
        sy = np.clip(np.floor(ty - k * step_y), 0, half_h - 1).astype(np.int64)
        total += light[sy, sx] * (weight * decay ** (k - 1))
    rays = np.clip(np.floor(total * exposure / samples + 0.5), 0, 255)
    full = rays[np.arange(height) // 2][:, np.arange(width) // 2]
    out = rgba.copy()
    out[:, :, :3] = np.minimum(rgba[:, :, :3].astype(np.float64) + full, 255).astype(np.uint8)
    return out


def main():
    name, width, height, source, target = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    params = {}
    for item in sys.argv[6:]:
        key, value = item.split("=", 1)
        params[key] = int(value) if key == "levels" else float(value)
    rgba = np.fromfile(source, dtype=np.uint8).reshape(height, width, 4)
    result = {"sobel": sobel, "gaussian": gaussian, "sharpen": sharpen, "ink": ink, "godray": godray}[name](rgba, **params)
    np.ascontiguousarray(result, dtype=np.uint8).tofile(target)


if __name__ == "__main__":
    main()
