#!/usr/bin/env bash
# OpenCV and numpy in .venv: the independent references MarbleOracleTests hold Marble's sobel,
# sharpen and ink (OpenCV) and godRay (numpy) to (scripts/marble/oracle.py). Idempotent: instant once done.
. "$(dirname "$0")/../lib.sh"
ensure_apt python3-venv
ensure_venv numpy==2.2.6 opencv-python-headless==5.0.0.93
