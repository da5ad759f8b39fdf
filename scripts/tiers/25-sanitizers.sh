#!/usr/bin/env bash
# Tier: the event core's tests under ThreadSanitizer and AddressSanitizer (issue 35). The core's
# unsafe constructs (nonisolated(unsafe), @exclusivity(unchecked), Unmanaged, one unowned(unsafe))
# each carry an invariant; these runs check the invariants hold where tests can reach them:
# lifetimes (nodes freed while hops and async reducers are in flight), ordering across threads,
# relay broadcasts, the test store. `GRANITE_PACKAGE=core` builds only the core and what its tests
# need (Package.swift), each sanitizer in its own scratch folder. The 20,000-mount soak is left to
# the plain run (it measures memory, which the sanitizers' shadow memory would swamp).
# SANITIZERS="thread address" (default) chooses which.
# GRANITE_SANITIZE_CAM=1 also runs granite-cam's component tests (its reducers, the live path's
# gate, slots and sinks, whole in-process runs and their lifetimes) under the same sanitizers:
# `GRANITE_PACKAGE=cam` builds granite-cam's library with everything it links (NIO, swift-crypto,
# the codecs, Vulkan), about 25 minutes per sanitizer on 2 cores, so CI leaves it to this switch.
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"
export GRANITE_PACKAGE=core
filter='GraniteTests\.'
suffix=""
if [ "${GRANITE_SANITIZE_CAM:-}" = "1" ]; then
  export GRANITE_PACKAGE=cam
  filter='GraniteTests\.|GraniteCamTests\.(CamReducerTests|LivePathTests|RunLifetimeTests|CamAppTests|LiveAndNonLiveTests|FailureTests)/'
  suffix="-cam"
fi
# The core-only manifest resolves fewer packages and would rewrite the checkout's Package.resolved:
# keep the full one and put it back after.
resolved_copy="$(mktemp)"
had_resolved=0
if [ -f Package.resolved ]; then cp Package.resolved "$resolved_copy"; had_resolved=1; fi
restore() { if [ "$had_resolved" -eq 1 ]; then cp "$resolved_copy" Package.resolved; else rm -f Package.resolved; fi; rm -f "$resolved_copy"; }
trap restore EXIT
fail=0; passed=0
for sanitizer in ${SANITIZERS:-thread address}; do
  scratch="$ROOT/.build-sanitize-$sanitizer$suffix"
  log="$(mktemp)"
  echo "sanitizers: building $GRANITE_PACKAGE with --sanitize=$sanitizer"
  swift build --scratch-path "$scratch" --sanitize="$sanitizer" --build-tests >"$log" 2>&1 || {
    tail -30 "$log"; echo "sanitizers: $sanitizer build FAILED"; fail=1; continue; }
  # halt_on_error: the first report fails the run; TSan's reports otherwise only print.
  set +e
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ASAN_OPTIONS="halt_on_error=1 detect_leaks=0" \
    swift test --scratch-path "$scratch" --sanitize="$sanitizer" --skip-build \
      --filter "$filter" --skip 'SoakTests' >"$log" 2>&1
  status=$?
  set -e
  summary=$(grep -E "Executed [0-9]+ tests?, with" "$log" | tail -1 || true)
  st=$(grep -E "Test run with [0-9]+ tests?" "$log" | tail -1 || true)
  reports=$(grep -cE "WARNING: ThreadSanitizer|ERROR: AddressSanitizer" "$log" || true)
  echo "sanitizers: $sanitizer — XCTest: ${summary:-none}; Swift Testing: ${st:-none}; reports: $reports"
  if [ "$status" -ne 0 ] || [ "$reports" -ne 0 ] || [ -z "$summary" ]; then
    grep -E -A25 "WARNING: ThreadSanitizer|ERROR: AddressSanitizer" "$log" | head -80
    grep -E "error: |failed \(" "$log" | head -20
    echo "sanitizers: $sanitizer FAILED (exit $status)"; fail=1
  else
    passed=$((passed + 1))
  fi
  rm -f "$log"
done
echo "sanitizers tier: $passed passed, $fail failed"
[ "$fail" -eq 0 ]
