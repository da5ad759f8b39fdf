#!/usr/bin/env bash
# GraniteML (issue 5): ONNX Runtime reference outputs for the model tests, generated before
# `swift test` into .build-ml-fixtures (git-ignored). Models: FastDepth from Models/ (in the
# repository); the test-only PP-OCR det/cls from the PyPI package rapidocr-onnxruntime 1.4.4
# (--no-deps: only its files are used), copied into .build-ml-fixtures/models with their
# SHA-256 checked (scripts/ml/test-models.json). FastDepth also sees a real photograph (Debian's
# lomiri-wallpapers-16.04, squeezed to 224×224 by ImageMagick) besides the synthetic scene.
. "$(dirname "$0")/../lib.sh"
ensure_apt libonnx-testdata imagemagick lomiri-wallpapers-16.04
ensure_venv onnxruntime==1.23.2 numpy==2.2.6 onnx==1.19.1
ensure_venv --no-deps rapidocr-onnxruntime==1.4.4
fixtures="$ROOT/.build-ml-fixtures"
"$ROOT/.venv/bin/python" "$ROOT/scripts/ml/test_models.py" "$fixtures/models"
"$ROOT/.venv/bin/python" "$ROOT/scripts/ml/make_fixtures.py" --photo /usr/share/backgrounds/Bridge_by_Sander_Klootwijk.jpg \
  "$fixtures" "$ROOT/Models" "$fixtures/models"
# MiDaS v2.1 small's architecture with random weights, exported both ways (the trained file is not reachable here).
"$ROOT/.venv/bin/python" "$ROOT/scripts/ml/make_midas_replica.py" "$fixtures"
