#!/usr/bin/env bash
# The preview page in a real browser (issue 15): granite-cam runs the paced test pattern with
# --preview on a free loopback port, --depth and --out (saving nothing), and headless Chromium
# (Debian's `chromium`), driven over its DevTools pipe by scripts/preview/browser_check.py, loads
# the page and checks: no CSP violation or script error, a screenshot of the live picture is not
# blank, the status text changes, a chain typed into the box turns the picture gray and is named
# in the status, a bad chain shows its error and keeps the old one, the snapshot button writes a
# frame, the depth picture is shown; with --segments, the page's live-playlist box plays
# /live/live.m3u8 where the browser plays HLS natively (Chromium 156 does: it must really play) and
# otherwise says it does not (the page reloaded with canPlayType answering ""). About 30 s. Skips (77) without chromium unless CI=true.
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"
cannot_run() {
  if [ "${CI:-}" = "true" ]; then echo "preview-browser tier: FAIL: $1" >&2; exit 1; fi
  echo "preview-browser tier: SKIPPED: $1"; exit 77
}
ensure_apt chromium || cannot_run "could not install Debian's chromium"
command -v chromium >/dev/null || cannot_run "chromium is missing"
swift build --product granite-cam >/dev/null || { echo "preview-browser tier: FAIL: build of granite-cam failed" >&2; exit 1; }
cam="$(swift build --show-bin-path)/granite-cam"
model="$ROOT/Models/fastdepth-224-int8.onnx"
[ -f "$model" ] || { echo "preview-browser tier: FAIL: $model missing" >&2; exit 1; }
work="$(mktemp -d)"
cam_pid=""
cleanup() {
  if [ -n "$cam_pid" ]; then kill "$cam_pid" 2>/dev/null || true; wait "$cam_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
# A free port: bind 0, read it back (granite-cam prints the port it got too; this keeps the URL known).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$cam" --source testpattern --size 320x240 --fps 15 --duration 90 --preview "$port" \
  --depth --depth-model "$model" --depth-every 3 --out "$work/out" --save none --image-format ppm --status-hz 4 \
  --segments "$work/out/live" --segment-seconds 1 \
  >"$work/cam.log" 2>&1 &
cam_pid=$!
for _ in $(seq 1 100); do
  grep -q "preview at http://127.0.0.1:$port/" "$work/cam.log" 2>/dev/null && break
  kill -0 "$cam_pid" 2>/dev/null || { cat "$work/cam.log"; echo "preview-browser tier: FAIL: granite-cam exited" >&2; exit 1; }
  sleep 0.1
done
started=$SECONDS
status=0
timeout 60 python3 "$ROOT/scripts/preview/browser_check.py" "$(command -v chromium)" "http://127.0.0.1:$port/" "$work/out" --depth --live \
  || status=$?
echo "preview-browser: browser checks took $((SECONDS - started)) s"
if [ "$status" -ne 0 ]; then
  tail -5 "$work/cam.log"
  echo "preview-browser tier: FAILED"
  exit 1
fi
echo "preview-browser tier: passed"
