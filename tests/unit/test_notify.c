/* test_notify.c -- keyspace notifications in the library: the config's flag text (Redis's
 * keyspaceEventsStringToFlags / FlagsToString), the hook (called for enabled classes
 * only, with class, event, key and database, in Redis's order), the messages subscribers
 * get and the fr_published log, lazy and active expiry, clients woken by a push, EXEC,
 * and a RESP3 client hearing its own notification.  The messages themselves are compared
 * with a real redis-server by tests/diff/notify.redis and diff_events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fake_fixture.h"
#include "fakeredis.h"

/* What the hook saw: one "db:class-bit:event:key" line per call. */
typedef struct seen {
    char text[4096];
    int calls;
} seen;

static int bit_index(unsigned type)
{
    int i = 0;
    while (type > 1) {
        type >>= 1;
        i++;
    }
    return i;
}

static void hook(void *ud, unsigned type, const char *event, const char *key, size_t key_len,
                 int db)
{
    seen *s = ud;
    size_t n = strlen(s->text);
    snprintf(s->text + n, sizeof(s->text) - n, "%d:%d:%s:%.*s\n", db, bit_index(type), event,
             (int)key_len, key);
    s->calls++;
}

static void set_events(fr_server *srv, const char *classes)
{
    assert_int_equal(fr_server_set_param(srv, "notify-keyspace-events", classes), 0);
}

/* Starts recording f's notifications into *s (emptied first) with the event classes on. */
static void record(fake_fixture *f, seen *s, const char *classes)
{
    memset(s, 0, sizeof(*s));
    fr_server_set_keyspace_hook(f->srv, hook, s);
    set_events(f->srv, classes);
}

/* The flag text as CONFIG GET shows it, and what CONFIG SET refuses. */
static void test_flags_text(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"", ""},           {"gKE", "gKE"},         {"$lshzxeKE", "$lshzxeKE"},
        {"KA", "AK"},       {"EA", "AE"},           {"AnKEm", "AKEm"},
        {"ngK", "gnK"},     {"g$lshzxetd", "A"},    {"mKE", "KEm"},
        {"tdn", "tdn"},     {"AAKK", "AK"},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int flags = fr_notify_flags_parse(cases[i].in);
        assert_true(flags >= 0);
        size_t n = fr_notify_flags_string((unsigned)flags, buf, sizeof(buf));
        assert_int_equal(n, strlen(cases[i].out));
        assert_string_equal(buf, cases[i].out);
    }
    assert_int_equal(fr_notify_flags_parse("KEQ"), -1);
    assert_int_equal(fr_notify_flags_parse("k"), -1);
    assert_int_equal(fr_notify_flags_parse("KEA"), (int)(FR_NOTIFY_KEYSPACE |
                                                         FR_NOTIFY_KEYEVENT | FR_NOTIFY_ALL));
    assert_int_equal(fr_notify_flags_parse("n"), (int)FR_NOTIFY_NEW);
    /* a refused value changes nothing */
    fr_server *srv = fr_server_new(NULL);
    set_events(srv, "Kl");
    assert_int_equal(fr_server_set_param(srv, "notify-keyspace-events", "Kx?"), -1);
    assert_int_equal(fr_server_notify_flags(srv), FR_NOTIFY_KEYSPACE | FR_NOTIFY_LIST);
    fr_server_free(srv);
}

/* The hook sees the enabled classes only, in order, even with neither K nor E (nothing is
 * published then); removing it stops the calls. */
static void test_hook(void **state)
{
    fake_fixture *f = *state;
    seen s = {{0}, 0};
    fr_server_set_keyspace_hook(f->srv, hook, &s);
    fake_run(f->c, "SET a 1");
    assert_int_equal(s.calls, 0); /* off by default */
    set_events(f->srv, "$gn");
    fake_run(f->c, "SET a 2 EX 100");
    fake_run(f->c, "LPUSH l x");   /* list class off */
    fake_run(f->c, "SELECT 3");
    fake_run(f->c, "INCR n");
    fake_run(f->c, "RENAME n m");
    assert_string_equal(s.text, "0:3:set:a\n0:2:expire:a\n0:14:new:l\n3:14:new:n\n"
                                "3:3:incrby:n\n3:14:new:m\n3:2:rename_from:n\n"
                                "3:2:rename_to:m\n");
    assert_int_equal(fr_published_count(f->srv), 0); /* no K, no E: nothing published */
    fr_server_set_keyspace_hook(f->srv, NULL, NULL);
    fake_run(f->c, "SET b 1");
    assert_int_equal(s.calls, 8);
}

/* K and E publish on their channels, as PUBLISH would: pattern subscribers get them and
 * the fr_published log has them. */
static void test_messages(void **state)
{
    fake_fixture *f = *state;
    set_events(f->srv, "KEh");
    fake_run(f->c2, "PSUBSCRIBE __key*__:*");
    fake_setup(f->c, (const char *const[]){"SELECT 5", "HSET h f v", "HDEL h f", NULL});
    const fr_reply *p;
    size_t n = fr_client_take_pushes(f->c2, &p);
    assert_int_equal(n, 4);
    static const char *const want[][2] = {
        {"__keyspace@5__:h", "hset"},
        {"__keyevent@5__:hset", "h"},
        {"__keyspace@5__:h", "hdel"},
        {"__keyevent@5__:hdel", "h"},
    };
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(p[i].count, 4);
        assert_string_equal(p[i].elements[0].str, "pmessage");
        assert_string_equal(p[i].elements[2].str, want[i][0]);
        assert_string_equal(p[i].elements[3].str, want[i][1]);
    }
    /* the "del" of the emptied hash is of the generic class, which is off */
    assert_int_equal(fr_published_count(f->srv), 4);
    assert_string_equal(fr_published(f->srv, 3)->channel, "__keyevent@5__:hdel");
    assert_string_equal(fr_published(f->srv, 3)->payload, "h");
}

/* Lazy expiry notifies when a command touches the key; the active expiry deletes every
 * expired key of every database at once, notifying each. */
static void test_expired(void **state)
{
    fake_fixture *f = *state;
    seen s;
    record(f, &s, "Exm");
    fake_setup(f->c, (const char *const[]){"SET a 1 PX 10", "SET b 1 PX 10", "SET keep 1 PX 1000",
                                          "SELECT 1", "SET c 1 PX 10", "SELECT 0", NULL});
    fr_clock_advance(f->srv, 11);
    fake_run(f->c, "GET a");
    assert_string_equal(s.text, "0:8:expired:a\n0:11:keymiss:a\n");
    s.text[0] = '\0';
    assert_int_equal(fr_server_active_expire(f->srv), 2);
    assert_string_equal(s.text, "0:8:expired:b\n1:8:expired:c\n");
    assert_int_equal(fr_server_active_expire(f->srv), 0);
    assert_int_equal(fake_int_reply(fake_run(f->c, "EXISTS keep")), 1);
}

/* A client woken by a push pops in its own command: the pusher's events, then the pop's,
 * as Redis serves blocked clients after the command. */
static void test_blocked_served(void **state)
{
    fake_fixture *f = *state;
    seen s;
    record(f, &s, "lgn");
    fr_client_set_blocking(f->c2, 1);
    assert_null(fr_exec_line(f->c2, "BLMOVE q dst LEFT RIGHT 0"));
    fake_run(f->c, "RPUSH q x");
    assert_ptr_equal(fr_server_take_woken(f->srv), f->c2);
    assert_string_equal(s.text, "0:14:new:q\n0:4:rpush:q\n0:14:new:dst\n0:4:rpush:dst\n"
                                "0:4:lpop:q\n0:2:del:q\n");
}

/* Inside EXEC each command notifies when it runs; a RESP3 subscriber hears its own
 * notification before its reply (outside EXEC, on its push queue), and inside EXEC in
 * EXEC's reply. */
static void test_exec_and_self(void **state)
{
    fake_fixture *f = *state;
    seen s;
    record(f, &s, "K$g");
    fake_run(f->c, "MULTI");
    fake_run(f->c, "SET a 1");
    fake_run(f->c, "DEL a");
    assert_int_equal(s.calls, 0); /* queued only */
    fake_run(f->c, "EXEC");
    assert_string_equal(s.text, "0:3:set:a\n0:2:del:a\n");

    assert_int_equal(fr_client_set_protocol(f->c2, 3), 0);
    fake_run(f->c2, "SUBSCRIBE __keyspace@0__:me");
    size_t len;
    const char *out = fr_exec_resp(f->c2, 3, (const char *const[]){"SET", "me", "v"}, NULL,
                                   &len);
    assert_int_equal(len, 5);
    assert_memory_equal(out, "+OK\r\n", 5);
    const fr_reply *p;
    assert_int_equal(fr_client_take_pushes(f->c2, &p), 1);
    assert_string_equal(p[0].elements[1].str, "__keyspace@0__:me");
    assert_string_equal(p[0].elements[2].str, "set");
    fake_run(f->c2, "MULTI");
    fake_run(f->c2, "DEL me");
    out = fr_exec_resp(f->c2, 1, (const char *const[]){"EXEC"}, NULL, &len);
    static const char want[] = "*1\r\n*3\r\n$7\r\nmessage\r\n$17\r\n__keyspace@0__:me\r\n"
                               "$3\r\ndel\r\n:1\r\n";
    assert_int_equal(len, sizeof(want) - 1);
    assert_memory_equal(out, want, len);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flags_text),
        FAKE_TEST2(test_hook),
        FAKE_TEST2(test_messages),
        FAKE_TEST2(test_expired),
        FAKE_TEST2(test_blocked_served),
        FAKE_TEST2(test_exec_and_self),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
