#!/usr/bin/env python3
"""record_command_table.py -- records redis-server's command metadata as C data.

Starts the redis-server named by $WSIM_REDIS_SERVER (default /usr/bin/redis-server, which
must be 7.0.15) on a unix socket in a temporary directory, asks it in RESP3 for
COMMAND LIST, then COMMAND INFO and COMMAND DOCS of every top-level command, and writes
fake_redis/src/cmd_meta_table.c: one row per command and subcommand (the structs are in
fake_redis/src/cmd_meta.h), sorted by full name, holding

  - the fields the fake computes with: arity, flags, ACL categories, first/last/step key,
    the key specs (begin_search / find_keys and their flags), Redis's getkeys function
    (read from src/commands/*.json of the same version, the one field COMMAND does not
    show; pass the directory with --json-dir);
  - the recorded reply bytes (RESP3) of the command's COMMAND INFO entry without its
    subcommands, and of its COMMAND DOCS map without its subcommands, which the fake
    sends as they are (RESP3) or converted to RESP2 (maps and sets become arrays).

Before writing, each RESP3 recording converted to RESP2 is checked against the same
server's RESP2 reply, so the conversion the fake makes is the one Redis makes.

Usage: tools/record_command_table.py [--json-dir DIR] [OUT.c]
       (default OUT: fake_redis/src/cmd_meta_table.c next to this script's repository)
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
GETKEYS = ["", "bitfieldGetKeys", "blmpopGetKeys", "evalGetKeys", "functionGetKeys",
           "georadiusGetKeys", "lmpopGetKeys", "migrateGetKeys", "setGetKeys",
           "sintercardGetKeys", "sortGetKeys", "sortROGetKeys", "xreadGetKeys",
           "zmpopGetKeys", "zunionInterDiffGetKeys", "zunionInterDiffStoreGetKeys",
           "bzmpopGetKeys"]


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


def cstr(b):
    """A C string literal for bytes b, split in lines of about 100 characters."""
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
    out.append(line + '"')
    return "\n    ".join(out)


def bits(names, table, what):
    v = 0
    for n in names:
        if n not in table:
            raise SystemExit("unknown %s %r: add it to the generator and cmd_meta.h" % (what, n))
        v |= 1 << table.index(n)
    return v


def keyspec(node):
    flags = bits([f.v for f in mapget(node, "flags").v], KEYFLAGS, "key spec flag")
    bs, fk = mapget(node, "begin_search"), mapget(node, "find_keys")
    bst, bss = mapget(bs, "type").v.decode(), mapget(bs, "spec")
    fkt, fks = mapget(fk, "type").v.decode(), mapget(fk, "spec")
    if bst == "index":
        b = ("FRI_BS_INDEX", int(mapget(bss, "index").v), "NULL")
    elif bst == "keyword":
        b = ("FRI_BS_KEYWORD", int(mapget(bss, "startfrom").v),
             '"%s"' % mapget(bss, "keyword").v.decode())
    else:
        b = ("FRI_BS_UNKNOWN", 0, "NULL")
    if fkt == "range":
        f = ("FRI_FK_RANGE", int(mapget(fks, "lastkey").v), int(mapget(fks, "keystep").v),
             int(mapget(fks, "limit").v))
    elif fkt == "keynum":
        f = ("FRI_FK_KEYNUM", int(mapget(fks, "keynumidx").v), int(mapget(fks, "firstkey").v),
             int(mapget(fks, "keystep").v))
    else:
        f = ("FRI_FK_UNKNOWN", 0, 0, 0)
    return "{0x%x, %s, %d, %s, %s, %d, %d, %d}" % ((flags,) + b + f)


def main():
    args = sys.argv[1:]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    json_dir = "/tmp/redis-7.0.15/src/commands"
    if args[:1] == ["--json-dir"]:
        json_dir, args = args[1], args[2:]
    out = args[0] if args else os.path.join(root, "fake_redis/src/cmd_meta_table.c")
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
    r["flags"] = bits([x.v for x in e[2].v], FLAGS, "command flag")
    r["first"], r["last"], r["step"] = int(e[3].v), int(e[4].v), int(e[5].v)
    r["acl"] = bits([x.v[1:] for x in e[6].v], ACL, "ACL category")
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


def write(out, rows, getkeys, count):
    names = sorted(rows)
    index = {n: i for i, n in enumerate(names)}
    lines = []
    w = lines.append
    w("/* cmd_meta_table.c -- GENERATED by tools/record_command_table.py from redis-server")
    w(" * 7.0.15's COMMAND INFO and COMMAND DOCS replies (RESP3) and the get_keys_function")
    w(" * of its src/commands json files.  Do not edit: run the script again (docs/fake_redis.md,")
    w(" * \"Command metadata\").  %d top-level commands, %d rows. */" % (count, len(names)))
    w('#include "cmd_meta.h"')
    w("")
    for n in names:
        r = rows[n]
        if r["specs"]:
            w("static const fri_keyspec ks_%d[] = {%s};" % (index[n], ", ".join(r["specs"])))
    w("")
    w("const fri_cmd_meta fri_cmd_meta_table[] = {")
    for n in names:
        r = rows[n]
        parent = index[n.split("|")[0]] if "|" in n else -1
        subs = sorted(r["subs"])
        first_sub = index[subs[0]] if subs else -1
        gk = getkeys.get(n, "")
        if gk not in GETKEYS:
            raise SystemExit("unknown getkeys function %s" % gk)
        w("    {\"%s\", %d, %d, %d, %d, 0x%x, 0x%x, %d, %d, %d, %d, %s, %d, %d," % (
            n, parent, first_sub, len(subs), r["arity"], r["flags"], r["acl"], r["first"],
            r["last"], r["step"], len(r["specs"]), "ks_%d" % index[n] if r["specs"] else "NULL",
            GETKEYS.index(gk), r["docs_n"]))
        w("     %d, %s," % (len(r["info"]), cstr(r["info"])))
        w("     %d, %s}," % (len(r["docs"]), cstr(r["docs"])))
    w("};")
    w("")
    w("const size_t fri_cmd_meta_count = %d;" % len(names))
    w("const size_t fri_cmd_meta_toplevel = %d;" % count)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("%s: %d rows, %d top-level" % (out, len(names), count))


if __name__ == "__main__":
    main()
