/* test_blocking.c -- blocking commands that really block (blocked.c), for clients that
 * turn blocking on: what blocks and what does not, the order blocked clients are served
 * in (per key first blocked first served, across keys in the order they became ready,
 * chains through BLMOVE, a list emptied by the first ones), streams and consumer groups
 * (NOGROUP and UNBLOCKED when the group or key goes), timeouts on the virtual clock,
 * fr_client_unblock, pipelines, and clients freed while blocked or woken.
 *
 * The last tests play scenarios on a real redis-server (pubblk_scenario.h): a second real
 * connection pushes, and the woken replies must match byte for byte.  They need
 * redis-server and fail without it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fakeredis.h"
#include "pubblk_scenario.h"

/* ----- Helpers ------------------------------------------------------------------------ */


/* Runs line on c, which must block. */
#define BLOCKS(c, line)                                                             \
    do {                                                                            \
        size_t len_;                                                                \
        run_resp((c), (line), &len_);                                               \
        if (len_ != 0 || !fr_client_is_blocked(c)) fail_msg("%s did not block", (line)); \
    } while (0)

/* The next woken client must be c, woken with exactly want. */
#define WOKEN(s, c, want)                                                           \
    do {                                                                            \
        fr_client *w_ = fr_server_take_woken(s);                                    \
        if (w_ != (c)) fail_msg("woken %p, want %p", (void *)w_, (void *)(c));       \
        size_t len_;                                                                \
        const char *p_ = fr_client_woken_resp(w_, &len_);                           \
        if (len_ != sizeof(want) - 1 || memcmp(p_, (want), len_) != 0)              \
            fail_msg("woken reply\n  got:  %s\n  want: %s", pb_escape(p_, len_), (want)); \
        assert_false(fr_client_is_blocked(w_));                                     \
    } while (0)

/* Each test's world: a server on the virtual clock, three clients with blocking on and
 * one (d) with the default. */
typedef struct world {
    fr_server *s;
    fr_client *a, *b, *c, *d;
} world;

static int world_setup(void **state)
{
    world *w = calloc(1, sizeof(*w));
    w->s = fr_server_new(NULL);
    w->a = fr_client_new(w->s);
    w->b = fr_client_new(w->s);
    w->c = fr_client_new(w->s);
    w->d = fr_client_new(w->s);
    fr_client_set_blocking(w->a, 1);
    fr_client_set_blocking(w->b, 1);
    fr_client_set_blocking(w->c, 1);
    *state = w;
    return 0;
}

static int world_teardown(void **state)
{
    world *w = *state;
    assert_null(fr_server_take_woken(w->s)); /* every wake was checked */
    fr_server_free(w->s);
    free(w);
    return 0;
}

/* ----- What blocks ---------------------------------------------------------------------- */

/* Without blocking on, nothing waits (the timeout reply at once); with it, an unservable
 * blocking command blocks and answers nothing through every entry point; a servable one,
 * one inside MULTI/EXEC, XREAD without BLOCK and XREADGROUP reading history do not. */
static void test_what_blocks(void **state)
{
    world *w = *state;
    EXPECT(w->d, "BLPOP k 0", "*-1\r\n");
    EXPECT(w->d, "XREAD BLOCK 0 STREAMS s $", "*-1\r\n");
    assert_int_equal(fr_server_blocked_count(w->s), 0);

    assert_null(fr_exec_line(w->a, "BLPOP k 0"));
    assert_true(fr_client_is_blocked(w->a));
    assert_int_equal(fr_server_blocked_count(w->s), 1);
    assert_int_equal(fr_server_next_deadline(w->s), -1);
    const char *argv[] = {"BRPOP", "k", "0"};
    size_t n = 9;
    assert_null(fr_exec_all(w->b, 3, argv, NULL, &n));
    assert_int_equal(n, 0);
    assert_int_equal(fr_server_blocked_count(w->s), 2);

    EXPECT(w->c, "RPUSH k2 x", ":1\r\n");
    EXPECT(w->c, "BLPOP k2 0", "*2\r\n$2\r\nk2\r\n$1\r\nx\r\n"); /* served at once */
    EXPECT(w->c, "MULTI", "+OK\r\n");
    EXPECT(w->c, "BLPOP k 0", "+QUEUED\r\n");
    EXPECT(w->c, "BLMOVE k d LEFT LEFT 0", "+QUEUED\r\n");
    EXPECT(w->c, "EXEC", "*2\r\n*-1\r\n$-1\r\n");
    EXPECT(w->c, "XREAD STREAMS s 0", "*-1\r\n");
    EXPECT(w->c, "XGROUP CREATE s g $ MKSTREAM", "+OK\r\n");
    EXPECT(w->c, "XREADGROUP GROUP g c BLOCK 0 STREAMS s 0", "*1\r\n*2\r\n$1\r\ns\r\n*0\r\n");
    EXPECT(w->c, "BLPOP k notanumber", "-ERR timeout is not a float or out of range\r\n");
    EXPECT(w->c, "SET str v", "+OK\r\n");
    EXPECT(w->c, "BLPOP str 0", "-WRONGTYPE Operation against a key holding the wrong kind of "
                                "value\r\n");
    assert_false(fr_client_is_blocked(w->c));
    fr_client_free(w->a);
    fr_client_free(w->b);
    w->a = w->b = NULL;
    assert_int_equal(fr_server_blocked_count(w->s), 0);
}

/* A client is served first blocked first served; each woken reply comes once through
 * fr_server_take_woken, raw or as a tree. */
static void test_wake_order(void **state)
{
    world *w = *state;
    BLOCKS(w->a, "BLPOP k 0");
    BLOCKS(w->b, "BRPOP k 0");
    EXPECT(w->c, "LPUSH k x y z", ":3\r\n"); /* k: z y x */
    WOKEN(w->s, w->a, "*2\r\n$1\r\nk\r\n$1\r\nz\r\n");
    WOKEN(w->s, w->b, "*2\r\n$1\r\nk\r\n$1\r\nx\r\n");
    assert_null(fr_server_take_woken(w->s));
    EXPECT(w->c, "LRANGE k 0 -1", "*1\r\n$1\r\ny\r\n");
    const fr_reply *r = fr_client_woken_reply(w->a);
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_string_equal(r->elements[1].str, "z");
    r = fr_client_woken_reply(w->a); /* again: the raw bytes were not consumed */
    assert_string_equal(r->elements[1].str, "z");
    size_t len;
    fr_client_woken_resp(w->a, &len);
    assert_int_equal(len, 18);
    assert_null(fr_client_woken_reply(w->c));
    /* a woken client runs commands again */
    EXPECT(w->a, "LPOP k", "$1\r\ny\r\n");
}

/* Keys are served in the order they became ready, whatever the order a client listed them:
 * inside EXEC, command by command. */
static void test_key_order(void **state)
{
    world *w = *state;
    BLOCKS(w->a, "BLPOP ka kb 0");
    EXPECT(w->c, "MULTI", "+OK\r\n");
    EXPECT(w->c, "LPUSH kb 1", "+QUEUED\r\n");
    EXPECT(w->c, "LPUSH ka 2", "+QUEUED\r\n");
    EXPECT(w->c, "EXEC", "*2\r\n:1\r\n:1\r\n");
    WOKEN(w->s, w->a, "*2\r\n$2\r\nkb\r\n$1\r\n1\r\n");
    EXPECT(w->c, "LLEN ka", ":1\r\n");
}

/* A list emptied by the first client leaves the next one blocked, even when another of
 * its keys is ready later in the same transaction; that key then serves it. */
static void test_emptied_list(void **state)
{
    world *w = *state;
    BLOCKS(w->a, "BLPOP k 0");
    BLOCKS(w->b, "BLPOP k k2 0");
    EXPECT(w->c, "MULTI", "+OK\r\n");
    EXPECT(w->c, "RPUSH k only", "+QUEUED\r\n");
    EXPECT(w->c, "RPUSH k2 z", "+QUEUED\r\n");
    EXPECT(w->c, "EXEC", "*2\r\n:1\r\n:1\r\n");
    WOKEN(w->s, w->a, "*2\r\n$1\r\nk\r\n$4\r\nonly\r\n");
    WOKEN(w->s, w->b, "*2\r\n$2\r\nk2\r\n$1\r\nz\r\n");
    EXPECT(w->c, "EXISTS k k2", ":0\r\n");
}

/* BLMOVE's push into a key another client waits on serves that client next; BLMOVE onto
 * its own source rotates; a destination of the wrong type answers WRONGTYPE and leaves
 * the element. */
static void test_blmove_chain(void **state)
{
    world *w = *state;
    BLOCKS(w->a, "BLMOVE s d LEFT RIGHT 0");
    BLOCKS(w->b, "BRPOPLPUSH d e 0");
    EXPECT(w->c, "RPUSH s e1", ":1\r\n");
    WOKEN(w->s, w->a, "$2\r\ne1\r\n");
    WOKEN(w->s, w->b, "$2\r\ne1\r\n");
    EXPECT(w->c, "LRANGE e 0 -1", "*1\r\n$2\r\ne1\r\n");
    EXPECT(w->c, "EXISTS s d", ":0\r\n");

    BLOCKS(w->a, "BLMOVE r r LEFT RIGHT 0");
    EXPECT(w->c, "RPUSH r a", ":1\r\n");
    WOKEN(w->s, w->a, "$1\r\na\r\n");
    EXPECT(w->c, "LRANGE r 0 -1", "*1\r\n$1\r\na\r\n");

    BLOCKS(w->a, "BLMOVE src dst LEFT LEFT 0");
    EXPECT(w->c, "SET dst str", "+OK\r\n");
    EXPECT(w->c, "RPUSH src x", ":1\r\n");
    WOKEN(w->s, w->a, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    EXPECT(w->c, "LRANGE src 0 -1", "*1\r\n$1\r\nx\r\n");
}

/* A key that becomes another type does not serve; once a list again, it does. */
static void test_type_changes(void **state)
{
    world *w = *state;
    BLOCKS(w->a, "BLPOP k 0");
    BLOCKS(w->b, "BZPOPMIN k 0");
    EXPECT(w->c, "SET k str", "+OK\r\n");
    EXPECT(w->c, "DEL k", ":1\r\n");
    EXPECT(w->c, "ZADD k 1 m", ":1\r\n");
    WOKEN(w->s, w->b, "*3\r\n$1\r\nk\r\n$1\r\nm\r\n$1\r\n1\r\n");
    assert_true(fr_client_is_blocked(w->a));
    EXPECT(w->c, "RPUSH k v", ":1\r\n");
    WOKEN(w->s, w->a, "*2\r\n$1\r\nk\r\n$1\r\nv\r\n");
}

/* BLMPOP and BZMPOP pop up to COUNT from the key that became ready. */
static void test_mpop(void **state)
{
    world *w = *state;
    BLOCKS(w->a, "BLMPOP 0 2 a b LEFT COUNT 3");
    EXPECT(w->c, "RPUSH b 1 2", ":2\r\n");
    WOKEN(w->s, w->a, "*2\r\n$1\r\nb\r\n*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
    BLOCKS(w->a, "BZPOPMAX y z 0");
    BLOCKS(w->b, "BZMPOP 0 2 y z MIN COUNT 2");
    EXPECT(w->c, "ZADD z 1 a 2 b 3 c", ":3\r\n");
    WOKEN(w->s, w->a, "*3\r\n$1\r\nz\r\n$1\r\nc\r\n$1\r\n3\r\n");
    WOKEN(w->s, w->b, "*2\r\n$1\r\nz\r\n*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n");
}

/* Keys are per database: a push in another db does not serve. */
static void test_databases(void **state)
{
    world *w = *state;
    EXPECT(w->a, "SELECT 1", "+OK\r\n");
    BLOCKS(w->a, "BLPOP k 0");
    EXPECT(w->c, "LPUSH k x", ":1\r\n");
    assert_true(fr_client_is_blocked(w->a));
    EXPECT(w->c, "SELECT 1", "+OK\r\n");
    EXPECT(w->c, "LPUSH k y", ":1\r\n");
    WOKEN(w->s, w->a, "*2\r\n$1\r\nk\r\n$1\r\ny\r\n");
}

/* A served pop modifies the key: a WATCH on it fails the transaction. */
static void test_served_pop_touches_watch(void **state)
{
    world *w = *state;
    BLOCKS(w->a, "BLPOP k 0");
    EXPECT(w->d, "WATCH j", "+OK\r\n");
    EXPECT(w->c, "MULTI", "+OK\r\n");
    EXPECT(w->c, "RPUSH k x", "+QUEUED\r\n");
    EXPECT(w->c, "EXEC", "*1\r\n:1\r\n");
    WOKEN(w->s, w->a, "*2\r\n$1\r\nk\r\n$1\r\nx\r\n");
    EXPECT(w->d, "MULTI", "+OK\r\n");
    EXPECT(w->d, "GET j", "+QUEUED\r\n");
    EXPECT(w->d, "EXEC", "*1\r\n$-1\r\n"); /* j untouched */

    BLOCKS(w->a, "BLPOP k 0");
    EXPECT(w->d, "WATCH k", "+OK\r\n");
    EXPECT(w->c, "RPUSH k y", ":1\r\n");
    WOKEN(w->s, w->a, "*2\r\n$1\r\nk\r\n$1\r\ny\r\n");
    EXPECT(w->d, "MULTI", "+OK\r\n");
    EXPECT(w->d, "GET j", "+QUEUED\r\n");
    EXPECT(w->d, "EXEC", "*-1\r\n");
}

/* ----- Streams ---------------------------------------------------------------------------- */

/* XREAD waits past "$" as it was when the client blocked, or past its own id; served with
 * [[key, entries]] of the one key, COUNT applied; entries added and deleted meanwhile
 * wake it with an empty list. */
static void test_xread(void **state)
{
    world *w = *state;
    EXPECT(w->c, "XADD s1 1-1 f v", "$3\r\n1-1\r\n");
    BLOCKS(w->a, "XREAD COUNT 1 BLOCK 0 STREAMS s1 s2 $ $");
    BLOCKS(w->b, "XREAD BLOCK 0 STREAMS s1 5-0");
    EXPECT(w->c, "XADD s1 2-1 a 1", "$3\r\n2-1\r\n");
    WOKEN(w->s, w->a, "*1\r\n*2\r\n$2\r\ns1\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n");
    assert_true(fr_client_is_blocked(w->b));
    EXPECT(w->c, "XADD s1 6-1 b 2", "$3\r\n6-1\r\n");
    WOKEN(w->s, w->b, "*1\r\n*2\r\n$2\r\ns1\r\n*1\r\n*2\r\n$3\r\n6-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n");

    BLOCKS(w->a, "XREAD BLOCK 0 STREAMS s1 $");
    EXPECT(w->c, "MULTI", "+OK\r\n");
    EXPECT(w->c, "XADD s1 7-1 f v", "+QUEUED\r\n");
    EXPECT(w->c, "XDEL s1 7-1", "+QUEUED\r\n");
    EXPECT(w->c, "EXEC", "*2\r\n$3\r\n7-1\r\n:1\r\n");
    WOKEN(w->s, w->a, "*1\r\n*2\r\n$2\r\ns1\r\n*0\r\n");

    /* a deleted stream does not wake XREAD; a new one past its id does */
    BLOCKS(w->a, "XREAD BLOCK 0 STREAMS s1 $");
    EXPECT(w->c, "DEL s1", ":1\r\n");
    assert_true(fr_client_is_blocked(w->a));
    EXPECT(w->c, "XADD s1 8-1 f v", "$3\r\n8-1\r\n");
    WOKEN(w->s, w->a, "*1\r\n*2\r\n$2\r\ns1\r\n*1\r\n*2\r\n$3\r\n8-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n");
}

/* XREADGROUP ">" waits for entries new to the group: the first blocked consumer gets
 * them (pending, consumer created), the next waits on; a destroyed group answers
 * NOGROUP, a deleted or overwritten key UNBLOCKED. */
static void test_xreadgroup(void **state)
{
    world *w = *state;
    EXPECT(w->c, "XGROUP CREATE st g $ MKSTREAM", "+OK\r\n");
    BLOCKS(w->a, "XREADGROUP GROUP g c1 BLOCK 0 STREAMS st >");
    BLOCKS(w->b, "XREADGROUP GROUP g c2 COUNT 1 BLOCK 0 STREAMS st >");
    EXPECT(w->c, "XADD st 1-1 a 1", "$3\r\n1-1\r\n");
    WOKEN(w->s, w->a, "*1\r\n*2\r\n$2\r\nst\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n");
    assert_true(fr_client_is_blocked(w->b));
    EXPECT(w->c, "XPENDING st g - + 10",
           "*1\r\n*4\r\n$3\r\n1-1\r\n$2\r\nc1\r\n:0\r\n:1\r\n");
    EXPECT(w->c, "XADD st 2-1 b 2", "$3\r\n2-1\r\n");
    WOKEN(w->s, w->b, "*1\r\n*2\r\n$2\r\nst\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n");

    BLOCKS(w->a, "XREADGROUP GROUP g c1 NOACK BLOCK 0 STREAMS st >");
    EXPECT(w->c, "XGROUP DESTROY st g", ":1\r\n");
    WOKEN(w->s, w->a, "-NOGROUP the consumer group this client was blocked on no longer exists\r\n");

    EXPECT(w->c, "XGROUP CREATE st g $", "+OK\r\n");
    BLOCKS(w->a, "XREADGROUP GROUP g c1 BLOCK 0 STREAMS st >");
    BLOCKS(w->b, "XREAD BLOCK 0 STREAMS st $");
    EXPECT(w->c, "DEL st", ":1\r\n");
    WOKEN(w->s, w->a, "-UNBLOCKED the stream key no longer exists\r\n");
    assert_true(fr_client_is_blocked(w->b));
    EXPECT(w->c, "XADD st 9-1 f v", "$3\r\n9-1\r\n");
    WOKEN(w->s, w->b, "*1\r\n*2\r\n$2\r\nst\r\n*1\r\n*2\r\n$3\r\n9-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n");

    EXPECT(w->c, "XGROUP CREATE st g $", "+OK\r\n");
    BLOCKS(w->a, "XREADGROUP GROUP g c1 BLOCK 0 STREAMS st >");
    EXPECT(w->c, "SET st str", "+OK\r\n");
    WOKEN(w->s, w->a, "-UNBLOCKED the stream key no longer exists\r\n");

    /* deleted and re-made with its group inside one transaction: served */
    EXPECT(w->c, "DEL st", ":1\r\n");
    EXPECT(w->c, "XGROUP CREATE st g $ MKSTREAM", "+OK\r\n");
    BLOCKS(w->a, "XREADGROUP GROUP g c1 BLOCK 0 STREAMS st >");
    EXPECT(w->c, "MULTI", "+OK\r\n");
    EXPECT(w->c, "DEL st", "+QUEUED\r\n");
    EXPECT(w->c, "XGROUP CREATE st g $ MKSTREAM", "+QUEUED\r\n");
    EXPECT(w->c, "XADD st 3-1 f v", "+QUEUED\r\n");
    EXPECT(w->c, "EXEC", "*3\r\n:1\r\n+OK\r\n$3\r\n3-1\r\n");
    WOKEN(w->s, w->a, "*1\r\n*2\r\n$2\r\nst\r\n*1\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n");
}

/* A blocked XREADGROUP whose key expires is unblocked with UNBLOCKED by the next command
 * any client runs (Redis's active expiry would do it within its cycle). */
static void test_xreadgroup_key_expires(void **state)
{
    world *w = *state;
    EXPECT(w->c, "XGROUP CREATE st g $ MKSTREAM", "+OK\r\n");
    EXPECT(w->c, "PEXPIRE st 100", ":1\r\n");
    BLOCKS(w->a, "XREADGROUP GROUP g c BLOCK 0 STREAMS st >");
    fr_clock_advance(w->s, 100); /* alive until the clock passes its expiry time */
    EXPECT(w->d, "PING", "+PONG\r\n");
    assert_true(fr_client_is_blocked(w->a));
    fr_clock_advance(w->s, 1);
    EXPECT(w->d, "PING", "+PONG\r\n");
    WOKEN(w->s, w->a, "-UNBLOCKED the stream key no longer exists\r\n");
    EXPECT(w->d, "EXISTS st", ":0\r\n");
}

/* ----- Timeouts and unblocking -------------------------------------------------------------- */

/* Deadlines are the blocking time plus the timeout on the server's clock; they pass only
 * through fr_server_expire_blocked, earliest first, ties in blocking order; the reply is
 * the nil array for every kind. */
static void test_timeouts(void **state)
{
    world *w = *state;
    int64_t t0 = fr_clock_now(w->s);
    BLOCKS(w->a, "BLPOP k 1.5");
    assert_int_equal(fr_server_next_deadline(w->s), t0 + 1500);
    fr_clock_advance(w->s, 100);
    BLOCKS(w->b, "XREAD BLOCK 1400 STREAMS s $");
    BLOCKS(w->c, "BZPOPMIN z 0");
    assert_int_equal(fr_server_next_deadline(w->s), t0 + 1500);
    fr_clock_advance(w->s, 1399);
    assert_int_equal(fr_server_expire_blocked(w->s), 0);
    assert_null(fr_server_take_woken(w->s));
    fr_clock_advance(w->s, 1);
    assert_int_equal(fr_server_expire_blocked(w->s), 2);
    WOKEN(w->s, w->a, "*-1\r\n");
    WOKEN(w->s, w->b, "*-1\r\n");
    assert_int_equal(fr_server_next_deadline(w->s), -1); /* c waits for ever */
    fr_clock_advance(w->s, 1000000);
    assert_int_equal(fr_server_expire_blocked(w->s), 0);
    EXPECT(w->d, "ZADD z 5 m", ":1\r\n");
    WOKEN(w->s, w->c, "*3\r\n$1\r\nz\r\n$1\r\nm\r\n$1\r\n5\r\n");

    /* every kind times out with *-1, BLMOVE and XREADGROUP included */
    EXPECT(w->d, "XGROUP CREATE gs g $ MKSTREAM", "+OK\r\n");
    BLOCKS(w->a, "BLMOVE s d LEFT RIGHT 2");
    BLOCKS(w->b, "XREADGROUP GROUP g c BLOCK 1000 STREAMS gs >");
    BLOCKS(w->c, "BZMPOP 1 1 z2 MIN");
    fr_clock_advance(w->s, 2000);
    assert_int_equal(fr_server_expire_blocked(w->s), 3);
    WOKEN(w->s, w->b, "*-1\r\n");
    WOKEN(w->s, w->c, "*-1\r\n");
    WOKEN(w->s, w->a, "*-1\r\n");
}

/* fr_client_unblock (CLIENT UNBLOCK): the timeout reply, or the UNBLOCKED error. */
static void test_client_unblock(void **state)
{
    world *w = *state;
    assert_int_equal(fr_client_unblock(w->a, 0), 0);
    BLOCKS(w->a, "BLPOP k 0");
    BLOCKS(w->b, "BLPOP k 0");
    assert_int_equal(fr_client_unblock(w->b, 1), 1);
    WOKEN(w->s, w->b, "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n");
    assert_int_equal(fr_client_unblock(w->a, 0), 1);
    WOKEN(w->s, w->a, "*-1\r\n");
    EXPECT(w->c, "RPUSH k x", ":1\r\n");
    assert_null(fr_server_take_woken(w->s));
}

/* A pipeline stops at the command that blocks: the replies before it stay valid (the
 * woken reply goes elsewhere), that one and the rest are NULL. */
static void test_pipeline(void **state)
{
    world *w = *state;
    const char *c1[] = {"RPUSH", "x", "1"};
    const char *c2[] = {"BLPOP", "k", "0"};
    const char *c3[] = {"GET", "x"};
    fr_command cmds[] = {{3, c1, NULL}, {3, c2, NULL}, {2, c3, NULL}};
    const fr_reply *rep[3];
    assert_int_equal(fr_pipeline(w->a, 3, cmds, rep), 0);
    assert_int_equal(rep[0]->type, FR_REPLY_INTEGER);
    assert_null(rep[1]);
    assert_null(rep[2]);
    EXPECT(w->c, "RPUSH k v", ":1\r\n");
    WOKEN(w->s, w->a, "*2\r\n$1\r\nk\r\n$1\r\nv\r\n");
    assert_int_equal(rep[0]->integer, 1);
}

/* A client freed while blocked is forgotten; one freed while woken is not returned. */
static void test_free_blocked(void **state)
{
    world *w = *state;
    BLOCKS(w->a, "BLPOP k 0");
    BLOCKS(w->b, "BLPOP k 0");
    fr_client_free(w->a);
    w->a = NULL;
    assert_int_equal(fr_server_blocked_count(w->s), 1);
    EXPECT(w->c, "RPUSH k x y", ":2\r\n");
    fr_client_free(w->b); /* woken, not yet taken */
    w->b = NULL;
    assert_null(fr_server_take_woken(w->s));
    EXPECT(w->c, "LRANGE k 0 -1", "*1\r\n$1\r\ny\r\n");
    w->a = fr_client_new(w->s);
    fr_client_set_blocking(w->a, 1);
    BLOCKS(w->a, "BLPOP k2 0");
    /* freeing the server with a client blocked frees everything (ASan checks) */
}

/* ----- Against a real redis-server ---------------------------------------------------------- */

static void test_real_lists(void **state)
{
    (void)state;
    static const pb_step steps[] = {
        {1, "BLPOP k 0"},
        {2, "BRPOP k 0"},
        {3, "LPUSH k x y z"},
        {3, "LRANGE k 0 -1"},
        {1, "BLPOP ka kb 0"},
        {3, "MULTI"},
        {3, "LPUSH kb 1"},
        {3, "LPUSH ka 2"},
        {3, "EXEC"},
        {1, "BLMOVE s d LEFT RIGHT 0"},
        {2, "BRPOPLPUSH d e 0"},
        {3, "RPUSH s e1"},
        {3, "LRANGE e 0 -1"},
        {1, "BLPOP q 0"},
        {2, "BLPOP q q2 0"},
        {3, "MULTI"},
        {3, "RPUSH q only"},
        {3, "RPUSH q2 z"},
        {3, "EXEC"},
        {1, "BLMOVE src dst LEFT LEFT 0"},
        {3, "SET dst str"},
        {3, "RPUSH src x"},
        {3, "LRANGE src 0 -1"},
        {1, "BLMPOP 0 2 a b RIGHT COUNT 3"},
        {3, "RPUSH b 1 2"},
        {1, "BLPOP t 0"},
        {2, "BZPOPMIN t 0"},
        {3, "SET t str"},
        {3, "DEL t"},
        {3, "ZADD t 1 m"},
        {3, "RPUSH t v"},
        {3, "DEL t"},
        {3, "RPUSH t v"},
        {1, "MULTI"},
        {1, "BLPOP none 0"},
        {1, "BLMOVE none x LEFT LEFT 0"},
        {1, "EXEC"},
        {1, "BLPOP rn 0"},
        {3, "RPUSH other x"},
        {3, "RENAME other rn"},
        {1, "BLPOP mv 0"},
        {3, "SELECT 2"},
        {3, "RPUSH mv y"},
        {3, "MOVE mv 0"},
        {3, "SELECT 0"},
        {1, "SELECT 1"},
        {1, "BLPOP sw 0"},
        {3, "RPUSH sw a"},
        {3, "SWAPDB 0 1"},
        {3, "LRANGE sw 0 -1"},
        {2, "BLPOP dup dup 0"},
        {3, "RPUSH dup 1 2"},
        {3, "LRANGE dup 0 -1"},
        {0, NULL},
    };
    pb_scenario("lists", steps);
}

static void test_real_zsets(void **state)
{
    (void)state;
    static const pb_step steps[] = {
        {1, "BZPOPMAX y z 0"},
        {2, "BZMPOP 0 2 y z MIN COUNT 2"},
        {3, "ZADD z 1 a 2 b 3 c 4 d"},
        {3, "ZRANGE z 0 -1 WITHSCORES"},
        {1, "BZPOPMIN z2 0"},
        {2, "BZPOPMIN z2 0"},
        {3, "ZADD z2 1.5 only"},
        {3, "ZADD z2 2 other"},
        {0, NULL},
    };
    pb_scenario("zsets", steps);
}

static void test_real_streams(void **state)
{
    (void)state;
    static const pb_step steps[] = {
        {3, "XADD s1 1-1 f v"},
        {1, "XREAD COUNT 1 BLOCK 0 STREAMS s1 s2 $ $"},
        {2, "XREAD BLOCK 0 STREAMS s1 5-0"},
        {3, "XADD s1 2-1 a 1"},
        {3, "XADD s1 6-1 b 2"},
        {1, "XREAD BLOCK 0 STREAMS s1 $"},
        {3, "MULTI"},
        {3, "XADD s1 7-1 f v"},
        {3, "XDEL s1 7-1"},
        {3, "EXEC"},
        {1, "XREAD BLOCK 0 STREAMS s1 $"},
        {3, "DEL s1"},
        {3, "XADD s1 8-1 f v"},
        {3, "XGROUP CREATE st g $ MKSTREAM"},
        {1, "XREADGROUP GROUP g c1 BLOCK 0 STREAMS st >"},
        {2, "XREADGROUP GROUP g c2 COUNT 1 BLOCK 0 STREAMS st >"},
        {3, "XADD st 1-1 a 1"},
        {3, "XADD st 2-1 b 2"},
        {3, "XPENDING st g"},
        {1, "XREADGROUP GROUP g c1 NOACK BLOCK 0 STREAMS st >"},
        {3, "XGROUP DESTROY st g"},
        {3, "XGROUP CREATE st g $"},
        {1, "XREADGROUP GROUP g c1 BLOCK 0 STREAMS st >"},
        {2, "XREAD BLOCK 0 STREAMS st $"},
        {3, "DEL st"},
        {3, "XADD st 9-1 f v"},
        {3, "XGROUP CREATE st g $"},
        {1, "XREADGROUP GROUP g c1 BLOCK 0 STREAMS st >"},
        {3, "SET st str"},
        {3, "DEL st"},
        {3, "XGROUP CREATE st g $ MKSTREAM"},
        {1, "XREADGROUP GROUP g c9 BLOCK 0 STREAMS st >"},
        {3, "MULTI"},
        {3, "XADD st 2-1 f v"},
        {3, "XDEL st 2-1"},
        {3, "EXEC"},
        {3, "XINFO GROUPS st"},
        {3, "XINFO STREAM st"},
        {3, "XGROUP CREATE fl g $ MKSTREAM"},
        {1, "XREADGROUP GROUP g c BLOCK 0 STREAMS fl st > >"},
        {2, "XREAD BLOCK 0 STREAMS fl fl $ $"},
        {3, "FLUSHALL"},
        {3, "XADD fl 1-1 f v"},
        {0, NULL},
    };
    pb_scenario("streams", steps);
}

static void test_real_timeouts(void **state)
{
    (void)state;
    static const pb_step steps[] = {
        {1, "BLPOP t1 0.1"},
        {2, "BLMOVE t2 d LEFT RIGHT 0.1"},
        {3, "XREAD BLOCK 100 STREAMS t3 $"},
        {4, "BZMPOP 0.1 1 t4 MIN"},
        {0, "!sleep 400"},
        {1, "BRPOPLPUSH t1 d 0.1"},
        {2, "BZPOPMAX t1 0.1"},
        {3, "XGROUP CREATE gs g $ MKSTREAM"},
        {3, "XREADGROUP GROUP g c BLOCK 100 STREAMS gs >"},
        {4, "BLMPOP 0.1 1 t4 LEFT"},
        {0, "!sleep 400"},
        {3, "XINFO CONSUMERS gs g"},
        {0, NULL},
    };
    pb_scenario("timeouts", steps);
}

int main(int argc, char **argv)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, world_setup, world_teardown)
    const struct CMUnitTest fake_tests[] = {
        T(test_what_blocks),  T(test_wake_order),    T(test_key_order),
        T(test_emptied_list), T(test_blmove_chain),  T(test_type_changes),
        T(test_mpop),         T(test_databases),     T(test_served_pop_touches_watch),
        T(test_xread),        T(test_xreadgroup),    T(test_xreadgroup_key_expires),
        T(test_timeouts),
        T(test_client_unblock), T(test_pipeline),    T(test_free_blocked),
    };
    const struct CMUnitTest real_tests[] = {
        cmocka_unit_test(test_real_lists),
        cmocka_unit_test(test_real_zsets),
        cmocka_unit_test(test_real_streams),
        cmocka_unit_test(test_real_timeouts),
    };
    /* --fake-only leaves out the comparisons with a real redis-server */
    int fake_only = argc > 1 && strcmp(argv[1], "--fake-only") == 0;
    int failed = cmocka_run_group_tests_name("blocking", fake_tests, NULL, NULL);
    if (!fake_only)
        failed += cmocka_run_group_tests_name("blocking vs redis-server", real_tests,
                                              pb_start_real, pb_stop_real);
    return failed;
}
