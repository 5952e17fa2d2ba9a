#!/usr/bin/env python3
"""record_command_table.py -- records redis-server's command metadata as a data file.

Starts the redis-server named by $WSIM_REDIS_SERVER (default /usr/bin/redis-server, which
must be 7.0.15) on a unix socket in a temporary directory, asks it in RESP3 for
COMMAND LIST, then COMMAND INFO and COMMAND DOCS of every top-level command, and writes
fake_redis/data/cmd_meta.txt: one block per command and subcommand, sorted by full name,
holding

  - the fields the fake computes with: arity, flags, ACL categories, first/last/step key,
    the key specs (begin_search / find_keys and their flags), Redis's getkeys function
    (read from src/commands/*.json of the same version, the one field COMMAND does not
    show; pass the directory with --json-dir);
  - the recorded reply bytes (RESP3) of the command's COMMAND INFO entry without its
    subcommands, and of its COMMAND DOCS map without its subcommands, which the fake
    sends as they are (RESP3) or converted to RESP2 (maps and sets become arrays).

The build turns that file into C (fake_redis/tools/gen_cmd_meta.c writes
cmd_meta_table.c in the build directory; the structs are in fake_redis/src/cmd_meta.h),
so recording needs python and a redis-server, building neither.  The file's format is
described in its own header, which this script writes.

Before writing, each RESP3 recording converted to RESP2 is checked against the same
server's RESP2 reply, so the conversion the fake makes is the one Redis makes.

Usage: tools/record_command_table.py [--json-dir DIR] [OUT]
       (default OUT: fake_redis/data/cmd_meta.txt next to this script's repository)
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

FLAGS = ["write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript",
         "blocking", "loading", "stale", "skip_monitor", "skip_slowlog", "asking", "fast",
         "no_auth", "no_mandatory_keys", "no_async_loading", "no_multi", "movablekeys",
         "allow_busy"]
ACL = ["keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
       "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
       "dangerous", "connection", "transaction", "scripting"]
KEYFLAGS = ["RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key",
            "incomplete", "variable_flags"]
# Redis's getkeys functions, by the name of their FRI_GK_* constant in cmd_meta.h
GETKEYS = {"": "none", "bitfieldGetKeys": "bitfield", "blmpopGetKeys": "blmpop",
           "evalGetKeys": "eval", "functionGetKeys": "function",
           "georadiusGetKeys": "georadius", "lmpopGetKeys": "lmpop",
           "migrateGetKeys": "migrate", "setGetKeys": "set", "sintercardGetKeys": "sintercard",
           "sortGetKeys": "sort", "sortROGetKeys": "sort_ro", "xreadGetKeys": "xread",
           "zmpopGetKeys": "zmpop", "zunionInterDiffGetKeys": "zunioninterdiff",
           "zunionInterDiffStoreGetKeys": "zunioninterdiffstore", "bzmpopGetKeys": "bzmpop"}


class Node:
    """A parsed reply: its type byte, value (list for aggregates) and its byte span."""

    def __init__(self, t, v, start, end):
        self.t, self.v, self.start, self.end = t, v, start, end


def parse(buf, i):
    """Parses one RESP2/RESP3 reply at buf[i:]; returns (Node, next index)."""
    t = buf[i:i + 1]
    j = buf.index(b"\r\n", i)
    head = buf[i + 1:j]
    k = j + 2
    if t in (b"+", b"-", b":", b",", b"#", b"("):
        return Node(t, head.decode(), i, k), k
    if t == b"_":
        return Node(t, None, i, k), k
    if t in (b"$", b"="):
        n = int(head)
        if n < 0:
            return Node(t, None, i, k), k
        return Node(t, buf[k:k + n], i, k + n + 2), k + n + 2
    if t in (b"*", b"~", b">", b"%"):
        n = int(head)
        if n < 0:
            return Node(t, None, i, k), k
        if t == b"%":
            n *= 2
        items = []
        for _ in range(n):
            node, k = parse(buf, k)
            items.append(node)
        return Node(t, items, i, k), k
    raise ValueError("bad reply byte %r at %d" % (t, i))


def to_resp2(buf):
    """What the fake does at run time: RESP3 maps and sets written as RESP2 arrays."""
    out, i = [], 0
    while i < len(buf):
        j = buf.index(b"\r\n", i)
        t, head = buf[i:i + 1], buf[i + 1:j]
        if t == b"%":
            out.append(b"*%d\r\n" % (2 * int(head)))
        elif t == b"~":
            out.append(b"*" + head + b"\r\n")
        elif t == b"_":
            out.append(b"$-1\r\n")
        elif t == b"$" and int(head) >= 0:
            n = int(head)
            out.append(buf[i:j + 2 + n + 2])
            i = j + 2 + n + 2
            continue
        else:
            out.append(buf[i:j + 2])
        i = j + 2
    return b"".join(out)


class Conn:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.buf = b""

    def call(self, *args):
        req = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode() if isinstance(a, str) else a
            req += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(req)
        while True:
            try:
                node, k = parse(self.buf, 0)
            except (ValueError, IndexError):
                node = None
            if node is not None:
                raw = self.buf[:k]
                self.buf = self.buf[k:]
                return node, raw
            chunk = self.s.recv(1 << 20)
            if not chunk:
                raise RuntimeError("server closed the connection")
            self.buf += chunk


def mapget(node, key):
    for a, b in zip(node.v[0::2], node.v[1::2]):
        if a.v == key.encode() or a.v == key:
            return b
    return None


def quoted(b):
    """Bytes b as quoted pieces in C string syntax (the escapes of a backslash, a quote, CR,
    LF and three-digit octal ones only), a new piece after a newline once a piece is about
    90 characters long."""
    out, line = [], '"'
    for byte in b:
        c = chr(byte)
        if c == "\\":
            s = "\\\\"
        elif c == '"':
            s = '\\"'
        elif c == "\r":
            s = "\\r"
        elif c == "\n":
            s = "\\n"
        elif 32 <= byte < 127 and c != "?":
            s = c
        else:
            s = "\\%03o" % byte
        line += s
        if len(line) > 90 and c == "\n":
            out.append(line + '"')
            line = '"'
    if line != '"' or not out:
        out.append(line + '"')
    return out


def names(got, table, what):
    """The names got, checked against table (cmd_meta.h has a constant for each)."""
    for n in got:
        if n not in table:
            raise SystemExit("unknown %s %r: add it to this script and cmd_meta.h" % (what, n))
    return " ".join(got)


def keyspec(node):
    """A key spec line: its flags | begin_search | find_keys."""
    flags = names([f.v for f in mapget(node, "flags").v], KEYFLAGS, "key spec flag")
    bs, fk = mapget(node, "begin_search"), mapget(node, "find_keys")
    bst, bss = mapget(bs, "type").v.decode(), mapget(bs, "spec")
    fkt, fks = mapget(fk, "type").v.decode(), mapget(fk, "spec")
    if bst == "index":
        b = "index %d" % int(mapget(bss, "index").v)
    elif bst == "keyword":
        b = "keyword %s %d" % (mapget(bss, "keyword").v.decode(), int(mapget(bss, "startfrom").v))
    else:
        b = "unknown"
    if fkt == "range":
        f = "range %d %d %d" % (int(mapget(fks, "lastkey").v), int(mapget(fks, "keystep").v),
                                int(mapget(fks, "limit").v))
    elif fkt == "keynum":
        f = "keynum %d %d %d" % (int(mapget(fks, "keynumidx").v), int(mapget(fks, "firstkey").v),
                                 int(mapget(fks, "keystep").v))
    else:
        f = "unknown"
    return "%s | %s | %s" % (flags, b, f)


def main():
    args = sys.argv[1:]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    json_dir = "/tmp/redis-7.0.15/src/commands"
    if args[:1] == ["--json-dir"]:
        json_dir, args = args[1], args[2:]
    out = args[0] if args else os.path.join(root, "fake_redis/data/cmd_meta.txt")
    getkeys = {}
    for fn in os.listdir(json_dir):
        if not fn.endswith(".json"):
            continue
        with open(os.path.join(json_dir, fn)) as f:
            for name, d in json.load(f).items():
                full = name.lower()
                if "container" in d:
                    full = d["container"].lower() + "|" + full
                if "get_keys_function" in d:
                    getkeys[full] = d["get_keys_function"]

    server = os.environ.get("WSIM_REDIS_SERVER", "/usr/bin/redis-server")
    tmp = tempfile.mkdtemp(prefix="cmdmeta.")
    sock = os.path.join(tmp, "r.sock")
    proc = subprocess.Popen([server, "--port", "0", "--unixsocket", sock, "--save", "",
                             "--appendonly", "no", "--dir", tmp],
                            stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        c3, c2 = Conn(sock), Conn(sock)
        hello, _ = c3.call("HELLO", "3")
        version = mapget(hello, "version").v.decode()
        if version != "7.0.15":
            raise SystemExit("%s is redis %s, not 7.0.15" % (server, version))
        names, _ = c3.call("COMMAND", "LIST")
        count, _ = c3.call("COMMAND", "COUNT")
        rows = {}
        for n in [x.v.decode() for x in names.v]:
            if "|" in n:
                continue
            for kind in ("INFO", "DOCS"):
                node, raw = c3.call("COMMAND", kind, n)
                _, raw2 = c2.call("COMMAND", kind, n)
                if to_resp2(raw) != raw2:
                    raise SystemExit("COMMAND %s %s: RESP3 to RESP2 differs from RESP2" % (kind, n))
                if kind == "INFO":
                    collect_info(node.v[0], raw, rows, -1)
                else:
                    collect_docs(node.v[0], node.v[1], raw, rows)
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    write(out, rows, getkeys, int(count.v))


def collect_info(entry, raw, rows, parent):
    e = entry.v
    name = e[0].v.decode()
    r = rows.setdefault(name, {})
    r["name"] = name
    r["arity"] = int(e[1].v)
    r["flags"] = names([x.v for x in e[2].v], FLAGS, "command flag")
    r["first"], r["last"], r["step"] = int(e[3].v), int(e[4].v), int(e[5].v)
    r["acl"] = names([x.v[1:] for x in e[6].v], ACL, "ACL category")
    r["specs"] = [keyspec(s) for s in e[8].v]
    r["info"] = raw[e[1].start:e[8].end]
    r["subs"] = []
    if e[9].t == b"*":
        for sub in e[9].v:
            r["subs"].append(sub.v[0].v.decode())
            collect_info(sub, raw, rows, name)


def collect_docs(namenode, docmap, raw, rows):
    name = namenode.v.decode()
    r = rows.setdefault(name, {})
    kv = list(zip(docmap.v[0::2], docmap.v[1::2]))
    own = [(k, v) for k, v in kv if k.v != b"subcommands"]
    r["docs_n"] = len(own)
    r["docs"] = raw[own[0][0].start:own[-1][1].end] if own else b""
    for k, v in kv:
        if k.v == b"subcommands":
            for sn, sm in zip(v.v[0::2], v.v[1::2]):
                collect_docs(sn, sm, raw, rows)


HEADER = """\
# cmd_meta.txt -- Redis 7.0.15's description of its commands: recorded from redis-server
# 7.0.15's COMMAND INFO and COMMAND DOCS replies (RESP3) and the get_keys_function of its
# src/commands json files by tools/record_command_table.py (docs/fake_redis.md, "Command
# metadata").  Do not edit: record it again.  The build turns it into the C table of
# fake_redis/src/cmd_meta.h (fake_redis/tools/gen_cmd_meta.c).
#
# Format: lines; '#' starts a comment line.  "toplevel N" gives COMMAND COUNT; then one
# block per command or subcommand ("container|sub"), sorted by name (strcmp), each opened
# by "command NAME" and holding, in this order:
#   arity N                      Redis's arity (negative: at least)
#   flags NAME...                command flags (FRI_MF_*), as COMMAND INFO names them
#   acl NAME...                  ACL categories (FRI_ACL_*), without the '@'
#   keys FIRST LAST STEP         the legacy key range of COMMAND INFO
#   getkeys NAME                 Redis's getkeys function (FRI_GK_*), none for none
#   docs-fields N                pairs of the COMMAND DOCS map, subcommands left out
#   keyspec FLAGS | BEGIN | FIND one line per key spec: flags (FRI_KS_*), then
#                                "index POS", "keyword WORD STARTFROM" or "unknown", then
#                                "range LASTKEY STEP LIMIT", "keynum IDX FIRST STEP" or
#                                "unknown"
#   info "..."                   the RESP3 bytes of COMMAND INFO's elements 2 to 9
#   docs "..."                   the RESP3 bytes of the DOCS map's pairs
# A string is one or more quoted pieces, each continuing line indented; inside them only
# the escapes \\\\ \\" \\r \\n and three-digit octal ones.
"""


def write(out, rows, getkeys, count):
    lines = [HEADER + "toplevel %d" % count]
    w = lines.append
    for n in sorted(rows):
        r = rows[n]
        gk = getkeys.get(n, "")
        if gk not in GETKEYS:
            raise SystemExit("unknown getkeys function %s" % gk)
        w("")
        w("command %s" % n)
        w("arity %d" % r["arity"])
        w(("flags " + r["flags"]).rstrip())
        w(("acl " + r["acl"]).rstrip())
        w("keys %d %d %d" % (r["first"], r["last"], r["step"]))
        w("getkeys %s" % GETKEYS[gk])
        w("docs-fields %d" % r["docs_n"])
        for spec in r["specs"]:
            w("keyspec %s" % spec)
        for field in ("info", "docs"):
            pieces = quoted(r[field])
            w("%s %s" % (field, pieces[0]))
            for p in pieces[1:]:
                w("     %s" % p)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("%s: %d rows, %d top-level" % (out, len(rows), count))


if __name__ == "__main__":
    main()
