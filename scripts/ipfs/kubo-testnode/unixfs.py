"""UnixFS import for the Kubo test node: the blocks and CIDs Kubo 0.22's importer makes.

Fixed-size chunks, balanced layout (174 links a node), dag-pb or raw leaves, CIDv0 or CIDv1,
basic directories, HAMT-sharded ones past Kubo's 256 KiB estimate, and symlinks. Encoding only: reading back is Kubo's job.
Every block goes to `put(cid, block)`; CIDs are binary here, text only through `cid_text`.
"""
import base64
import hashlib

DAG_PB, RAW = 0x70, 0x55
LINKS_PER_NODE = 174                  # boxo helpers.DefaultLinksPerBlock
SHARDING_THRESHOLD = 256 * 1024       # Kubo's estimate above which a directory is sharded
DIRECTORY, FILE, SYMLINK, HAMT_SHARD = 1, 2, 4, 5    # unixfs.proto DataType
MURMUR3_X64_64, HAMT_FANOUT = 0x22, 256
ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


class Refused(Exception):
    """An import the node refuses (e.g. a directory that would need HAMT sharding)."""


def uvarint(n):
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def pb(number, value):
    """A protobuf field: int as varint (wire type 0), bytes length-prefixed (wire type 2)."""
    if isinstance(value, int):
        return uvarint(number << 3) + uvarint(value)
    return uvarint(number << 3 | 2) + uvarint(len(value)) + value


def cid_of(version, codec, block):
    multihash = b"\x12\x20" + hashlib.sha256(block).digest()
    return multihash if version == 0 else b"\x01" + uvarint(codec) + multihash


def multihash_of(cid):
    return cid if cid[0] == 0x12 else cid[2:]          # codecs here fit one varint byte


def base58(data):
    n, out = int.from_bytes(data, "big"), ""
    while n:
        n, digit = divmod(n, 58)
        out = ALPHABET[digit] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def cid_text(cid):
    """Kubo's text form: base58btc for CIDv0, base32 lower case ('b' prefix) for CIDv1."""
    if cid[0] == 0x12:
        return base58(cid)
    return "b" + base64.b32encode(cid).decode().rstrip("=").lower()


def cid_parse(text):
    """Text CID -> binary; ValueError when it is not a sha2-256 CIDv0 or CIDv1 (dag-pb/raw)."""
    if text.startswith("Qm") and len(text) == 46:
        n = 0
        for ch in text:
            n = n * 58 + ALPHABET.index(ch)
        raw = n.to_bytes(34, "big")
    elif text[:1] == "b":
        body = text[1:].upper()
        raw = base64.b32decode(body + "=" * (-len(body) % 8))
    else:
        raise ValueError("invalid cid: %r" % text)
    if raw[:2] == b"\x12\x20" and len(raw) == 34 or raw[:1] == b"\x01" and raw[1] in (DAG_PB, RAW) \
            and raw[2:4] == b"\x12\x20" and len(raw) == 36:
        return raw
    raise ValueError("invalid cid: %r" % text)


def unixfs(kind, data=None, filesize=None, blocksizes=()):
    out = pb(1, kind) + (pb(2, data) if data is not None else b"")
    out += pb(3, filesize) if filesize is not None else b""
    return out + b"".join(pb(4, size) for size in blocksizes)


def dag_pb(links, data):
    """dag-pb node bytes: links (cid, name, tsize) first, then Data, as go-merkledag orders them."""
    return b"".join(pb(2, pb(1, cid) + pb(2, name) + pb(3, tsize)) for cid, name, tsize in links) + pb(1, data)


class File:
    """Streams one file in: `write()` bytes, then `close()` -> (cid, dag size, content size)."""

    def __init__(self, put, version, raw_leaves, chunk):
        self.put, self.version, self.raw, self.chunk = put, version, raw_leaves, chunk
        self.pending, self.leaves, self.size = bytearray(), [], 0

    def write(self, data):
        self.pending += data
        self.size += len(data)
        while len(self.pending) >= self.chunk:
            self._leaf(bytes(self.pending[:self.chunk]))
            del self.pending[:self.chunk]

    def _leaf(self, data):
        if self.raw:
            block, cid = data, cid_of(1, RAW, data)
        else:
            block = dag_pb([], unixfs(FILE, data or None, len(data)))
            cid = cid_of(self.version, DAG_PB, block)
        self.put(cid, block)
        self.leaves.append((cid, len(block), len(data)))

    def _node(self, children):
        sizes = [c[2] for c in children]
        block = dag_pb([(c[0], b"", c[1]) for c in children], unixfs(FILE, None, sum(sizes), sizes))
        cid = cid_of(self.version, DAG_PB, block)
        self.put(cid, block)
        return cid, len(block) + sum(c[1] for c in children), sum(sizes)

    def _subtree(self, leaves, depth):
        """boxo's balanced layout: each child is filled to its capacity before the next one."""
        if depth == 0:
            return leaves[0]
        span = LINKS_PER_NODE ** (depth - 1)
        return self._node([self._subtree(leaves[i:i + span], depth - 1) for i in range(0, len(leaves), span)])

    def close(self):
        if self.pending or not self.leaves:
            self._leaf(bytes(self.pending))
        depth = 0
        while LINKS_PER_NODE ** depth < len(self.leaves):
            depth += 1
        return self._subtree(self.leaves, depth)


def directory(put, version, entries):
    """A directory from {name: (cid, dag size)} -> (cid, dag size): basic, or a HAMT once the
    names and CIDs of its links reach Kubo's 256 KiB estimate (boxo's HAMTShardingSize)."""
    estimate = sum(len(name.encode()) + len(cid) for name, (cid, _) in entries.items())
    if estimate >= SHARDING_THRESHOLD:
        return hamt(put, version, [(murmur3_64(name.encode()), name.encode(), cid, size)
                                   for name, (cid, size) in entries.items()], 0)
    links = sorted((name.encode(), cid, size) for name, (cid, size) in entries.items())
    block = dag_pb([(cid, name, size) for name, cid, size in links], unixfs(DIRECTORY))
    cid = cid_of(version, DAG_PB, block)
    put(cid, block)
    return cid, len(block) + sum(size for _, _, size in links)


def hamt(put, version, items, depth):
    """One HAMT shard (boxo's unixfs/hamt, fanout 256) of (hash, name, cid, size) items: slot = byte
    `depth` of the name's hash; a slot with one item links it as "XX" + name, one with more links a
    child shard "XX" one byte deeper. Links in slot order; Data holds the occupied slots' bitfield."""
    slots = {}
    for item in items:
        slots.setdefault(item[0][depth], []).append(item)
    links, bits = [], 0
    for slot in sorted(slots):
        bits |= 1 << slot
        group = slots[slot]
        if len(group) == 1:
            links.append((group[0][2], b"%02X" % slot + group[0][1], group[0][3]))
        else:
            if depth == 7:
                raise Refused("test node: HAMT hash collision on 64 bits")
            links.append(hamt(put, version, group, depth + 1) + (None,))
            links[-1] = (links[-1][0], b"%02X" % slot, links[-1][1])
    data = pb(1, HAMT_SHARD) + pb(2, bits.to_bytes(32, "big").lstrip(b"\0")) + pb(5, MURMUR3_X64_64) + pb(6, HAMT_FANOUT)
    block = dag_pb(links, data)
    cid = cid_of(version, DAG_PB, block)
    put(cid, block)
    return cid, len(block) + sum(size for _, _, size in links)


def murmur3_64(data):
    """The first 64 bits of MurmurHash3 x64_128 (seed 0), big-endian: the HAMT's name hash."""
    mask, c1, c2 = (1 << 64) - 1, 0x87c37b91114253d5, 0x4cf5ad432745937f
    rotl = lambda x, r: ((x << r) | (x >> (64 - r))) & mask  # noqa: E731

    def fmix(k):
        k ^= k >> 33
        k = k * 0xff51afd7ed558ccd & mask
        k ^= k >> 33
        k = k * 0xc4ceb9fe1a85ec53 & mask
        return k ^ k >> 33
    h1 = h2 = 0
    whole = len(data) // 16 * 16
    for i in range(0, whole, 16):
        k1, k2 = int.from_bytes(data[i:i + 8], "little"), int.from_bytes(data[i + 8:i + 16], "little")
        h1 ^= rotl(k1 * c1 & mask, 31) * c2 & mask
        h1 = (rotl(h1, 27) + h2) * 5 + 0x52dce729 & mask
        h2 ^= rotl(k2 * c2 & mask, 33) * c1 & mask
        h2 = (rotl(h2, 31) + h1) * 5 + 0x38495ab5 & mask
    tail = data[whole:]
    if len(tail) > 8:
        h2 ^= rotl(int.from_bytes(tail[8:], "little") * c2 & mask, 33) * c1 & mask
    if tail:
        h1 ^= rotl(int.from_bytes(tail[:8], "little") * c1 & mask, 31) * c2 & mask
    h1 ^= len(data)
    h2 ^= len(data)
    h1 = h1 + h2 & mask
    h2 = h2 + h1 & mask
    h1, h2 = fmix(h1), fmix(h2)
    return (h1 + h2 & mask).to_bytes(8, "big")


def symlink(put, version, target):
    block = dag_pb([], unixfs(SYMLINK, target.encode()))
    cid = cid_of(version, DAG_PB, block)
    put(cid, block)
    return cid, len(block)


def read_links(block):
    """(name, cid) links and the UnixFS type of a dag-pb block, for path lookups."""
    def fields(buf):
        i = 0
        while i < len(buf):
            key, i = read_varint(buf, i)
            if key & 7 == 0:
                value, i = read_varint(buf, i)
            else:
                n, i = read_varint(buf, i)
                value, i = buf[i:i + n], i + n
            yield key >> 3, value
    links, kind = [], None
    for number, value in fields(block):
        if number == 2:
            link = dict(fields(value))
            links.append((link.get(2, b"").decode(), bytes(link[1])))
        elif number == 1:
            kind = dict(fields(value)).get(1)
    return kind, links


def read_varint(buf, i):
    n = shift = 0
    while True:
        byte = buf[i]
        i += 1
        n |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return n, i
