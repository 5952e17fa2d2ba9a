/* test_expiry.c -- expiry on the virtual clock, and SCAN's cursor guarantee.
 *
 * Redis has two expiry rules that meet at the deadline: a key whose deadline equals the
 * current millisecond still exists (keyIsExpired: now > when), while EXPIRE with a
 * computed deadline <= now deletes the key at once (checkAlreadyExpired).  On the virtual
 * clock both can be checked to the millisecond, as can TTL's rounding.  Listings (KEYS,
 * SCAN, DBSIZE, EXISTS, RANDOMKEY) must never show a key whose deadline has passed, even
 * before anything deleted it.  SCAN must return every key present for the whole scan
 * exactly once while other keys come and go between calls: a seeded random test.  A
 * client pause keeps expired keys until it ends (fr_server_pause).
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
#include "test_rng.h"

#define START_MS FAKE_START_MS /* fr_config_default's clock */

/* A test on a fresh server on the default config with one client. */
typedef fake_fixture fixture;
#define TEST(fn) FAKE_TEST(fn)

/* Commands run through fake_run_logged, so a failing test shows which command went wrong. */
#define INT FAKE_INT
#define OK FAKE_OK

/* Whether an array reply holds the bulk string s, and how many times. */
static int count_in(const fr_reply *arr, const char *s)
{
    int n = 0;
    assert_int_equal(arr->type, FR_REPLY_ARRAY);
    for (size_t i = 0; i < arr->count; i++)
        if (arr->elements[i].len == strlen(s) && memcmp(arr->elements[i].str, s, arr->elements[i].len) == 0)
            n++;
    return n;
}

/* ----- The deadline itself ----------------------------------------------------------- */

/* PEXPIRE 100 at t: the key exists through t+100 (PTTL 0 there) and is gone at t+101. */
static void test_pexpire_boundary(void **state)
{
    fixture *f = *state;
    OK(f->c, "SET k v");
    assert_int_equal(INT(f->c, "PEXPIRE k 100"), 1);
    fr_clock_advance(f->srv, 99);
    assert_int_equal(INT(f->c, "EXISTS k"), 1);
    assert_int_equal(INT(f->c, "PTTL k"), 1);
    fr_clock_advance(f->srv, 1);
    assert_int_equal(INT(f->c, "EXISTS k"), 1);
    assert_int_equal(INT(f->c, "PTTL k"), 0);
    assert_int_equal(INT(f->c, "TTL k"), 0);
    assert_int_equal(INT(f->c, "PEXPIRETIME k"), START_MS + 100);
    fr_clock_advance(f->srv, 1);
    assert_int_equal(INT(f->c, "EXISTS k"), 0);
    assert_int_equal(INT(f->c, "PTTL k"), -2);
    assert_int_equal(INT(f->c, "TTL k"), -2);
    assert_int_equal(INT(f->c, "PEXPIRETIME k"), -2);
    assert_int_equal(fake_run_logged(f->c, "GET k")->type, FR_REPLY_NIL);
}

/* A computed deadline <= now deletes at once and answers 1; now + 1 does not. */
static void test_deadline_not_in_future_deletes(void **state)
{
    fixture *f = *state;
    OK(f->c, "SET k v");
    assert_int_equal(INT(f->c, "PEXPIRE k 0"), 1);
    assert_int_equal(INT(f->c, "EXISTS k"), 0);

    OK(f->c, "SET k v");
    assert_int_equal(INT(f->c, "PEXPIREAT k %lld", START_MS), 1);
    assert_int_equal(INT(f->c, "EXISTS k"), 0);

    OK(f->c, "SET k v");
    assert_int_equal(INT(f->c, "EXPIREAT k %lld", START_MS / 1000), 1); /* == now */
    assert_int_equal(INT(f->c, "EXISTS k"), 0);

    OK(f->c, "SET k v");
    assert_int_equal(INT(f->c, "PEXPIREAT k %lld", START_MS + 1), 1);
    assert_int_equal(INT(f->c, "EXISTS k"), 1);
    assert_int_equal(INT(f->c, "PTTL k"), 1);

    OK(f->c, "SET k v");
    assert_int_equal(INT(f->c, "EXPIRE k -5"), 1);
    assert_int_equal(INT(f->c, "EXISTS k"), 0);
    assert_int_equal(INT(f->c, "EXPIRE k -5"), 0); /* missing now */
}

/* TTL rounds (ms + 500) / 1000; PTTL and the absolute forms are exact. */
static void test_ttl_values_exact(void **state)
{
    fixture *f = *state;
    OK(f->c, "SET k v");
    assert_int_equal(INT(f->c, "TTL k"), -1);
    assert_int_equal(INT(f->c, "PTTL k"), -1);
    assert_int_equal(INT(f->c, "EXPIRETIME k"), -1);
    assert_int_equal(INT(f->c, "EXPIRE k 100"), 1);
    assert_int_equal(INT(f->c, "TTL k"), 100);
    assert_int_equal(INT(f->c, "PTTL k"), 100000);
    assert_int_equal(INT(f->c, "PEXPIRETIME k"), START_MS + 100000);
    assert_int_equal(INT(f->c, "EXPIRETIME k"), (START_MS + 100000 + 500) / 1000);
    fr_clock_advance(f->srv, 500);
    assert_int_equal(INT(f->c, "PTTL k"), 99500);
    assert_int_equal(INT(f->c, "TTL k"), 100); /* 99500 + 500 = 100000 */
    fr_clock_advance(f->srv, 1);
    assert_int_equal(INT(f->c, "PTTL k"), 99499);
    assert_int_equal(INT(f->c, "TTL k"), 99);
    fr_clock_advance(f->srv, 99000);
    assert_int_equal(INT(f->c, "PTTL k"), 499);
    assert_int_equal(INT(f->c, "TTL k"), 0);
    fr_clock_advance(f->srv, -1);
    assert_int_equal(INT(f->c, "TTL k"), 1); /* 500 ms rounds up */

    /* The absolute seconds round too: a deadline at .499 and at .500 */
    assert_int_equal(INT(f->c, "PEXPIREAT k 4102444800499"), 1);
    assert_int_equal(INT(f->c, "EXPIRETIME k"), 4102444800LL);
    assert_int_equal(INT(f->c, "PEXPIREAT k 4102444800500"), 1);
    assert_int_equal(INT(f->c, "EXPIRETIME k"), 4102444801LL);
    /* Redis's (ms + 500) wraps past LLONG_MAX and divides as unsigned */
    assert_int_equal(INT(f->c, "PEXPIREAT k 9223372036854775807"), 1);
    assert_int_equal(INT(f->c, "EXPIRETIME k"), 9223372036854776LL);
}

/* NX/XX/GT/LT compare deadlines exactly; no TTL is "infinite" for GT and LT. */
static void test_expire_conditions(void **state)
{
    fixture *f = *state;
    OK(f->c, "SET k v");
    assert_int_equal(INT(f->c, "PEXPIRE k 1000 XX"), 0);
    assert_int_equal(INT(f->c, "PEXPIRE k 1000 GT"), 0);
    assert_int_equal(INT(f->c, "PTTL k"), -1);
    assert_int_equal(INT(f->c, "PEXPIRE k 1000 LT"), 1);
    assert_int_equal(INT(f->c, "PEXPIRE k 2000 NX"), 0);
    assert_int_equal(INT(f->c, "PEXPIRE k 1000 GT"), 0); /* equal is not greater */
    assert_int_equal(INT(f->c, "PEXPIRE k 1000 LT"), 0); /* nor less */
    assert_int_equal(INT(f->c, "PEXPIRE k 1001 GT"), 1);
    assert_int_equal(INT(f->c, "PTTL k"), 1001);
    assert_int_equal(INT(f->c, "PEXPIRE k 999 XX LT"), 1);
    assert_int_equal(INT(f->c, "PTTL k"), 999);
    assert_int_equal(INT(f->c, "PEXPIREAT k %lld GT", START_MS + 999), 0);
    assert_int_equal(INT(f->c, "PEXPIREAT k %lld LT", START_MS + 998), 1);
    assert_int_equal(INT(f->c, "PTTL k"), 998);
    assert_int_equal(INT(f->c, "PERSIST k"), 1);
    assert_int_equal(INT(f->c, "PERSIST k"), 0);
    fr_clock_advance(f->srv, 100000);
    assert_int_equal(INT(f->c, "EXISTS k"), 1);
}

/* ----- Listings never show an expired key ----------------------------------------------- */

static void test_listings_hide_expired(void **state)
{
    fixture *f = *state;
    const fr_reply *r;
    OK(f->c, "MSET live 1 dead 2 dead2 3");
    assert_int_equal(INT(f->c, "PEXPIRE dead 10"), 1);
    assert_int_equal(INT(f->c, "PEXPIRE dead2 10"), 1);
    assert_int_equal(INT(f->c, "DBSIZE"), 3);
    fr_clock_advance(f->srv, 11);

    /* Nothing has deleted them yet: every listing must skip them anyway. */
    assert_int_equal(INT(f->c, "DBSIZE"), 1);
    r = fake_run_logged(f->c, "KEYS *");
    assert_int_equal(r->count, 1);
    assert_int_equal(count_in(r, "live"), 1);
    r = fake_run_logged(f->c, "KEYS dead*");
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_int_equal(r->count, 0);
    for (int i = 0; i < 5; i++) {
        r = fake_run_logged(f->c, "RANDOMKEY");
        assert_int_equal(r->type, FR_REPLY_BULK);
        assert_string_equal(r->str, "live");
    }
    r = fake_run_logged(f->c, "SCAN 0");
    assert_int_equal(r->count, 2);
    assert_string_equal(r->elements[0].str, "0");
    assert_int_equal(r->elements[1].count, 1);
    assert_int_equal(count_in(&r->elements[1], "live"), 1);
    r = fake_run_logged(f->c, "SCAN 0 TYPE none");
    assert_int_equal(r->elements[1].count, 0);
    assert_int_equal(INT(f->c, "EXISTS dead dead2 live"), 1);
    assert_string_equal(fake_run_logged(f->c, "TYPE dead")->str, "none");
    assert_int_equal(INT(f->c, "DBSIZE"), 1);

    /* A logically expired key is a missing key for the writers too. */
    assert_int_equal(INT(f->c, "EXPIRE dead2 100"), 0);
    assert_int_equal(INT(f->c, "PERSIST dead2"), 0);
    assert_int_equal(INT(f->c, "DEL dead2"), 0);
}

/* ----- RENAME and MOVE keep the TTL ------------------------------------------------------- */

static void test_rename_keeps_ttl(void **state)
{
    fixture *f = *state;
    const fr_reply *r;
    OK(f->c, "SET a 1");
    assert_int_equal(INT(f->c, "PEXPIRE a 5000"), 1);
    OK(f->c, "RENAME a b");
    assert_int_equal(INT(f->c, "PTTL b"), 5000);
    assert_int_equal(INT(f->c, "EXISTS a"), 0);

    /* onto a key with its own TTL: the source's TTL wins */
    OK(f->c, "SET c 2");
    assert_int_equal(INT(f->c, "PEXPIRE c 100"), 1);
    OK(f->c, "RENAME b c");
    assert_int_equal(INT(f->c, "PTTL c"), 5000);

    /* onto a key with a TTL, from one without: no TTL */
    OK(f->c, "SET d 3");
    OK(f->c, "RENAME d c");
    assert_int_equal(INT(f->c, "PTTL c"), -1);

    /* RENAMENX and MOVE keep it too */
    assert_int_equal(INT(f->c, "PEXPIRE c 777"), 1);
    assert_int_equal(INT(f->c, "RENAMENX c e"), 1);
    assert_int_equal(INT(f->c, "PTTL e"), 777);
    assert_int_equal(INT(f->c, "MOVE e 3"), 1);
    fake_assert_expires_in_db(f, 3, "e", 777);

    /* an expired source is missing */
    OK(f->c, "SET x 1");
    assert_int_equal(INT(f->c, "PEXPIRE x 1"), 1);
    fr_clock_advance(f->srv, 2);
    r = fake_run_logged(f->c, "RENAME x y");
    assert_int_equal(r->type, FR_REPLY_ERROR);
    assert_string_equal(r->str, "ERR no such key");

    /* an expired destination does not stop RENAMENX */
    OK(f->c, "SET x 1");
    OK(f->c, "SET y 2");
    assert_int_equal(INT(f->c, "PEXPIRE y 1"), 1);
    fr_clock_advance(f->srv, 2);
    assert_int_equal(INT(f->c, "RENAMENX x y"), 1);
    assert_string_equal(fake_run_logged(f->c, "GET y")->str, "1");
}

/* ----- SCAN ---------------------------------------------------------------------------- */

/* A keyspace of at most COUNT keys is scanned in one call, as on a real server. */
static void test_scan_small_keyspace_one_call(void **state)
{
    fixture *f = *state;
    const fr_reply *r;
    r = fake_run_logged(f->c, "SCAN 0");
    assert_string_equal(r->elements[0].str, "0");
    assert_int_equal(r->elements[1].count, 0);

    OK(f->c, "MSET a 1 b 2 c 3 d 4 e 5");
    r = fake_run_logged(f->c, "SCAN 0");
    assert_string_equal(r->elements[0].str, "0");
    assert_int_equal(r->elements[1].count, 5);
    r = fake_run_logged(f->c, "SCAN 0 COUNT 5");
    assert_string_equal(r->elements[0].str, "0");
    assert_int_equal(r->elements[1].count, 5);
    r = fake_run_logged(f->c, "SCAN 0 MATCH [ae]");
    assert_string_equal(r->elements[0].str, "0");
    assert_int_equal(r->elements[1].count, 2);

    /* COUNT 2: pages of two, then the rest */
    r = fake_run_logged(f->c, "SCAN 0 COUNT 2");
    assert_string_not_equal(r->elements[0].str, "0");
    assert_int_equal(r->elements[1].count, 2);
    char cur[32];
    snprintf(cur, sizeof(cur), "%s", r->elements[0].str);
    r = fake_run_logged(f->c, "SCAN %s COUNT 2", cur);
    assert_int_equal(r->elements[1].count, 2);
    snprintf(cur, sizeof(cur), "%s", r->elements[0].str);
    r = fake_run_logged(f->c, "SCAN %s COUNT 2", cur);
    assert_string_equal(r->elements[0].str, "0");
    assert_int_equal(r->elements[1].count, 1);

    /* COUNT counts visited keys, matching or not: a page may be empty mid-scan */
    r = fake_run_logged(f->c, "SCAN 0 COUNT 2 MATCH zzz");
    assert_string_not_equal(r->elements[0].str, "0");
    assert_int_equal(r->elements[1].count, 0);
}

#define UNIVERSE 600 /* key names k0..k599 */

/* Scans while keys are added, deleted, re-added and expire between calls.  Keys present
 * for the whole scan (never deleted, not expiring) must come back exactly once; any key
 * returned must have been present at some point; the scan must end. */
static void scan_random_run(uint64_t seed)
{
    fr_config cfg = fr_config_default();
    fr_server *srv = fr_server_new(&cfg);
    fr_client *c = fr_client_new(srv);
    uint64_t rs = seed * 2654435761u + 1;
    int present[UNIVERSE] = {0};   /* exists now */
    int ever[UNIVERSE] = {0};      /* existed at some point during the scan */
    int stable[UNIVERSE] = {0};    /* present from start to end, untouched */
    int seen[UNIVERSE] = {0};      /* times SCAN returned it */
    char cursor[32] = "0";
    int calls = 0;

    for (int i = 0; i < 200; i++) {
        OK(c, "SET k%d v", i);
        present[i] = ever[i] = stable[i] = 1;
    }
    for (int i = 200; i < 260; i++) { /* these expire during the scan */
        OK(c, "SET k%d v", i);
        assert_int_equal(INT(c, "PEXPIRE k%d %d", i, 1 + (int)(xorshift64_next(&rs) % 50)), 1);
        present[i] = ever[i] = 1;
    }

    do {
        int count = 1 + (int)(xorshift64_next(&rs) % 25);
        const fr_reply *r = fake_run_logged(c, "SCAN %s COUNT %d", cursor, count);
        assert_int_equal(r->type, FR_REPLY_ARRAY);
        assert_int_equal(r->count, 2);
        assert_true(r->elements[1].count <= (size_t)count);
        snprintf(cursor, sizeof(cursor), "%s", r->elements[0].str);
        for (size_t j = 0; j < r->elements[1].count; j++) {
            int k = atoi(r->elements[1].elements[j].str + 1);
            assert_true(k >= 0 && k < UNIVERSE);
            assert_true(ever[k]);
            seen[k]++;
        }
        calls++;
        assert_true(calls < 10000);

        /* Between calls: a few deletions, additions and re-additions. */
        int ops = (int)(xorshift64_next(&rs) % 6);
        for (int o = 0; o < ops; o++) {
            int k = (int)(xorshift64_next(&rs) % UNIVERSE);
            if (present[k] && xorshift64_next(&rs) % 3 == 0) {
                long long del = INT(c, "DEL k%d", k);
                if (k < 200 || k >= 260) /* the others may have expired already */
                    assert_int_equal(del, 1);
                present[k] = 0;
                stable[k] = 0;
            } else if (!present[k] && k >= 260) {
                OK(c, "SET k%d v", k);
                present[k] = ever[k] = 1;
            }
        }
        fr_clock_advance(srv, 1);
    } while (strcmp(cursor, "0") != 0);

    for (int k = 0; k < UNIVERSE; k++) {
        if (stable[k] && seen[k] != 1)
            fail_msg("seed %llu: stable key k%d returned %d times",
                     (unsigned long long)seed, k, seen[k]);
    }
    fr_client_free(c);
    fr_server_free(srv);
}

static void test_scan_random_exactly_once(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++)
        scan_random_run(seed);
}

/* A scan that finds nothing left after its cursor ends; a cursor past the end is 0. */
static void test_scan_cursor_edges(void **state)
{
    fixture *f = *state;
    const fr_reply *r;
    OK(f->c, "MSET a 1 b 2 c 3");
    r = fake_run_logged(f->c, "SCAN 18446744073709551615");
    assert_string_equal(r->elements[0].str, "0");
    assert_int_equal(r->elements[1].count, 0);
    r = fake_run_logged(f->c, "SCAN 0 COUNT 2");
    char cur[32];
    snprintf(cur, sizeof(cur), "%s", r->elements[0].str);
    /* the key the cursor points at is deleted: the scan resumes after it */
    assert_int_equal(INT(f->c, "DEL c"), 1);
    r = fake_run_logged(f->c, "SCAN %s COUNT 2", cur);
    assert_string_equal(r->elements[0].str, "0");
    assert_int_equal(r->elements[1].count, 0);
    r = fake_run_logged(f->c, "SCAN \"\"");
    assert_string_equal(r->elements[0].str, "0");
    assert_int_equal(r->elements[1].count, 2);
    r = fake_run_logged(f->c, "SCAN \" 0\"");
    assert_int_equal(r->type, FR_REPLY_ERROR);
    assert_string_equal(r->str, "ERR invalid cursor");
}

/* ----- CLIENT PAUSE (pause.c) -------------------------------------------------------- */

/* Whether fr_client_pause_holds holds the inline command line. */
static int holds(fr_client *c, const char *line)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", line);
    const char *argv[16];
    int argc = 0;
    for (char *t = strtok(buf, " "); t && argc < 16; t = strtok(NULL, " ")) argv[argc++] = t;
    return fr_client_pause_holds(c, argc, argv, NULL);
}

/* A pause keeps the keyspace as it is (Redis's expireIfNeeded and activeExpireCycle): an
 * expired key reads as gone but stays, the active expiry deletes nothing, and once the
 * pause is over the next touch deletes it and counts it in expired_keys. */
static void test_pause_keeps_expired_keys(void **state)
{
    fixture *f = *state;
    OK(f->c, "SET k v PX 10");
    OK(f->c, "SET j v PX 10");
    fr_server_pause(f->srv, FR_PAUSE_WRITE, START_MS + 1000);
    fr_clock_advance(f->srv, 20);
    assert_int_equal(INT(f->c, "EXISTS k"), 0);
    assert_int_equal(fr_server_active_expire(f->srv), 0);
    assert_int_equal(fr_server_expired_keys(f->srv), 0);
    assert_int_equal(fr_server_next_expiry(f->srv), START_MS + 10); /* still there */
    fr_server_unpause(f->srv);
    assert_int_equal(INT(f->c, "EXISTS k"), 0);
    assert_int_equal(fr_server_expired_keys(f->srv), 1);
    assert_int_equal(fr_server_active_expire(f->srv), 1);
    assert_int_equal(fr_server_expired_keys(f->srv), 2);
    assert_int_equal(fr_server_next_expiry(f->srv), -1);
    fr_stats_reset(f->srv);
    assert_int_equal(fr_server_expired_keys(f->srv), 0);
}

/* A key a pause kept may be written over (a write run in-process during a pause): the
 * kept object is replaced, not leaked (the sanitize build's leak check says so). */
static void test_pause_kept_key_overwritten(void **state)
{
    fixture *f = *state;
    OK(f->c, "SET k old PX 10");
    fr_server_pause(f->srv, FR_PAUSE_WRITE, START_MS + 1000);
    fr_clock_advance(f->srv, 20);
    assert_int_equal(INT(f->c, "RPUSH k a"), 1);
    assert_int_equal(INT(f->c, "LLEN k"), 1);
    assert_int_equal(INT(f->c, "PTTL k"), -1);
}

/* The pause ends on the fake's clock once it is past the end (end < now, as Redis), keeps
 * the stricter type and the later end, and ends with unpause. */
static void test_pause_ends_on_the_clock(void **state)
{
    fixture *f = *state;
    int64_t end;
    assert_int_equal(fr_server_paused(f->srv, NULL), FR_PAUSE_OFF);
    fr_server_pause(f->srv, FR_PAUSE_ALL, START_MS + 100);
    fr_server_pause(f->srv, FR_PAUSE_WRITE, START_MS + 200);
    assert_int_equal(fr_server_paused(f->srv, &end), FR_PAUSE_ALL);
    assert_int_equal(end, START_MS + 200);
    fr_clock_advance(f->srv, 200);
    assert_int_equal(fr_server_paused(f->srv, NULL), FR_PAUSE_ALL);
    fr_clock_advance(f->srv, 1);
    assert_int_equal(fr_server_paused(f->srv, NULL), FR_PAUSE_OFF);
    fr_server_pause(f->srv, FR_PAUSE_WRITE, START_MS + 10000);
    assert_int_equal(fr_server_paused(f->srv, &end), FR_PAUSE_WRITE); /* a fresh one */
    assert_int_equal(end, START_MS + 10000);
    fr_server_unpause(f->srv);
    assert_int_equal(fr_server_paused(f->srv, NULL), FR_PAUSE_OFF);
    assert_int_equal(holds(f->c, "SET a b"), 0);
}

/* What a WRITE pause holds: Redis's CMD_WRITE | CMD_MAY_REPLICATE after getCommandFlags. */
static void test_pause_write_holds(void **state)
{
    fixture *f = *state;
    fr_server_pause(f->srv, FR_PAUSE_WRITE, START_MS + 1000);
    assert_int_equal(holds(f->c, "SET a b"), 1);
    assert_int_equal(holds(f->c, "GET a"), 0);
    assert_int_equal(holds(f->c, "PING"), 0);
    assert_int_equal(holds(f->c, "PUBLISH ch m"), 1);
    assert_int_equal(holds(f->c, "PFCOUNT h"), 1);
    assert_int_equal(holds(f->c, "SET a"), 0);        /* arity: answered at once */
    assert_int_equal(holds(f->c, "NOSUCHCMD a"), 0);  /* unknown: answered at once */
    assert_int_equal(holds(f->c, "EVAL x 0"), 1);     /* no shebang: EVAL may replicate */
    assert_int_equal(holds(f->c, "EVAL_RO x 0"), 0);  /* EVAL_RO's row is read-only */
    assert_int_equal(holds(f->c, "EVAL #!lua 0"), 1); /* a shebang without no-writes */
    assert_int_equal(holds(f->c, "FCALL nosuch 0"), 1);
    assert_int_equal(holds(f->c, "FCALL_RO nosuch 0"), 0);
    fr_server_pause(f->srv, FR_PAUSE_ALL, START_MS + 1000);
    assert_int_equal(holds(f->c, "GET a"), 1);
    assert_int_equal(holds(f->c, "GET"), 0);
}

/* EXEC is held by what its queue holds, judged when each command was queued. */
static void test_pause_exec_by_queue(void **state)
{
    fixture *f = *state;
    OK(f->c, "MULTI");
    assert_string_equal(fake_run_logged(f->c, "GET a")->str, "QUEUED");
    fr_server_pause(f->srv, FR_PAUSE_WRITE, START_MS + 1000);
    assert_int_equal(holds(f->c, "EXEC"), 0);
    fr_server_unpause(f->srv);
    assert_string_equal(fake_run_logged(f->c, "EVAL \"#!lua flags=no-writes\nreturn 1\" 0")->str,
                        "QUEUED");
    fr_server_pause(f->srv, FR_PAUSE_WRITE, START_MS + 1000);
    assert_int_equal(holds(f->c, "EXEC"), 0);
    fr_server_unpause(f->srv);
    assert_string_equal(fake_run_logged(f->c, "INCR a")->str, "QUEUED");
    fr_server_pause(f->srv, FR_PAUSE_WRITE, START_MS + 1000);
    assert_int_equal(holds(f->c, "EXEC"), 1);
}

/* With the active expiry off (DEBUG SET-ACTIVE-EXPIRE 0), DBSIZE and fr_db_counts count
 * expired keys until something deletes them, as Redis's dictSize does; back on, the fake
 * counts as if the cycle had just run. */
static void test_counts_without_active_expiry(void **state)
{
    fixture *f = *state;
    size_t keys = 0, expires = 0;
    OK(f->c, "MSET live 1 dead 2 dead2 3");
    assert_int_equal(INT(f->c, "PEXPIRE dead 10"), 1);
    assert_int_equal(INT(f->c, "PEXPIRE dead2 10"), 1);
    fr_server_set_active_expiry(f->srv, 0);
    fr_clock_advance(f->srv, 11);
    assert_int_equal(INT(f->c, "DBSIZE"), 3);
    assert_int_equal(fr_db_counts(f->srv, 0, &keys, &expires), 0);
    assert_int_equal(keys, 3);
    assert_int_equal(expires, 2);
    assert_int_equal(INT(f->c, "EXISTS dead"), 0); /* the lookup deletes it */
    assert_int_equal(INT(f->c, "DBSIZE"), 2);
    fr_server_set_active_expiry(f->srv, 1);
    assert_int_equal(INT(f->c, "DBSIZE"), 1);
    assert_int_equal(fr_db_counts(f->srv, 0, &keys, &expires), 0);
    assert_int_equal(keys, 1);
    assert_int_equal(expires, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_pexpire_boundary),
        TEST(test_deadline_not_in_future_deletes),
        TEST(test_ttl_values_exact),
        TEST(test_expire_conditions),
        TEST(test_listings_hide_expired),
        TEST(test_counts_without_active_expiry),
        TEST(test_rename_keeps_ttl),
        TEST(test_scan_small_keyspace_one_call),
        cmocka_unit_test(test_scan_random_exactly_once),
        TEST(test_scan_cursor_edges),
        TEST(test_pause_keeps_expired_keys),
        TEST(test_pause_kept_key_overwritten),
        TEST(test_pause_ends_on_the_clock),
        TEST(test_pause_write_holds),
        TEST(test_pause_exec_by_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
