#!/usr/bin/env bash
# Tier: the event-core sample runs end to end (a relay broadcasting to three components) and
# checks its own counts; exits non-zero if any display missed a tick or rendered too often.
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"
swift build --product granite-sample >/dev/null
out=$("$ROOT/.build/debug/granite-sample" --ticks 5000 --every 1000)
echo "$out" | tail -5
n=$(echo "$out" | grep -c " ok$" || true)
if [ "$n" -ne 3 ]; then echo "sample tier: FAILED ($n of 3 displays ok)"; exit 1; fi
echo "sample tier: 1 passed, 0 failed"
