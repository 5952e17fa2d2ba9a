#!/usr/bin/env python3
"""hostile_probe.py -- fakeredis-server and wsim as a hostile user sees them.

Usage: tools/hostile_probe.py [--quick] [--seed N] [--redis-server PATH] [--wsim PATH]
                              [--scenarios DIR] [--payloads DIR] FAKEREDIS_SERVER

Starts the fakeredis-server binary given (and, for the byte-for-byte comparisons, a
redis-server) on a unix socket and a loopback port in a temporary directory, and runs
the kinds of abuse issue 26 names, each as a phase:

  garbage      connections sending random bytes, then closing or idling
  malformed    every malformed RESP frame in MALFORMED, sent to both servers: the bytes
               each answers before it closes the connection must be the same
  slowloris    connections that send a command one byte at a time, slowly, while a
               good client measures how long PING takes
  idle         thousands of connections that say nothing
  slow-readers clients that ask for large replies and never read them: the server
               closes them at their output limit
  flood        one pipeline of many commands, every reply read
  publish      PUBLISHes of 1 KiB with nobody subscribed (FAKE.PUBLISHED's log)
  payloads     DUMP payloads (the fuzz_restore seeds) mutated under a recomputed
               checksum, RESTOREd, then read with the commands of their type
  scenarios    mutated scenario files run by `wsim run` (exit 0, 1 or 2, never a signal,
               within a bound)

After each phase the server must still answer PING within a second, and its resident
memory (VmRSS) must stay within a bound of what it held before the probe (the phases let
go of what they made). Every failure prints the phase, what was sent, and the seed that
reproduces the run. Exit status: 0 when every phase held, 1 otherwise, 2 on bad usage.

--quick runs small counts (a ctest test does, in about 20 seconds); without it the
counts are issue 26's own (10,000 garbage connections, 5,000 idle ones, a 1,000,000-
command flood, 200,000 PUBLISHes, 2,000 mutated scenarios ...), a few minutes.
"""
import argparse
import os
import random
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

# ----- The servers --------------------------------------------------------------------------


class Server:
    """A server process on a unix socket (and, for the fake, a loopback port)."""

    def __init__(self, argv, sock, kind):
        self.kind = kind
        self.sock = sock
        self.port = None
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        deadline = time.time() + 10
        while time.time() < deadline:
            if kind == "fake":
                line = self.proc.stdout.readline()
                if not line:
                    break
                m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
                if m:
                    self.port = int(m.group(1))
                if "ready" in line:
                    return
            elif os.path.exists(sock):
                try:
                    c = connect_unix(sock)
                    c.close()
                    return
                except OSError:
                    pass
                time.sleep(0.02)
            else:
                time.sleep(0.02)
        raise RuntimeError("%s did not start" % argv[0])

    def alive(self):
        return self.proc.poll() is None

    def rss_kb(self):
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return -1

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def connect_unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Reader:
    """RESP2 replies from a socket, with the bytes read past a reply kept for the next."""

    def __init__(self, sock, timeout=5.0):
        self.s = sock
        self.buf = b""
        self.timeout = timeout

    def _fill(self):
        self.s.settimeout(self.timeout)
        d = self.s.recv(1 << 16)
        if not d:
            raise EOFError("closed")
        self.buf += d

    def _end(self, at):
        """The index just past the reply starting at self.buf[at]."""
        while True:
            e = self.buf.find(b"\r\n", at)
            if e >= 0:
                break
            self._fill()
        kind = self.buf[at:at + 1]
        if kind in (b"+", b"-", b":"):
            return e + 2
        n = int(self.buf[at + 1:e])
        if kind == b"$":
            if n < 0:
                return e + 2
            while len(self.buf) < e + 2 + n + 2:
                self._fill()
            return e + 2 + n + 2
        if kind == b"*":
            at = e + 2
            for _ in range(max(n, 0)):
                at = self._end(at)
            return at
        raise ValueError("not RESP: %r" % self.buf[at:at + 20])

    def reply(self):
        end = self._end(0)
        r, self.buf = self.buf[:end], self.buf[end:]
        return r

    def call(self, *args):
        self.s.sendall(resp(*args))
        return self.reply()


def ping_ms(srv):
    """The time one PING takes on a new connection, in ms (None when it fails)."""
    t = time.time()
    try:
        s = connect_unix(srv.sock)
        r = Reader(s, 1.0).call("PING")
        s.close()
        if r != b"+PONG\r\n":
            return None
    except (OSError, EOFError, ValueError):
        return None
    return (time.time() - t) * 1000


def read_until_closed(s, timeout=3.0):
    """Every byte s sends until it closes (or timeout passes: then None)."""
    s.settimeout(timeout)
    out = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return out
            out += d
    except socket.timeout:
        return None
    except ConnectionResetError:
        return out


# ----- The phases ---------------------------------------------------------------------------

# Malformed frames: what a client sends; both servers must answer the same bytes and close.
MALFORMED = [
    b"*x\r\n", b"*-5\r\n$1\r\na\r\n", b"*1\r\n$-1\r\n", b"*1\r\n$x\r\n", b"*1\r\n$1x\r\n",
    b"*1\r\n$536870913\r\n", b"*1\r\n$99999999999999999999\r\n", b"*1048577\r\n",
    b"*2147483648\r\n", b"*99999999999999999999\r\n", b"*1\r\nx\r\n", b"*2\r\n$4\r\nPING\r\n:1\r\n",
    b"*1\r\n*1\r\n", b"*1\r\n$4\r\nPINGxx\r\n", b"PING \"a\r\n", b"PING 'a\r\n",
    b"SET k \"a\"b\r\n", b"ECHO \"\\x4\"\r\n", b"*\r\n", b"$4\r\nPING\r\n", b"*1\r\n$\r\n",
    b"*+1\r\n$4\r\nPING\r\n", b"* 1\r\n$4\r\nPING\r\n", b"*1 \r\n$4\r\nPING\r\n",
    b"*1\r\n$4 \r\nPING\r\n", b"*01\r\n$4\r\nPING\r\n", b"*1\r\n$04\r\nPING\r\n",
    b"*1\n$4\nPING\n", b"*0\r\n*1\r\n$4\r\nPING\r\n", b"\r\n\r\n*1\r\n$4\r\nPING\r\n",
    b"*1\r\n$4\r\nPING\r\n*1\r\n$-0\r\n", b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$-1\r\n",
    b"*1\r\n$1\r\n\x00\r\n", b"\x00\x01\x02\xff\r\n", b"A" * 70000,
    b"*1\r\n$70000\r\n" + b"P" * 100,
]


def phase_malformed(fake, real, rnd, n):
    bad = []
    for frame in MALFORMED:
        got = {}
        for srv in (fake, real):
            if srv is None:
                continue
            s = connect_unix(srv.sock)
            s.sendall(frame)
            got[srv.kind] = read_until_closed(s, 0.5)
            s.close()
        if real is not None and got["fake"] != got["real"]:
            bad.append("frame %r: fake %r, redis-server %r" % (frame[:40], got["fake"], got["real"]))
    return bad, "%d frames, each compared with redis-server" % len(MALFORMED) if real else \
        "%d frames" % len(MALFORMED)


def phase_garbage(fake, real, rnd, n):
    conns = []
    for i in range(n):
        try:
            s = connect_unix(fake.sock) if i % 2 or fake.port is None else \
                socket.create_connection(("127.0.0.1", fake.port))
        except OSError as e:
            return ["connection %d refused: %s" % (i, e)], ""
        s.setblocking(False)
        data = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 512)))
        try:
            s.send(data)
        except OSError:
            pass
        if rnd.random() < 0.3:
            conns.append(s)  # left open a while
        else:
            s.close()
        if len(conns) > 200:
            for c in conns:
                c.close()
            conns = []
    for c in conns:
        c.close()
    return [], "%d connections of random bytes" % n


def phase_slowloris(fake, real, rnd, n):
    conns = [connect_unix(fake.sock) for _ in range(n)]
    cmd = resp("SET", "slow", "x" * 64)
    worst = 0.0
    for k in range(len(cmd)):
        for s in conns:
            s.send(cmd[k:k + 1])
        if k % 8 == 0:
            t = ping_ms(fake)
            if t is None:
                return ["PING failed while %d clients sent one byte at a time" % n], ""
            worst = max(worst, t)
        time.sleep(0.002)
    bad = []
    for s in conns:
        r = Reader(s).reply()
        if r != b"+OK\r\n":
            bad.append("a slow client's SET got %r" % r)
            break
        s.close()
    if worst > 500:
        bad.append("PING took %.0f ms while %d clients trickled" % (worst, n))
    return bad, "%d clients, one byte each 2 ms; PING at worst %.1f ms" % (n, worst)


def phase_idle(fake, real, rnd, n):
    conns = []
    try:
        for _ in range(n):
            conns.append(connect_unix(fake.sock))
    except OSError as e:
        for s in conns:
            s.close()
        return ["idle connection %d: %s" % (len(conns), e)], ""
    t = ping_ms(fake)
    for s in conns:
        s.close()
    if t is None:
        return ["PING failed with %d idle clients" % n], ""
    return [], "%d idle clients; PING %.1f ms" % (n, t)


def phase_slow_readers(fake, real, rnd, n):
    """Clients that ask for 64 MiB of replies and read none are closed at the output limit
    the probe sets (8 MiB hard), and the server's memory stays near n times that."""
    setup = Reader(connect_unix(fake.sock))
    setup.call("CONFIG", "SET", "client-output-buffer-limit", "normal 8mb 4mb 1")
    setup.call("SET", "big", "v" * (1 << 20))
    conns = []
    for _ in range(n):
        s = connect_unix(fake.sock)
        s.setblocking(False)
        try:
            s.send(resp("GET", "big") * 64)
        except OSError:
            pass
        conns.append(s)
    peak = 0
    closed = 0
    deadline = time.time() + 10
    while time.time() < deadline and closed < n:
        peak = max(peak, fake.rss_kb())
        closed = 0
        for s in conns:
            # a client the server closed: its socket reads EOF once the kernel's buffer
            # (what the server wrote before the limit) is drained
            try:
                while True:
                    d = s.recv(1 << 16)
                    if not d:
                        closed += 1
                        break
                    if len(d) < (1 << 16):
                        break
            except BlockingIOError:
                pass
            except ConnectionResetError:
                closed += 1
        time.sleep(0.05)
    for s in conns:
        s.close()
    setup.call("DEL", "big")
    setup.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
    setup.s.close()
    bad = []
    if closed < n:
        bad.append("%d of %d slow readers still open past their output limit" % (n - closed, n))
    return bad, "%d clients asked for 64 MiB each and read none: closed at 8 MiB, peak %d kB" % (
        n, peak)


def phase_flood(fake, real, rnd, n):
    s = connect_unix(fake.sock)
    chunk = resp("INCR", "flood") * 1000
    sent = 0
    got = b""
    replies = 0
    s.setblocking(False)
    want = n
    while replies < want:
        if sent < want:
            try:
                k = s.send(chunk)
                if k == len(chunk):
                    sent += 1000
                else:
                    # rest of the chunk, blocking
                    s.setblocking(True)
                    s.sendall(chunk[k:])
                    s.setblocking(False)
                    sent += 1000
            except BlockingIOError:
                pass
        r, _, _ = select.select([s], [], [], 5)
        if not r:
            return ["the flood stalled after %d replies" % replies], ""
        d = s.recv(1 << 20)
        if not d:
            return ["the server closed the flooding client after %d replies" % replies], ""
        got += d
        replies += got.count(b"\r\n")
        got = got[got.rfind(b"\r\n") + 2:] if b"\r\n" in got else got
    s.setblocking(True)
    rd = Reader(s)
    r = rd.call("GET", "flood")
    rd.call("DEL", "flood")
    s.close()
    if r != b"$%d\r\n%d\r\n" % (len(str(n)), n):
        return ["after %d INCRs the counter reads %r" % (n, r)], ""
    return [], "%d pipelined commands, every reply read" % n


def phase_publish(fake, real, rnd, n):
    rd = Reader(connect_unix(fake.sock))
    rd.call("FAKE.PUBLISHED", "CLEAR")
    payload = b"p" * 1024
    batch = resp("PUBLISH", "ch", payload) * 1000
    peak = 0
    for k in range(n // 1000):
        rd.s.sendall(batch)
        for _ in range(1000):
            rd.reply()
        if k % 20 == 0:
            peak = max(peak, fake.rss_kb())
    info = rd.call("FAKE.PUBLISHED", "INFO")
    rd.call("FAKE.PUBLISHED", "CLEAR")
    rd.s.close()
    m = re.search(rb"messages\r\n:(\d+)\r\n.*bytes\r\n:(\d+)\r\n.*dropped\r\n:(\d+)", info, re.S)
    if not m:
        return ["FAKE.PUBLISHED INFO answered %r" % info[:80]], ""
    kept, held, dropped = (int(x) for x in m.groups())
    bad = []
    if held > 16 << 20 or kept + dropped != n:
        bad.append("the published log holds %d messages (%d bytes), dropped %d of %d" %
                   (kept, held, dropped, n))
    return bad, "%d PUBLISHes of 1 KiB: %d kept (%d bytes), %d dropped; peak %d kB" % (
        n, kept, held, dropped, peak)


def crc64(data):
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x95AC9329AC4BC9B5 if crc & 1 else 0)
    return crc


READS = {
    b"string": [["GET", "x"], ["STRLEN", "x"], ["PFCOUNT", "x"], ["BITCOUNT", "x"]],
    b"list": [["LRANGE", "x", "0", "-1"], ["LPOP", "x"], ["LINDEX", "x", "-1"]],
    b"set": [["SMEMBERS", "x"], ["SPOP", "x"], ["SRANDMEMBER", "x", "-3"]],
    b"hash": [["HGETALL", "x"], ["HRANDFIELD", "x", "-3"]],
    b"zset": [["ZRANGE", "x", "0", "-1", "WITHSCORES"], ["ZPOPMIN", "x"]],
    b"stream": [["XINFO", "STREAM", "x", "FULL"], ["XRANGE", "x", "-", "+"],
                ["XINFO", "GROUPS", "x"]],
}


def phase_payloads(fake, real, rnd, n, seeds):
    if not seeds:
        return [], "no seed payloads given (--payloads)"
    rd = Reader(connect_unix(fake.sock))
    accepted = 0
    for i in range(n):
        body = bytearray(rnd.choice(seeds))
        for _ in range(rnd.randint(1, 4)):
            if not body:
                break
            at = rnd.randrange(len(body))
            body[at] = rnd.getrandbits(8)
        body = bytes(body)
        p = body + crc64(body).to_bytes(8, "little")
        r = rd.call("RESTORE", "x", "0", p, "REPLACE")
        if r == b"+OK\r\n":
            accepted += 1
            t = rd.call("TYPE", "x")
            for cmd in READS.get(t[1:-2], []):
                rd.call(*cmd)
            rd.call("DEL", "x")
        elif not r.startswith(b"-ERR"):
            return ["RESTORE answered %r to %s" % (r, p.hex())], ""
        if not fake.alive():
            return ["the server died on payload %s" % p.hex()], ""
    rd.s.close()
    return [], "%d mutated payloads, %d accepted and read" % (n, accepted)


def phase_scenarios(fake, real, rnd, n, wsim, files, tmp):
    if not wsim or not files:
        return [], "no wsim or scenarios given"
    bad = []
    words = ["read", "ack", "drop", "retry", "expect", "produce", "subscribe", "queue",
             "\"", "'", "=>", "\\x", "--", "..", ":", "#", "\t", "  ", "e1", "$e1",
             "9999999999999999999999", "-1", "\x00", "\xff"]
    mutant = os.path.join(tmp, "mutant.wsim")
    worst = 0.0
    for i in range(n):
        text = open(rnd.choice(files), "rb").read().decode("utf-8", "replace")
        lines = text.split("\n")
        for _ in range(rnd.randint(1, 5)):
            k = rnd.randrange(len(lines))
            op = rnd.random()
            if op < 0.3:
                del lines[k]
            elif op < 0.6:
                lines.insert(k, lines[rnd.randrange(len(lines))])
            else:
                toks = lines[k].split(" ")
                toks[rnd.randrange(len(toks))] = rnd.choice(words)
                lines[k] = " ".join(toks)
        with open(mutant, "w", encoding="utf-8", errors="replace") as f:
            f.write("\n".join(lines))
        t = time.time()
        try:
            rc = subprocess.run([wsim, "run", mutant], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, timeout=30).returncode
        except subprocess.TimeoutExpired:
            shutil.copy(mutant, mutant + ".hang")
            bad.append("wsim run hung on a mutant (kept as %s.hang)" % mutant)
            break
        worst = max(worst, time.time() - t)
        if rc not in (0, 1, 2):
            keep = os.path.join(tmp, "mutant-%d.wsim" % i)
            shutil.copy(mutant, keep)
            bad.append("wsim run exited %d on a mutant (%s)" % (rc, keep))
            break
    return bad, "%d mutated scenarios, exit 0/1/2 each, the slowest %.2f s" % (n, worst)


# ----- Running ------------------------------------------------------------------------------

COUNTS = {  # quick, full (issue 26's own figures)
    "garbage": (300, 10000), "malformed": (1, 1), "slowloris": (20, 200),
    "idle": (300, 5000), "slow-readers": (4, 16), "flood": (50000, 1000000),
    "publish": (20000, 200000), "payloads": (300, 5000), "scenarios": (40, 2000),
}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("fake")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--redis-server", default=shutil.which("redis-server"))
    ap.add_argument("--wsim")
    ap.add_argument("--scenarios")
    ap.add_argument("--payloads")
    ap.add_argument("--only", action="append", help="run only this phase (repeatable)")
    ap.add_argument("--rss-slack-mb", type=int, default=64,
                    help="how far resident memory may grow over the probe (default 64; "
                         "an AddressSanitizer build keeps freed memory in quarantine)")
    args = ap.parse_args(argv[1:])
    rnd = random.Random(args.seed)
    tmp = tempfile.mkdtemp(prefix="wsim-probe-")
    fake = real = None
    status = 0
    try:
        fake = Server([args.fake, "--port", "0", "--unixsocket", os.path.join(tmp, "f.sock"),
                       "--maxclients", "10000"], os.path.join(tmp, "f.sock"), "fake")
        if args.redis_server:
            real = Server([args.redis_server, "--port", "0", "--unixsocket",
                           os.path.join(tmp, "r.sock"), "--save", "", "--appendonly", "no",
                           "--dir", tmp], os.path.join(tmp, "r.sock"), "real")
        seeds = []
        if args.payloads:
            for name in sorted(os.listdir(args.payloads)):
                with open(os.path.join(args.payloads, name), "rb") as f:
                    seeds.append(f.read()[1:])
        files = []
        if args.scenarios:
            for root, _, names in os.walk(args.scenarios):
                files += [os.path.join(root, x) for x in sorted(names) if x.endswith(".wsim")]
        rss0 = fake.rss_kb()
        print("hostile probe, seed %d%s: fakeredis-server pid %d, %d kB resident" %
              (args.seed, " (quick)" if args.quick else "", fake.proc.pid, rss0))
        phases = [
            ("garbage", phase_garbage), ("malformed", phase_malformed),
            ("slowloris", phase_slowloris), ("idle", phase_idle),
            ("slow-readers", phase_slow_readers), ("flood", phase_flood),
            ("publish", phase_publish),
            ("payloads", lambda f, r, rn, n: phase_payloads(f, r, rn, n, seeds)),
            ("scenarios", lambda f, r, rn, n: phase_scenarios(f, r, rn, n, args.wsim, files, tmp)),
        ]
        for name, fn in phases:
            if args.only and name not in args.only:
                continue
            n = COUNTS[name][0 if args.quick else 1]
            t = time.time()
            try:
                bad, what = fn(fake, real, rnd, n)
            except (OSError, EOFError, ValueError) as e:
                bad, what = ["%s: %s" % (type(e).__name__, e)], ""
            dt = time.time() - t
            if not fake.alive():
                bad.append("fakeredis-server died (exit %s)" % fake.proc.returncode)
            elif ping_ms(fake) is None:
                bad.append("fakeredis-server does not answer PING after the phase")
            rss = fake.rss_kb()
            # what a phase leaves behind must be let go: the allocator keeps some, the
            # server's own tables grow a little, 64 MB is far above both and far below
            # what an unbounded log or leak leaves in the full probe (214 MB for the old
            # published log)
            if rss > rss0 + args.rss_slack_mb * 1024:
                bad.append("resident memory %d kB after the phase (%d kB at the start)" %
                           (rss, rss0))
            print("  %-12s %s  (%.1f s, %d kB resident)" %
                  (name, "ok" if not bad else "FAILED", dt, rss))
            if what:
                print("               %s" % what)
            for b in bad:
                print("               " + b)
                status = 1
            if not fake.alive():
                break
        if status:
            print("reproduce: %s %s" % (sys.argv[0], " ".join(argv[1:])))
        else:
            print("every phase held")
    finally:
        for srv in (fake, real):
            if srv:
                srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
