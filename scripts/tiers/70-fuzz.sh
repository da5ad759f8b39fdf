#!/usr/bin/env bash
# Tier: libFuzzer on the parsers (Fuzzers/): image decoding (JPEG, PNG, Netpbm), Exif, the ONNX
# loader, Kubo RPC answers and V4L2 negotiation. Builds the fuzz package with the address
# sanitizer and libFuzzer (its own scratch path, .build-fuzz), runs every target for a bounded
# time from its committed seeds, and fails on any crash, leak, hang (timeout) or out-of-memory.
# New corpus entries and crash inputs go to a temporary folder, never into the checkout.
#
#   GRANITE_FUZZ_SECONDS   time per target (30: CI's share; longer runs find more, e.g. 600)
#   GRANITE_FUZZ_JOBS      targets run at once (2)
#   GRANITE_FUZZ_TARGETS   space-separated subset (all of Fuzzers/Sources/fuzz-*)
#   GRANITE_FUZZ_OUT       keep corpora, crash inputs and logs in this folder (a temporary one otherwise)
#
# Under CI=true it must run: a toolchain without libFuzzer is a failure, not a skip.
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"
seconds=${GRANITE_FUZZ_SECONDS:-30}
jobs=${GRANITE_FUZZ_JOBS:-2}
started=$(date +%s)

skip() {
  if [ "${CI:-}" = "true" ]; then echo "fuzz tier: FAILED ($1)"; exit 1; fi
  echo "fuzz tier: skipped ($1)"; exit 77
}
command -v swift >/dev/null || skip "no swift on PATH"
toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
ls "$toolchain"/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a "$toolchain"/lib/swift/clang/lib/linux/libclang_rt.fuzzer-*.a \
  >/dev/null 2>&1 || skip "this Swift toolchain ($toolchain) has no libFuzzer runtime (libclang_rt.fuzzer)"
ensure_apt pkg-config libturbojpeg0-dev libpng-dev libopenblas-dev libv4l-dev libheif-dev libtiff-dev libgif-dev libjxl-dev

echo "fuzz: building Fuzzers/ (address sanitizer + libFuzzer, .build-fuzz)"
build_log=$(mktemp)
if [ -n "${GRANITE_FUZZ_OUT:-}" ]; then
  work=$GRANITE_FUZZ_OUT
  mkdir -p "$work"
  trap 'rm -f "$build_log"' EXIT
else
  work=$(mktemp -d)
  trap 'rm -rf "$work" "$build_log"' EXIT
fi
if ! swift build --package-path Fuzzers --scratch-path "$ROOT/.build-fuzz" \
     -Xswiftc -sanitize=fuzzer,address >"$build_log" 2>&1; then
  tail -40 "$build_log"
  echo "fuzz tier: FAILED (the fuzz package does not build)"
  exit 1
fi
built=$(date +%s)
bin=$(swift build --package-path Fuzzers --scratch-path "$ROOT/.build-fuzz" --show-bin-path)
echo "fuzz: built in $((built - started)) s"

targets=${GRANITE_FUZZ_TARGETS:-$(cd Fuzzers/Sources && ls -d fuzz-* | sed 's/^fuzz-//')}

# run_target NAME: one bounded libFuzzer run; its log and exit status land in $work/NAME.*.
run_target() {
  local name=$1 corpus="$work/$1.corpus" dict=()
  mkdir -p "$corpus" "$work/$name.artifacts"
  [ -f "Fuzzers/Dictionaries/$name.dict" ] && dict=(-dict="Fuzzers/Dictionaries/$name.dict")
  set +e
  SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0:handle_abort=1 \
    "$bin/fuzz-$name" "$corpus" "Fuzzers/Seeds/$name" "${dict[@]}" \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
      -detect_leaks=1 -print_final_stats=1 -artifact_prefix="$work/$name.artifacts/" \
      >"$work/$name.log" 2>&1
  echo $? >"$work/$name.status"
  set -e
}

running=0
for name in $targets; do
  [ -x "$bin/fuzz-$name" ] || { echo "fuzz tier: FAILED (no binary for target $name)"; exit 1; }
  [ -d "Fuzzers/Seeds/$name" ] || { echo "fuzz tier: FAILED (no seed folder Fuzzers/Seeds/$name)"; exit 1; }
  run_target "$name" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
done
wait

passed=0
failed=0
printf '%-8s %12s %8s %8s %8s %10s  %s\n' target executions cov ft corpus peak_rss result
for name in $targets; do
  log="$work/$name.log"
  status=$(cat "$work/$name.status" 2>/dev/null || echo 1)
  execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo "?")
  rss=$(grep -Eo 'stat::peak_rss_mb: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo "?")
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
  cov=$(echo "$last" | grep -Eo 'cov: [0-9]+' | grep -Eo '[0-9]+' || echo "?")
  ft=$(echo "$last" | grep -Eo 'ft: [0-9]+' | grep -Eo '[0-9]+' || echo "?")
  corp=$(echo "$last" | grep -Eo 'corp: [0-9]+' | grep -Eo '[0-9]+' || echo "?")
  result=ok
  if [ "$status" -ne 0 ] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|SUMMARY: ' "$log"; then
    result="FAILED (exit $status)"
  fi
  printf '%-8s %12s %8s %8s %8s %9sM  %s\n' "$name" "$execs" "$cov" "$ft" "$corp" "$rss" "$result"
  if [ "$result" = ok ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "---- fuzz-$name: the end of its log"
    grep -vE '^#[0-9]+ +(NEW|REDUCE|pulse)' "$log" | tail -60
    for artifact in "$work/$name.artifacts"/*; do
      [ -f "$artifact" ] || continue
      echo "---- $(basename "$artifact") ($(stat -c %s "$artifact") bytes), base64 (reproduce: base64 -d > crash; $bin/fuzz-$name crash):"
      head -c 4096 "$artifact" | base64 -w 100
    done
  fi
done
echo "fuzz: ${seconds} s per target, $jobs at once; build $((built - started)) s, whole tier $(( $(date +%s) - started )) s"
echo "fuzz tier: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
