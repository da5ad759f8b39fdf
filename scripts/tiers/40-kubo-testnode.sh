#!/usr/bin/env bash
# IPFS: the project's Kubo test node (scripts/ipfs/kubo-testnode) checked on its own over plain
# HTTP: known CIDs, Kubo's import against the node's, aleph-cid, cat, pins across a restart,
# dag/import and block/stat, auth, latency, down-after, refuse and slow-answer. ~6-10 s (three node starts).
. "$(dirname "$0")/../lib.sh"
python="$ROOT/.venv/bin/python"
[ -x "$python" ] || { echo "kubo-testnode: $python missing (scripts/tiers/pre-ipfs.sh)" >&2; exit 1; }
exec "$python" "$ROOT/scripts/ipfs/kubo-testnode/selftest.py"
