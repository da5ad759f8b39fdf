#!/usr/bin/env python3
"""The anchors of `granite-bench cid`: two plain Python Kubo RPC clients pinning a folder of files.

    per-file URL DIR   one `add` (pin=true) per file from 4 threads, then the folder as one
                       wrapped `add` and its `pin/add` (the files travel twice, as the client
                       has no DAG builder of its own)
    car URL DIR        the folder's DAG built here (the Kubo test node's unixfs.py: CIDv1, raw
                       leaves, HAMT past 256 KiB), held in memory, sent as one CARv1 to
                       `dag/import?pin-roots=true`

Both print: seconds-total seconds-until-root-known root-CID.
"""
import concurrent.futures as cf
import http.client
import json
import os
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ipfs", "kubo-testnode"))
import unixfs as U  # noqa: E402

B = "b0undary"


def part(path):
    with open(path, "rb") as f:
        data = f.read()
    return (b"--" + B.encode() + b'\r\nContent-Disposition: form-data; name="file"; filename="'
            + os.path.basename(path).encode() + b'"\r\nContent-Type: application/octet-stream\r\n\r\n' + data + b"\r\n")


def post(url, command, body=None, headers=None):
    request = urllib.request.Request(url + "/api/v0/" + command, data=body, method="POST", headers=headers or {})
    with urllib.request.urlopen(request) as answer:
        return answer.read()


def add(url, body, query):
    lines = post(url, "add?cid-version=1&" + query, body + b"--" + B.encode() + b"--\r\n",
                 {"Content-Type": "multipart/form-data; boundary=" + B}).splitlines()
    return json.loads(lines[-1])["Hash"]


def per_file(url, files):
    start = time.perf_counter()
    with cf.ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda p: post(url, "pin/add?arg=" + add(url, part(p), "pin=true")), files))
    root = add(url, b"".join(part(p) for p in files), "wrap-with-directory=true&pin=false")
    known = time.perf_counter() - start
    post(url, "pin/add?arg=" + root)
    return time.perf_counter() - start, known, root


def car(url, files):
    start = time.perf_counter()
    blocks, entries = {}, {}
    put = blocks.setdefault
    for path in files:
        builder = U.File(put, 1, True, 262144)
        with open(path, "rb") as f:
            while piece := f.read(1 << 20):
                builder.write(piece)
        entries[os.path.basename(path)] = builder.close()[:2]
    root = U.directory(put, 1, entries)[0]
    known = time.perf_counter() - start
    header = b"\xa2eroots\x81\xd8\x2a\x58\x25\x00" + root + b"gversion\x01"

    def body():
        yield b"--" + B.encode() + b'\r\nContent-Disposition: form-data; name="file"; filename="batch.car"\r\n' \
            b"Content-Type: application/octet-stream\r\n\r\n" + U.uvarint(len(header)) + header
        for cid, block in blocks.items():
            yield U.uvarint(len(cid) + len(block)) + cid + block
        yield b"\r\n--" + B.encode() + b"--\r\n"
    where = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(where.hostname, where.port)
    connection.request("POST", "/api/v0/dag/import?pin-roots=true", body=body(), encode_chunked=True,
                       headers={"Content-Type": "multipart/form-data; boundary=" + B, "Transfer-Encoding": "chunked"})
    answer = connection.getresponse()
    lines = [json.loads(line) for line in answer.read().splitlines() if line.strip()]
    named = [line["Root"]["Cid"]["/"] for line in lines if "Root" in line and not line["Root"]["PinErrorMsg"]]
    if answer.status != 200 or U.cid_text(root) not in named or answer.getheader("X-Stream-Error"):
        sys.exit("car client: the node did not pin %s: %s %s" % (U.cid_text(root), answer.status, lines))
    return time.perf_counter() - start, known, U.cid_text(root)


if __name__ == "__main__":
    mode, url, folder = sys.argv[1:4]
    paths = sorted(os.path.join(folder, name) for name in os.listdir(folder))
    total, known, cid = (per_file if mode == "per-file" else car)(url, paths)
    print(total, known, cid)
