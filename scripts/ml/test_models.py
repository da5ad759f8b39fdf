#!/usr/bin/env python3
"""Copies the test-only models listed in test-models.json out of the installed PyPI package into
OUT_DIR, each checked by SHA-256 (a mismatch is an error, and nothing is copied for that file).

usage: test_models.py OUT_DIR
"""
import hashlib
import json
import os
import shutil
import sys
import sysconfig


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-models.json")) as f:
        models = json.load(f)["models"]
    site = sysconfig.get_paths()["purelib"]         # the package is --no-deps: read it, never import it
    for model in models:
        source, target = os.path.join(site, model["package_path"]), os.path.join(out, model["file"])
        if os.path.exists(target) and sha256(target) == model["sha256"]:
            continue
        if not os.path.exists(source):
            sys.exit("test_models: %s is missing: install rapidocr-onnxruntime==1.4.4 (scripts/tiers/pre-ml.sh)" % source)
        got = sha256(source)
        if got != model["sha256"]:
            sys.exit("test_models: %s has SHA-256 %s, expected %s: refusing to use it" % (source, got, model["sha256"]))
        shutil.copyfile(source, target + ".tmp")
        os.replace(target + ".tmp", target)
        print("test model %s <- %s (SHA-256 checked)" % (model["file"], model["package_path"]))


if __name__ == "__main__":
    main()
