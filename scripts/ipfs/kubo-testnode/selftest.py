#!/usr/bin/env python3
"""Self-test of the Kubo test node over plain HTTP (no project code): known CIDs, a directory
checked against Kubo's own import (CIDv0) and aleph-cid (CIDv1), cat, pins, dag/import (pinned by
Kubo, corrupt and incomplete CARs refused), block/stat, restart on the same repo, and the fault
switches refuse / slow-answer / auth / down-after / latency. Prints one line per check; exit 1 if any fails.

usage: selftest.py        (with the project venv's python: .venv/bin/python)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
GUARD = os.path.join(HERE, "..", "standin-guard.py")
HELLO = b"hello world\n"
failed = 0


def check(name, ok, detail=""):
    global failed
    print("%s %s%s" % ("ok  " if ok else "FAIL", name, "" if ok else ": %s" % detail))
    failed += 0 if ok else 1


def start(repo, *options):
    node = subprocess.Popen([sys.executable, GUARD, "120", os.path.join(HERE, "kubo-testnode.py"),
                             "--repo", repo, *options], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    line = node.stdout.readline().decode()
    if not line.startswith("READY "):
        sys.exit("selftest: the node did not start (%r); see %s/kubo-worker.log" % (line, repo))
    return node, line.split()[1]


def stop(node):
    node.terminate()
    node.wait(10)


def post(url, path, files=None, headers=None):
    """(status, body) of POST url/api/v0/path, files as [(name, content type, bytes)]."""
    data, headers = None, dict(headers or {})
    if files is not None:
        parts = [b'--B\r\nContent-Disposition: form-data; name="file"; filename="%s"\r\nContent-Type: %s\r\n\r\n%s\r\n'
                 % (name.encode(), ctype.encode(), content) for name, ctype, content in files]
        data = b"".join(parts) + b"--B--\r\n"
        headers["Content-Type"] = "multipart/form-data; boundary=B"
    try:
        with urllib.request.urlopen(urllib.request.Request(url + "/api/v0/" + path, data=data, method="POST",
                                                           headers=headers), timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def lines(body):
    return [json.loads(line) for line in body.splitlines() if line.strip()]


def main():
    work = tempfile.mkdtemp(prefix="kubo-testnode-selftest-")
    repo = os.path.join(work, "repo")
    began = time.monotonic()
    # The faults --refuse and --slow-answer-ms ride on `id`, which nothing else here asks.
    node, url = start(repo, "--refuse", "id", "--slow-answer-ms", "2", "--slow-command", "id")
    t = time.monotonic()
    status, body = post(url, "id")
    check("--refuse id: 404 as from a Kubo without it", status == 404 and body == b"404 page not found\n", (status, body))
    check("--slow-answer-ms 2: the answer comes a byte at a time", time.monotonic() - t > 0.2, time.monotonic() - t)
    status, body = post(url, "add?cid-version=0", [("hello.txt", "application/octet-stream", HELLO)])
    check("CIDv0 add of 'hello world\\n' is Kubo's known CID",
          status == 200 and lines(body)[-1]["Hash"] == "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o", body)
    status, body = post(url, "add?cid-version=1", [("hello.txt", "application/octet-stream", HELLO)])
    check("CIDv1 (raw leaf) add is the known CID",
          status == 200 and lines(body)[-1]["Hash"] == "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4", body)

    big = os.urandom(3 * 262144 + 5)
    folder = [("d", "application/x-directory", b""), ("d/big.bin", "application/octet-stream", big),
              ("d/sub", "application/x-directory", b""), ("d/sub/hi%2Bthere.txt", "application/octet-stream", HELLO),
              ("d/empty", "application/x-directory", b"")]
    status, body = post(url, "add?cid-version=0", folder)      # the node fails it unless Kubo agrees
    check("CIDv0 directory: Kubo's AddFile and the node's importer agree", status == 200, body)
    status, body = post(url, "add?cid-version=1&wrap-with-directory=true",
                        [("big.bin", "application/octet-stream", big), ("hi%2Bthere.txt", "application/octet-stream", HELLO)])
    root = lines(body)[-1]["Hash"] if status == 200 else ""
    on_disk = os.path.join(work, "tree")
    os.makedirs(on_disk)
    for name, content in (("big.bin", big), ("hi+there.txt", HELLO)):
        with open(os.path.join(on_disk, name), "wb") as f:
            f.write(content)
    try:
        import aleph_cid
        check("CIDv1 wrapped directory equals aleph-cid's", root == aleph_cid.hash_folder(on_disk, cid_version=1),
              "%s vs %s" % (root, aleph_cid.hash_folder(on_disk, cid_version=1)))
    except ImportError:
        check("aleph-cid is installed (scripts/tiers/pre-ipfs.sh)", False, "import failed")
    status, body = post(url, "cat?arg=/ipfs/%s/big.bin" % root)
    check("cat of a multi-chunk CIDv1 file through Kubo", status == 200 and body == big, status)
    status, body = post(url, "cat?arg=%s" % root)
    check("cat of a directory is Kubo's error", status == 500 and b"directory" in body, body)
    status, body = post(url, "pin/ls?type=recursive")
    check("pin/ls lists the wrapper as recursive", json.loads(body).get("Keys", {}).get(root, {}).get("Type") == "recursive", body)
    # dag/import: a CAR built here (the node's unixfs.py, CIDv1), pinned by Kubo; a corrupt block refused.
    sys.path.insert(0, HERE)
    import unixfs as U
    blocks = {}
    kids = {}
    for name, content in (("a.bin", big), ("b.txt", HELLO)):
        builder = U.File(blocks.setdefault, 1, True, 262144)
        builder.write(content)
        kids[name] = builder.close()[:2]
    car_root = U.directory(blocks.setdefault, 1, kids)[0]

    def car(roots, items):
        header = b"\xa2eroots" + bytes([0x80 | len(roots)]) + b"".join(b"\xd8\x2a\x58\x25\x00" + r for r in roots) + b"gversion\x01"
        return U.uvarint(len(header)) + header + b"".join(U.uvarint(len(c) + len(b)) + c + b for c, b in items)
    status, body = post(url, "dag/import?pin-roots=true", [("x.car", "application/octet-stream", car([car_root], blocks.items()))])
    answer = lines(body) if status == 200 else []
    check("dag/import names the root pinned", answer[:1] == [{"Root": {"Cid": {"/": U.cid_text(car_root)}, "PinErrorMsg": ""}}], body)
    status, body = post(url, "pin/ls?arg=%s&type=recursive" % U.cid_text(car_root))
    check("dag/import's root is a recursive pin of Kubo's", status == 200 and U.cid_text(car_root) in body.decode(), body)
    status, body = post(url, "block/stat?arg=%s&offline=true" % U.cid_text(car_root))
    check("block/stat of the imported root", status == 200 and json.loads(body)["Size"] == len(blocks[car_root]), body)
    bad_cid, bad_block = next(iter(blocks.items()))
    status, body = post(url, "dag/import", [("x.car", "application/octet-stream", car([car_root], [(bad_cid, bad_block + b"!")]))])
    check("dag/import refuses a block that does not match its CID", b"does not match its hash" in body, body)
    orphan = U.directory(lambda c, b: None, 1, {"gone": (U.cid_of(1, U.RAW, b"never sent"), 10)})
    status, body = post(url, "dag/import", [("x.car", "application/octet-stream", car([orphan[0]], []))])
    check("dag/import of an incomplete DAG names the missing block in PinErrorMsg", b"could not find" in body, body)

    status, body = post(url, "version")
    check("version answers", status == 200 and json.loads(body)["Version"].startswith("0.22.0"), body)
    try:
        urllib.request.urlopen(url + "/api/v0/version", timeout=5)
        check("GET is refused with 405", False, "answered")
    except urllib.error.HTTPError as e:
        check("GET is refused with 405", e.code == 405, e.code)
    stop(node)

    node, url = start(repo)
    status, body = post(url, "pin/ls?arg=%s" % root)
    check("a restart on the same repo keeps pins and blocks", status == 200 and root in json.loads(body).get("Keys", {}), body)
    stop(node)

    node, url = start(os.path.join(work, "auth"), "--auth", "bearer:s3cret", "--down-after", "3", "--latency-ms", "300")
    t = time.monotonic()
    status, body = post(url, "version")
    check("without a token: 403 Access Denied", status == 403 and b"Access Denied" in body, (status, body))
    check("--latency-ms 300 delays the answer", time.monotonic() - t >= 0.3, time.monotonic() - t)
    status, body = post(url, "version", headers={"Authorization": "Bearer wrong"})
    check("a wrong token: 403", status == 403, status)
    status, body = post(url, "version", headers={"Authorization": "Bearer s3cret"})
    check("the right token: 200", status == 200, status)
    time.sleep(0.5)
    try:
        post(url, "version", headers={"Authorization": "Bearer s3cret"})
        check("--down-after 3: the 4th request is refused", False, "answered")
    except (urllib.error.URLError, ConnectionError):
        check("--down-after 3: the 4th request is refused", True)
    node.wait(10)
    check("--down-after: the node exited", node.returncode is not None, "still running")
    print("kubo-testnode selftest: %d failed, %.1f s" % (failed, time.monotonic() - began))
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
