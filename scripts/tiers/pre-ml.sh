#!/usr/bin/env bash
# GraniteML (issue 5): ONNX Runtime reference outputs for the model tests, generated before
# `swift test` into .build-ml-fixtures (git-ignored) from the real models in shared/models.
. "$(dirname "$0")/../lib.sh"
ensure_apt libonnx-testdata
ensure_venv onnxruntime==1.23.2 numpy==2.2.6 onnx==1.19.1
"$ROOT/.venv/bin/python" "$ROOT/scripts/ml/make_fixtures.py" "$SHARED/models" "$ROOT/.build-ml-fixtures"
# MiDaS v2.1 small's architecture with random weights, exported both ways (the trained file is not reachable here).
"$ROOT/.venv/bin/python" "$ROOT/scripts/ml/make_midas_replica.py" "$ROOT/.build-ml-fixtures"
