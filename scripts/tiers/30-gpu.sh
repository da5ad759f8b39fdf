#!/usr/bin/env bash
# The Vulkan compute tier (GraniteGPU, Marble, GraniteMLVulkan):
#  1. the GPU tests (granite-cam's GPU chain, DepthChainTests, DepthOnDeviceTests (the depth model inside the chain's frame), and GraniteML's Vulkan backend op by op and on
#     FastDepth and the MiDaS replica against ONNX Runtime, GraniteMLVulkanTests) again under the Khronos
#     validation layer; any validation message fails; when none ran (no device)
#     the tier exits 77 at once (it checked nothing), and when some skipped it runs the checks
#     below and then exits 77 (incomplete), never printing "clean";
#  2. clear errors without a driver or with an unknown device, the filter catalog listed;
#  3. the SPIRVEmbed plugin fails a build on a GLSL error and shows the shader's file and line.
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"

layer=/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json
validated=false
if [ -e "$layer" ]; then
  log="$(mktemp)"
  VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation swift test --skip-build --filter 'GraniteGPUTests|MarbleTests|DepthChainTests|DepthOnDeviceTests|GraniteMLVulkanTests' >"$log" 2>&1 || {
    tail -40 "$log"; echo "gpu tier: tests failed under the validation layer" >&2; exit 1; }
  if grep -q "Validation Error\|VUID-" "$log"; then
    grep -m 20 "Validation Error\|VUID-" "$log"; echo "gpu tier: validation layer reported errors" >&2; exit 1
  fi
  # What ran: Swift Testing's line per test (these suites are Swift Testing), XCTest's summary.
  ran=$(grep -E "^✔ Test .+ passed after" "$log" | grep -cvE "^✔ Test run with" || true)
  skipped=$(grep -cE "^➜ Test .+ (skipped|was cancelled)" "$log" || true)
  xc=$(grep -E "Executed [0-9]+ tests?, with" "$log" | tail -1 || true)
  xc_total=$(grep -Eo "Executed [0-9]+" <<<"$xc" | grep -Eo "[0-9]+" || echo 0)
  xc_skipped=$(grep -Eo "[0-9]+ tests? skipped" <<<"$xc" | grep -Eo "[0-9]+" || echo 0)
  ran=$(( ran + xc_total - xc_skipped )); skipped=$(( skipped + xc_skipped ))
  if [ "$ran" -eq 0 ]; then
    grep -E "skipped: " "$log" | sort | uniq -c | head -5
    echo "gpu tier: no GPU test ran under the validation layer ($skipped skipped): nothing was checked"
    rm -f "$log"; exit 77
  fi
  if [ "$skipped" -gt 0 ]; then
    grep -E "skipped: " "$log" | sort | uniq -c | head -5
    echo "gpu tier: $ran tests passed under VK_LAYER_KHRONOS_validation, but $skipped skipped: the validation run is incomplete"
  else
    echo "gpu tier: all $ran GPU tests clean under VK_LAYER_KHRONOS_validation"
    validated=true
  fi
  rm -f "$log"
elif [ "${CI:-}" = "true" ]; then
  echo "gpu tier: CI=true but the validation layer is missing (apt-get install vulkan-validationlayers)" >&2; exit 1
else
  echo "gpu tier: no validation run: $layer missing (apt-get install vulkan-validationlayers); the checks below still run"
fi

# No driver and an unknown device name are typed errors that say what to install or choose.
granite="$(swift build --show-bin-path)/granite"
if [ -x "$granite" ]; then
  out="$(VK_ICD_FILENAMES=/nonexistent.json VK_DRIVER_FILES=/nonexistent.json "$granite" filters --device 2>&1)" && {
    echo "gpu tier: granite filters --device succeeded with no driver" >&2; exit 1; }
  grep -q "mesa-vulkan-drivers" <<<"$out" || { echo "$out"; echo "gpu tier: no-driver error names no package" >&2; exit 1; }
  out="$(GRANITE_VULKAN_DEVICE=no-such-gpu "$granite" filters --device 2>&1)" && {
    echo "gpu tier: an unknown GRANITE_VULKAN_DEVICE was accepted" >&2; exit 1; }
  grep -q 'no Vulkan device matches "no-such-gpu"' <<<"$out" || { echo "$out"; echo "gpu tier: bad device error" >&2; exit 1; }
  echo "gpu tier: no-driver and unknown-device errors are clear"
  listing="$("$granite" filters)"
  for name in brightness blur sharpen sobel resize crop rotate depthmask background ink godRay analog pixellate disco drive vibes bokeh polka stars depth; do
    grep -q "^$name — " <<<"$listing" || { echo "gpu tier: granite filters does not list $name" >&2; exit 1; }
  done
  grep -q "^    sigma  float 0.1...32, default 2 " <<<"$listing" || { echo "gpu tier: blur's sigma line is wrong" >&2; exit 1; }
  if "$granite" filters nosuchfilter >/dev/null 2>&1; then echo "gpu tier: unknown filter accepted" >&2; exit 1; fi
  echo "gpu tier: granite filters lists the catalog with ranges and defaults"
else
  echo "gpu tier: $granite not built; run swift build --build-tests first" >&2; exit 1
fi

# A throwaway package with the plugin and one broken shader must fail to build, naming the line.
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
mkdir -p "$probe/Plugins" "$probe/Shaders/include" "$probe/Sources/Probe"
cp -r "$ROOT/Plugins/SPIRVEmbed" "$probe/Plugins/"
cat >"$probe/Package.swift" <<'SWIFT'
// swift-tools-version:6.0
import PackageDescription
let package = Package(name: "Probe", targets: [
    .plugin(name: "SPIRVEmbed", capability: .buildTool()),
    .target(name: "Probe", plugins: ["SPIRVEmbed"]),
])
SWIFT
echo 'enum SPIRV {}' >"$probe/Sources/Probe/SPIRV.swift"
printf '#version 450\nlayout(local_size_x = 1) in;\nvoid main() {\n    int x = undefinedThing;\n}\n' >"$probe/Shaders/broken.comp"
if out="$(cd "$probe" && swift build 2>&1)"; then
  echo "gpu tier: a broken shader built without error" >&2; exit 1
fi
if ! grep -q "broken.comp:4: error" <<<"$out"; then
  echo "$out" | tail -20; echo "gpu tier: the build error does not name broken.comp line 4" >&2; exit 1
fi
echo "gpu tier: a GLSL error fails the build with its line: $(grep -m1 'broken.comp:4: error' <<<"$out")"
if [ "$validated" != true ]; then
  echo "gpu tier: skipped: the GPU tests did not all run under the validation layer (see above)"
  exit 77
fi
