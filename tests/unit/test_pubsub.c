/* test_pubsub.c -- Pub/Sub (pubsub.c): subscriptions of two and three clients of one
 * server, the confirmations, PUBLISH's receiver counts and the messages pushed to each
 * subscriber in Redis's order, subscribed mode, PUBSUB's introspection, the push queue
 * API (raw bytes, reply trees, the server's queue of pushed clients), the published log,
 * and subscriptions ending with their client.
 *
 * The last tests play the same scenarios on a real redis-server (pubblk_scenario.h) and
 * compare every byte each connection receives, pushes included.  They need redis-server
 * and fail without it.
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


/* Fails unless c's queued pushes are exactly want (the queue is left as it is). */
#define EXPECT_PUSHES(c, want)                                                      \
    do {                                                                            \
        size_t len_;                                                                \
        const char *p_ = fr_client_push_resp((c), &len_);                           \
        if (len_ != sizeof(want) - 1 || memcmp(p_, (want), len_) != 0)              \
            fail_msg("pushes\n  got:  %s\n  want: %s", pb_escape(p_, len_), (want)); \
    } while (0)

static long long run_int(fr_client *c, const char *line)
{
    const fr_reply *r = fr_exec_line(c, line);
    if (r->type != FR_REPLY_INTEGER) fail_msg("%s: not an integer", line);
    return r->integer;
}

/* Each test's world: a server on the virtual clock and three clients. */
typedef struct world {
    fr_server *s;
    fr_client *a, *b, *c;
} world;

static int world_setup(void **state)
{
    world *w = calloc(1, sizeof(*w));
    w->s = fr_server_new(NULL);
    w->a = fr_client_new(w->s);
    w->b = fr_client_new(w->s);
    w->c = fr_client_new(w->s);
    *state = w;
    return 0;
}

static int world_teardown(void **state)
{
    world *w = *state;
    fr_server_free(w->s); /* frees the clients too */
    free(w);
    return 0;
}

#define MSG(ch, payload) "*3\r\n$7\r\nmessage\r\n" ch payload
#define B(s) "$" #s "\r\n"

/* ----- Subscribing ---------------------------------------------------------------------- */

/* One confirmation per channel, counting channels and patterns together; a repeated
 * channel is confirmed again without counting twice. */
static void test_subscribe_confirmations(void **state)
{
    world *w = *state;
    EXPECT(w->a, "SUBSCRIBE c1 c2",
           "*3\r\n$9\r\nsubscribe\r\n$2\r\nc1\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$2\r\nc2\r\n:2\r\n");
    EXPECT(w->a, "PSUBSCRIBE c* c?",
           "*3\r\n$10\r\npsubscribe\r\n$2\r\nc*\r\n:3\r\n*3\r\n$10\r\npsubscribe\r\n$2\r\nc?\r\n:4\r\n");
    EXPECT(w->a, "SUBSCRIBE c1", "*3\r\n$9\r\nsubscribe\r\n$2\r\nc1\r\n:4\r\n");
    assert_int_equal(fr_client_subscriptions(w->a), 4);

    /* fr_exec_all hands every confirmation out; fr_exec the first */
    const char *argv[] = {"SUBSCRIBE", "x", "y", "z"};
    size_t n;
    const fr_reply *r = fr_exec_all(w->b, 4, argv, NULL, &n);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(r[i].type, FR_REPLY_ARRAY);
        assert_int_equal(r[i].count, 3);
        assert_string_equal(r[i].elements[0].str, "subscribe");
        assert_string_equal(r[i].elements[1].str, argv[i + 1]);
        assert_int_equal(r[i].elements[2].integer, (long long)i + 1);
    }
    const fr_reply *first = fr_exec_line(w->c, "SUBSCRIBE p q");
    assert_int_equal(first->type, FR_REPLY_ARRAY);
    assert_string_equal(first->elements[1].str, "p");
    const char *get[] = {"ECHO", "hi"};
    r = fr_exec_all(w->c, 2, get, NULL, &n); /* refused in subscribed mode: one error */
    assert_int_equal(n, 1);
    assert_int_equal(r[0].type, FR_REPLY_ERROR);
}

/* UNSUBSCRIBE and PUNSUBSCRIBE with names (subscribed or not) and without (every one, in
 * subscription order, or a nil name when there is none); the count goes down to 0 and
 * subscribed mode ends with it. */
static void test_unsubscribe(void **state)
{
    world *w = *state;
    EXPECT(w->a, "UNSUBSCRIBE x", "*3\r\n$11\r\nunsubscribe\r\n$1\r\nx\r\n:0\r\n");
    EXPECT(w->a, "UNSUBSCRIBE", "*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n");
    EXPECT(w->a, "PUNSUBSCRIBE", "*3\r\n$12\r\npunsubscribe\r\n$-1\r\n:0\r\n");
    EXPECT(w->a, "SUNSUBSCRIBE", "*3\r\n$12\r\nsunsubscribe\r\n$-1\r\n:0\r\n");
    EXPECT(w->a, "GET k", "$-1\r\n"); /* none of that subscribed */

    EXPECT(w->a, "SUBSCRIBE c1 c2", "*3\r\n$9\r\nsubscribe\r\n$2\r\nc1\r\n:1\r\n"
                                    "*3\r\n$9\r\nsubscribe\r\n$2\r\nc2\r\n:2\r\n");
    EXPECT(w->a, "PSUBSCRIBE p*", "*3\r\n$10\r\npsubscribe\r\n$2\r\np*\r\n:3\r\n");
    EXPECT(w->a, "UNSUBSCRIBE nope", "*3\r\n$11\r\nunsubscribe\r\n$4\r\nnope\r\n:3\r\n");
    EXPECT(w->a, "UNSUBSCRIBE", "*3\r\n$11\r\nunsubscribe\r\n$2\r\nc1\r\n:2\r\n"
                                "*3\r\n$11\r\nunsubscribe\r\n$2\r\nc2\r\n:1\r\n");
    EXPECT(w->a, "UNSUBSCRIBE", "*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:1\r\n");
    EXPECT(w->a, "PUNSUBSCRIBE zz", "*3\r\n$12\r\npunsubscribe\r\n$2\r\nzz\r\n:1\r\n");
    assert_int_equal(fr_client_subscriptions(w->a), 1);
    EXPECT(w->a, "PUNSUBSCRIBE p*", "*3\r\n$12\r\npunsubscribe\r\n$2\r\np*\r\n:0\r\n");
    assert_int_equal(fr_client_subscriptions(w->a), 0);
    EXPECT(w->a, "SET k v", "+OK\r\n");
    assert_int_equal(run_int(w->b, "PUBLISH c1 m"), 0);
    assert_int_equal(fr_client_push_count(w->a), 0);
}

/* ----- Publishing ----------------------------------------------------------------------- */

/* PUBLISH counts every receiver: the channel's subscribers and each matching pattern's;
 * each gets its own message ("message" / "pmessage" with the pattern). */
static void test_publish_receivers(void **state)
{
    world *w = *state;
    fr_exec_line(w->a, "SUBSCRIBE news");
    fr_exec_line(w->b, "PSUBSCRIBE n*");
    assert_int_equal(run_int(w->c, "PUBLISH news hello"), 2);
    EXPECT_PUSHES(w->a, MSG(B(4) "news\r\n", B(5) "hello\r\n"));
    EXPECT_PUSHES(w->b, "*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$5\r\nhello\r\n");
    assert_int_equal(run_int(w->c, "PUBLISH nothing x"), 1); /* the pattern only */
    assert_int_equal(run_int(w->c, "PUBLISH other x"), 0);
    assert_int_equal(fr_client_push_count(w->a), 1);
    assert_int_equal(fr_client_push_count(w->b), 2);

    /* the log keeps every message, heard or not */
    assert_int_equal(fr_published_count(w->s), 3);
    const fr_message *m = fr_published(w->s, 0);
    assert_string_equal(m->channel, "news");
    assert_string_equal(m->payload, "hello");
    assert_int_equal(m->at_ms, fr_clock_now(w->s));
    assert_string_equal(fr_published(w->s, 2)->channel, "other");
    assert_null(fr_published(w->s, 3));
}

/* A client subscribed to a channel and to patterns matching it gets the message once per
 * subscription: the channel's first, then the patterns' in subscription order. */
static void test_channel_and_patterns_match(void **state)
{
    world *w = *state;
    fr_exec_line(w->a, "SUBSCRIBE news");
    fr_exec_line(w->a, "PSUBSCRIBE n* *s");
    fr_exec_line(w->b, "PSUBSCRIBE *s");
    assert_int_equal(run_int(w->c, "PUBLISH news m"), 4);
    EXPECT_PUSHES(w->a, MSG(B(4) "news\r\n", B(1) "m\r\n")
                        "*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$1\r\nm\r\n"
                        "*4\r\n$8\r\npmessage\r\n$2\r\n*s\r\n$4\r\nnews\r\n$1\r\nm\r\n");
    EXPECT_PUSHES(w->b, "*4\r\n$8\r\npmessage\r\n$2\r\n*s\r\n$4\r\nnews\r\n$1\r\nm\r\n");
    /* glob classes and escapes as Redis matches them */
    fr_exec_line(w->b, "PSUBSCRIBE h[ae]llo \\*lit");
    fr_client_push_clear(w->b);
    assert_int_equal(run_int(w->c, "PUBLISH hallo x"), 1);
    assert_int_equal(run_int(w->c, "PUBLISH hillo x"), 0);
    assert_int_equal(run_int(w->c, "PUBLISH *lit x"), 1); /* the escaped star only */
}

/* Binary channels and payloads pass through unchanged. */
static void test_binary_messages(void **state)
{
    world *w = *state;
    const char *sub[] = {"SUBSCRIBE", "a\0b"};
    size_t sublen[] = {9, 3};
    size_t n;
    fr_exec_all(w->a, 2, sub, sublen, &n);
    assert_int_equal(n, 1);
    const char *pub[] = {"PUBLISH", "a\0b", "\r\n\0"};
    size_t publen[] = {7, 3, 3};
    const fr_reply *r = fr_exec(w->b, 3, pub, publen);
    assert_int_equal(r->integer, 1);
    EXPECT_PUSHES(w->a, "*3\r\n$7\r\nmessage\r\n$3\r\na\0b\r\n$3\r\n\r\n\0\r\n");
}

/* ----- The push queue ------------------------------------------------------------------- */

/* fr_server_take_pushed lists each client with new pushes once, in the order of their
 * first push; the raw bytes stay until cleared; take_pushes moves them out as trees that
 * survive later publishing. */
static void test_push_queue(void **state)
{
    world *w = *state;
    assert_null(fr_server_take_pushed(w->s));
    fr_exec_line(w->a, "SUBSCRIBE x y");
    fr_exec_line(w->b, "SUBSCRIBE y");
    fr_exec_line(w->c, "PUBLISH y 1");
    fr_exec_line(w->c, "PUBLISH x 2");
    fr_exec_line(w->c, "PUBLISH y 3");
    assert_ptr_equal(fr_server_take_pushed(w->s), w->a);
    assert_ptr_equal(fr_server_take_pushed(w->s), w->b);
    assert_null(fr_server_take_pushed(w->s));
    assert_int_equal(fr_client_push_count(w->a), 3);
    EXPECT_PUSHES(w->b, MSG(B(1) "y\r\n", B(1) "1\r\n") MSG(B(1) "y\r\n", B(1) "3\r\n"));
    fr_client_push_clear(w->b);
    assert_int_equal(fr_client_push_count(w->b), 0);
    size_t len;
    fr_client_push_resp(w->b, &len);
    assert_int_equal(len, 0);

    const fr_reply *pushes;
    assert_int_equal(fr_client_take_pushes(w->a, &pushes), 3);
    assert_int_equal(fr_client_push_count(w->a), 0);
    fr_exec_line(w->c, "PUBLISH x later"); /* reuses the queue's memory */
    const char *want[][2] = {{"y", "1"}, {"x", "2"}, {"y", "3"}};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pushes[i].type, FR_REPLY_ARRAY);
        assert_int_equal(pushes[i].count, 3);
        assert_string_equal(pushes[i].elements[0].str, "message");
        assert_string_equal(pushes[i].elements[1].str, want[i][0]);
        assert_string_equal(pushes[i].elements[2].str, want[i][1]);
    }
    /* a client whose pushes were taken in-process is not listed again */
    assert_ptr_equal(fr_server_take_pushed(w->s), w->a);
    fr_client_take_pushes(w->a, &pushes);
    fr_exec_line(w->c, "PUBLISH y again");
    fr_client_take_pushes(w->a, &pushes);
    assert_ptr_equal(fr_server_take_pushed(w->s), w->b);
    assert_null(fr_server_take_pushed(w->s));
    assert_int_equal(fr_client_take_pushes(w->c, &pushes), 0);
    assert_null(pushes);
}

/* A client freed with subscriptions and pushes leaves nothing behind. */
static void test_free_subscriber(void **state)
{
    world *w = *state;
    fr_exec_line(w->a, "SUBSCRIBE x");
    fr_exec_line(w->a, "PSUBSCRIBE x*");
    fr_exec_line(w->b, "SUBSCRIBE x");
    fr_exec_line(w->c, "PUBLISH x 1");
    fr_client_free(w->a);
    w->a = fr_client_new(w->s);
    EXPECT(w->c, "PUBSUB NUMSUB x", "*2\r\n$1\r\nx\r\n:1\r\n");
    EXPECT(w->c, "PUBSUB NUMPAT", ":0\r\n");
    assert_int_equal(run_int(w->c, "PUBLISH x 2"), 1);
    assert_ptr_equal(fr_server_take_pushed(w->s), w->b); /* the freed one is skipped */
    assert_null(fr_server_take_pushed(w->s));
    fr_client_free(w->b);
    w->b = fr_client_new(w->s);
    EXPECT(w->c, "PUBSUB CHANNELS", "*0\r\n");
    assert_int_equal(run_int(w->c, "PUBLISH x 3"), 0);
}

/* fr_client_pubsub_reset (RESET) leaves every subscription silently. */
static void test_pubsub_reset(void **state)
{
    world *w = *state;
    fr_exec_line(w->a, "SUBSCRIBE x");
    fr_exec_line(w->a, "PSUBSCRIBE y*");
    fr_exec_line(w->a, "SSUBSCRIBE z");
    fr_client_pubsub_reset(w->a);
    assert_int_equal(fr_client_subscriptions(w->a), 0);
    EXPECT(w->a, "GET k", "$-1\r\n");
    assert_int_equal(run_int(w->b, "PUBLISH x 1"), 0);
    assert_int_equal(run_int(w->b, "PUBLISH yy 1"), 0);
    assert_int_equal(run_int(w->b, "SPUBLISH z 1"), 0);
}

/* ----- Subscribed mode ------------------------------------------------------------------ */

/* In subscribed mode only (P|S)(UN)SUBSCRIBE, PING, QUIT and RESET run; the others get
 * Redis's error with the command's full name, after the unknown-command, unknown
 * subcommand and arity checks; PING answers ["pong", message]. */
static void test_subscribed_mode(void **state)
{
    world *w = *state;
    fr_exec_line(w->a, "SUBSCRIBE c");
    EXPECT(w->a, "PING", "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
    EXPECT(w->a, "PING hi", "*2\r\n$4\r\npong\r\n$2\r\nhi\r\n");
    EXPECT(w->a, "PING a b", "-ERR wrong number of arguments for 'ping' command\r\n");
    EXPECT(w->a, "GET k", "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / "
                          "(P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n");
    EXPECT(w->a, "XINFO HELP", "-ERR Can't execute 'xinfo|help': only (P|S)SUBSCRIBE / "
                               "(P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this "
                               "context\r\n");
    EXPECT(w->a, "MULTI", "-ERR Can't execute 'multi': only (P|S)SUBSCRIBE / "
                          "(P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n");
    EXPECT(w->a, "GET", "-ERR wrong number of arguments for 'get' command\r\n");
    EXPECT(w->a, "SUBSCRIBE", "-ERR wrong number of arguments for 'subscribe' command\r\n");
    EXPECT(w->a, "NOPE", "-ERR unknown command 'NOPE', with args beginning with: \r\n");
    EXPECT(w->a, "XGROUP FOO", "-ERR unknown subcommand 'FOO'. Try XGROUP HELP.\r\n");
    EXPECT(w->a, "PSUBSCRIBE p", "*3\r\n$10\r\npsubscribe\r\n$1\r\np\r\n:2\r\n");
    EXPECT(w->a, "QUIT", "+OK\r\n");
    /* others are not affected */
    EXPECT(w->b, "PING", "+PONG\r\n");
}

/* In RESP3 (fr_client_set_protocol) subscribed mode restricts nothing and PING answers
 * +PONG. */
static void test_subscribed_resp3(void **state)
{
    world *w = *state;
    assert_int_equal(fr_client_set_protocol(w->a, 4), -1);
    assert_int_equal(fr_client_set_protocol(w->a, 3), 0);
    fr_exec_line(w->a, "SUBSCRIBE c");
    EXPECT(w->a, "PING", "+PONG\r\n");
    EXPECT(w->a, "GET k", "$-1\r\n");
    assert_int_equal(fr_client_set_protocol(w->a, 2), 0);
    EXPECT(w->a, "PING", "*2\r\n$4\r\npong\r\n$0\r\n\r\n");
}

/* SUBSCRIBE queued in MULTI subscribes when EXEC runs it; a client publishing to itself
 * inside EXEC gets the message in EXEC's reply, where Redis writes it; SSUBSCRIBE is
 * refused there. */
static void test_subscribe_in_exec(void **state)
{
    world *w = *state;
    fr_exec_line(w->a, "MULTI");
    fr_exec_line(w->a, "SUBSCRIBE x");
    fr_exec_line(w->a, "PUBLISH x m");
    fr_exec_line(w->a, "SSUBSCRIBE q");
    EXPECT(w->a, "EXEC", "*3\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\nx\r\n:1\r\n"
                         "*3\r\n$7\r\nmessage\r\n$1\r\nx\r\n$1\r\nm\r\n:1\r\n"
                         "-ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client\r\n");
    assert_int_equal(fr_client_push_count(w->a), 0);
    EXPECT(w->a, "GET k", "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / "
                          "(P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n");
}

/* ----- Shard channels ----------------------------------------------------------------------- */

/* SSUBSCRIBE / SPUBLISH / SUNSUBSCRIBE: a namespace of their own, counted apart, and
 * subscribed mode lasts while any subscription of any kind does. */
static void test_shard_channels(void **state)
{
    world *w = *state;
    fr_exec_line(w->a, "SUBSCRIBE a");
    EXPECT(w->a, "SSUBSCRIBE b a", "*3\r\n$10\r\nssubscribe\r\n$1\r\nb\r\n:1\r\n"
                                   "*3\r\n$10\r\nssubscribe\r\n$1\r\na\r\n:2\r\n");
    EXPECT(w->a, "PSUBSCRIBE p*", "*3\r\n$10\r\npsubscribe\r\n$2\r\np*\r\n:2\r\n");
    assert_int_equal(run_int(w->c, "SPUBLISH b m1"), 1);
    assert_int_equal(run_int(w->c, "PUBLISH b m2"), 0);
    EXPECT_PUSHES(w->a, "*3\r\n$8\r\nsmessage\r\n$1\r\nb\r\n$2\r\nm1\r\n");
    EXPECT(w->c, "PUBSUB SHARDCHANNELS", "*2\r\n$1\r\nb\r\n$1\r\na\r\n");
    EXPECT(w->c, "PUBSUB SHARDNUMSUB b zz", "*4\r\n$1\r\nb\r\n:1\r\n$2\r\nzz\r\n:0\r\n");
    EXPECT(w->c, "PUBSUB NUMSUB a b", "*4\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:0\r\n");
    EXPECT(w->a, "UNSUBSCRIBE a", "*3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:1\r\n");
    EXPECT(w->a, "PUNSUBSCRIBE", "*3\r\n$12\r\npunsubscribe\r\n$2\r\np*\r\n:0\r\n");
    EXPECT(w->a, "GET k", "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / "
                          "(P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n");
    EXPECT(w->a, "SUNSUBSCRIBE", "*3\r\n$12\r\nsunsubscribe\r\n$1\r\nb\r\n:1\r\n"
                                 "*3\r\n$12\r\nsunsubscribe\r\n$1\r\na\r\n:0\r\n");
    EXPECT(w->a, "GET k", "$-1\r\n");
}

/* ----- PUBSUB ------------------------------------------------------------------------------ */

static void test_pubsub_introspection(void **state)
{
    world *w = *state;
    EXPECT(w->c, "PUBSUB CHANNELS", "*0\r\n");
    EXPECT(w->c, "PUBSUB NUMSUB", "*0\r\n");
    EXPECT(w->c, "PUBSUB NUMPAT", ":0\r\n");
    fr_exec_line(w->a, "SUBSCRIBE news.1 news.2 sport");
    fr_exec_line(w->b, "SUBSCRIBE news.2");
    fr_exec_line(w->a, "PSUBSCRIBE n* s*");
    fr_exec_line(w->b, "PSUBSCRIBE n*");
    EXPECT(w->c, "PUBSUB CHANNELS", "*3\r\n$6\r\nnews.1\r\n$6\r\nnews.2\r\n$5\r\nsport\r\n");
    EXPECT(w->c, "PUBSUB CHANNELS news.*", "*2\r\n$6\r\nnews.1\r\n$6\r\nnews.2\r\n");
    EXPECT(w->c, "PUBSUB channels x*", "*0\r\n");
    EXPECT(w->c, "PUBSUB NUMSUB news.2 news.1 none",
           "*6\r\n$6\r\nnews.2\r\n:2\r\n$6\r\nnews.1\r\n:1\r\n$4\r\nnone\r\n:0\r\n");
    EXPECT(w->c, "PUBSUB NUMPAT", ":2\r\n"); /* distinct patterns */
    EXPECT(w->c, "PUBSUB", "-ERR wrong number of arguments for 'pubsub' command\r\n");
    EXPECT(w->c, "PUBSUB FOO", "-ERR unknown subcommand 'FOO'. Try PUBSUB HELP.\r\n");
    EXPECT(w->c, "PUBSUB NUMPAT x", "-ERR wrong number of arguments for 'pubsub|numpat' command\r\n");
    EXPECT(w->c, "PUBSUB channels a b", "-ERR unknown subcommand or wrong number of arguments "
                                        "for 'channels'. Try PUBSUB HELP.\r\n");
    const fr_reply *help = fr_exec_line(w->c, "PUBSUB HELP");
    assert_int_equal(help->type, FR_REPLY_ARRAY);
    assert_int_equal(help->count, 14);
    assert_string_equal(help->elements[0].str,
                        "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
    EXPECT(w->c, "PUBSUB HELP x", "-ERR wrong number of arguments for 'pubsub|help' command\r\n");
}

/* ----- Against a real redis-server --------------------------------------------------------- */

static void test_real_basics(void **state)
{
    (void)state;
    static const pb_step steps[] = {
        {1, "SUBSCRIBE rb.ch1"},
        {2, "PSUBSCRIBE rb.ch*"},
        {3, "PUBLISH rb.ch1 hello"},
        {3, "PUBLISH rb.ch2 x"},
        {1, "SUBSCRIBE rb.ch2 rb.ch3"},
        {3, "PUBLISH rb.ch3 \"with space\\r\\n\""},
        {3, "PUBSUB NUMSUB rb.ch1 rb.ch2 rb.ch3 rb.zz"},
        {3, "PUBSUB NUMPAT"},
        {3, "PUBSUB CHANNELS rb.ch1"},
        {1, "UNSUBSCRIBE rb.ch1"},
        {1, "PING"},
        {1, "PING hi"},
        {1, "GET k"},
        {1, "SET k v"},
        {1, "XINFO HELP"},
        {1, "MULTI"},
        {1, "UNSUBSCRIBE rb.ch2 rb.nope"},
        {1, "UNSUBSCRIBE rb.ch3"},
        {1, "UNSUBSCRIBE"},
        {1, "GET k"},
        {2, "PUNSUBSCRIBE rb.zz"},
        {2, "PUNSUBSCRIBE"},
        {2, "PUNSUBSCRIBE"},
        {2, "PING"},
        {3, "PUBLISH rb.ch1 nobody"},
        {0, NULL},
    };
    pb_scenario("pubsub basics", steps);
}

static void test_real_channel_and_pattern(void **state)
{
    (void)state;
    static const pb_step steps[] = {
        {1, "SUBSCRIBE cp.news"},
        {1, "PSUBSCRIBE cp.n*"},
        {2, "PSUBSCRIBE cp.*"},
        {3, "PUBLISH cp.news m"},
        {3, "PUBLISH cp.nope m2"},
        {3, "PUBLISH \"cp.bin\\x00ary\" \"\\x00\\xff\""},
        {1, "PUNSUBSCRIBE cp.n*"},
        {3, "PUBLISH cp.news m3"},
        {0, NULL},
    };
    pb_scenario("channel and pattern", steps);
}

static void test_real_errors_and_help(void **state)
{
    (void)state;
    static const pb_step steps[] = {
        {1, "PUBSUB HELP"},
        {1, "PUBSUB FOO"},
        {1, "PUBSUB"},
        {1, "PUBSUB CHANNELS a b"},
        {1, "PUBSUB SHARDCHANNELS a b"},
        {1, "PUBSUB NUMPAT x"},
        {1, "PUBSUB HELP x"},
        {1, "PUBSUB NUMSUB"},
        {1, "PUBSUB SHARDNUMSUB"},
        {1, "SUBSCRIBE"},
        {1, "PSUBSCRIBE"},
        {1, "SSUBSCRIBE"},
        {1, "PUBLISH a"},
        {1, "SPUBLISH a"},
        {1, "UNSUBSCRIBE"},
        {1, "PUNSUBSCRIBE"},
        {1, "SUNSUBSCRIBE"},
        {1, "UNSUBSCRIBE x y"},
        {0, NULL},
    };
    pb_scenario("errors and help", steps);
}

static void test_real_exec(void **state)
{
    (void)state;
    static const pb_step steps[] = {
        {1, "MULTI"},
        {1, "SUBSCRIBE ex.x"},
        {1, "PUBLISH ex.x m"},
        {1, "PSUBSCRIBE ex.x*"},
        {1, "PUBLISH ex.x m2"},
        {1, "SSUBSCRIBE ex.q"},
        {1, "EXEC"},
        {2, "PUBLISH ex.x m3"},
        {1, "GET k"},
        {0, NULL},
    };
    pb_scenario("subscribe in exec", steps);
}

static void test_real_shard(void **state)
{
    (void)state;
    static const pb_step steps[] = {
        {1, "SUBSCRIBE sh.a"},
        {1, "SSUBSCRIBE sh.b sh.a"},
        {2, "SSUBSCRIBE sh.b"},
        {3, "SPUBLISH sh.b m1"},
        {3, "PUBLISH sh.b m2"},
        {3, "SPUBLISH sh.a m3"},
        {3, "PUBSUB SHARDNUMSUB sh.b sh.a sh.zz"},
        {3, "PUBSUB SHARDCHANNELS sh.b"},
        {1, "UNSUBSCRIBE sh.a"},
        {1, "GET k"},
        {1, "SUNSUBSCRIBE sh.b"},
        {1, "SUNSUBSCRIBE sh.a"},
        {1, "GET k"},
        {2, "SUNSUBSCRIBE"},
        {0, NULL},
    };
    pb_scenario("shard channels", steps);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest fake_tests[] = {
        cmocka_unit_test_setup_teardown(test_subscribe_confirmations, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_unsubscribe, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_publish_receivers, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_channel_and_patterns_match, world_setup,
                                        world_teardown),
        cmocka_unit_test_setup_teardown(test_binary_messages, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_push_queue, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_free_subscriber, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_pubsub_reset, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_subscribed_mode, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_subscribed_resp3, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_subscribe_in_exec, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_shard_channels, world_setup, world_teardown),
        cmocka_unit_test_setup_teardown(test_pubsub_introspection, world_setup, world_teardown),
    };
    const struct CMUnitTest real_tests[] = {
        cmocka_unit_test(test_real_basics),
        cmocka_unit_test(test_real_channel_and_pattern),
        cmocka_unit_test(test_real_errors_and_help),
        cmocka_unit_test(test_real_exec),
        cmocka_unit_test(test_real_shard),
    };
    /* --fake-only leaves out the comparisons with a real redis-server */
    int fake_only = argc > 1 && strcmp(argv[1], "--fake-only") == 0;
    int failed = cmocka_run_group_tests_name("pubsub", fake_tests, NULL, NULL);
    if (!fake_only)
        failed += cmocka_run_group_tests_name("pubsub vs redis-server", real_tests, pb_start_real,
                                              pb_stop_real);
    return failed;
}
