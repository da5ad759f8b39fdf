#!/usr/bin/env python3
"""The project's IPFS Pinning Service for tests: the Pinning Service API 1.0.0 on 127.0.0.1, every
request and response validated against the project's transcription of the spec
(Sources/GraniteIPFS/PinningService/openapi.yaml) with openapi-core, with fault switches.

    client ─HTTP─► Handler ─► faults (latency, refuse token, 429 + Retry-After, 500)
                      ├─► openapi-core: request valid? (no: 400 + a recorded violation)
                      ├─► /pins, /pins/{requestid} ─► PinStore (queued → pinning → pinned | failed)
                      │        └─ pinned only if an origin (a 127.0.0.1 Kubo RPC API) has the CID pinned
                      └─► openapi-core: response valid? (no: a recorded violation)
    GET /_test/stats  request counts per operation, faults injected, pin requests created per CID,
                      violations (outside the spec)

--rate-500-after P answers a share P of POSTs 500 *after* processing them (the request exists): a
client that simply posts again creates a second pin request, which stats' "created" shows.

A pin stays `queued` for half of --pin-delay, `pinning` for the other half, then the service asks
the origins for the CID (`pin/ls` on each origin's RPC API: the Kubo test node reports its RPC
address as its one address) and --origin-api; found: `pinned`, else `failed` with the reason in
info.status_details. CIDs given with --fail-cid always end `failed`. See README.md beside this file.
"""
import argparse
import json
import os
import random
import re
import sys
import threading
import time
import urllib.parse
import urllib.request
import uuid
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from testserver import LoopbackServer, StoppableSettings  # noqa: E402
from openapi_core import OpenAPI  # noqa: E402
from openapi_core.datatypes import RequestParameters  # noqa: E402
from werkzeug.datastructures import Headers, ImmutableMultiDict  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
SPEC = os.path.join(ROOT, "Sources", "GraniteIPFS", "PinningService", "openapi.yaml")
HOST = "https://pinning-service.example.com"   # the spec's server: paths are matched below it


# ---- openapi-core adapters ----------------------------------------------------------------------
class SpecRequest:
    """A request as openapi-core reads it."""

    def __init__(self, method, path, query, headers, body):
        self.host_url, self.path, self.method = HOST, path, method.lower()
        self.body = body or None
        self.content_type = headers.get("Content-Type", "") if body else ""
        self.parameters = RequestParameters(
            query=ImmutableMultiDict(urllib.parse.parse_qsl(query, keep_blank_values=True)),
            header=Headers(list(headers.items())), cookie=ImmutableMultiDict())


class SpecResponse:
    """A response as openapi-core reads it."""

    def __init__(self, status, body, headers):
        self.status_code, self.data = status, body
        self.headers = Headers(headers)
        self.content_type = self.headers.get("Content-Type", "")


# ---- pins -----------------------------------------------------------------------------------------
def rfc3339(t):
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class PinStore:
    def __init__(self, a):
        self.lock, self.pins, self.last, self.created = threading.Lock(), {}, 0.0, {}
        self.delay, self.fail_cids, self.origin_api = a.pin_delay, set(a.fail_cid), a.origin_api

    def add(self, pin):
        with self.lock:
            created = max(time.time(), self.last + 1e-6)      # unique: list pagination relies on it
            self.last = created
            rid = str(uuid.uuid4())
            self.pins[rid] = {"requestid": rid, "created": created, "pin": pin, "final": None, "details": None}
            self.created[pin["cid"]] = self.created.get(pin["cid"], 0) + 1
            return self.view(rid)

    def get(self, rid):
        with self.lock:
            return self.view(rid) if rid in self.pins else None

    def remove(self, rid):
        with self.lock:
            return self.pins.pop(rid, None) is not None

    def all(self):
        with self.lock:
            return [self.view(rid) for rid in self.pins]

    def view(self, rid):
        """The PinStatus now (lock held): the status follows the clock, the end is decided once."""
        p = self.pins[rid]
        age = time.time() - p["created"]
        if p["final"]:
            status = p["final"]
        elif age < self.delay / 2:
            status = "queued"
        elif age < self.delay:
            status = "pinning"
        else:
            p["final"], p["details"] = self.settle(p["pin"])
            status = p["final"]
        out = {"requestid": rid, "status": status, "created": rfc3339(p["created"]), "pin": p["pin"],
               "delegates": ["/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWTestPinningServiceDelegate"]}
        if p["details"]:
            out["info"] = {"status_details": p["details"]}
        return out

    def settle(self, pin):
        cid = pin["cid"]
        if cid in self.fail_cids:
            return "failed", "refused by --fail-cid"
        apis = [a for a in (api_of(o) for o in pin.get("origins", [])) if a]
        if self.origin_api:
            apis.append(self.origin_api)
        for api in apis:
            try:
                req = urllib.request.Request(api + "/api/v0/pin/ls?arg=" + urllib.parse.quote(cid), method="POST")
                with urllib.request.urlopen(req, timeout=5) as r:
                    if cid in json.load(r).get("Keys", {}):
                        return "pinned", None
            except Exception:      # noqa: BLE001 - an origin that does not have it, or is down
                continue
        return "failed", "CID not found at %d origin(s)" % len(apis)


def api_of(multiaddr):
    """The loopback RPC API of an origin (/ip4/127.x/tcp/PORT/...), or None: nothing else is asked."""
    m = re.match(r"^/ip4/(127\.\d+\.\d+\.\d+)/tcp/(\d+)(/|$)", multiaddr)
    return "http://%s:%s" % (m.group(1), m.group(2)) if m else None


# ---- HTTP -----------------------------------------------------------------------------------------
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    S = None

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.serve("GET")

    def do_POST(self):
        self.serve("POST")

    def do_DELETE(self):
        self.serve("DELETE")

    def serve(self, method):
        S = self.S
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if url.path == "/_test/stats":
            return self.answer(200, S.stats(), None)
        op = "%s %s" % (method, "/pins/{requestid}" if url.path.startswith("/pins/") else url.path)
        S.count(op)
        request = SpecRequest(method, url.path, url.query, self.headers, body)
        if S.latency:
            time.sleep(S.latency)
        if S.refuse_token or self.headers.get("Authorization") not in S.tokens:
            return self.answer(401, failure("UNAUTHORIZED", "access token is missing or invalid"), request)
        fault = S.fault()
        if fault == 429:
            return self.answer(429, failure("RATE_LIMITED", "slow down"), request,
                               extra=[("Retry-After", S.retry_after)])
        if fault == 500:
            return self.answer(500, failure("INTERNAL_SERVER_ERROR", "injected fault"), request)
        try:
            S.spec.validate_request(request)
        except Exception as e:     # noqa: BLE001 - any validation error is a violation by the client
            S.violation("request %s: %s" % (op, e))
            return self.answer(400, failure("BAD_REQUEST", str(e)[:500]), request)
        status, answer = route(S.store, method, url.path, url.query, body)
        if method == "POST" and status < 300 and S.fault_after():
            return self.answer(500, failure("INTERNAL_SERVER_ERROR", "injected fault after processing"), request)
        self.answer(status, answer, request)

    def answer(self, status, obj, request, extra=()):
        body = b"" if obj is None else json.dumps(obj).encode()
        headers = [("Content-Type", "application/json")] if obj is not None else []
        headers += [("Content-Length", str(len(body)))] + list(extra)
        if request is not None:
            try:
                self.S.spec.validate_response(request, SpecResponse(status, body, headers))
            except Exception as e:     # noqa: BLE001
                self.S.violation("response %d to %s %s: %s" % (status, request.method, request.path, e))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)


def failure(reason, details):
    return {"error": {"reason": reason, "details": details}}


def route(store, method, path, query, body):
    if path == "/pins" and method == "POST":
        pin = json.loads(body)
        return 202, store.add(pin)
    if path == "/pins" and method == "GET":
        q = dict(urllib.parse.parse_qsl(query))
        statuses = set(q.get("status", "pinned").split(","))
        cids = set(q["cid"].split(",")) if "cid" in q else None
        pins = [p for p in store.all() if p["status"] in statuses and (cids is None or p["pin"]["cid"] in cids)]
        if "name" in q:
            pins = [p for p in pins if name_matches(p["pin"].get("name"), q["name"], q.get("match", "exact"))]
        if "before" in q:
            pins = [p for p in pins if parse_time(p["created"]) < parse_time(q["before"])]
        if "after" in q:
            pins = [p for p in pins if parse_time(p["created"]) > parse_time(q["after"])]
        pins.sort(key=lambda p: p["created"], reverse=True)
        return 200, {"count": len(pins), "results": pins[:int(q.get("limit", 10))]}
    rid = path[len("/pins/"):]
    if method == "GET":
        found = store.get(rid)
        return (200, found) if found else (404, failure("NOT_FOUND", "no pin request %s" % rid))
    if method == "DELETE":
        return (202, None) if store.remove(rid) else (404, failure("NOT_FOUND", "no pin request %s" % rid))
    if method == "POST":                       # replace: remove, then add
        if not store.remove(rid):
            return 404, failure("NOT_FOUND", "no pin request %s" % rid)
        return 202, store.add(json.loads(body))
    return 404, failure("NOT_FOUND", path)


def name_matches(name, want, match):
    if name is None:
        return False
    if match.startswith("i"):
        name, want, match = name.lower(), want.lower(), match[1:]
    return name == want if match == "exact" else want in name


class Settings(StoppableSettings):
    """The store, the spec and the fault switches, shared by every request thread."""

    def __init__(self, a, server):
        super().__init__(server)
        self.spec = OpenAPI.from_file_path(a.spec)
        self.store = PinStore(a)
        self.tokens = {"Bearer " + t for t in a.token}
        self.refuse_token, self.latency = a.refuse_token, a.latency_ms / 1000
        self.rate_429, self.rate_500, self.retry_after = a.rate_429, a.rate_500, str(a.retry_after)
        self.rate_500_after = a.rate_500_after
        self.rng = random.Random(a.seed)
        self.counts, self.faults, self.violations = {}, {"429": 0, "500": 0, "500-after": 0}, []

    def count(self, op):
        with self.lock:
            self.counts[op] = self.counts.get(op, 0) + 1

    def fault(self):
        with self.lock:
            roll = self.rng.random()
            kind = 429 if roll < self.rate_429 else 500 if roll < self.rate_429 + self.rate_500 else None
            if kind:
                self.faults[str(kind)] += 1
            return kind

    def fault_after(self):
        """True when a processed POST is to be answered 500 anyway (--rate-500-after)."""
        with self.lock:
            if self.rate_500_after and self.rng.random() < self.rate_500_after:
                self.faults["500-after"] += 1
                return True
            return False

    def violation(self, text):
        sys.stderr.write("pinning-service: spec violation: %s\n" % text)
        with self.lock:
            self.violations.append(text)

    def stats(self):
        with self.lock:
            with self.store.lock:
                created = dict(self.store.created)
            return {"requests": dict(self.counts), "faults": dict(self.faults), "created": created,
                    "violations": list(self.violations)}



def main():
    p = argparse.ArgumentParser(description="IPFS Pinning Service API 1.0.0 on 127.0.0.1, for tests.")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    p.add_argument("--token", action="append", default=[], help="an accepted bearer token (repeatable)")
    p.add_argument("--spec", default=SPEC, help="the OpenAPI document every request and response is checked against")
    p.add_argument("--origin-api", help="a Kubo RPC API (http://127.0.0.1:PORT) asked for every CID besides the pin's origins")
    p.add_argument("--pin-delay", type=float, default=0.4, help="seconds a pin stays queued, then pinning")
    p.add_argument("--fail-cid", action="append", default=[], help="a CID whose pins end failed (repeatable)")
    p.add_argument("--refuse-token", action="store_true", help="answer every request 401 (fault)")
    p.add_argument("--rate-429", type=float, default=0.0, help="answer this share of requests 429 + Retry-After")
    p.add_argument("--retry-after", type=int, default=1, help="the Retry-After seconds of those")
    p.add_argument("--rate-500", type=float, default=0.0, help="answer this share of requests 500")
    p.add_argument("--rate-500-after", type=float, default=0.0,
                   help="process this share of POSTs, then answer them 500 (the request was created)")
    p.add_argument("--seed", type=int, default=0, help="seed of the fault rates")
    p.add_argument("--latency-ms", type=int, default=0, help="wait this long before each answer (slow service)")
    a = p.parse_args()
    server = LoopbackServer(("127.0.0.1", a.port), Handler)
    Handler.S = Settings(a, server)
    Handler.S.stop_on_signals()
    print("READY http://127.0.0.1:%d" % server.server_address[1], flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
