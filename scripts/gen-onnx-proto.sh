#!/usr/bin/env bash
# Regenerates Sources/GraniteML/Proto/onnx.pb.swift from onnx.proto (run by hand, rarely; the
# generated file is committed). Needs: protoc (Debian `protobuf-compiler`), pip, git, swift.
#   onnx.proto       from the PyPI `onnx` wheel, version $ONNX_VERSION (the schema is stable).
#   protoc-gen-swift built in a scratch folder from apple/swift-protobuf at $SWIFT_PROTOBUF_VERSION,
#                    the same version Package.swift depends on (generated code and runtime match).
# Set PROTOC_GEN_SWIFT=/path/to/protoc-gen-swift to skip the build.
. "$(dirname "$0")/lib.sh"
ONNX_VERSION="${ONNX_VERSION:-1.17.0}"
SWIFT_PROTOBUF_VERSION="${SWIFT_PROTOBUF_VERSION:-1.39.0}"
SWIFT_PROTOBUF_GIT="${SWIFT_PROTOBUF_GIT:-https://github.com/apple/swift-protobuf.git}"
ensure_apt protobuf-compiler
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 -m pip download -q --no-deps --only-binary=:all: "onnx==$ONNX_VERSION" -d "$work/wheel"
python3 - "$work" <<'PY'
import glob, sys, zipfile
work = sys.argv[1]
with zipfile.ZipFile(glob.glob(f"{work}/wheel/*.whl")[0]) as z:
    open(f"{work}/onnx.proto", "wb").write(z.read("onnx/onnx.proto"))
PY

plugin="${PROTOC_GEN_SWIFT:-}"
if [ -z "$plugin" ]; then
  git clone -q --depth 1 --branch "$SWIFT_PROTOBUF_VERSION" "$SWIFT_PROTOBUF_GIT" "$work/swift-protobuf"
  (cd "$work/swift-protobuf" && swift build -c release --product protoc-gen-swift >/dev/null)
  plugin="$work/swift-protobuf/.build/release/protoc-gen-swift"
fi

out="$ROOT/Sources/GraniteML/Proto"
mkdir -p "$out"
protoc --plugin=protoc-gen-swift="$plugin" -I "$work" --swift_opt=Visibility=Internal \
  --swift_out="$work" "$work/onnx.proto"
mv "$work/onnx.pb.swift" "$out/onnx.pb.swift"
echo "wrote $out/onnx.pb.swift (onnx $ONNX_VERSION, swift-protobuf $SWIFT_PROTOBUF_VERSION)"
