/* test_scripting.c -- the Lua runtime pieces of our own (script_lua.c, lua_cmsgpack.c,
 * lua_struct.c, sha1.c) and what the differential scripts cannot reach:
 *
 * - SHA-1 against FIPS 180 vectors and block-boundary lengths (the script cache's names);
 * - cmsgpack: exact encodings at every integer and length boundary, and random nested
 *   values that must come back equal from unpack(pack(v)), unpack_one and unpack_limit;
 * - struct: random integers of every size and both byte orders packed and read back, and
 *   exact bytes for known formats;
 * - the Lua-to-RESP conversion (number truncation, nil ends an array, nested arrays) and
 *   redis.call's RESP-to-Lua, through raw reply bytes;
 * - the busy state on the virtual clock: a script turns busy after exactly
 *   busy-reply-threshold * FRI_LUA_STEPS_PER_MS instructions, every time; other clients
 *   get -BUSY from the hook; SCRIPT KILL ends a script that has not written and answers
 *   UNKILLABLE for one that has; without a hook nothing is served and the script ends;
 * - the OOM hook: what is refused while the embedder says the process is over maxmemory
 *   (processCommand's deny-oom rule with a script's flags, scriptPrepareForRun's check
 *   of a script EXEC runs, redis.call's scriptVerifyOOM until the first write) and the
 *   errors and rejected calls INFO counts for them;
 * - bad scripts: endless recursion, a memory cap reached, a self-referencing table --
 *   errors, never a crash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_fixture.h"
#include "fakeredis.h"
#include "fr_int.h"
#include "script_int.h"
#include "test_rng.h"

typedef fake_fixture fixture;
#define TEST(fn) FAKE_TEST2(fn)

#define RESP(c, ...) fake_resp(fake_run((c), __VA_ARGS__))
#define RESP_EQ(c, expected, ...) assert_string_equal(RESP((c), __VA_ARGS__), (expected))

/* EVAL of a script with no keys, by argv (no quoting to get wrong). */
static const char *eval_resp(fr_client *c, const char *script)
{
    const char *argv[] = {"EVAL", script, "0"};
    size_t len;
    const char *p = fr_exec_resp(c, 3, argv, NULL, &len);
    static char buf[1 << 16];
    assert_true(len < sizeof(buf));
    memcpy(buf, p, len);
    buf[len] = '\0';
    return buf;
}

/* A script and the RESP bytes EVAL <script> 0 must answer. */
typedef struct eval_case {
    const char *script, *resp;
} eval_case;

/* Runs cases[0..n) in order; the first reply that differs fails the test (its script is
 * printed first). */
static void expect_evals(fr_client *c, const eval_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *got = eval_resp(c, cases[i].script);
        if (strcmp(got, cases[i].resp) != 0) print_message("script: %s\n", cases[i].script);
        assert_string_equal(got, cases[i].resp);
    }
}

/* ----- SHA-1 ------------------------------------------------------------------------- */

static void test_sha1_vectors(void **state)
{
    (void)state;
    char out[41];
    fri_sha1hex(out, "", 0);
    assert_string_equal(out, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    fri_sha1hex(out, "abc", 3);
    assert_string_equal(out, "a9993e364706816aba3e25717850c26c9cd0d89d");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    fri_sha1hex(out, two, strlen(two));
    assert_string_equal(out, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    const char *fox = "The quick brown fox jumps over the lazy dog";
    fri_sha1hex(out, fox, strlen(fox));
    assert_string_equal(out, "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12");
    char *million = malloc(1000000);
    assert_non_null(million);
    memset(million, 'a', 1000000);
    fri_sha1hex(out, million, 1000000);
    assert_string_equal(out, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    free(million);
}

/* Lengths around the 55/56/64-byte padding edges hash as redis.sha1hex does (the same
 * function: they must agree with the script cache's name for the same bytes). */
static void test_sha1_block_edges(void **state)
{
    fixture *f = *state;
    for (size_t n = 50; n <= 130; n++) {
        char body[200];
        memset(body, 'x', sizeof(body));
        snprintf(body, sizeof(body), "return %zu --", n); /* a script of exactly n bytes */
        size_t head = strlen(body);
        memset(body + head, 'y', n - head);
        body[n] = '\0';
        char sha[41];
        fri_sha1hex(sha, body, n);
        const char *argv[] = {"SCRIPT", "LOAD", body};
        const fr_reply *r = fr_exec(f->c, 3, argv, NULL);
        assert_int_equal(r->type, FR_REPLY_BULK);
        assert_string_equal(r->str, sha);
        char want[64];
        snprintf(want, sizeof(want), ":%zu\r\n", n);
        const char *ev[] = {"EVALSHA", sha, "0"};
        size_t len;
        const char *p = fr_exec_resp(f->c, 3, ev, NULL, &len);
        assert_int_equal(len, strlen(want));
        assert_memory_equal(p, want, len);
    }
}

/* ----- cmsgpack ------------------------------------------------------------------------- */

/* The hex of what cmsgpack.pack makes of the Lua expression. */
static const char *packed_hex(fr_client *c, const char *expr)
{
    char script[512];
    snprintf(script, sizeof(script),
             "local s = cmsgpack.pack(%s) local h = {} for i = 1, #s do "
             "h[i] = string.format('%%02x', s:byte(i)) end return table.concat(h)", expr);
    const char *r = eval_resp(c, script);
    static char hex[1024];
    const char *nl = strstr(r, "\r\n");
    assert_true(r[0] == '$' && nl);
    snprintf(hex, sizeof(hex), "%.*s", (int)(strlen(nl + 2) - 2), nl + 2);
    return hex;
}

static void test_cmsgpack_encodings(void **state)
{
    fixture *f = *state;
    static const struct { const char *expr, *hex; } cases[] = {
        {"0", "00"},
        {"127", "7f"},
        {"128", "cc80"},
        {"255", "ccff"},
        {"256", "cd0100"},
        {"65535", "cdffff"},
        {"65536", "ce00010000"},
        {"4294967295", "ceffffffff"},
        {"4294967296", "cf0000000100000000"},
        {"-1", "ff"},
        {"-32", "e0"},
        {"-33", "d0df"},
        {"-128", "d080"},
        {"-129", "d1ff7f"},
        {"-32768", "d18000"},
        {"-32769", "d2ffff7fff"},
        {"-2147483648", "d280000000"},
        {"-2147483649", "d3ffffffff7fffffff"},
        {"0.5", "ca3f000000"},
        {"0.1", "cb3fb999999999999a"},
        {"true", "c3"},
        {"false", "c2"},
        {"nil", "c0"},
        {"''", "a0"},
        {"string.rep('a', 31)", "bf61616161616161616161616161616161616161616161616161616161616161"},
        {"{}", "90"},
        {"{1, 2}", "920102"},
        {"{a = 1}", "81a16101"},
        {"{[2] = 1}", "810201"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = packed_hex(f->c, cases[i].expr);
        if (strcmp(got, cases[i].hex) != 0)
            fail_msg("cmsgpack.pack(%s): %s, want %s", cases[i].expr, got, cases[i].hex);
    }
    /* string length headers: str8 from 32 bytes, str16 from 256, str32 from 65536 */
    assert_true(strncmp(packed_hex(f->c, "string.rep('b', 32)"), "d920", 4) == 0);
    assert_true(strncmp(packed_hex(f->c, "string.rep('b', 255)"), "d9ff", 4) == 0);
    char script[256];
    snprintf(script, sizeof(script), "return cmsgpack.pack(string.rep('c', 256)):sub(1, 3)");
    assert_string_equal(eval_resp(f->c, script), "$3\r\n\xda\x01\x00\r\n");
    snprintf(script, sizeof(script), "return cmsgpack.pack(string.rep('c', 65536)):sub(1, 5)");
    assert_memory_equal(eval_resp(f->c, script), "$5\r\n\xdb\x00\x01\x00\x00\r\n", 11);
    /* arrays of 16 and more: array16 */
    snprintf(script, sizeof(script),
             "local t = {} for i = 1, 16 do t[i] = 0 end return cmsgpack.pack(t):sub(1, 3)");
    assert_memory_equal(eval_resp(f->c, script), "$3\r\n\xdc\x00\x10\r\n", 9);
}

/* A random Lua value as source text: numbers at the integer edges, floats, strings of
 * every header size, booleans, nested arrays and maps. */
static void random_value(uint64_t *rng, char *out, size_t cap, int depth)
{
    static const char *const nums[] = {"0", "1", "127", "128", "255", "256", "65535",
                                       "65536", "4294967295", "4294967296", "-1", "-32",
                                       "-33", "-128", "-129", "-32768", "-32769",
                                       "-2147483648", "-2147483649", "0.5", "0.1", "-2.75",
                                       "1e300", "123456789012"};
    unsigned k = (unsigned)(splitmix64_next(rng) % (depth < 3 ? 6 : 4));
    switch (k) {
    case 0:
        snprintf(out, cap, "%s", nums[splitmix64_next(rng) % (sizeof(nums) / sizeof(nums[0]))]);
        break;
    case 1: {
        static const int lens[] = {0, 1, 31, 32, 255, 256, 300};
        snprintf(out, cap, "string.rep('%c', %d)", 'a' + (int)(splitmix64_next(rng) % 26),
                 lens[splitmix64_next(rng) % 7]);
        break;
    }
    case 2:
        snprintf(out, cap, "%s", splitmix64_next(rng) % 2 ? "true" : "false");
        break;
    case 3:
        snprintf(out, cap, "'k%u'", (unsigned)(splitmix64_next(rng) % 1000));
        break;
    case 4: { /* an array */
        size_t n = (size_t)(splitmix64_next(rng) % 4), len = 0;
        len += (size_t)snprintf(out + len, cap - len, "{");
        for (size_t i = 0; i < n && len < cap - 1; i++) {
            char sub[2048];
            random_value(rng, sub, sizeof(sub), depth + 1);
            len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? ", " : "", sub);
        }
        snprintf(out + len, cap - len, "}");
        break;
    }
    default: { /* a map */
        size_t n = (size_t)(splitmix64_next(rng) % 3), len = 0;
        len += (size_t)snprintf(out + len, cap - len, "{");
        for (size_t i = 0; i < n && len < cap - 1; i++) {
            char sub[2048];
            random_value(rng, sub, sizeof(sub), depth + 1);
            len += (size_t)snprintf(out + len, cap - len, "%sf%zu = %s", i ? ", " : "", i, sub);
        }
        snprintf(out + len, cap - len, "}");
        break;
    }
    }
}

/* A deep equality in Lua, then the round trips through pack, unpack, unpack_one and
 * unpack_limit. */
static void test_cmsgpack_roundtrip(void **state)
{
    fixture *f = *state;
    uint64_t rng;
    rng = 7;
    static const char prelude[] =
        "local function eq(a, b) if type(a) ~= type(b) then return false end "
        "if type(a) ~= 'table' then return a == b end "
        "for k, v in pairs(a) do if not eq(v, b[k]) then return false end end "
        "for k, v in pairs(b) do if a[k] == nil then return false end end return true end ";
    for (int i = 0; i < 300; i++) {
        char v1[4096], v2[4096], script[12000];
        random_value(&rng, v1, sizeof(v1), 0);
        random_value(&rng, v2, sizeof(v2), 0);
        snprintf(script, sizeof(script),
                 "%s local a, b = %s, %s local s = cmsgpack.pack(a, b) "
                 "local x, y = cmsgpack.unpack(s) "
                 "local o1, one = cmsgpack.unpack_one(s) "
                 "local o2, two = cmsgpack.unpack_one(s, o1) "
                 "local o3, l1, l2 = cmsgpack.unpack_limit(s, 2) "
                 "return {eq(a, x) and 1 or 0, eq(b, y) and 1 or 0, eq(a, one) and 1 or 0, "
                 "eq(b, two) and 1 or 0, o2, o3, eq(a, l1) and 1 or 0, eq(b, l2) and 1 or 0}",
                 prelude, v1, v2);
        const char *r = eval_resp(f->c, script);
        if (strcmp(r, "*8\r\n:1\r\n:1\r\n:1\r\n:1\r\n:-1\r\n:-1\r\n:1\r\n:1\r\n") != 0)
            fail_msg("round trip of %s, %s: %s", v1, v2, r);
    }
}

static void test_cmsgpack_errors(void **state)
{
    fixture *f = *state;
    /* truncated input, a reserved byte, cycles cut at 16 levels, no input */
    assert_non_null(strstr(eval_resp(f->c, "return cmsgpack.unpack('\\205')"),
                           "Missing bytes in input."));
    assert_non_null(strstr(eval_resp(f->c, "return cmsgpack.unpack('\\193')"),
                           "Bad data format in input."));
    const char *r = eval_resp(f->c, "local t = {} t[1] = t local s = cmsgpack.pack(t) "
                                    "return {#s, s:byte(#s)}");
    assert_string_equal(r, "*2\r\n:17\r\n:192\r\n"); /* 16 array headers, then nil */
    assert_non_null(strstr(eval_resp(f->c, "return cmsgpack.pack()"),
                           "MessagePack pack needs input."));
}

/* ----- struct ----------------------------------------------------------------------------- */

static void test_struct_roundtrip(void **state)
{
    fixture *f = *state;
    uint64_t rng;
    rng = 11;
    static const struct { const char *fmt; int bits; int is_signed; } kinds[] = {
        {"b", 8, 1},  {"B", 8, 0},  {"h", 16, 1}, {"H", 16, 0},  {"i", 32, 1},
        {"I", 32, 0}, {"i3", 24, 1}, {"I3", 24, 0}, {"l", 64, 1}, {"i8", 64, 1},
    };
    for (int round = 0; round < 400; round++) {
        size_t k = (size_t)(splitmix64_next(&rng) % (sizeof(kinds) / sizeof(kinds[0])));
        int bits = kinds[k].bits > 52 ? 52 : kinds[k].bits; /* exact in a Lua number */
        long long v;
        if (kinds[k].is_signed) {
            long long span = 1LL << (bits - 1);
            v = (long long)(splitmix64_next(&rng) % (uint64_t)(2 * span)) - span;
        } else {
            v = (long long)(splitmix64_next(&rng) % (1ULL << bits));
        }
        const char *endian = splitmix64_next(&rng) % 2 ? ">" : "<";
        char script[256];
        snprintf(script, sizeof(script),
                 "local s = struct.pack('%s%s', %lld) local v, nxt = struct.unpack('%s%s', s) "
                 "return {v, nxt, #s == struct.size('%s%s') and 1 or 0}",
                 endian, kinds[k].fmt, v, endian, kinds[k].fmt, endian, kinds[k].fmt);
        char want[128];
        int size = kinds[k].bits / 8;
        snprintf(want, sizeof(want), "*3\r\n:%lld\r\n:%d\r\n:1\r\n", v, size + 1);
        const char *r = eval_resp(f->c, script);
        if (strcmp(r, want) != 0) fail_msg("%s%s %lld: %s", endian, kinds[k].fmt, v, r);
    }
    assert_string_equal(eval_resp(f->c, "return struct.pack('>i4', 258)"),
                        "$4\r\n\x00\x00\x01\x02\r\n");
    assert_memory_equal(eval_resp(f->c, "return struct.pack('<I2 s', 258, 'ab')"),
                        "$5\r\n\x02\x01\x61\x62\x00\r\n", 11);
    assert_string_equal(eval_resp(f->c, "return {struct.unpack('>h c0', '\\0\\3abcd')}"),
                        "*2\r\n$3\r\nabc\r\n:6\r\n");
}

/* ----- Conversions ---------------------------------------------------------------------- */

static void test_conversions(void **state)
{
    fixture *f = *state;
    static const eval_case numbers_and_tables[] = {
        {"return 3.99", ":3\r\n"},
        {"return -3.99", ":-3\r\n"},
        {"return 1e20", ":-9223372036854775808\r\n"},
        {"return 0/0", ":-9223372036854775808\r\n"},
        {"return {1, 2, nil, 4}", "*2\r\n:1\r\n:2\r\n"},
        {"return {1, {2, {3}}, false}", "*3\r\n:1\r\n*2\r\n:2\r\n*1\r\n:3\r\n$-1\r\n"},
        {"return {err = 'X y'}", "-X y\r\n"},
        {"return {ok = 'a\\r\\nb'}", "+a  b\r\n"},
    };
    expect_evals(f->c, numbers_and_tables,
                 sizeof(numbers_and_tables) / sizeof(numbers_and_tables[0]));
    /* redis.call's replies to Lua and back */
    fake_run(f->c, "RPUSH l a b");
    static const eval_case replies[] = {
        {"return redis.call('lrange', 'l', 0, -1)", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
        {"return type(redis.call('get', 'nokey'))", "$7\r\nboolean\r\n"},
        {"return redis.pcall('incr', 'l')['err']",
         "$65\r\nWRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
        {"return redis.call('ping')['ok']", "$4\r\nPONG\r\n"},
        /* a number argument is sent as %.17g */
        {"redis.call('set', 'n', 0.1) return redis.call('get', 'n')",
         "$19\r\n0.10000000000000001\r\n"},
    };
    expect_evals(f->c, replies, sizeof(replies) / sizeof(replies[0]));
}

/* ----- Busy scripts on the virtual clock -------------------------------------------------- */

typedef struct busy_probe {
    fr_client *other;     /* runs commands from inside the hook */
    int calls;            /* hook calls */
    int kill_at;          /* SCRIPT KILL on this call (0: never) */
    char busy_reply[256]; /* what `other` got for a GET */
    char kill_reply[512]; /* what it got for SCRIPT KILL */
    char multi_reply[64]; /* MULTI is let through */
} busy_probe;

static void probe_hook(fr_server *srv, void *ctx)
{
    busy_probe *p = ctx;
    p->calls++;
    assert_true(fr_server_script_busy(srv));
    if (p->calls == 1) {
        snprintf(p->busy_reply, sizeof(p->busy_reply), "%s", RESP(p->other, "GET k"));
        snprintf(p->multi_reply, sizeof(p->multi_reply), "%s", RESP(p->other, "MULTI"));
        fake_run(p->other, "DISCARD");
    }
    if (p->calls == p->kill_at)
        snprintf(p->kill_reply, sizeof(p->kill_reply), "%s", RESP(p->other, "SCRIPT KILL"));
}

static void test_busy_virtual_time(void **state)
{
    fixture *f = *state;
    assert_int_equal(fr_server_set_param(f->srv, "busy-reply-threshold", "100"), 0);
    busy_probe p = {.other = f->c2, .kill_at = 3};
    fr_server_set_busy_hook(f->srv, probe_hook, &p);
    const char *r = eval_resp(f->c, "local i = 0 while true do i = i + 1 end");
    assert_non_null(strstr(r, "-ERR Script killed by user with SCRIPT KILL... script: "));
    assert_string_equal(p.busy_reply, "-BUSY Redis is busy running a script. You can only "
                                      "call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n");
    assert_string_equal(p.multi_reply, "+OK\r\n");
    assert_string_equal(p.kill_reply, "+OK\r\n");
    assert_int_equal(p.calls, 3);
    assert_false(fr_server_script_busy(f->srv));
    RESP_EQ(f->c2, "$-1\r\n", "GET k");
    RESP_EQ(f->c2, "-NOTBUSY No scripts in execution right now.\r\n", "SCRIPT KILL");
}

/* The hook first runs after exactly threshold ms of virtual time, i.e. after
 * threshold * FRI_LUA_STEPS_PER_MS instructions: a script that runs a little less never
 * turns busy, the same script run again gives the same count. */
static int steps_hook_calls;
static void count_calls(fr_server *srv, void *ctx)
{
    (void)srv;
    (void)ctx;
    steps_hook_calls++;
}

static void test_busy_deterministic(void **state)
{
    fixture *f = *state;
    assert_int_equal(fr_server_set_param(f->srv, "lua-time-limit", "50"), 0);
    fr_server_set_busy_hook(f->srv, count_calls, NULL);
    const char *script = "local n = 0 for i = 1, 300000 do n = n + i end return n";
    int calls[2];
    for (int run = 0; run < 2; run++) {
        steps_hook_calls = 0;
        assert_string_equal(eval_resp(f->c, script), ":45000150000\r\n");
        calls[run] = steps_hook_calls;
    }
    assert_int_equal(calls[0], calls[1]);
    assert_true(calls[0] > 0);
    /* a short script never reaches 50 ms = 500,000 instructions */
    steps_hook_calls = 0;
    assert_string_equal(eval_resp(f->c, "local n = 0 for i = 1, 1000 do n = n + i end return n"),
                        ":500500\r\n");
    assert_int_equal(steps_hook_calls, 0);
}

static void unkillable_hook(fr_server *srv, void *ctx)
{
    busy_probe *p = ctx;
    (void)srv;
    if (p->calls++ == 0)
        snprintf(p->kill_reply, sizeof(p->kill_reply), "%s", RESP(p->other, "SCRIPT KILL"));
}

static void test_busy_unkillable(void **state)
{
    fixture *f = *state;
    assert_int_equal(fr_server_set_param(f->srv, "busy-reply-threshold", "10"), 0);
    busy_probe p = {.other = f->c2};
    fr_server_set_busy_hook(f->srv, unkillable_hook, &p);
    const char *r = eval_resp(f->c, "redis.call('set', 'w', '1') local n = 0 "
                                    "for i = 1, 3000000 do n = n + 1 end return n");
    assert_string_equal(r, ":3000000\r\n");
    assert_string_equal(p.kill_reply,
                        "-UNKILLABLE Sorry the script already executed write commands against "
                        "the dataset. You can either wait the script termination or kill the "
                        "server in a hard way using the SHUTDOWN NOSAVE command.\r\n");
}

/* ----- Bad scripts ------------------------------------------------------------------------- */

static void test_bad_scripts(void **state)
{
    fixture *f = *state;
    const char *r = eval_resp(f->c, "local function g() return 1 + g() end return g()");
    assert_non_null(strstr(r, "stack overflow"));
    /* a self-referencing table: nested arrays down to Lua's C stack limit, then an error */
    r = eval_resp(f->c, "local t = {} t[1] = t return t");
    assert_true(strncmp(r, "*1\r\n*1\r\n*1\r\n", 12) == 0);
    assert_non_null(strstr(r, "-ERR reached lua stack limit\r\n"));
    /* the memory cap: an allocation past it is Lua's memory error, then the next script
     * runs as usual */
    assert_string_equal(eval_resp(f->c, "return 1"), ":1\r\n");
    f->srv->scripting->mem_limit = f->srv->scripting->mem_used + (8u << 20);
    r = eval_resp(f->c, "local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 1000) .. i end");
    assert_non_null(strstr(r, "not enough memory"));
    f->srv->scripting->mem_limit = (size_t)1 << 30;
    assert_string_equal(eval_resp(f->c, "return 2"), ":2\r\n");
    /* SCRIPT FLUSH gives a fresh interpreter */
    RESP_EQ(f->c, "+OK\r\n", "SCRIPT FLUSH");
    assert_string_equal(eval_resp(f->c, "return 3"), ":3\r\n");
}


/* A RESP3 client gets a script's RESP3 types as bytes; fr_reply sees their RESP2 forms. */
static void test_resp3_reply(void **state)
{
    fixture *f = *state;
    assert_int_equal(fr_client_set_protocol(f->c, 3), 0);
    static const eval_case resp3[] = {
        {"return {map={a={double=1.5}}}", "%1\r\n$1\r\na\r\n,1.5\r\n"},
        {"redis.setresp(3) return {true, {set={x=true}}}", "*2\r\n#t\r\n~1\r\n$1\r\nx\r\n"},
        {"return {nil}", "*0\r\n"},
        {"return false", "_\r\n"},
    };
    expect_evals(f->c, resp3, sizeof(resp3) / sizeof(resp3[0]));
    const fr_reply *r = fake_run(f->c, "EVAL %s 0",
                                 "\"return {map={k={verbatim_string={format='txt',string='hi'}}},"
                                 "big_number='12', double=2}\"");
    /* double is looked at before big_number and map (Redis's order): ",2" seen as "2" */
    assert_int_equal(r->type, FR_REPLY_BULK);
    assert_string_equal(r->str, "2");
    r = fake_run(f->c, "EVAL %s 0",
                 "\"return {map={k={verbatim_string={format='txt',string='hi'}}}}\"");
    assert_int_equal(r->type, FR_REPLY_ARRAY); /* a map: a flat [k, "hi"] */
    assert_int_equal(r->count, 2);
    assert_string_equal(r->elements[0].str, "k");
    assert_string_equal(r->elements[1].str, "hi");
    r = fake_run(f->c, "EVAL %s 0", "\"redis.setresp(3) return {false, {big_number='12'}, nil}\"");
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_int_equal(r->count, 2);
    assert_int_equal(r->elements[0].type, FR_REPLY_INTEGER);
    assert_int_equal(r->elements[0].integer, 0);
    assert_string_equal(r->elements[1].str, "12");
    assert_int_equal(fr_client_set_protocol(f->c, 2), 0);
    assert_string_equal(eval_resp(f->c, "return {map={a={double=1.5}}}"),
                        "*2\r\n$1\r\na\r\n$3\r\n1.5\r\n");
}

/* ----- OOM ----------------------------------------------------------------------------- */

static int oom_now;
static int oom_hook(fr_server *srv, void *ctx)
{
    (void)srv;
    (void)ctx;
    return oom_now;
}

/* The count of error prefix code, 0 if none. */
static uint64_t error_count(fr_server *srv, const char *code)
{
    const char *p;
    size_t len;
    uint64_t n;
    for (size_t i = 0; fr_stats_error_at(srv, i, &p, &len, &n) == 0; i++)
        if (len == strlen(code) && memcmp(p, code, len) == 0) return n;
    return 0;
}

static void test_oom_hook(void **state)
{
    fixture *f = *state;
    fr_server_set_oom_hook(f->srv, oom_hook, NULL);
    oom_now = 0;
    RESP_EQ(f->c, "+OK\r\n", "SET x 1");
    RESP_EQ(f->c, "+OK\r\n", "MULTI");
    assert_string_equal(eval_resp(f->c, "#!lua\nreturn 1"), "+QUEUED\r\n");
    assert_string_equal(eval_resp(f->c, "#!lua flags=allow-oom\nreturn 2"), "+QUEUED\r\n");
    oom_now = 1;
    /* EXEC passes the OOM check; the scripts it runs meet scriptPrepareForRun's */
    RESP_EQ(f->c, "*2\r\n-OOM allow-oom flag is not set on the script, can not run it when "
                  "used memory > 'maxmemory'\r\n:2\r\n", "EXEC");
    fr_stats_reset(f->srv);
    const char *oom = "-OOM command not allowed when used memory > 'maxmemory'.\r\n";
    assert_string_equal(eval_resp(f->c, "#!lua\nreturn 1"), oom);
    RESP_EQ(f->c, oom, "SET x 2");
    RESP_EQ(f->c, "+OK\r\n", "MULTI");
    RESP_EQ(f->c, oom, "GET x");
    RESP_EQ(f->c, "-EXECABORT Transaction discarded because of previous errors.\r\n", "EXEC");
    assert_string_equal(eval_resp(f->c, "#!lua flags=no-writes\nreturn 3"), ":3\r\n");
    assert_string_equal(eval_resp(f->c, "return redis.call('get','x')"), "$1\r\n1\r\n");
    const char *r = eval_resp(f->c, "return redis.call('set','x','y')");
    assert_non_null(strstr(r, "-OOM command not allowed when used memory > 'maxmemory'."));
    assert_string_equal(eval_resp(f->c, "local t = redis.pcall('set','x','y') return t['err']"),
                        "$55\r\nOOM command not allowed when used memory > 'maxmemory'.\r\n");
    /* after a write, the script may go on (DEL is not deny-oom) */
    assert_string_equal(eval_resp(f->c, "redis.call('del','nokey') return redis.call('set','x','z')"),
                        "+OK\r\n");
    assert_string_equal(eval_resp(f->c, "#!lua flags=allow-oom\nreturn redis.call('set','x','w')"),
                        "+OK\r\n");
    /* counted once each, as Redis counts them: SET refused by itself and twice in
     * scripts (rejected calls), run twice; the script whose SET raised failed once */
    fr_command_stats st;
    assert_int_equal(fr_stats_command(f->srv, "set", &st), 0);
    assert_int_equal(st.calls, 2);
    assert_int_equal(st.rejected_calls, 3);
    assert_int_equal(st.failed_calls, 0);
    assert_int_equal(fr_stats_command(f->srv, "eval", &st), 0);
    assert_int_equal(st.calls, 6);
    assert_int_equal(st.rejected_calls, 1);
    assert_int_equal(st.failed_calls, 1);
    assert_int_equal(error_count(f->srv, "OOM"), 5);
    assert_int_equal(fr_stats_total_error_replies(f->srv), 6); /* and the EXECABORT */
    oom_now = 0;
    RESP_EQ(f->c, "$1\r\nw\r\n", "GET x");
    fr_server_set_oom_hook(f->srv, NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha1_vectors), TEST(test_sha1_block_edges),
        TEST(test_cmsgpack_encodings),       TEST(test_cmsgpack_roundtrip),
        TEST(test_cmsgpack_errors),          TEST(test_struct_roundtrip),
        TEST(test_conversions),              TEST(test_busy_virtual_time),
        TEST(test_busy_deterministic),       TEST(test_busy_unkillable),
        TEST(test_bad_scripts),              TEST(test_oom_hook),
        TEST(test_resp3_reply),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
