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
# Photographs with people for the segmentation model: scikit-image's astronaut.png (NASA, public
# domain) and camera.png, taken out of Debian's python3-skimage without installing it (its
# dependencies are large); without people: two lomiri wallpapers.
photos="$fixtures/photos"
if [ ! -s "$photos/astronaut.png" ] || [ ! -s "$photos/camera.png" ]; then
  mkdir -p "$photos/deb"
  (cd "$photos/deb" && apt-get -o APT::Sandbox::User=root download python3-skimage >/dev/null) || { apt-get update -qq && (cd "$photos/deb" && apt-get -o APT::Sandbox::User=root download python3-skimage >/dev/null); }
  dpkg-deb -x "$photos"/deb/python3-skimage_*.deb "$photos/deb/x"
  cp "$photos"/deb/x/usr/lib/python3/dist-packages/skimage/data/{astronaut,camera}.png "$photos/"
  rm -rf "$photos/deb"
fi
"$ROOT/.venv/bin/python" "$ROOT/scripts/ml/make_fixtures.py" --photo /usr/share/backgrounds/Bridge_by_Sander_Klootwijk.jpg \
  --segment "$photos/astronaut.png" --segment "$photos/camera.png" \
  --segment /usr/share/backgrounds/Bridge_by_Sander_Klootwijk.jpg --segment /usr/share/backgrounds/Kleiber_by_Lukas_Baubkus.jpg \
  "$fixtures" "$ROOT/Models" "$fixtures/models"
# MiDaS v2.1 small's architecture with random weights, exported both ways (the trained file is not reachable here).
"$ROOT/.venv/bin/python" "$ROOT/scripts/ml/make_midas_replica.py" "$fixtures"
