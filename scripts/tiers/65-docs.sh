#!/usr/bin/env bash
# The documentation tier:
#  1. The dependencies resolved are at the versions the project tested (scripts/check-versions:
#     Package.versions; Package.swift pins the direct ones exactly).
#  2. Every ```sh block of README.md and Documentation/*.md runs (scripts/docs/run_examples.py), with
#     the debug build's granite and granite-cam (built by ./scripts/test) in a scratch folder that
#     holds a few small photos in photos/; commands that need a camera, root, a window, a cluster or
#     a remote account are checked against the programs' --help through the runner's allow-list.
#     All of it in a private PipeWire session (scripts/with-pipewire), where Documentation/PipeWire.md's
#     recipes publish and read their nodes.
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"
started=$SECONDS

# 1. The dependency versions: what this checkout resolved is what was tested (Package.versions),
#    and Package.swift pins every direct dependency exactly there.
scripts/check-versions || { echo "docs tier: dependency versions differ from Package.versions (see above)" >&2; exit 1; }

# 2. The documentation's commands
bin="$(swift build --show-bin-path)"
for program in granite granite-cam; do
  [ -x "$bin/$program" ] || { echo "docs tier: $bin/$program not built; run swift build --build-tests first" >&2; exit 1; }
done
sandbox="$(mktemp -d)"
trap 'rm -rf "$sandbox"' EXIT
mkdir -p "$sandbox/photos/set1" "$sandbox/home"
convert=/usr/bin/convert; [ -x $convert ] || convert=convert
wallpapers=(/usr/share/wallpapers/*.jpg /usr/share/backgrounds/*.jpg)
n=0
for photo in "${wallpapers[@]}"; do
  [ -f "$photo" ] || continue
  n=$((n + 1))
  "$convert" "$photo" -resize 480x320 "$sandbox/photos/set1/photo-$n.jpg"
  [ $n -lt 3 ] || break
done
[ $n -gt 0 ] || "$convert" -size 480x320 -seed 7 plasma:fractal "$sandbox/photos/set1/photo-1.jpg"
"$convert" rose: -resize 400% "$sandbox/photos/set1/rose.png"
cp "$sandbox/photos/set1/photo-1.jpg" "$sandbox/photos/photo.jpg"
# The folders the converting examples name: a camera roll, scans, animated GIFs, logos with alpha.
mkdir -p "$sandbox/home/Pictures" "$sandbox/home/DCIM" "$sandbox/scans" "$sandbox/memes" "$sandbox/logos"
cp "$sandbox"/photos/set1/* "$sandbox/home/Pictures/"
cp "$sandbox"/photos/set1/* "$sandbox/home/DCIM/"
cp "$sandbox/photos/photo.jpg" "$sandbox/scans/scan-1.jpg"
"$convert" -size 64x48 -delay 10 xc:red xc:green xc:blue -loop 0 "$sandbox/memes/spin.gif"
"$convert" -size 96x64 xc:none -fill '#2060c0' -draw 'circle 48,32 48,4' "$sandbox/logos/logo.png"
# Documentation/PipeWire.md's recipes publish and read nodes: every block runs in a private PipeWire
# session (scripts/with-pipewire), with GStreamer's producers and consumers.
ensure_apt "${GRANITE_PIPEWIRE_PACKAGES[@]}" || { echo "docs tier: could not install PipeWire and GStreamer" >&2; exit 1; }
status=0
HOME="$sandbox/home" XDG_DATA_HOME="$sandbox/home/.local/share" XDG_CACHE_HOME="$sandbox/home/.cache" \
  "$ROOT/scripts/with-pipewire" python3 "$ROOT/scripts/docs/run_examples.py" "$ROOT" "$sandbox" "$bin" || status=$?
echo "docs tier: $((SECONDS - started)) s"
exit $status
