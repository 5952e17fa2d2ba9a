/* fuzz_commands.c -- arbitrary command sequences on libfakeredis (libFuzzer target).
 *
 * An input is a sequence of records run on one fresh fr_server with two fuzzed clients.
 * A record starting with a byte below 0x80 is a text line (up to '\n', or up to the next
 * byte >= 0x80):
 *
 *   XADD {s}a * f v          a command, split as redis-cli splits it (fr_split_line)
 *   @client 1                the next commands run on client 0 or 1
 *   @advance 1500            fr_clock_advance, in ms
 *   @blocking 1 on|off       real blocking for client 0 or 1 (fr_client_set_blocking)
 *   @expire                  fr_server_expire_blocked
 *   @unblock 0 [error]       fr_client_unblock
 *   @fault XACK 2            fr_fault_command(NAME, "ERR injected", TIMES)
 *   @cluster                 as the very first record: one-node cluster emulation
 *
 * Binary ops 120..127 write a Lua script from a small grammar (redis.call/pcall of
 * commands of every reply type, pcall, returns of every conversion: numbers, strings,
 * booleans, nil, tables, {err=}, {ok=}, {double=}, {big_number=}, {map=}, {set=},
 * {verbatim_string=}, a self-referencing table; error(), setresp, bounded loops, if, and
 * loops without end that the busy hook aborts) and EVAL or EVAL_RO it, or switch the
 * current client to RESP2 or RESP3.
 *
 * so the seed corpus is readable.  A record starting with a byte >= 0x80 is a binary
 * operation: its low bits pick a generator (a stream or group command with its options,
 * MULTI/EXEC/WATCH, any row of the command table with arguments from small alphabets,
 * the clock, blocking, faults) and the following bytes its choices.  The alphabets are
 * small on purpose (three stream keys, three groups, four consumers, the ids the run
 * generated) so that commands meet the same keys, groups and entries again.
 *
 * Properties checked:
 * - no crash, no sanitizer report, no leak (everything is freed at the end);
 * - every reply is a well-formed tree (check_reply); a script past the busy limit makes
 *   the other client's command answer -BUSY;
 * - after every command, every stream the command named (after EXEC, SWAPDB, MOVE,
 *   FLUSH*, every 16 commands and at the end: every stream of every database the run
 *   used) is internally consistent, through two independent paths: the inspection API
 *   of fakeredis.h (fr_stream_entries, fr_stream_meta_get, fr_stream_pending,
 *   fr_stream_consumer) and XINFO/XPENDING run on a third client that the input never
 *   drives.  See check_stream() for the list.
 *
 * The inspection client only runs read-only commands on keys the API found live, so it
 * expires nothing, wakes nobody and touches no WATCH: the fuzzed clients see the same
 * server they would see without it.  Faults are never armed on the commands it runs.
 * On a failed check the target prints the check, the commands run so far (replayable
 * with redis-cli) and aborts.  With FUZZ_VERBOSE set in the environment it prints every
 * command and its reply as it goes (to read what an input does).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fakeredis.h"
#include "fuzz_inspect.h"
#include "wsi_alloc.h"
#include "wsi_buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ----- Bounds ------------------------------------------------------------------------------ */

#define MAX_RECORDS 400   /* records run per input: the fuzzer wants short runs */
#define MAX_LINE 2048     /* a text record's longest line */
#define MAX_ARGS 64       /* arguments of a generated command */
#define MAX_IDS 16        /* generated ids remembered for later commands */
#define SWEEP_EVERY 16    /* commands between two sweeps of every stream */

/* ----- Reading the input -------------------------------------------------------------------- */

/* The unread rest of the input; reading past the end gives zeros, as libFuzzer's
 * FuzzedDataProvider does, so every input decodes to some run. */
typedef struct reader {
    const uint8_t *p; /* next byte */
    size_t n;         /* bytes left */
} reader;

/* The next byte, 0 at the end. */
static unsigned rd_u8(reader *r)
{
    if (r->n == 0)
        return 0;
    r->n--;
    return *r->p++;
}

/* A choice in [0, m) (m <= 256), from one byte. */
static unsigned rd_below(reader *r, unsigned m)
{
    return m ? rd_u8(r) % m : 0;
}

/* ----- The run's state ---------------------------------------------------------------------- */

/* One generated command: argument views into static alphabets, the input, the id ring
 * or the command's own scratch space. */
typedef struct gcmd {
    int argc;
    const char *argv[MAX_ARGS];
    size_t len[MAX_ARGS];
    char scratch[1024]; /* formatted arguments (numbers, split names) */
    size_t used;        /* bytes of scratch in use */
} gcmd;

/* Everything one input's run owns. */
typedef struct run {
    fr_server *srv;
    fr_client *cl[2];       /* the fuzzed clients */
    fi_ctx fi;              /* the inspection client and the consistency checks
                               (fuzz_inspect.h); fi.pel_bound: no XGROUP SETID or XCLAIM
                               FORCE yet */
    int cur;                /* the fuzzed client the next command runs on */
    int cluster;            /* cluster emulation: one database only */
    int multi_dirty;        /* a command was queued in MULTI: sweep after EXEC */
    unsigned dbmask;        /* databases a key may be in: selected by a fuzzed client or
                               named by MOVE/SWAPDB/COPY (the sweeps look nowhere else) */
    unsigned commands;      /* commands run so far */
    char ids[MAX_IDS][48];  /* ids the server generated (XADD, XAUTOCLAIM cursors) */
    unsigned nids;          /* ids remembered (the ring wraps) */
    int verbose;            /* FUZZ_VERBOSE is set: print every command and its reply */
    wsi_buf log;            /* the commands run, one per line, for the failure report */
} run;

/* Appends printf-style text (at most 511 bytes) to the run's log. */
static void log_add(run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_add(run *r, const char *fmt, ...)
{
    va_list ap;
    char tmp[512];
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    wsi_buf_xadd(&r->log, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* Logs a command as a redis-cli line ("c0> XADD "{s}a" * f v"), quoting every byte that
 * would not survive redis-cli's splitting. */
static void log_command(run *r, const char *who, int argc, const char *const *argv,
                        const size_t *len)
{
    char line[512];
    size_t w = 0;
    w += (size_t)snprintf(line, sizeof(line), "%s>", who);
    for (int i = 0; i < argc && w < sizeof(line) - 8; i++) {
        line[w++] = ' ';
        line[w++] = '"';
        for (size_t k = 0; k < len[i] && w < sizeof(line) - 8; k++) {
            unsigned char c = (unsigned char)argv[i][k];
            if (c == '"' || c == '\\') {
                line[w++] = '\\';
                line[w++] = (char)c;
            } else if (isprint(c)) {
                line[w++] = (char)c;
            } else {
                w += (size_t)snprintf(line + w, sizeof(line) - w, "\\x%02x", c);
            }
        }
        line[w++] = '"';
    }
    line[w] = '\0';
    log_add(r, "%s\n", line);
}

/* A failed check (the run's own, or fuzz_inspect's through fi.fail): prints what failed
 * and the run that led there, then aborts (libFuzzer saves the input as a crash; the
 * replay driver dies, failing its ctest test). */
static _Noreturn void run_failed(void *ud, const char *msg)
{
    run *r = ud;
    fprintf(stderr, "fuzz_commands: consistency check failed: %s\nafter these commands:\n%s",
            msg, r->log.p ? r->log.p : "");
    abort();
}

/* A failed check of the run's own: formats the message for run_failed. */
#define check_fail(r, ...) fi_fail(&(r)->fi, __VA_ARGS__)

/* ----- Alphabets ----------------------------------------------------------------------------- */

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Keys: three share a hash tag so multi-key commands also work under cluster emulation;
 * the first three are where the stream generators write. */
static const char *const KEYS[] = {"{s}a", "{s}b", "{s}c", "k", "l", "z", "h", "x"};
static const char *const GROUPS[] = {"g1", "g2", "g3"};
static const char *const CONSUMERS[] = {"c1", "c2", "c3", "Alice"};
static const char *const FIELDS[] = {"f", "g", "f2", ""};
/* Values: numbers at their edges, floats, specials, plain and awkward strings. */
static const char *const VALUES[] = {
    "0", "1", "-1", "2", "3", "10", "100", "1.5", "-0", "inf", "-inf", "+inf", "nan",
    "9223372036854775807", "-9223372036854775808", "18446744073709551615", "abc", "a b",
    "v", "x", "1e3", "0x10", "(1", "[a", "-", "+", "", "1700000000000", " 1", "3.0"};
/* Stream ids: special forms, edges, around the default clock, malformed. */
static const char *const IDS[] = {
    "0", "0-0", "0-1", "1", "1-0", "1-1", "1-2", "2-0", "5-0", "$", ">", "*", "-", "+",
    "(1-1", "(0-0", "1700000000000-0", "1700000000000", "1700000000001-*", "1-*",
    "18446744073709551615-18446744073709551615", "18446744073709551615-*", "abc", "-1",
    "0-18446744073709551615", "1700000000000-1", "1700000000000-2", "1700000003600-0"};
static const char *const COUNTS[] = {"0", "1", "2", "3", "5", "10", "100", "-1"};
static const char *const IDLES[] = {"0", "1", "10", "100", "1000", "3600000", "-1"};
static const char *const TIMES_MS[] = {"0", "1", "1700000000000", "1700000001000",
                                       "1800000000000", "-5"};
static const char *const BLOCK_MS[] = {"0", "10", "100", "1000"};
/* Words that turn up as options of many commands, for the generic generator. */
static const char *const KEYWORDS[] = {
    "COUNT", "BLOCK", "STREAMS", "GROUP", "MKSTREAM", "NOACK", "JUSTID", "FORCE", "IDLE",
    "TIME", "RETRYCOUNT", "LASTID", "MAXLEN", "MINID", "LIMIT", "NOMKSTREAM", "~", "=",
    "ENTRIESREAD", "ENTRIESADDED", "MAXDELETEDID", "FULL", "WITHSCORES", "BYSCORE",
    "BYLEX", "REV", "LEFT", "RIGHT", "BEFORE", "AFTER", "NX", "XX", "GT", "LT", "CH",
    "INCR", "EX", "PX", "EXAT", "PXAT", "KEEPTTL", "GET", "PERSIST", "MATCH", "TYPE",
    "WEIGHTS", "AGGREGATE", "SUM", "MIN", "MAX", "RANK", "MAXLEN", "LEN", "IDX",
    "MINMATCHLEN", "WITHMATCHLEN", "DB", "REPLACE", "ASYNC", "SYNC", "WITHVALUES"};
/* Commands a fault may be armed on: never one the inspection client runs. */
static const char *const FAULTABLE[] = {"XACK", "XADD", "XREADGROUP", "XCLAIM",
                                        "XAUTOCLAIM", "XGROUP", "EXEC", "INCR", "SET",
                                        "XDEL", "LPUSH", "MULTI", "XTRIM"};
/* What the inspection client runs: a fault on these would fail the checks, not the fake. */
static const char *const INSPECTION[] = {"XINFO", "XPENDING", "SELECT", "KEYS"};

/* ----- Generating commands ------------------------------------------------------------------- */

/* Adds an argument viewing len bytes at s (which must outlive the command's run);
 * arguments past MAX_ARGS are dropped. */
static void g_arg(gcmd *c, const char *s, size_t len)
{
    if (c->argc < MAX_ARGS) {
        c->argv[c->argc] = s;
        c->len[c->argc] = len;
        c->argc++;
    }
}

/* Adds a NUL-terminated argument. */
static void g_str(gcmd *c, const char *s)
{
    g_arg(c, s, strlen(s));
}

/* Adds a keyword and the argument after it ("COUNT", "5"; "XACK", a key).  The value is
 * drawn before the call, as it was when the two were added one by one: only the value
 * reads the input. */
static void g_kw(gcmd *c, const char *word, const char *value)
{
    g_str(c, word);
    g_str(c, value);
}

/* Adds an argument formatted into the command's scratch space. */
static void g_fmt(gcmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void g_fmt(gcmd *c, const char *fmt, ...)
{
    va_list ap;
    size_t room = sizeof(c->scratch) - c->used;
    va_start(ap, fmt);
    int n = vsnprintf(c->scratch + c->used, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room)
        return;
    g_arg(c, c->scratch + c->used, (size_t)n);
    c->used += (size_t)n + 1;
}

#define PICK(r, a) ((a)[rd_below((r), N_OF(a))])

/* A key: one of the three stream keys seven times in eight, else any key. */
static const char *a_skey(reader *in)
{
    unsigned b = rd_u8(in);
    return (b & 7) ? KEYS[(b >> 3) % 3] : KEYS[(b >> 3) % N_OF(KEYS)];
}

/* An id: one the run generated (when there are some) or one of the alphabet. */
static void g_id(gcmd *c, run *r, reader *in)
{
    unsigned b = rd_u8(in);
    if (b < 128 && r->nids > 0) {
        unsigned have = r->nids < MAX_IDS ? r->nids : MAX_IDS;
        g_str(c, r->ids[b % have]);
    } else {
        g_str(c, IDS[b % N_OF(IDS)]);
    }
}

/* A value: from the alphabet, or up to 15 raw bytes of the input. */
static void g_value(gcmd *c, reader *in)
{
    unsigned b = rd_u8(in);
    if (b >= 0xf0) {
        size_t want = b & 0x0f;
        if (want > in->n)
            want = in->n;
        g_arg(c, (const char *)in->p, want);
        in->p += want;
        in->n -= want;
    } else {
        g_str(c, VALUES[b % N_OF(VALUES)]);
    }
}

/* One argument of any kind, for the generic generator. */
static void g_any(gcmd *c, run *r, reader *in)
{
    switch (rd_below(in, 8)) {
    case 0: case 1: g_str(c, KEYS[rd_below(in, N_OF(KEYS))]); break;
    case 2: case 3: g_value(c, in); break;
    case 4: g_id(c, r, in); break;
    case 5: g_str(c, KEYWORDS[rd_below(in, N_OF(KEYWORDS))]); break;
    case 6: g_str(c, PICK(in, COUNTS)); break;
    default: g_str(c, rd_u8(in) & 1 ? PICK(in, GROUPS) : PICK(in, CONSUMERS)); break;
    }
}

/* The head of a consumer-group command: word, a stream key and a group ("XACK k g",
 * "CREATE k g" after XGROUP), drawn in that order. */
static void g_group_cmd(gcmd *c, reader *in, const char *word)
{
    g_kw(c, word, a_skey(in));
    g_str(c, PICK(in, GROUPS));
}

/* An option a command takes when bit is set in its flags byte: the word, and the alphabet
 * its value is drawn from (n 0: a bare word such as NOACK or JUSTID). */
typedef struct g_option {
    unsigned bit;              /* the flag that adds it */
    const char *word;          /* COUNT, BLOCK, JUSTID ... */
    const char *const *values; /* the alphabet of its argument, or NULL */
    unsigned n;                /* the alphabet's size, 0 for none */
} g_option;

/* Adds, in table order, the options of opts[0..n) whose bit is set in f, drawing each
 * value as it is added (the order the input is read in). */
static void g_options(gcmd *c, reader *in, unsigned f, const g_option *opts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!(f & opts[i].bit))
            continue;
        if (opts[i].n)
            g_kw(c, opts[i].word, opts[i].values[rd_below(in, opts[i].n)]);
        else
            g_str(c, opts[i].word);
    }
}

/* The trimming clause of XADD and XTRIM: MAXLEN count or MINID id (minid), then approx
 * ("~", "=", or NULL for none), the threshold drawn, and LIMIT n when limit is set. */
static void g_trim(gcmd *c, run *r, reader *in, int minid, const char *approx, int limit)
{
    g_str(c, minid ? "MINID" : "MAXLEN");
    if (approx)
        g_str(c, approx);
    if (minid)
        g_id(c, r, in);
    else
        g_str(c, PICK(in, COUNTS));
    if (limit)
        g_kw(c, "LIMIT", PICK(in, COUNTS));
}

/* XADD key [NOMKSTREAM] [MAXLEN|MINID [~|=] threshold [LIMIT n]] id field value ... */
static void gen_xadd(gcmd *c, run *r, reader *in)
{
    unsigned f = rd_u8(in);
    g_kw(c, "XADD", a_skey(in));
    if (f & 1)
        g_str(c, "NOMKSTREAM");
    if (f & 2) /* only the ~/= draw reads the input among the arguments */
        g_trim(c, r, in, f & 4, f & 8 ? (rd_u8(in) & 1 ? "~" : "=") : NULL, f & 16);
    if (f & 32)
        g_id(c, r, in);
    else
        g_str(c, "*");
    unsigned pairs = 1 + (f >> 6) % 3;
    for (unsigned i = 0; i < pairs; i++) {
        g_str(c, PICK(in, FIELDS));
        g_value(c, in);
    }
}

/* XREADGROUP GROUP g c [COUNT n] [BLOCK ms] [NOACK] STREAMS key [key] id [id] */
static void gen_xreadgroup(gcmd *c, run *r, reader *in)
{
    unsigned f = rd_u8(in);
    g_str(c, "XREADGROUP");
    g_kw(c, "GROUP", PICK(in, GROUPS));
    g_str(c, PICK(in, CONSUMERS));
    static const g_option opts[] = {
        {1, "COUNT", COUNTS, N_OF(COUNTS)}, {2, "BLOCK", BLOCK_MS, N_OF(BLOCK_MS)},
        {4, "NOACK", NULL, 0}};
    g_options(c, in, f, opts, N_OF(opts));
    g_str(c, "STREAMS");
    int two = (f & 8) != 0;
    g_str(c, a_skey(in));
    if (two)
        g_str(c, a_skey(in));
    for (int i = 0; i <= two; i++) {
        if (f & (16u << i))
            g_id(c, r, in);
        else
            g_str(c, ">");
    }
}

/* XACK key group id [id ...] */
static void gen_xack(gcmd *c, run *r, reader *in)
{
    unsigned n = 1 + rd_below(in, 3);
    g_group_cmd(c, in, "XACK");
    for (unsigned i = 0; i < n; i++)
        g_id(c, r, in);
}

/* XCLAIM key group consumer min-idle id... [IDLE ms] [TIME ms] [RETRYCOUNT n] [FORCE]
 * [JUSTID] [LASTID id] */
static void gen_xclaim(gcmd *c, run *r, reader *in)
{
    unsigned f = rd_u8(in);
    unsigned n = 1 + rd_below(in, 3);
    g_group_cmd(c, in, "XCLAIM");
    g_str(c, PICK(in, CONSUMERS));
    g_str(c, PICK(in, IDLES));
    for (unsigned i = 0; i < n; i++)
        g_id(c, r, in);
    static const g_option opts[] = {
        {1, "IDLE", IDLES, N_OF(IDLES)}, {2, "TIME", TIMES_MS, N_OF(TIMES_MS)},
        {4, "RETRYCOUNT", COUNTS, N_OF(COUNTS)}, {8, "FORCE", NULL, 0},
        {16, "JUSTID", NULL, 0}};
    g_options(c, in, f, opts, N_OF(opts));
    if (f & 32) {
        g_str(c, "LASTID");
        g_id(c, r, in);
    }
}

/* XAUTOCLAIM key group consumer min-idle start [COUNT n] [JUSTID] */
static void gen_xautoclaim(gcmd *c, run *r, reader *in)
{
    unsigned f = rd_u8(in);
    g_group_cmd(c, in, "XAUTOCLAIM");
    g_str(c, PICK(in, CONSUMERS));
    g_str(c, PICK(in, IDLES));
    if (f & 1)
        g_id(c, r, in);
    else
        g_str(c, "0-0");
    static const g_option opts[] = {{2, "COUNT", COUNTS, N_OF(COUNTS)}, {4, "JUSTID", NULL, 0}};
    g_options(c, in, f, opts, N_OF(opts));
}

/* XGROUP CREATE | SETID | DESTROY | CREATECONSUMER | DELCONSUMER with their options. */
static void gen_xgroup(gcmd *c, run *r, reader *in)
{
    unsigned f = rd_u8(in);
    g_str(c, "XGROUP");
    switch (f % 5) {
    case 0:
    case 1:
        g_group_cmd(c, in, f % 5 ? "SETID" : "CREATE");
        if (f & 8)
            g_id(c, r, in);
        else
            g_str(c, f & 16 ? "0" : "$");
        if ((f & 32) && f % 5 == 0)
            g_str(c, "MKSTREAM");
        if (f & 64)
            g_kw(c, "ENTRIESREAD", PICK(in, COUNTS));
        break;
    case 2:
        g_group_cmd(c, in, "DESTROY");
        break;
    default:
        g_group_cmd(c, in, f % 5 == 3 ? "CREATECONSUMER" : "DELCONSUMER");
        g_str(c, PICK(in, CONSUMERS));
        break;
    }
}

/* XDEL, XTRIM, XSETID: the commands that remove entries or move the stream's ids. */
static void gen_xremove(gcmd *c, run *r, reader *in)
{
    unsigned f = rd_u8(in);
    switch (f % 3) {
    case 0: {
        unsigned n = 1 + (f >> 2) % 3;
        g_kw(c, "XDEL", a_skey(in));
        for (unsigned i = 0; i < n; i++)
            g_id(c, r, in);
        break;
    }
    case 1:
        g_kw(c, "XTRIM", a_skey(in));
        g_trim(c, r, in, f & 4, f & 8 ? (f & 16 ? "~" : "=") : NULL, f & 32);
        break;
    default:
        g_kw(c, "XSETID", a_skey(in));
        g_id(c, r, in);
        if (f & 4)
            g_kw(c, "ENTRIESADDED", PICK(in, COUNTS));
        if (f & 8) {
            g_str(c, "MAXDELETEDID");
            g_id(c, r, in);
        }
        break;
    }
}

/* The reading side: XPENDING, XINFO, XREAD, XRANGE, XREVRANGE, XLEN. */
static void gen_xread(gcmd *c, run *r, reader *in)
{
    unsigned f = rd_u8(in);
    switch (f % 6) {
    case 0:
        g_group_cmd(c, in, "XPENDING");
        if (f & 8) {
            if (f & 16)
                g_kw(c, "IDLE", PICK(in, IDLES));
            g_id(c, r, in);
            g_id(c, r, in);
            g_str(c, PICK(in, COUNTS));
            if (f & 32)
                g_str(c, PICK(in, CONSUMERS));
        }
        break;
    case 1:
        g_str(c, "XINFO");
        switch ((f >> 3) % 3) {
        case 0:
            g_kw(c, "STREAM", a_skey(in));
            if (f & 32) {
                g_str(c, "FULL");
                if (f & 64)
                    g_kw(c, "COUNT", PICK(in, COUNTS));
            }
            break;
        case 1:
            g_kw(c, "GROUPS", a_skey(in));
            break;
        default:
            g_group_cmd(c, in, "CONSUMERS");
            break;
        }
        break;
    case 2:
        g_str(c, "XREAD");
        static const g_option opts[] = {{8, "COUNT", COUNTS, N_OF(COUNTS)},
                                        {16, "BLOCK", BLOCK_MS, N_OF(BLOCK_MS)}};
        g_options(c, in, f, opts, N_OF(opts));
        g_kw(c, "STREAMS", a_skey(in));
        if (f & 32)
            g_str(c, a_skey(in));
        g_id(c, r, in);
        if (f & 32)
            g_id(c, r, in);
        break;
    case 3:
    case 4:
        g_str(c, f % 6 == 3 ? "XRANGE" : "XREVRANGE");
        g_str(c, a_skey(in));
        g_id(c, r, in);
        g_id(c, r, in);
        if (f & 8)
            g_kw(c, "COUNT", PICK(in, COUNTS));
        break;
    default:
        g_kw(c, "XLEN", a_skey(in));
        break;
    }
}

/* MULTI, EXEC, DISCARD, WATCH, UNWATCH. */
static void gen_multi(gcmd *c, reader *in)
{
    unsigned f = rd_u8(in);
    switch (f % 6) {
    case 0: case 1: g_str(c, "MULTI"); break;
    case 2: g_str(c, "EXEC"); break;
    case 3: g_str(c, "DISCARD"); break;
    case 4:
        g_str(c, "WATCH");
        g_str(c, KEYS[(f >> 3) % N_OF(KEYS)]);
        if (f & 128)
            g_str(c, KEYS[rd_below(in, N_OF(KEYS))]);
        break;
    default: g_str(c, "UNWATCH"); break;
    }
}

/* Whole-key operations that move, copy, expire or drop streams with their groups. */
static void gen_keyop(gcmd *c, reader *in)
{
    unsigned f = rd_u8(in);
    const char *k = a_skey(in);
    switch (f % 10) {
    case 0: g_str(c, "DEL"); g_str(c, k); break;
    case 1: g_str(c, "PEXPIRE"); g_str(c, k); g_str(c, PICK(in, IDLES)); break;
    case 2: g_str(c, "EXPIRE"); g_str(c, k); g_str(c, PICK(in, COUNTS)); break;
    case 3: g_str(c, f & 16 ? "RENAMENX" : "RENAME"); g_str(c, k); g_str(c, a_skey(in)); break;
    case 4: g_str(c, "MOVE"); g_str(c, k); g_str(c, f & 16 ? "1" : "0"); break;
    case 5: g_str(c, "SWAPDB"); g_str(c, "0"); g_str(c, f & 16 ? "1" : "0"); break;
    case 6: g_str(c, "SELECT"); g_str(c, f & 16 ? "1" : "0"); break;
    case 7: g_str(c, f & 16 ? "FLUSHALL" : "FLUSHDB"); break;
    case 8: g_str(c, "PERSIST"); g_str(c, k); break;
    default: g_str(c, "TYPE"); g_str(c, k); break;
    }
}

/* Any row of the fake's command table ("xgroup|create" becomes two words), with its
 * arity's number of arguments (or one more or less now and then), the first one usually
 * a key. */
static void gen_generic(gcmd *c, run *r, reader *in)
{
    size_t rows = fr_command_count();
    if (rows == 0)
        return;
    unsigned hi = rd_u8(in), lo = rd_u8(in);
    const fr_command_info *ci = fr_command_at(((size_t)hi << 8 | lo) % rows);
    const char *bar = strchr(ci->name, '|');
    if (bar) {
        g_fmt(c, "%.*s", (int)(bar - ci->name), ci->name);
        g_str(c, bar + 1);
    } else {
        g_str(c, ci->name);
    }
    unsigned f = rd_u8(in);
    int want = ci->arity >= 0 ? ci->arity : -ci->arity + (int)(f % 5);
    if ((f & 0xe0) == 0xe0)
        want += (f & 8) ? 1 : -1; /* a wrong arity now and then */
    if (c->argc < want && (f & 16) == 0)
        g_str(c, KEYS[rd_below(in, N_OF(KEYS))]);
    while (c->argc < want && c->argc < 24)
        g_any(c, r, in);
}

/* ----- Lua scripts from a small grammar ------------------------------------------------------ */

/* A script being written: text up to sizeof(buf) - 1 bytes (longer text is cut, which at
 * worst makes a script that does not compile: an answer too). */
typedef struct lbuf {
    char buf[900];
    size_t n;
} lbuf;

static void l_put(lbuf *b, const char *s)
{
    size_t k = strlen(s);
    if (b->n + k >= sizeof(b->buf))
        k = sizeof(b->buf) - 1 - b->n;
    memcpy(b->buf + b->n, s, k);
    b->n += k;
    b->buf[b->n] = '\0';
}

static const char *const L_CMDS[] = {
    "'get',KEYS[1]", "'set',KEYS[1],ARGV[1]", "'incr','k'", "'del',KEYS[1]", "'hgetall','h'",
    "'hset','h','f',ARGV[1]", "'sadd','z',ARGV[1]", "'smembers','z'", "'zadd','z',1.5,'m'",
    "'zscore','z','m'", "'zrange','z',0,-1,'withscores'", "'lpush','l',1,2", "'lrange','l',0,-1",
    "'xadd','x','*','f','v'", "'xrange','x','-','+'", "'type',KEYS[1]", "'exists','k','l'",
    "'expire','k',10", "'ttl','k'", "'ping'", "'echo',ARGV[1]", "'nosuch'", "'get'",
    "'blpop','l',0", "'select',1", "'select',99", "'eval','return 1',0", "'incrbyfloat','k',0.5",
    "'publish','ch','m'", "'xread','block',0,'streams','x','$'", "'hgetall','nokey'",
    "'spop','z',2", "'getex','k','px',5", "'lpop','l',3", "'zpopmin','z'", "'time'",
    "'object','encoding','k'", "'flushdb'", "'swapdb',0,1", "'multi'", "'set','k',{}",
};

static const char *const L_ATOMS[] = {
    "1", "-1", "0", "3.99", "-2.5", "1e300", "0/0", "1/0", "'str'", "''", "'a\\r\\nb'", "true",
    "false", "nil", "KEYS[1]", "ARGV[1]", "ARGV[9]", "#ARGV", "redis.REDIS_VERSION",
    "redis.sha1hex('x')", "math.random(10)", "tostring(1.5)", "tonumber('12')", "_G",
    "redis.status_reply('FINE')", "redis.error_reply('MY err')", "redis.error_reply('-X y')",
    "cjson.encode({a=1})", "cjson.decode('[1,2]')", "cmsgpack.pack(1,'a')",
    "struct.pack('>I2',7)", "bit.band(7,3)", "string.rep('x',3)", "{}",
};

static void l_expr(lbuf *b, reader *in, int depth);

static void l_call(lbuf *b, reader *in)
{
    l_put(b, rd_u8(in) & 1 ? "redis.pcall(" : "redis.call(");
    l_put(b, PICK(in, L_CMDS));
    l_put(b, ")");
}

static void l_table(lbuf *b, reader *in, int depth)
{
    static const char *const kinds[] = {"{", "{err=", "{ok=", "{double=", "{big_number=",
                                        "{map={a=", "{set={", "{verbatim_string={format='txt',string="};
    unsigned k = rd_below(in, N_OF(kinds) + 1);
    if (k == N_OF(kinds)) { /* a table that holds itself */
        l_put(b, "(function() local t = {1} t[2] = t return t end)()");
        return;
    }
    l_put(b, kinds[k]);
    unsigned n = rd_below(in, 4);
    for (unsigned i = 0; i < n || (k > 0 && i == 0); i++) {
        if (i)
            l_put(b, ",");
        if (k == 6) { /* set members are keys */
            l_put(b, "['m");
            char d[4] = {(char)('0' + i), '\0'};
            l_put(b, d);
            l_put(b, "']=");
        }
        l_expr(b, in, depth + 1);
        if (k > 0)
            break;
    }
    l_put(b, k >= 5 ? "}}" : "}");
}

static void l_expr(lbuf *b, reader *in, int depth)
{
    unsigned k = depth > 3 ? 0 : rd_below(in, 6);
    switch (k) {
    case 0: case 1: l_put(b, PICK(in, L_ATOMS)); break;
    case 2: l_call(b, in); break;
    case 3: l_table(b, in, depth); break;
    case 4:
        l_put(b, "(");
        l_expr(b, in, depth + 1);
        l_put(b, rd_u8(in) & 1 ? " .. " : " + ");
        l_expr(b, in, depth + 1);
        l_put(b, ")");
        break;
    default:
        l_put(b, "pcall(function() return ");
        l_expr(b, in, depth + 1);
        l_put(b, " end)");
        break;
    }
}

static void l_stmt(lbuf *b, reader *in, int depth)
{
    unsigned k = depth > 2 ? rd_below(in, 3) : rd_below(in, 10);
    switch (k) {
    case 0: l_call(b, in); break;
    case 1: l_put(b, "local v = "); l_expr(b, in, depth); break;
    case 2: l_put(b, "return "); l_expr(b, in, depth); break;
    case 3: l_put(b, "error("); l_expr(b, in, depth); l_put(b, ")"); break;
    case 4: l_put(b, rd_u8(in) & 1 ? "redis.setresp(3)" : "redis.setresp(2)"); break;
    case 5:
        l_put(b, rd_u8(in) & 1 ? "for i = 1, 3 do " : "for i = 1, 100000 do ");
        l_stmt(b, in, depth + 1);
        l_put(b, " end");
        break;
    case 6:
        l_put(b, "if ");
        l_expr(b, in, depth);
        l_put(b, " then ");
        l_stmt(b, in, depth + 1);
        l_put(b, " else ");
        l_stmt(b, in, depth + 1);
        l_put(b, " end");
        break;
    case 7: /* runs until the busy limit: the hook aborts it */
        l_put(b, rd_u8(in) & 1 ? "while true do end" : "local function f() return f() end f()");
        break;
    case 8: l_put(b, "x = 1"); break; /* a global: refused */
    default:
        l_put(b, "local ok, e = pcall(function() ");
        l_stmt(b, in, depth + 1);
        l_put(b, " end) v = e");
        break;
    }
}

/* EVAL (or EVAL_RO, with a shebang now and then) of a generated script, with one key and
 * one argument; or a protocol switch of the current client. */
static void gen_script(gcmd *c, run *r, reader *in)
{
    static lbuf b; /* viewed by the command's argv until it has run */
    unsigned f = rd_u8(in);
    if ((f & 0x1f) == 0x1f) {
        fr_client_set_protocol(r->cl[r->cur], (f & 0x20) ? 3 : 2);
        log_add(r, "(client %d speaks RESP%d)\n", r->cur, (f & 0x20) ? 3 : 2);
        return;
    }
    b.n = 0;
    b.buf[0] = '\0';
    static const char *const shebangs[] = {"#!lua\n", "#!lua flags=no-writes\n",
                                           "#!lua flags=allow-oom,no-cluster\n"};
    if (f & 0x40)
        l_put(&b, PICK(in, shebangs));
    unsigned n = 1 + rd_below(in, 4);
    for (unsigned i = 0; i < n; i++) {
        if (i)
            l_put(&b, " ");
        l_stmt(&b, in, 0);
    }
    g_str(c, (f & 0x80) ? "EVAL_RO" : "EVAL");
    g_arg(c, b.buf, b.n);
    g_str(c, "1");
    g_str(c, KEYS[rd_below(in, N_OF(KEYS))]);
    g_value(c, in);
}

/* ----- Filtering commands whose cost has no bound --------------------------------------------- */

/* Parses a whole argument as a signed decimal; 0 when it is not one. */
static int arg_ll(const char *s, size_t len, long long *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof(buf))
        return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    *out = strtoll(buf, &end, 10);
    return *end == '\0';
}

/* Non-zero for a command that would be slow or huge for reasons Redis shares (its cost
 * is an argument, not the data): SETRANGE far out allocates the gap, and so do SETBIT and
 * BITFIELD's SET/INCRBY (up to 512 MB), a large negative SRANDMEMBER/ZRANDMEMBER/HRANDFIELD
 * count returns that many elements, big APPENDs make LCS quadratic.  The fuzzer looks for
 * bugs, not for ways to ask for a gigabyte. */
static int too_costly(int argc, const char *const *argv, const size_t *len)
{
    long long v;
    if (argc < 3)
        return 0;
    if (len[0] == 8 && strncasecmp(argv[0], "SETRANGE", 8) == 0)
        return !arg_ll(argv[2], len[2], &v) || v > 4096;
    if (len[0] == 6 && strncasecmp(argv[0], "SETBIT", 6) == 0)
        return !arg_ll(argv[2], len[2], &v) || v > 4096 * 8;
    if (len[0] == 8 && strncasecmp(argv[0], "BITFIELD", 8) == 0) {
        /* The offset after SET|INCRBY <type>: a bit number, or "#N" (N times up to 64). */
        for (int i = 2; i + 2 < argc; i++) {
            if (!((len[i] == 3 && strncasecmp(argv[i], "SET", 3) == 0) ||
                  (len[i] == 6 && strncasecmp(argv[i], "INCRBY", 6) == 0)))
                continue;
            const char *o = argv[i + 2];
            size_t ol = len[i + 2];
            int hash = ol > 0 && o[0] == '#';
            if (!arg_ll(o + hash, ol - (size_t)hash, &v) || v > (hash ? 4096 / 8 : 4096 * 8))
                return 1;
        }
        return 0;
    }
    if ((len[0] == 11 && (strncasecmp(argv[0], "SRANDMEMBER", 11) == 0 ||
                          strncasecmp(argv[0], "ZRANDMEMBER", 11) == 0)) ||
        (len[0] == 10 && strncasecmp(argv[0], "HRANDFIELD", 10) == 0))
        return arg_ll(argv[2], len[2], &v) && v < -1000;
    if (len[0] == 6 && strncasecmp(argv[0], "APPEND", 6) == 0)
        return len[2] > 256;
    return 0;
}

/* Checks every stream of every database. */
static void sweep(run *r)
{
    int dbs = r->cluster ? 1 : 16;
    for (int db = 0; db < dbs; db++) {
        if (!(r->dbmask & (1u << db)))
            continue;
        fi_select(&r->fi, db);
        const char *argv[2] = {"KEYS", "*"};
        size_t len[2] = {4, 1};
        const fr_reply *keys = fi_exec(&r->fi, 2, argv, len);
        if (keys->type != FR_REPLY_ARRAY)
            check_fail(r, "KEYS * is not an array");
        if (keys->count == 0)
            continue;
        char *enc;
        size_t enclen;
        /* check_stream runs commands on the same client: keep the names as RESP and walk
         * them (each "$len\r\nname\r\n"). */
        enc = fr_reply_to_resp(keys, &enclen);
        if (!enc)
            abort();
        const char *p = enc;
        const char *end = enc + enclen;
        p = memchr(p, '\n', (size_t)(end - p)) + 1; /* skip "*N\r\n" */
        while (p < end) {
            char *nl;
            long klen = strtol(p + 1, &nl, 10);
            const char *k = nl + 2;
            fi_check_stream(&r->fi, db, k, (size_t)klen);
            p = k + klen + 2;
        }
        free(enc);
    }
}

/* ----- Running commands ------------------------------------------------------------------------ */

/* Serves what a server would write after a command: woken clients' replies, pushes. */
static void drain(run *r)
{
    fr_client *w;
    while ((w = fr_server_take_woken(r->srv)) != NULL)
        (void)fr_client_woken_reply(w);
    while ((w = fr_server_take_pushed(r->srv)) != NULL) {
        if (r->commands & 1) {
            const fr_reply *pushes;
            (void)fr_client_take_pushes(w, &pushes);
        } else {
            size_t len;
            (void)fr_client_push_resp(w, &len);
            fr_client_push_clear(w);
        }
    }
}

/* Non-zero when argv[0] (len bytes) is name, ignoring case. */
static int is_cmd(const char *argv0, size_t len, const char *name)
{
    return len == strlen(name) && strncasecmp(argv0, name, len) == 0;
}

/* Runs one command on the current fuzzed client (or the other one when it is blocked;
 * nothing when both are), then checks the streams it touched. */

/* The busy hook: a script past busy-reply-threshold (10 virtual ms here) makes the other
 * fuzzed client's commands answer -BUSY, then it is aborted (even one that has written:
 * the fuzzer must not hang on `while true do end`). */
static void fuzz_busy_hook(fr_server *srv, void *ctx)
{
    run *r = ctx;
    fr_client *o = r->cl[r->cur ^ 1];
    if (!fr_client_is_blocked(o) && !fr_client_in_multi(o)) {
        const char *argv[] = {"PING"};
        const fr_reply *rep = fr_exec(o, 1, argv, NULL);
        if (!rep || rep->type != FR_REPLY_ERROR || strncmp(rep->str, "BUSY ", 5) != 0)
            check_fail(r, "a command during a busy script did not answer -BUSY");
    }
    fr_server_script_abort(srv);
}

static void run_command(run *r, int argc, const char *const *argv, const size_t *len)
{
    if (argc <= 0 || too_costly(argc, argv, len))
        return;
    if (fr_client_is_blocked(r->cl[r->cur]))
        r->cur ^= 1;
    if (fr_client_is_blocked(r->cl[r->cur]))
        return;
    fr_client *c = r->cl[r->cur];
    int db = fr_client_db(c);
    int in_multi = fr_client_in_multi(c);
    log_command(r, r->cur ? "c1" : "c0", argc, argv, len);

    /* The two commands that may leave a pending id above last-delivered-id. */
    if (is_cmd(argv[0], len[0], "XGROUP") && argc > 1 && is_cmd(argv[1], len[1], "SETID"))
        r->fi.pel_bound = 0;
    if (is_cmd(argv[0], len[0], "XCLAIM"))
        for (int i = 5; i < argc; i++)
            if (is_cmd(argv[i], len[i], "FORCE"))
                r->fi.pel_bound = 0;

    /* Every small number a database-moving command names may be a database. */
    if (is_cmd(argv[0], len[0], "MOVE") || is_cmd(argv[0], len[0], "SWAPDB") ||
        is_cmd(argv[0], len[0], "COPY") || is_cmd(argv[0], len[0], "SELECT"))
        for (int i = 1; i < argc; i++) {
            long long v;
            if (arg_ll(argv[i], len[i], &v) && v >= 0 && v < 16)
                r->dbmask |= 1u << v;
        }
    const fr_reply *rep = fr_exec(c, argc, argv, len);
    if (rep)
        fi_check_reply(&r->fi, rep, 0);
    r->commands++;
    r->dbmask |= 1u << fr_client_db(c);
    if (r->verbose) {
        /* The command's log line, then its reply as RESP (or that it blocked). */
        const char *last = r->log.len ? r->log.p + r->log.len - 1 : NULL;
        while (last && last > r->log.p && last[-1] != '\n')
            last--;
        fprintf(stderr, "%s", last ? last : "");
        if (rep) {
            size_t n;
            char *resp = fr_reply_to_resp(rep, &n);
            /* On one line: each CRLF of the RESP shown as a space. */
            for (size_t i = 0; resp && i < n; i++)
                if (resp[i] == '\r' || resp[i] == '\n')
                    resp[i] = ' ';
            fprintf(stderr, "   %.*s\n", (int)(n > 300 ? 300 : n), resp ? resp : "");
            free(resp);
        } else {
            fprintf(stderr, "   (blocked)\n");
        }
    }
    /* Remember the ids the server made, for later commands to use. */
    if (rep && is_cmd(argv[0], len[0], "XADD") && rep->type == FR_REPLY_BULK &&
        rep->len < sizeof(r->ids[0])) {
        memcpy(r->ids[r->nids % MAX_IDS], rep->str, rep->len);
        r->ids[r->nids % MAX_IDS][rep->len] = '\0';
        r->nids++;
    }
    if (rep && is_cmd(argv[0], len[0], "XAUTOCLAIM") && rep->type == FR_REPLY_ARRAY &&
        rep->count >= 1 && rep->elements[0].type == FR_REPLY_BULK &&
        rep->elements[0].len < sizeof(r->ids[0])) {
        memcpy(r->ids[r->nids % MAX_IDS], rep->elements[0].str, rep->elements[0].len);
        r->ids[r->nids % MAX_IDS][rep->elements[0].len] = '\0';
        r->nids++;
    }
    drain(r);

    if (in_multi || fr_client_in_multi(c)) {
        /* Queued, or EXEC/DISCARD: what EXEC ran is checked by a sweep. */
        if (is_cmd(argv[0], len[0], "EXEC") || is_cmd(argv[0], len[0], "DISCARD"))
            r->multi_dirty = 1;
        else if (!in_multi && fr_client_in_multi(c))
            ; /* MULTI itself */
        else
            return;
    }
    if (r->multi_dirty || is_cmd(argv[0], len[0], "SWAPDB") || is_cmd(argv[0], len[0], "MOVE") ||
        is_cmd(argv[0], len[0], "FLUSHDB") || is_cmd(argv[0], len[0], "FLUSHALL") ||
        is_cmd(argv[0], len[0], "COPY") || r->commands % SWEEP_EVERY == 0) {
        r->multi_dirty = 0;
        sweep(r);
        return;
    }
    int keys[MAX_ARGS];
    int nk = fr_command_keys(r->srv, argc, argv, len, keys, MAX_ARGS);
    for (int i = 0; i < nk; i++)
        fi_check_stream(&r->fi, db, argv[keys[i]], len[keys[i]]);
}

/* Runs a generated command. */
static void run_gcmd(run *r, gcmd *c)
{
    run_command(r, c->argc, c->argv, c->len);
}

/* Runs one text line: a directive or a redis-cli line. */
static void run_line(run *r, const char *line)
{
    if (line[0] == '@') {
        char word[32] = "", arg[64] = "", arg2[32] = "";
        long long v = 0;
        if (sscanf(line + 1, "%31s %63s %31s", word, arg, arg2) < 1)
            return;
        v = strtoll(arg, NULL, 10);
        if (strcmp(word, "client") == 0) {
            r->cur = (int)(v & 1);
        } else if (strcmp(word, "advance") == 0) {
            if (v >= -86400000LL * 365 && v <= 86400000LL * 365)
                fr_clock_advance(r->srv, v);
            log_add(r, "(clock advanced by %lld ms)\n", v);
        } else if (strcmp(word, "blocking") == 0) {
            fr_client_set_blocking(r->cl[v & 1], strcmp(arg2, "off") != 0);
        } else if (strcmp(word, "expire") == 0) {
            fr_server_expire_blocked(r->srv);
            drain(r);
        } else if (strcmp(word, "unblock") == 0) {
            fr_client_unblock(r->cl[v & 1], strcmp(arg2, "error") == 0);
            drain(r);
        } else if (strcmp(word, "fault") == 0) {
            for (size_t i = 0; i < N_OF(INSPECTION); i++)
                if (strcasecmp(arg, INSPECTION[i]) == 0)
                    return;
            fr_fault_command(r->srv, arg, "ERR injected", (int)strtol(arg2, NULL, 10));
        } else if (strcmp(word, "sweep") == 0) {
            sweep(r);
        }
        return;
    }
    char **argv;
    size_t *len;
    int argc = fr_split_line(line, &argv, &len);
    if (argc <= 0)
        return;
    run_command(r, argc, (const char *const *)argv, len);
    fr_split_free(argc, argv, len);
}

/* Runs one binary record whose first byte was op. */
static void run_op(run *r, unsigned op, reader *in)
{
    gcmd c;
    c.argc = 0;
    c.used = 0;
    if (op >= 120) { /* 8 of the 128 ops: a generated script */
        gen_script(&c, r, in);
        if (c.argc)
            run_gcmd(r, &c);
        return;
    }
    switch (op % 24) {
    case 0: case 1: case 2: gen_xadd(&c, r, in); break;
    case 3: case 4: gen_xreadgroup(&c, r, in); break;
    case 5: gen_xack(&c, r, in); break;
    case 6: gen_xclaim(&c, r, in); break;
    case 7: gen_xautoclaim(&c, r, in); break;
    case 8: case 9: gen_xgroup(&c, r, in); break;
    case 10: gen_xremove(&c, r, in); break;
    case 11: gen_xread(&c, r, in); break;
    case 12: case 13: gen_multi(&c, in); break;
    case 14: gen_keyop(&c, in); break;
    case 15: case 16: case 17: gen_generic(&c, r, in); break;
    case 18: {
        static const int64_t steps[] = {1, 10, 100, 1000, 60000, 3600000, 86400000, -1000};
        int64_t ms = steps[rd_below(in, N_OF(steps))];
        fr_clock_advance(r->srv, ms);
        log_add(r, "(clock advanced by %lld ms)\n", (long long)ms);
        return;
    }
    case 19: r->cur ^= 1; return;
    case 20: {
        unsigned b = rd_u8(in);
        fr_client_set_blocking(r->cl[b & 1], (b & 2) != 0);
        return;
    }
    case 21: {
        unsigned b = rd_u8(in);
        if (b & 1)
            fr_server_expire_blocked(r->srv);
        else
            fr_client_unblock(r->cl[(b >> 1) & 1], (b & 4) != 0);
        drain(r);
        return;
    }
    case 22: {
        unsigned b = rd_u8(in);
        if (b == 255) {
            fr_fault_clear(r->srv);
            return;
        }
        fr_fault_command(r->srv, FAULTABLE[b % N_OF(FAULTABLE)],
                         (b & 64) ? "READONLY You can't write against a read only replica."
                                  : "ERR injected",
                         (b & 128) ? -1 : 1 + (int)((b >> 4) & 3));
        return;
    }
    default: sweep(r); return;
    }
    run_gcmd(r, &c);
}

/* Frees everything the run owns. */
static void run_free(run *r)
{
    fr_server_free(r->srv); /* the clients go with it */
    wsi_buf_free(&r->log);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader in = {data, size};
    run r;
    memset(&r, 0, sizeof(r));
    r.fi.pel_bound = 1;
    r.fi.fail = run_failed;
    r.fi.ud = &r;
    r.dbmask = 1;
    r.verbose = getenv("FUZZ_VERBOSE") != NULL;
    static const char cluster_line[] = "@cluster\n";
    fr_config cfg = fr_config_default();
    if (size >= sizeof(cluster_line) - 1 && memcmp(data, cluster_line, sizeof(cluster_line) - 1) == 0) {
        cfg.cluster_enabled = 1;
        r.cluster = 1;
        in.p += sizeof(cluster_line) - 1;
        in.n -= sizeof(cluster_line) - 1;
    }
    r.srv = fr_server_new(&cfg);
    if (!r.srv)
        return 0;
    r.fi.srv = r.srv;
    fr_server_set_param(r.srv, "busy-reply-threshold", "10");
    fr_server_set_busy_hook(r.srv, fuzz_busy_hook, &r);
    r.cl[0] = fr_client_new(r.srv);
    r.cl[1] = fr_client_new(r.srv);
    r.fi.insp = fr_client_new(r.srv);
    if (!r.cl[0] || !r.cl[1] || !r.fi.insp) {
        run_free(&r);
        return 0;
    }
    char line[MAX_LINE + 1];
    for (int rec = 0; rec < MAX_RECORDS && in.n > 0; rec++) {
        unsigned b = rd_u8(&in);
        if (b >= 0x80) {
            run_op(&r, b & 0x7f, &in);
            continue;
        }
        size_t w = 0;
        line[w++] = (char)b;
        /* A byte >= 0x80 starts the next binary record (write such bytes in a text line
         * as "\x80" inside double quotes), so a mutation never turns a run of binary
         * records into one long line. */
        while (in.n > 0 && *in.p != '\n' && *in.p < 0x80 && w < MAX_LINE)
            line[w++] = (char)rd_u8(&in);
        if (in.n > 0 && *in.p == '\n')
            rd_u8(&in);
        /* A NUL ends the line for fr_split_line, as for any C string. */
        line[w] = '\0';
        if (b == '\n' || b == '#')
            continue; /* blank lines and comments, for the readable seeds */
        run_line(&r, line);
    }
    sweep(&r);
    run_free(&r);
    return 0;
}
