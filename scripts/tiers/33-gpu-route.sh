#!/usr/bin/env bash
# Tier (issue 37, item 5): granite-cam on lavapipe the way a discrete GPU runs it, against the host
# route lavapipe normally takes, byte for byte.
#   GPU route:  GRANITE_GPU_STAGING=1 (every upload and read-back through staging buffers and copies),
#               GRANITE_GPU_OVERLAP=1 (the next frame submitted while this one computes),
#               GRANITE_GPU_YUV=1 (YUV converted on the device and read straight into the consumer's
#               buffer, the read-back PipeWire and V4L2 outputs use), --depth-device gpu (FastDepth on
#               the device, its map handed to the chain's depth filter there);
#   host route: none of these (GRANITE_GPU_OVERLAP=0), --depth-device cpu.
# Compared: the frames and depth maps written with --out, and the YUV4MPEG2 pipe (--pipe y4m and
# y4m:444). The environment variable names are those of GraniteGPU.GPUContext (STAGING) and
# Marble.FilterChain (OVERLAP, YUV); they are read per run here, so a rename must follow here.
# Uses the debug granite-cam `swift test` built. About a minute on 2 cores (depth on lavapipe).
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"
lavapipe=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
cannot_run() {
  if [ "${CI:-}" = "true" ]; then echo "gpu-route tier: FAIL: $1" >&2; exit 1; fi
  echo "gpu-route tier: SKIPPED: $1"; exit 77
}
[ -e "$lavapipe" ] || cannot_run "no lavapipe ($lavapipe; apt-get install mesa-vulkan-drivers)"
swift build --product granite-cam >/dev/null || { echo "gpu-route tier: build of granite-cam failed" >&2; exit 1; }
cam="$(swift build --show-bin-path)/granite-cam"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

chain='blur:sigma=1 | sobel | depthmask'
common=(--source testpattern --size 320x240 --frames 6 --unpaced --no-live --filter "$chain" --depth)
host() { env -u GRANITE_GPU_STAGING -u GRANITE_GPU_YUV GRANITE_GPU_OVERLAP=0 VK_DRIVER_FILES="$lavapipe" "$cam" "${common[@]}" --depth-device cpu "$@"; }
device() { GRANITE_GPU_STAGING=1 GRANITE_GPU_OVERLAP=1 GRANITE_GPU_YUV=1 VK_DRIVER_FILES="$lavapipe" "$cam" "${common[@]}" --depth-device gpu "$@"; }

started=$SECONDS
for route in host device; do
  rc=0; $route --out "$work/$route" >"$work/$route.log" 2>&1 || rc=$?
  check "$route route: --out exits 0" "[ $rc -eq 0 ]"
  [ $rc -eq 0 ] || tail -5 "$work/$route.log"
  for pipe in y4m y4m:444; do
    rc=0; $route --pipe "$pipe" >"$work/$route.$pipe" 2>"$work/$route.$pipe.log" || rc=$?
    check "$route route: --pipe $pipe exits 0" "[ $rc -eq 0 ]"
    [ $rc -eq 0 ] || tail -5 "$work/$route.$pipe.log"
  done
done
# (granite-cam names the device only when one was asked for: --depth-device cpu prints nothing.)
check "the device route ran depth on the GPU, the host route not" "grep -q '^granite-cam: depth runs on the GPU' '$work/device.log' && ! grep -q '^granite-cam: depth runs on the GPU' '$work/host.log'"
frames=$(ls "$work/host" 2>/dev/null | grep -cE '^frame_[0-9]+\.png$' || true)
depths=$(ls "$work/host" 2>/dev/null | grep -cE '^depth-[0-9]+\.png$' || true)
check "the host route wrote 6 frames and depth maps ($frames, $depths)" "[ $frames -eq 6 ] && [ $depths -ge 1 ]"
same_files() {
  local f
  for f in $(ls "$work/host" | grep -E '\.png$'); do cmp -s "$work/host/$f" "$work/device/$f" || { echo "  differs: $f"; return 1; }; done
  [ "$(ls "$work/host" | grep -cE '\.png$')" -eq "$(ls "$work/device" | grep -cE '\.png$')" ]
}
check "frames and depth maps: the device route's equal the host route's, byte for byte" same_files
for pipe in y4m y4m:444; do
  size=$(stat -c %s "$work/host.$pipe" 2>/dev/null || echo 0)
  check "--pipe $pipe: the device route's stream equals the host route's ($size bytes)" "[ $size -gt 0 ] && cmp -s '$work/host.$pipe' '$work/device.$pipe'"
done
echo "gpu-route tier: $((SECONDS - started)) s; $([ $fail -eq 0 ] && echo passed || echo failed)"
exit $fail
