#!/usr/bin/env bash
# GraniteML (issue 5): `granite depth` end to end on a rendered PNG with the real FastDepth model:
# outputs written (16-bit depth PNG, 8-bit indexed preview), a corrupt input reported with exit 2 and no
# output under its name, a missing input exit 66, a missing model exit 1; --depth-device: gpu runs the
# Vulkan backend (where a device is) and writes the map the CPU runtime writes, auto says where it ran,
# a bad value exits 64; GRANITE_ML_ISA at every level this CPU has writes the same bytes.
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
check "no output for the corrupt input" "! ls '$work/out' | grep broken >/dev/null"
check "the corrupt input is named on stderr" "grep -q 'broken.png' '$work/log'"
rc=0; "$granite" depth "$work/room.png" -o "$work/model" --model "$model" --depth-size model >/dev/null 2>&1 || rc=$?
check "--depth-size model keeps the model's 224x224" "[ $rc -eq 0 ] && [ \"\$(im identify -format '%w %h' "$work/model/room.depth.png")\" = '224 224' ]"
rc=0; "$granite" depth "$work/room.png" -o "$work/bad" --model "$model" --depth-size huge >/dev/null 2>&1 || rc=$?
check "exit 64 for a bad --depth-size" "[ $rc -eq 64 ]"
rc=0; "$granite" depth "$work/nope.png" -o "$work/out2" --model "$model" >/dev/null 2>&1 || rc=$?
check "exit 66 for a missing input" "[ $rc -eq 66 ]"
rc=0; "$granite" depth "$work/room.png" -o "$work/out3" --model "$work/none.onnx" >/dev/null 2>&1 || rc=$?
check "exit 1 for a missing model" "[ $rc -eq 1 ]"
# One answer on every CPU (issue 37): GRANITE_ML_ISA forces each level this CPU has; the 224x224
# maps (the model's own output, 16-bit) are byte-identical.
levels="portable"
grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && levels="$levels avx2"
grep -qw avx512_vnni /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo && levels="$levels avx512vnni"
for isa in $levels; do
  rc=0; GRANITE_ML_ISA=$isa "$granite" depth "$work/room.png" -o "$work/isa-$isa" --model "$model" --depth-size model \
    --depth-device cpu >/dev/null 2>&1 || rc=$?
  check "GRANITE_ML_ISA=$isa writes the map" "[ $rc -eq 0 ] && [ -s '$work/isa-$isa/room.depth.png' ]"
  check "GRANITE_ML_ISA=$isa: the same bytes as portable C" "cmp -s '$work/isa-portable/room.depth.png' '$work/isa-$isa/room.depth.png'"
done
rc=0; "$granite" depth "$work/room.png" -o "$work/cpu" --model "$model" --depth-device cpu >/dev/null 2>&1 || rc=$?
check "--depth-device cpu" "[ $rc -eq 0 ]"
rc=0; "$granite" depth "$work/room.png" -o "$work/auto" --model "$model" --depth-device auto >"$work/auto.log" 2>&1 || rc=$?
check "--depth-device auto says where the model ran" "[ $rc -eq 0 ] && grep -q '^depth runs on the \(CPU\|GPU\)' '$work/auto.log'"
if "$granite" filters --device >/dev/null 2>&1; then
  rc=0; "$granite" depth "$work/room.png" -o "$work/gpu" --model "$model" --depth-device gpu >"$work/gpu.log" 2>&1 || rc=$?
  check "--depth-device gpu runs on Vulkan" "[ $rc -eq 0 ] && grep -q '^depth runs on the GPU (.*, Vulkan)' '$work/gpu.log'"
  # The same 16-bit map within one FastDepth level (a float convolution may round one tie the other way).
  check "the GPU's depth map is the CPU runtime's" "python3 - '$work/gpu/room.depth.png' '$work/cpu/room.depth.png' <<'PY'
import subprocess, sys
def px(p): return [int(v, 16) for v in subprocess.run(['/usr/bin/convert', p, '-depth', '16', 'gray:-'], capture_output=True).stdout.hex(' ', 2).split()]
a, b = px(sys.argv[1]), px(sys.argv[2])
same = sum(x == y for x, y in zip(a, b)) / max(len(a), 1)
print(f'   {same * 100:.1f}% of samples equal')
sys.exit(0 if len(a) == len(b) > 0 and same >= 0.95 else 1)
PY"
else
  echo "skip --depth-device gpu: no Vulkan device (the GPU tier covers the backend)"
fi
rc=0; "$granite" depth "$work/room.png" -o "$work/bad-device" --model "$model" --depth-device tpu >/dev/null 2>&1 || rc=$?
check "exit 64 for a bad --depth-device" "[ $rc -eq 64 ]"
echo "ml-depth-cli: $([ $fail -eq 0 ] && echo passed || echo failed)"
exit $fail
