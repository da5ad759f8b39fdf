#!/usr/bin/env bash
# GraniteML (issue 5): `granite depth` end to end on a rendered PNG with the real FastDepth model:
# outputs written (16-bit depth PNG, 8-bit indexed preview), a corrupt input reported with exit 2 and no
# output under its name, a missing input exit 66, a missing model exit 1.
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"
granite="$(swift build --show-bin-path)/granite"
[ -x "$granite" ] || { echo "ml-depth-cli: $granite not built" >&2; exit 1; }
model="$ROOT/Models/fastdepth-224-int8.onnx"
[ -f "$model" ] || { echo "ml-depth-cli: $model missing" >&2; exit 1; }
# ImageMagick from Debian (a `convert` earlier on PATH may be something else).
im() { if [ -x "/usr/bin/$1" ]; then "/usr/bin/$1" "${@:2}"; else "$@"; fi; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

# A room: pale back wall, brown floor, a red box in front (RGB PPM, converted by ImageMagick).
python3 - "$work/room.ppm" <<'PY'
import sys
w, h, hz = 160, 120, 54
px = bytearray()
for y in range(h):
    for x in range(w):
        c = (200, 196, 186) if y < hz else (110 + 70 * (y - hz) / (h - hz), 80, 50)
        if 48 <= x < 112 and 60 <= y < 114:
            c = (150, 60, 50)
        px += bytes(int(v) for v in c)
open(sys.argv[1], "wb").write(b"P6 %d %d 255\n" % (w, h) + px)
PY
im convert "$work/room.ppm" "$work/room.png"
printf 'not an image' > "$work/broken.png"

rc=0; "$granite" depth "$work/room.png" "$work/broken.png" -o "$work/out" --model "$model" --jobs 2 >"$work/log" 2>&1 || rc=$?
check "exit 2 when one input is corrupt" "[ $rc -eq 2 ]"
check "depth PNG is 16-bit gray at the input size" "[ \"\$(im identify -format '%w %h %z %[channels]' "$work/out/room.depth.png")\" = '160 120 16 gray' ]"
check "preview is an 8-bit indexed PNG (color type 3) at the input size" "[ \"\$(od -An -tu1 -j24 -N2 '$work/out/room.preview.png' | tr -s ' ')\" = ' 8 3' ] && [ \"\$(im identify -format '%w %h' "$work/out/room.preview.png")\" = '160 120' ]"
check "no output for the corrupt input" "! ls '$work/out' | grep -q broken"
check "the corrupt input is named on stderr" "grep -q 'broken.png' '$work/log'"
rc=0; "$granite" depth "$work/room.png" -o "$work/model" --model "$model" --depth-size model >/dev/null 2>&1 || rc=$?
check "--depth-size model keeps the model's 224x224" "[ $rc -eq 0 ] && [ \"\$(im identify -format '%w %h' "$work/model/room.depth.png")\" = '224 224' ]"
rc=0; "$granite" depth "$work/room.png" -o "$work/bad" --model "$model" --depth-size huge >/dev/null 2>&1 || rc=$?
check "exit 64 for a bad --depth-size" "[ $rc -eq 64 ]"
rc=0; "$granite" depth "$work/nope.png" -o "$work/out2" --model "$model" >/dev/null 2>&1 || rc=$?
check "exit 66 for a missing input" "[ $rc -eq 66 ]"
rc=0; "$granite" depth "$work/room.png" -o "$work/out3" --model "$work/none.onnx" >/dev/null 2>&1 || rc=$?
check "exit 1 for a missing model" "[ $rc -eq 1 ]"
echo "ml-depth-cli: $([ $fail -eq 0 ] && echo passed || echo failed)"
exit $fail
