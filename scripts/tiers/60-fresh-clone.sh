#!/usr/bin/env bash
# Tier (issue 13): what a new user does first, on a fresh clone with nothing beside it.
#  1. `git clone` the repository (its committed HEAD) into an empty temporary folder and run the
#     README's first command there exactly as written (`./scripts/run`): exit 0, the summary line,
#     the frames and depth maps it says it wrote, the frames.jsonl sidecar.
#  2. `scripts/install PREFIX` from that clone into a temporary prefix; then, from an unrelated
#     folder with a bare HOME and no GRANITE_MODEL_PATH, `granite depth` and
#     `granite-cam --frames 10 --depth` find the installed model and write their outputs;
#     completions (bash, zsh, fish) and man pages are in place.
# One release build serves both (the install reuses the clone's build). Uncommitted changes are
# not in the clone: commit before running this tier locally.
. "$(dirname "$0")/../lib.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

git clone -q "$ROOT" "$work/clone/granite"
[ "$(ls -A "$work/clone")" = "granite" ] || { echo "fresh-clone: the clone has company" >&2; exit 1; }
cd "$work/clone/granite"
started=$SECONDS
rc=0; ./scripts/run >"$work/run.out" 2>"$work/run.err" || rc=$?
echo "fresh-clone: ./scripts/run took $((SECONDS - started)) s (build included), exit $rc"
tail -3 "$work/run.out"
check "./scripts/run exits 0" "[ $rc -eq 0 ]"
[ $rc -eq 0 ] || tail -20 "$work/run.err"
summary=$(grep -E '^granite-cam: [0-9]+ frames in ' "$work/run.out" || true)
check "it prints the summary line" "[ -n \"\$summary\" ]"
saved=$(sed -E 's/.* ([0-9]+) saved.*/\1/' <<<"$summary")
depth_written=$(grep -E '^granite-cam: [0-9]+ depth maps, [0-9]+ written' "$work/run.out" | sed -E 's/.* ([0-9]+) written.*/\1/')
out="out/granite-cam"
frames=$(ls "$out" 2>/dev/null | grep -cE '^frame_[0-9]+\.png$' || true)
depths=$(ls "$out" 2>/dev/null | grep -cE '^depth-[0-9]+\.png$' || true)
check "frames written: $frames, as the summary says ($saved), at least one" "[ -n \"$saved\" ] && [ $frames -eq ${saved:-0} ] && [ $frames -gt 0 ]"
check "frames.jsonl has a line per frame" "[ \"\$(wc -l < $out/frames.jsonl)\" -eq $frames ]"
check "depth maps written: $depths, as the summary says (${depth_written:-none}), at least one" "[ -n \"$depth_written\" ] && [ $depths -eq ${depth_written:-0} ] && [ $depths -gt 0 ]"
check "no partial files left" "! ls -A $out | grep -qE '\.partial|\.tmp-'"

started=$SECONDS
rc=0; ./scripts/install "$work/prefix" >"$work/install.out" 2>"$work/install.err" || rc=$?
echo "fresh-clone: scripts/install took $((SECONDS - started)) s, exit $rc"
check "scripts/install exits 0" "[ $rc -eq 0 ]"
[ $rc -eq 0 ] || tail -20 "$work/install.err"
p="$work/prefix"
check "granite and granite-cam in PREFIX/bin" "[ -x $p/bin/granite ] && [ -x $p/bin/granite-cam ]"
check "the default model in PREFIX/share/granite/models" "[ -f $p/share/granite/models/fastdepth-224-int8.onnx ]"
check "bash, zsh and fish completions" "grep -q convert $p/share/bash-completion/completions/granite && grep -q convert $p/share/zsh/site-functions/_granite && grep -q convert $p/share/fish/vendor_completions.d/granite.fish && [ -s $p/share/bash-completion/completions/granite-cam ]"
check "man pages for granite (its subcommands inside) and granite-cam" "grep -qE '^\.(Dt|TH) ' $p/share/man/man1/granite.1 && grep -q 'convert' $p/share/man/man1/granite.1 && [ -s $p/share/man/man1/granite-cam.1 ]"

# From an unrelated folder: nothing but the installed prefix can supply the model.
mkdir -p "$work/elsewhere" "$work/home"
cd "$work/elsewhere"
python3 - room.ppm <<'PY'
import sys
w, h = 96, 72
px = bytearray()
for y in range(h):
    for x in range(w):
        px += bytes((200, 190, 180) if y < 30 else (150, 60, 50) if 30 <= x < 66 else (110, 80, 50))
open(sys.argv[1], "wb").write(b"P6 %d %d 255\n" % (w, h) + px)
PY
convert=/usr/bin/convert; [ -x $convert ] || convert=convert
"$convert" room.ppm room.png
run_bare() { env -u GRANITE_MODEL_PATH -u XDG_DATA_HOME HOME="$work/home" "$@"; }
rc=0; run_bare "$p/bin/granite" depth room.png -o depth-out >"$work/depth.log" 2>&1 || rc=$?
check "installed granite depth runs from an unrelated folder" "[ $rc -eq 0 ] && [ -s depth-out/room.depth.png ] && [ -s depth-out/room.preview.png ]"
[ $rc -eq 0 ] || cat "$work/depth.log"
rc=0; run_bare "$p/bin/granite-cam" --frames 10 --depth --out cam-out >"$work/cam.log" 2>&1 || rc=$?
cam_frames=$(ls cam-out 2>/dev/null | grep -cE '^frame_[0-9]+\.png$' || true)
cam_depths=$(ls cam-out 2>/dev/null | grep -cE '^depth-[0-9]+\.png$' || true)
check "installed granite-cam --frames 10 --depth: exit 0, $cam_frames frames, $cam_depths depth maps" "[ $rc -eq 0 ] && [ $cam_frames -ge 1 ] && [ $cam_depths -ge 1 ]"
[ $rc -eq 0 ] || tail -20 "$work/cam.log"
# The same program copied where no model is: exit 1, every place searched listed, and the fix.
mkdir -p "$work/lonely/bin" && cp "$p/bin/granite" "$work/lonely/bin/"
rc=0; run_bare "$work/lonely/bin/granite" depth room.png -o lonely-out >"$work/missing.log" 2>&1 || rc=$?
check "no model anywhere: exit 1, the places searched and how to fix it" "[ $rc -eq 1 ] && grep -q '$work/home/.local/share/granite/models/fastdepth-224-int8.onnx' $work/missing.log && grep -q '$work/lonely/share/granite/models' $work/missing.log && grep -q GRANITE_MODEL_PATH $work/missing.log"
[ $rc -eq 1 ] || cat "$work/missing.log"
echo "fresh-clone: $([ $fail -eq 0 ] && echo passed || echo failed)"
exit $fail
