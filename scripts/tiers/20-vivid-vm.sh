#!/usr/bin/env bash
# Tier: GraniteCapture against the kernel's real vivid V4L2 driver, under qemu (see scripts/vivid-vm).
# Checks (granite-v4l2-check): describe, negotiation read-back with an adjusted size, unsupported
# format, missing and busy devices, 60+ YUYV frames at the rate set, NV12 and RGB24 streams, and a
# USB-style disconnect mid-stream (vivid's Disconnect control) recovered by reopening after a reload;
# then granite-cam itself captures 30 YUYV frames from vivid to disk.
# With CI=true it fails when it cannot run; elsewhere it prints why it skipped.
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"
cannot_run() {
  if [ "${CI:-}" = "true" ]; then echo "vivid-vm tier: FAIL: $1" >&2; exit 1; fi
  echo "vivid-vm tier: SKIPPED: $1"; exit 77
}
ensure_apt "${GRANITE_APT_VM_PACKAGES[@]}" || cannot_run "could not install ${GRANITE_APT_VM_PACKAGES[*]}"
command -v qemu-system-x86_64 >/dev/null || cannot_run "qemu-system-x86_64 is missing"
for product in granite-v4l2-check granite-cam; do
  swift build --product "$product" >/dev/null || { echo "vivid-vm tier: FAIL: build of $product failed" >&2; exit 1; }
done
BIN="$(swift build --show-bin-path)"
GUEST='granite-v4l2-check /dev/video0 --fps 30 --frames 60 --replug /bin/vivid-reload || exit 1
granite-cam --device /dev/video0 --format yuyv --size 320x180 --fps 30 --frames 30 --out /tmp/cam --image-format ppm --status-hz 1 || exit 2
n=$(ls /tmp/cam | grep -c "^frame_.*[.]ppm$"); lines=$(wc -l < /tmp/cam/frames.jsonl)
echo "granite-cam on vivid: $n frames written, $lines sidecar lines"
[ "$n" -eq 30 ] && [ "$lines" -eq 30 ] || exit 3'
set +e
"$ROOT/scripts/vivid-vm" --timeout 170 --mem 1G --pack "$BIN/granite-v4l2-check" --pack "$BIN/granite-cam" -- /bin/sh -c "$GUEST"
status=$?
set -e
case $status in
  0) echo "vivid-vm tier: passed" ;;
  97) cannot_run "no kernel with the vivid module (linux-image-amd64)" ;;
  98) echo "vivid-vm tier: FAIL: the guest never reported (see .build/vivid-vm/serial.log)" >&2; exit 1 ;;
  1) echo "vivid-vm tier: FAIL: granite-v4l2-check failed" >&2; exit 1 ;;
  *) echo "vivid-vm tier: FAIL: granite-cam on vivid failed (status $status)" >&2; exit 1 ;;
esac
