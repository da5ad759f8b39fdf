#!/usr/bin/env bash
# The API reference: a DocC catalog per public module (Sources/MODULE/MODULE.docc) built against
# the module's symbol graph with the toolchain's docc. Reuses the debug build ./scripts/test made
# (swift package dump-symbol-graph extracts the public symbols from it). Fails when docc fails or
# warns about a catalog's own pages (a broken symbol link, a missing topic); warnings from doc
# comments in the sources are counted and printed. The archives go to .build/documentation/.
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"
started=$SECONDS
docc="$(dirname "$(readlink -f "$(command -v swift)")")/docc"
[ -x "$docc" ] || docc="$(command -v docc || true)"
[ -n "$docc" ] && [ -x "$docc" ] || { echo "docc tier: no docc beside swift ($(command -v swift)) nor on the PATH" >&2; exit 1; }
swift package dump-symbol-graph --minimum-access-level public >/dev/null 2>"$ROOT/.build/docc-symbolgraph.log" || {
  tail -20 "$ROOT/.build/docc-symbolgraph.log"; echo "docc tier: dump-symbol-graph failed" >&2; exit 1; }
graphs="$(swift build --show-bin-path)/../symbolgraph"
[ -d "$graphs" ] || { echo "docc tier: no symbol graphs in $graphs" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$ROOT/.build/documentation"
fail=0; built=0
for catalog in Sources/*/*.docc; do
  module="$(basename "$catalog" .docc)"
  [ -f "$graphs/$module.symbols.json" ] || { echo "docc tier: FAIL $module: no symbol graph ($graphs/$module.symbols.json)"; fail=1; continue; }
  mkdir -p "$work/$module"
  cp "$graphs/$module.symbols.json" "$work/$module/"
  cp "$graphs/$module"@*.symbols.json "$work/$module/" 2>/dev/null || true
  log="$work/$module.log"
  if ! "$docc" convert "$catalog" --additional-symbol-graph-dir "$work/$module" \
      --fallback-display-name "$module" --fallback-bundle-identifier "org.granite.$module" \
      --output-path "$ROOT/.build/documentation/$module.doccarchive" --ide-console-output >"$log" 2>&1; then
    tail -20 "$log"; echo "docc tier: FAIL $module: docc convert failed"; fail=1; continue
  fi
  own=$(grep -E "\.docc/.*(warning|error)" "$log" || true)
  if [ -n "$own" ]; then echo "$own"; echo "docc tier: FAIL $module: its catalog has problems"; fail=1; continue; fi
  echo "docc tier: ok   $module ($(grep -c "warning:" "$log" || true) warnings from doc comments in the sources)"
  built=$((built + 1))
done
echo "docc tier: $built catalogs built into .build/documentation/ in $((SECONDS - started)) s"
exit $fail
