#!/usr/bin/env bash
# OpenCV in .venv: the independent reference MarbleOracleTests hold Marble's sobel, sharpen and ink
# to (scripts/marble/oracle.py). Idempotent: instant once done.
. "$(dirname "$0")/../lib.sh"
ensure_apt python3-venv
ensure_venv numpy==2.2.6 opencv-python-headless==5.0.0.93
