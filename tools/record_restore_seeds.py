#!/usr/bin/env python3
"""record_restore_seeds.py -- the seed corpus of fuzz_restore, from redis-server itself.

Usage: tools/record_restore_seeds.py [--redis-server PATH] OUTDIR

Starts a throwaway redis-server (7.0.15, Debian's) on a unix socket in a temporary
directory, builds values of every type and encoding, DUMPs each and writes one seed per
payload to OUTDIR (fuzz/corpus/fuzz_restore in the tree).  A seed is fuzz_restore's input:
one byte of options, then the payload without its 8-byte checksum (the target appends
the checksum, so that mutations reach the decoder).

Beside what 7.0 writes (types 0, 2, 4, 5, 11, 16, 17, 18, 19), the older formats 7.0 still
reads are built here byte by byte -- plain lists and zsets (types 1, 3), ziplists (10, 12,
13), quicklists of ziplists (14) and the first stream format (15) -- and each is checked
by restoring it into the same redis-server: every seed is a payload Redis accepts, except
the ones named bad-*, which are refused by Redis (and are the payloads that crashed the
fake; issue 26).

Regenerate with: tools/record_restore_seeds.py fuzz/corpus/fuzz_restore
"""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time


# ----- A minimal RESP client ----------------------------------------------------------------

class Conn:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.buf = b""

    def _fill(self):
        d = self.s.recv(65536)
        if not d:
            raise EOFError("redis-server closed the connection")
        self.buf += d

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self):
        line = self._line()
        kind = line[:1]
        if kind in (b"+", b":"):
            return line[1:]
        if kind == b"-":
            return RuntimeError(line[1:].decode())
        if kind == b"$":
            n = int(line[1:])
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if kind == b"*":
            n = int(line[1:])
            return None if n < 0 else [self.read() for _ in range(n)]
        raise ValueError("unexpected reply %r" % line)

    def cmd(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self.read()

    def ok(self, *args):
        r = self.cmd(*args)
        if isinstance(r, Exception):
            raise RuntimeError("%s: %s" % (" ".join(map(str, args)), r))
        return r


# ----- RDB encodings ------------------------------------------------------------------------

def rdb_len(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    if n <= 0xFFFFFFFF:
        return b"\x80" + struct.pack(">I", n)
    return b"\x81" + struct.pack(">Q", n)


def rdb_str(b):
    b = b if isinstance(b, bytes) else str(b).encode()
    return rdb_len(len(b)) + b


def read_len(p, i):
    """An RDB length at p[i]: (value, next index); encoded strings are not lengths."""
    t = p[i] >> 6
    if t == 0:
        return p[i] & 0x3F, i + 1
    if t == 1:
        return ((p[i] & 0x3F) << 8) | p[i + 1], i + 2
    if p[i] == 0x80:
        return struct.unpack(">I", p[i + 1:i + 5])[0], i + 5
    if p[i] == 0x81:
        return struct.unpack(">Q", p[i + 1:i + 9])[0], i + 9
    raise ValueError("not a length at %d" % i)


def skip_str(p, i):
    """The index after the RDB string at p[i] (plain, integer or LZF)."""
    if p[i] >> 6 == 3:
        enc = p[i] & 0x3F
        if enc < 3:
            return i + 1 + (1, 2, 4)[enc]
        clen, j = read_len(p, i + 1)
        _, j = read_len(p, j)
        return j + clen
    n, j = read_len(p, i)
    return j + n


def ziplist(items):
    """A ziplist of strings and small integers, as Redis 6 wrote them."""
    entries = []
    prev = 0
    for it in items:
        if isinstance(it, int) and 0 <= it <= 12:
            enc = bytes([0xF1 + it])
        elif isinstance(it, int):
            enc = b"\xC0" + struct.pack("<h", it)
        else:
            b = it.encode() if isinstance(it, str) else it
            assert len(b) < 64
            enc = bytes([len(b)]) + b
        head = bytes([prev]) if prev < 254 else b"\xFE" + struct.pack("<I", prev)
        e = head + enc
        entries.append(e)
        prev = len(e)
    body = b"".join(entries)
    tail = 10 + sum(len(e) for e in entries[:-1]) if entries else 10
    total = 10 + len(body) + 1
    return struct.pack("<IIH", total, tail, len(items)) + body + b"\xFF"


VERSION = struct.pack("<H", 10)  # 7.0's RDB version, the payload's last two bytes before the CRC


def stream_v1(p):
    """A 7.0 stream payload (type 19) rewritten in the first format (type 15): without the
    first id, the tombstone, entries-added, and each group's entries-read."""
    assert p[0] == 19
    i = 1
    nodes, i = read_len(p, i)
    for _ in range(2 * nodes):
        i = skip_str(p, i)
    out = b"\x0f" + p[1:i]
    for _ in range(3):  # length, last id
        j = i
        _, i = read_len(p, i)
        out += p[j:i]
    for _ in range(5):  # first id, max deleted id, entries added: dropped
        _, i = read_len(p, i)
    j = i
    ngroups, i = read_len(p, i)
    out += p[j:i]
    for _ in range(ngroups):
        j = i
        i = skip_str(p, i)
        _, i = read_len(p, i)
        _, i = read_len(p, i)
        out += p[j:i]
        _, i = read_len(p, i)  # entries-read: dropped
        j = i
        npel, i = read_len(p, i)
        i += npel * (16 + 8)
        for _ in range(npel):
            _, i = read_len(p, i)
        pass
        # consumers
        ncons, i = read_len(p, i)
        for _ in range(ncons):
            i = skip_str(p, i)
            i += 8
            n, i = read_len(p, i)
            i += 16 * n
        out += p[j:i]
    assert p[i:i + 2] == VERSION, "unexpected bytes after the groups"
    return out + VERSION


# ----- The values ---------------------------------------------------------------------------

# (name, setup commands, config changes before them) -- each builds key k.
RECORDED = [
    ("string-raw", [["SET", "k", "hello world"]], []),
    ("string-int", [["SET", "k", "-2147483649"]], []),
    ("string-int8", [["SET", "k", "7"]], []),
    ("string-lzf", [["SET", "k", "abcabcabc" * 20]], []),
    ("string-empty", [["SET", "k", ""]], []),
    ("string-binary", [["SET", "k", bytes(range(256))]], []),
    ("hll-sparse", [["PFADD", "k", "a", "b", "c", "d"]], []),
    ("hll-dense", [["PFADD", "k"] + ["e%d" % i for i in range(3000)]], []),
    ("list-listpack", [["RPUSH", "k", "a", "1", "b", "-300", "70000", "x" * 40]], []),
    ("list-nodes", [["RPUSH", "k"] + [str(i) for i in range(40)]],
     [["CONFIG", "SET", "list-max-listpack-size", "4"]]),
    ("list-compressed", [["RPUSH", "k"] + ["value-%d-%s" % (i, "z" * 30) for i in range(60)]],
     [["CONFIG", "SET", "list-max-listpack-size", "8"], ["CONFIG", "SET", "list-compress-depth", "1"]]),
    ("list-plain", [["RPUSH", "k", "small", "p" * 9000, "tail"]], []),
    ("set-intset", [["SADD", "k", "1", "2", "3", "-40000", "5000000000"]], []),
    ("set-hashtable", [["SADD", "k", "a", "b", "c", "1", "2"]], []),
    ("hash-listpack", [["HSET", "k", "f", "v", "n", "12", "big", "123456789012345"]], []),
    ("hash-hashtable", [["HSET", "k", "f", "v", "long", "L" * 100]], []),
    ("zset-listpack", [["ZADD", "k", "1", "a", "2.5", "b", "-inf", "c", "3", "d"]], []),
    ("zset-skiplist", [["ZADD", "k", "1", "a", "2", "b", "3", "m" * 80]], []),
    ("stream-plain", [["XADD", "k", "1-1", "a", "1"], ["XADD", "k", "2-1", "a", "2", "b", "3"]], []),
    ("stream-deleted", [["XADD", "k", "1-1", "a", "1"], ["XADD", "k", "2-1", "a", "2"],
                        ["XADD", "k", "3-1", "f", "v"], ["XDEL", "k", "2-1"]], []),
    ("stream-nodes", [["XADD", "k", "%d-0" % i, "f", str(i), "g", "x" * (i % 7)] for i in range(1, 30)],
     [["CONFIG", "SET", "stream-node-max-entries", "4"]]),
    ("stream-empty-group", [["XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"]], []),
    ("stream-groups", [
        ["XADD", "k", "1-1", "a", "1"], ["XADD", "k", "2-1", "a", "2"], ["XADD", "k", "3-1", "a", "3"],
        ["XGROUP", "CREATE", "k", "g", "0"], ["XGROUP", "CREATE", "k", "h", "0"],
        ["XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "STREAMS", "k", ">"],
        ["XREADGROUP", "GROUP", "g", "c2", "STREAMS", "k", ">"],
        ["XGROUP", "CREATECONSUMER", "k", "g", "c3"],
        ["XCLAIM", "k", "g", "c3", "0", "1-1", "TIME", "1600000000000", "RETRYCOUNT", "9"],
        ["XREADGROUP", "GROUP", "h", "Alice", "STREAMS", "k", ">"], ["XDEL", "k", "2-1"]], []),
    ("stream-setid", [["XADD", "k", "5-1", "a", "1"], ["XDEL", "k", "5-1"],
                      ["XSETID", "k", "9-9", "ENTRIESADDED", "40", "MAXDELETEDID", "7-0"]], []),
]


def record(server, outdir):
    tmp = tempfile.mkdtemp(prefix="wsim-seeds-")
    sock = os.path.join(tmp, "redis.sock")
    proc = subprocess.Popen([server, "--port", "0", "--unixsocket", sock, "--save", "",
                             "--appendonly", "no", "--dir", tmp],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if os.path.exists(sock):
                break
            time.sleep(0.02)
        c = Conn(sock)
        seeds = {}
        for name, setup, config in RECORDED:
            c.ok("FLUSHALL")
            c.ok("CONFIG", "SET", "list-max-listpack-size", "-2")
            c.ok("CONFIG", "SET", "list-compress-depth", "0")
            c.ok("CONFIG", "SET", "stream-node-max-entries", "100")
            for cmd in config + setup:
                c.ok(*cmd)
            seeds[name] = c.ok("DUMP", "k")[:-8]
        c.ok("CONFIG", "SET", "stream-node-max-entries", "100")

        # The older formats 7.0 still reads, built by hand.
        crafted = {
            "list-linked": b"\x01" + rdb_len(3) + rdb_str("a") + rdb_str("12") + rdb_str("b"),
            "zset-v1": b"\x03" + rdb_len(2) + rdb_str("a") + b"\x011" + rdb_str("b") + b"\x032.5",
            "zset-v1-inf": b"\x03" + rdb_len(2) + rdb_str("a") + b"\xfe" + rdb_str("b") + b"\xff",
            "list-ziplist": b"\x0a" + rdb_str(ziplist(["a", 7, "b", 1000])),
            "zset-ziplist": b"\x0c" + rdb_str(ziplist(["a", "1", "b", "2.5"])),
            "hash-ziplist": b"\x0d" + rdb_str(ziplist(["f", "v", "n", 12])),
            "list-quicklist-v1": b"\x0e" + rdb_len(2) + rdb_str(ziplist(["a", 1])) +
                                 rdb_str(ziplist(["b", 300, "c"])),
            "stream-v1": stream_v1(seeds["stream-groups"] + b""),
            "stream-v1-plain": stream_v1(seeds["stream-deleted"]),
        }
        for name, body in crafted.items():
            if not name.startswith("stream"):
                body = body + VERSION
            seeds[name] = body

        # The payloads that crashed the fake (issue 26): one pending entry and no consumer,
        # and one pending entry given to two consumers.  Built from a group with one
        # entry pending for c1; Redis refuses both (the first only when it sanitizes).
        c.ok("FLUSHALL")
        c.ok("XADD", "k", "1-1", "a", "1")
        c.ok("XGROUP", "CREATE", "k", "g", "0")
        c.ok("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "k", ">")
        p = c.ok("DUMP", "k")[:-8]
        body, version = p[:-2], p[-2:]
        tail = 1 + 3 + 8 + 1 + 16  # the consumers: count, "c1", seen time, count, raw id
        assert body[-tail:-tail + 4] == b"\x01\x02c1"
        one = body[-tail + 1:]
        seeds["bad-pending-without-consumer"] = body[:-tail] + b"\x00" + version
        seeds["bad-pending-of-two-consumers"] = (body[:-tail] + b"\x02" + one +
                                                 b"\x02c2" + one[3:] + version)

        # Each seed restores in redis-server (the bad ones are refused).
        c.ok("CONFIG", "SET", "sanitize-dump-payload", "yes")
        for name, body in seeds.items():
            full = body + crc64(body).to_bytes(8, "little")
            r = c.cmd("RESTORE", "x", "0", full, "REPLACE")
            refused = isinstance(r, Exception)
            if refused != name.startswith("bad-"):
                raise RuntimeError("seed %s: redis-server answered %r" % (name, r))

        os.makedirs(outdir, exist_ok=True)
        for name, body in sorted(seeds.items()):
            with open(os.path.join(outdir, name), "wb") as f:
                f.write(b"\x00" + body)
        # A few with the other RESTORE forms and the second pass.
        for opts, name in ((1, "stream-groups"), (2, "zset-skiplist"), (3, "hash-listpack"),
                           (4, "stream-nodes"), (5, "list-compressed")):
            with open(os.path.join(outdir, "%s.opt%d" % (name, opts)), "wb") as f:
                f.write(bytes([opts]) + seeds[name])
        print("wrote %d seeds to %s" % (len(seeds) + 5, outdir))
    finally:
        proc.terminate()
        proc.wait()
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)


def crc64(data, crc=0):
    """Redis's CRC64 (Jones polynomial, reflected, no final xor)."""
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x95AC9329AC4BC9B5 if crc & 1 else 0)
    return crc


def main(argv):
    server = "redis-server"
    args = argv[1:]
    if len(args) >= 2 and args[0] == "--redis-server":
        server, args = args[1], args[2:]
    if len(args) != 1:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    record(server, args[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
