#!/usr/bin/env bash
# Person segmentation (issue 38): `granite segment` end to end with the shipped MediaPipe selfie
# model on real photographs: a photo with a person (scikit-image's astronaut, taken out of Debian's
# python3-skimage by pre-ml.sh) gets an 8-bit gray mask at its size with the person (the centre)
# white and a corner black; a photo without people (a lomiri wallpaper) a mask with almost no
# person; a corrupt input exit 2 with nothing under its name; a missing input exit 66; a depth
# model exit 1; --segment-device gpu writes the CPU runtime's mask (where a device is).
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"
granite="$(swift build --show-bin-path)/granite"
[ -x "$granite" ] || { echo "ml-segment-cli: $granite not built" >&2; exit 1; }
person="$ROOT/.build-ml-fixtures/photos/astronaut.png"
empty=/usr/share/backgrounds/Bridge_by_Sander_Klootwijk.jpg
[ -f "$person" ] || { echo "ml-segment-cli: $person missing (scripts/tiers/pre-ml.sh makes it)" >&2; exit 1; }
[ -f "$empty" ] || { echo "ml-segment-cli: $empty missing (lomiri-wallpapers-16.04)" >&2; exit 1; }
im() { if [ -x "/usr/bin/$1" ]; then "/usr/bin/$1" "${@:2}"; else "$@"; fi; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
# The mean of a mask region in 0…255 (ImageMagick: -crop WxH+X+Y, then the mean).
mean() { im convert "$1" -crop "$2" +repage -format '%[fx:int(255*mean+0.5)]' info:; }

printf 'not an image' > "$work/broken.png"
rc=0; "$granite" segment "$person" "$empty" "$work/broken.png" -o "$work/out" --segment-device cpu >"$work/log" 2>&1 || rc=$?
check "exit 2 when one input is broken" "[ $rc -eq 2 ]"
check "the broken input is named on stderr" "grep -q 'broken.png' '$work/log'"
check "nothing written for the broken input" "[ ! -e '$work/out/broken.mask.png' ]"
check "mask is 8-bit gray at the photo's size" "[ \"\$(im identify -format '%w %h %z %[channels]' '$work/out/astronaut.mask.png')\" = '512 512 8 gray' ]"
check "the astronaut is white (mean > 200 over her face)" "[ \"\$(mean '$work/out/astronaut.mask.png' 80x80+200+60)\" -gt 200 ]"
check "the background corner is black (mean < 20)" "[ \"\$(mean '$work/out/astronaut.mask.png' 60x60+440+10)\" -lt 20 ]"
check "a landscape without people is almost all background (mean < 10)" "[ \"\$(mean '$work/out/Bridge_by_Sander_Klootwijk.mask.png' 100%x100%+0+0)\" -lt 10 ]"
rc=0; "$granite" segment "$person" -o "$work/model" --mask-size model --segment-device cpu >/dev/null 2>&1 || rc=$?
check "--mask-size model keeps the model's 256x256" "[ $rc -eq 0 ] && [ \"\$(im identify -format '%w %h' '$work/model/astronaut.mask.png')\" = '256 256' ]"
rc=0; "$granite" segment "$work/nope.png" -o "$work/o2" >/dev/null 2>&1 || rc=$?
check "exit 66 for a missing input" "[ $rc -eq 66 ]"
rc=0; "$granite" segment "$person" -o "$work/o3" --model "$ROOT/Models/fastdepth-224-int8.onnx" >"$work/depth.log" 2>&1 || rc=$?
check "exit 1 for a depth model, saying why" "[ $rc -eq 1 ] && grep -q 'not a person probability' '$work/depth.log'"
rc=0; "$granite" segment "$person" -o "$work/o4" --segment-device tpu >/dev/null 2>&1 || rc=$?
check "exit 64 for a bad --segment-device" "[ $rc -eq 64 ]"
if "$granite" filters --device >/dev/null 2>&1; then
  rc=0; "$granite" segment "$person" -o "$work/gpu" --segment-device gpu >"$work/gpu.log" 2>&1 || rc=$?
  check "--segment-device gpu runs on Vulkan" "[ $rc -eq 0 ] && grep -q '^segmentation runs on the GPU (.*, Vulkan)' '$work/gpu.log'"
  check "the GPU's mask is the CPU runtime's (every sample within 1)" "python3 - '$work/gpu/astronaut.mask.png' '$work/out/astronaut.mask.png' <<'PY'
import subprocess, sys
def px(p): return subprocess.run(['/usr/bin/convert', p, '-depth', '8', 'gray:-'], capture_output=True).stdout
a, b = px(sys.argv[1]), px(sys.argv[2])
worst = max((abs(x - y) for x, y in zip(a, b)), default=255)
print(f'   largest difference {worst} of 255')
sys.exit(0 if len(a) == len(b) > 0 and worst <= 1 else 1)
PY"
else
  echo "skip --segment-device gpu: no Vulkan device (the GPU tier covers the backend)"
fi
echo "ml-segment-cli: $([ $fail -eq 0 ] && echo passed || echo failed)"
exit $fail
