#!/usr/bin/env bash
# Tier (issue 13): what a new user does first, on a fresh clone with nothing beside it.
#  1. `git clone` the repository (its committed HEAD) into an empty temporary folder and run the
#     README's first command there exactly as written (`./scripts/run`): exit 0, the summary line,
#     the frames and depth maps it says it wrote, the frames.jsonl sidecar.
#  2. `scripts/install PREFIX` from that clone into a temporary prefix; then, from an unrelated
#     folder with a bare HOME and no GRANITE_MODEL_PATH, `granite depth` and
#     `granite-cam --frames 10 --depth` find the installed model and write their outputs;
#     completions (bash, zsh, fish) and man pages are in place.
#  3. `scripts/bundle` from that clone (the same release build): the archive unpacked into an empty
#     folder, its programs run under `env -i` with the Swift toolchain hidden and lavapipe as the
#     only device (`granite filters`, `granite depth`, `granite-cam --source testpattern`), and every
#     library they load is the bundle's or glibc's / the C++ runtime's.
#  Also: with the clone's Package.resolved removed, what SwiftPM resolves from Package.swift's exact
#  pins alone is every version in Package.versions (scripts/check-versions).
# One release build serves all three (install and bundle reuse the clone's build). Uncommitted changes are
# not in the clone: commit before running this tier locally.
. "$(dirname "$0")/../lib.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

git clone -q "$ROOT" "$work/clone/granite"
[ "$(ls -A "$work/clone")" = "granite" ] || { echo "fresh-clone: the clone has company" >&2; exit 1; }
cd "$work/clone/granite"
# As a machine whose mirror revisions differ would see it: no Package.resolved to follow.
rm -f Package.resolved
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
previews=$(ls "$out" 2>/dev/null | grep -cE '^depth-[0-9]+\.preview\.png$' || true)
# Each one 8-bit indexed colour (IHDR bit depth 8, colour type 3): a picture in any image viewer.
kinds=$(for f in "$out"/depth-*.preview.png; do od -An -tu1 -j24 -N2 "$f" | tr -s ' '; done | sort -u)
check "a colour view beside each depth map: $previews, 8-bit indexed colour (${kinds:-none})" "[ $previews -eq $depths ] && [ \"$kinds\" = ' 8 3' ]"
processed=$(sed -E 's/^granite-cam: ([0-9]+) frames in .*/\1/' <<<"$summary")
rec_frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=codec_name,nb_read_frames -of csv=p=0 "$out/recording.mkv" 2>&1 || true)
check "recording.mkv plays: H.264, as many frames as processed (${processed:-none}): $rec_frames" "[ \"\$rec_frames\" = \"h264,${processed:-x}\" ]"
check "no partial files left" "! ls -A $out | grep -E '\.partial|\.tmp-' >/dev/null"
# The clone's build ran with its Package.resolved removed (see above): SwiftPM resolved from
# Package.swift's exact pins alone, and must have reached the versions the project tested.
check "its resolution, with no Package.resolved, equals Package.versions" "scripts/check-versions . >'$work/versions.out' 2>&1 || { cat '$work/versions.out'; false; }"
tail -1 "$work/versions.out"

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

# 3. The portable bundle from the clone's release build: unpacked into an empty folder, run with
#    nothing but the bundle (env -i, the Swift toolchain hidden) and lavapipe as the only device.
cd "$work/clone/granite"
started=$SECONDS
rc=0; archive=$(./scripts/bundle "$work/dist" 2>"$work/bundle.err") || rc=$?
echo "fresh-clone: scripts/bundle took $((SECONDS - started)) s, exit $rc; $(tail -1 "$work/bundle.err")"
check "scripts/bundle makes granite-VERSION-linux-x86_64.tar.xz" "[ $rc -eq 0 ] && [[ \"\$(basename '$archive')\" =~ ^granite-[0-9][0-9.]*-linux-x86_64\.tar\.xz$ ]]"
[ $rc -eq 0 ] || tail -20 "$work/bundle.err"
mkdir -p "$work/unpacked"
tar -C "$work/unpacked" -xJf "$archive"
b="$work/unpacked/$(basename "$archive" .tar.xz)"
check "one folder inside, with bin/granite, bin/granite-cam, lib/, the model" "[ \"\$(ls '$work/unpacked')\" = \"\$(basename '$b')\" ] && [ -x '$b/bin/granite' ] && [ -x '$b/bin/granite-cam' ] && [ -f '$b/share/granite/models/fastdepth-224-int8.onnx' ]"
stripped_with_rpath() {
  local f
  for f in "$b"/bin/*; do
    readelf -S "$f" | grep '\.symtab' >/dev/null && return 1
    readelf -d "$f" | grep -E '\(RPATH\) +Library rpath: \[\$ORIGIN/\.\./lib\]' >/dev/null || return 1
  done
}
check "the programs are stripped and look in \$ORIGIN/../lib" stripped_with_rpath
check "libglvnd for NVIDIA's driver is inside" "[ -e '$b/lib/libGLdispatch.so.0' ] && [ -e '$b/lib/libGLX.so.0' ] && [ -e '$b/lib/libvulkan.so.1' ]"
# Every library the programs load comes from the bundle, except glibc and the C++ runtime.
# FFmpeg's libraries too: recording opens them at run time (dlopen), so ldd of the programs does not list them.
outside=$(for f in "$b"/bin/* "$b"/lib/libav* "$b"/lib/libswresample*; do env -i ldd "$f"; done | awk '$2 == "=>" { print $1, $3 }' |
  while read -r soname path; do echo "$soname $(readlink -f "$path")"; done | grep -v " $b/lib/" |
  grep -vE '^(ld-linux-x86-64|libc|libm|libpthread|libdl|librt|libresolv|libutil|libanl|libmvec|libstdc\+\+|libgcc_s)\.so' || true)
check "every library resolves inside the bundle or to glibc/the C++ runtime${outside:+: $outside}" "[ -z \"\$outside\" ]"
# The newest glibc and C++ runtime symbol versions anything inside asks for: glibc 2.36 (Debian 12) suffices.
newest() { for f in "$b"/bin/* "$b"/lib/*; do objdump -T "$f" 2>/dev/null | grep -oE "$1"'_[0-9.]+' || true; done | sort -uV | tail -1; }
glibc=$(newest GLIBC); glibcxx=$(newest GLIBCXX)
check "it needs at most GLIBC_2.36 and GLIBCXX_3.4.30 (newest asked: $glibc, $glibcxx)" "[ \"\$(printf '%s\n' $glibc GLIBC_2.36 | sort -V | tail -1)\" = GLIBC_2.36 ] && [ \"\$(printf '%s\n' $glibcxx GLIBCXX_3.4.30 | sort -V | tail -1)\" = GLIBCXX_3.4.30 ]"
lavapipe=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
mkdir -p "$work/bare"
cd "$work/bare"
"$convert" "$work/elsewhere/room.ppm" room.png
# Only the bundle: no environment but lavapipe's ICD file, and the Swift runtime's folder hidden when
# a private mount namespace can be had (root), so a stray dependency on it fails instead of loading.
swift_runtime=$(ldd "$(swift build -c release --show-bin-path --package-path "$work/clone/granite")/granite" |
  awk '$1 ~ /^libswiftCore\.so/ { print $3 }' | xargs -r dirname)
bare() {
  if [ -n "$swift_runtime" ] && [ "$swift_runtime" != /usr/lib/x86_64-linux-gnu ] && unshare -m true 2>/dev/null; then
    unshare -m sh -c 'mount -t tmpfs none "$0" && exec "$@"' "$swift_runtime" env -i VK_DRIVER_FILES="$lavapipe" "$@"
  else
    env -i VK_DRIVER_FILES="$lavapipe" "$@"
  fi
}
if unshare -m true 2>/dev/null; then echo "fresh-clone: the bundle runs with $swift_runtime hidden"
else echo "fresh-clone: no mount namespace here, $swift_runtime stays visible (the ldd check above stands for it)"; fi
rc=0; bare "$b/bin/granite" filters --device >"$work/b-filters.log" 2>&1 || rc=$?
check "bundle: granite filters --device lists the filters, on lavapipe" "[ $rc -eq 0 ] && grep -q blur '$work/b-filters.log' && grep -q 'filters run on: llvmpipe' '$work/b-filters.log'"
[ $rc -eq 0 ] || tail -5 "$work/b-filters.log"
rc=0; bare "$b/bin/granite" depth room.png -o b-depth >"$work/b-depth.log" 2>&1 || rc=$?
check "bundle: granite depth finds the bundled model and writes its outputs" "[ $rc -eq 0 ] && [ -s b-depth/room.depth.png ] && [ -s b-depth/room.preview.png ]"
[ $rc -eq 0 ] || tail -5 "$work/b-depth.log"
rc=0; bare "$b/bin/granite-cam" --source testpattern --frames 10 --depth --out b-cam >"$work/b-cam.log" 2>&1 || rc=$?
b_frames=$(ls b-cam 2>/dev/null | grep -cE '^frame_[0-9]+\.png$' || true)
b_depths=$(ls b-cam 2>/dev/null | grep -cE '^depth-[0-9]+\.png$' || true)
check "bundle: granite-cam --source testpattern --frames 10 --depth: exit 0, $b_frames frames, $b_depths depth maps" "[ $rc -eq 0 ] && [ $b_frames -ge 1 ] && [ $b_depths -ge 1 ]"
[ $rc -eq 0 ] || tail -10 "$work/b-cam.log"
check "bundle: granite-cam links no FFmpeg (it opens it when a recording starts)" "! readelf -d '$b/bin/granite-cam' | grep -E 'NEEDED.*\\[lib(avcodec|avformat|avutil|swresample)\\.so' >/dev/null"
rc=0; bare "$b/bin/granite-cam" --source testpattern --frames 10 --record b-rec.mkv --segments b-live --segment-seconds 1 >"$work/b-rec.log" 2>&1 || rc=$?
b_rec=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=codec_name,nb_read_frames -of csv=p=0 b-rec.mkv 2>&1 || true)
b_processed=$(sed -nE 's/^granite-cam: ([0-9]+) frames in .*/\1/p' "$work/b-rec.log")
check "bundle: granite-cam --record b-rec.mkv records with the bundle's FFmpeg: $b_rec, ${b_processed:-no} frames processed" "[ $rc -eq 0 ] && [ \"\$b_rec\" = \"h264,${b_processed:-x}\" ]"
[ $rc -eq 0 ] || tail -10 "$work/b-rec.log"
# The same run's --segments, fed by the recording's one encoder: the same packets, byte for byte
# (framemd5 of the copied packets: size and MD5 each).
packets() { ffmpeg -v error -i "$1" -map 0:v -c copy -f framemd5 - 2>&1 | grep -v '^#' | cut -d, -f5,6; }
b_same=no; [ "$(packets b-rec.mkv)" = "$(packets b-live/live.m3u8)" ] && [ "$(packets b-rec.mkv | wc -l)" = "${b_processed:-x}" ] && b_same=yes
check "bundle: its --segments b-live from the same encoder ($(grep -o '[0-9]* video encoders* opened for [0-9]* outputs' "$work/b-rec.log")): the same ${b_processed:-no} packets" \
  "[ $b_same = yes ] && grep -q 'granite-cam: 1 video encoder opened for 2 outputs' '$work/b-rec.log'"

# 4. scripts/gpu-check end to end on lavapipe from the prepared bundle (issue 37), so the script a
#    session lent a GPU runs is known to work: `prepare` in the clone (its release build, plus
#    granite-bench; the test bundle `swift test` built in $ROOT, not a second debug build; no
#    FFmpeg), the archive with the working tree within the device tool's 64 MiB (prepare fails
#    otherwise), then `run --dry` from a copy holding only scripts/, Models/ and .gpu/, every part ok.
tests_bundle="$(swift build --show-bin-path --package-path "$ROOT")/GranitePackageTests.xctest"
if [ -x "$tests_bundle" ]; then
  cd "$work/clone/granite"
  started=$SECONDS
  rc=0; GRANITE_BUNDLE_TESTS="$tests_bundle" ./scripts/gpu-check prepare >"$work/gpu-prepare.log" 2>&1 || rc=$?
  echo "fresh-clone: gpu-check prepare took $((SECONDS - started)) s, exit $rc"
  grep -E '^gpu-check: ' "$work/gpu-prepare.log"
  bytes=$(du -cb .gpu/granite-*.tar.xz 2>/dev/null | tail -1 | cut -f1)
  check "gpu-check prepare: .gpu holds one archive, ${bytes:-0} bytes, within the device tool's 64 MiB with the tree" "[ $rc -eq 0 ] && [ \"\$(ls .gpu | wc -l)\" -eq 1 ] && [ ${bytes:-0} -gt 0 ]"
  [ $rc -eq 0 ] || tail -10 "$work/gpu-prepare.log"
  mkdir -p "$work/device/checkout" "$work/device/out"
  cp -r scripts Models .gpu "$work/device/checkout/"
  started=$SECONDS
  rc=0; (cd "$work/device/checkout" && env -u GRANITE_MODEL_PATH OUT="$work/device/out" \
    VK_DRIVER_FILES="$lavapipe" ./scripts/gpu-check run --dry >/dev/null 2>&1) || rc=$?
  echo "fresh-clone: gpu-check run --dry took $((SECONDS - started)) s on lavapipe, exit $rc"
  glog="$work/device/out/gpu-check.log"
  check "gpu-check run --dry: every part ran (exit 0, no FAILED line, the log in \$OUT)" "[ $rc -eq 0 ] && [ -s '$glog' ] && ! grep -q '^FAILED' '$glog' && grep -q 'done: every part ran' '$glog'"
  check "gpu-check run --dry: the device was lavapipe, the GPU suites and DepthChainTests passed" "grep -q 'filters run on: llvmpipe' '$glog' && grep -q '^swift testing exit 0' '$glog' && grep -q '^xctest exit 0' '$glog'"
  check "gpu-check run --dry: granite-bench and granite-cam printed their results" "grep -q '^== .*granite-bench filters 320x240' '$glog' && [ \"\$(grep -cE '^granite-cam: [0-9]+ frames in ' '$glog')\" -ge 2 ]"
  [ $rc -eq 0 ] || grep -E '^(FAILED|== )' "$glog" | tail -15
else
  echo "FAIL gpu-check dry run: no test bundle at $tests_bundle (./scripts/test builds it before the tiers; run swift build --build-tests)"
  fail=1
fi
echo "fresh-clone: $([ $fail -eq 0 ] && echo passed || echo failed)"
exit $fail
