#!/usr/bin/env bash
# Issue 16: Pillow and ONNX Runtime references for the resampler and depth-on-photos tests (and
# the independent codecs of the format tests: pillow-jxl-plugin for JPEG XL, pillow-heif for HEIC
# (its own libheif, libde265 and x265 builds), Pillow 12's own AVIF plugin), made
# before `swift test` into .build-media-fixtures (git-ignored), from real photographs in Debian's
# lomiri-wallpapers-16.04/20.04 (27 MB; /usr/share/backgrounds). About 15 s.
. "$(dirname "$0")/../lib.sh"
ensure_apt lomiri-wallpapers-16.04 lomiri-wallpapers-20.04
ensure_venv onnxruntime==1.23.2 numpy==2.2.6 pillow==12.0.0 pillow-jxl-plugin==1.3.8 pillow-heif==1.8.1
b=/usr/share/backgrounds
"$ROOT/.venv/bin/python" "$ROOT/scripts/media/make_fixtures.py" "$ROOT/.build-media-fixtures" "$ROOT/Models" \
  "$b/picosdeeuropa_by_Aitzol_Berasategi.jpg" "$b/sunset_by_Aitzol_Berasategi.jpg" "$b/Dragonfly_by_Bolly.jpg" \
  "$b/Wine_by_Jakkub_Mede.jpg" "$b/Bridge_by_Sander_Klootwijk.jpg"
